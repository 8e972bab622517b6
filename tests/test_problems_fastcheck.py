"""The per-call savings of ``Problem(...).solve()`` on the structured route (issue 11 item 3): each
against the slow, obviously correct path it replaces.

* the cvxpy problem is built lazily for the simplex family: the same problem when it is built;
* the check's numpy g(f) of the built-ins against cvxpy's own expression values;
* the exact sum over the nonzeros against ``math.fsum`` over every entry;
* the check reusing the structured solver's certificate against the check computing its own.
"""

from __future__ import annotations

import math

import cvxpy as cp
import numpy as np
import pytest

from ldpopt import oracles
from ldpopt.problems import Box, Fixed, NonNegative, Problem, Simplex, SubsetSum, SumTo
from ldpopt.problems.check.certificate import certificate
from ldpopt.problems.check.verdict import check_solution, violation_tol
from ldpopt.problems.constraints.base import _fsum
from ldpopt.problems.solvers.structured import solve_structured


def _est(d=200, n=10**5, eps=1.0, seed=0):
    rng = np.random.default_rng(seed)
    w = 1.0 / np.arange(1, d + 1) ** 1.5
    return oracles.get("oue", epsilon=eps, d=d).simulate(rng.multinomial(n, w / w.sum()), rng)


def test_numpy_constraint_values_equal_cvxpys():
    """builtin_g (the duality-gap term's g(f)) equals cvxpy's expression value and equality flag."""
    from ldpopt.problems.constraints.jacobians import builtin_g

    d = 12
    est = _est(d=d)
    cons = [Simplex(), NonNegative(name="nn"), SumTo(0.7, name="s"), Box(lower=0.01, upper=np.full(d, 0.9), name="b"),
            SubsetSum([1, 3, 5], 0.2, name="eq"), SubsetSum(np.arange(d) < 4, 0.5, "<=", name="le"),
            SubsetSum([0, 2], 0.1, ">=", name="ge"), Fixed([7, 8], [0.01, 0.02], name="fx"),
            Fixed([9, 10], 0.03, name="fx1")]
    P = Problem(est, "cls", cons)
    f = np.random.default_rng(5).random(d)
    P.x.value = f / P.scale
    seen = 0
    for name, con in P.named_constraints.items():
        owner, k = P.owners[name]
        g, eq = builtin_g(owner, k, f, d)
        np.testing.assert_allclose(np.atleast_1d(g), np.atleast_1d(con.expr.value), rtol=1e-13, atol=1e-15,
                                   err_msg=name)
        assert eq == isinstance(con, (cp.constraints.Zero, cp.constraints.Equality)), name
        seen += 1
    assert seen == 11


def test_exact_sum_over_nonzeros_is_fsum_of_everything():
    rng = np.random.default_rng(1)
    v = np.where(rng.random(10_000) < 0.9, 0.0, rng.standard_normal(10_000) * 10.0 ** rng.integers(-20, 5, 10_000))
    v[:3] = [-0.0, 1e300, -1e300]
    assert _fsum(v) == math.fsum(v.tolist())
    assert _fsum(np.zeros(5)) == 0.0
    assert np.isnan(_fsum(np.array([0.0, np.nan, 1.0])))


@pytest.mark.parametrize("cons", [None, [Simplex()], [NonNegative(), SumTo(1.0)]])
def test_simplex_problem_builds_cvxpy_only_when_asked_and_the_same(cons):
    est = _est()
    p = Problem(est, "cls", cons)
    sol = p.solve()
    assert sol.status == "optimal" and sol.solver == "LDPOPT-STRUCTURED"
    assert p._cvx is None  # the structured route and its check never needed cvxpy
    eager = Problem(est, "cls", [Simplex(), Box(lower=0.0)])  # not the simplex family: built at once
    assert eager._cvx is not None
    assert p.constraint_names == list(p.named_constraints)  # building keeps the names, in order
    assert p.cvxpy_problem.is_qp() and p.x.shape == (est.d,)
    ref = p.solve(solver="CLARABEL")  # a lazy problem still goes to cvxpy when asked
    assert ref.status == "optimal"
    assert np.max(np.abs(ref.f - sol.f)) < 1e-6


def test_non_dcp_user_objective_still_raises_at_construction():
    est = _est()
    with pytest.raises(ValueError, match="DCP"):
        Problem(est, lambda f, e: cp.sqrt(cp.sum(f)), [Simplex()])


@pytest.mark.parametrize("objective", ["cls", "weighted-mle", "binomial"])
@pytest.mark.parametrize("d", [300, 5000])  # below / above the certificate's support path (MIN_D = 4096)
def test_check_reusing_the_structured_certificate_equals_its_own(objective, d):
    """check_solution(..., certificate=r.certificate) against check_solution computing both of its
    certificates itself: the same violation, stationarity, gap and verdict, and the error bound to
    its rounding level (the recovered-multiplier certificate is skipped only when the first is
    already at rounding level)."""
    est = _est(d=d, n=10**6)
    p = Problem(est, objective, [Simplex()])
    r = solve_structured(est, p.objective, p.constraints)
    fast = check_solution(p, r.f, r.duals, certificate=r.certificate)
    slow = check_solution(p, r.f, r.duals)
    assert fast.passed and slow.passed
    assert fast.violations == slow.violations
    assert fast.stationarity == slow.stationarity and fast.gap == slow.gap
    assert fast.dual_infeasibility == slow.dual_infeasibility
    # the reused certificate is the check's own first one (solver's multipliers), number for number
    own = certificate(p.objective, p.constraints, est, r.f, r.duals, feas_tol=violation_tol(d))
    got = fast.certificate.as_dict()
    for k, v in own.as_dict().items():
        assert got[k] == v or (isinstance(v, float) and np.isnan(v) and np.isnan(got[k])), k
    rnd = max(fast.certificate.distance_rounding, slow.certificate.distance_rounding)
    assert abs(fast.error_bound - slow.error_bound) <= 2 * rnd


def test_reused_certificate_is_recomputed_when_it_does_not_apply():
    """A certificate for other duals, or one infeasible at the check's tolerance, is not taken."""
    import dataclasses

    est = _est(d=5000, n=10**6)
    p = Problem(est, "cls", [Simplex()])
    r = solve_structured(est, p.objective, p.constraints)
    slow = check_solution(p, r.f, r.duals)
    bad = dataclasses.replace(r.certificate, primal_violation=1.0, distance_linf=0.0, distance_rounding=0.0)
    # a certificate handed with another duals object (equal values) is not taken: reused, its
    # doctored numbers would show
    other = check_solution(p, r.f, dict(r.duals), certificate=bad)
    assert other.certificate.primal_violation < 1e-12 and other.error_bound == slow.error_bound
    got = check_solution(p, r.f, r.duals, certificate=bad)
    assert got.certificate.primal_violation < 1e-12 and got.error_bound == slow.error_bound
