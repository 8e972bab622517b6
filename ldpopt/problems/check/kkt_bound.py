"""The error bound of :mod:`.verdict` where the certificate does not apply (user constraints): for a
μ-strongly convex J, the stationarity residual r and the gap |Σ y·g(f)| give
μ/2·e² ≤ ‖r‖₂·e + gap, e = ‖f − f*‖₂, so e ≤ (‖r‖₂ + √(‖r‖₂² + 2μ·gap))/μ; the multipliers of f ≥ 0
may be re-chosen (any y ≥ 0 gives a valid bound), and a simplex-only problem is also bounded through
a polished point.
Notes: docs/problems.md, "ldpopt.problems.check.kkt_bound".
"""

from __future__ import annotations

import numpy as np

from .objective_check import is_nonneg

__all__ = ["affine_projection", "curvature", "error_bound", "feasible_near", "residual_bound"]


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


def error_bound(problem, f, duals, r, lag, mu) -> float | None:
    """The bound of the module docstring (:mod:`.verdict`, "error bound"), with the solver's multipliers and with re-chosen ones.

    The bound holds for *any* multipliers with y ≥ 0 on the inequalities, so the nonnegativity
    multipliers (Jacobian −I) may be re-chosen per value among {the solver's y⁺, max(y + r, 0)
    (zero residual), 0 (zero gap)}, whichever costs least in r² + 2μ·y·f; the smaller bound is kept.
    An interior-point solver leaves y_v·f_v ≈ its barrier parameter at every value, which sums to
    a gap that overstates the error by orders of magnitude; the re-chosen y removes that.

    None (no bound) when f is off its constraints beyond rounding and no feasible point near it is
    made (:func:`feasible_near`): the gap bounds J* − L(f) only through such a point.
    """
    near = _off_gap(problem, f, duals, r)
    if near is False:
        return None
    if near is not None:
        gap_at = near
        lag = gap_at(r, 0.0)
    best = residual_bound(r, lag, mu)
    r2, lag2 = r.copy(), lag
    shift = 0.0  # Σ (ŷ − y)·f̂ over the re-chosen nonnegativity multipliers
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
        if near is not None:
            shift += float(np.sum((yh - y) * near.fh))
        changed = True
    if changed and near is not None:
        lag2 = gap_at(r2, shift)
    best = min(best, residual_bound(r2, lag2, mu)) if changed else best
    polished = _polished_bound(problem, f, duals, mu)
    return best if polished is None else min(best, polished)


def _simplex_only(problem) -> str | None:
    """Name of the nonnegativity constraint when the constraints are exactly f ≥ 0, Σ f = 1 (the plain
    simplex of :func:`.structured.structure.compile_constraints`)."""
    from ..solvers.structured.structure import dual_names, plain_simplex_structure

    st = plain_simplex_structure(problem.constraints, dual_names(problem.constraints), problem.estimate.d)
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


class _OffGap:
    """gap(r_c, shift) = max(∇L_c(f̂)·(f̂ − f) − Σ y_c·g(f̂), 0) + its rounding, for multipliers y_c
    whose nonnegativity part differs from the solver's by ŷ − y (shift = Σ (ŷ − y)·f̂; g = −f there)."""

    def __init__(self, fh, delta, dgrad, yg):
        self.fh, self.delta, self.dgrad, self.yg = fh, delta, dgrad, yg

    def __call__(self, r, shift):
        terms = (r + self.dgrad) * self.delta
        val = float(np.sum(terms)) - (self.yg - shift)
        size = float(np.sum(np.abs(terms))) + abs(self.yg) + abs(shift)
        return max(val, 0.0) + 4 * self.delta.shape[0] * np.finfo(float).eps * size


def _off_gap(problem, f, duals, r):
    """The gap of the module docstring for a point off its constraints, as a function of the
    multipliers (:class:`_OffGap`); None when f is on them to rounding, False when it is off them and
    no f̂ is made (or ∇J is not finite there)."""
    from .constraint_terms import _gap_terms
    from .objective_check import gradient_function

    fh = feasible_near(problem, f)
    if fh is None:
        return False
    if fh is f:
        return None
    gfun, _ = gradient_function(problem)
    if gfun is None:
        return False
    with np.errstate(all="ignore"):
        dgrad = np.asarray(gfun(fh), float) - np.asarray(gfun(f), float)
    if not np.all(np.isfinite(dgrad)):
        return False
    yg, _ = _gap_terms(problem, fh, duals)
    return _OffGap(fh, fh - f, dgrad, yg)


def feasible_near(problem, f):
    """``f`` itself when it is on its constraints to the rounding of evaluating them; else a feasible
    point near f (to rounding): for the built-in block structures by rescaling
    (:func:`.certificate.feasible_near_blocks`), for any other set of linear constraints
    (built-in rows and a user's affine rows) by the projection of :func:`affine_projection`; None
    when neither gives one (a user's non-affine constraint, a projection that leaves a bound)."""
    from ..solvers.structured.structure import Structure, compiled_for
    from .certificate import feasible_near_blocks

    try:
        st = compiled_for(problem)
    except Exception:  # noqa: BLE001 - constraints the structured solver does not compile
        st = None
    if isinstance(st, Structure) and not st.sum_free:
        got = feasible_near_blocks(st, f)
        if got is not None:
            return got
    return affine_projection(problem, f)


def affine_projection(problem, f):
    """:func:`.certificate.project_on_rows` on every linear constraint of ``problem`` (the
    built-in rows and a user's affine rows, :func:`.feasibility.linear_system`). A constraint that is
    not linear (a user's cone) is met when its cvxpy violation is ≤ 8ε·max(1, ‖f‖₁) (a choice: its
    evaluation's rounding is not known); when any constraint is not linear, f itself is the only
    candidate (a projection on the linear rows may leave the others): None unless f meets them all."""
    from ..constraints.feasibility import linear_system
    from .certificate import project_on_rows
    from .constraint_terms import constraint_violations

    lo, up, A, b, ineq, complete = linear_system(problem)
    f = np.asarray(f, float)
    if complete:
        return project_on_rows(f, A, b, ineq, lo, up)
    from ..constraints.base import UserConstraint

    viol = constraint_violations(problem, f)
    tiny = 8 * np.finfo(float).eps * max(1.0, float(np.sum(np.abs(f))))
    user_ok = all(viol[n] is not None and viol[n] <= tiny
                  for n, (c, _) in problem._owners.items() if isinstance(c, UserConstraint))
    return f if user_ok and project_on_rows(f, A, b, ineq, lo, up, move=False) is f else None
