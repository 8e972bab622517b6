"""The two likelihoods that :func:`ldpopt.methods.em.solve_mle` maximises on the simplex, with their
gradients: the multinomial log-likelihood of GRR's counts and the per-bit binomial composite
log-likelihood of the unary/hash oracles (π_v = q + (p − q) f_v; derivation: docs/python.md, "ldpopt.methods.em.ibu")."""

from __future__ import annotations

import numpy as np

from ..._validation import check_float_array
from ...estimate import Estimate
from ...estimate import check_estimate as _check_estimate

__all__ = ["loglik_binomial", "loglik_binomial_grad", "loglik_multinomial", "loglik_multinomial_grad"]


def _check_f(f, estimate: Estimate) -> np.ndarray:
    return check_float_array(f, "f", length=estimate.d, min_length=2)


def _pi(f: np.ndarray, estimate: Estimate) -> np.ndarray:
    return estimate.q + (estimate.p - estimate.q) * f


def loglik_multinomial(f, estimate: Estimate) -> float:
    """ℓ_M(f) = Σ_v c_v log(q + (p − q) f_v), the multinomial log-likelihood of GRR's counts (without
    the log multinomial coefficient, which is free of f). ``-inf`` where some π_v ≤ 0 has c_v > 0;
    terms with c_v = 0 count 0 (0 log 0 = 0). Concave in f. For non-GRR counts it is the objective
    whose maximiser on the simplex IBU converges to (see the module docstring)."""
    est = _check_estimate(estimate)
    pi = _pi(_check_f(f, est), est)
    c = est.counts
    if np.any((pi <= 0) & (c > 0)):
        return -np.inf
    from scipy.special import xlogy  # here, not at import: `import ldpopt` loads no scipy

    with np.errstate(invalid="ignore", divide="ignore"):
        return float(np.sum(xlogy(c, np.where(c > 0, pi, 1.0))))


def loglik_multinomial_grad(f, estimate: Estimate) -> np.ndarray:
    """∇ℓ_M(f)_v = (p − q) c_v / π_v (``inf`` where π_v = 0 < c_v, 0 where c_v = 0)."""
    est = _check_estimate(estimate)
    pi = _pi(_check_f(f, est), est)
    c = est.counts
    with np.errstate(divide="ignore"):
        return (est.p - est.q) * np.divide(c, pi, out=np.zeros_like(c), where=c > 0)


def loglik_binomial(f, estimate: Estimate) -> float:
    """ℓ_B(f) = Σ_v [c_v log π_v + (n − c_v) log(1 − π_v)], π_v = q + (p − q) f_v: the per-bit binomial
    composite log-likelihood (without the log binomial coefficients, free of f). ``-inf`` outside the
    domain of the logs; 0 log 0 = 0. Concave in f."""
    est = _check_estimate(estimate)
    pi = _pi(_check_f(f, est), est)
    c, m = est.counts, est.n - est.counts
    if np.any((pi <= 0) & (c > 0)) or np.any((pi >= 1) & (m > 0)):
        return -np.inf
    from scipy.special import xlogy  # here, not at import: `import ldpopt` loads no scipy

    with np.errstate(invalid="ignore", divide="ignore"):
        return float(np.sum(xlogy(c, np.where(c > 0, pi, 1.0)) + xlogy(m, np.where(m > 0, 1.0 - pi, 1.0))))


def loglik_binomial_grad(f, estimate: Estimate) -> np.ndarray:
    """∇ℓ_B(f)_v = (p − q) [c_v/π_v − (n − c_v)/(1 − π_v)] (terms with a zero count dropped)."""
    est = _check_estimate(estimate)
    pi = _pi(_check_f(f, est), est)
    c, m = est.counts, est.n - est.counts
    with np.errstate(divide="ignore"):
        up = np.divide(c, pi, out=np.zeros_like(c), where=c > 0)
        down = np.divide(m, 1.0 - pi, out=np.zeros_like(m), where=m > 0)
    return (est.p - est.q) * (up - down)


_LOGLIK = {"multinomial": (loglik_multinomial, loglik_multinomial_grad),
           "binomial": (loglik_binomial, loglik_binomial_grad)}


def _scale(estimate: Estimate, likelihood: str) -> float:
    """a·N: the size of each term of the gradient (N = Σc for the multinomial, n for the binomial)."""
    big_n = float(estimate.counts.sum()) if likelihood == "multinomial" else float(estimate.n)
    return (estimate.p - estimate.q) * max(big_n, 1.0)
