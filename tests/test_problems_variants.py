"""Prototyping variants: user objectives scaled like the built-ins (a user-written CLS as accurate as
the built-in "cls" against Norm-Sub at d = 10⁴), and the one warning when a list drops the simplex."""

from __future__ import annotations

import warnings

import cvxpy as cp
import numpy as np
import pytest

from ldpopt import oracles, postprocess
from ldpopt.problems import (
    Box,
    Monotone,
    NonNegative,
    PartitionTotals,
    Problem,
    Simplex,
    SimplexDroppedWarning,
    SubsetSum,
    SumTo,
    range_tree,
)
from ldpopt.problems.objectives.builtins import UserObjective


def _est(d, n=10**6, eps=1.0, seed=0):
    rng = np.random.default_rng(seed)
    w = 1.0 / np.arange(1, d + 1) ** 1.1
    return oracles.get("oue", epsilon=eps, d=d).simulate(rng.multinomial(n, w / w.sum()), rng)


# -- user objectives ---------------------------------------------------------------------------------

@pytest.mark.parametrize("eps,n", [(1.0, 10**6), (4.0, 10**7)])
def test_user_cls_is_as_accurate_as_the_built_in_at_d_1e4(eps, n):
    est = _est(10_000, n, eps)
    ref = postprocess(est, "norm-sub")  # the closed form of CLS on the simplex
    P = Problem(est, lambda f, e: cp.sum_squares(f - e.f_tilde))
    user = P.solve()
    # the built-in through the same cvxpy solver (its default is now ldpopt's exact structured solver)
    built = Problem(est, "cls").solve(solver=user.solver)
    assert built.success and user.success
    assert P.multiplier == pytest.approx(1.0 / P.scale**2, rel=1e-6)  # the built-in CLS's K
    err_b, err_u = np.max(np.abs(built.f - ref)), np.max(np.abs(user.f - ref))
    assert err_u <= 2 * err_b + 1e-12, (err_u, err_b)  # unscaled it was ~100x worse
    assert user.solver and user.optimal_value == pytest.approx(np.sum((user.f - est.f_tilde) ** 2), rel=1e-6)


def test_user_objective_units_and_fallbacks():
    est = _est(200, 10**5)
    # a weighted quadratic: K follows its curvature; optimal_value and duals stay in the callable's units
    w = np.linspace(1, 3, 200)
    P = Problem(est, lambda f, e: cp.sum(cp.multiply(w, cp.square(f - e.f_tilde))))
    assert P.multiplier == pytest.approx(2.0 / (2.0 * w.mean() * P.scale**2), rel=1e-6)
    sol = P.solve()
    assert sol.optimal_value == pytest.approx(float(np.sum(w * (sol.f - est.f_tilde) ** 2)), rel=1e-6)
    ref = cp.Variable(200)
    cp.Problem(cp.Minimize(cp.sum(cp.multiply(w, cp.square(ref - est.f_tilde)))), [ref >= 0, cp.sum(ref) == 1]).solve(
        solver="CLARABEL", tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12)
    np.testing.assert_allclose(sol.f, ref.value, atol=1e-8)
    # a linear objective has no curvature: the callable's own units (documented)
    assert Problem(est, lambda f, e: -cp.sum(cp.multiply(w, f))).multiplier == 1.0
    # L1: its kinks near 1/d give a curvature-like K; the optimum is the built-in L1's (an LP: compare J)
    user, built = Problem(est, lambda f, e: cp.norm1(f - e.f_tilde)).solve(), Problem(est, "l1").solve()
    assert user.optimal_value == pytest.approx(built.optimal_value, rel=1e-7)
    assert user.optimal_value == pytest.approx(float(np.abs(user.f - est.f_tilde).sum()), rel=1e-7)
    # an explicit multiplier is used as is
    assert Problem(est, UserObjective(lambda f, e: cp.sum_squares(f), multiplier=7.0)).multiplier == 7.0
    with pytest.raises(ValueError, match="multiplier"):
        UserObjective(lambda f, e: cp.sum_squares(f), multiplier=0)


def test_user_likelihood_is_scaled_and_solves_to_the_built_in_multinomial():
    rng = np.random.default_rng(0)
    w = 1 / np.arange(1, 301) ** 1.1
    est = oracles.get("grr", epsilon=4.0, d=300).simulate(rng.multinomial(10**5, w / w.sum()), rng)
    p, q, c = est.p, est.q, est.counts
    P = Problem(est, lambda f, e: -cp.sum(cp.multiply(c, cp.log(q + (p - q) * f))))
    # a log passes the curvature test: K is the curvature's, not the callable's own units
    assert P.multiplier != 1.0 and np.isfinite(P.multiplier)
    user, built = P.solve(), Problem(est, "multinomial").solve()
    assert user.success and built.success
    assert np.max(np.abs(user.f - built.f)) < 1e-6


# -- the simplex-dropped warning -------------------------------------------------------------------

def _warnings(constraints):
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        Problem(_est(20, 10**4), "cls", constraints)
    return [w for w in rec if issubclass(w.category, SimplexDroppedWarning)]


@pytest.mark.parametrize("constraints", [None, [Simplex()], [NonNegative(), SumTo(1.0)],
                                         [Simplex(), Monotone()], [Box(lower=0.0), SubsetSum(range(20), 1.0)],
                                         [NonNegative(), PartitionTotals({"a": [0, 1], "b": [2]}, {"a": .5, "b": .5})]])
def test_lists_that_keep_the_simplex_do_not_warn(constraints):
    assert _warnings(constraints) == []


def test_tree_constraints_do_not_warn():
    t = range_tree(4, 2)
    from ldpopt import Estimate
    with warnings.catch_warnings():
        warnings.simplefilter("error", SimplexDroppedWarning)
        Problem(Estimate.from_counts(np.full(t.size, 10.0), n=100, epsilon=1, p=.7, q=.1), "cls", t.constraints())


@pytest.mark.parametrize("constraints,missing", [([Box(upper=0.5)], "no f >= 0 and sum(f) == 1"),
                                                 ([NonNegative()], "no sum(f) == 1"),
                                                 ([SumTo(1.0), Monotone()], "no f >= 0"),
                                                 ([lambda f, e: f <= 0.5], "callables ['user']")])
def test_a_list_that_drops_the_simplex_warns_once_saying_how_to_add_it_back(constraints, missing):
    rec = _warnings(constraints)
    assert len(rec) == 1
    text = str(rec[0].message)
    assert missing in text and "add Simplex()" in text and "SimplexDroppedWarning" in text
    assert rec[0].filename == __file__  # points at the caller's line, not ldpopt's
