"""Figures from saved experiment results (never recomputed): ``results/<name>[-quick]/results.parquet``
+ ``meta.json`` → PNG files next to them (or in ``out``).

Details: docs/experiments.md, section `ldpopt.experiments.figures.draw`.
"""

from __future__ import annotations

import importlib
import json
import tomllib
from collections.abc import Callable
from functools import cache
from pathlib import Path

import pandas as pd

from ..config import DATA_DIR

__all__ = ["figure", "load_results", "plot", "plot_kinds", "results_folder"]

_ARGS = ("table", "meta", "out_dir", "stem")  # what a drawing function may take, in this order by default


@cache
def _specs() -> dict[str, dict]:
    """``experiments/figures.toml``: kind → {"draw": "module:function", "args": [...]}."""
    with open(DATA_DIR / "figures.toml", "rb") as fh:
        kinds = tomllib.load(fh)["kinds"]
    specs = {}
    for kind, spec in kinds.items():
        spec = {"draw": spec} if isinstance(spec, str) else dict(spec)
        args = tuple(spec.get("args", _ARGS))
        if ":" not in spec.get("draw", "") or not set(args) <= set(_ARGS):
            raise ValueError(f"figures.toml: kind {kind!r} needs draw = 'module:function' and args among {_ARGS}")
        specs[kind] = {"draw": spec["draw"], "args": args}
    return specs


def plot_kinds() -> list[str]:
    """Every task kind that has figures."""
    return sorted(_specs())


def figure(kind: str) -> Callable:
    """The drawing function of ``kind`` as ``fn(table, meta, out_dir, stem) -> list[Path]``."""
    spec = _specs().get(kind)
    if spec is None:
        raise ValueError(f"no figure for kind {kind!r} (figures.toml has: {plot_kinds()})")
    module, name = spec["draw"].split(":")
    fn = getattr(importlib.import_module(f"{__package__}.{module}"), name)

    def draw(table, meta, out_dir, stem):
        given = dict(zip(_ARGS, (table, meta, out_dir, stem)))
        return fn(*(given[a] for a in spec["args"]))
    draw.__doc__ = fn.__doc__
    return draw


def results_folder(name_or_folder, quick: bool = False, root=Path("results")) -> Path:
    """The folder holding a finished run's ``results.parquet``: ``name_or_folder`` itself, or the
    experiment named so under ``root`` (``NAME-quick`` with ``quick``); a missing one is an error."""
    p = Path(name_or_folder)
    if (p / "results.parquet").is_file():
        return p
    cand = Path(root) / (str(name_or_folder) + ("-quick" if quick else ""))
    if (cand / "results.parquet").is_file():
        return cand
    raise ValueError(f"no saved results for {name_or_folder!r}: expected a folder with results.parquet "
                     f"(tried {p} and {cand}); run `ldpopt experiment run` first")


def load_results(name_or_folder, quick: bool = False, root=Path("results")) -> tuple[pd.DataFrame, dict, Path]:
    """(table, meta, folder) of a saved run."""
    folder = results_folder(name_or_folder, quick, root)
    meta = json.loads((folder / "meta.json").read_text())
    return pd.read_parquet(folder / "results.parquet"), meta, folder


def plot(name_or_results_folder, out=None, *, quick: bool = False, root="results") -> list[Path]:
    """Draw the figures of a saved run; returns the PNG paths (written to ``out`` or the results
    folder). ``name_or_results_folder`` is a results folder or an experiment name under ``root``."""
    table, meta, folder = load_results(name_or_results_folder, quick, Path(root))
    draw = figure(meta["config"]["kind"])
    out_dir = Path(out) if out is not None else folder
    out_dir.mkdir(parents=True, exist_ok=True)
    return draw(table, meta, out_dir, meta["config"]["name"])
