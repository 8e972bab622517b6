"""The coverage experiment's results as the markdown tables of ``docs/uncertainty.md``.

Details: docs/experiments.md, section `ldpopt.experiments.coverage_report`.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

__all__ = ["BAND_ORDER", "band_summary_markdown", "cell_stats", "coverage_markdown", "coverage_report",
           "failures_markdown", "flag_summary_markdown", "group_summary_markdown", "rank_markdown"]

# value-rank bands of the true frequencies, then the query kinds (task_kinds.uncertainty's band names)
BAND_ORDER = ("zero", "lt1sigma", "1-2sigma", "2-5sigma", "ge5sigma", "sub-head", "sub-tail", "sub-mixed",
              "topk", "topk-set", "topk-sel", "topk-hull", "topk-cal", "topk-order")
COVERAGE_KINDS = ("coverage", "coverage-batch")
TARGET = 0.03


def _cell(cov: float, level: float, target: float, mcse: float = np.nan, rel: float = np.nan) -> str:
    if not np.isfinite(cov):
        return "–"
    pct = round(100 * cov, 1)
    gap = round(pct - 100 * level, 1)
    tail = (f" ± {100 * mcse:.1f}" if np.isfinite(mcse) else "") + (f" ({rel:.2f}×)" if np.isfinite(rel) else "")
    if gap < -100 * target - 1e-9:
        return f"**{pct:.1f}** ↓{tail}"
    return f"{pct:.1f}{' ↑' if gap > 100 * target + 1e-9 else ''}{tail}"


def coverage_markdown(table: pd.DataFrame, *, by=("method",), levels=None, target: float = TARGET) -> str:
    """Markdown: one table per nominal level (``levels``: default every level in ``table``), rows =
    ``by`` groups, columns = :data:`BAND_ORDER` bands present, cells = pooled coverage (%) ± its
    Monte-Carlo SE (width relative to Base) with the ``target`` marks (docs/experiments.md). Raises ``ValueError`` naming ``table``/``by``/``levels`` on
    bad input."""
    from .task_kinds.uncertainty import coverage_stats

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
    st = coverage_stats(t, by=by)
    bands = [b for b in BAND_ORDER if b in set(t["band"])] + sorted(set(t["band"]) - set(BAND_ORDER))
    keys = list(dict.fromkeys(k[:len(by)] for k in st.index))
    out = []
    for lv in levels:
        out += [(f"Nominal {100 * lv:g} %: empirical coverage (%) ± Monte-Carlo SE (median width / Base's); "
                f"**bold ↓** = more than {100 * target:g} points under nominal, ↑ = more than {100 * target:g} over."),
                "", "| " + " | ".join([*by, *bands]) + " |", "|" + "---|" * (len(by) + len(bands))]
        for k in keys:
            cells = []
            for b in bands:
                if (*k, lv, b) in st.index:
                    row = st.loc[(*k, lv, b)]
                    cells.append(_cell(float(row["coverage"]), lv, target, float(row["mcse"]), float(row["rel_width"])))
                else:
                    cells.append("–")
            out.append("| " + " | ".join([*map(str, k), *cells]) + " |")
        out.append("")
    return "\n".join(out)


def coverage_report(name_or_folder, *, quick: bool = False, root="results", by=("method",), levels=None) -> str:
    """:func:`coverage_markdown` of a saved run, headed by what it pooled (tasks, datasets, oracles, ε)."""
    from .figures.draw import load_results

    table, meta, folder = load_results(name_or_folder, quick, Path(root))
    kind = meta.get("config", {}).get("kind")
    if kind not in COVERAGE_KINDS:
        raise ValueError(f"{folder}: kind {kind!r} is not a coverage run (ext_uncertainty_coverage)")
    t = table[table["metric"] == "coverage"]
    parts = [f"{c}: {', '.join(map(str, sorted(set(t[c]), key=str)))}" for c in ("dataset", "oracle", "epsilon")
             if c in t.columns]
    reps = _repetitions(t)
    head = (f"Coverage of `{meta.get('config', {}).get('name', folder.name)}` ({'; '.join(parts)}; "
            f"{reps} repetitions per cell at most; cells pool every dataset, oracle and ε unless grouped, never "
            f"the bands).")
    return (head + "\n\n" + coverage_markdown(table, by=by, levels=levels) + rank_markdown(table, by=by, levels=levels)
            + band_summary_markdown(table, levels=levels) + flag_summary_markdown(cell_stats(table), levels=levels))


def _repetitions(t: pd.DataFrame):
    """Repetitions per (dataset, oracle, ε) cell, the most any cell has: ``rep`` (× ``batch_rep``)."""
    if "rep" not in t.columns:
        return "?"
    cell = [c for c in ("dataset", "oracle", "epsilon") if c in t.columns]
    keys = ["rep", "batch_rep"] if "batch_rep" in t.columns else ["rep"]
    t = t[t[keys[-1]] >= 0] if "batch_rep" in t.columns else t
    return int(t.groupby(cell)[keys].apply(lambda g: len(g.drop_duplicates())).max()) if cell else t["rep"].nunique()


def rank_markdown(table: pd.DataFrame, *, by=("method",), levels=None) -> str:
    """The default top-10 interval's coverage per rank (``coverage_rank`` rows of ``coverage-batch``;
    "" when there are none): one table per level, rows = ``by`` groups, a column per rank, cells =
    coverage (%) pooled over the cells' repetitions with its binomial standard error, marked as in
    :func:`coverage_markdown`."""
    t = table[table["metric"] == "coverage_rank"] if "metric" in table.columns else table.iloc[:0]
    if t.empty:
        return ""
    by = tuple(by)
    t = t.assign(hits=t["value"] * t["count"])
    g = t.groupby([*by, "level", "band"])[["hits", "count"]].sum()
    g["cov"] = g["hits"] / g["count"]
    ranks = sorted(set(t["band"]), key=lambda b: int(b[4:]))
    out = []
    for lv in sorted(set(t["level"])) if levels is None else [float(x) for x in levels]:
        out += [f"Top 10 per rank, nominal {100 * lv:g} %: coverage (%) ± binomial SE of the default interval.", "",
                "| " + " | ".join([*by, *ranks]) + " |", "|" + "---|" * (len(by) + len(ranks))]
        for k in dict.fromkeys(i[:len(by)] for i in g.index):
            cells = []
            for b in ranks:
                if (*k, lv, b) not in g.index:
                    cells.append("–")
                    continue
                row = g.loc[(*k, lv, b)]
                c = float(row["cov"])
                cells.append(_cell(c, lv, TARGET, np.sqrt(c * (1 - c) / float(row["count"]))))
            out.append("| " + " | ".join([*map(str, k), *cells]) + " |")
        out.append("")
    return "\n" + "\n".join(out)


CELL = ("dataset", "oracle", "epsilon")


def band_summary_markdown(table: pd.DataFrame, *, by=("method",), levels=None) -> str:
    """Per ``by`` group and band, over the (dataset, oracle, ε) cells of ``table`` (never over bands):
    the least and the greatest cell coverage, the worst cell named with its Monte-Carlo SE, the
    median over cells of the median width relative to Base, and the fewest and most repetitions of a
    cell — one table per level, marked as :func:`coverage_markdown`; "" when the table has no cell
    columns."""
    from .task_kinds.uncertainty import coverage_stats

    t = table[table["metric"] == "coverage"] if "metric" in table.columns else table.iloc[:0]
    cell = [c for c in CELL if c in t.columns]
    by = tuple(by)
    if t.empty or not cell or any(c not in t.columns for c in by):
        return ""
    return band_summary_from_stats(coverage_stats(t, by=(*by, *cell)).reset_index(), by=by, levels=levels)


def _cell_name(w, cell) -> str:
    return " ".join(f"ε={w[c]:g}" if c == "epsilon" else str(w[c]).upper() if c == "oracle" else str(w[c])
                    for c in cell)


def band_summary_from_stats(st: pd.DataFrame, *, by=("method",), levels=None) -> str:
    """:func:`band_summary_markdown` from per-cell statistics ``st`` (one row per ``by`` × cell ×
    level × band with ``coverage``, ``mcse``, ``rel_width``, ``reps``: :func:`cell_stats` or the
    committed grid summary)."""
    cell = [c for c in CELL if c in st.columns]
    by = tuple(by)
    bands = [b for b in BAND_ORDER if b in set(st["band"])] + sorted(set(st["band"]) - set(BAND_ORDER))
    out = []
    for lv in sorted(set(st["level"])) if levels is None else [float(x) for x in levels]:
        out += [(f"Per band over the cells, nominal {100 * lv:g} %: least–greatest coverage (%) of a cell, the "
                f"worst cell ± its Monte-Carlo SE, median width × Base's, repetitions per cell."), "",
                "| " + " | ".join([*by, "band", "coverage", "worst cell", "width", "reps"]) + " |", "|" + "---|" * (len(by) + 5)]
        s = st[st["level"] == lv]
        for k, g in s.groupby(list(by), sort=False):
            k = k if isinstance(k, tuple) else (k,)
            for b in bands:
                gb = g[g["band"] == b]
                if gb.empty:
                    continue
                w = gb.loc[gb["coverage"].idxmin()]
                name = _cell_name(w, cell)
                reps = f"{int(gb['reps'].min())}–{int(gb['reps'].max())}" if gb["reps"].notna().all() else "?"
                out.append("| " + " | ".join([*map(str, k), b,
                                              f"{100 * gb['coverage'].min():.1f}–{100 * gb['coverage'].max():.1f}",
                                              f"{name}: {_cell(float(w['coverage']), lv, TARGET, float(w['mcse']))}",
                                              f"{gb['rel_width'].median():.2f}", reps]) + " |")
        out.append("")
    return "\n" + "\n".join(out)


FLAG_COLUMNS = tuple(["flagged"] + [f"{pre}_{c}" for pre in ("free", "raw", "base")
                                     for c in ("coverage", "mcse", "count", "reps", "rel_width")])


def cell_stats(table: pd.DataFrame, by=("method",)) -> pd.DataFrame:
    """Per ``by`` × (dataset, oracle, ε) cell × level × band: :func:`~ldpopt.experiments.task_kinds.uncertainty.coverage_stats`
    of the ``coverage`` rows joined with :func:`~ldpopt.experiments.task_kinds.uncertainty.flag_stats` (the flag columns
    NaN for the methods that flag nothing, Base and Norm), as a flat DataFrame."""
    from .task_kinds.uncertainty import coverage_stats, flag_stats

    cov = table[table["metric"] == "coverage"]
    keys = (*by, *[c for c in CELL if c in cov.columns])
    st = coverage_stats(cov, by=keys)
    fl = flag_stats(table, by=keys)
    st = st.join(fl, how="left") if not fl.empty else st.assign(**dict.fromkeys(FLAG_COLUMNS, np.nan))
    return st.reset_index()


def _pooled(g: pd.DataFrame, pre: str) -> tuple[float, float, int]:
    """(coverage, Monte-Carlo SE, entries) of the ``pre`` part pooled over the cells of ``g``: the
    count-weighted mean of the cells' coverage; the cells are independent, so the SE is
    sqrt(Σ (n_c se_c)²) / Σ n_c."""
    g = g[g[f"{pre}_count"].fillna(0) > 0]
    n = g[f"{pre}_count"].to_numpy(dtype=float)
    if n.sum() == 0:
        return np.nan, np.nan, 0
    cov = float(np.sum(n * g[f"{pre}_coverage"]) / n.sum())
    return cov, float(np.sqrt(np.sum((n * g[f"{pre}_mcse"]) ** 2)) / n.sum()), int(n.sum())


def flag_summary_markdown(st: pd.DataFrame, *, by=("method",), levels=None, min_reps: int = 2,
                          min_count: int = 50) -> str:
    """Per ``by`` group and band of the methods that flag entries (Base's interval instead of their
    own, :attr:`ldpopt.uncertainty.Uncertainty.fallback`), over the (dataset, oracle, ε) cells of
    the per-cell statistics ``st`` (:func:`cell_stats`), one table per level: the least–greatest
    share of the band's entries flagged in a cell; the least–greatest coverage of what the user
    gets (every entry) with the worst cell ± its Monte-Carlo SE; then the entries that are *not*
    flagged only — how many over every cell and repetition, and the coverage there, pooled over the
    cells ± SE, of what the user gets (the hull of the method's basic interval with Base's), of the
    method's own basic interval and of Base's interval (the reference: which entries go unflagged
    is decided on the same data), with the least cell of the user's among the cells with at least
    ``min_count`` unflagged entries in at least ``min_reps`` repetitions (n entries in brackets); the median over cells of the median
    width × Base's of what the user gets and of the method's own interval on the unflagged entries;
    repetitions per cell. Marks as :func:`coverage_markdown`. "" when no group flags anything."""
    if st.empty or "flagged" not in st.columns or st["flagged"].isna().all():
        return ""
    st = st[st["flagged"].notna()]
    for c in FLAG_COLUMNS:
        st = st if c in st.columns else st.assign(**{c: np.nan})
    cell = [c for c in CELL if c in st.columns]
    by = tuple(by)
    bands = [b for b in BAND_ORDER if b in set(st["band"])] + sorted(set(st["band"]) - set(BAND_ORDER))
    out = []
    for lv in sorted(set(st["level"])) if levels is None else [float(x) for x in levels]:
        out += [(f"Flagged entries per band over the cells, nominal {100 * lv:g} %: share flagged (least–greatest "
                f"cell, %); coverage (%) of what the user gets, least–greatest cell and the worst ± its "
                f"Monte-Carlo SE; on the unflagged entries only: their number (all cells and repetitions), the "
                f"coverage of what the user gets, of the method's own basic interval and of Base's interval, "
                f"pooled over the cells ± SE, and the least cell of the user's (≥ {min_count} entries); median width × Base's "
                f"of the user's and the own interval; repetitions per cell."),
                "", "| " + " | ".join([*by, "band", "flagged %", "coverage", "worst cell", "unflagged n",
                                       "unflagged: user's", "own", "Base's", "least cell (user's)",
                                       "width", "own width", "reps"]) + " |", "|" + "---|" * (len(by) + 12)]
        s = st[st["level"] == lv]
        for k, g in s.groupby(list(by), sort=False):
            k = k if isinstance(k, tuple) else (k,)
            for b in bands:
                gb = g[g["band"] == b]
                if gb.empty:
                    continue
                w = gb.loc[gb["coverage"].idxmin()]
                pooled = {pre: _pooled(gb, pre) for pre in ("free", "raw", "base")}
                ok = gb[(gb["free_count"].fillna(0) >= min_count) & (gb["free_reps"].fillna(0) >= min_reps)]
                if ok.empty:
                    least = "–"
                else:
                    lw = ok.loc[ok["free_coverage"].idxmin()]
                    least = (f"{_cell_name(lw, cell)}: {_cell(float(lw['free_coverage']), lv, TARGET, float(lw['free_mcse']))}"
                             f" ({int(lw['free_count'])})")
                fl = 100 * gb["flagged"]
                reps = f"{int(gb['reps'].min())}–{int(gb['reps'].max())}" if gb["reps"].notna().all() else "?"
                wown = gb["raw_rel_width"].median() if gb["raw_rel_width"].notna().any() else np.nan
                out.append("| " + " | ".join([
                    *map(str, k), b, f"{fl.min():.1f}–{fl.max():.1f}",
                    f"{100 * gb['coverage'].min():.1f}–{100 * gb['coverage'].max():.1f}",
                    f"{_cell_name(w, cell)}: {_cell(float(w['coverage']), lv, TARGET, float(w['mcse']))}",
                    str(pooled["free"][2]), *[_cell(pooled[p][0], lv, TARGET, pooled[p][1]) for p in ("free", "raw", "base")],
                    least, f"{gb['rel_width'].median():.2f}", "–" if not np.isfinite(wown) else f"{wown:.2f}",
                    reps]) + " |")
        out.append("")
    return "\n" + "\n".join(out)


def group_summary_markdown(st: pd.DataFrame, groups: dict, *, levels=(0.9, 0.95)) -> str:
    """Per band (never pooled across bands) and group of methods (``groups``: label → methods), over
    the (dataset, oracle, ε) cells and the group's methods of the per-cell statistics ``st``
    (:func:`cell_stats`): the least–greatest coverage at each of ``levels``, the least–greatest
    median width × Base's, the worst cell and method at the first level ± its Monte-Carlo SE
    (marked as :func:`coverage_markdown`) and the fewest–most repetitions of a cell."""
    levels = [float(x) for x in levels]
    if bad := [lv for lv in levels if lv not in set(st["level"])]:
        raise ValueError(f"levels: {bad} not in the statistics (have {sorted(set(st['level']))})")
    cell = [c for c in CELL if c in st.columns]
    bands = [b for b in BAND_ORDER if b in set(st["band"])] + sorted(set(st["band"]) - set(BAND_ORDER))
    out = ["| band | methods | " + " | ".join(f"{100 * lv:g} %" for lv in levels)
           + f" | width | worst cell at {100 * levels[0]:g} % | reps |", "|" + "---|" * (len(levels) + 5)]
    for b in bands:
        for label, methods in groups.items():
            g = st[(st["band"] == b) & st["method"].isin(list(methods))]
            if g.empty:
                continue
            rng = [g[g["level"] == lv]["coverage"] for lv in levels]
            g0 = g[g["level"] == levels[0]]
            w = g0.loc[g0["coverage"].idxmin()]
            out.append("| " + " | ".join([
                b, label, *[f"{100 * r.min():.1f}–{100 * r.max():.1f}" for r in rng],
                f"{g['rel_width'].min():.2f}–{g['rel_width'].max():.2f}",
                f"{_cell_name(w, cell)} {w['method']}: {_cell(float(w['coverage']), levels[0], TARGET, float(w['mcse']))}",
                f"{int(g['reps'].min())}–{int(g['reps'].max())}"]) + " |")
    return "\n".join(out) + "\n"


def failures_markdown(st: pd.DataFrame, *, min_reps: int = 100, skip=("topk-set",), target: float = TARGET) -> str:
    """Every (experiment, cell, band, level) of the per-cell statistics ``st`` where a method covers
    more than ``target`` under nominal (on the shown, rounded value, as :func:`coverage_markdown`
    marks it) with at least ``min_reps`` repetitions, the bands in ``skip`` left out; methods with
    the same coverage in the same cell share a row. Columns: the section (experiment), the cell,
    the methods, the band, the level, coverage ± Monte-Carlo SE, how far under the bound in SEs,
    the entries and the repetitions. "" when there is none."""
    cell = [c for c in CELL if c in st.columns]
    t = st[(st["reps"] >= min_reps) & ~st["band"].isin(list(skip))]
    t = t[(t["coverage"] * 100).round(1) - 100 * t["level"] < -100 * target - 1e-9]
    if t.empty:
        return ""
    keys = [c for c in ("experiment", *cell, "band", "level", "coverage", "mcse", "count", "reps") if c in t.columns]
    g = t.groupby(keys, sort=False)["method"].apply(lambda m: ", ".join(dict.fromkeys(m))).reset_index()
    g = g.assign(z=(g["coverage"] - (g["level"] - target)) / g["mcse"]).sort_values(["z"], kind="stable")
    out = ["| section | cell | methods | band | level | coverage ± MC SE | under the bound | entries | reps |",
           "|---|---|---|---|---|---|---|---|---|"]
    for _, r in g.iterrows():
        out.append("| " + " | ".join([str(r.get("experiment", "")), _cell_name(r, cell), r["method"], r["band"],
                                      f"{100 * r['level']:g}", f"{100 * r['coverage']:.1f} ± {100 * r['mcse']:.1f}",
                                      f"{-r['z']:.1f} SE" if np.isfinite(r["z"]) else "–", str(int(r["count"])),
                                      str(int(r["reps"]))]) + " |")
    return "\n".join(out) + "\n"
