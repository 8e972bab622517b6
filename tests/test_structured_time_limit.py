"""``solve(time_limit=...)`` inside ldpopt's structured solver: its Newton loops call the solve's
``SolveContext.stop`` (handed to them as an argument) and stop with the point they have, which ``Problem.solve`` checks like any
other and returns as ``"time_limit"`` (never ``"optimal"`` unless that check passed)."""

from __future__ import annotations

import warnings

import cvxpy as cp
import numpy as np
from _count_estimates import oue_counts

from ldpopt.problems import STRUCTURED, Problem, Simplex, SubsetSum
from ldpopt.problems.progress import SolveContext
from ldpopt.problems.solvers.structured import solve_structured

D = 2000
EST = oue_counts(D, 1_000_000, seed=1)
PRIOR = np.full(D, 1.0 / D)


def _problem():
    func = lambda f, e: cp.sum_squares(f - e.f_tilde) + 1e-4 * cp.sum(cp.kl_div(f, PRIOR))
    return Problem(EST, func, [Simplex(), SubsetSum(np.arange(0, D, 2), 0.5)])


def _solve(time_limit):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the conic fallback is not started after the time-out
        return _problem().solve(time_limit=time_limit, progress=False)


def test_structured_solver_stops_at_the_time_limit_with_a_checked_point():
    from ldpopt.problems.solvers.attempts import structured_attempt

    full = _solve(None)
    assert full.status == "optimal" and full.solver == STRUCTURED
    cut = _solve(1e-3)  # passed before the solver's first Newton step
    assert cut.status == "time_limit" and not cut.success and cut.attempts[0]["solver"] == STRUCTURED
    # the point returned was checked as far as the time allowed, and is not called verified
    assert cut.checks is not None and not cut.checks.certified
    assert np.all(np.isfinite(cut.f)) and "time limit" in cut.message
    alone, _ = structured_attempt(_problem(), SolveContext.make(1e-3))
    assert alone.iterations < full.iterations  # stopped inside the solver, not after it
    assert alone.status != "optimal" and "time limit" in alone.checks.not_run["stationarity"]


def test_stop_is_the_argument_not_a_running_clock():
    # the structured solver stops where the stop it is given says so, and only there
    from ldpopt.problems.dual.structure import compiled_for

    pr = _problem()
    free = solve_structured(EST, pr.objective, compiled_for(pr))
    calls = []
    cut = solve_structured(EST, pr.objective, compiled_for(pr), stop=lambda: calls.append(1) or True)
    assert calls, "the Newton loop never asked"
    assert free.status == "optimal" and cut.status != "optimal"
    expired = SolveContext.make(1e-9)
    assert expired.stop() and expired.expired() and expired.deadline is not None
    open_ = SolveContext.make(None)
    assert not open_.stop() and open_.deadline is None and open_.left() is None
