"""The exact maximum-likelihood solves of ``ldpopt.methods.em`` on an array namespace (numpy or CuPy,
the same code): the GRR multinomial closed form and the per-bit binomial dual solve (the "em" method
with ``method="exact"``; derivations in docs/python.md, "ldpopt.methods.em.ibu"; Wang et al. arXiv §3.4
Eq. 11 with the exact likelihood). Each equals ``ldpopt.methods.em`` within 1e-12
(``tests/test_xp.py``).

Notes: docs/notes/devices.md, "ldpopt.xp.mle"."""

from __future__ import annotations

import numpy as np

from .cut import _host
from .forms import _module_of

__all__ = ["binomial_mle", "grr_mle"]


def grr_mle(counts, p: float, q: float):
    """The exact GRR maximum-likelihood frequencies (module notes), float64 on the namespace of
    ``counts``. Counts must not all be 0."""
    xp = _module_of(counts)
    c = counts.astype(xp.float64)
    a = p - q
    r = q / a
    cs = xp.sort(c)[::-1]
    lam = xp.cumsum(cs) / (1.0 + xp.arange(1, c.shape[0] + 1, dtype=xp.float64) * r)
    k = int(xp.count_nonzero(cs > lam * r))  # the condition holds on a prefix, non-empty as c_(1) > 0
    if k == 0:
        raise ValueError("counts must not all be zero for the multinomial likelihood")
    lam_star = float(lam[k - 1])
    f = xp.maximum((c - lam_star * r) / lam_star, 0.0)
    return f / xp.sum(f)


def _bracket(h, uw: np.ndarray, n: float, alpha: float, beta: float) -> tuple[float, float]:
    """[lo, hi] with h(lo) ≥ 0 ≥ h(hi): μ_hi = max_u G_u(α) makes every f = 0, μ_lo = max_u G_u(α + β)
    puts one f at 1 (G(x) = w/x − (n − w)/(1 − x)); infinite ends expanded by doubling steps, as in
    ``ldpopt.methods.em.exact._separable_solve``."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        g0 = np.where(uw > 0, uw / alpha if alpha > 0 else np.inf, 0.0) - np.where(uw < n, (n - uw) / (1 - alpha), 0.0)
        top = alpha + beta
        g1 = np.where(uw > 0, uw / top, 0.0) - np.where(uw < n, (n - uw) / (1 - top) if top < 1 else np.inf, 0.0)
    hi, lo = float(np.max(g0)), float(np.max(g1))
    lo -= 1e-9 * max(abs(lo), n, 1.0)  # rounding in π(lo) cannot make h(lo) < 0
    step = max(n, 1.0)
    if not np.isfinite(hi):
        hi = max(lo, 0.0) + step if np.isfinite(lo) else step
        while h(hi) > 0:
            hi, step = hi + step, 2.0 * step
    step = max(n, 1.0)
    if not np.isfinite(lo):
        lo = min(hi, 0.0) - step
        while h(lo) < 0:
            lo, step = lo - step, 2.0 * step
    return lo, hi


def binomial_mle(counts, n: int, p: float, q: float, max_iter: int = 10_000):
    """The exact per-bit binomial maximum-likelihood frequencies (module notes), float64 on the
    namespace of ``counts``; ``max_iter`` bounds Brent's evaluations (a ``RuntimeError`` past it)."""
    from scipy.optimize import brentq

    from ..methods.em.exact import root_pi

    xp = _module_of(counts)
    uw_d, inv, mult_d = xp.unique(counts.astype(xp.float64), return_inverse=True, return_counts=True)
    uw, mult = _host(uw_d), _host(mult_d).astype(np.float64)
    nf, a = float(n), p - q

    def table(mu: float) -> np.ndarray:
        return np.maximum(root_pi(mu, uw, nf) - q, 0.0)

    def h(mu: float) -> float:
        return float(mult @ table(mu)) / a - 1.0

    lo, hi = _bracket(h, uw, nf, q, a)
    if h(lo) == 0.0:
        mu = lo
    else:
        mu, res = brentq(h, lo, hi, xtol=1e-15 * max(nf, 1.0), rtol=4 * np.finfo(float).eps,
                         maxiter=max_iter, full_output=True, disp=False)
        if not res.converged:
            raise RuntimeError(f"root-finding the KKT multiplier did not converge in max_iter = {max_iter} "
                               f"evaluations ({res.flag}); raise max_iter")
    f = xp.asarray(table(mu) / a)[inv.reshape(-1)]
    return f / xp.sum(f)
