"""The one table and the figures of an evaluation (:mod:`.evaluation`), from its saved results.

Details: docs/experiments.md, section `ldpopt.experiments.evaluation_table`.
"""

from __future__ import annotations

import zlib
from pathlib import Path

import numpy as np
import pandas as pd

from .._atomic import write_text

__all__ = ["MIN_BOOT_REPS", "SKEW", "all_values", "band_text", "bootstrap_ci", "coverage_rows", "error_rows", "figures",
           "k_text", "markdown", "regimes", "rho_text", "summary", "write_table"]

#: fewest repetitions for a bootstrap interval of a mean (fewer: NaN)
MIN_BOOT_REPS = 10
#: |sample skewness| above which the repetitions count as heavy-tailed
SKEW = 1.0
_BOOT = 2000
_KEYS = ["dataset", "oracle", "epsilon"]


def bootstrap_ci(x, level: float = 0.95, resamples: int = _BOOT, seed: int = 0) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of ``x`` (resampling its entries with replacement);
    (NaN, NaN) with fewer than :data:`MIN_BOOT_REPS` entries."""
    x = np.asarray(x, dtype=np.float64)
    if x.size < MIN_BOOT_REPS:
        return float("nan"), float("nan")
    idx = np.random.default_rng(seed).integers(0, x.size, size=(resamples, x.size))
    means = x[idx].mean(axis=1)
    lo, hi = np.quantile(means, [(1 - level) / 2, (1 + level) / 2])
    return float(lo), float(hi)


def _skewness(x: np.ndarray) -> float:
    c = x - x.mean()
    m2 = float(np.mean(c ** 2))
    return float(np.mean(c ** 3) / m2 ** 1.5) if x.size > 2 and m2 > 0 else float("nan")


def regimes(cfgs: dict) -> dict[str, tuple[int, int]]:
    """(n, d) of every dataset of the configs, by the name the results table gives it."""
    from .runner import tasks_of
    from .toolkit import dataset_of

    out = {}
    for cfg in cfgs.values():
        for task in tasks_of(cfg):
            if task.dataset_name not in out:
                ds = dataset_of(task)
                out[task.dataset_name] = (int(ds.counts.sum()), int(ds.d))
    return out


def error_rows(metric, t: pd.DataFrame) -> list[dict]:
    """Per regime × query × method of an error metric (MSE): mean, SE, bootstrap interval, skewness."""
    t = t[t["metric"] == metric.metric]
    keys = [*_KEYS, *([metric.query] if metric.query else []), "method"]
    rows = []
    for key, g in t.groupby(keys, sort=False, observed=True):
        x = g["value"].to_numpy(np.float64)
        seed = zlib.crc32(repr((metric.key, key)).encode())
        lo, hi = bootstrap_ci(x, seed=seed)
        skew = _skewness(x)
        rows.append({**dict(zip(keys, key)), "reps": int(x.size), "mean": float(x.mean()),
                     "se": float(x.std(ddof=1) / np.sqrt(x.size)) if x.size > 1 else float("nan"),
                     "ci95_lo": lo, "ci95_hi": hi, "skewness": skew,
                     "heavy_tailed": bool(x.size >= MIN_BOOT_REPS and abs(skew) > SKEW)})
    return rows


def coverage_rows(metric, t: pd.DataFrame) -> list[dict]:
    """Per regime × band × level × method: pooled coverage and its Monte-Carlo SE."""
    from .coverage_report import BAND_ORDER
    from .task_kinds.uncertainty import coverage_stats

    t = t[t["metric"] == "coverage"]
    st = coverage_stats(t, by=(*_KEYS, "method")).reset_index()
    # the cells in the sweep's order, the bands in the coverage tables' order within a cell
    cell = {k: i for i, k in enumerate(dict.fromkeys(zip(t["dataset"], t["oracle"], t["epsilon"])))}
    band = {b: i for i, b in enumerate(BAND_ORDER)}
    st = st.assign(_c=[cell[k] for k in zip(st["dataset"], st["oracle"], st["epsilon"])],
                   _b=[band.get(b, len(band)) for b in st["band"]]).sort_values(["_c", "_b"], kind="stable")
    return [{"dataset": r.dataset, "oracle": r.oracle, "epsilon": r.epsilon, "band": r.band, "level": r.level,
             "method": r.method, "reps": int(r.reps), "mean": float(r.coverage), "se": float(r.mcse),
             "ci95_lo": np.nan, "ci95_hi": np.nan, "skewness": np.nan, "heavy_tailed": False}
            for r in st.itertuples()]


def all_values(value) -> str:
    return "all d values"


def rho_text(value) -> str:
    return f"ρ = {float(value):g} % of d"


def k_text(value) -> str:
    return f"k = {int(value)}"


def band_text(value) -> str:
    from .figures.coverage import BANDS

    return BANDS.get(value, {"topk-set": "top-10 set, fixed-set interval"}.get(value, str(value)))


def summary(results: dict, metrics, sizes: dict, order) -> pd.DataFrame:
    """One row per metric × regime × query × method (docs/experiments.md); ``results``: the results
    table of each metric by key; ``sizes``: (n, d) by dataset (:func:`regimes`); ``order``: the
    methods in column order (the user's first)."""
    from .figures.wang import LABELS

    frames = []
    for i, metric in enumerate(metrics):
        rows = metric.reduce(metric, results[metric.key])
        f = pd.DataFrame(rows)
        if f.empty:
            continue
        qcol = metric.query
        f["query_value"] = f[qcol] if qcol else ""
        f["query"] = [metric.describe(v) for v in f["query_value"]]
        f["metric"] = metric.title + (f" (nominal {100 * float(f['level'].iloc[0]):g} %)" if "level" in f else "")
        f["source"] = metric.source
        f["n"] = [sizes[d][0] for d in f["dataset"]]
        f["d"] = [sizes[d][1] for d in f["dataset"]]
        f["method"] = f["method"].astype(str)
        f["label"] = [LABELS.get(m, m) for m in f["method"]]
        f["_m"] = i
        frames.append(f)
    cols = ["metric", "source", "dataset", "n", "d", "oracle", "epsilon", "query", "query_value", "level", "method",
            "label", "reps", "mean", "se", "ci95_lo", "ci95_hi", "skewness", "heavy_tailed"]
    out = pd.concat(frames, ignore_index=True)
    if "level" not in out:
        out["level"] = np.nan
    rank = {m: i for i, m in enumerate(order)}
    out["_o"] = [rank.get(m, len(rank)) for m in out["method"]]
    # rows in the grid's order (metric, dataset, oracle, ε, query as the sweep lists them), methods in column order
    out["_r"] = out.groupby(["_m", "dataset", "oracle", "epsilon", "query"], sort=False).ngroup()
    return out.sort_values(["_r", "_o"], kind="stable")[cols].reset_index(drop=True)


def _scale(values) -> float:
    v = np.abs(np.asarray(values, dtype=float))
    v = v[np.isfinite(v) & (v > 0)]
    return 10.0 ** np.floor(np.log10(v.max())) if v.size else 1.0


def _error_cell(r, scale: float, best: bool) -> str:
    text = f"{r['mean'] / scale:.3g} ± {r['se'] / scale:.2g}"
    if best:
        text = f"**{r['mean'] / scale:.3g}** ± {r['se'] / scale:.2g}"
    if r["heavy_tailed"] and np.isfinite(r["ci95_lo"]):
        text += f" [{r['ci95_lo'] / scale:.3g}, {r['ci95_hi'] / scale:.3g}]"
    return text


def markdown(table: pd.DataFrame, title: str) -> str:
    """The summary as one markdown table (docs/experiments.md), headed by what it shows."""
    from .coverage_report import TARGET, _cell
    from .figures.style import oracle_label

    methods = list(dict.fromkeys(table["method"]))
    labels = dict(zip(table["method"], table["label"]))
    head = ["metric", "dataset (n, d)", "oracle", "ε", "query", "reps", "unit", *[labels[m] for m in methods], "best"]
    legend = (f"{title}: mean ± standard error over the repetitions, in the row's unit; **bold** = the smallest "
              f"error of the row; [lo, hi] = 95 % percentile-bootstrap interval of the mean where the repetitions "
              f"are heavy-tailed (|skewness| > {SKEW:g}); coverage: pooled % ± Monte-Carlo SE, **bold ↓** = more "
              f"than {100 * TARGET:g} points under nominal, ↑ = more than {100 * TARGET:g} over; – = not measured.")
    lines = [legend, "", "| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for _, g in table.groupby(["metric", "dataset", "oracle", "epsilon", "query"], sort=False):
        first = g.iloc[0]
        by = {r["method"]: r for _, r in g.iterrows()}
        coverage = np.isfinite(first["level"])
        reps = sorted({int(x) for x in g["reps"]})
        if coverage:
            unit, cells, best = "%", [
                _cell(by[m]["mean"], float(first["level"]), TARGET, by[m]["se"]) if m in by else "–" for m in methods], "–"
        else:
            scale = _scale(g["mean"])
            unit = f"×1e{int(np.log10(scale))}"
            low = g.loc[g["mean"].idxmin()]
            cells = [_error_cell(by[m], scale, m == low["method"]) if m in by else "–" for m in methods]
            best = str(low["label"])
        regime = [first["metric"], f"{first['dataset']} ({int(first['n']):,}, {int(first['d']):,})",
                  oracle_label(first["oracle"]), f"{float(first['epsilon']):g}", first["query"],
                  "–".join(map(str, (reps[0], reps[-1]))) if len(reps) > 1 else str(reps[0]), unit]
        lines.append("| " + " | ".join([*regime, *cells, best]) + " |")
    return "\n".join(lines) + "\n"


def write_table(table: pd.DataFrame, out: Path, title: str) -> tuple[Path, Path]:
    """``out/evaluation.md`` and ``out/evaluation.csv`` (atomically); returns their paths."""
    md, csv = out / "evaluation.md", out / "evaluation.csv"
    write_text(md, markdown(table, title))
    write_text(csv, table.to_csv(index=False))
    return md, csv


def figures(results: dict, metrics, table: pd.DataFrame, out_dir: Path, title: str) -> list[Path]:
    """One figure per metric (pages where it has many rows) by the kind's figure function, the
    methods in ``table``'s column order, titled with the regime (datasets with n and d, repetitions);
    returns the PNG paths."""
    from .figures.draw import figure

    out_dir.mkdir(parents=True, exist_ok=True)
    rank = {m: i for i, m in enumerate(dict.fromkeys(table["method"]))}
    paths: list[Path] = []
    for metric in metrics:
        t = results[metric.key]
        t = t[t["metric"] == metric.metric]
        t = t.iloc[np.argsort(t["method"].astype(str).map(rank).to_numpy(), kind="stable")]
        rows = table[table["source"] == metric.source]
        data = ", ".join(f"{ds} (n = {n:,}, d = {d:,})" for ds, n, d in
                         dict.fromkeys(zip(rows["dataset"], rows["n"], rows["d"])))
        reps = sorted({int(r) for r in rows["reps"]})
        reps_text = f"{reps[0]}–{reps[-1]}" if len(reps) > 1 else f"{reps[0]}"
        meta = {"config": {"name": f"{title}; {data}; {reps_text} repetitions"}, "quick": False}
        paths += figure(metric.kind)(t, meta, out_dir, metric.key)
    return paths
