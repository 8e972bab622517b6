"""The objective side of ldpopt's check (:mod:`.verdict`): the gradient of any smooth objective, the
subgradient check and exact LP duality gap of ``l1``, the rounding floor of the error bound, and the
status a check earns.
Notes: docs/problems.md, "ldpopt.problems.check.objective_check".
"""

from __future__ import annotations

import cvxpy as cp
import numpy as np

from ..objectives.builtins import Objective, UserObjective
from .constraint_terms import _at, _gap_terms, _jacobian_t_y

__all__ = ["absorb_at_zero", "bound_rounding", "gradient_function", "l1_terms", "near_zero_allowance", "probe", "status_after_check",
           "unverified_reason"]

_EPS = np.finfo(float).eps


def gradient_function(problem):
    """(g, why): g(f) = ∇J(f) in numpy, or (None, why) when the objective has none (nonsmooth)."""
    obj = problem.objective
    if isinstance(obj, UserObjective) and type(obj).gradient is UserObjective.gradient:
        return (lambda f: _cvxpy_gradient(problem, f)), ""
    est = problem.estimate
    if type(obj).gradient is Objective.gradient:  # not overridden: no numpy gradient (l1)
        return None, f"objective {obj.name!r} has no gradient (nonsmooth)"
    return (lambda f: obj.gradient(f, est)), ""


def _cvxpy_gradient(problem, f: np.ndarray) -> np.ndarray:
    """∇J(f) of a user callable from cvxpy's ``grad`` (module docstring); NaN where cvxpy gives none."""
    x = problem.x
    expr = problem.cvxpy_problem.objective.expr
    with _at(problem, np.asarray(f, dtype=np.float64)):
        try:
            g = expr.grad.get(x) if expr.grad is not None else None
        except (TypeError, ValueError, ZeroDivisionError, FloatingPointError):
            g = None  # cvxpy's own grad failed at f (seen for kl_div at a conic solver's point): not run
    if g is None:
        return np.full(f.shape[0], np.nan)
    g = g.toarray() if hasattr(g, "toarray") else np.asarray(g)
    return np.asarray(g, dtype=np.float64).ravel() / (problem._multiplier * problem.scale)


def probe(gradient, f: np.ndarray, r: np.ndarray, where: np.ndarray, h: float):
    """(kink, newton) at the values ``where`` (module docstring): one-sided differences of the
    gradient over h_v = min(h, f_v/8) (f_v/8 keeps a log or entropy term inside its domain), d± =
    ±(∇J(f ± h_v) − ∇J(f))_v. ``kink``: the two sides differ by more than half the larger (a
    differentiable gradient gives d₊ ≈ d₋; a kink within h_v gives one side its whole jump; NaN
    counts as a kink). ``newton``: |r_v|/c_v with c_v = (d₊ + d₋)/(2h_v) the measured curvature,
    the change of f_v that would zero r_v (inf where c_v ≤ 0, and everywhere when the objective is
    coupled: moving every other probed value moves the gradient of a value not moved, so c_v would
    carry cross terms)."""
    hv = np.where(where, np.where(f > 0, np.minimum(h, f / 8.0), h), 0.0)
    with np.errstate(all="ignore"):
        g0 = gradient(f)
        up = (gradient(f + hv) - g0)
        down = (g0 - gradient(f - hv))
        kink = where & ~(np.abs(up - down) <= 0.5 * np.maximum(np.abs(up), np.abs(down)))
        curv = (up + down) / np.where(hv > 0, 2.0 * hv, 1.0)
        newton = np.where(where & (curv > 0), np.abs(r) / np.where(curv > 0, curv, 1.0), np.inf)
        # separable? move every other probed value only: no other value's gradient may move
        half = np.zeros_like(where)
        half[np.flatnonzero(where)[::2]] = True
        moved = np.abs(gradient(f + np.where(half, hv, 0.0)) - g0)
        coupled = np.any(~half & ~(moved <= 4 * _EPS * np.abs(g0)))
    if coupled:
        newton = np.full_like(newton, np.inf)
    return kink, np.where(where, newton, 0.0)


def near_zero_allowance(obj) -> bool:
    """True for the objectives whose failing stationarity residual gets the near-zero allowance
    (:func:`absorb_at_zero`, then :func:`probe`): a user's cvxpy callable and a declared
    :class:`~.smooth.SmoothObjective` — both may carry a log or entropy term steep at 0, and neither
    states where (the built-ins and ``SeparableObjective`` have exact per-value certificates instead)."""
    from ..objectives.smooth import SmoothObjective

    return isinstance(obj, (UserObjective, SmoothObjective))


def is_nonneg(owner, k: int) -> bool:
    """Whether the k-th constraint ``owner`` builds is f ≥ 0 itself (its g is −f)."""
    return owner.is_nonnegativity(k)


def absorb_at_zero(problem, f, duals, r, lag, where):
    """(r, Σ y·g) with the nonnegativity multipliers re-chosen at the values ``where`` (those whose
    residual fails) as y'_v = max(y_v + r_v, 0) (valid: ≥ 0; the Jacobian of g = −f is −I, so r_v
    drops to 0 wherever y'_v > 0, at a gap cost (y'_v − y_v)·f_v, which the gap check then sees). A
    user objective with a log or entropy term is steep near 0: an interior-point point f_v ~ 1e-12
    off an optimum at ~1e-100 leaves a gradient residual of order 1 against the solver's
    multiplier, which this choice absorbs at a gap cost ~1e-12. The KKT check with these
    multipliers is as valid as with the solver's (the same choice as :func:`.kkt_bound.error_bound`'s)."""
    for name, (owner, k) in problem._owners.items():
        if is_nonneg(owner, k):
            y = np.broadcast_to(np.asarray(duals[name], dtype=np.float64), r.shape)
            y_new = np.where(where, np.maximum(y + r, 0.0), y)
            r = r + y - y_new
            lag = lag - float(np.sum((y_new - y) * f))
    return r, lag


def _equality(problem, name: str, f: np.ndarray) -> bool:
    from ..constraints.jacobians import builtin_g

    owner, k = problem._owners[name]
    got = builtin_g(owner, k, f, f.shape[0])
    if got is not None:
        return bool(got[1])
    return isinstance(problem._named[name], (cp.constraints.Zero, cp.constraints.Equality))


def l1_terms(problem, f: np.ndarray, duals: dict, jty: np.ndarray, h: float) -> tuple[float, float, float]:
    """(stationarity, relative exact gap, dual infeasibility) of ``l1`` at (f, duals) (module
    docstring); ``jty`` = Σ_k ∇g_k(f)ᵀ y_k."""
    est = problem.estimate
    diff = f - est.f_tilde
    z = -jty
    at_kink = np.abs(diff) <= h
    dist = np.where(at_kink, np.maximum(np.abs(z) - 1.0, 0.0), np.abs(z - np.sign(diff)))
    stationarity = float(np.max(dist, initial=0.0))
    clipped = {}
    for name, y in duals.items():
        y = np.asarray(y, dtype=np.float64)
        clipped[name] = y if _equality(problem, name, f) else np.maximum(y, 0.0)
    jty_c, _ = _jacobian_t_y(problem, f, clipped)
    c = max(1.0, float(np.max(np.abs(jty_c), initial=0.0)))
    scaled = {name: y / c for name, y in clipped.items()}
    dual_value, _ = _gap_terms(problem, np.asarray(est.f_tilde, dtype=np.float64), scaled)
    _, dual_inf = _gap_terms(problem, f, duals)
    gap = problem.objective.value(f, est) - dual_value
    return stationarity, max(gap, 0.0) / max(float(np.sum(np.abs(f))), np.finfo(float).tiny), dual_inf


def bound_rounding(grad: np.ndarray, jty: np.ndarray, lag_terms: float, mu: float, f: np.ndarray,
                   bound) -> float:
    """The float64 rounding level added to the error bound (module docstring). ``lag_terms`` =
    Σ_k |y_k·g_k(f)|; ``bound(r, gap, mu)`` the bound of :mod:`.verdict`."""
    r = 8 * _EPS * (np.abs(grad) + np.abs(jty))
    gap = 8 * _EPS * lag_terms
    return float(bound(r, gap, mu)) + _EPS * float(np.max(np.abs(f), initial=0.0))


def status_after_check(solver_status: str, checks) -> str:
    """The status a solver's answer earns from ldpopt's check: ``"optimal"`` when the check passed
    with stationarity and the duality gap run (:attr:`~.verdict.Checks.certified`);
    ``"optimal_unverified"`` when it passed but one of them could not be run (``checks.not_run``
    says why: only feasibility was certified); ``"inaccurate"`` when a solver said optimal and the
    check failed; any other solver status unchanged (``"optimal_inaccurate"`` with a failed or
    partial check stays so)."""
    if solver_status not in ("optimal", "optimal_inaccurate") or checks is None:
        return solver_status
    if checks.passed and checks.certified:
        return "optimal"
    if solver_status == "optimal_inaccurate":
        return solver_status
    return "optimal_unverified" if checks.passed else "inaccurate"


def unverified_reason(checks) -> str:
    """One line: what was certified and what was not (for ``optimal_unverified``)."""
    why = "; ".join(f"{k}: {v}" for k, v in checks.not_run.items() if k in ("stationarity", "gap"))
    return f"feasible to ldpopt's check ({checks.summary()}), optimality not verified — {why}"
