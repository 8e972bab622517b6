"""Slow, obviously-correct references for the Bayesian post-processors (:mod:`ldpopt.methods.bayes`):
Wang et al.'s Eq. 10 and Jia & Gong's Eq. 11–12 and Eq. 16 summed over every count of the prior's
support. O(n·d): for tests at small n only."""

from __future__ import annotations

import numpy as np

from ...estimate import Estimate
from ...estimate import check_estimate as _check_estimate
from .._args import _PRIORS, _check_choice, _check_s, _real


def power_reference(estimate: Estimate, s: float, *, dps: int | None = None) -> np.ndarray:
    """Eq. 10 of Wang et al. as printed (with σn), summed over every i = 1..n in log-space.

    O(n·d) time and O(n · chunk) memory: for tests at small n only. In float64 the absolute
    log-terms lose the answer when f̃·n is far outside [1, n] relative to σn (they are all ≈ the
    same huge negative number); ``dps`` (decimal digits) evaluates Eq. 10 instead with mpmath at
    that precision, term by term from the float64 inputs f̃_v, σ, s (O(n·d) multiprecision
    operations: tiny n·d only).
    """
    from scipy.special import logsumexp
    from scipy.stats import norm

    est = _check_estimate(estimate)
    s = _check_s(s)
    n = est.n
    if dps is not None:
        from ..._extras import require

        mpmath = require("mpmath", "test", "power_reference(dps=...)")

        with mpmath.workdps(int(dps)):
            sig_n = mpmath.mpf(float(est.sigma)) * n
            lw = [-mpmath.mpf(s) * mpmath.log(i) for i in range(1, n + 1)]
            out = np.empty(est.d)
            for v, ft in enumerate(est.f_tilde):
                x = mpmath.mpf(float(ft)) * n
                logt = [-((x - i) ** 2) / (2 * sig_n ** 2) + lw[i - 1] for i in range(1, n + 1)]
                m = max(logt)
                num = mpmath.fsum(mpmath.exp(t - m) * i for i, t in enumerate(logt, start=1))
                den = mpmath.fsum(mpmath.exp(t - m) for t in logt)
                out[v] = float(num / den / n)
        return out
    sig_n = est.sigma * n
    i = np.arange(1, n + 1, dtype=np.float64)
    out = np.empty(est.d)
    step = max(1, 2_000_000 // n)
    for a in range(0, est.d, step):
        fn = est.f_tilde[a:a + step, None] * n
        logt = norm.logpdf(fn - i[None, :], loc=0.0, scale=sig_n) - s * np.log(i)[None, :]
        out[a:a + step] = np.exp(logsumexp(logt, b=(i / n)[None, :], axis=1) - logsumexp(logt, axis=1))
    return out


def _jg_terms(est: Estimate, prior: str, s, mu, tau):
    """Jia & Gong's own route: f̂ from support counts (Eq. 3), noise variance Eq. 14, prior Eq. 15."""
    from scipy.special import logsumexp
    n, p, q = est.n, est.p, est.q
    f_hat = (np.asarray(est.counts, dtype=np.float64) - n * q) / (p - q)     # Eq. 3, count scale
    var_s = n * q * (1 - q) / (p - q) ** 2                                   # Eq. 14
    if prior == "power-law":
        k = np.arange(1, n + 1, dtype=np.float64)
        logpf = -_check_s(s) * np.log(k)
    else:
        k = np.arange(0, n + 1, dtype=np.float64)
        logpf = -((k - _real(mu, "mu")) ** 2) / (2 * _real(tau, "tau") ** 2)
    logpf = logpf - logsumexp(logpf)
    return f_hat, var_s, k, logpf


def calibrate_reference(estimate: Estimate, prior: str = "power-law", *, s=None, mu=None, tau=None) -> np.ndarray:
    """Jia & Gong Eq. 11–12 by brute force over every k of the prior's support, in log-space.

    Written from Jia & Gong's formulas (support counts → Eq. 3, Eq. 14), not from Wang's Eq. 10, so
    comparing it with :func:`power_reference` checks that the two papers' estimators coincide.
    """
    est = _check_estimate(estimate)
    kind = _check_choice(prior, "prior", _PRIORS)
    f_hat, var_s, k, logpf = _jg_terms(est, kind, s, mu, tau)
    from scipy.special import logsumexp
    out = np.empty(est.d)
    step = max(1, 2_000_000 // k.shape[0])
    for a in range(0, est.d, step):
        logps = -((f_hat[a:a + step, None] - k[None, :]) ** 2) / (2 * var_s) - 0.5 * np.log(2 * np.pi * var_s)
        logpost = logps + logpf[None, :]
        with np.errstate(divide="ignore"):
            out[a:a + step] = np.exp(logsumexp(logpost, b=k[None, :], axis=1) - logsumexp(logpost, axis=1))
    return out / est.n


def loglik_reference(estimate: Estimate, prior: str = "power-law", *, s=None, mu=None, tau=None) -> float:
    """Jia & Gong's Eq. 16 objective Σ_i log Σ_k p_f(k) p_s(f̂_i − k), by brute force."""
    est = _check_estimate(estimate)
    kind = _check_choice(prior, "prior", _PRIORS)
    f_hat, var_s, k, logpf = _jg_terms(est, kind, s, mu, tau)
    from scipy.special import logsumexp
    tot = 0.0
    step = max(1, 2_000_000 // k.shape[0])
    for a in range(0, est.d, step):
        logps = -((f_hat[a:a + step, None] - k[None, :]) ** 2) / (2 * var_s) - 0.5 * np.log(2 * np.pi * var_s)
        tot += float(logsumexp(logps + logpf[None, :], axis=1).sum())
    return tot
