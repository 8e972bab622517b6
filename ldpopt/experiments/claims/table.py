"""Reading saved results tables for the claims (:mod:`ldpopt.experiments.claims`): the tables of
``<root>/<config>[-quick]/results.parquet`` (or an unfinished sweep's ``parts/``), each read once,
and the two reductions every claim starts from (cell means over repetitions, repetition counts).
"""

from __future__ import annotations

import json
from collections.abc import Hashable
from pathlib import Path
from typing import Any

import pandas as pd

from ... import methods as _methods
from ..figures.wang import LEFT, RIGHT
from ..toolkit import QUERY_METHODS

__all__ = ["GROUPS", "METHODS", "Missing", "Tables", "at_level", "cell_means", "load_table", "rep_counts"]

#: the methods of Wang et al.'s figures (the two panels, in their order); absent ones become NaN
#: columns of :func:`cell_means`
METHODS = tuple(dict.fromkeys(LEFT + RIGHT))


def _sums_to_one(method: str) -> bool:
    """Whether ``method``'s output sums to one, as its registry record says (Table 1's column; "almost"
    counts as yes); a query-level method (Post-Pos) clips answers and never renormalises."""
    return method not in QUERY_METHODS and _methods.get(method).sums_to_one != "no"


#: method groups a claim row may name ("non-norm": without the sum-to-one constraint, arXiv §4.3,
#: asked of each method's record; "left"/"right": the two panels of the figures)
GROUPS = {"non-norm": tuple(m for m in METHODS if not _sums_to_one(m)),
          "norm-based": tuple(m for m in METHODS if _sums_to_one(m)),
          "left": LEFT, "right": RIGHT}
_KEYS = ("dataset", "oracle", "epsilon")


class Missing(Exception):
    """A config a claim needs has no results."""


def _folder(root, name: str, quick: bool) -> Path:
    return Path(root) / (name + ("-quick" if quick else ""))


def load_table(root, name: str, *, quick: bool = False, partial: bool = False, columns=None) -> pd.DataFrame | None:
    """The saved table of config ``name`` under ``root`` (``NAME-quick`` with ``quick``), or None if
    it has no ``results.parquet``. With ``partial`` an unfinished sweep's ``parts/*.parquet`` are
    read instead. String columns come back as categoricals (the bias–variance table has ~6·10⁶ rows)."""
    import pyarrow.parquet as pq

    folder = _folder(root, name, quick)
    if (folder / "results.parquet").is_file():
        files = [folder / "results.parquet"]
    elif partial and (folder / "parts").is_dir():
        files = sorted((folder / "parts").glob("*.parquet"))
    else:
        files = []
    if not files:
        return None
    frames = []
    for f in files:
        schema = pq.read_schema(f)
        cols = [c for c in (columns or schema.names) if c in schema.names]
        strs = [c for c in cols if str(schema.field(c).type) in ("string", "large_string")]
        frames.append(pq.read_table(f, columns=cols, read_dictionary=strs).to_pandas())
    t = frames[0] if len(frames) == 1 else pd.concat(frames, ignore_index=True)
    for c in ("dataset", "oracle", "method", "metric", "query_set", "fit"):
        if c in t and not isinstance(t[c].dtype, pd.CategoricalDtype):
            t[c] = t[c].astype("category")
    return t


class Tables:
    """The tables under one results root, each read once (``need`` raises :class:`Missing`)."""

    def __init__(self, root, quick: bool = False, partial: bool = False):
        self.root, self.quick, self.partial = root, quick, partial
        self._cache: dict[Hashable, Any] = {}  # tables (None: no results) and derived values, by key

    def get(self, name: str, columns=None, as_saved: bool = False):
        """Config ``name``'s table (None without results); ``as_saved``: its ``results.parquet``
        exactly as saved (no categoricals, never ``parts/``)."""
        key = ("as-saved", name) if as_saved else name
        if key not in self._cache:
            path = _folder(self.root, name, self.quick) / "results.parquet"
            self._cache[key] = ((pd.read_parquet(path) if path.is_file() else None) if as_saved else
                                load_table(self.root, name, quick=self.quick, partial=self.partial, columns=columns))
        return self._cache[key]

    def need(self, name: str, columns=None, as_saved: bool = False) -> pd.DataFrame:
        t = self.get(name, columns, as_saved)
        if t is None:
            raise Missing(name)
        return t

    def derived(self, key, name: str, fn, columns=None):
        """``fn(table)`` of config ``name``, computed once (the raw table is then dropped)."""
        if key not in self._cache:
            self._cache[key] = fn(self.need(name, columns))
            self._cache.pop(name, None)
        return self._cache[key]

    def is_partial(self, name: str) -> bool:
        return not (_folder(self.root, name, self.quick) / "results.parquet").is_file()

    def meta(self, name: str) -> dict:
        p = _folder(self.root, name, self.quick) / "meta.json"
        return json.loads(p.read_text()) if p.is_file() else {}


def cell_means(table: pd.DataFrame, metric: str = "mse", by=()) -> pd.DataFrame:
    """Mean over repetitions of ``metric`` per (dataset, oracle, ε, *by) × method, as a wide frame
    (columns: methods; NaN where a method has no rows; every method of :data:`METHODS` a column)."""
    t = table[table.metric == metric]
    keys = [*_KEYS, *by]
    w = t.groupby(keys + ["method"], observed=True).value.mean().unstack("method").sort_index()
    w.columns = w.columns.astype(str)
    return w.reindex(columns=[*w.columns, *[x for x in METHODS if x not in w.columns]])


def at_level(s, level, value):
    """(rows of ``s`` with index ``level`` == value ("min"/"max": its smallest/largest), the level
    dropped unless it is the only one; the value used)."""
    vals = s.index.get_level_values(level)
    # min/max only when asked for: a categorical level (dataset, oracle) has no order
    v = vals.min() if value == "min" else vals.max() if value == "max" else value
    out = s[vals == v]
    return (out.droplevel(level) if out.index.nlevels > 1 else out), v


def rep_counts(table: pd.DataFrame) -> dict:
    """Per method, the number of repetitions it has rows for: an int if the same in every (dataset,
    oracle, ε) cell, else ``[min, max]``. For bias–variance tables the total number of runs."""
    t = table[table.method != "truth"]
    if "runs" in t:
        first = t[t.metric == "sum"].drop_duplicates(list(_KEYS) + ["method", "rep"])
        per = first.groupby(list(_KEYS) + ["method"], observed=True).runs.sum()
    else:
        per = t.groupby(list(_KEYS) + ["method"], observed=True).rep.nunique()
    out = {}
    for m, s in per.groupby(level="method", observed=True):
        lo, hi = int(s.min()), int(s.max())
        out[str(m)] = lo if lo == hi else [lo, hi]
    return out
