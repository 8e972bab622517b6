"""Task kind ``coverage``: empirical coverage of ldpopt's confidence intervals.

Details: docs/experiments.md, section `ldpopt.experiments.task_kinds.uncertainty`.
"""

from __future__ import annotations

import warnings

import numpy as np

from ...queries import query_matrix
from ...uncertainty import FallbackWarning, intervals
from ...uncertainty.analytic import analytic, supports_analytic
from ...uncertainty.bootstrap import boundary_hull, interval_from, resample_method
from ...uncertainty.calibrate import calibrated_topk
from ...uncertainty.topk import select_top, topk_interval
from ..registry import kind
from ..toolkit import QUERY_METHODS, active_methods, dataset_of, params, simulate

__all__ = ["BANDS", "SUBSETS", "coverage", "coverage_stats", "coverage_table", "flag_stats"]


BANDS = ("zero", "lt1sigma", "1-2sigma", "2-5sigma", "ge5sigma")
SUBSETS = ("sub-head", "sub-tail", "sub-mixed")
HEAD = 1000  # the head of the subset kinds: the HEAD largest true frequencies (a tenth of d if smaller)


def _bands(f: np.ndarray, sigma: float) -> dict[str, np.ndarray]:
    """The true frequencies in units of σ (Eq. 7): f = 0, (0, σ), [σ, 2σ), [2σ, 5σ), ≥ 5σ."""
    return {"zero": f == 0, "lt1sigma": (f > 0) & (f < sigma), "1-2sigma": (f >= sigma) & (f < 2 * sigma),
            "2-5sigma": (f >= 2 * sigma) & (f < 5 * sigma), "ge5sigma": f >= 5 * sigma}


def _subsets(rng, f: np.ndarray, size: int, count: int) -> dict[str, np.ndarray]:
    """``count`` subsets of ``size`` values per kind: from the true head (ranks < HEAD), from the
    rest (the tail), and uniform over the domain (mixed); (count, d) 0-1 rows."""
    d = f.shape[0]
    order = np.argsort(-f, kind="stable")
    h = max(min(HEAD, d // 10), size)
    out = {}
    for name, pool in (("sub-head", order[:h]), ("sub-tail", order[h:]), ("sub-mixed", np.arange(d))):
        if pool.shape[0] < size:
            continue
        pick = pool[np.argpartition(rng.random((count, pool.shape[0])), size - 1, axis=1)[:, :size]]
        M = np.zeros((count, d))
        M[np.arange(count)[:, None], pick] = 1.0
        out[name] = M
    return out


def _rows(method, how, level, lo, hi, truth, masks, ref=None) -> list[dict]:
    """One row per band: coverage, count, mean width and ``rel_width``, the median of the width
    (clipped to [0, 1]) over ``ref`` = Base's analytic (lo, hi) clipped to [0, 1] on the same entries (entries where
    Base's clipped width is 0 left out; NaN when none is left)."""
    hit = (lo <= truth) & (truth <= hi)
    w = hi - lo
    rw = np.full(w.shape, np.nan)
    if ref is not None:  # both clipped to [0, 1], where every truth lies (Base/Norm's are not)
        bw = np.clip(ref[1], 0, 1) - np.clip(ref[0], 0, 1)
        np.divide(np.clip(hi, 0, 1) - np.clip(lo, 0, 1), bw, out=rw, where=bw > 0)
    out = []
    for band, m in masks.items():
        if m.any():
            r = rw[m]
            out.append({"method": method, "metric": "coverage", "level": level, "band": band,
                        "value": float(hit[m].mean()), "count": int(m.sum()),
                        "width": float(np.mean(w[m])),
                        "rel_width": float(np.median(r[np.isfinite(r)])) if np.isfinite(r).any() else np.nan,
                        "interval": how})
    return out


def _topk_rows(method, level, point, world, boot, f, fixed, scale=None, cal=None, Sb=None, ref=None) -> list[dict]:
    """Selection-aware top-10 rows (:mod:`ldpopt.uncertainty.topk`): ``topk-sel`` covers f_{S_i}
    (the value the estimate ranks i-th), ``topk-order`` the i-th largest true frequency,
    ``topk-hull`` f_{S_i} by the hull of ``topk-sel`` with the fixed-set interval ``fixed``;
    ``cal`` = (calibrated level, its fixed-set (lo, hi)): ``topk-cal``, the same hull with both
    parts at the calibrated level (:mod:`ldpopt.uncertainty.calibrate`)."""
    one = {"x": np.ones(10, bool)}
    S, _, _, lo, hi, _ = topk_interval(point, world, boot, 10, level, "basic", "selected", scale=scale, Sb=Sb)
    _, _, _, olo, ohi, _ = topk_interval(point, world, boot, 10, level, "basic", "order", scale=scale, Sb=Sb)
    how = "rank-conditional basic"
    rows = (_rows(method, how, level, lo, hi, f[S], {"topk-sel": one["x"]}, ref=ref)
            + _rows(method, how, level, olo, ohi, np.sort(f)[::-1][:10], {"topk-order": one["x"]}, ref=ref)
            + _rows(method, how, level, np.minimum(lo, fixed[0]), np.maximum(hi, fixed[1]), f[S],
                    {"topk-hull": one["x"]}, ref=ref))
    if cal is not None:
        _, _, _, clo, chi, _ = topk_interval(point, world, boot, 10, cal[0], "basic", "selected", scale=scale,
                                             Sb=Sb)
        rows += _rows(method, f"calibrated hull at {cal[0]:.4g}", level, np.minimum(clo, cal[1][0]),
                      np.maximum(chi, cal[1][1]), f[S], {"topk-cal": one["x"]}, ref=ref)
    return rows


def _calibrated(level, world, boot, scale, Sb, **fixed):
    """The calibrated level of the top-10 hull (:func:`ldpopt.uncertainty.calibrate.calibrated_level`);
    ``Sb`` = ``select_top(boot, 10)``, computed once per method (the same for every level)."""
    bp = boot if scale is None else boot * scale[1][:, None]
    return calibrated_topk(world, bp, Sb, level, se=fixed.get("se"))[0]


def _hull(est, level, queries, world, lo, hi):
    lo, hi, _ = boundary_hull(est, level, queries, world, lo, hi)
    return lo, hi


@kind("coverage", registry_methods=QUERY_METHODS, oracle_params=True)
def coverage(task) -> list[dict]:
    ds = dataset_of(task)
    rng = task.rng()
    est = simulate(task, ds.counts, ds.d, rng)
    p = params(task)
    levels = [float(x) for x in p.get("levels", [0.9, 0.95])]
    B = int(p.get("resamples", 200))
    f = ds.frequencies
    masks = _bands(f, est.sigma)
    subs = {k: query_matrix(M, ds.d) for k, M in _subsets(rng, f, int(p.get("subset_size", 10)),
                                                           int(p.get("subsets", 50))).items()}
    f_sub = {k: np.asarray(U @ f).ravel() for k, U in subs.items()}
    base = {lv: analytic(est, "base", lv) for lv in levels}
    base_q = {(lv, k): analytic(est, "base", lv, queries=U) for lv in levels for k, U in subs.items()}
    rows = []

    def sub_rows(m, how, lv, k, lo, hi):
        b = base_q[(lv, k)]
        return _rows(m, how, lv, lo, hi, f_sub[k], {k: np.ones(len(lo), bool)}, ref=(b.lo, b.hi))

    for m in active_methods(task):
        if m in QUERY_METHODS:
            continue
        seed = int(rng.integers(2**63))
        if supports_analytic(est, m, subs.get("sub-mixed")):
            tk_world, tk_boot = resample_method(est, m, B, seed)
            tk_sb = select_top(tk_boot, 10)
            for lv in levels:
                r = analytic(est, m, lv)
                ref = (base[lv].lo, base[lv].hi)
                rows += _rows(m, "normal", lv, r.lo, r.hi, f, masks, ref=ref)
                top = np.argsort(-r.values, kind="stable")[:10]
                reft = (ref[0][top], ref[1][top])
                rows += _rows(m, "normal", lv, r.lo[top], r.hi[top], f[top], {"topk-set": np.ones(10, bool)}, ref=reft)
                cl = _calibrated(lv, tk_world, tk_boot, None, tk_sb, se=r.se)
                rc = analytic(est, m, cl)
                rows += _topk_rows(m, lv, r.values, tk_world, tk_boot, f, (r.lo[top], r.hi[top]),
                                   cal=(cl, (rc.lo[top], rc.hi[top])), Sb=tk_sb, ref=reft)
                for k, U in subs.items():
                    rq = analytic(est, m, lv, queries=U)
                    rows += sub_rows(m, "normal", lv, k, rq.lo, rq.hi)
            continue
        rows += bootstrap_rows(est, m, levels, B, seed, f, masks, subs, f_sub, base, base_q)
    return rows


def bootstrap_rows(est, m, levels, B, seed, f, masks, subs, f_sub, base, base_q, topk=True) -> list[dict]:
    """Rows of a bootstrapped method ``m`` on one estimate: per band of ``masks``, per subset kind of
    ``subs`` (true answers ``f_sub``) and, with ``topk``, the top-10 bands; ``base``/``base_q``: Base's
    analytic results per level (and per level and subset kind), the width reference. One bootstrap
    serves every level: what ``intervals`` returns (Base's interval at flagged entries, the hull
    elsewhere)."""
    rows = []

    def sub_rows(how, lv, k, lo, hi):
        b = base_q[(lv, k)]
        return _rows(m, how, lv, lo, hi, f_sub[k], {k: np.ones(len(lo), bool)}, ref=(b.lo, b.hi))

    with warnings.catch_warnings():  # the table records the fallback per entry; no stderr note per task
        warnings.simplefilter("ignore", FallbackWarning)
        r = intervals(est, m, levels[0], n_resamples=B, interval="basic", rng=seed)
    boot, world = r.bootstrap_distribution, r.extra["world"]
    assert boot is not None  # a bootstrapped method's result keeps its resamples
    # Norm-Mul: intervals on the rescaled output T·S (ldpopt.uncertainty.bootstrap, RATIO_PIVOT)
    scale = (r.extra["scale"], r.extra["scale_boot"]) if "scale" in r.extra else None
    tp, bp = (r.values, boot) if scale is None else (r.values * scale[0], boot * scale[1][:, None])
    top = np.argsort(-r.values, kind="stable")[:10]
    sb = select_top(boot, 10) if topk else None
    for lv in levels:
        ref = (base[lv].lo, base[lv].hi)
        reft = (ref[0][top], ref[1][top])
        _, _, lo, hi = interval_from(tp, world, bp, lv, "basic")
        lo, hi = _hull(est, lv, None, world, lo, hi)
        rows += _rows(m, "basic+base", lv, lo, hi, f, masks, ref=ref)
        for k, U in subs.items():
            bq, wq, tq = np.asarray((U @ bp.T).T), np.asarray(U @ world).ravel(), np.asarray(U @ tp).ravel()
            _, _, qlo, qhi = interval_from(tq, wq, bq, lv, "basic")
            qlo, qhi = _hull(est, lv, U, wq, qlo, qhi)
            rows += sub_rows("basic+base", lv, k, qlo, qhi)
        if not topk:
            continue
        rows += _rows(m, "basic+base", lv, lo[top], hi[top], f[top], {"topk-set": np.ones(10, bool)}, ref=reft)
        cl = _calibrated(lv, world, boot, scale, sb, dev_fixed=True)
        # the calibrated fixed-set part at the top 10 only (per value: the same floats as over all d)
        _, _, clo, chi = interval_from(tp[top], world[top], bp[:, top], cl, "basic")
        clo, chi, _ = boundary_hull(est, cl, None, world[top], clo, chi, index=top)
        rows += _topk_rows(m, lv, r.values, world, boot, f, (lo[top], hi[top]), scale=scale,
                           cal=(cl, (clo, chi)), Sb=sb, ref=reft)
    return rows


def coverage_table(table, by=("method",)):
    """Pooled coverage: Σ value·count / Σ count per ``by`` × band × level (a wide DataFrame, one
    column per (level, band))."""
    return coverage_stats(table, by)["coverage"].unstack(["level", "band"]).sort_index(axis=1)


def coverage_stats(table, by=("method",)):
    """Per ``by`` × level × band: ``coverage`` (Σ value·count / Σ count), its Monte-Carlo standard
    error ``mcse`` (the cluster/ratio-estimator one over repetitions, *choice*: values of one band in
    one repetition share the estimate and are not independent — sqrt(Σ_r c_r²(x_r − x̄)²)/Σ_r c_r with
    c_r, x_r the count and coverage of repetition r; needs a ``rep`` column, else NaN; a repetition is
    (``rep``, ``batch_rep``) where the rows come from ``coverage-batch``), ``count``,
    ``reps`` and ``rel_width`` (median over the rows of the median width relative to Base)."""
    import pandas as pd

    t = table.assign(hits=table["value"] * table["count"], pooled="all")
    by = tuple(by) or ("pooled",)
    keys = [*by, "level", "band"]
    g = t.groupby(keys)
    out = pd.DataFrame({"hits": g["hits"].sum(), "count": g["count"].sum()})
    out["coverage"] = out["hits"] / out["count"]
    if "rep" in t.columns:
        t = t.assign(cluster=t["rep"].astype(str) + "/" + t["batch_rep"].astype(str)) if "batch_rep" in t.columns \
            else t.assign(cluster=t["rep"])
        per = t.groupby([*keys, "cluster"])[["hits", "count"]].sum().reset_index()
        per = per.join(out["coverage"].rename("cbar"), on=keys)
        per["sq"] = (per["hits"] - per["cbar"] * per["count"]) ** 2
        agg = per.groupby(keys).agg(sq=("sq", "sum"), reps=("cluster", "nunique"))
        out["mcse"] = np.sqrt(agg["sq"]) / out["count"]
        out["reps"] = agg["reps"]
    else:
        out["mcse"], out["reps"] = np.nan, np.nan
    out["rel_width"] = g["rel_width"].median() if "rel_width" in t.columns else np.nan
    return out.drop(columns="hits")


FLAG_METRICS = {"coverage_unflagged": "free", "coverage_unflagged_raw": "raw", "coverage_unflagged_base": "base"}


def flag_stats(table, by=("method",)):
    """Per ``by`` × level × band, for the methods whose ``coverage`` rows count their ``flagged``
    entries (:mod:`.uncertainty_batch`): ``flagged`` (Σ flagged / Σ count: the share of the
    band's entries that got Base's interval), and for the entries that were not flagged,
    ``free_coverage``, ``free_mcse``, ``free_count``, ``free_reps``, ``free_rel_width`` (what the user
    gets there, metric ``coverage_unflagged``) and the same with prefix ``raw_`` (the method's own
    basic interval, ``coverage_unflagged_raw``) and ``base_`` (Base's interval on the same entries,
    ``coverage_unflagged_base``), from :func:`coverage_stats`. Empty when no row counts its flags."""
    import pandas as pd

    cov = table[table["metric"] == "coverage"] if "metric" in table.columns else table.iloc[:0]
    if "flagged" not in cov.columns or cov["flagged"].isna().all():
        return pd.DataFrame()
    cov = cov[cov["flagged"].notna()]
    keys = [*by, "level", "band"]
    g = cov.groupby(keys)[["flagged", "count"]].sum()
    out = pd.DataFrame({"flagged": g["flagged"] / g["count"]})
    for metric, pre in FLAG_METRICS.items():
        t = table[table["metric"] == metric]
        if t.empty:
            continue
        st = coverage_stats(t, by=by)[["coverage", "mcse", "count", "reps", "rel_width"]]
        out = out.join(st.add_prefix(f"{pre}_"), how="left")
    return out
