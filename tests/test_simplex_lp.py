"""A linear objective over the simplex alone (``solvers.simplex_lp``): answered in closed form, t·e_j at
the smallest cost, certified by ldpopt's check, at plain cvxpy + Clarabel's optimal value; other
problems are not taken."""

from __future__ import annotations

import warnings

import cvxpy as cp
import numpy as np
import pytest
from problem_strategies import estimate

from ldpopt.problems import NonNegative, Problem, Simplex, SumTo
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
        assert "values share it" in sol.message and sol.not_unique


def test_other_problems_are_not_taken():
    rng = np.random.default_rng(9)
    d = 20
    est = estimate("plain", d, rng)
    c = rng.standard_normal(d)
    p = cp.Parameter(d, value=c)
    assert simplex_lp(Problem(est, lambda f, e: c @ f, [Simplex()])) is not None
    for prob in (Problem(est, lambda f, e: c @ f + 1e-3 * cp.sum_squares(f), [Simplex()]),
                 Problem(est, lambda f, e: c @ f, [Simplex(), lambda f, e: [f[0] <= 0.1]]),
                 Problem(est, lambda f, e: c @ f + cp.norm1(f - e.f_tilde), [Simplex()]),
                 Problem(est, lambda f, e: p @ f, [Simplex()]),
                 Problem(est, lambda f, e: c @ f, [NonNegative(), SumTo(1.0), SumTo(1.0)])):
        assert simplex_lp(prob) is None
