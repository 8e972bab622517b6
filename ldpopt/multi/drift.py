"""Drift across rounds: how much the truth changes between consecutive rounds of one longitudinal
collection beyond the rounds' sampling noise (a z statistic), and rounds re-simulated with it.

Notes: docs/notes/multi.md, section ``ldpopt.multi.drift``.
"""

from __future__ import annotations

import math

import numpy as np

from .._validation import as_generator
from .rounds import check_rounds, rounds_covariance

__all__ = ["Z_DRIFT", "Z_PLAUSIBLE", "Z_UNCLEAR", "drift_rounds", "drifting_collection", "plausible_weights",
           "rounds_drift", "sample_drift_rounds", "sparse_support"]

#: z at and above which the rounds are said to drift
Z_DRIFT = 3.0
#: z below which no drift is assumed; between the two the drift is "unclear"
Z_UNCLEAR = 2.0
#: half-width, in no-drift standard errors, of the drifts the rounds cannot rule out (:func:`plausible_weights`)
Z_PLAUSIBLE = 2.0


def rounds_drift(estimates, oracle) -> dict:
    """The drift statistic of the module notes.

    Parameters
    ----------
    estimates : list of Estimate
        The τ ≥ 2 per-round estimates of one collection.
    oracle : LongitudinalOracle
        Their oracle.

    Returns
    -------
    dict
        ``excess`` (the mean squared change per round beyond noise: an estimate of ‖g_{t+1} − g_t‖²),
        ``se`` (its no-drift standard error), ``z``, ``status`` ("none", "unclear" or "drift"),
        ``weight`` (w of the module notes; 0 when the status is "none"), ``deviation`` (Σ_t‖f̃_t − f̄‖²,
        noise included), ``deviation_excess`` (its part beyond the noise, an estimate of Σ_t‖g_t − ḡ‖²)
        and ``deviation_se`` (its no-drift standard error).

    Raises
    ------
    ValueError, TypeError
        As :func:`.rounds.check_rounds`.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt.oracles.longitudinal import LOSUE
    >>> from ldpopt.multi.drift import rounds_drift
    >>> o = LOSUE(2.0, 8, eps_1=1.0)
    >>> pop = np.array([4000, 3000, 1000, 800, 600, 300, 200, 100])
    >>> ests = [o.estimate(c, int(pop.sum())) for c in o.sample_rounds(pop, 4, rng=0)]
    >>> rounds_drift(ests, o)["status"]
    'none'
    """
    ests = check_rounds(estimates, oracle)
    F = np.stack([e.f_tilde for e in ests])
    tau = F.shape[0]
    a, _ = rounds_covariance(ests, oracle)
    k = tau - 1
    obs = float(np.mean(np.sum(np.diff(F, axis=0) ** 2, axis=1)))
    excess = obs - 2.0 * float(a.sum())
    a2 = float(np.sum(a ** 2))
    se = math.sqrt((k * 8.0 * a2 + 2.0 * (k - 1) * 2.0 * a2) / k ** 2)
    z = excess / se if se > 0 else (math.inf if excess > 0 else 0.0)
    status = "drift" if z >= Z_DRIFT else ("unclear" if z >= Z_UNCLEAR else "none")
    dev = float(np.sum((F - F.mean(axis=0)) ** 2))
    w = 0.0 if status == "none" or dev <= 0 else max(0.0, 1.0 - k * float(a.sum()) / dev)
    return {"excess": excess, "se": se, "z": z, "status": status, "weight": w, "deviation": dev,
            "deviation_excess": dev - k * float(a.sum()), "deviation_se": math.sqrt(2.0 * k * a2)}


def plausible_weights(estimates, drift: dict, z: float = Z_PLAUSIBLE) -> tuple[float, float]:
    """The shrinkage weights of the least and the most drift the rounds cannot rule out (module notes):
    the deviation from the rounds' mean beyond the noise, ``deviation_excess`` ∓ z·``deviation_se``
    (at least 0), each mapped to the weight w whose truths :func:`drift_rounds` (``estimates``, w),
    projected on the simplex, deviate that much from their mean (bisection; w ≤ 2⁸).

    Parameters
    ----------
    estimates : list of Estimate
        The rounds ``drift`` was measured on.
    drift : dict
        :func:`rounds_drift`'s result.
    z : float, default Z_PLAUSIBLE
        Half-width in standard errors, >= 0.

    Returns
    -------
    (float, float)
        (w_low, w_high), 0 <= w_low <= w_high.

    Raises
    ------
    ValueError
        If ``z`` is negative or not a number, or ``drift`` lacks ``deviation_excess`` or ``deviation_se``.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt.oracles.longitudinal import LOSUE
    >>> from ldpopt.multi.drift import plausible_weights, rounds_drift
    >>> o = LOSUE(2.0, 8, eps_1=1.0)
    >>> pop = np.array([4000, 3000, 1000, 800, 600, 300, 200, 100])
    >>> ests = [o.estimate(c, int(pop.sum())) for c in o.sample_rounds(pop, 4, rng=0)]
    >>> lo, hi = plausible_weights(ests, rounds_drift(ests, o))
    >>> lo == 0.0 < hi
    True
    """
    if isinstance(z, bool) or not isinstance(z, (int, float)) or not z >= 0 or not math.isfinite(z):
        raise ValueError(f"z must be a finite number >= 0, got {z!r}")
    missing = {"deviation_excess", "deviation_se"} - set(drift)
    if missing:
        raise ValueError(f"drift must be rounds_drift's result; it lacks {sorted(missing)}")
    e, se = float(drift["deviation_excess"]), float(drift["deviation_se"])

    def deviation(w: float) -> float:
        G = drift_rounds(estimates, w)
        return float(np.sum((G - G.mean(axis=0)) ** 2))

    def weight(target: float) -> float:
        if target <= 0:
            return 0.0
        hi = 1.0
        while deviation(hi) < target and hi < 2.0 ** 8:  # at most 8 doublings
            hi *= 2.0
        if deviation(hi) < target:
            return hi
        lo = 0.0
        for _ in range(40):  # bisection to 2^-40 of the bracket
            mid = 0.5 * (lo + hi)
            lo, hi = (mid, hi) if deviation(mid) < target else (lo, mid)
        return hi

    return weight(e - z * se), weight(e + z * se)


def drift_rounds(estimates, weight: float, support=None) -> np.ndarray:
    """The per-round truths ĝ_t (τ, d) of the module notes for shrinkage ``weight`` (0: the mean's
    Norm-Sub in every round); with ``support`` (a boolean mask, :func:`sparse_support`) each shrunken
    round is projected on the simplex of the values in it, 0 elsewhere."""
    from ..methods.normalize import project_simplex

    F = np.stack([e.f_tilde for e in estimates])
    fbar = F.mean(axis=0)
    X = fbar + weight * (F - fbar)
    if support is None:
        return np.stack([project_simplex(x) for x in X])  # τ rounds
    H = np.asarray(support, dtype=bool)
    G = np.zeros_like(X)
    G[:, H] = np.stack([project_simplex(x[H]) for x in X])  # τ rounds
    return G


def sparse_support(estimates, oracle, alpha: float = 0.05, z: float = 3.0) -> np.ndarray | None:
    """The values that stand above the noise in the rounds' mean, where the rounds are consistent with
    no mass elsewhere (the sparse world of the module notes); None where they rule it out.

    H = {v : f̄_v ≥ Φ⁻¹(1 − α/d)·s₀}, f̄ the rounds' mean estimate and s₀ the standard deviation of the
    mean of a value nobody holds (:func:`.rounds.rounds_covariance` at 0: a₀/τ + b₀, the memo's share b₀
    not averaged away); offered when |Σ_H f̄_v − 1| ≤ z·√(Σ_H (a_v/τ + b_v)) at f̄ (summed as if
    independent), and H is neither empty nor the whole domain. The single-estimate rule
    (:func:`ldpopt.uncertainty.fit.sparse_truth`) over τ rounds, with the Gaussian threshold only.

    Why: the Norm-Sub fit turns the noise of the values nobody holds into mass on a few of them; on
    data whose mass sits on a few values (two points at 0.50 and 0.49), the methods that keep the
    large values and cut the rest (Norm-Hyb) are better on the real law than in that fit's world,
    where Norm-Sub looks as good or better.

    Parameters
    ----------
    estimates : list of Estimate
        The τ ≥ 2 per-round estimates of one collection.
    oracle : LongitudinalOracle
        Their oracle.
    alpha : float, default 0.05
        Expected number of values nobody holds that pass the threshold, in (0, d).
    z : float, default 3
        The consistency margin in standard deviations, >= 0.

    Returns
    -------
    ndarray of bool, shape (d,), or None

    Raises
    ------
    ValueError
        A bad ``alpha`` or ``z``; malformed rounds (:func:`.rounds.check_rounds`).

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt.oracles.longitudinal import LOSUE
    >>> from ldpopt.multi.drift import sparse_support
    >>> o = LOSUE(4.0, 16, eps_1=2.0)
    >>> pop = np.r_[10_000, 9_800, np.zeros(14, int)] + np.r_[0, 0, np.full(14, 14)]
    >>> ests = [o.estimate(c, int(pop.sum())) for c in o.sample_rounds(pop, 4, rng=0)]
    >>> np.flatnonzero(sparse_support(ests, o)).tolist()
    [0, 1]
    >>> sparse_support([o.estimate(c, 16_000) for c in o.sample_rounds(np.full(16, 1_000), 4, rng=0)], o) is None
    True
    """
    from scipy.special import ndtri

    ests = check_rounds(estimates, oracle)
    d = oracle.d
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0.0 < alpha < d:
        raise ValueError(f"alpha must be a number in (0, d = {d}), got {alpha!r}")
    if isinstance(z, bool) or not isinstance(z, (int, float)) or not z >= 0 or not math.isfinite(z):
        raise ValueError(f"z must be a finite number >= 0, got {z!r}")
    tau = len(ests)
    fbar = np.mean([e.f_tilde for e in ests], axis=0)
    a0, b0 = rounds_covariance(ests, oracle, at=0.0)
    keep = fbar >= np.maximum(float(ndtri(1.0 - alpha / d)) * np.sqrt(a0 / tau + b0), 0.0)
    k = int(keep.sum())
    if k in (0, d):
        return None
    a, b = rounds_covariance(ests, oracle)
    sd = math.sqrt(float(np.sum((a / tau + b)[keep])))
    return keep if abs(1.0 - float(fbar[keep].sum())) <= z * sd else None


def sample_drift_rounds(oracle, populations, rng) -> np.ndarray:
    """Support counts (τ, d) of τ rounds whose true histograms are the rows of ``populations``
    (integers, one total), exact in joint law under the module notes' user model: the fewest users
    change value, a changed user takes a new memo, those leaving a value are its latest arrivals.

    Each cohort (users on one value from round s to round e) is drawn by ``oracle.sample_rounds``
    over its e − s rounds; cohorts with the same (s, e) are drawn together.

    Parameters
    ----------
    oracle : LongitudinalOracle
    populations : array_like of int, shape (τ, d)
    rng : int, numpy.random.Generator or "secure"

    Returns
    -------
    ndarray of int64, shape (τ, d)

    Raises
    ------
    ValueError
        Negative counts, or rows of different totals.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt.oracles.longitudinal import LOSUE
    >>> from ldpopt.multi.drift import sample_drift_rounds
    >>> C = sample_drift_rounds(LOSUE(2.0, 3), [[50, 30, 20], [20, 30, 50]], rng=0)
    >>> C.shape
    (2, 3)
    """
    P = np.asarray(populations)
    if P.ndim != 2 or P.shape[1] != oracle.d or not np.issubdtype(P.dtype, np.integer) or (P < 0).any():
        raise ValueError(f"populations must be non-negative integers of shape (tau, {oracle.d})")
    if (P.sum(axis=1) != P[0].sum()).any():
        raise ValueError("populations must have the same total in every round (the same users)")
    gen = as_generator(rng)
    tau, d = P.shape
    out = np.zeros((tau, d), dtype=np.int64)

    def close(start: int, end: int, counts: np.ndarray) -> None:
        if counts.any():
            out[start:end] += oracle.sample_rounds(counts, end - start, gen)

    cohorts = {0: P[0].astype(np.int64).copy()}  # start round -> users per value still there
    for t in range(1, tau):  # rounds and cohorts: at most τ each
        leave = P[t - 1] - np.minimum(P[t - 1], P[t])
        for s in sorted(cohorts, reverse=True):
            take = np.minimum(cohorts[s], leave)
            close(s, t, take)
            cohorts[s] = cohorts[s] - take
            leave = leave - take
        cohorts[t] = (P[t] - np.minimum(P[t - 1], P[t])).astype(np.int64)
    for s, c in cohorts.items():
        close(s, tau, c)
    return out


def drifting_collection(oracle, base_counts, tau: int, change: float, rng) -> tuple[list, np.ndarray]:
    """A generated longitudinal collection with drift, per user (:class:`LongitudinalClients`): the
    users start on ``base_counts``; in each later round a share ``change`` of them, drawn afresh,
    take a value from ``base_counts``'s frequencies under a fresh random permutation of the domain.

    Parameters
    ----------
    oracle : LongitudinalOracle
    base_counts : array_like of int, shape (d,)
        The first round's histogram (n = its total).
    tau : int
        Rounds, >= 2.
    change : float
        The share of users changing value each round, in [0, 1].
    rng : int, numpy.random.Generator or "secure"

    Returns
    -------
    (list of Estimate, ndarray of shape (τ, d))
        The rounds' estimates and their true frequencies.

    Examples
    --------
    >>> from ldpopt.oracles.longitudinal import LOSUE
    >>> from ldpopt.multi.drift import drifting_collection
    >>> ests, truths = drifting_collection(LOSUE(2.0, 4), [400, 300, 200, 100], 3, 0.5, rng=0)
    >>> len(ests), truths.shape
    (3, (3, 4))
    """
    if isinstance(change, bool) or not isinstance(change, (int, float)) or not 0.0 <= change <= 1.0:
        raise ValueError(f"change must be a number in [0, 1], got {change!r}")
    if isinstance(tau, bool) or not isinstance(tau, (int, np.integer)) or tau < 2:
        raise ValueError(f"tau must be an integer >= 2, got {tau!r}")
    gen = as_generator(rng)
    tc = np.asarray(base_counts, dtype=np.int64)
    n, d = int(tc.sum()), tc.size
    w = tc / n
    V = np.empty((tau, n), dtype=np.int64)
    V[0] = gen.permutation(np.repeat(np.arange(d), tc))
    for t in range(1, tau):  # rounds
        V[t] = V[t - 1]
        moved = gen.random(n) < change
        V[t, moved] = gen.choice(gen.permutation(d), size=int(moved.sum()), p=w)
    C = oracle.clients(n, gen).rounds(V, gen)
    truths = np.stack([np.bincount(v, minlength=d) / n for v in V])
    return [oracle.estimate(c, n) for c in C], truths
