"""Parametric bootstrap intervals for any registered method (NDSS 2020 §V-D's simulation, reused).

Notes: docs/notes/uncertainty.md, "ldpopt.uncertainty.bootstrap"."""

from __future__ import annotations

import numpy as np
from scipy.stats import norm as _normal

from .. import methods as _methods
from .._validation import as_generator
from ..estimate import Estimate
from ..methods.normalize import positive_mass
from .fit import plausible_truth, population
from .resample import apply_batch, draw_counts, oracle_of
from .result import Uncertainty

__all__ = ["INTERVALS", "bootstrap", "boundary_hull", "interval_from", "limits", "positive_mass", "ratio_pivot",
           "resample_method"]

INTERVALS = ("basic", "percentile", "normal")


def __getattr__(name: str):
    """``RATIO_PIVOT`` of earlier releases: the methods declaring a ``pivot_scale`` (the registry)."""
    if name == "RATIO_PIVOT":
        return tuple(m for m in _methods.names() if _methods.get(m).pivot_scale is not None)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

# entries the fit puts within this many Base standard errors of 0 get Base's interval (module
# docstring, "Where the method's interval is not trusted")
FALLBACK_SE = 5.0


def ratio_pivot(method, f_tilde, F, T, boot):
    """(scale, T·S, T*·S*) for a method whose interval pivots on its rescaled output (Norm-Mul:
    module notes; S = :func:`~ldpopt.methods.normalize.positive_mass` of f̃, S* of each
    re-drawn F*), (None, T, T*) for any other."""
    pivot = _methods.resolve(method).pivot_scale
    if pivot is None:
        return None, T, boot
    scale = (pivot(f_tilde), pivot(F))
    return scale, T * scale[0], boot * scale[1][:, None]


def resample_method(estimate: Estimate, method: str | _methods.MethodInfo, n_resamples: int, rng, params=None,
                    truth_counts=None, raw: bool = False, progress=None):
    """(f_world (d,), T* (B, d)): the bootstrap world's truth and the method on B re-drawn estimates
    (``raw``: also the re-drawn raw estimates F* (B, d), as a third item; ``progress``: see
    :func:`.resample.apply_batch`)."""
    gen = as_generator(rng)
    if truth_counts is None:
        truth_counts = population(plausible_truth(estimate), estimate.n)
    oracle = oracle_of(estimate)
    C = draw_counts(oracle, truth_counts, n_resamples, gen)
    n, p, q = estimate.n, estimate.p, estimate.q
    F = (C / n - q) / (p - q)
    T = apply_batch(estimate, method, F, counts=C, progress=progress, **(params or {}))
    if raw:
        return truth_counts / truth_counts.sum(), T, F
    return truth_counts / truth_counts.sum(), T


def interval_from(point, world, boot, level: float, interval: str, bounds=(0.0, 1.0)):
    """(se, bias, lo, hi) from the observed ``point`` (m,), the world's truth (m,) and ``boot`` (B, m)."""
    if interval not in INTERVALS:
        raise ValueError(f"interval must be one of {INTERVALS}, got {interval!r}")
    se = boot.std(axis=0, ddof=1)
    bias = boot.mean(axis=0) - world
    lo, hi = limits(point, boot, boot - world, se, bias, level, interval, bounds)
    return se, bias, lo, hi


def limits(point, draws, dev, se, bias, level: float, interval: str, bounds=(0.0, 1.0)):
    """(lo, hi) of the ``interval`` construction at ``level`` from the resampled values ``draws``
    (B, m), their pivots ``dev`` (B, m: draw minus the world's value it estimates), ``se`` and
    ``bias`` (m,); clipped to ``bounds`` (None: not clipped). Shared by the fixed-set intervals
    above and the selection-aware top-k ones (:mod:`.topk`), whose pivots differ."""
    alpha = 1.0 - level
    if interval == "basic":
        lo = point - np.quantile(dev, 1 - alpha / 2, axis=0)
        hi = point - np.quantile(dev, alpha / 2, axis=0)
    elif interval == "percentile":
        lo, hi = np.quantile(draws, [alpha / 2, 1 - alpha / 2], axis=0)
    else:
        z = _normal.ppf(1 - alpha / 2)
        lo, hi = point - bias - z * se, point - bias + z * se
    if bounds is not None:
        lo, hi = np.clip(lo, *bounds), np.clip(hi, *bounds)
    return lo, hi


def check_level(level) -> float:
    """``level`` as a float strictly between 0 and 1, else a one-line ValueError naming it."""
    lv = float(level)
    if not 0.0 < lv < 1.0:
        raise ValueError(f"level must lie strictly between 0 and 1, got {level!r}")
    return lv


def check_resamples(b) -> int:
    """``b`` as an int >= 10 (``n_resamples``), else a one-line ValueError naming it."""
    if isinstance(b, bool) or int(b) != b or int(b) < 10:
        raise ValueError(f"n_resamples must be an integer >= 10, got {b!r}")
    return int(b)


def bootstrap(estimate: Estimate, method: str | _methods.MethodInfo, level: float = 0.95, *, queries=None,
              labels=None, n_resamples: int = 200, interval: str = "basic", rng=0, params=None,
              point=None, boundary: str | None = "base", progress=None) -> Uncertainty:
    """Parametric-bootstrap SE, bias and interval of ``method`` on ``estimate`` (module notes).

    ``queries`` (anything :func:`ldpopt.queries.query_matrix` accepts) turns the per-value result
    into per-query answers; ``point`` overrides the observed output (else the method is run once);
    ``boundary`` ("base" or None): Base's interval at the flagged entries (module notes);
    ``progress``: called with 1 per resample of a method that runs row by row (a bar's ``update``).

    Parameters
    ----------
    estimate : Estimate
    method : str or MethodInfo
        What :func:`ldpopt.methods.resolve` accepts.
    level : float, default 0.95
        Nominal coverage in (0, 1).
    queries : optional
        Subsets; None: per value.
    labels : list, optional
        Names of the entries.
    n_resamples : int, default 200
        Resamples, >= 10.
    interval : {"basic", "percentile", "normal"}, default "basic"
    rng : int, Generator or "secure", default 0
    params : dict, optional
        Keyword parameters of the method.
    point : array_like, optional
        The observed output (default: the method run on ``estimate``).
    boundary : {"base", None}, default "base"
    progress : callable, optional

    Returns
    -------
    Uncertainty
        With ``bootstrap_distribution`` (B, m).

    Raises
    ------
    ValueError
        If ``level``, ``n_resamples``, ``interval`` or ``boundary`` is out of range, or the method is
        unknown.

    Examples
    --------
    >>> import numpy as np
    >>> import ldpopt
    >>> est = ldpopt.oracles.get("oue", 1.0, 6).simulate(np.array([400, 250, 150, 100, 60, 40]) * 10, rng=0)
    >>> r = ldpopt.uncertainty.bootstrap(est, "norm-sub", n_resamples=50, rng=0)
    >>> r.bootstrap_distribution.shape, r.interval
    ((50, 6), 'basic')
    >>> r.lo.round(2), r.hi.round(2)
    (array([0.39, 0.22, 0.11, 0.06, 0.03, 0.02]), array([0.48, 0.3 , 0.19, 0.13, 0.11, 0.1 ]))
    """
    if boundary not in ("base", None):
        raise ValueError(f"boundary must be 'base' or None, got {boundary!r}")
    level = check_level(level)
    B = check_resamples(n_resamples)
    info = _methods.resolve(method)
    name = info.name
    params = dict(params or {})
    world, boot, F = resample_method(estimate, info, B, rng, params, raw=True, progress=progress)
    T = _methods.postprocess(estimate, info, **params) if point is None else np.asarray(point, dtype=np.float64)
    scale, Tp, bootp = ratio_pivot(info, estimate.f_tilde, F, T, boot)  # the pivot T·S − f (Norm-Mul)
    if queries is not None:
        from ..queries import query_matrix

        U = query_matrix(queries, estimate.d)
        T, world, boot = U @ T, U @ world, np.asarray((U @ boot.T).T)
        Tp, bootp = (T, boot) if scale is None else (U @ Tp, np.asarray((U @ bootp.T).T))
    se, bias, lo, hi = interval_from(Tp, world, bootp, level, interval)
    if scale is not None:  # se and bias describe T itself, the interval the rescaled pivot
        se, bias = boot.std(axis=0, ddof=1), boot.mean(axis=0) - world
    at0 = np.zeros(np.shape(T), dtype=bool)
    if boundary == "base" and not info.analytic:  # Base and Norm are linear, unbiased: no clipping at 0
        base_boot = None if queries is None else np.asarray((U @ F.T).T)
        lo, hi, at0 = boundary_hull(estimate, level, queries, world, lo, hi, base_boot=base_boot)
    how = (f"parametric bootstrap: {B} resamples of the {estimate.oracle} counts (joint-exact fast path) "
           f"from the Norm-Sub fit of the estimate; {interval} interval"
           + (" of the rescaled output T·S (S = Σ max(f̃, 0), so T·S = max(f̃, 0))" if scale else "")
           + ", clipped to [0, 1]"
           + (f"; Base's analytic interval at the {int(at0.sum())} flagged entries (fit within "
              f"{FALLBACK_SE:g} se of 0, or the interval excludes Base's point), hulled with it elsewhere"
              if boundary == "base" and not info.analytic else ""))
    extra_scale = {} if scale is None else {"scale": float(scale[0]), "scale_boot": scale[1]}
    return Uncertainty(values=np.asarray(T, dtype=np.float64), se=se, bias=bias, lo=lo, hi=hi,
                       level=level, method=name, interval=interval, how=how, labels=labels,
                       bootstrap_distribution=boot, extra={"world": np.asarray(world, dtype=np.float64),
                                                          "fallback": at0,
                                                          "excludes_point": (T < lo) | (T > hi),
                                                          **extra_scale})


def boundary_hull(estimate, level, queries, world, lo, hi, index=None, base_boot=None):
    """The Base fallback (module notes, "Where the method's interval is not trusted"): per entry,
    Base's analytic normal interval clipped to [0, 1] where the entry is flagged, else the hull of
    [lo, hi] with it; returns (lo, hi, flag). Flagged: the fit puts the entry within FALLBACK_SE
    Base standard errors of 0, or [lo, hi] excludes Base's own point (the method's bias measured in
    the world disagrees with the data). ``index``: world, lo and hi are those values' entries only
    (per value, the same floats as over all d, then indexed). ``base_boot`` (B, m): Base's answers on
    the resamples, for queries whose Base law is not analytic (HR subset sums; module notes)."""
    from .analytic import analytic, supports_analytic

    world = np.asarray(world, dtype=np.float64)
    if supports_analytic(estimate, "base", queries):
        b = analytic(estimate, "base", level, queries=queries)
        blo, bhi, bpt, bse = b.lo, b.hi, b.values, b.se
    elif base_boot is not None:
        from ..queries import query_matrix

        bpt = np.asarray(query_matrix(queries, estimate.d) @ np.asarray(estimate.f_tilde, dtype=np.float64)).ravel()
        bse = np.asarray(base_boot, dtype=np.float64).std(axis=0, ddof=1)
        z = _normal.ppf(0.5 + level / 2)
        blo, bhi = bpt - z * bse, bpt + z * bse
    else:
        raise ValueError("base_boot: Base's resampled answers are needed where Base's law is not analytic")
    blo, bhi = np.clip(blo, 0.0, 1.0), np.clip(bhi, 0.0, 1.0)
    if index is not None:
        blo, bhi, bpt, bse = blo[index], bhi[index], bpt[index], bse[index]
    flag = (world < FALLBACK_SE * bse) | (bpt < lo) | (bpt > hi)
    return (np.where(flag, blo, np.minimum(lo, blo)), np.where(flag, bhi, np.maximum(hi, bhi)), flag)
