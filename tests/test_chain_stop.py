"""The solver chain stops at the first answer that passes ldpopt's check, and never reports a later,
worse one over it (total variation + CLS at d = 1,000 ran PIQP → Clarabel → OSQP, 11–30 s, before)."""

from __future__ import annotations

import time
import warnings

import cvxpy as cp
import numpy as np

from ldpopt.oracles.unary import OUE
from ldpopt.problems import Problem
from ldpopt.problems.constraints.base import Simplex


def _estimate(d: int):
    rng = np.random.default_rng(3)
    counts = rng.multinomial(100_000, rng.dirichlet(np.ones(d)))
    o = OUE(1.0, d)
    return o.estimate(o.sample_counts(counts, rng), 100_000)


def test_total_variation_stops_at_the_first_passing_answer_near_a_tight_referee():
    est = _estimate(1000)

    def tv(f, e):
        return cp.sum_squares(f - e.f_tilde) + 1e-3 * cp.norm1(f[1:] - f[:-1])

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0 = time.perf_counter()
        sol = Problem(est, tv, [Simplex()]).solve()
        seconds = time.perf_counter() - t0
    assert sol.checks.passed and len(sol.attempts) == 1 and sol.status in ("optimal", "optimal_unverified")
    assert seconds < 10.0  # the chain to OSQP's iteration limit took 11-30 s
    # referee: Clarabel at 1e-12 on the same expression, solved independently
    f = cp.Variable(est.d)
    cp.Problem(cp.Minimize(tv(f, est)), [f >= 0, cp.sum(f) == 1]).solve(
        solver="CLARABEL", tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12)
    assert np.max(np.abs(sol.f - f.value)) <= 1e-6


def test_a_feasible_interior_point_with_its_gap_certified_is_not_chased_by_first_order_solvers():
    """The chain stops after an interior-point solver's answer whose only failure is stationarity
    (feasible, duality gap within GAP_TOL) when only SCS / OSQP are left; not otherwise."""
    from ldpopt.problems.check.verdict import GAP_TOL, Checks
    from ldpopt.problems.problem import _first_order_cannot_do_better
    from ldpopt.problems.solution import Solution

    def answer(solver, failed, gap):
        sol = Solution.failed(10, "inaccurate", solver, "user", "")
        sol.checks = Checks(failed=list(failed), gap=gap)
        return sol

    kkt = ["KKT not certified: stationarity 3.7e-02 > 1e-05, duality gap 2.0e-10 <= 1e-06"]
    assert _first_order_cannot_do_better(answer("CLARABEL", kkt, 2e-10), ("SCS",))
    assert _first_order_cannot_do_better(answer("PIQP", kkt, GAP_TOL), ("OSQP", "SCS"))
    assert not _first_order_cannot_do_better(answer("CLARABEL", kkt, 2e-10), ("PIQP", "SCS"))  # an interior point left
    assert not _first_order_cannot_do_better(answer("CLARABEL", kkt, 10 * GAP_TOL), ("SCS",))  # gap not certified
    assert not _first_order_cannot_do_better(answer("CLARABEL", kkt + ["constraint residual 2e-6 > 1e-8 (sum)"],
                                                    2e-10), ("SCS",))  # infeasible too
    assert not _first_order_cannot_do_better(answer("SCS", kkt, 2e-10), ("OSQP",))  # not an interior point
    assert not _first_order_cannot_do_better(answer("CLARABEL", kkt, 2e-10), ())  # nothing left
