"""The error bound of :mod:`.checks` where the certificate does not apply (user constraints): for a
μ-strongly convex J, the stationarity residual r and the gap |Σ y·g(f)| give
μ/2·e² ≤ ‖r‖₂·e + gap, e = ‖f − f*‖₂, so e ≤ (‖r‖₂ + √(‖r‖₂² + 2μ·gap))/μ; the multipliers of f ≥ 0
may be re-chosen (any y ≥ 0 gives a valid bound), and a simplex-only problem is also bounded through
a polished point."""

from __future__ import annotations

import numpy as np

from .objective_check import is_nonneg

__all__ = ["curvature", "error_bound", "residual_bound"]


def curvature(obj, gfun, f: np.ndarray, est) -> float:
    """Smallest diagonal of ∇²J at f (built-ins and SeparableObjective are separable): the declared
    second derivative ``d2h`` where there is one, else a central difference of the analytic
    gradient; 0 when not strongly convex or not computable. An objective that is not separable
    states its own modulus (``curvature_floor``, e.g. :class:`.user_forms.SmoothUserObjective`)."""
    if hasattr(obj, "curvature_floor"):
        return obj.curvature_floor(f, est)
    h = 1e-6 / f.shape[0]
    lo = np.maximum(f - h, 0.0)
    with np.errstate(all="ignore"):
        if getattr(obj, "d2h", None) is not None:
            hess = np.asarray(obj.d2h(f, est), dtype=np.float64)
        else:
            hess = (gfun(lo + 2 * h) - gfun(lo)) / (2 * h)
    if not np.all(np.isfinite(hess)):
        return 0.0
    return max(float(np.min(hess)), 0.0)


def residual_bound(r: np.ndarray, lag: float, mu: float) -> float:
    """(‖r‖₂ + √(‖r‖₂² + 2μ·|lag|))/μ: the bound on ‖f − f*‖₂ of the module docstring."""
    rn = float(np.linalg.norm(r))
    return (rn + np.sqrt(rn * rn + 2.0 * mu * abs(lag))) / mu


def error_bound(problem, f, duals, r, lag, mu) -> float:
    """The bound of the module docstring (:mod:`.checks`, "error bound"), with the solver's multipliers and with re-chosen ones.

    The bound holds for *any* multipliers with y ≥ 0 on the inequalities, so the nonnegativity
    multipliers (Jacobian −I) may be re-chosen per value among {the solver's y⁺, max(y + r, 0)
    (zero residual), 0 (zero gap)}, whichever costs least in r² + 2μ·y·f; the smaller bound is kept.
    An interior-point solver leaves y_v·f_v ≈ its barrier parameter at every value, which sums to
    a gap that overstates the error by orders of magnitude; the re-chosen y removes that.
    """
    best = residual_bound(r, lag, mu)
    r2, lag2 = r.copy(), lag
    fpos = np.maximum(f, 0.0)
    changed = False
    for name, (owner, k) in problem._owners.items():
        if not is_nonneg(owner, k):
            continue
        y = np.asarray(duals[name], dtype=np.float64)
        cand = np.stack([np.maximum(y, 0.0), np.maximum(y + r2, 0.0), np.zeros_like(y)])
        res = r2[None, :] + y[None, :] - cand  # the Jacobian of g = −f is −I
        cost = res**2 + 2.0 * mu * cand * fpos[None, :]
        yh = cand[np.argmin(cost, axis=0), np.arange(y.shape[0])]
        r2 = r2 + y - yh
        lag2 = lag2 + float(np.sum((y - yh) * f))  # y·g with g = −f
        changed = True
    best = min(best, residual_bound(r2, lag2, mu)) if changed else best
    polished = _polished_bound(problem, f, duals, mu)
    return best if polished is None else min(best, polished)


def _simplex_only(problem) -> str | None:
    """Name of the nonnegativity constraint when the constraints are exactly f ≥ 0, Σ f = 1 (the plain
    simplex of :func:`.structured.structure.compile_constraints`)."""
    from .structured.structure import _names, _plain_simplex

    st = _plain_simplex(problem.constraints, _names(problem.constraints), problem.estimate.d)
    return None if st is None or st.total != 1.0 else next(n for n, s in st.duals.items() if s[0] == "lower")


def _polished_bound(problem, f, duals, mu) -> float | None:
    """Simplex-only problems: certify a polished point f̂ instead and add ‖f − f̂‖₂ (triangle
    inequality). f̂ zeroes the values the solver's multipliers call active (y_v > μ·f_v) and puts
    their mass back on the support in proportion to 1/curvature (a Newton step of the sum); at the
    feasible f̂ the multipliers are re-chosen (sum: −mean ∇J on the support; y_v = (∇J_v + y_sum)₊
    off it), so the gap is 0 and e ≤ 2‖r(f̂)‖₂/μ."""
    name = _simplex_only(problem)
    if name is None:
        return None
    obj, est = problem.objective, problem.estimate
    y = np.asarray(duals[name], dtype=np.float64)
    zero = (y > mu * np.maximum(f, 0.0)) | (f <= 0)
    supp = ~zero
    if not supp.any():
        return None
    fh = np.where(zero, 0.0, f)
    with np.errstate(all="ignore"):
        h = 1e-6 / f.shape[0]
        curv = (obj.gradient(fh + h, est) - obj.gradient(fh, est)) / h
    w = np.where(supp & np.isfinite(curv) & (curv > 0), 1.0 / np.where(curv > 0, curv, 1.0), 0.0)
    if not w.any():
        return None
    fh = fh + (1.0 - float(np.sum(fh))) * w / float(np.sum(w))
    if np.any(fh < 0):
        return None
    with np.errstate(all="ignore"):
        g = obj.gradient(fh, est)
    if not np.all(np.isfinite(g[supp])):
        return None
    ysum = -float(np.mean(g[supp]))
    r = np.where(supp, g + ysum, np.minimum(g + ysum, 0.0))
    if not np.all(np.isfinite(r)):
        return None
    return float(np.linalg.norm(f - fh)) + 2.0 * float(np.linalg.norm(r)) / mu
