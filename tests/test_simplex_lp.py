"""A linear objective over the simplex and per-value bounds (``solvers.simplex_lp``): answered in
closed form (t·e_j at the smallest cost over the simplex alone; the continuous knapsack with bounds:
a Box, a user's ‖f − c‖∞ ball, rows of one value), certified by ldpopt's check, at plain cvxpy +
Clarabel's optimal value; other problems are not taken."""

from __future__ import annotations

import warnings

import cvxpy as cp
import numpy as np
import pytest
from conftest import examples
from hypothesis import given, settings
from hypothesis import strategies as st
from problem_strategies import estimate

from ldpopt.problems import Box, Fixed, NonNegative, Problem, Simplex, SumTo
from ldpopt.problems.solvers.simplex_lp import SOLVER, simplex_lp


@pytest.mark.parametrize("seed", range(6))
def test_the_closed_form_is_certified_at_cvxpys_value(seed):
    rng = np.random.default_rng(seed)
    d = int(rng.integers(2, 300))
    est = estimate(str(rng.choice(["plain", "ties", "zeros"])), d, rng)
    ties = bool(seed % 2)
    c = rng.choice([0.0, 1.0, 2.0], d) if ties else rng.standard_normal(d) * 10.0 ** rng.uniform(-3, 3)
    k = float(rng.standard_normal())
    if seed % 3 == 2:
        t = float(rng.uniform(0.2, 5.0))
        cons = [NonNegative(), SumTo(t)]
    else:
        t, cons = 1.0, [Simplex()]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sol = Problem(est, lambda f, e: c @ f + k, cons).solve()
        f = cp.Variable(d)
        ref = cp.Problem(cp.Minimize(c @ f + k), [f >= 0, cp.sum(f) == t])
        ref.solve(solver="CLARABEL", tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10)
    assert sol.solver == SOLVER and sol.status == "optimal", sol.message
    assert sol.optimal_value == pytest.approx(ref.value, rel=1e-7, abs=1e-7 * max(1.0, float(np.abs(c).max()) * t))
    assert np.all(sol.f >= 0) and np.sum(sol.f) == pytest.approx(t)
    assert c @ sol.f == pytest.approx(t * c.min())
    if np.count_nonzero(c == c.min()) > 1:
        assert "values share the cost" in sol.message and sol.not_unique


def test_other_problems_are_not_taken():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the list without f >= 0 is meant
        rng = np.random.default_rng(9)
        d = 20
        est = estimate("plain", d, rng)
        c = rng.standard_normal(d)
        p = cp.Parameter(d, value=c)
        assert simplex_lp(Problem(est, lambda f, e: c @ f, [Simplex()])) is not None
        for prob in (Problem(est, lambda f, e: c @ f + 1e-3 * cp.sum_squares(f), [Simplex()]),
                     Problem(est, lambda f, e: c @ f, [Simplex(), lambda f, e: [f[0] + f[1] <= 0.1]]),
                     Problem(est, lambda f, e: c @ f, [Simplex(), lambda f, e: [3 * f[0] <= 0.1]]),
                     Problem(est, lambda f, e: c @ f, [Simplex(), lambda f, e: [cp.sum_squares(f) <= 0.1]]),
                     Problem(est, lambda f, e: c @ f, [Simplex(), Fixed([0], 0.1)]),
                     Problem(est, lambda f, e: c @ f, [SumTo(1.0), Box(upper=0.5)]),  # no lower bound: may be unbounded
                     Problem(est, lambda f, e: c @ f + cp.norm1(f - e.f_tilde), [Simplex()]),
                     Problem(est, lambda f, e: p @ f, [Simplex()]),
                     Problem(est, lambda f, e: c @ f, [NonNegative(), SumTo(1.0), SumTo(1.0)])):
            assert simplex_lp(prob) is None


@settings(max_examples=examples(25), deadline=None)
@given(data=st.data(), d=st.integers(2, 200), seed=st.integers(0, 2**32 - 1), ties=st.booleans(),
       kind=st.sampled_from(["box", "inf ball", "rows", "equal rows", "two balls"]))
def test_with_per_value_bounds_the_knapsack_is_certified_at_cvxpys_value(data, d, seed, ties, kind):
    """Bounds from a Box, a user's ‖f − g‖∞ ball (one or two), or a user's rows of one value times a
    power of two (repeated values, ≥ and == rows): the closed form is ``optimal`` at Clarabel's value
    (10⁻¹⁰) and within the bounds, evaluated here in numpy."""
    rng = np.random.default_rng(seed)
    est = estimate("plain", d, rng)
    c = rng.choice([0.0, 1.0, 2.0], d) if ties else rng.standard_normal(d)
    g = rng.dirichlet(np.ones(d))
    r = float(data.draw(st.sampled_from([0.5, 2.0, 10.0]))) / d
    idx = rng.integers(0, d, int(rng.integers(1, 2 * d + 1)))
    cap = g[idx] + r
    a = 2.0 ** rng.integers(-3, 4, idx.size)
    lower = np.maximum(g - r, 0.0)
    if kind == "box":
        cons, lo, up = [Simplex(), Box(lower, g + r)], lower, g + r
    elif kind in ("inf ball", "two balls"):
        r2 = 0.5 * r if kind == "two balls" else r
        cons = [Simplex(), lambda f, e: cp.norm(f - g, "inf") <= r, lambda f, e: cp.norm(f - g, "inf") <= r2]
        lo, up = np.maximum(g - r2, 0.0), g + r2
    elif kind == "rows":
        cons = [Simplex(), lambda f, e: [cp.multiply(a, f[idx]) <= a * cap, -f[idx[:1]] >= -cap[:1]]]
        lo, up = np.zeros(d), np.full(d, np.inf)
        np.minimum.at(up, idx, cap)
    else:  # one value fixed by an equality row, written scaled
        v = float(min(g[idx[0]], 0.5))
        cons = [Simplex(), lambda f, e: {"fix": 4.0 * f[idx[0]] == 4.0 * v}]
        lo, up = np.zeros(d), np.full(d, np.inf)
        lo[idx[0]] = up[idx[0]] = v
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        prob = Problem(est, lambda f, e: c @ f, cons)
        sol = prob.solve()
        f = cp.Variable(d)
        ref = cp.Problem(cp.Minimize(c @ f), [f >= lo, f <= np.minimum(up, 1.0), cp.sum(f) == 1])
        ref.solve(solver="CLARABEL", tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10)
    assert sol.solver == SOLVER and sol.status == "optimal", sol.message
    assert np.all(sol.f >= lo) and np.all(sol.f <= up) and abs(np.sum(sol.f) - 1.0) <= 1e-12
    assert c @ sol.f <= ref.value + 1e-7 * max(1.0, float(np.abs(c).max()))
