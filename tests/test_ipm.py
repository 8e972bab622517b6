"""The interior-point route of smooth non-separable objectives (ldpopt.problems.solvers.ipm): against a tight
Clarabel referee with every linear constraint type (equalities, dense and sparse inequalities, active
Monotone rows, optimum values at 0), against a separable optimum from a 1-D dual bisection, status
``optimal`` from ldpopt's full check, the time limit, and the hand-over to the sequential-QP loop."""

from __future__ import annotations

import time
import warnings

import cvxpy as cp
import numpy as np
import pytest
import scipy.sparse as sp
from _count_estimates import oue_counts
from _referee import clarabel_referee

from ldpopt.problems import Box, Fixed, Monotone, Problem, Simplex, SmoothObjective, SubsetSum
from ldpopt.problems.constraints.partition import PartitionTotals
from ldpopt.problems.objectives.smooth import smooth_terms
from ldpopt.problems.solvers.ipm import DENSE_ROW, SOLVER, compile_rows, solve_ipm
from ldpopt.problems.solvers.sqp import solve_sqp

D = 200
EST = oue_counts(D, 200_000, seed=7)
PRIOR = np.full(D, 1.0 / D)
HALF = np.arange(0, D, 2)  # 100 values: a dense row (> DENSE_ROW entries)
TOP = np.argsort(-EST.f_tilde, kind="stable")[:20]


def kl_smooth(f, e):
    return cp.sum_squares(f - e.f_tilde) + 1e-3 * cp.sum(cp.kl_div(f, PRIOR)) + cp.sum_squares(f[1:] - f[:-1])


def quartic_smooth(f, e):
    """No log term: the values with f̃ well below 0 have their optimum at 0 (f ≥ 0 active)."""
    return cp.sum_squares(f - e.f_tilde) + cp.sum(cp.power(f, 4)) + 0.1 * cp.sum_squares(f[1:] - f[:-1])


CONSTRAINTS = {
    "simplex": lambda: [Simplex()],
    "subset ==": lambda: [Simplex(), SubsetSum(HALF, 0.45)],
    "subset <=": lambda: [Simplex(), SubsetSum(HALF, 0.3, sense="<=")],
    "subset >=": lambda: [Simplex(), SubsetSum(HALF, 0.7, sense=">=")],
    "box": lambda: [Simplex(), Box(upper=np.full(D, 0.008))],
    "monotone chain": lambda: [Simplex(), Monotone(order=np.arange(30))],
    "ranking pairs": lambda: [Simplex(), Monotone(pairs=np.column_stack([TOP[1:], TOP[:-1]]))],
    "partition": lambda: [Simplex(), PartitionTotals({"a": np.arange(50), "b": np.arange(50, 120)},
                                                     {"a": 0.2, "b": 0.35})],
    "fixed": lambda: [Simplex(), Fixed([3, 9], [0.02, 0.001])],
}


def _referee(func, cons):
    return clarabel_referee(func, EST, cons)


@pytest.mark.parametrize("cname", list(CONSTRAINTS))
@pytest.mark.parametrize("func", [kl_smooth, quartic_smooth], ids=["kl_smooth", "quartic_smooth"])
def test_interior_point_against_clarabel_with_each_constraint_type(func, cname):
    pr = Problem(EST, func, CONSTRAINTS[cname]())
    sol = pr.solve(progress=False)
    assert sol.solver == SOLVER and sol.status == "optimal"
    assert sol.checks.certified and not {"stationarity", "gap"} & set(sol.checks.not_run)
    assert set(sol.duals) == set(pr.constraint_names)
    ref = _referee(func, CONSTRAINTS[cname]())
    assert np.max(np.abs(sol.f - ref)) < 1e-7
    # never worse than the referee's point on the true J (to rounding)
    assert pr.objective.value(sol.f, EST) <= pr.objective.value(np.maximum(ref, 1e-300), EST) + 1e-12
    if func is quartic_smooth:  # values at 0: the nonnegativity rows are active
        assert np.sum(ref < 1e-9) >= 10 and np.max(sol.f[ref < 1e-9]) < 1e-8


def test_constraints_exercise_dense_and_active_rows():
    """The cases above reach both sides of the Newton system: dense rows (kept out of M) and active
    Monotone rows (values pooled at the optimum)."""
    pr = Problem(EST, kl_smooth, CONSTRAINTS["subset <="]())
    (A_E, _, A_I, _, *_), why = compile_rows(pr)
    assert why == "" and np.sum(np.diff(A_I.indptr) > DENSE_ROW) == 1 and A_E.shape[0] == 1
    f = Problem(EST, kl_smooth, CONSTRAINTS["monotone chain"]()).solve(progress=False).f
    assert np.sum(np.abs(np.diff(f[:30])) < 1e-12) >= 3  # ties: active rows


def _bisection(ft, dh, lo_log=-745.0):
    """Minimiser of Σ h_v(f_v) over the simplex from h_v' (increasing): f_v(t) = root of h_v'(f) = −t,
    0 when h_v'(0) + t ≥ 0, by 200 bisections in log f; t by 200 bisections for Σ f = 1."""
    def f_of(t):
        lo, hi = np.full(ft.size, lo_log), np.zeros(ft.size)
        for _ in range(200):
            mid = 0.5 * (lo + hi)
            pos = dh(np.exp(mid)) + t > 0
            hi, lo = np.where(pos, mid, hi), np.where(pos, lo, mid)
        return np.where(dh(0.0 * ft) + t >= 0, 0.0, np.exp(0.5 * (lo + hi)))

    tlo, thi = -10.0, 10.0
    for _ in range(200):
        t = 0.5 * (tlo + thi)
        tlo, thi = (t, thi) if f_of(t).sum() > 1.0 else (tlo, t)
    return f_of(0.5 * (tlo + thi))


@pytest.mark.parametrize("kind", ["quartic", "kl"])
def test_separable_declared_objective_against_dual_bisection(kind):
    """J = Σ (f − f̃)² + f⁴ (values at 0) or Σ (f − f̃)² + λ f log(f d) with λ = 1e-4 (values down to
    ~e^-60/d, far below any iterate: the multipliers' re-estimate carries them), declared with
    derivatives, so the route is the interior-point method; the exact optimum from the dual bisection."""
    ft = EST.f_tilde
    lam = 1e-4
    if kind == "quartic":
        h = (lambda f: np.sum((f - ft) ** 2 + f**4), lambda f: 2 * (f - ft) + 4 * f**3, lambda f: 2 + 12 * f**2)
        lower = None
    else:
        h = (lambda f: np.sum((f - ft) ** 2 + lam * f * np.log(f * D)), lambda f: 2 * (f - ft) + lam * (np.log(f * D) + 1),
             lambda f: 2 + lam / f)
        lower = 0.0
    obj = SmoothObjective(lambda f, e: float(h[0](f)), lambda f, e: h[1](f), lambda f, e: sp.diags(h[2](f)),
                          name=kind, lower=lower)
    sol = Problem(EST, obj).solve(progress=False)
    ref = _bisection(ft, h[1])
    assert sol.solver == SOLVER and sol.status == "optimal" and sol.checks.certified
    assert np.max(np.abs(sol.f - ref)) < 1e-9
    if kind == "quartic":
        assert np.sum(ref == 0) >= 10
    else:
        assert np.min(ref) < 1e-25 / D  # the regime where the sequential-QP loop needed ~10 QPs


def test_time_limit_stops_after_one_iteration_with_a_checked_point():
    pr = Problem(EST, kl_smooth, CONSTRAINTS["subset <="]())
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sol = pr.solve(time_limit=1e-3, progress=False)
    assert time.perf_counter() - t0 < 5.0
    assert sol.status == "time_limit" and sol.solver == SOLVER and sol.iterations == 1
    assert sol.checks is not None and np.all(np.isfinite(sol.f)) and "time limit" in sol.message


def test_a_constraint_that_is_not_linear_hands_over_to_the_qp_loop():
    """A second-order-cone constraint: the method declines (says why), records no attempt, and the
    sequential-QP loop over the cone chain takes the problem."""
    cons = [Simplex(), lambda f, e: [cp.norm(f[:10], 2) <= 0.01]]
    pr = Problem(EST, kl_smooth, cons)
    got, why = solve_ipm(pr, smooth_terms(pr.objective, EST), lambda ch: False)
    assert got is None and "not linear" in why
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sol = pr.solve(progress=False)
    assert sol.solver.startswith("SQP(") and not any(a.get("solver") == SOLVER for a in sol.attempts)


def test_the_qp_loop_alone_agrees_with_the_interior_point_route():
    pr = Problem(EST, kl_smooth, CONSTRAINTS["monotone chain"]())
    a = pr.solve(progress=False)
    b = solve_sqp(pr)
    assert a.solver == SOLVER and b.solver.startswith("SQP(") and a.status == b.status == "optimal"
    assert np.max(np.abs(a.f - b.f)) < 1e-8


def test_an_infeasible_user_constraint_stalls_and_is_decided_before_the_solve():
    """A user constraint no point of the simplex meets: the method, run on it directly, stops on its
    stall rule, well before its iteration limit; ``solve()`` never gets there — the user's affine row
    is in the exact pre-check, which names it."""
    pr = Problem(EST, kl_smooth, [Simplex(), lambda f, e: [f[0] + f[1] >= 1.5]])
    got, _ = solve_ipm(pr, smooth_terms(pr.objective, EST), lambda ch: False)
    assert got.status == "user_limit" and "stalled" in got.message and got.iterations < 40
    assert not got.checks.passed
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sol = pr.solve(progress=False)
    assert sol.status == "infeasible" and not sol.success
    assert [a["solver"] for a in sol.attempts] == ["LDPOPT-FEASIBILITY"] and "user[0]" in sol.infeasibility.names
