"""Parametric bootstrap intervals for any registered method (NDSS 2020 §V-D's simulation, reused).

The world: the plausible truth f̂ = Norm-Sub(f̃) (:mod:`.fit`), as an integer population of the
same n; B count vectors are re-drawn from the oracle's joint-exact law (:func:`.resample.draw_counts`)
and the method re-applied (:func:`.resample.apply_batch`). With T the method's output on the real
data and T*_b its outputs in the bootstrap world, whose truth is f̂:

* ``se`` = sd(T*), ``bias`` = mean(T*) − f̂ (the method's bias at f̂);
* ``"basic"`` (default for every method that is not analytic): the pivot T − f is assumed to have
  the law of T* − f̂, so [T − Q(1 − α/2), T − Q(α/2)] with Q the quantiles of T* − f̂. It corrects
  the bias of the clipped methods (Base-Pos/Base-Cut/Norm-Sub/… are biased up near f = 0: NDSS
  Lemma 1 for Base-Pos, the cut/shift keeps only the estimates that landed high), which the
  percentile interval would carry along;
* ``"percentile"``: [Q*(α/2), Q*(1 − α/2)] of T* itself — right when T*'s spread is centred where
  T is (no bias), offered for comparison;
* ``"normal"``: T − bias ± z·se (bias-corrected normal).

Not offered, and why: *studentised* intervals need a standard error inside every resample (a
double bootstrap, B² method calls); *BC/BCa* need z₀ = Φ⁻¹(Pr*[T* < f̂]), undefined where the
clipped methods put a point mass at 0 (the small values where intervals matter most). Every bootstrap interval
is intersected with [0, 1] for per-value answers and subset sums (the truth lies there).

**The interval may exclude its own point** (*decision*). The basic interval is T minus the
quantiles of the bootstrap error, so it lies wholly below T when the bias measured in the world
exceeds the error's spread: e.g. Norm-Sub's sum over the 500 smallest values of Zipf(1.5), d =
1,000, OUE ε = 1, n = 10⁵: T ≈ 0.09–0.15 for a truth of 0.010, and the 90 % interval excludes T in
26 of 30 runs. That is the construction working as designed (T is biased up; the interval is for
f, not for E[T]), so ldpopt keeps it and flags those entries in ``extra["excludes_point"]``. The
constructions that cannot exclude T were measured no better there: the hull of the interval with
T covered the truth in 6 of 30 runs, exactly as the basic interval (T lies on the wrong side of
both), and the percentile interval is centred near T + bias, further off. What fails there is
the pivot assumption (the bias at the Norm-Sub world, whose tail holds the estimate's 0.09, is not
the bias at the truth, 0.010). That is the raw interval (``boundary=None``); by default such an
entry is flagged when its interval also excludes Base's point, and gets Base's interval (below).

**Where the method's interval is not trusted: Base's interval, flagged** (``boundary="base"``, the
default; ``boundary=None`` keeps the raw basic interval). The basic interval assumes the pivot
T − f has the law of T* − f̂. Near the clipping floor it does not: Norm-Sub subtracts a common
shift δ and truncates at 0, and the world's shift δ* (its tail zeroed by the fit) is not the data's
δ, so just above the floor the point is biased low by an amount the bootstrap world cannot see.
Measured on a Zipf(1.1) truth, d = 20,000, n = 10⁶, OUE ε = 1, 90 %: the raw basic interval covered
65 % of the values with f ∈ [σ, 2σ) and 47 % in [2σ, 5σ) (σ of Eq. 7), and 16–21 % of 10-value
subset sums; Base's interval covered 88.8–94.1 % in every band. *Test inversion* gives the same
answer: Norm-Sub, Base-Pos and Base-Cut are monotone maps of f̃_v given data-wide constants (δ, the
cut), so the set of f_v whose law makes the observed output plausible is Base's interval wherever
the output is above the floor, and [0, ·] below it — a post-processed point carries no more
information about one f_v than f̃_v does. Hence (*decision*, chosen by measurement over the raw
basic interval, the hull with Base everywhere, and this hybrid at flag thresholds 2, 5, 10 se —
``docs/uncertainty.md``): an entry (value or subset sum) is **flagged** where the fit puts it within
``FALLBACK_SE`` = 5 Base standard errors of 0 (the method's output there is pinned at 0 or shifted
by the clipping), or where the basic interval excludes Base's own point (the bias measured in the
world contradicts the data: head-value sums under Norm-Sub). A flagged entry gets **Base's analytic
normal interval clipped to [0, 1]** (valid for the same f whatever the method), every other entry
the hull of the basic interval with it, so no entry covers less than Base's interval does.
``extra["fallback"]`` marks the flagged entries (:attr:`.Uncertainty.fallback`). HR's subset sums
have no analytic Base law (:mod:`.analytic`: the pair covariances depend on the Hadamard rows), so
there Base's interval is the normal one Base's answer ± z·sd of Base's answers over the same
resamples (the exact covariance at the world's truth, by simulation; *choice*), clipped to [0, 1],
and the same flag rule applies.

**Norm-Mul: the ratio pivot** (*choice*). Norm-Mul outputs T = max(f̃, 0)/S with S = Σ max(f̃, 0)
(arXiv §3.3), so on the large values it is f̃ shrunk by 1/S, and S is set by the whole noisy tail
(≈ 1 + d·σ/√(2π) on a sparse truth). The Norm-Sub world zeroes its own tail differently from the
truth, so its S* is not the data's S, the bias T* − f̂ is not the bias T − f, and the plain basic
interval under-covered on the values ≥ 5σ (80.6 % at nominal 90 %, pooled, ``docs/uncertainty.md``).
The interval is therefore built on the pivot T·S − f instead (S from the data, S*_b from each
resample's raw estimate): T·S = max(f̃, 0) exactly, whose law at f is the same in the world and
the truth for every value whose f̃ stays positive (≥ 5σ), so the basic interval of T·S covers at
nominal there. The interval is one for f, not centred on T: where S > 1 it lies above T on the
large values (``extra["excludes_point"]`` flags them), because Norm-Mul's output is biased down by
1/S there. ``se`` and ``bias`` stay those of T itself; ``extra["scale"]`` is S and
``extra["scale_boot"]`` the S*_b. Not built (not measured): a world whose positive tail mass
matches S — it needs a second fit of how the world spreads its small values, which the data
barely identify, while the ratio pivot needs none. Every other method keeps the plain pivot.

Paper-level theory for the clipped methods near zero: for f_v = 0, Base-Pos has E[f'_v] =
σ_v/√(2π) > 0 (NDSS Lemma 1); Base-Cut keeps only f̃_v ≥ T, so E[f'_v] = σ φ(T/σ) > 0; Norm-Sub
subtracts a common τ then clips, positive bias at zero and negative bias on the large values (NDSS
§IV-C). The pivot T − f therefore depends on f (it is a point mass for f = 0 when T = 0), so the
basic interval is exact only for values well above the clipping region (≥ 5σ, where the method is
≈ linear); tests/test_uncertainty_bootstrap.py checks the bias sign and the coverage table reports
the rest honestly.
"""

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
    module docstring; S = :func:`~ldpopt.methods.normalize.positive_mass` of f̃, S* of each
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


def _check_level(level) -> float:
    lv = float(level)
    if not 0.0 < lv < 1.0:
        raise ValueError(f"level must lie strictly between 0 and 1, got {level!r}")
    return lv


def _check_resamples(b) -> int:
    if isinstance(b, bool) or int(b) != b or int(b) < 10:
        raise ValueError(f"n_resamples must be an integer >= 10, got {b!r}")
    return int(b)


def bootstrap(estimate: Estimate, method: str | _methods.MethodInfo, level: float = 0.95, *, queries=None,
              labels=None, n_resamples: int = 200, interval: str = "basic", rng=0, params=None,
              point=None, boundary: str | None = "base", progress=None) -> Uncertainty:
    """Parametric-bootstrap SE, bias and interval of ``method`` on ``estimate`` (module docstring).

    ``queries`` (anything :func:`ldpopt.queries.query_matrix` accepts) turns the per-value result
    into per-query answers; ``point`` overrides the observed output (else the method is run once);
    ``boundary`` ("base" or None): Base's interval at the flagged entries (module docstring);
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
    level = _check_level(level)
    B = _check_resamples(n_resamples)
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
    """The Base fallback (module docstring, "Where the method's interval is not trusted"): per entry,
    Base's analytic normal interval clipped to [0, 1] where the entry is flagged, else the hull of
    [lo, hi] with it; returns (lo, hi, flag). Flagged: the fit puts the entry within FALLBACK_SE
    Base standard errors of 0, or [lo, hi] excludes Base's own point (the method's bias measured in
    the world disagrees with the data). ``index``: world, lo and hi are those values' entries only
    (per value, the same floats as over all d, then indexed). ``base_boot`` (B, m): Base's answers on
    the resamples, for queries whose Base law is not analytic (HR subset sums; module docstring)."""
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
