"""``solve(time_limit=...)`` inside ldpopt's structured solver: its Newton loops read the solve's clock
(``progress.out_of_time``) and stop with the point they have, which ``Problem.solve`` checks like any
other and returns as ``"time_limit"`` (never ``"optimal"`` unless that check passed)."""

from __future__ import annotations

import warnings

import cvxpy as cp
import numpy as np

from _count_estimates import oue_counts
from ldpopt.problems import STRUCTURED, Problem, Simplex, SubsetSum
from ldpopt.problems.progress import Clock, out_of_time

D = 2000
EST = oue_counts(D, 1_000_000, seed=1)
PRIOR = np.full(D, 1.0 / D)


def _solve(time_limit):
    func = lambda f, e: cp.sum_squares(f - e.f_tilde) + 1e-4 * cp.sum(cp.kl_div(f, PRIOR))  # noqa: E731
    pr = Problem(EST, func, [Simplex(), SubsetSum(np.arange(0, D, 2), 0.5)])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the conic fallback is not started after the time-out
        return pr.solve(time_limit=time_limit, progress=False)


def test_structured_solver_stops_at_the_time_limit_with_a_checked_point():
    full = _solve(None)
    assert full.status == "optimal" and full.solver == STRUCTURED
    cut = _solve(1e-3)  # passed before the solver's first Newton step
    assert cut.status == "time_limit" and not cut.success and cut.solver == STRUCTURED
    assert cut.iterations < full.iterations  # stopped inside the solver, not after it
    assert cut.checks is not None and not cut.checks.passed  # the point returned was checked, and said so
    assert np.all(np.isfinite(cut.f)) and "time limit" in cut.message


def test_out_of_time_reads_only_the_running_clock():
    assert not out_of_time()  # no solve running
    clock = Clock(1e-9, progress=False)
    with clock.running("test"):
        assert out_of_time()
    assert not out_of_time()
    with Clock(None, progress=False).running("test"):
        assert not out_of_time()
