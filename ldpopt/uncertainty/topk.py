"""Selection-aware intervals for the frequencies of a top-k set chosen from the data.

Notes: docs/notes/uncertainty.md, "ldpopt.uncertainty.topk"."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .selective import select_top, selective_topk

if TYPE_CHECKING:
    from ..methods import MethodInfo

__all__ = ["SELECTIONS", "TARGETS", "select_top", "topk_interval", "topk_query"]

TARGETS = ("selected", "order")
SELECTIONS = ("auto", "conditional", "hull", "calibrated", "rank", "none")


def topk_interval(point: np.ndarray, world: np.ndarray, boot: np.ndarray, k: int, level: float,
                  interval: str = "basic", target: str = "selected", bounds=(0.0, 1.0), scale=None, Sb=None):
    """Selection-aware (S, se, bias, lo, hi, boot_sel) for the top-``k`` of ``point`` (d,).

    ``world`` (d,) is the bootstrap world's truth f̂ and ``boot`` (B, d) the method's outputs in it;
    ``boot_sel`` (B, k) are the resampled values the pivot used (each resample's own top k).
    ``scale`` = (S, S* (B,)): the pivot is built on point·S and boot·S* (Norm-Mul's ratio pivot,
    :mod:`.bootstrap`; a positive factor per row leaves every selection unchanged); ``se`` and
    ``bias`` stay on the method's own scale. ``Sb`` (B, k): ``select_top(boot, k)`` when the caller
    already has it (one argpartition over the (B, d) batch saved per call).
    """
    from .bootstrap import INTERVALS, limits

    if interval not in INTERVALS:
        raise ValueError(f"interval must be one of {INTERVALS}, got {interval!r}")
    if target not in TARGETS:
        raise ValueError(f"target must be one of {TARGETS}, got {target!r}")
    point, world, boot = (np.asarray(a, dtype=np.float64) for a in (point, world, boot))
    S = select_top(point, k)
    Sb = select_top(boot, k) if Sb is None else np.asarray(Sb)
    sel = np.take_along_axis(boot, Sb, axis=1)
    if target == "selected":
        dev = sel - world[Sb]
    else:
        dev = sel - np.sort(world)[::-1][:k]
    se = sel.std(axis=0, ddof=1)
    bias = dev.mean(axis=0)
    if scale is None:
        lo, hi = limits(point[S], sel, dev, se, bias, level, interval, bounds)
    else:
        s, sb = scale[0], np.asarray(scale[1], dtype=np.float64)[:, None]
        psel = sel * sb
        pdev = psel - (world[Sb] if target == "selected" else np.sort(world)[::-1][:k])
        lo, hi = limits(point[S] * s, psel, pdev, psel.std(axis=0, ddof=1), pdev.mean(axis=0), level,
                        interval, bounds)
    return S, se, bias, lo, hi, sel


def topk_query(est, name: str | MethodInfo, level: float, k: int, *, n_resamples: int = 200, interval=None, rng=0,
               params=None, target: str = "selected", selection: str = "auto"):
    """:class:`~.result.Uncertainty` of the top-``k`` values of ``name`` on ``est`` (module
    docstring); ``interval`` None means "basic" for the bootstrap parts and Base/Norm's analytic
    interval for their fixed-set part. ``selection="auto"``: "conditional" (:mod:`.selective`)
    when ``interval`` is None, else "hull" (module notes)."""
    from .. import methods as _methods
    from .._validation import as_generator
    from .analytic import analytic, supports_analytic
    from .bootstrap import boundary_hull, check_level, check_resamples, interval_from, ratio_pivot, resample_method
    from .calibrate import calibrated_topk
    from .result import Uncertainty

    if selection not in SELECTIONS:
        raise ValueError(f"selection must be one of {SELECTIONS}, got {selection!r}")
    info = _methods.resolve(name)
    name = info.name
    construction = interval or "basic"
    if selection == "auto":
        selection = "conditional" if interval is None else "hull"
    if selection == "conditional":
        return _conditional_query(est, info, level, k, params, target)
    if target == "order" and selection != "rank":
        raise ValueError("target='order' needs selection='rank' (the fixed-set interval covers the "
                         "selected values, not the order statistics)")
    level, B = check_level(level), check_resamples(n_resamples)
    if selection == "calibrated" and construction != "basic":
        raise ValueError("selection='calibrated' calibrates the basic interval; interval must be None or "
                         f"'basic', got {interval!r}")
    params = dict(params or {})
    world, boot, F = resample_method(est, info, B, as_generator(rng), params, raw=True)
    T = _methods.postprocess(est, info, **params)
    scale, Tp, bootp = ratio_pivot(info, est.f_tilde, F, T, boot)
    analytic_fixed = interval is None and info.analytic and supports_analytic(est, name)
    used, extra, Sb = level, {}, select_top(boot, k)
    if selection == "calibrated":
        used, world_cov = calibrated_topk(world, bootp, Sb, level,
                                          se=analytic(est, name, level).se if analytic_fixed else None)
        extra = {"calibrated_level": used, "world_coverage": world_cov}
    S, se, bias, lo, hi, sel = topk_interval(T, world, boot, k, used, construction, target, scale=scale, Sb=Sb)
    parts = []
    if selection != "rank":  # the fixed-set interval at the selected values
        if analytic_fixed:
            a = analytic(est, name, used)
            flo, fhi, fixed = a.lo[S], a.hi[S], "analytic normal"
            fse, fbias = a.se[S], a.bias[S]
        else:
            # per value: the selected columns only (the same floats as over all d, then indexed)
            _, _, flo, fhi = interval_from(Tp[S], world[S], bootp[:, S], used, construction)
            if construction == "basic" and not info.analytic:  # linear, unbiased: no clipping at 0
                flo, fhi, _ = boundary_hull(est, used, None, world[S], flo, fhi, index=S)
            fixed = f"fixed-set {construction}"
            fse, fbias = boot[:, S].std(axis=0, ddof=1), boot[:, S].mean(axis=0) - world[S]
        if selection == "none":
            lo, hi, se, bias = flo, fhi, fse, fbias
            parts.append(f"{fixed} interval of the selected values (the selection is ignored)")
        else:
            lo, hi = np.minimum(lo, flo), np.maximum(hi, fhi)
            cal = (f", both at the calibrated level {used:.4g} (where the hull's coverage in the bootstrap world "
                   f"reaches {level:.4g})") if selection == "calibrated" else ""
            parts.append(f"hull of the rank-conditional {construction} interval (Morrison & Simon 2018) with the "
                         f"{fixed} interval{cal}")
    else:
        parts.append(f"rank-conditional {construction} interval (Morrison & Simon 2018)")
    if scale is not None:
        parts.append("pivots on the rescaled output T·S (S = Σ max(f̃, 0))")
    what = "the selected value's" if target == "selected" else "the i-th largest"
    how = (f"top-{k}, selection-aware: {B} parametric-bootstrap resamples of the {est.oracle} counts from the "
           f"Norm-Sub fit, the set re-selected in each; {'; '.join(parts)}, for {what} true frequency, "
           "clipped to [0, 1]")
    return Uncertainty(values=T[S], se=se, bias=bias, lo=lo, hi=hi, level=level, method=name,
                       interval=construction, how=how, labels=[int(i) for i in S], bootstrap_distribution=sel,
                       extra={"world": world[S], "set": S, "target": target, "selection": selection,
                              "excludes_point": (T[S] < lo) | (T[S] > hi), **extra})


def _conditional_query(est, name, level, k, params, target):
    """The rank-conditional selective interval (:mod:`.selective`) as an :class:`~.result.Uncertainty`."""
    from .. import methods as _methods
    from .analytic import analytic
    from .bootstrap import check_level
    from .result import Uncertainty
    
    if target != "selected":
        raise ValueError("target='order' needs selection='rank' (the conditional interval covers the "
                         "selected values, not the order statistics)")
    level = check_level(level)
    info = _methods.resolve(name)
    name = info.name
    T = _methods.postprocess(est, info, **dict(params or {}))
    S = select_top(T, k)
    lo, hi, flag = selective_topk(est, S, level)
    se = analytic(est, "base", level).se[S]
    how = (f"top-{k}, selection-aware: interval conditional on the rank event (the {est.oracle} estimate f̃ of "
           f"each selected value truncated to its neighbours' estimates; Lee et al. 2016), inverted at level "
           f"{level:g} for the selected value's true frequency; se is Base's"
           + (f"; {int(flag.sum())} entries the method ranks unlike f̃ get the score interval at level "
              f"1 − α/d (flagged)" if flag.any() else ""))
    return Uncertainty(values=T[S], se=se, bias=np.full(k, np.nan), lo=lo, hi=hi, level=level, method=name,
                       interval="conditional", how=how, labels=[int(i) for i in S],
                       extra={"set": S, "target": target, "selection": "conditional", "fallback": flag,
                              "excludes_point": (T[S] < lo) | (T[S] > hi)})
