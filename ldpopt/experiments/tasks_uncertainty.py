"""Task kind ``coverage``: empirical coverage of ldpopt's confidence intervals.

One task = one simulated dataset (an estimate of the config's truth by the config's oracle at ε).
For every method: the interval of :func:`ldpopt.uncertainty.intervals` (analytic normal for Base
and Norm, parametric-bootstrap basic interval otherwise, widened to Base's interval where the fit is 0 — see
:mod:`ldpopt.uncertainty.bootstrap`) at each level of ``params.levels``
(default 0.9 and 0.95; one bootstrap serves every level), and whether it covers the truth, per

* value-rank band of the *true* frequencies: ``top10`` (ranks 1–10), ``10-100``, ``tail`` (> 100),
  and ``ge5sigma`` (values with f_v ≥ 5σ, σ of Eq. 7 — the "well above the clipping" set);
* query kind: ``subsets`` (``params.subsets`` random subsets of ``params.subset_size`` values,
  fresh per task; their sums) and ``topk-set`` (the 10 largest values of the method's output, the
  set chosen from the data; coverage of their true frequencies by the *fixed-set* interval, as if
  the set had not been chosen from the data), ``topk-sel`` (the selection-aware interval of
  :mod:`ldpopt.uncertainty.topk`, same target f_{S_i}), ``topk-order`` (its variant for the i-th
  largest true frequency), ``topk-hull`` (hull of ``topk-set`` and ``topk-sel``: what
  ``intervals(query="topk:K")`` returns by default for the cut/shift methods) and ``topk-cal``
  (the same hull with both parts at the calibrated level of :mod:`ldpopt.uncertainty.calibrate`:
  the default for Base, Norm, Base-Pos and Norm-Mul; computed for every method). For Base and
  Norm the selection-aware bands use a bootstrap of ``params.resamples`` (the analytic law has no
  selection). Norm-Mul's intervals use its ratio pivot T·S (:mod:`ldpopt.uncertainty.bootstrap`).

Rows: method, metric = "coverage", level, band, value (fraction covered in this task), count
(items in the band), width (mean interval width), interval (the construction).
Aggregate as the count-weighted mean of ``value`` over repetitions.
"""

from __future__ import annotations

import numpy as np

from ..queries import query_matrix
from ..uncertainty import intervals
from ..uncertainty.analytic import analytic, supports_analytic
from ..uncertainty.bootstrap import _boundary_hull, interval_from, resample_method
from ..uncertainty.calibrate import calibrated_topk
from ..uncertainty.topk import select_top, topk_interval
from ..uncertainty.queryspec import random_subsets
from .tasks import kind
from .tasks_wang import QUERY_METHODS, _params, _simulate, active_methods, dataset_of

__all__ = ["coverage", "coverage_table"]


def _bands(f: np.ndarray, sigma: float) -> dict[str, np.ndarray]:
    rank = np.empty(f.shape[0], dtype=np.int64)
    rank[np.argsort(-f, kind="stable")] = np.arange(f.shape[0])
    return {"top10": rank < 10, "10-100": (rank >= 10) & (rank < 100), "tail": rank >= 100,
            "ge5sigma": f >= 5 * sigma}


def _rows(method, how, level, lo, hi, truth, masks) -> list[dict]:
    hit = (lo <= truth) & (truth <= hi)
    out = []
    for band, m in masks.items():
        if m.any():
            out.append({"method": method, "metric": "coverage", "level": level, "band": band,
                        "value": float(hit[m].mean()), "count": int(m.sum()),
                        "width": float(np.mean(hi[m] - lo[m])), "interval": how})
    return out


def _topk_rows(method, level, point, world, boot, f, fixed, scale=None, cal=None, Sb=None) -> list[dict]:
    """Selection-aware top-10 rows (:mod:`ldpopt.uncertainty.topk`): ``topk-sel`` covers f_{S_i}
    (the value the estimate ranks i-th), ``topk-order`` the i-th largest true frequency,
    ``topk-hull`` f_{S_i} by the hull of ``topk-sel`` with the fixed-set interval ``fixed``;
    ``cal`` = (calibrated level, its fixed-set (lo, hi)): ``topk-cal``, the same hull with both
    parts at the calibrated level (:mod:`ldpopt.uncertainty.calibrate`)."""
    one = {"x": np.ones(10, bool)}
    S, _, _, lo, hi, _ = topk_interval(point, world, boot, 10, level, "basic", "selected", scale=scale, Sb=Sb)
    _, _, _, olo, ohi, _ = topk_interval(point, world, boot, 10, level, "basic", "order", scale=scale, Sb=Sb)
    how = "rank-conditional basic"
    rows = (_rows(method, how, level, lo, hi, f[S], {"topk-sel": one["x"]})
            + _rows(method, how, level, olo, ohi, np.sort(f)[::-1][:10], {"topk-order": one["x"]})
            + _rows(method, how, level, np.minimum(lo, fixed[0]), np.maximum(hi, fixed[1]), f[S],
                    {"topk-hull": one["x"]}))
    if cal is not None:
        _, _, _, clo, chi, _ = topk_interval(point, world, boot, 10, cal[0], "basic", "selected", scale=scale,
                                             Sb=Sb)
        rows += _rows(method, f"calibrated hull at {cal[0]:.4g}", level, np.minimum(clo, cal[1][0]),
                      np.maximum(chi, cal[1][1]), f[S], {"topk-cal": one["x"]})
    return rows


def _calibrated(level, world, boot, scale, Sb, **fixed):
    """The calibrated level of the top-10 hull (:func:`ldpopt.uncertainty.calibrate.calibrated_level`);
    ``Sb`` = ``select_top(boot, 10)``, computed once per method (the same for every level)."""
    bp = boot if scale is None else boot * scale[1][:, None]
    return calibrated_topk(world, bp, Sb, level, se=fixed.get("se"))[0]


def _hull(est, level, queries, world, lo, hi):
    lo, hi, _ = _boundary_hull(est, level, queries, world, lo, hi)
    return lo, hi


@kind("coverage")
def coverage(task) -> list[dict]:
    ds = dataset_of(task)
    rng = task.rng()
    est = _simulate(task, ds.counts, ds.d, rng)
    p = _params(task)
    levels = [float(x) for x in p.get("levels", [0.9, 0.95])]
    B = int(p.get("resamples", 200))
    f = ds.frequencies
    masks = _bands(f, est.sigma)
    U = query_matrix(random_subsets(rng, ds.d, int(p.get("subset_size", 10)), int(p.get("subsets", 50))), ds.d)
    f_sub = np.asarray(U @ f).ravel()
    rows = []
    for m in active_methods(task):
        if m in QUERY_METHODS:
            continue
        seed = int(rng.integers(2**63))
        if supports_analytic(est, m, U):
            tk_world, tk_boot = resample_method(est, m, B, seed)
            tk_sb = select_top(tk_boot, 10)
            for lv in levels:
                r = analytic(est, m, lv)
                rows += _rows(m, "normal", lv, r.lo, r.hi, f, masks)
                top = np.argsort(-r.values, kind="stable")[:10]
                rows += _rows(m, "normal", lv, r.lo[top], r.hi[top], f[top], {"topk-set": np.ones(10, bool)})
                cl = _calibrated(lv, tk_world, tk_boot, None, tk_sb, se=r.se)
                rc = analytic(est, m, cl)
                rows += _topk_rows(m, lv, r.values, tk_world, tk_boot, f, (r.lo[top], r.hi[top]),
                                   cal=(cl, (rc.lo[top], rc.hi[top])), Sb=tk_sb)
                rq = analytic(est, m, lv, queries=U)
                rows += _rows(m, "normal", lv, rq.lo, rq.hi, f_sub, {"subsets": np.ones(len(f_sub), bool)})
            continue
        r = intervals(est, m, levels[0], n_resamples=B, interval="basic", rng=seed)
        boot, world = r.bootstrap_distribution, r.extra["world"]
        # Norm-Mul: intervals on the rescaled output T·S (ldpopt.uncertainty.bootstrap, RATIO_PIVOT)
        scale = (r.extra["scale"], r.extra["scale_boot"]) if "scale" in r.extra else None
        tp, bp = (r.values, boot) if scale is None else (r.values * scale[0], boot * scale[1][:, None])
        bq, wq, tq = np.asarray((U @ bp.T).T), np.asarray(U @ world).ravel(), np.asarray(U @ tp).ravel()
        top = np.argsort(-r.values, kind="stable")[:10]
        sb = select_top(boot, 10)
        for lv in levels:
            _, _, lo, hi = interval_from(tp, world, bp, lv, "basic")
            if r.extra["boundary"].any():
                lo, hi = _hull(est, lv, None, world, lo, hi)
            rows += _rows(m, "basic", lv, lo, hi, f, masks)
            rows += _rows(m, "basic", lv, lo[top], hi[top], f[top], {"topk-set": np.ones(10, bool)})
            cl = _calibrated(lv, world, boot, scale, sb, dev_fixed=True)
            # the calibrated fixed-set part at the top 10 only (per value: the same floats as over all d)
            _, _, clo, chi = interval_from(tp[top], world[top], bp[:, top], cl, "basic")
            if r.extra["boundary"].any():
                clo, chi, _ = _boundary_hull(est, cl, None, world[top], clo, chi, index=top)
            rows += _topk_rows(m, lv, r.values, world, boot, f, (lo[top], hi[top]), scale=scale,
                               cal=(cl, (clo, chi)), Sb=sb)
            _, _, qlo, qhi = interval_from(tq, wq, bq, lv, "basic")
            qlo, qhi = _hull(est, lv, U, wq, qlo, qhi)
            rows += _rows(m, "basic", lv, qlo, qhi, f_sub, {"subsets": np.ones(len(f_sub), bool)})
    return rows


def coverage_table(table, by=("method",)):
    """Pooled coverage: Σ value·count / Σ count per ``by`` × band × level (a wide DataFrame, one
    column per (level, band))."""
    t = table.assign(hits=table["value"] * table["count"], pooled="all")
    by = tuple(by) or ("pooled",)
    g = t.groupby([*by, "level", "band"])[["hits", "count"]].sum()
    return (g["hits"] / g["count"]).unstack(["level", "band"]).sort_index(axis=1)
