"""The solver chain stops at the first answer that passes ldpopt's check, and never reports a later,
worse one over it (total variation + CLS at d = 1,000 ran PIQP → Clarabel → OSQP, 11–30 s, before)."""

from __future__ import annotations

import time
import warnings

import cvxpy as cp
import numpy as np
from hypothesis import HealthCheck, given, settings
from problem_strategies import CONES, cases

from conftest import examples
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
    """The chain stops after an interior-point solver's answer whose only failure is the KKT test with
    one of its two parts passed (feasible; duality gap within GAP_TOL, or stationarity within
    STATIONARITY_TOL) when only SCS / OSQP are left; not otherwise."""
    from ldpopt.problems.check.verdict import GAP_TOL, STATIONARITY_TOL, Checks
    from ldpopt.problems.solvers.routes import first_order_cannot_do_better as _first_order_cannot_do_better
    from ldpopt.problems.solution import Solution

    def answer(solver, failed, gap, stationarity=None):
        sol = Solution.failed(10, "inaccurate", solver, "user", "")
        sol.checks = Checks(failed=list(failed), gap=gap, stationarity=stationarity)
        return sol

    kkt = ["KKT not certified: stationarity 3.7e-02 > 1e-05, duality gap 2.0e-10 <= 1e-06"]
    assert _first_order_cannot_do_better(answer("CLARABEL", kkt, 2e-10), ("SCS",), None)
    assert _first_order_cannot_do_better(answer("PIQP", kkt, GAP_TOL), ("OSQP", "SCS"), None)
    assert not _first_order_cannot_do_better(answer("CLARABEL", kkt, 2e-10), ("PIQP", "SCS"), None)  # an interior point left
    assert not _first_order_cannot_do_better(answer("CLARABEL", kkt, 10 * GAP_TOL), ("SCS",), None)  # gap not certified
    assert not _first_order_cannot_do_better(answer("CLARABEL", kkt + ["constraint residual 2e-6 > 1e-8 (sum)"],
                                                    2e-10), ("SCS",), None)  # infeasible too
    assert not _first_order_cannot_do_better(answer("SCS", kkt, 2e-10), ("OSQP",), None)  # not an interior point
    assert not _first_order_cannot_do_better(answer("CLARABEL", kkt, 2e-10), (), None)  # nothing left
    gap_kkt = ["KKT not certified: stationarity 6.7e-07 <= 1e-05, duality gap 2.5e-04 > 1e-06"]
    assert _first_order_cannot_do_better(answer("CLARABEL", gap_kkt, 2.5e-4, 6.7e-7), ("SCS",), None)
    assert _first_order_cannot_do_better(answer("PIQP", gap_kkt, 2.5e-4, STATIONARITY_TOL), ("OSQP",), None)
    assert not _first_order_cannot_do_better(answer("CLARABEL", gap_kkt, 2.5e-4, 10 * STATIONARITY_TOL), ("SCS",),
                                             None)  # neither part passed
    assert not _first_order_cannot_do_better(answer("CLARABEL", gap_kkt, 2.5e-4, 6.7e-7), ("PIQP", "SCS"), None)


@settings(max_examples=examples(6), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=cases(objectives=("cls", "user-cvxpy"), constraints=CONES, margins=("feasible", "thin"), d_min=10, d_max=60))
def test_a_feasible_interior_point_under_a_cone_constraint_is_not_chased_by_first_order_solvers(case):
    """On generated problems with a non-affine user constraint (a ball or an energy bound, feasible or
    thin), where the chain stops after an interior-point solver's feasible point because the KKT test
    (which certifies, never refutes, with a non-affine constraint) did not certify it: SCS, asked by
    name at the chain's fallback options, gets no certified answer, or one that agrees with the
    returned point to the check's accuracy (the stop loses at most the label), and the returned
    point is that feasible one, its attempt the chain's last."""
    from ldpopt.problems.solvers.policy import SCS_TIGHT

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sol = case.problem().solve()
    last = sol.attempts[-1]
    if "no KKT test certified it" not in sol.message:
        return  # the rule did not fire (the point failed feasibility, or no interior point ran)
    assert last["solver"] in ("CLARABEL", "PIQP") and "(passed)" in last["checks"]
    assert np.all(np.isfinite(sol.f)) and sol.checks is not None and not sol.checks.failed
    assert sol.status != "optimal" and sol.checks.stationarity is None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        scs = case.problem().solve(solver="SCS", SCS=dict(SCS_TIGHT, max_iters=20_000))
    if scs.status == "optimal":  # the KKT test (with the constraint's gradient) certified SCS's point:
        # the stop kept a point that agrees with it to the check's accuracy (it lost the label only)
        assert np.max(np.abs(scs.f - sol.f)) <= 1e-2 / case.d, (case, scs.status)


def test_a_ball_touching_the_simplex_ends_at_clarabels_feasible_point():
    """CLS with a ball that only touches the simplex (the route grid's generated class, ties, d = 100):
    Clarabel's point at 1e-10 is feasible but ``optimal_inaccurate``; the chain retries Clarabel at its
    own defaults (policy.CLARABEL_RETRY), whose point passes the check (``optimal_unverified``: the ball
    is not affine, no KKT test certifies it), and ends there; before, SCS ran to its 200,000-iteration
    limit (2.2 s) and ended farther from the set. The first attempt's iterate passes Clarabel's own
    test at those tolerances, but with a constraint that is not affine the retry still runs: its point
    may earn what this one did not (routes.solved_where_stopped)."""
    from problem_strategies import constraints_for, estimate

    from ldpopt.problems import Problem
    from ldpopt.problems.solvers.attempts import STOP_SOLVED
    from ldpopt.problems.solvers.policy import CLARABEL_RETRY_NAME

    rng = np.random.default_rng(200)
    est = estimate("ties", 100, rng)
    cons, _ = constraints_for("user-ball", "thin", 100, rng, 0.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sol = Problem(est, "cls", cons).solve()
    assert [a["solver"] for a in sol.attempts] == ["CLARABEL", CLARABEL_RETRY_NAME], sol.attempts
    assert sol.attempts[0]["status"] == "optimal_inaccurate" and sol.attempts[0][STOP_SOLVED] is True
    assert sol.status == "optimal_unverified" and not sol.checks.failed and sol.checks.max_violation <= 1e-8
    assert "constraint 'ball'" in sol.message and "not affine" in sol.message


def test_a_first_order_fallback_after_an_interior_point_runs_under_its_budget(monkeypatch):
    """Once an interior-point solver has returned a point, a first-order fallback gets
    ``policy.fallback_budget`` seconds as its own time limit (where the solve has none): SCS asked for
    an accuracy it cannot reach stops at the budget, not at CONIC_TIME_LIMIT, and the chain's answer
    says so."""
    import cvxpy as cp

    import ldpopt
    from ldpopt.problems import Problem, Simplex
    from ldpopt.problems.solvers import policy

    monkeypatch.setattr(policy, "FALLBACK_MIN_S", 0.2)
    monkeypatch.setattr(policy, "FALLBACK_FACTOR", 0.0)
    rng = np.random.default_rng(1)
    d = 300
    o = ldpopt.oracles.get("oue", 1.0, d)
    est = o.estimate(o.sample_counts(rng.multinomial(100_000, rng.dirichlet(np.ones(d))), rng), 100_000)
    prob = Problem(est, "cls", [Simplex(), lambda f, e: {"energy": cp.sum_squares(f) <= 1.5 / d}])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sol = prob.solve(CLARABEL={"max_iter": 3}, SCS={"eps_abs": 1e-15, "eps_rel": 1e-15, "max_iters": 10**8})
    scs = [a for a in sol.attempts if a["solver"] == "SCS"]
    assert [a["solver"] for a in sol.attempts] == ["CLARABEL", "SCS"] and scs[0]["seconds"] < 2.0, sol.attempts
    assert "ran as the chain's fallback under a budget of 0.2 s" in sol.message


def test_the_fallback_budget_is_the_solvers_limit_within_the_solves():
    """``Clock.solver_options``: the cap is the solver's own limit, never past the time ``time_limit``
    leaves; a solver without a limit option gets none."""
    from ldpopt.problems.progress import CONIC_TIME_LIMIT, Clock
    from ldpopt.problems.solvers.policy import FALLBACK_MIN_S, fallback_budget

    assert Clock(None, progress=False).solver_options("SCS", 2.0) == {"time_limit_secs": 2.0}
    assert Clock(None, progress=False).solver_options("OSQP", 3.0) == {"time_limit": 3.0}
    assert Clock(None, progress=False).solver_options("SCS", 1e9) == {"time_limit_secs": CONIC_TIME_LIMIT}
    assert Clock(None, progress=False).solver_options("PIQP", 2.0) == {}
    assert Clock(5.0, progress=False).solver_options("SCS", 0.5) == {"time_limit_secs": 0.5}
    assert 4.0 < Clock(5.0, progress=False).solver_options("SCS", 50.0)["time_limit_secs"] <= 5.0
    assert 4.0 < Clock(5.0, progress=False).solver_options("SCS")["time_limit_secs"] <= 5.0
    assert fallback_budget(0.0) == FALLBACK_MIN_S and fallback_budget(100.0) > fallback_budget(1.0)
