"""The cvxpy chain's Clarabel: a callable whose unit is ldpopt's choice goes to it as written first
(routes.first_unit: your objective's own unit, policy.CLARABEL_UNITS); Clarabel is retried once at its
own default tolerances (policy.CLARABEL_RETRY) when it stops without an answer at ldpopt's tighter ones
at a point within the constraints, and, where that retry gives no answer that passes either, or at
once where Clarabel failed, stopped off the constraints or returned a point ldpopt's check refuted,
once more on the problem in the other unit (``Problem.rescaled``: yours after ldpopt's, ldpopt's after
yours), before any first-order solver; each retry is one more attempt, named in
``Solution.attempts``, and ldpopt's check of the problem as posed decides its point (plain cvxpy +
Clarabel at 1e-10 is the referee here)."""

from __future__ import annotations

import sys
import warnings

import cvxpy as cp
import numpy as np
import pytest
from problem_strategies import draw_family

from ldpopt.problems.solution import within_tolerance
from ldpopt.problems.solvers import routes
from ldpopt.problems.solvers.policy import (
    CLARABEL_OWN_UNIT_NAME,
    CLARABEL_RETRY,
    CLARABEL_RETRY_NAME,
    CLARABEL_UNITS,
    CLARABEL_UNITS_NAME,
)


def _plain(fam, **opts):
    prob, f, _ = fam.cvxpy_problem()
    prob.solve(solver="CLARABEL", **opts)
    return prob, np.asarray(f.value)


class _Seen(list):
    """The options of each Clarabel attempt, in order; ``points``: the stalled ones' answers."""

    def __init__(self):
        super().__init__()
        self.points: list = []


def _first_clarabel_fails(monkeypatch, status="solver_error", failing=1, stalled=0):
    """Clarabel's first ``failing`` attempts (ldpopt's 1e-10, then the retry) end ``status``; the first
    ``stalled`` of them run and keep their point and its check, their status replaced (Clarabel
    stopped at its reduced tolerances near the optimum), the others end without running or a point.
    The options and the unit each Clarabel attempt was given are recorded (``seen``: the options;
    ``units``: the scale of the problem it solved; ``seen.points``: the stalled attempts' answers)."""
    real, seen = routes.cvxpy_attempt, _Seen()
    units: list[float] = []

    def attempt(problem, name, ctx=None, tight_scs=False, cap=None, route=None, judge=None):
        if name == "CLARABEL":
            seen.append(route)
            units.append(problem.scale)
            if len(seen) <= stalled:
                sol = real(problem, name, ctx, tight_scs, cap, route, judge=judge)
                sol.status, sol.success = status, False
                seen.points.append(sol)
                return sol
            if len(seen) <= failing:
                from ldpopt.problems.solution import Solution
                return Solution.failed(problem.estimate.d, status, name, problem.objective.name, "injected")
        return real(problem, name, ctx, tight_scs, cap, route, judge=judge)

    monkeypatch.setattr(routes, "cvxpy_attempt", attempt)
    return seen, units


@pytest.mark.parametrize("seed", [3, 8, 12])
def test_a_tight_clarabel_stalled_within_the_constraints_is_retried_at_its_defaults_before_scs(monkeypatch, seed):
    # generated families whose chain is Clarabel then SCS (a cone objective or constraint)
    fam = draw_family(seed, 30)
    prob = fam.ldpopt_problem()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if routes.chain_for(prob, None)[:1] != ("CLARABEL",):
            pytest.skip("this family's chain does not start with Clarabel")
        seen, _ = _first_clarabel_fails(monkeypatch, "optimal_inaccurate", stalled=1)
        sol = prob.solve()
        ref, f_ref = _plain(fam)
    names = [a["solver"] for a in sol.attempts]
    if not seen:  # answered by a route before the chain
        pytest.skip("answered before the cvxpy chain")
    if not within_tolerance(seen.points[0]):
        pytest.skip("Clarabel's own point is off the constraints here")
    assert names[:2] == ["CLARABEL", CLARABEL_RETRY_NAME], names
    assert seen[1] == CLARABEL_RETRY
    if sol.success and ref.status == "optimal":
        assert "SCS" not in names
        assert np.max(np.abs(sol.f - f_ref)) < 1e-5


def _clarabel_first_in_ldpopts_unit(seed: int):
    """The generated family ``seed`` at d = 30 and its Problem in ldpopt's unit (the callable's K
    measured, ``multiplier="auto"``: as written, its unit would be f's own), skipped where its chain
    does not start with Clarabel or its unit is f's own."""
    fam = draw_family(seed, 30)
    prob = fam.ldpopt_problem(multiplier="auto")
    if routes.chain_for(prob, None)[:1] != ("CLARABEL",) or prob.scale == CLARABEL_UNITS:
        pytest.skip("this family's chain does not start with Clarabel, or its unit is f's own")
    return fam, prob


@pytest.mark.parametrize("seed", [3, 8, 12, 21])
def test_a_clarabel_that_failed_goes_on_in_your_objectives_units_at_once(monkeypatch, seed):
    """Clarabel's error at ldpopt's unit is not retried at its looser defaults (on the grammar's
    families that retry erred again every time): the next attempt is in your objective's units, at
    ldpopt's options."""
    _, prob = _clarabel_first_in_ldpopts_unit(seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        seen, units = _first_clarabel_fails(monkeypatch)
        sol = prob.solve()
    if not seen:
        pytest.skip("answered before the cvxpy chain")
    names = [a["solver"] for a in sol.attempts]
    assert names[:2] == ["CLARABEL", CLARABEL_UNITS_NAME], names
    assert CLARABEL_RETRY_NAME not in names
    assert units[:2] == [prob.scale, CLARABEL_UNITS] and seen[1] is None  # ldpopt's own options


def test_no_retry_where_the_caller_configured_clarabel_or_the_check_refuted(monkeypatch):
    fam = draw_family(3, 30)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        seen, _ = _first_clarabel_fails(monkeypatch)
        sol = fam.ldpopt_problem().solve(CLARABEL={"tol_feas": 1e-9})
        assert CLARABEL_RETRY_NAME not in [a["solver"] for a in sol.attempts] and len(seen) == 1
        seen, _ = _first_clarabel_fails(monkeypatch)
        sol = fam.ldpopt_problem().solve(tol_gap_abs=1e-9)
        assert CLARABEL_RETRY_NAME not in [a["solver"] for a in sol.attempts] and len(seen) == 1
        seen, _ = _first_clarabel_fails(monkeypatch, status="inaccurate")
        sol = fam.ldpopt_problem().solve()  # (f's own unit: no other unit to retry in either)
        assert CLARABEL_RETRY_NAME not in [a["solver"] for a in sol.attempts] and len(seen) == 1


def test_a_family_clarabel_leaves_at_its_reduced_tolerances_is_answered_by_the_retry():
    """A grammar family (seed 1021, d = 100: CLS + 0.1·pos(sum_squares(rows) − c)) where Clarabel at
    1e-10 ends ``optimal_inaccurate`` and went to SCS; plain Clarabel at its defaults is the referee."""
    fam = draw_family(1021, 100)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sol = fam.ldpopt_problem().solve()
        ref, f_ref = _plain(fam, tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10)
    names = [a["solver"] for a in sol.attempts]
    assert "SCS" not in names, sol.message
    assert sol.status in ("optimal", "optimal_unverified")
    if ref.status == "optimal":
        assert np.max(np.abs(sol.f - f_ref)) < 1e-5


@pytest.mark.parametrize("seed", [3, 8, 12, 21])
def test_two_failed_clarabel_attempts_at_ldpopts_unit_are_followed_by_one_in_your_objectives(monkeypatch, seed):
    fam, prob = _clarabel_first_in_ldpopts_unit(seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        seen, units = _first_clarabel_fails(monkeypatch, "optimal_inaccurate", failing=2, stalled=1)
        sol = prob.solve()
        ref, f_ref = _plain(fam, tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10)
    if not seen:
        pytest.skip("answered before the cvxpy chain")
    if not within_tolerance(seen.points[0]):
        pytest.skip("Clarabel's own point is off the constraints here")
    names = [a["solver"] for a in sol.attempts]
    assert names[:3] == ["CLARABEL", CLARABEL_RETRY_NAME, CLARABEL_UNITS_NAME], names
    assert units[:3] == [prob.scale, prob.scale, CLARABEL_UNITS] and seen[2] is None  # ldpopt's own options
    if sol.success and ref.status == "optimal":
        assert "SCS" not in names
        # the answer, in frequency units, against plain cvxpy + Clarabel (the problem as the user wrote it)
        assert np.max(np.abs(sol.f - f_ref)) < 1e-5
        assert abs(sol.f.sum() - 1) < 1e-8 and sol.f.min() > -1e-8


def test_no_retry_in_your_units_where_the_unit_is_yours_already_or_the_point_was_refuted(monkeypatch):
    fam = draw_family(3, 30)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        seen, _ = _first_clarabel_fails(monkeypatch, "optimal_inaccurate", failing=2, stalled=1)
        sol = fam.ldpopt_problem(CLARABEL_UNITS).solve()  # stalled within: the retry, then no unit to change to
        names = [a["solver"] for a in sol.attempts]
        assert within_tolerance(seen.points[0]) and CLARABEL_RETRY_NAME in names
        assert CLARABEL_UNITS_NAME not in names and len(seen) == 2
        seen, _ = _first_clarabel_fails(monkeypatch, failing=2)
        sol = fam.ldpopt_problem(CLARABEL_UNITS).solve()  # an error: no retry at its defaults, no unit to change to
        names = [a["solver"] for a in sol.attempts]
        assert CLARABEL_RETRY_NAME not in names and CLARABEL_UNITS_NAME not in names and len(seen) == 1
        seen, _ = _first_clarabel_fails(monkeypatch, status="inaccurate", failing=2)
        sol = fam.ldpopt_problem(CLARABEL_UNITS).solve()  # a refuted point in the one unit: no retry at all
        assert CLARABEL_UNITS_NAME not in [a["solver"] for a in sol.attempts] and len(seen) == 1


#: generated families at d = 30 whose callable ldpopt recognises (its unit ldpopt's, ≠ 1) and whose
#: chain starts with Clarabel (found by construction alone: ``routes.first_unit`` ≠ ``Problem.scale``)
AS_WRITTEN_FIRST = (4, 8, 9, 19, 24)


def _as_written_first(seed: int):
    fam = draw_family(seed, 30)
    prob = fam.ldpopt_problem()
    if routes.first_unit(prob) == prob.scale or routes.chain_for(prob, None)[:1] != ("CLARABEL",):
        pytest.skip("this family's callable is not first solved as written, or its chain does not start with Clarabel")
    return fam, prob


def test_the_first_unit_is_yours_only_where_the_unit_is_ldpopts_choice():
    """A recognised callable (ldpopt's unit, ≠ 1) goes to the chain's Clarabel as written first; with
    ``multiplier="auto"`` or a number, or a ``scale`` you gave, in the problem's own unit; an
    unrecognised callable's unit is f's own already."""
    fam, prob = _as_written_first(AS_WRITTEN_FIRST[0])
    assert prob.scale != CLARABEL_UNITS and routes.first_unit(prob) == CLARABEL_UNITS
    for other in (fam.ldpopt_problem(multiplier="auto"), fam.ldpopt_problem(multiplier=2.0),
                  fam.ldpopt_problem(scale=0.25)):
        assert routes.first_unit(other) == other.scale
    plain = draw_family(3, 30).ldpopt_problem()  # not recognised: as written, its unit f's own
    assert plain.scale == CLARABEL_UNITS == routes.first_unit(plain)


@pytest.mark.parametrize("seed", AS_WRITTEN_FIRST)
def test_a_recognised_callable_goes_to_clarabel_as_written_then_in_ldpopts_unit(monkeypatch, seed):
    """Its first Clarabel attempt solves the problem in your objective's own unit; where that attempt
    fails, the next is in ldpopt's (``"CLARABEL in ldpopt's unit"``, the problem's own scale, ldpopt's
    options), and the answer, in frequency units, is plain cvxpy's."""
    fam, prob = _as_written_first(seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        seen, units = _first_clarabel_fails(monkeypatch)
        sol = prob.solve()
        ref, f_ref = _plain(fam, tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10)
    if not seen:
        pytest.skip("answered before the cvxpy chain")
    names = [a["solver"] for a in sol.attempts]
    assert names[:2] == ["CLARABEL", CLARABEL_OWN_UNIT_NAME], names
    assert units[:2] == [CLARABEL_UNITS, prob.scale] and seen[1] is None  # ldpopt's own options
    if sol.success and ref.status == "optimal":
        assert np.max(np.abs(sol.f - f_ref)) < 1e-5


@pytest.mark.parametrize("seed", AS_WRITTEN_FIRST)
def test_a_point_the_check_refuted_in_one_unit_is_solved_again_in_the_other(monkeypatch, seed):
    """Clarabel's first answer, as written, with ldpopt's check saying it fails (``inaccurate``): no
    retry at Clarabel's looser defaults, one in ldpopt's unit, and SCS only after it."""
    fam, prob = _as_written_first(seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        seen, units = _first_clarabel_fails(monkeypatch, status="inaccurate", stalled=1)
        sol = prob.solve()
    if not seen:
        pytest.skip("answered before the cvxpy chain")
    names = [a["solver"] for a in sol.attempts]
    assert names[:2] == ["CLARABEL", CLARABEL_OWN_UNIT_NAME] and CLARABEL_RETRY_NAME not in names, names
    assert units[:2] == [CLARABEL_UNITS, prob.scale]
    if len(names) == 2 and sol.status in ("optimal", "optimal_unverified"):  # the retry's answer, saying why it ran
        assert "failed ldpopt's check (policy.CLARABEL_UNITS)" in sol.message, sol.message


@pytest.mark.parametrize("seed", [1, 5, 9])
def test_a_problem_rescaled_poses_the_same_problem_in_another_unit(seed):
    """Its answer in frequency units is the original's (both by Clarabel at 1e-10), its constraints
    carry the same names and owners, and the original keeps its own cvxpy objects."""
    from ldpopt.problems.solvers.attempts import cvxpy_attempt

    fam = draw_family(seed, 40)
    prob = fam.ldpopt_problem()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        other = prob.rescaled(0.5 if prob.scale == 1.0 else 1.0)
        a, b = cvxpy_attempt(prob, "CLARABEL"), cvxpy_attempt(other, "CLARABEL", judge=prob)
    assert other.scale != prob.scale and other.x is not prob.x
    assert list(other.named_constraints) == list(prob.named_constraints)
    assert {k: (id(c), j) for k, (c, j) in other.owners.items()} == {k: (id(c), j) for k, (c, j) in prob.owners.items()}
    if a.status == "optimal" and b.status == "optimal":
        assert np.max(np.abs(a.f - b.f)) < 1e-6
    if a.checks is not None and a.checks.passed and b.checks is not None and b.checks.passed:
        # both feasible to the check: the objective's value, recomputed from each point by the plain
        # family's own expression, agrees (the optimum's value, where the optimiser need not be unique)
        ft = np.asarray(fam.est.f_tilde, float)
        va, vb = (float(fam.objective(cp.Constant(g), ft).value) for g in (a.f, b.f))
        assert abs(va - vb) <= 1e-6 * max(1.0, abs(va)), (va, vb)
    for bad in (0.0, float("nan"), "1", True):
        with pytest.raises(ValueError, match="scale"):
            prob.rescaled(bad)


def _clarabel_iterations(monkeypatch, stall: bool | None = False) -> list:
    """Each Clarabel attempt's iterations, read from the cvxpy problem it answered into. ``stall``:
    whether Clarabel is stopped where it stalls (:mod:`ldpopt.problems.solvers.stall`; False: off,
    so that the iteration limit alone is read; None: as the attempt decides)."""
    from _faults import as_library

    from ldpopt.problems.solvers import attempts

    real, seen = attempts.solved_in_worker, []

    @as_library
    def recorded(prob, data, chain, inverse, verbose, opts, seconds, what, decided=False, retry=None):
        out = real(prob, data, chain, inverse, verbose, opts, seconds, what, decided if stall is None else stall, retry)
        if chain.solver.name() == "CLARABEL":
            seen.append((prob.solver_stats.num_iters, opts.get("max_iter")))
        return out

    monkeypatch.setattr(attempts, "solved_in_worker", recorded)
    return seen


def test_a_clarabel_stalled_at_its_reduced_tolerances_stops_at_ldpopts_iteration_limit(monkeypatch):
    """A grammar family where Clarabel at 1e-10 creeps past ldpopt's iteration limit
    (:func:`problem_strategies.creeping_family`: 1014 at d = 100 on one machine, 112 iterations to its
    ``AlmostSolved`` under Clarabel's own limit of 200; 4012 at 1,000 on another, 171): each of the
    chain's Clarabel attempts runs with ``CLARABEL_MAX_ITER`` and none goes past it, the first cut
    there; the answer (the retry's) is the one the chain gives without the limit, point and status; a
    caller's ``max_iter`` replaces ldpopt's. (The stop where Clarabel stalls, which cuts it sooner, is
    off here: the limit is read alone. With it on, the first attempt ends where the stop reads a stall.
    The reading of a returned iterate at Clarabel's own tolerances, which would end the chain at the
    first attempt where that iterate passes them, is off too: the retry is what is compared.)"""
    from problem_strategies import creeping_family

    from ldpopt.problems.solvers import policy, routes
    from ldpopt.problems.solvers.stall import STALL_START, solve_clarabel

    fam, solver, data, opts, _ = creeping_family()
    free_its = solver.solve_via_data(data, False, False, {**opts, "max_iter": 200}).iterations
    stalled_at = solve_clarabel(solver, data, False, opts).stalled_at
    assert free_its > policy.CLARABEL_MAX_ITER and stalled_at is not None and stalled_at >= STALL_START
    seen = _clarabel_iterations(monkeypatch)
    monkeypatch.setattr(routes, "solved_where_stopped", lambda *a: False)

    def solved(**opts):
        seen.clear()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fam.ldpopt_problem(multiplier="auto").solve(**opts), list(seen)

    capped, its = solved()
    assert its[0] == (policy.CLARABEL_MAX_ITER, policy.CLARABEL_MAX_ITER)  # the stall cut at the limit
    assert all(n <= limit == policy.CLARABEL_MAX_ITER for n, limit in its)
    monkeypatch.setitem(policy.SIZE_OPTIONS, "CLARABEL", (policy.CLARABEL_MAX_ITER_MAX_D, {"max_iter": 200}))
    free, its_free = solved()
    assert its_free[0] == (free_its, 200)
    assert capped.status == free.status and capped.status in ("optimal", "optimal_unverified")
    assert [a["solver"] for a in capped.attempts] == [a["solver"] for a in free.attempts]
    assert np.array_equal(capped.f, free.f)  # the retry's answer, reached the same way
    monkeypatch.undo()
    seen = _clarabel_iterations(monkeypatch)
    monkeypatch.setattr(routes, "solved_where_stopped", lambda *a: False)
    _, its_caller = solved(max_iter=150)
    assert its_caller[0] == (min(free_its, 150), 150)
    monkeypatch.undo()
    seen = _clarabel_iterations(monkeypatch, stall=None)
    monkeypatch.setattr(routes, "solved_where_stopped", lambda *a: False)
    stopped, its_stopped = solved()
    assert its_stopped[0] == (stalled_at, policy.CLARABEL_MAX_ITER) and stopped.status == capped.status


def test_the_iteration_limit_holds_up_to_its_size_only():
    """Past ``CLARABEL_MAX_ITER_MAX_D`` values the chain's Clarabel runs under its own limit (at
    d = 10⁴ a grammar family's answer took 170 iterations); below, under ldpopt's; other solvers
    never get it, and a caller's ``max_iter`` wins at every size."""
    from ldpopt import Estimate
    from ldpopt.problems import Problem
    from ldpopt.problems.progress import SolveContext
    from ldpopt.problems.solvers.attempts import options_for
    from ldpopt.problems.solvers.policy import CLARABEL_MAX_ITER, CLARABEL_MAX_ITER_MAX_D

    def opts(d, name="CLARABEL", **caller):
        est = Estimate.from_counts(np.arange(1, d + 1), n=d * (d + 1) // 2, epsilon=1.0, p=0.7, q=0.2)
        return options_for(Problem(est, "cls"), name, SolveContext.make(solver_options=caller))

    assert opts(CLARABEL_MAX_ITER_MAX_D)["max_iter"] == CLARABEL_MAX_ITER
    assert "max_iter" not in opts(CLARABEL_MAX_ITER_MAX_D + 1)
    assert "max_iter" not in opts(50, "SCS") and opts(50, "PIQP").get("max_iter") is None
    assert opts(50, max_iter=7)["max_iter"] == 7
    assert opts(5000, CLARABEL={"max_iter": 9})["max_iter"] == 9


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))
