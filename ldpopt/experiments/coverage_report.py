"""The coverage experiment's results as the markdown tables of ``docs/uncertainty.md``.

``coverage_markdown(table)`` turns a ``coverage`` results table (``ext_uncertainty_coverage``, one row
per task × method × level × band, :mod:`ldpopt.experiments.tasks_uncertainty`) into one markdown table
per nominal level: a row per method (or per ``by`` group), a column per value-rank band and query
kind, each cell the pooled empirical coverage Σ value·count / Σ count in percent
(:func:`~ldpopt.experiments.tasks_uncertainty.coverage_table`, the same pooling as the figure).

The target is coverage within 2 points of nominal (*choice*: ``|coverage − level| ≤ 0.02``
inclusive, on the rounded-to-0.1 value shown, so what the reader sees decides the mark). A cell
outside it is bold and marked ↓ (under-covers) or ↑ (over-covers); a cell inside is plain.

``ldpopt experiment coverage-table NAME|FOLDER [--quick] [--out results] [--by oracle,method]``
prints it for a saved run (a results folder holding ``results.parquet`` and ``meta.json``).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

__all__ = ["BAND_ORDER", "coverage_markdown", "coverage_report"]

# value-rank bands of the true frequencies, then the query kinds (tasks_uncertainty's band names)
BAND_ORDER = ("top10", "10-100", "tail", "ge5sigma", "subsets", "topk-set", "topk-sel", "topk-hull", "topk-cal",
              "topk-order")
TARGET = 0.02


def _cell(cov: float, level: float, target: float) -> str:
    if not np.isfinite(cov):
        return "–"
    pct = round(100 * cov, 1)
    gap = round(pct - 100 * level, 1)
    if abs(gap) <= 100 * target + 1e-9:
        return f"{pct:.1f}"
    return f"**{pct:.1f}** {'↓' if gap < 0 else '↑'}"


def coverage_markdown(table: pd.DataFrame, *, by=("method",), levels=None, target: float = TARGET) -> str:
    """Markdown: one table per nominal level (``levels``: default every level in ``table``), rows =
    ``by`` groups, columns = :data:`BAND_ORDER` bands present, cells = pooled coverage (%) with the
    ±``target`` mark (module docstring). Raises ``ValueError`` naming ``table``/``by``/``levels`` on
    bad input."""
    from .tasks_uncertainty import coverage_table

    need = {"metric", "level", "band", "value", "count"}
    if not isinstance(table, pd.DataFrame) or not need <= set(table.columns):
        raise ValueError(f"table must be a coverage results DataFrame with columns {sorted(need)}")
    t = table[table["metric"] == "coverage"]
    if t.empty:
        raise ValueError("table has no coverage rows (metric == 'coverage'): not a coverage-kind run")
    by = tuple(by)
    if missing := [c for c in by if c not in t.columns]:
        raise ValueError(f"by: columns {missing} are not in the table (have {sorted(t.columns)})")
    have = sorted({float(x) for x in t["level"]})
    levels = have if levels is None else [float(x) for x in levels]
    if bad := [lv for lv in levels if lv not in have]:
        raise ValueError(f"levels: {bad} not in the table (have {have})")
    if not (0 <= target < 1):
        raise ValueError(f"target must be in [0, 1), got {target!r}")
    cov = coverage_table(t, by=by)
    bands = [b for b in BAND_ORDER if b in set(t["band"])] + sorted(set(t["band"]) - set(BAND_ORDER))
    keys = list(cov.index)
    out = []
    for lv in levels:
        out += [f"Nominal {100 * lv:g} %: pooled empirical coverage (%); **bold ↓/↑** = outside the target "
                f"{100 * lv:g} ± {100 * target:g} points (under-/over-covers).", "",
                "| " + " | ".join([*by, *bands]) + " |", "|" + "---|" * (len(by) + len(bands))]
        for k in keys:
            k = k if isinstance(k, tuple) else (k,)
            row = cov.loc[k if len(k) > 1 else k[0]]
            cells = [_cell(float(row.get((lv, b), np.nan)), lv, target) for b in bands]
            out.append("| " + " | ".join([*map(str, k), *cells]) + " |")
        out.append("")
    return "\n".join(out)


def coverage_report(name_or_folder, *, quick: bool = False, root="results", by=("method",), levels=None) -> str:
    """:func:`coverage_markdown` of a saved run, headed by what it pooled (tasks, datasets, oracles, ε)."""
    from .plot import load_results

    table, meta, folder = load_results(name_or_folder, quick, Path(root))
    kind = meta.get("config", {}).get("kind")
    if kind != "coverage":
        raise ValueError(f"{folder}: kind {kind!r} is not a coverage run (ext_uncertainty_coverage)")
    t = table[table["metric"] == "coverage"]
    parts = [f"{c}: {', '.join(map(str, sorted(set(t[c]), key=str)))}" for c in ("dataset", "oracle", "epsilon")
             if c in t.columns]
    reps = t["rep"].nunique() if "rep" in t.columns else "?"
    head = (f"Coverage of `{meta.get('config', {}).get('name', folder.name)}` ({'; '.join(parts)}; "
            f"{reps} repetitions; cells pool every dataset, oracle and ε unless grouped).")
    return head + "\n\n" + coverage_markdown(table, by=by, levels=levels)
