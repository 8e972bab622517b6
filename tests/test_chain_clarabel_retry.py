"""The cvxpy chain retries Clarabel once at its own default tolerances (policy.CLARABEL_RETRY) when it
stops without an answer at ldpopt's tighter ones, before any first-order solver; the retry is one more
attempt, named in ``Solution.attempts``, and ldpopt's check decides its point."""

from __future__ import annotations

import sys
import warnings

import numpy as np
import pytest
from problem_strategies import draw_family

from ldpopt.problems.solvers import routes
from ldpopt.problems.solvers.policy import CLARABEL_RETRY, CLARABEL_RETRY_NAME


def _plain(fam, **opts):
    prob, f, _ = fam.cvxpy_problem()
    prob.solve(solver="CLARABEL", **opts)
    return prob, np.asarray(f.value)


def _first_clarabel_fails(monkeypatch, status="solver_error"):
    """Clarabel's first attempt (ldpopt's 1e-10) ends ``status`` without running; the options each
    Clarabel attempt was given are recorded."""
    real, seen = routes.cvxpy_attempt, []

    def attempt(problem, name, ctx=None, tight_scs=False, cap=None, route=None):
        if name == "CLARABEL":
            seen.append(route)
            if len(seen) == 1:
                from ldpopt.problems.solution import Solution
                return Solution.failed(problem.estimate.d, status, name, problem.objective.name, "injected")
        return real(problem, name, ctx, tight_scs, cap, route)

    monkeypatch.setattr(routes, "cvxpy_attempt", attempt)
    return seen


@pytest.mark.parametrize("seed", [3, 8, 12])
def test_a_failed_tight_clarabel_is_retried_at_its_defaults_before_scs(monkeypatch, seed):
    # generated families whose chain is Clarabel then SCS (a cone objective or constraint)
    fam = draw_family(seed, 30)
    prob = fam.ldpopt_problem()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if routes.chain_for(prob, None)[:1] != ("CLARABEL",):
            pytest.skip("this family's chain does not start with Clarabel")
        seen = _first_clarabel_fails(monkeypatch)
        sol = prob.solve()
        ref, f_ref = _plain(fam)
    names = [a["solver"] for a in sol.attempts]
    if not seen:  # answered by a route before the chain
        pytest.skip("answered before the cvxpy chain")
    assert names[:2] == ["CLARABEL", CLARABEL_RETRY_NAME], names
    assert seen[1] == CLARABEL_RETRY
    if sol.success and ref.status == "optimal":
        assert "SCS" not in names
        assert np.max(np.abs(sol.f - f_ref)) < 1e-5


def test_no_retry_where_the_caller_configured_clarabel_or_the_check_refuted(monkeypatch):
    fam = draw_family(3, 30)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        seen = _first_clarabel_fails(monkeypatch)
        sol = fam.ldpopt_problem().solve(CLARABEL={"tol_feas": 1e-9})
        assert CLARABEL_RETRY_NAME not in [a["solver"] for a in sol.attempts] and len(seen) == 1
        seen = _first_clarabel_fails(monkeypatch)
        sol = fam.ldpopt_problem().solve(tol_gap_abs=1e-9)
        assert CLARABEL_RETRY_NAME not in [a["solver"] for a in sol.attempts] and len(seen) == 1
        seen = _first_clarabel_fails(monkeypatch, status="inaccurate")
        sol = fam.ldpopt_problem().solve()
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


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))
