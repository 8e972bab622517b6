"""The phase one (a second conic solve) runs after the route, and only where the route's answer does
not show a user's non-affine constraints met (g(f) ≤ the phase one's floor, read independently here
with numpy): on generated norm balls and energy bounds, a non-empty set is never called infeasible
and an empty one is still proved ``infeasible``."""

import warnings
from unittest import mock

import cvxpy as cp
import numpy as np
from conftest import examples
from hypothesis import given, settings
from hypothesis import strategies as st
from problem_strategies import cases

from ldpopt.problems.check.point import MET_WITHIN, SYSTEM_ROWS, user_rows_met
from ldpopt.problems.solvers import phase_one as P1


def _solve(case):
    """(the solution, how many times the phase one ran)."""
    with mock.patch.object(P1, "phase_one", side_effect=P1.phase_one) as counted, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sol = case.problem().solve()
    return sol, counted.call_count


@settings(max_examples=examples(4), deadline=None)
@given(case=cases(objectives=("cls", "user-cvxpy"), constraints=("user-ball", "user-energy"), margins=("feasible",),
                  d_min=5, d_max=40))
def test_the_phase_one_runs_only_where_the_answer_does_not_show_the_set_met(case):
    sol, ran = _solve(case)
    assert sol.status != "infeasible", sol.message
    prob = case.problem()
    met = (sol.checks is not None and sol.checks.passed and sol.status in ("optimal", "optimal_unverified")
           and user_rows_met(prob, sol.f, False))
    assert ran == (0 if met else 1), (sol.status, ran)


@settings(max_examples=examples(2), deadline=None)
@given(case=cases(objectives=("cls",), constraints=("user-ball", "user-energy"), margins=("empty",), d_min=5, d_max=40)
       .filter(lambda c: c.slack >= 1e-3))
def test_an_empty_set_is_still_proved_infeasible(case):
    sol, ran = _solve(case)
    assert sol.status == "infeasible", sol.message
    assert sol.infeasibility is not None


def test_the_margin_is_the_phase_ones_floor_and_the_rows_the_exact_systems():
    from ldpopt.problems.constraints.feasibility import MAX_LP

    assert MET_WITHIN == P1.PHASE_ONE_FLOOR and SYSTEM_ROWS == MAX_LP


@settings(max_examples=examples(6), deadline=None)
@given(d=st.integers(3, 30), seed=st.integers(0, 2**31 - 1), t=st.floats(1e-3, 0.5))
def test_user_rows_met_reads_g_at_the_point(d, seed, t):
    """Against numpy's own ‖f − c‖₂ − t at generated points (inside, outside, on the sphere)."""
    import ldpopt
    from ldpopt.problems import Problem, Simplex

    rng = np.random.default_rng(seed)
    est = ldpopt.oracles.get("grr", 1.0, d).estimate(rng.multinomial(1000, np.full(d, 1.0 / d)), 1000)
    c = rng.dirichlet(np.ones(d))
    prob = Problem(est, "cls", [Simplex(), lambda f, e: cp.norm(f - c, 2) <= t])
    for _ in range(5):
        f = rng.dirichlet(np.ones(d))
        g = float(np.linalg.norm(f - c) - t)
        if abs(g) > 1e-9:
            assert user_rows_met(prob, f, False) == (g <= 0), g
    assert user_rows_met(prob, np.full(d, np.nan), False) is False
    assert user_rows_met(prob, np.zeros(d), True) is True  # the linear system holds everything
