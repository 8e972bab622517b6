"""Evidence of an attack in a frequency estimate: is it further from every genuine histogram than
honest sampling noise explains?

Notes: docs/notes/poisoning.md, "ldpopt.robust.evidence".
"""

from __future__ import annotations

import math

import numpy as np

from ..estimate import check_estimate
from ..methods.normalize import project_simplex

__all__ = ["attack_evidence"]


def _negative_square_moments(m: np.ndarray, r: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """E[Y² 1{Y<0}] and E[Y⁴ 1{Y<0}] for Y ~ N(m, r²) (truncated normal moments; z_negative only)."""
    from scipy.special import ndtr

    c = -m / r
    Phi = ndtr(c)
    phi = np.exp(-0.5 * c * c) / math.sqrt(2.0 * math.pi)
    M = [Phi, -phi, Phi - c * phi, -(c * c + 2.0) * phi, 3.0 * Phi - (c ** 3 + 3.0 * c) * phi]
    second = m * m * M[0] + 2 * m * r * M[1] + r * r * M[2]
    fourth = (m ** 4 * M[0] + 4 * m ** 3 * r * M[1] + 6 * m * m * r * r * M[2] + 4 * m * r ** 3 * M[3]
              + r ** 4 * M[4])
    return second, fourth


def _min_convex(fun, lo: float, hi: float) -> float:
    """min over [lo, hi] of a convex scalar function (golden-section with scipy's bounded method)."""
    from scipy.optimize import minimize_scalar

    res = minimize_scalar(fun, bounds=(lo, hi), method="bounded",
                          options={"xatol": 1e-12 * max(abs(hi), 1e-300), "maxiter": 200})
    return float(min(res.fun, fun(lo), fun(hi)))


def _log_mgf_negative_square(theta: float, m: np.ndarray, r: np.ndarray) -> np.ndarray:
    """log E[exp(θ·max(−X, 0)²)] for X ~ N(m, r²), elementwise (closed form; θ < 1/(2r²))."""
    from scipy.special import log_ndtr

    a = 1.0 / (r * r) - 2.0 * theta                   # 1/r'²
    rp = 1.0 / np.sqrt(a)
    mu = m / (r * r) / a                              # m r'²/r²
    c = 0.5 * mu * mu * a - 0.5 * (m / r) ** 2
    neg = np.log(rp / r) + c + log_ndtr(-mu / rp)
    return np.logaddexp(log_ndtr(m / r), neg)


def negative_mass_pvalue(S: float, m: np.ndarray, r: np.ndarray, lower: bool = False) -> float:
    """Chernoff bound on Pr[Σ_v max(−X_v, 0)² ≥ S] (``lower``: ≤ S), X_v ~ N(m_v, r_v²) independent."""
    if m.size == 0 or (S <= 0.0 and not lower):
        return 1.0
    theta_max = 0.5 / float(np.max(r * r))

    def bound(theta):
        return float(np.sum(_log_mgf_negative_square(theta, m, r))) - theta * S

    if lower:  # θ < 0; as θ → −∞ the bound tends to Pr[S = 0], so a wide bracket suffices
        lo = -theta_max * 1e4
        return float(min(1.0, math.exp(min(0.0, _min_convex(bound, lo, 0.0)))))
    chernoff = float(min(1.0, math.exp(min(0.0, _min_convex(bound, 0.0, theta_max * (1.0 - 1e-9))))))
    if chernoff < GRID_BELOW:
        return min(chernoff, _grid_pvalue(S, m, r))
    return chernoff


#: the Chernoff bound is refined by the grid law below this (it decides nothing above)
GRID_BELOW = 0.05
#: grid points of the negative-mass law on [0, S)
GRID = 2048


def _grid_pvalue(S: float, m: np.ndarray, r: np.ndarray) -> float:
    """Pr[S_up ≥ S] ≥ Pr[Σ_v max(−X_v, 0)² ≥ S]: each term rounded up to the grid h = S/GRID, m_v
    rounded down to a multiple of 0.25 and r_v up to one of 0.01 (each a stochastically larger term),
    the terms' laws on [0, S) convolved (truncated: terms are ≥ 0, so mass at S or above never comes
    back), identical terms by repeated squaring; 1 minus the mass left below S."""
    from scipy.special import ndtr

    h = S / GRID
    keep = ndtr(-m / r) > 1e-15                       # the others are 0 but for ≤ d·1e-15
    slack = float(np.sum(ndtr(-m[~keep] / r[~keep])))
    mq = np.floor(m[keep] / 0.25) * 0.25
    rq = np.ceil(r[keep] / 0.01 - 1e-9) * 0.01
    groups, counts = np.unique(np.stack([mq, rq], axis=1), axis=0, return_counts=True)
    edges = np.sqrt(h * np.arange(GRID))              # √(h j), j = 0 … GRID − 1
    L = 2 * GRID

    def mul(a, b):
        return np.fft.irfft(np.fft.rfft(a, L) * np.fft.rfft(b, L), L)[:GRID]

    total = np.zeros(GRID)
    total[0] = 1.0
    for (mm, rr), c in zip(groups, counts):  # groups of identical terms, not a loop over values
        cdf_neg = ndtr((-edges - mm) / rr)            # Pr[T ≥ h j] for j ≥ 1 (Pr[X ≤ −√(hj)])
        pmf = np.empty(GRID)
        pmf[0] = ndtr(mm / rr)                        # T = 0
        pmf[1:] = cdf_neg[:-1] - cdf_neg[1:]          # h(j − 1) < T ≤ h j
        acc, base, k = None, pmf, int(c)
        while k:
            if k & 1:
                acc = base if acc is None else np.maximum(mul(acc, base), 0.0)
            k >>= 1
            if k:
                base = np.maximum(mul(base, base), 0.0)
        total = np.maximum(mul(total, acc), 0.0)
    below = float(total.sum())                        # Pr[S_up < S]
    return float(min(1.0, max(0.0, 1.0 - below) + slack + 1e-12))


def _chernoff_total(total: float, n: float, pmf: np.ndarray) -> float:
    """Twice the Chernoff bound on the tail of the sum of n sizes with law ``pmf`` beyond ``total``."""
    from scipy.special import logsumexp

    s = np.flatnonzero(pmf > 0)
    w = pmf[s]
    mu = float(w @ s)
    sd = math.sqrt(float(w @ (s - mu) ** 2))
    z = (s - mu) / sd                                 # standardised sizes
    t = (total / n - mu) / sd
    logw = np.log(w)
    side = 1.0 if t >= 0 else -1.0
    # the optimal |θ| grows with |t|; 50/range of z covers any t short of the extreme sizes
    top = 50.0 / float(z.max() - z.min()) * max(1.0, abs(t) * 10)
    b = _min_convex(lambda th: n * (float(logsumexp(logw + side * th * z)) - side * th * t), 0.0, top)
    return float(min(1.0, 2.0 * math.exp(min(0.0, b))))


def total_pvalue(total: float, n: float, pmf: np.ndarray) -> float:
    """Two-sided p-value of the total support of n genuine reports: twice the smaller tail of the sum
    of n independent sizes with law ``pmf`` (exact by FFT where the window fits, else its Chernoff
    bound; impossible totals: 0; a point mass: 0 or 1)."""
    s = np.flatnonzero(pmf > 0)
    lo, hi = float(s[0]) * n, float(s[-1]) * n
    if total < lo - 0.5 or total > hi + 0.5:
        return 0.0
    if s.size == 1:
        return 1.0
    chernoff = _chernoff_total(total, n, pmf)
    exact = _exact_total_pvalue(total, n, pmf) if chernoff < 0.5 else None
    return chernoff if exact is None else min(chernoff, exact)


#: the largest FFT the exact law of the total is computed on (beyond: the Chernoff bound alone)
FFT_MAX = 2 ** 20
#: the window of the exact law, in standard deviations either side of the mean
WINDOW_SD = 14.0


def _exact_total_pvalue(total: float, n: float, pmf: np.ndarray) -> float | None:
    """Twice the smaller exact tail of the n-fold convolution of ``pmf`` at ``total``, from its
    characteristic function on a window of ±14 sd (FFT; the mass outside, bounded by the Chernoff
    bound at the window's edges, is added); None when the window exceeds ``FFT_MAX`` points or n is
    fractional."""
    if n != int(n):
        return None
    n = int(n)
    sz = np.arange(pmf.size)
    mu = float(pmf @ sz)
    sd_t = math.sqrt(float(pmf @ (sz - mu) ** 2) * n)
    L = 1 << max(math.ceil(math.log2(2 * WINDOW_SD * sd_t + pmf.size + 2)), 4)
    if L > FFT_MAX:
        return None
    a = np.zeros(L)
    a[:pmf.size] = pmf
    phi = np.fft.rfft(a)
    with np.errstate(divide="ignore", under="ignore"):
        phin = np.exp(n * np.log(np.maximum(np.abs(phi), 1e-300)) + 1j * n * np.angle(phi))
    law = np.maximum(np.fft.irfft(phin, n=L), 0.0)   # Pr[T ≡ k mod L]
    centre = round(n * mu)
    half = L // 2 - 1
    offs = np.arange(-half, half + 1)                 # T − centre inside the window
    vals = law[(centre + offs) % L]
    k = round(total) - centre
    outside = _chernoff_total(centre + half + 1, n, pmf) + _chernoff_total(centre - half - 1, n, pmf)
    tail = min(float(vals[offs >= k].sum()), float(vals[offs <= k].sum()))
    return float(min(1.0, 2.0 * tail + outside + 1e-12))


def attack_evidence(estimate, oracle=None) -> dict:
    """The two tests of the module notes on ``estimate``.

    Parameters
    ----------
    estimate : Estimate
        The (possibly poisoned) estimate.
    oracle : FrequencyOracle, optional
        Its oracle (default: rebuilt from the estimate, ``FrequencyOracle.from_estimate``).

    Returns
    -------
    dict
        ``p_total`` (None where the oracle states no size law), ``p_negative``, their standardised
        statistics ``z_total`` (None where the total is fixed or its law unknown) and
        ``z_negative`` (descriptive only), and ``p_value``: the smaller p-value times the number of
        tests, at most 1.

    Raises
    ------
    ValueError
        A bad estimate.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt import oracles, robust
    >>> grr = oracles.get("grr", epsilon=2.0, d=128)
    >>> genuine = (10_000 * 0.5 ** np.arange(128)).astype(int) + 20
    >>> clean = grr.simulate(genuine, rng=0)
    >>> robust.attack_evidence(clean)["p_value"] > 0.01
    True
    >>> attacked = robust.poisoned_estimate(grr, genuine, "mga", targets=[60, 61, 62], beta=0.1, rng=0)
    >>> robust.attack_evidence(attacked)["p_value"] < 1e-6
    True
    """
    est = check_estimate(estimate)
    if oracle is None:
        from ..uncertainty.resample import oracle_of

        oracle = oracle_of(est)
    return evidence_of(est.f_tilde, est.n, oracle)


def evidence_of(f_tilde: np.ndarray, n: float, oracle, exclude=None, extra_var=None,
                two_sided: bool = False) -> dict:
    """:func:`attack_evidence` on an estimate vector ``f_tilde`` of ``n`` reports (possibly
    fractional: the reports left after removing an attack's expected counts) of ``oracle``; the
    negative-mass test over the values not in ``exclude``, each estimate's variance plus
    ``extra_var`` (the removed counts' own variance, in frequency units); ``two_sided``: too little
    negative mass counts as evidence too (twice the smaller tail: an over-corrected estimate)."""
    d, p, q = oracle.d, oracle.p, oracle.q
    f_tilde = np.asarray(f_tilde, dtype=np.float64)
    g = project_simplex(f_tilde)
    n0 = max(round(n), 1)                     # the variances scale as 1/n
    var_g = np.asarray(oracle.variance(g, n0), dtype=np.float64) * (n0 / n)
    var_0 = float(np.asarray(oracle.variance(np.zeros(d), n0), dtype=np.float64).max()) * (n0 / n)
    sd0 = math.sqrt(var_0)
    if extra_var is not None:
        var_g = var_g + np.asarray(extra_var, dtype=np.float64)
    keep = np.ones(d, dtype=bool)
    if exclude is not None:
        keep[np.asarray(exclude, dtype=np.int64)] = False
    m, r = g[keep] / sd0, np.sqrt(np.maximum(var_g[keep], 1e-300)) / sd0
    S = float(np.sum(np.maximum(-f_tilde[keep] / sd0, 0.0) ** 2))
    second, fourth = _negative_square_moments(m, r)
    z_neg = (S - float(second.sum())) / math.sqrt(max(float(np.sum(np.maximum(fourth - second ** 2, 0.0))), 1e-300))
    p_neg = negative_mass_pvalue(S, m, r)
    if two_sided:
        p_neg = min(1.0, 2.0 * min(p_neg, negative_mass_pvalue(S, m, r, lower=True)))
    z_tot = p_tot = None
    try:
        pmf = np.asarray(oracle.support_size_pmf(), dtype=np.float64)
    except (ValueError, NotImplementedError, AttributeError):
        pmf = None
    if pmf is not None and pmf.size == d + 1 and np.isfinite(pmf).all() and n > 0:
        total = float(f_tilde.sum()) * (p - q) * n + d * q * n  # Σ_v C_v
        p_tot = total_pvalue(total, n, pmf)
        s = np.arange(d + 1)
        mu = float(pmf @ s)
        var = float(pmf @ (s - mu) ** 2)
        if var > 1e-12:
            z_tot = (total - n * mu) / math.sqrt(n * var)
    ps = [p_neg] + ([p_tot] if p_tot is not None else [])
    p_value = min(1.0, len(ps) * min(ps))
    return {"z_total": z_tot, "z_negative": float(z_neg), "p_total": p_tot, "p_negative": p_neg,
            "p_value": p_value}
