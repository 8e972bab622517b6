"""The solve's routes (ldpopt.problems.solvers.routes): which apply to which problem and ``solver``,
the chain's names, and the loop's record of what ran."""

from __future__ import annotations

import warnings

import cvxpy as cp
import numpy as np
import pytest

from ldpopt import oracles
from ldpopt.problems import Problem, Simplex, SolverWarning
from ldpopt.problems.progress import SolveContext
from ldpopt.problems.solvers.attempts import STRUCTURED
from ldpopt.problems.solvers.policy import default_chain, installed_solvers
from ldpopt.problems.solvers.routes import ROUTES, chain_for


def _est(d: int, seed: int):
    rng = np.random.default_rng(seed)
    o = oracles.get("grr", 1.0, d)
    return o.estimate(o.sample_counts(rng.multinomial(10_000, rng.dirichlet(np.ones(d))), rng=rng), 10_000)


def _plans(P, solver) -> dict:
    ctx = SolveContext.make(problem=P)
    return {r.name: r.plan(P, ctx, solver) for r in ROUTES}


@pytest.mark.parametrize("seed", range(4))
def test_which_routes_apply_follows_the_solver_asked_for(seed):
    rng = np.random.default_rng(seed)
    d = int(rng.integers(5, 40))
    est = _est(d, seed)
    built_in = Problem(est, str(rng.choice(["cls", "weighted-mle"])))
    A = rng.random((2, d))
    user = Problem(est, "cls", [Simplex(), lambda f, e: A @ f <= A @ e.f_tilde.clip(0) + 1.0])
    for P in (built_in, user):
        free = _plans(P, None)
        assert free["structured"] is True and free["cvxpy chain"] == default_chain(P)
        named = _plans(P, "clarabel")  # a cvxpy solver by name: that solver only, no route of ldpopt's
        assert named == {"simplex LP": None, "structured": None, "direct QP": None, "Newton / SQP": None,
                         "cvxpy chain": ("CLARABEL",)}
        assert free["simplex LP"] is None  # not a linear objective
        # (the structured route answers whenever it is asked for by name: no later route is planned)
        structured = next(r for r in ROUTES if r.name == "structured")
        assert structured.plan(P, SolveContext.make(problem=P), STRUCTURED.lower()) is True
    c = rng.standard_normal(d)
    assert _plans(Problem(est, lambda f, e: c @ f), None)["simplex LP"] is not None
    assert _plans(Problem(est, lambda f, e: c @ f), "clarabel")["simplex LP"] is None
    assert _plans(built_in, ["scs", "Clarabel"])["cvxpy chain"] == ("SCS", "CLARABEL")


def test_a_bad_solver_is_refused_by_name():
    P = Problem(_est(6, 0), "cls")
    with pytest.raises(ValueError, match="solver must be a cvxpy solver name.*got 'nope'"):
        chain_for(P, "nope")
    with pytest.raises(TypeError, match="solver must be a string or a list of strings, got int"):
        chain_for(P, 3)


@pytest.mark.parametrize("seed", range(3))
def test_the_loop_records_every_route_that_ran_in_order(seed):
    """The structured route does not apply to a user's constraint: the chain's solvers answer, their
    attempts the solution's, the same whether the chain is asked for by name or reached."""
    rng = np.random.default_rng(seed)
    d = int(rng.integers(5, 30))
    est = _est(d, seed)
    w = rng.random(d) + 0.5
    P = Problem(est, lambda f, e: cp.sum_squares(f - e.f_tilde) + cp.norm1(cp.multiply(w, f)) * 1e-3,
                [Simplex(), lambda f, e: f[0] <= 0.9])
    if "CLARABEL" not in installed_solvers():
        pytest.skip("Clarabel not installed")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SolverWarning)
        named = P.solve(solver="CLARABEL", progress=False)
    assert [a["solver"] for a in named.attempts] == ["CLARABEL"]
    assert named.status in ("optimal", "optimal_unverified")
    assert named.f[0] <= 0.9 + 1e-6 and abs(float(named.f.sum()) - 1.0) <= 1e-6
