"""Monotone (ordinal domains): the constraint against cvxpy with the inequalities written by hand,
its numpy residuals against brute force, and the closed form (simplex projection of PAV) against
the solver up to d = 10⁴ and against brute-force isotonic regression at tiny d."""

from __future__ import annotations

import itertools

import cvxpy as cp
import numpy as np
import pytest

from ldpopt import oracles
from ldpopt.problems import Monotone, Problem, Simplex
from ldpopt.problems.constraints.order import isotonic, project_monotone_simplex
from ldpopt.problems.check.verdict import constraint_violations


def _est(d, n=10**5, eps=1.0, seed=0):
    rng = np.random.default_rng(seed)
    w = 1.0 / np.arange(1, d + 1) ** 1.1
    return oracles.get("oue", epsilon=eps, d=d).simulate(rng.multinomial(n, w / w.sum()), rng)


def _by_hand(y, cons_fn):
    f = cp.Variable(y.shape[0])
    cp.Problem(cp.Minimize(cp.sum_squares(f - y)), [f >= 0, cp.sum(f) == 1, *cons_fn(f)]).solve(
        solver="CLARABEL", tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12)
    return f.value


def test_isotonic_matches_brute_force_pooling_at_tiny_d():
    # brute force: the isotonic regression is a block-mean vector over some partition into runs;
    # among all 2^(d-1) run partitions whose block means are non-increasing, the least-squares one
    rng = np.random.default_rng(1)
    for _ in range(20):
        y = rng.normal(size=6)
        best, best_err = None, np.inf
        for cuts in itertools.product([0, 1], repeat=5):
            bounds = [0] + [i + 1 for i, c in enumerate(cuts) if c] + [6]
            g = np.concatenate([np.full(b - a, y[a:b].mean()) for a, b in zip(bounds, bounds[1:])])
            if np.all(np.diff(g) <= 1e-15) and np.sum((g - y) ** 2) < best_err:
                best, best_err = g, np.sum((g - y) ** 2)
        np.testing.assert_allclose(isotonic(y), best, atol=1e-12)
        np.testing.assert_allclose(isotonic(-y, "nondecreasing"), -best, atol=1e-12)


@pytest.mark.parametrize("direction", ["nonincreasing", "nondecreasing"])
def test_closed_form_matches_cvxpy_written_by_hand(direction):
    y = _est(300).f_tilde
    sign = 1 if direction == "nonincreasing" else -1
    ref = _by_hand(y, lambda f: [sign * cp.diff(f) <= 0])
    got = project_monotone_simplex(y, direction)
    np.testing.assert_allclose(got, ref, atol=1e-8)
    assert got.sum() == pytest.approx(1.0, abs=1e-12) and got.min() >= 0
    assert np.all(sign * np.diff(got) <= 0)


def test_closed_form_with_a_chain_over_part_of_the_domain_matches_cvxpy():
    y = _est(200, seed=3).f_tilde
    order = np.random.default_rng(4).permutation(200)[:60]
    ref = _by_hand(y, lambda f: [f[order[1:]] <= f[order[:-1]]])
    np.testing.assert_allclose(Monotone(order=order).project(y), ref, atol=1e-8)


@pytest.mark.parametrize("d", [1000, 10_000])
def test_closed_form_matches_problem_solve_at_scale(d):
    est = _est(d, n=10**6)
    sol = Problem(est, "cls", [Simplex(), Monotone()]).solve()
    assert sol.status == "optimal", sol.message
    got = Monotone().project(est.f_tilde)
    # the solver's answer passed ldpopt's check (error bound 1e-2/d); agree to that scale
    assert np.max(np.abs(got - sol.f)) < 1e-2 / d
    # and the closed form is at least as good for the documented objective
    assert np.sum((got - est.f_tilde) ** 2) <= np.sum((sol.f - est.f_tilde) ** 2) + 1e-15


def test_partial_order_matches_cvxpy_by_hand_and_residuals_are_brute_force():
    est = _est(40, seed=5)
    pairs = [(0, 5), (0, 6), (5, 9), (6, 9), (10, 2), (2, 3)]  # a DAG, not a chain
    sol = Problem(est, "cls", [Simplex(), Monotone("nondecreasing", pairs=pairs)]).solve()
    assert sol.status == "optimal", sol.message
    ref = _by_hand(est.f_tilde, lambda f: [f[a] <= f[b] for a, b in pairs])
    np.testing.assert_allclose(sol.f, ref, atol=1e-7)
    # numpy residual = the worst violated pair, by a plain loop
    f = np.random.default_rng(0).random(40)
    P = Problem(est, "cls", [Simplex(), Monotone("nondecreasing", pairs=pairs)])
    want = max(max(f[a] - f[b] for a, b in pairs), 0.0)
    assert constraint_violations(P, f)["monotone"] == pytest.approx(want, abs=1e-15)
    assert sol.duals["monotone"].shape == (len(pairs),) and np.all(sol.duals["monotone"] >= -1e-9)


def test_check_catches_a_violated_order():
    est = _est(50)
    P = Problem(est, "cls", [Simplex(), Monotone()])
    f = np.full(50, 1 / 50)
    f[10], f[11] = f[10] - 1e-4, f[11] + 1e-4  # f_11 > f_10 by 2e-4
    assert constraint_violations(P, f)["monotone"] == pytest.approx(2e-4, rel=1e-9)


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="direction"):
        Monotone("down")
    with pytest.raises(ValueError, match="not both"):
        Monotone(order=[0, 1], pairs=[(0, 1)])
    with pytest.raises(ValueError, match=r"pairs\[1\]"):
        Monotone(pairs=[(0, 1), (2, 2)])
    with pytest.raises(ValueError, match="pairs must lie"):
        Problem(_est(5), "cls", [Simplex(), Monotone(pairs=[(0, 7)])])
    with pytest.raises(ValueError, match="order must not repeat"):
        Problem(_est(5), "cls", [Simplex(), Monotone(order=[0, 1, 0])])
    with pytest.raises(ValueError, match="total order"):
        Monotone(pairs=[(0, 1)]).project(np.ones(3))
