"""``Problem.solve()`` uses ldpopt's structured solver by default where it applies (issue 11 item 3)
and the cvxpy chain otherwise or when its answer does not pass.

References: the closed forms Norm-Sub (CLS on the simplex, Wang et al. App. B) and MLE-Apx (Eq. 13-14),
independent of the dual solver; cvxpy solvers for the fallback routes.
"""

from __future__ import annotations

import warnings

import cvxpy as cp
import numpy as np
import pytest

from ldpopt import verify
from ldpopt.methods.mle import mle_apx
from ldpopt.methods.normalize import norm_sub
from ldpopt.problems import STRUCTURED, Problem, SeparableObjective, Simplex, SolverWarning, SubsetSum, certificate
from ldpopt.problems.solvers.structured import StructuredResult, solve_structured
from ldpopt.problems.solvers.policy import CONE_CHAIN, QP_CHAIN


@pytest.fixture(scope="module")
def kosarak():
    return verify.instance("oue", 1.0, 10**6, 42_178, 0)


@pytest.mark.parametrize("objective,closed", [("cls", norm_sub), ("weighted-mle", mle_apx)])
def test_default_is_structured_and_matches_the_closed_form_at_42178(kosarak, objective, closed):
    sol = Problem(kosarak, objective).solve(strict=True)
    assert sol.solver == STRUCTURED and sol.status == "optimal" and sol.checks.passed
    assert np.max(np.abs(sol.f - closed(kosarak))) <= 1e-12
    assert sol.checks.certificate is not None and sol.checks.error_bound <= 1e-12
    assert [a["solver"] for a in sol.attempts] == [STRUCTURED] and set(sol.duals) == {"nonnegative", "sum"}


def test_named_cvxpy_solver_is_still_used():
    est = verify.instance("oue", 1.0, 10**4, 100, 1)
    sol = Problem(est, "cls").solve(solver="CLARABEL", strict=True)
    assert sol.solver == "CLARABEL"
    ref = Problem(est, "cls").solve(strict=True)
    assert ref.solver == STRUCTURED and np.max(np.abs(sol.f - ref.f)) <= sol.checks.error_bound


def test_falls_back_on_an_l1_objective_and_on_a_user_constraint():
    est = verify.instance("oue", 1.0, 10**4, 60, 2)
    l1 = Problem(est, "l1").solve(strict=True)
    assert l1.solver in CONE_CHAIN + QP_CHAIN and all(a["solver"] != STRUCTURED for a in l1.attempts)

    def monotone_first5(f, e):
        return f[0:4] >= f[1:5]

    user = Problem(est, "cls", [Simplex(), monotone_first5]).solve(strict=True)
    # (the direct QP route, PIQP through its own interface, or the chain)
    assert user.solver in (*QP_CHAIN, "PIQP-DIRECT") and all(a["solver"] != STRUCTURED for a in user.attempts)
    assert np.all(np.diff(user.f[:5]) <= 1e-9)
    # the same problem with built-in constraints only goes to the structured solver
    built = Problem(est, "cls", [Simplex(), SubsetSum([0, 1], 0.3)]).solve(strict=True)
    assert built.solver == STRUCTURED and abs(built.f[0] + built.f[1] - 0.3) <= 1e-15


def test_structured_by_name_says_why_it_does_not_apply():
    est = verify.instance("oue", 1.0, 10**4, 30, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SolverWarning)
        sol = Problem(est, "l1").solve(solver=STRUCTURED)
    assert sol.status == "solver_error" and "does not apply" in sol.message and sol.solver == STRUCTURED


def test_a_failing_structured_answer_falls_back_to_the_chain(monkeypatch):
    """A structured result that is not certified is never returned as optimal: another route runs (the
    direct QP route, PIQP through its own interface, or the cvxpy chain)."""
    import ldpopt.problems.solvers.structured.solver as structured  # where the attempt looks it up

    real = structured.solve_structured

    def broken(*a, **k):
        r = real(*a, **k)
        r.f = r.f.copy()
        r.f[0] += 1e-3  # off the optimum and the simplex
        return r

    monkeypatch.setattr(structured, "solve_structured", broken)
    est = verify.instance("oue", 1.0, 10**4, 40, 4)
    sol = Problem(est, "cls").solve(strict=True)
    assert sol.solver in (*QP_CHAIN, "PIQP-DIRECT") and sol.attempts[0]["solver"] == STRUCTURED
    assert sol.attempts[0]["status"] == "inaccurate" and np.max(np.abs(sol.f - norm_sub(est))) <= 1e-6


def test_exports():
    est = verify.instance("oue", 1.0, 10**4, 20, 5)
    r = solve_structured(est, "cls")
    assert isinstance(r, StructuredResult) and certificate("cls", None, est, r.f).feasible
    sep = SeparableObjective(lambda f, e: (f - e.f_tilde) ** 2, lambda f, e: 2 * (f - e.f_tilde),
                             lambda f, e: np.full_like(f, 2.0))
    assert np.max(np.abs(solve_structured(est, sep).f - r.f)) <= 1e-12
