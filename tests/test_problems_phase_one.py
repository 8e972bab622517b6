"""The phase one for a user's non-affine constraints (ldpopt.problems.solvers.phase_one): an empty set ends
'infeasible' after at most one route (the phase one runs where the route's answer does not show the
set met), naming the constraints, with the smallest violation bracketed by
the phase one's primal and dual values against its closed form (min Σ f² over the simplex is 1/d);
a thin non-empty set is solved (the phase one, if it runs, finds it feasible); affine rows alone are left to the exact pre-check;
the phase one's problem is written once per Problem and follows a Parameter."""

from __future__ import annotations

import time
import warnings

import cvxpy as cp
import numpy as np
import pytest
from conftest import solve_contexts

from ldpopt import oracles
from ldpopt.problems import Problem, Simplex, SolverWarning
from ldpopt.problems.solvers.phase_one import phase_one


@pytest.fixture(scope="module")
def est():
    rng = np.random.default_rng(3)
    d = 1000
    o = oracles.get("oue", 1.0, d)
    return o.estimate(o.sample_counts(rng.multinomial(10**5, rng.dirichlet(np.ones(d))), rng=rng), 10**5)


@pytest.mark.parametrize("rel", [1e-2, 1e-4])
def test_an_empty_set_of_a_norm_row_is_infeasible_after_at_most_one_route(est, rel):
    d = est.d
    c = (1 - rel) / d  # Σ f² ≥ 1/d on the simplex: empty by rel/d
    P = Problem(est, "cls", [Simplex(), lambda f, e: {"energy": cp.sum_squares(f) <= c}])
    t = time.perf_counter()
    with pytest.warns(SolverWarning, match="phase one"), solve_contexts() as made:
        sol = P.solve(time_limit=30)
    assert time.perf_counter() - t < 10
    solvers = [a["solver"] for a in sol.attempts]
    assert sol.status == "infeasible" and solvers[-1] == "LDPOPT-PHASE-ONE" and len(solvers) <= 2, solvers
    assert "energy" in sol.infeasibility.names and "sum" in sol.infeasibility.names
    truth = 1 / d - c  # the smallest violation s*
    ph = made[-1].phase_one  # the solve's own phase one
    assert ph.dual <= truth * (1 + 1e-3) and ph.primal >= truth * (1 - 1e-3), (ph, truth)
    # the margin is ldpopt's verified lower bound on s* (the set's), not the solver's dual value
    m = sol.infeasibility.margin
    assert sol.infeasibility.verified and sol.infeasibility.kind == "non-affine"
    assert truth * (1 - 1e-3) <= m <= truth, (m, truth)


def test_a_thin_non_empty_set_is_solved(est):
    d = est.d
    P = Problem(est, "cls", [Simplex(), lambda f, e: cp.sum_squares(f) <= (1 + 1e-4) / d])
    with warnings.catch_warnings(), solve_contexts() as made:
        warnings.simplefilter("ignore", SolverWarning)
        sol = P.solve(time_limit=2)  # (the objective's own route is not what is tested here)
    ph = made[-1].phase_one  # None where the route's answer showed the set met
    assert ph is None or (ph.verdict == "feasible" and ph.primal <= 0 and ph.seconds < 2)
    direct = phase_one(P)  # run whether or not the solve needed it: the set is not empty
    assert direct.verdict == "feasible" and direct.primal <= 0, direct
    assert sol.status != "infeasible" and sol.attempts[0]["solver"] != "LDPOPT-PHASE-ONE"


def test_affine_user_rows_are_decided_exactly_and_run_no_phase_one(est):
    P = Problem(est, "cls", [Simplex(), lambda f, e: f[0] + f[1] <= 0.5])
    with warnings.catch_warnings(), solve_contexts() as made:
        warnings.simplefilter("ignore", SolverWarning)
        sol = P.solve()
    assert sol.status == "optimal" and made[-1].phase_one is None
    assert "LDPOPT-PHASE-ONE" not in [a["solver"] for a in sol.attempts]


def test_the_phase_one_is_written_once_and_follows_a_parameter(est):
    """The phase one's cvxpy problem is made once per Problem (cvxpy keeps its compilation between
    solves) and holds the problem's own constraints: a Parameter's new value moves its verdict, and
    the bracket of the smallest violation follows the closed form 1/d − r."""
    d = est.d
    r = cp.Parameter(nonneg=True, value=(1 + 1e-2) / d)
    P = Problem(est, "cls", [Simplex(), lambda f, e: {"energy": cp.sum_squares(f) <= r}])
    first = phase_one(P)
    assert first.verdict == "feasible" and first.primal <= 0, first
    form = P.derived("phase one", lambda: None)
    assert form is not None and not isinstance(form, str)
    r.value = (1 - 1e-2) / d  # Σ f² ≥ 1/d on the simplex: now empty by 1e-2/d
    second = phase_one(P)
    truth = 1 / d - r.value
    assert second.verdict == "infeasible", second
    assert second.dual <= truth * (1 + 1e-3) and second.primal >= truth * (1 - 1e-3), (second, truth)
    assert P.derived("phase one", lambda: None) is form  # the same cvxpy problem, not a new one
    with pytest.warns(SolverWarning, match="phase one"):
        sol = P.solve(time_limit=30)
    assert sol.status == "infeasible" and "energy" in sol.infeasibility.names
    r.value = (1 + 1e-2) / d
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SolverWarning)
        sol = P.solve(time_limit=30)
    assert sol.status != "infeasible" and sol.f is not None and float(np.sum(sol.f ** 2)) <= r.value * (1 + 1e-6)
