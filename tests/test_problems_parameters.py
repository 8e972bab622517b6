"""cvxpy Parameters in a user objective are read at every solve(): a λ sweep on one Problem against a
fresh Problem per λ and an exact KKT reference (tests/_kl_reference.py), Clarabel's answer at the new
λ certified, and a Parameter without a value a typed error naming it."""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest
from _count_estimates import oue_counts
from _kl_reference import cls_kl_simplex

from ldpopt.problems import MissingParameterError, Problem, Simplex

LAMS = (1e-3, 0.1, 0.01, 1.0, 1e-3)  # the last one revisits the first


@pytest.mark.parametrize("d", [12, 1000])
def test_lambda_sweep_on_one_problem_matches_fresh_problems_and_the_exact_reference(d):
    est = oue_counts(d, 100_000, seed=1)
    p = np.full(d, 1.0 / d)
    lam = cp.Parameter(nonneg=True, value=LAMS[0])
    prob = Problem(est, lambda f, e: cp.sum_squares(f - e.f_tilde) + lam * cp.sum(cp.kl_div(f, p)))
    for value in LAMS:
        lam.value = value
        sol = prob.solve()
        ref = cls_kl_simplex(est.f_tilde, p, value)
        fresh = Problem(est, lambda f, e, v=value: cp.sum_squares(f - e.f_tilde) + v * cp.sum(cp.kl_div(f, p))).solve()
        assert sol.status == "optimal" and fresh.status == "optimal"
        err = float(np.max(np.abs(sol.f - ref)))
        assert err <= sol.checks.error_bound and err <= 1e-12, (value, err, sol.checks.error_bound)
        assert np.max(np.abs(sol.f - fresh.f)) <= 1e-13
    # the answers differ across λ (a frozen λ would give the first answer every time)
    lam.value = LAMS[0]
    f0 = prob.solve().f
    lam.value = LAMS[3]
    assert np.max(np.abs(prob.solve().f - f0)) > 1e-3


def test_clarabel_at_a_new_parameter_value_is_certified_not_inaccurate():
    d = 1000
    est = oue_counts(d, 100_000, seed=1)
    p = np.full(d, 1.0 / d)
    lam = cp.Parameter(nonneg=True, value=1e-3)
    prob = Problem(est, lambda f, e: cp.sum_squares(f - e.f_tilde) + lam * cp.sum(cp.kl_div(f, p)))
    prob.solve()
    lam.value = 0.1
    sol = prob.solve(solver="CLARABEL")
    ref = cls_kl_simplex(est.f_tilde, p, 0.1)
    assert sol.status == "optimal", sol.message
    assert np.max(np.abs(sol.f - ref)) <= sol.checks.error_bound


def test_a_parameter_without_a_value_is_a_typed_error_naming_it():
    est = oue_counts(8, 10_000, seed=2)
    lam = cp.Parameter(nonneg=True, name="weight")
    prob = Problem(est, lambda f, e: cp.sum_squares(f - e.f_tilde) + lam * cp.sum(cp.kl_div(f, np.full(8, 0.125))))
    with pytest.raises(MissingParameterError, match="'weight' has no value"):
        prob.solve()
    assert "not recognised" in prob.objective_route  # no value to recognise it with yet
    lam.value = 0.5
    assert prob.solve().status == "optimal" and prob.objective_route.startswith("separable (recognised)")
    # in a user constraint too (the cvxpy problem's own Parameters)
    cap = cp.Parameter(name="cap")
    con = Problem(est, "cls", [Simplex(), lambda f, e: f[0] <= cap])
    with pytest.raises(MissingParameterError, match="'cap'"):
        con.solve()


@pytest.mark.parametrize("kind, route", [
    ("3-norm", "cvxpy chain (not recognised"),
    ("linear + total variation", "linear plus polyhedral terms (recognised)"),
])
def test_a_callable_left_to_the_cvxpy_chain_is_built_once_for_recognition_and_once_for_cvxpy(kind, route):
    """Recognition hands the Parameters of the expression it built to the route's cache (no third
    build: ``geo_mean`` at d = 100 costs cvxpy 1.5 s per build), whether it did not recognise the
    expression or recognised one it has no certificate for; the Parameter still drives the solve."""
    est = oue_counts(30, 20_000, seed=2)
    lam = cp.Parameter(nonneg=True, value=1e-3)
    calls = []
    cost = np.linspace(-1.0, 1.0, est.d)

    def func(f, e):
        calls.append(1)
        if kind == "3-norm":  # not recognised
            return cp.sum_squares(f - e.f_tilde) + lam * cp.norm(f - 1.0 / e.d, 3)
        return cost @ f + lam * cp.norm1(cp.diff(f))  # recognised, its smooth part not strictly convex

    P = Problem(est, func, [Simplex()])
    assert P.objective_route.startswith(route) and len(calls) == 2
    assert P._live.params == (lam,)
    first = P.solve().f
    lam.value = 1.0
    second = P.solve().f
    assert np.max(np.abs(first - second)) > 1e-6  # the new value was read
