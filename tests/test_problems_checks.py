"""ldpopt's own check of every Solution, the solver chain and its fallback (issue 11 item 1).

References are independent of the solvers: Norm-Sub and its closed-form KKT multipliers for CLS on
the simplex (Wang et al. App. B: f = max(f̃ − c, 0), y_sum = 2c, y_nn = 2(c − f̃)₊), and points
planted off by the frequency scale 1/(10d).
"""

from __future__ import annotations

import warnings

import cvxpy as cp
import numpy as np
import pytest
from conftest import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from ldpopt import oracles, postprocess
from ldpopt.problems import NonNegative, Problem, Simplex, SolverFailedError, SolverWarning, SubsetSum
from ldpopt.problems.check.verdict import accuracy_tol, check_solution, feasible_point, violation_tol
from ldpopt.problems.solvers.policy import CONE_CHAIN, LIKELIHOOD_CHAIN, QP_CHAIN, default_chain


def _est(oracle="oue", eps=1.0, d=200, n=10**5, seed=0):
    rng = np.random.default_rng(seed)
    w = 1.0 / np.arange(1, d + 1) ** 1.1
    return oracles.get(oracle, epsilon=eps, d=d).simulate(rng.multinomial(n, w / w.sum()), rng)


def _norm_sub_with_duals(est):
    f = postprocess(est, "norm-sub")
    on = f > 0
    c = float(np.mean(est.f_tilde[on] - f[on]))  # the shift of Norm-Sub
    return f, {"nonnegative": 2.0 * np.maximum(c - est.f_tilde, 0.0) * ~on, "sum": 2.0 * c}


def test_check_passes_the_closed_form_with_its_own_multipliers():
    est = _est()
    P = Problem(est, "cls")
    f, duals = _norm_sub_with_duals(est)
    ch = check_solution(P, f, duals)
    assert ch.passed, ch.failed
    assert ch.max_violation <= 1e-15 and ch.stationarity <= 1e-12 and ch.error_bound <= 1e-12
    assert ch.tolerance["violation"] == violation_tol(est.d) == 1e-6 / est.d


def test_check_catches_a_point_off_by_a_tenth_of_the_frequency_scale():
    est = _est()
    P = Problem(est, "cls")
    f, duals = _norm_sub_with_duals(est)
    g = f.copy()
    i, j = np.argsort(-f)[:2]
    g[i] += 0.1 / est.d  # mass moved between two values: still on the simplex
    g[j] -= 0.1 / est.d
    ch = check_solution(P, g, duals)
    assert not ch.passed and ch.max_violation <= 1e-15
    assert ch.error_bound >= 0.1 / est.d > accuracy_tol(est.d)  # the bound is a bound
    assert "KKT not certified" in ch.failed[0]


def test_check_catches_a_violation_in_frequency_units():
    est = _est()
    P = Problem(est, "cls", [Simplex(), SubsetSum([0, 1], 0.3, "<=")])
    f = np.full(est.d, 1.0 / est.d)
    f[0], f[1] = 0.2, 0.1 + 1e-5  # subset sum 0.3 + 1e-5
    f[2:] = (1.0 - f[0] - f[1]) / (est.d - 2)
    ch = check_solution(P, f, None)
    assert ch.violations["subset_sum"] == pytest.approx(1e-5, rel=1e-6)
    assert not ch.passed and "constraint residual" in ch.failed[0] and "subset_sum" in ch.failed[0]
    assert "stationarity" in ch.not_run  # no duals given: said, not pretended


def test_solve_reports_checks_and_the_solver_for_every_objective():
    est = _est(d=50, n=10**4)
    user_cls = lambda f, e: cp.sum_squares(f - e.f_tilde)  # noqa: E731  (recognised: separable)
    user_l1 = lambda f, e: cp.norm1(f - e.f_tilde)  # noqa: E731  (not recognised: the cvxpy chain)
    for obj in ("cls", "weighted-mle", "l1", user_cls, user_l1):
        sol = Problem(est, obj).solve(strict=True)
        # smooth separable objectives (built-in or a recognised callable): ldpopt's structured solver;
        # l1 / unrecognised user objectives: the cvxpy chain
        want = ("LDPOPT-STRUCTURED",) if obj in ("cls", "weighted-mle", user_cls) else QP_CHAIN + CONE_CHAIN
        assert sol.solver in want and sol.checks.passed
        assert sol.attempts and sol.attempts[-1]["status"] == "optimal"
        assert sol.checks.max_violation <= violation_tol(est.d)
        # every objective: stationarity and the gap were run (l1: subgradient check, exact LP gap;
        # the user callable: cvxpy's gradient), not skipped
        assert sol.checks.certified and sol.checks.stationarity is not None and sol.checks.gap is not None
        assert "stationarity" not in sol.checks.not_run and "gap" not in sol.checks.not_run


def test_default_chains_by_problem_class():
    est = _est(d=20, n=1000)
    assert default_chain(Problem(est, "cls")) == QP_CHAIN
    assert default_chain(Problem(est, "weighted-mle")) == CONE_CHAIN
    assert default_chain(Problem(est, "binomial")) == LIKELIHOOD_CHAIN  # below policy.SQP_MIN_D


def test_known_feasible_problem_is_never_reported_infeasible():
    """A solver that says "infeasible" on the simplex (OSQP at the old scale s = σ ≪ 1/d does) is a
    solver failure; the next solver in the chain answers, and every attempt is recorded."""
    est = _est("oue", 4.0, 300, 10**9, 3)
    P = Problem(est, "cls", scale=est.sigma)
    assert feasible_point(P) is not None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SolverWarning)
        alone = P.solve("OSQP")
    assert alone.attempts[0]["status"] == "infeasible"  # what OSQP said ...
    assert alone.status == "solver_error" and "feasible point" in alone.message  # ... is not reported
    with pytest.raises(SolverFailedError):
        P.solve("OSQP", strict=True)
    chained = P.solve(["OSQP", "CLARABEL"], strict=True)
    assert [a["status"] for a in chained.attempts] == ["infeasible", "optimal"]
    assert chained.solver == "CLARABEL"
    np.testing.assert_allclose(chained.f, postprocess(est, "norm-sub"), atol=1e-6 / est.d)


def test_really_infeasible_stays_infeasible():
    est = _est(d=30, n=10**4)
    cons = [Simplex(), SubsetSum([0, 1, 2], 0.7, ">="), SubsetSum([0, 1, 2], 0.2, "<=")]
    P = Problem(est, "cls", cons)
    assert feasible_point(P) is None
    with pytest.warns(SolverWarning, match="infeasible"):
        sol = P.solve()
    # decided exactly before any solver (ldpopt.problems.constraints.feasibility): the two rows and f >= 0 conflict
    assert sol.status == "infeasible" and [a["solver"] for a in sol.attempts] == ["LDPOPT-FEASIBILITY"]
    assert sol.infeasibility.names == ["subset_sum", "subset_sum_1"]
    # also when a solver is named: no solver is asked a question whose answer is already proved
    with pytest.warns(SolverWarning, match="infeasible"):
        assert P.solve(solver=list(QP_CHAIN)).attempts[0]["solver"] == "LDPOPT-FEASIBILITY"


def test_inaccurate_optimal_falls_back_and_records_attempts():
    """SCS at eps 1e-2 says "optimal" with a point far outside ldpopt's tolerances: the attempt is
    recorded as "inaccurate" and the next solver answers."""
    est = _est(d=400, n=10**6, seed=4)
    P = Problem(est, "weighted-mle")
    sol = P.solve(["SCS", "CLARABEL"], SCS={"eps_abs": 1e-2, "eps_rel": 1e-2})  # optimal: no warning
    assert sol.attempts[0]["solver"] == "SCS" and sol.attempts[0]["status"] == "inaccurate"
    assert sol.status == "optimal" and sol.solver == "CLARABEL" and sol.checks.passed


def test_answer_does_not_depend_on_call_history():
    a, b = _est(d=300, seed=1), _est("grr", 2.0, 300, 10**4, seed=2)
    first = Problem(b, "cls").solve().f
    Problem(a, "cls").solve()
    pb = Problem(b, "cls")
    again = pb.solve().f
    twice = pb.solve().f  # same object, solved again: no warm start either
    np.testing.assert_array_equal(first, again)
    np.testing.assert_array_equal(again, twice)


def test_nonnegative_alone_is_not_known_feasible_for_the_sum_but_simplex_is():
    est = _est(d=10, n=1000)
    assert feasible_point(Problem(est, "cls")) is not None
    assert feasible_point(Problem(est, "cls", [NonNegative(), SubsetSum([0], 2.0, ">=")])) is None


def test_numpy_jacobians_of_the_builtins_equal_cvxpys_grad():
    """The stationarity check's numpy Jᵀy (ldpopt/problems/constraints/jacobians.py) against cvxpy's own
    gradient of each constraint expression, with random multipliers, for every built-in."""
    from ldpopt.problems import Box, Fixed, Hierarchy, Monotone, SumTo
    from ldpopt.problems.constraints.jacobians import builtin_jacobian_t
    from ldpopt.problems.constraints.partition import PartitionTotals

    d = 12
    est = _est(d=d)
    cons = [Simplex(), NonNegative(name="nn"), SumTo(1.0, name="s"), Box(lower=0.0, upper=np.full(d, 0.9), name="b"),
            SubsetSum([1, 3, 5], 0.2, name="eq"), SubsetSum(np.arange(d) < 4, 0.5, "<=", name="le"),
            SubsetSum([0, 2], 0.1, ">=", name="ge"), Fixed([7, 8], [0.01, 0.02], name="fx"),
            Hierarchy([(0, [1, 2]), (3, [4, 5, 6])], name="h"), Monotone(order=[9, 10, 11], name="mono"),
            PartitionTotals({"a": [0, 1], "b": [2, 3, 4]}, {"a": 0.1, "b": 0.3}, name="part")]
    P = Problem(est, "cls", cons)
    rng = np.random.default_rng(5)
    P.x.value = rng.random(d)
    seen = set()
    for name, con in P.named_constraints.items():
        owner, k = P.owners[name]
        y = rng.standard_normal(con.expr.shape) if con.expr.shape else rng.standard_normal()
        ref = np.asarray(con.expr.grad[P.x] @ np.atleast_1d(y).ravel(order="F")).ravel() / P.scale
        got = builtin_jacobian_t(owner, k, y, d)
        assert got is not None, name
        np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-12, err_msg=name)
        acc = np.full(d, 0.25)  # the accumulating form adds the same into an array
        assert builtin_jacobian_t(owner, k, y, d, out=acc) is acc
        np.testing.assert_allclose(acc, 0.25 + got, rtol=1e-15, atol=1e-15, err_msg=name)
        seen.add(type(owner).__name__)
    assert len(seen) == 9


@settings(max_examples=examples(10), deadline=None)
@given(d=st.integers(20, 400), seed=st.integers(0, 2**32 - 1), w=st.floats(1e-3, 10.0),
       kind=st.sampled_from(["diff", "diff2", "centred rows"]))
def test_a_linear_objective_beside_a_penalty_blind_to_a_uniform_move_is_certified(d, seed, w, kind):
    """c·f + w·P(f) with P unchanged by f + t (squared differences, or rows summing to 0): the
    gradient does not move along the uniform move, so the gap is read in the linear part's units;
    the answer is ``optimal`` and its value, evaluated here in numpy, within 1e-7 of Clarabel at 1e-10."""
    rng = np.random.default_rng(seed)
    est = _est(d=d, seed=seed % 997)
    c, p = rng.normal(size=d), rng.dirichlet(np.ones(d))
    D = rng.normal(size=(5, d))
    D -= D.mean(axis=1, keepdims=True)
    pen, value = {
        "diff": (lambda f: cp.sum_squares(cp.diff(f - p)), lambda x: np.sum(np.diff(x - p) ** 2)),
        "diff2": (lambda f: cp.sum_squares(cp.diff(f, 2)), lambda x: np.sum(np.diff(x, 2) ** 2)),
        "centred rows": (lambda f: cp.sum_squares(D @ f), lambda x: np.sum((D @ x) ** 2)),
    }[kind]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sol = Problem(est, lambda f, e: c @ f + w * pen(f), [Simplex()]).solve()
        f = cp.Variable(d)
        ref = cp.Problem(cp.Minimize(c @ f + w * pen(f)), [f >= 0, cp.sum(f) == 1])
        ref.solve(solver="CLARABEL", tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10)
    assert sol.status == "optimal", sol.message
    assert np.min(sol.f) >= -1e-9 and abs(np.sum(sol.f) - 1) <= 1e-9
    assert c @ sol.f + w * value(sol.f) <= ref.value + 1e-7 * max(1.0, abs(ref.value))
