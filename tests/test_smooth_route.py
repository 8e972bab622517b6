"""Smooth non-separable objectives by Newton / sequential QP: a recognised cvxpy callable and a declared
SmoothObjective against a tight Clarabel referee and an analytic optimum, over the simplex, a SubsetSum
and a Monotone chain; the route named; the time limit honoured."""

from __future__ import annotations

import time
import warnings

import cvxpy as cp
import numpy as np
import pytest
import scipy.sparse as sp
from _count_estimates import oue_counts
from _referee import clarabel_referee

from ldpopt.problems import Monotone, Problem, Simplex, SmoothObjective, SubsetSum
from ldpopt.problems.solvers.ipm import SOLVER as IPM_SOLVER

D = 200
EST = oue_counts(D, 200_000, seed=5)
PRIOR = np.full(D, 1.0 / D)
LAM = 1e-3
DIFF = sp.diags([-np.ones(D - 1), np.ones(D - 1)], [0, 1], shape=(D - 1, D)).tocsr()

VARIANTS = {
    "kl_smooth": lambda f, e: (cp.sum_squares(f - e.f_tilde) + LAM * cp.sum(cp.kl_div(f, PRIOR))
                               + cp.sum_squares(f[1:] - f[:-1])),
    "entropy_smooth": lambda f, e: (cp.sum_squares(f - e.f_tilde) - LAM * cp.sum(cp.entr(f))
                                    + 0.5 * cp.sum_squares(f[1:] - f[:-1])),
}
SUBSET = np.arange(0, D, 3)
CONSTRAINTS = {
    "simplex": lambda: [Simplex()],
    "subset": lambda: [Simplex(), SubsetSum(SUBSET, 0.3)],
    "monotone": lambda: [Simplex(), Monotone(order=np.arange(20))],
}


def _referee(func, cons):
    return clarabel_referee(func, EST, cons)


@pytest.mark.parametrize("cname", sorted(CONSTRAINTS))
@pytest.mark.parametrize("vname", sorted(VARIANTS))
def test_recognised_smooth_objective_solved_by_newton_against_clarabel(vname, cname):
    func = VARIANTS[vname]
    pr = Problem(EST, func, CONSTRAINTS[cname]())
    assert "Newton / sequential QP" in pr.objective_route
    sol = pr.solve(progress=False)
    assert sol.status == "optimal" and sol.solver == IPM_SOLVER
    assert sol.checks.certified and not {"stationarity", "gap"} & set(sol.checks.not_run)
    assert set(sol.duals) == set(pr.constraint_names)
    ref = _referee(func, CONSTRAINTS[cname]())
    assert np.max(np.abs(sol.f - ref)) < 1e-7
    # never worse than the referee's point on the true J (to rounding)
    assert pr.objective.value(sol.f, EST) <= pr.objective.value(np.maximum(ref, 1e-300), EST) + 1e-12


def test_analytic_optimum_is_the_prior():
    """J = ‖f − p‖² + λ·KL(f‖p) + Σ((f_{v+1} − f_v) − (p_{v+1} − p_v))² ≥ 0 with J(p) = 0: f* = p, also
    under a SubsetSum at p's own total."""
    p = np.random.default_rng(0).dirichlet(np.ones(D) * 2)
    func = lambda f, e: (cp.sum_squares(f - p) + LAM * cp.sum(cp.kl_div(f, p))  # noqa: E731
                         + cp.sum_squares((f[1:] - f[:-1]) - (p[1:] - p[:-1])))
    sol = Problem(EST, func, [Simplex(), SubsetSum(SUBSET, float(p[SUBSET].sum()))]).solve(progress=False)
    assert sol.status == "optimal"
    assert np.max(np.abs(sol.f - p)) < 1e-9


#: the declared objective's KL weight: large enough that no optimal value is within 1e-10 of 0
LAM_D = 0.05


def _kl_smooth(f, e, lam=LAM_D):
    return cp.sum_squares(f - e.f_tilde) + lam * cp.sum(cp.kl_div(f, PRIOR)) + cp.sum_squares(f[1:] - f[:-1])


def _declared(cvxpy_expr=None, lam=LAM_D, floor=None):
    ft = EST.f_tilde

    def value(f, e):
        r = DIFF @ f
        return float(np.sum((f - ft) ** 2) + lam * np.sum(f * np.log(f / PRIOR) - f + PRIOR) + r @ r)

    def gradient(f, e):
        return 2 * (f - ft) + lam * np.log(f / PRIOR) + 2 * (DIFF.T @ (DIFF @ f))

    def hessian(f, e):
        return sp.diags(2.0 + lam / f) + 2 * (DIFF.T @ DIFF)

    return SmoothObjective(value, gradient, hessian, cvxpy_expr, name="kl_smooth", lower=0.0, curvature_floor=floor)


def test_declared_kl_with_values_at_zero_is_checked_like_the_callable():
    """λ = 1e-5: optimal values down to ~e^-600 (f̃_v ≈ −0.006), far below any point an iteration
    reaches; the declared objective gets the same near-zero allowance as the cvxpy callable, so both
    are certified and agree."""
    lam = 1e-5
    declared = Problem(EST, _declared(lam=lam), CONSTRAINTS["subset"]()).solve(progress=False)
    recognised = Problem(EST, lambda f, e: _kl_smooth(f, e, lam), CONSTRAINTS["subset"]()).solve(progress=False)
    assert float(np.min(declared.f)) < 5e-9  # values at 0 to the check's violation tolerance 1e-6/d
    assert declared.status == recognised.status == "optimal" and declared.checks.certified
    # both within the check's accuracy tolerance 1e-2/d = 5e-5 of f*; they agree far inside it
    assert np.max(np.abs(declared.f - recognised.f)) < 1e-6


def test_error_bound_of_smooth_objectives_against_a_known_optimum():
    """J = ‖f − c‖² + Σ(f_{v+1} − f_v)² with c = p + DᵀD p (p > 0, Σ p = 1): ∇J(p) = 0, so f* = p on the
    simplex. The recognised callable's bound (curvature 2 on the whole domain) and a declared one's
    (curvature_floor = 2) hold against p, are within the accuracy tolerance, and never below the point's
    own rounding (one ulp of its largest entry)."""
    p = np.random.default_rng(3).dirichlet(np.ones(D) * 3)
    c = p + DIFF.T @ (DIFF @ p)
    func = lambda f, e: cp.sum_squares(f - c) + cp.sum_squares(f[1:] - f[:-1])  # noqa: E731
    declared = SmoothObjective(lambda f, e: float(np.sum((f - c) ** 2) + np.sum((DIFF @ f) ** 2)),
                               lambda f, e: 2 * (f - c) + 2 * (DIFF.T @ (DIFF @ f)),
                               lambda f, e: sp.diags(np.full(D, 2.0)) + 2 * (DIFF.T @ DIFF),
                               curvature_floor=lambda f, e: 2.0)
    for obj in (func, declared):
        sol = Problem(EST, obj, [Simplex()]).solve(progress=False)
        assert sol.status == "optimal" and sol.checks.error_bound is not None
        err = float(np.max(np.abs(sol.f - p)))
        assert err <= sol.checks.error_bound <= 1e-2 / D
        assert sol.checks.error_bound >= np.finfo(float).eps * float(np.max(sol.f))
    # Huber is not strongly convex: no bound, and the check says why
    hub = Problem(EST, lambda f, e: cp.sum(cp.huber(f - e.f_tilde, 1e-3)), [Simplex()]).solve(progress=False)
    assert hub.checks.error_bound is None and "strongly convex" in hub.checks.not_run["error_bound"]


@pytest.mark.parametrize("cname", ["subset", "monotone"])
def test_declared_smooth_objective_matches_the_recognised_callable(cname):
    declared = Problem(EST, _declared(), CONSTRAINTS[cname]())
    recognised = Problem(EST, _kl_smooth, CONSTRAINTS[cname]())
    a, b = declared.solve(progress=False), recognised.solve(progress=False)
    assert a.status == b.status == "optimal" and a.solver == IPM_SOLVER
    assert a.checks.certified and not {"stationarity", "gap"} & set(a.checks.not_run)
    assert np.max(np.abs(a.f - b.f)) < 1e-9
    assert np.max(np.abs(a.f - _referee(_kl_smooth, CONSTRAINTS[cname]()))) < 1e-7


def test_declared_smooth_objective_errors_and_solver_by_name():
    with pytest.raises(TypeError, match="hessian must be callable"):
        SmoothObjective(lambda f, e: 0.0, lambda f, e: f, None)
    pr = Problem(EST, _declared())  # no cvxpy_expr: only the Newton route
    with pytest.raises(ValueError, match="solver: objective 'kl_smooth' has no cvxpy_expr"):
        pr.solve(solver="CLARABEL")
    bad = SmoothObjective(lambda f, e: 0.0, lambda f, e: np.zeros(D), lambda f, e: np.eye(D))
    with pytest.raises(ValueError, match="hessian of 'smooth' must return"):
        Problem(EST, bad).solve(progress=False)
    # with a cvxpy expression, a named conic solver solves the same J
    with warnings.catch_warnings():  # Clarabel's own point need not pass ldpopt's check: only compared
        warnings.simplefilter("ignore")
        ref = Problem(EST, _declared(_kl_smooth)).solve(solver="CLARABEL", progress=False)
    own = pr.solve(progress=False)
    assert own.status == "optimal" and np.max(np.abs(own.f - ref.f)) < 1e-6


def test_time_limit_is_honoured():
    pr = Problem(EST, VARIANTS["entropy_smooth"], CONSTRAINTS["subset"]())
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sol = pr.solve(time_limit=1e-3, progress=False)
    assert time.perf_counter() - t0 < 5.0
    assert sol.status == "time_limit" and sol.iterations == 1  # one QP, then the clock stops the loop
    assert "time limit" in sol.message


def test_start_keeps_the_first_qp_feasible_when_the_noise_is_large():
    """Σ clip(f̃, 0, 1) ≫ 1 (few users, many values): the start sums to ≤ 1, so the first QP's
    fraction-to-the-boundary box (f ≥ 0.1 f₀) fits under the simplex and its first solver answers."""
    from ldpopt.problems.objectives.smooth import smooth_terms
    from ldpopt.problems.solvers.sqp import solve_sqp

    d = 5000
    est = oue_counts(d, 20_000, seed=2)
    assert np.clip(est.f_tilde, 0, 1).sum() > 20  # unscaled, 0.1·½(Σ clip + 1) > 1: an infeasible box
    pr = Problem(est, lambda f, e: (cp.sum_squares(f - e.f_tilde) + 1e-3 * cp.sum(cp.kl_div(f, np.full(d, 1 / d)))
                                    + cp.sum_squares(f[1:] - f[:-1])), [Simplex()])
    f0 = smooth_terms(pr.objective, est).start()
    assert np.all(f0 > 0) and f0.sum() <= 1.0
    sol = solve_sqp(pr, max_iter=1)  # the QP loop itself (Problem.solve runs the interior-point route first)
    assert sol.attempts[0]["qp_attempts"] == ["optimal"]
