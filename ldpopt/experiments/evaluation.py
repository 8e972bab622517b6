"""Evaluate a method of your own the way Wang et al. evaluate theirs: one call, one table, the figures.

Details: docs/experiments.md, section `ldpopt.experiments.evaluation`.
"""

from __future__ import annotations

import hashlib
import json
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from .._atomic import write_text
from .evaluation_table import (
    all_values,
    band_text,
    coverage_rows,
    error_rows,
    figures,
    k_text,
    regimes,
    rho_text,
    summary,
    write_table,
)

__all__ = ["AGAINST", "GRIDS", "METRICS", "Evaluation", "Grid", "Metric", "evaluate"]

#: the papers' post-processing methods an evaluation compares against by default (docs/experiments.md)
AGAINST = ("base", "base-pos", "post-pos", "norm", "norm-mul", "norm-sub", "mle-apx", "base-cut", "norm-cut",
           "norm-hyb")


@dataclass(frozen=True)
class Grid:
    """A regime: the datasets (experiment-config entries), the oracles, the ε of the full-domain
    sweep, the ε of the query metrics, the coverage ε, the repetitions and the query parameters."""
    name: str
    description: str
    datasets: tuple
    oracles: tuple[str, ...]
    epsilons: tuple[float, ...]
    query_epsilon: float
    coverage_epsilons: tuple[float, ...]
    repetitions: int
    rho: tuple[int, ...]
    n_sets: int
    k: tuple[int, ...]
    coverage: dict = field(default_factory=dict)  # params of the coverage-batch kind


GRIDS = {
    "standard": Grid(
        "standard", "Wang et al. NDSS 2020 §V-A: Zipf(1.5) n = 10^6, d = 1,024 and Emoji; GRR, OUE, OLH; "
        "30 repetitions",
        datasets=({"name": "zipf", "rng": 1}, "emoji"), oracles=("grr", "oue", "olh"),
        epsilons=(0.2, 0.5, 1.0, 2.0, 4.0), query_epsilon=1.0, coverage_epsilons=(0.5, 1.0, 4.0),
        repetitions=30, rho=tuple(range(10, 100, 10)), n_sets=100, k=tuple(range(2, 33, 2)),
        coverage={"levels": [0.9], "reps": 200, "bootstrap_reps": 30, "resamples": 200, "subset_size": 10,
                  "subsets": 50}),
    "quick": Grid(
        "quick", "a small Zipf(1.5), n = 20,000, d = 128; OUE; 3 repetitions (seconds: tests and docs)",
        datasets=({"name": "zipf", "n": 20000, "d": 128, "rng": 1},), oracles=("oue",),
        epsilons=(0.5, 1.0, 2.0), query_epsilon=1.0, coverage_epsilons=(1.0,), repetitions=3,
        rho=(10, 50, 90), n_sets=100, k=(2, 8, 32),
        coverage={"levels": [0.9], "reps": 20, "bootstrap_reps": 3, "resamples": 50, "subset_size": 10,
                  "subsets": 20}),
}


def _per_value(grid: Grid) -> dict:
    """Full-domain MSE: the grid's ε sweep, no query parameter."""
    return {"epsilons": list(grid.epsilons), "repetitions": grid.repetitions, "params": {}}


def _set_value(grid: Grid) -> dict:
    """Set-value MSE: ρ (% of d) and the sets per ρ, at the query ε."""
    return {"epsilons": [grid.query_epsilon], "repetitions": grid.repetitions,
            "params": {"rho": list(grid.rho), "n_sets": grid.n_sets}}


def _top_k(grid: Grid) -> dict:
    """Top-k MSE: the k values, at the query ε."""
    return {"epsilons": [grid.query_epsilon], "repetitions": grid.repetitions, "params": {"k": list(grid.k)}}


def _coverage(grid: Grid) -> dict:
    """Coverage: one task per cell, its repetitions vectorised inside (``params.reps``)."""
    return {"epsilons": list(grid.coverage_epsilons), "repetitions": 1, "params": dict(grid.coverage)}


@dataclass(frozen=True)
class Metric:
    """One metric of the evaluation: its ``key`` (config name, results folder, figure file), the task
    kind that measures it, the results' ``metric`` rows it reads, the column that names its query
    (None: one number per cell), its title and source, and ``sweep(grid)``: the config keys it takes
    from a grid (epsilons, repetitions, params)."""
    key: str
    kind: str
    title: str
    metric: str
    query: str | None
    source: str
    sweep: Callable[[Grid], dict] = field(repr=False, compare=False)
    reduce: Callable = field(repr=False, compare=False)  # (metric, results) -> summary rows
    describe: Callable[[object], str] = field(repr=False, compare=False)  # a query value as text


METRICS = (
    Metric("full_domain", "full-domain", "full-domain MSE", "mse", None, "NDSS §V-C Fig. 4; arXiv §4.2",
           _per_value, error_rows, all_values),
    Metric("set_value", "set-value", "set-value query MSE", "mse", "rho", "NDSS §V-D Fig. 6; arXiv §4.3",
           _set_value, error_rows, rho_text),
    Metric("top_k", "top-k", "top-k MSE", "mse", "k", "NDSS §V-E Fig. 10; arXiv §4.4", _top_k, error_rows, k_text),
    Metric("intervals", "coverage-batch", "interval coverage", "coverage", "band",
           "ext_uncertainty_coverage: ldpopt's intervals", _coverage, coverage_rows, band_text),
)


@dataclass
class Evaluation:
    """What :func:`evaluate` wrote: ``table`` (the summary, one row per regime × query × method),
    ``markdown`` and ``csv`` (its files), ``figures`` (PNG paths), ``out`` (the folder), ``methods``
    (the user's method names), ``against``, ``grid``, ``tasks`` (the grid's tasks) and ``tasks_run``
    (those this call ran: the others' results were saved by an earlier call)."""
    table: pd.DataFrame
    markdown: Path
    csv: Path
    figures: list[Path]
    out: Path
    methods: tuple[str, ...]
    against: tuple[str, ...]
    grid: str
    tasks: int
    tasks_run: int


# -- validation (before any work) -----------------------------------------------------------------

def _method_entry(spec, i: int, jobs: int) -> tuple[str, str, str | None]:
    """(config entry, registered name, SHA-256 of its file or None) of METHOD ``spec``."""
    from .. import methods as _methods
    from .._userfunc import is_reference, resolve_path

    where = f"METHOD {spec!r}" if isinstance(spec, str) else f"methods[{i}]"
    info = _methods.resolve(spec, where=where)
    if isinstance(spec, str) and is_reference(spec) and spec.rpartition(":")[0].endswith(".py"):
        path = resolve_path(spec.rpartition(":")[0], None)
        return f"{path}:{spec.rpartition(':')[2]}", info.name, hashlib.sha256(path.read_bytes()).hexdigest()
    if info.name not in _methods.names() or _methods.get(info.name) is not info:
        raise ValueError(f"{where}: a function that is not registered: register it (ldpopt.methods.register) "
                         f"or name it FILE.py:NAME, since the results are keyed by the method's name")
    if jobs > 1 and not str(getattr(info.func, "__module__", "")).startswith("ldpopt."):
        raise ValueError(f"{where}: registered in this process only, so --jobs worker processes cannot run it: "
                         f"name it FILE.py:NAME or use --jobs 1")
    return info.name, info.name, None


def _try_once(name: str, where: str, grid: Grid) -> None:
    """Run method ``name`` once on a small estimate (d = 16, the grid's first oracle and ε), so that a
    method that raises or returns the wrong shape is refused before any work, not in the middle of
    the sweep (*choice*: one call; a method failing only on other estimates still stops the sweep,
    with the same one-line error)."""
    import numpy as np

    from .. import methods as _methods
    from .. import oracles as _oracles

    oracle = _oracles.get(grid.oracles[0], epsilon=grid.epsilons[0], d=16)
    est = oracle.simulate(np.round(1000 * 0.8 ** np.arange(16)).astype(np.int64), rng=0)
    try:
        _methods.postprocess(est, name)
    except Exception as exc:  # the user's code: any failure, on one line
        raise ValueError(f"{where}: on a small {oracle.name.upper()} estimate (d = 16): {exc}") from exc


def _against(against) -> tuple[str, ...]:
    from .. import methods as _methods
    from .toolkit import QUERY_METHODS

    if isinstance(against, str):
        against = [a.strip() for a in against.split(",") if a.strip()]
    against = tuple(against)
    if not against:
        raise ValueError("--against must name at least one method, e.g. base,norm-sub")
    for a in against:
        if not isinstance(a, str) or (a.lower() not in _methods.names() and a not in QUERY_METHODS):
            raise ValueError(f"--against: {a!r} is not one of the registered methods {sorted(_methods.names())} "
                             f"or {list(QUERY_METHODS)}")
    if len(set(against)) < len(against):
        raise ValueError(f"--against names a method twice: {list(against)}")
    return tuple(a.lower() for a in against)


def _manifest(entries, names, hashes, against, grid: Grid) -> dict:
    return {"what": "ldpopt experiment evaluate", "methods": list(entries), "names": list(names),
            "sha256": dict(zip(entries, hashes)), "against": list(against), "grid": grid.name}


def _check_out(out: Path, manifest: dict, resume: bool) -> None:
    """``out`` is new or empty, or (with ``resume``) holds this same evaluation."""
    if out.exists() and not out.is_dir():
        raise ValueError(f"--out {out} is a file, not a folder")
    held = out / "evaluate.json"
    if not resume:
        if out.is_dir() and any(out.iterdir()):
            what = "an evaluation" if held.is_file() else "files"
            raise ValueError(f"--out {out} already holds {what}: pass --resume to continue it, or choose a new folder")
        return
    if not held.is_file():
        raise ValueError(f"--resume: {out} holds no evaluation to resume ({held.name} missing)")
    before = json.loads(held.read_text(encoding="utf-8"))
    for key in ("methods", "against", "grid"):
        if before.get(key) != manifest[key]:
            raise ValueError(f"--resume: {out} evaluates {key} {before.get(key)!r}, not {manifest[key]!r}: "
                             f"choose a new --out")
    for entry, digest in manifest["sha256"].items():
        if digest is not None and before.get("sha256", {}).get(entry) != digest:
            raise ValueError(f"--resume: {entry.rpartition(':')[0]} changed since {out} was started (SHA-256 "
                             f"differs): its results would mix two versions; choose a new --out")


# -- configs --------------------------------------------------------------------------------------

def _toml_value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)  # a JSON string is a TOML basic string
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{" + ", ".join(f"{k} = {_toml_value(x)}" for k, x in v.items()) + "}"
    return repr(v)


def config_text(metric: Metric, grid: Grid, entries, title: str) -> str:
    """The TOML config of one metric's sweep (an ordinary experiment config: ``ldpopt experiment run
    FILE`` runs it alone)."""
    sweep = metric.sweep(grid)
    top = {"name": metric.key, "kind": metric.kind,
           "description": f"{title}: {metric.title} ({metric.source}); {grid.name} grid: {grid.description}",
           "datasets": list(grid.datasets), "oracles": list(grid.oracles), "epsilons": sweep["epsilons"],
           "methods": list(entries), "repetitions": sweep["repetitions"], "seed": 2020}
    lines = [f"{k} = {_toml_value(v)}" for k, v in top.items()]
    lines += ["", "[params]"] + [f"{k} = {_toml_value(v)}" for k, v in sweep["params"].items()]
    return "\n".join(lines) + "\n"


# -- the evaluation -------------------------------------------------------------------------------

def evaluate(methods, *, against=AGAINST, grid: str = "standard", out="evaluation", jobs: int = 1,
             resume: bool = False, progress: bool = True) -> Evaluation:
    """Run ``methods`` beside ``against`` over ``grid`` with the papers' metrics; write the table and
    the figures under ``out`` (docs/experiments.md).

    Every argument is checked before any work (each method loaded and run once on a small
    estimate); an error is one line naming it.

    Parameters
    ----------
    methods : str, MethodInfo or callable, or a list of them
        The methods to evaluate: registered names, ``"FILE.py:NAME"`` (relative to the current
        directory) or ``"MODULE:NAME"``, records or registered functions.
    against : sequence of str or a comma-separated str
        The methods to compare with (default :data:`AGAINST`); a method also in ``methods`` is
        dropped from it.
    grid : "standard" | "quick"
        The regime (:data:`GRIDS`).
    out : path
        The folder of this evaluation: new or empty, or with ``resume`` one this function started.
    jobs : int
        joblib worker processes (a method registered in this process only needs ``jobs=1``).
    resume : bool
        Continue the evaluation in ``out``: only the missing tasks run.
    progress : bool
        Show a progress bar.

    Returns
    -------
    Evaluation
        The table and the figures' paths.

    Raises
    ------
    ValueError
        No method, a method named twice or failing its trial run, a bad grid, jobs or ``out``.

    Examples
    --------
    >>> from ldpopt import experiments
    >>> result = experiments.evaluate("norm-sub", grid="quick", out="evaluation-norm-sub")  # doctest: +SKIP

    (Skipped: runs the papers' grid, minutes of CPU, and writes a folder.)
    """
    from .config import load_config
    from .runner import missing_data, run, tasks_of

    if isinstance(methods, (str, bytes)) or callable(methods):
        methods = [methods]
    methods = list(methods)
    if not methods:
        raise ValueError("METHOD: name at least one method to evaluate")
    if grid not in GRIDS:
        raise ValueError(f"--grid must be one of {list(GRIDS)}, got {grid!r}")
    if not isinstance(jobs, int) or isinstance(jobs, bool) or jobs < 1:
        raise ValueError(f"--jobs must be an integer >= 1, got {jobs!r}")
    g = GRIDS[grid]
    found = [_method_entry(m, i, jobs) for i, m in enumerate(methods)]
    entries, names, hashes = (tuple(x) for x in zip(*found))
    if len(set(names)) < len(names):
        raise ValueError(f"METHOD: a method is named twice: {list(names)}")
    for i, (spec, name) in enumerate(zip(methods, names)):
        _try_once(name, f"METHOD {spec!r}" if isinstance(spec, str) else f"methods[{i}]", g)
    against = tuple(a for a in _against(against) if a not in names)
    manifest = _manifest(entries, names, hashes, against, g)
    out = Path(out)
    _check_out(out, manifest, resume)
    title = _title(names, g)
    texts = {m.key: config_text(m, g, [*entries, *against], title) for m in METRICS}
    with tempfile.TemporaryDirectory() as tmp:  # every config read and its data found before out/ is touched
        for key, text in texts.items():
            (Path(tmp) / f"{key}.toml").write_text(text, encoding="utf-8")
            cfg = load_config(Path(tmp) / f"{key}.toml")
            if missing := missing_data(cfg):
                from ..datasets import DataNotFoundError

                raise DataNotFoundError(f"--grid {grid}: data not available: " + " | ".join(missing))
    (out / "configs").mkdir(parents=True, exist_ok=True)
    for key, text in texts.items():
        write_text(out / "configs" / f"{key}.toml", text)
    write_text(out / "evaluate.json", json.dumps(manifest, indent=2) + "\n")
    cfgs = {m.key: load_config(out / "configs" / f"{m.key}.toml") for m in METRICS}
    tasks = sum(len(tasks_of(c)) for c in cfgs.values())
    before = _parts(out)
    results = {}
    for m in METRICS:
        table = run(out / "configs" / f"{m.key}.toml", out=out, jobs=jobs, progress=progress)
        if table is None:
            raise RuntimeError(f"{m.key}: task results missing from {out / m.key / 'parts'} after the run")
        results[m.key] = table
    ran = _parts(out) - before
    table = summary(results, METRICS, regimes(cfgs), [*names, *against])
    md, csv = write_table(table, out, title)
    figs = figures(results, METRICS, table, out / "figures", title)
    return Evaluation(table, md, csv, figs, out, names, against, grid, tasks, len(ran))


def _parts(out: Path) -> set[Path]:
    """The task results saved under ``out`` (the runner's ``NAME/parts/*.parquet``)."""
    return set(out.glob("*/parts/*.parquet"))


def _title(names, grid: Grid) -> str:
    """``Shrink-Uniform vs the papers' methods, standard grid``."""
    from .figures.wang import LABELS

    return f"{', '.join(LABELS.get(n, n) for n in names)} vs the papers' methods, {grid.name} grid"
