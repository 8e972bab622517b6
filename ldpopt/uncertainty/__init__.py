"""Standard errors, bias estimates and confidence intervals for every post-processed estimate.

>>> import ldpopt
>>> r = ldpopt.uncertainty.intervals(est, "norm-sub", level=0.95)      # doctest: +SKIP
>>> r.confidence_interval.low, r.standard_error, r.how                 # doctest: +SKIP

Base and Norm get exact analytic standard errors (:mod:`.analytic`: Eq. 2 and the oracle's count
covariance); every other method a parametric bootstrap on the joint-exact fast path
(:mod:`.bootstrap`, basic interval). The query kinds of :mod:`.queryspec` give intervals for
subset sums, the frequencies of a data-chosen top-k set (selection-aware: the set is re-selected
in every resample, :mod:`.topk`) and the heavy-hitter set (with the bootstrap probability of each
member being above the threshold).
"""

from __future__ import annotations

import warnings

import numpy as np

from .. import _deprecated
from .. import methods as _methods
from .._validation import as_generator
from ..estimate import check_estimate
from . import cells
from .analytic import analytic, supports_analytic
from .bootstrap import bootstrap
from .queryspec import Query, parse_query, random_subsets
from .result import ConfidenceInterval, Uncertainty
from .topk import topk_query

__all__ = [
    "ConfidenceInterval",
    "FallbackWarning",
    "Query",
    "Uncertainty",
    "analytic",
    "bootstrap",
    "cells",
    "intervals",
    "parse_query",
]


_PER_VALUE = ("world", "fallback", "excludes_point")


def _restrict(res: Uncertainty, idx: np.ndarray, **extra) -> Uncertainty:
    boot = None if res.bootstrap_distribution is None else res.bootstrap_distribution[:, idx]
    return Uncertainty(values=res.values[idx], se=res.se[idx], bias=res.bias[idx], lo=res.lo[idx],
                       hi=res.hi[idx], level=res.level, method=res.method, interval=res.interval,
                       how=res.how, labels=[int(i) for i in idx], bootstrap_distribution=boot,
                       extra={**{k: (v[idx] if k in _PER_VALUE else v) for k, v in res.extra.items()}, **extra})


def _warn_fallback(res: Uncertainty) -> Uncertainty:
    """One warning per call naming how many entries got Base's interval (:attr:`Uncertainty.fallback`)."""
    k = int(res.fallback.sum())
    if k:
        why = ("the method ranks them unlike the raw estimate; their intervals are Base's score intervals "
               "at level 1 - (1 - level)/d" if res.interval == "conditional" else
               "the method's estimate is pinned at 0 or biased by its clipping there; their intervals are "
               "Base's analytic ones")
        warnings.warn(f"{res.method}: {k} of {res.fallback.size} entries are flagged ({why}; "
                      f"Uncertainty.fallback marks them)", FallbackWarning, stacklevel=3)
    return res


class FallbackWarning(UserWarning):
    """Some intervals are Base's instead of the method's own (:attr:`Uncertainty.fallback`).

    Examples
    --------
    >>> from ldpopt.uncertainty import FallbackWarning
    >>> issubclass(FallbackWarning, UserWarning)
    True
    """


def intervals(estimate, method: str = "norm-sub", level: float = 0.95, *, query=None,
              n_resamples: int = 200, interval: str | None = None, rng=0, params=None,
              target: str = "selected", selection: str = "auto", progress=None) -> Uncertainty:
    """SE, bias and a confidence interval for ``method`` on ``estimate`` and the user's ``query``.

    Parameters
    ----------
    estimate : Estimate
    method : str, MethodInfo or callable
        A registered method's name, a record, a plain callable ``f(estimate)`` or ``"FILE.py:NAME"``
        (:func:`ldpopt.methods.resolve`).
    level : float
        Nominal coverage in (0, 1).
    query : None, str or subsets
        None/"full": every value; "topk:K": the K largest values of the method's output, with
        selection-aware intervals (:mod:`.selective` by default, :mod:`.topk` for the bootstrap
        variants; for every method, Base and Norm included); "hh:PHI": the values the
        method puts at ≥ PHI, with ``extra["membership"]`` = bootstrap Pr[T*_v ≥ PHI];
        "subsets:SIZE:COUNT" random subsets (seeded by ``rng``); or given subsets (sums).
    interval : None or one of "basic", "percentile", "normal"
        None: analytic for Base/Norm where available, else "basic" (see :mod:`.bootstrap`).
        Giving one forces the bootstrap, also for Base and Norm.
    rng : int, Generator or "secure"
        Seed of the resampling and of random subsets (default 0: same call, same numbers).
    target : "selected" or "order" (top-k only)
        What the top-k intervals cover: the true frequency of the value the estimate ranks i-th
        (default, what a reported (value, frequency) pair claims) or the i-th largest true
        frequency (:mod:`.topk`; measured to under-cover, offered for comparison).
    selection : "auto" (default), "conditional", "calibrated", "hull", "rank" or "none" (top-k only)
        "conditional": the interval conditional on the rank event (:mod:`.selective`, no bootstrap);
        "rank": the rank-conditional bootstrap interval; "hull": its hull with the fixed-set interval;
        "calibrated": the hull with both parts at the level whose hull covers the nominal level
        in the bootstrap world (:mod:`.calibrate`; measured below nominal on heavy tails);
        "auto": "conditional" for every method ("hull" when ``interval`` is given); "none": the fixed-set
        interval alone (ignores the selection; for comparison). See :mod:`.topk`.
    progress : None or callable
        Called with 1 after each resample of a method that runs resample by resample (Power, EM,
        MLE-Apx, ...; the batched closed forms do not call it): a progress bar's ``update``.
    n_resamples : int, default 200
        Bootstrap resamples (>= 10).
    params : dict, optional
        Keyword parameters of the method.

    Returns
    -------
    Uncertainty
        Per value, per subset, or per selected value (top-k, heavy hitters: ``labels`` says which);
        :class:`FallbackWarning` when some entries got Base's interval.

    Raises
    ------
    ValueError
        If ``level`` is not in (0, 1), the query is malformed or asks for more values than d,
        ``interval``/``selection``/``target`` is not an accepted value, ``n_resamples`` < 10, or the
        method is unknown.
    TypeError
        If ``estimate`` is not an :class:`~ldpopt.Estimate`.

    Examples
    --------
    >>> import numpy as np
    >>> import ldpopt
    >>> est = ldpopt.oracles.get("oue", 1.0, 6).simulate(np.array([400, 250, 150, 100, 60, 40]) * 50, rng=0)
    >>> r = ldpopt.uncertainty.intervals(est, "norm", level=0.9)
    >>> r.values.round(3)
    array([0.413, 0.244, 0.144, 0.097, 0.061, 0.04 ])
    >>> r.confidence_interval.low.round(3), r.confidence_interval.high.round(3)
    (array([0.4  , 0.231, 0.131, 0.084, 0.048, 0.027]), array([0.427, 0.258, 0.157, 0.111, 0.074, 0.053]))
    """
    est = check_estimate(estimate)
    info = _methods.resolve(method)
    name = info.name
    q = parse_query(query)
    gen = as_generator(rng)
    subsets = None
    if q.kind == "given":
        subsets = q.subsets
    elif q.kind == "subsets":
        subsets = random_subsets(gen, est.d, q.size, q.count)
    if q.kind == "topk":
        if q.k > est.d:
            raise ValueError(f"query topk:{q.k}: K must be <= d = {est.d}")
        return _warn_fallback(topk_query(est, info, level, q.k, n_resamples=n_resamples, interval=interval,
                                         rng=gen, params=params, target=target, selection=selection))
    use_analytic = interval is None and info.analytic and supports_analytic(est, name, subsets)
    if use_analytic:
        res = analytic(est, name, level, queries=subsets)
    else:
        res = bootstrap(est, info, level, queries=subsets, n_resamples=n_resamples,
                        interval=interval or "basic", rng=gen, params=params, progress=progress)
    _warn_fallback(res)
    if q.kind == "full":  # one value per cell: the result answers .cells()
        return cells.with_cells(res, est)
    if q.kind == "hh":
        hh = np.flatnonzero(res.values >= q.threshold)
        boot = res.bootstrap_distribution
        if boot is None:  # analytic: Pr[value ≥ φ] under the normal law at the point
            from scipy.stats import norm as _n

            memb = _n.sf((q.threshold - res.values[hh]) / np.maximum(res.se[hh], 1e-300))
        else:
            memb = (boot[:, hh] >= q.threshold).mean(axis=0)
        return _restrict(res, hh, set=hh, membership=memb)
    return res

# the names this package exported before it was cut to what a user calls: one release, with a DeprecationWarning
__getattr__ = _deprecated.unexported(__name__, {
    "INTERVALS": "ldpopt.uncertainty.bootstrap",
})
