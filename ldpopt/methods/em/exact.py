"""The exact maximum-likelihood solves of :mod:`.em` (derivation: docs/python.md, "ldpopt.methods.em.ibu"):
the separable dual solve of the binomial likelihood on the simplex — per-value roots in closed form,
the simplex multiplier μ by Brent's method, grouped by distinct count (:mod:`.distinct`) — and the
closed form of the multinomial one. Split from :mod:`.em` by concern (the solvers, not the
likelihoods, the IBU/EM references or the registered method)."""

from __future__ import annotations

import numpy as np

from ..distinct import integer_groups

__all__ = ["ConvergenceError", "ConvergenceWarning", "root_pi"]


class ConvergenceError(RuntimeError):
    """An iterative maximum-likelihood solve stopped at ``max_iter`` before reaching ``tol``."""


class ConvergenceWarning(RuntimeWarning):
    """Issued instead of :class:`ConvergenceError` when ``on_fail="warn"``."""


# -- the separable dual solve -----------------------------------------------------------------------
def root_pi(mu: float, w: np.ndarray, n: float) -> np.ndarray:
    """Root x in [0, 1] of G(x) = w/x − (n − w)/(1 − x) = μ, elementwise (see module docstring)."""
    b = mu + n
    if abs(mu) > 1e150:
        # the squares below would overflow (|μ| reaches w/α ≈ 1e157 when α = q ≈ 1e-154, SUE at
        # ε = 709): the same discriminants as hypotenuses, 4μ(n − w) ≥ 0 resp. −4μw ≥ 0
        disc = (np.hypot(mu - n, 2.0 * np.sqrt(mu * (n - w))) if mu >= 0
                else np.hypot(b, 2.0 * np.sqrt(-mu * w)))
    elif mu >= 0:
        disc = np.sqrt((mu - n) ** 2 + 4.0 * mu * (n - w))
    else:
        disc = np.sqrt(b * b - 4.0 * mu * w)
    if b >= 0:
        den = b + disc
        # den = 0 only when μ = −n and w = 0, where G(x) = −n/(1 − x) = μ gives x = 0
        return np.divide(2.0 * w, den, out=np.zeros_like(w), where=den > 0)
    return (b - disc) / (2.0 * mu)


def _separable_solve(w: np.ndarray, n: float, alpha: float, beta: float, max_iter: int, shrink: bool = True,
                     group: bool = True):
    """Maximise Σ_v [w_v log x_v + (n − w_v) log(1 − x_v)], x_v = α + β f_v, over the simplex.

    Returns (f, μ, evaluations): f_v = max(0, (x_v(μ) − α)/β) with Σ_v f_v(μ) = 1 found by Brent's
    method on the decreasing function h(μ) = Σ_v f_v(μ).

    ``shrink``: every f_v(μ) is non-increasing in μ, so once h(μ_lb) ≥ 0 (μ_lb ≤ μ*) a value with
    f_v(μ_lb) = 0 stays 0 at every μ ≥ μ_lb, and Brent only evaluates inside its bracket, above the
    largest such μ_lb: h is then summed over the values still positive at μ_lb (a few percent of
    the domain after the first steps on Zipf data; ~80 % of EM's time at d = 10⁷ was these sums
    over values that are 0). An evaluation below μ_lb falls back to the whole domain. f itself is
    computed on the whole domain at the root. ``shrink=False`` is the plain reference.

    ``group``: when every w_v is an integer ≥ 0 (support counts), x_v(μ) is computed once per
    distinct w (:func:`ldpopt.methods.distinct.integer_groups`) and gathered — the same elementwise
    operations, so h and f are bit-identical to ``group=False`` (the plain reference)."""
    nev = 0
    lb = -np.inf  # largest μ seen with h(μ) ≥ 0 ...
    keep: np.ndarray | None = None  # ... and the values positive there
    # brentq re-evaluates the end point h(lo) computed below: one full pass saved (NaN: none yet)
    last = (np.nan, np.nan)
    # integer counts take few distinct values: evaluate x_v(μ) once per distinct w and gather
    # (elementwise, so bit-identical to the full evaluation; ~10 passes over d become ~2)
    grp = integer_groups(w) if group else None
    uw, inv = (grp[0].astype(np.float64), grp[1]) if grp is not None else (None, None)
    keep_inv: np.ndarray | None = None

    def fvals(mu: float, idx) -> np.ndarray:
        """max(x_v(μ) − α, 0) at the positions ``idx`` (None: all)."""
        if uw is None:
            return np.maximum(root_pi(mu, w if idx is None else w[idx], n) - alpha, 0.0)
        table = np.maximum(root_pi(mu, uw, n) - alpha, 0.0)
        return table[inv if idx is None else keep_inv]

    def h(mu: float) -> float:
        nonlocal nev, lb, keep, last, keep_inv
        if mu == last[0]:
            return last[1]
        nev += 1
        sub = shrink and keep is not None and mu >= lb
        fv = fvals(mu, keep if sub else None)
        val = float(np.sum(fv)) / beta - 1.0
        if shrink and val >= 0 and mu >= lb:
            pos = np.flatnonzero(fv > 0)
            if sub:
                assert keep is not None  # sub says so
                pos = keep[pos]
            lb, keep = mu, pos
            keep_inv = None if inv is None else inv[keep]
        last = (mu, val)
        return val

    # G_v at f_v = 0 and f_v = 1; μ_hi = max_v G_v(α) makes every f_v = 0 (h = −1) and
    # μ_lo = max_v G_v(α + β) puts some f_v at 1 (h ≥ 0). Infinite when α = 0 or α + β = 1: expand.
    # A subnormal α (OUE's q at ε ≈ 709) makes w/α overflow to inf: the same expansion, so "over"
    # is expected here as "divide" is.
    wd = w if uw is None else uw  # the maxima over the distinct values are the maxima over all
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        g0 = np.where(wd > 0, wd / alpha if alpha > 0 else np.inf, 0.0) - np.where(wd < n, (n - wd) / (1 - alpha), 0.0)
        top = alpha + beta
        g1 = np.where(wd > 0, wd / top, 0.0) - np.where(wd < n, (n - wd) / (1 - top) if top < 1 else np.inf, 0.0)
    hi, lo = float(np.max(g0)), float(np.max(g1))
    lo -= 1e-9 * max(abs(lo), float(n), 1.0)  # so that rounding in x_v(lo) cannot make h(lo) < 0
    step = max(float(n), 1.0)
    if not np.isfinite(hi):
        hi = max(lo, 0.0) + step if np.isfinite(lo) else step
        while h(hi) > 0:
            hi += step
            step *= 2.0
    step = max(float(n), 1.0)
    if not np.isfinite(lo):
        lo = min(hi, 0.0) - step
        while h(lo) < 0:
            lo -= step
            step *= 2.0
    h_lo = h(lo)
    if h_lo == 0.0:
        mu = lo
    else:
        from scipy.optimize import brentq  # here, not at import: `import ldpopt` loads no scipy

        # xtol: μ lives on the scale of n; 1e-15 n is below the resolution of π_v(μ)
        mu, res = brentq(h, lo, hi, xtol=1e-15 * max(float(n), 1.0), rtol=4 * np.finfo(float).eps,
                         maxiter=max_iter, full_output=True, disp=False)
        if not res.converged:
            raise ConvergenceError(f"root-finding the KKT multiplier did not converge in {max_iter} "
                                   f"evaluations ({res.flag}); raise max_iter")
    f = fvals(mu, None) / beta
    return f / f.sum(), mu, nev


def _exact_multinomial(c: np.ndarray, a: float, q: float) -> tuple[np.ndarray, float]:
    """Closed form of argmax Σ c_v log(q + a f_v) on the simplex (module docstring)."""
    r = q / a
    cs = -np.sort(-c)
    k = np.arange(1, c.shape[0] + 1)
    lam = np.cumsum(cs) / (1.0 + k * r)
    kstar = int(np.flatnonzero(cs > lam * r)[-1])  # a prefix; non-empty as c_(1) > 0
    lam_star = float(lam[kstar])
    f = np.maximum((c - lam_star * r) / lam_star, 0.0)
    return f / f.sum(), lam_star
