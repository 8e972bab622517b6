"""The structured solver's simplex-only fast path (ldpopt/problems/structured/simplex.py) against its
general dual method (safeguarded Newton on λ, :mod:`ldpopt.problems.structured.dual`): the slow,
independent path on the same problem."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from ldpopt import oracles
from ldpopt.problems import Box, Simplex, SumTo, NonNegative
from ldpopt.problems.objectives import make_objective
from ldpopt.problems.structured import compile_constraints, separable_for, solve_structured
from ldpopt.problems.structured.dual import solve_multipliers
from ldpopt.problems.structured.simplex import simplex_fast


def _general(est, objective, constraints=None):
    sep = separable_for(make_objective(objective), est)
    st = compile_constraints(constraints, est.d)
    f, lam, _, _ = solve_multipliers(sep, st)
    return f, lam


@pytest.mark.parametrize("oracle", ["grr", "oue", "olh", "hr", "ss"])
def test_fast_path_equals_the_dual_method(oracle):
    rng = np.random.default_rng(3)
    grid = [*itertools.product([0.1, 1.0, 8.0], [3, 500], [100, 10**7]), (1.0, 30_000, 10**6)]
    for eps, d, n in grid:
        est = oracles.get(oracle, eps, d).simulate(rng.multinomial(n, rng.dirichlet(np.full(d, 0.3))), rng)
        for obj in ("cls", "weighted-mle"):
            r = solve_structured(est, obj)
            f, lam = _general(est, obj)
            scale = max(1.0, float(np.max(np.abs(est.f_tilde))))
            assert r.status == "optimal", (oracle, eps, d, n, obj, r.message)
            assert np.max(np.abs(r.f - f)) <= 1e-12 * scale, (oracle, eps, d, n, obj)
            if "closed_form" in r.iterations and np.count_nonzero(r.f) > 1:
                # the fast path's multiplier too (at a vertex any λ in an interval is optimal)
                # in frequency units: Δλ moves the mass by Δλ·Σ_support 1/h_v''
                sep = separable_for(make_objective(obj), est)
                sup = r.f > 0
                moved = abs(r.duals["sum"] - lam) * float(np.sum(1.0 / sep.d2(r.f)[sup]))
                assert moved <= 1e-12, (oracle, eps, d, n, obj, moved)


def test_fast_path_is_taken_and_only_where_it_applies():
    rng = np.random.default_rng(4)
    est = oracles.get("oue", 1.0, 42_178).simulate(rng.multinomial(10**6, rng.dirichlet(np.full(42_178, 0.3))), rng)
    for obj in ("cls", "weighted-mle"):
        assert solve_structured(est, obj).iterations.get("closed_form") == obj
        assert solve_structured(est, obj, [NonNegative(), SumTo(1.0)]).iterations.get("closed_form") == obj
    d = est.d
    for cons in ([Simplex(), Box(upper=0.01)], [NonNegative(), SumTo(0.5)]):
        st = compile_constraints(cons, d)
        assert simplex_fast(separable_for(make_objective("weighted-mle"), est), st) is None
    st = compile_constraints([Simplex(), Box(upper=0.01)], d)
    assert simplex_fast(separable_for(make_objective("cls"), est), st) is None
    # a total other than 1 with cls: the fast path applies and agrees with the dual method
    r = solve_structured(est, "cls", [NonNegative(), SumTo(0.5)])
    f, _ = _general(est, "cls", [NonNegative(), SumTo(0.5)])
    assert r.iterations.get("closed_form") == "cls" and np.max(np.abs(r.f - f)) <= 1e-13
    # per-value posterior weights: not a top set of one vector, the general method
    mean = est.f_tilde
    var = np.linspace(1.0, 2.0, d)
    r = solve_structured(est, "posterior", mean=mean, variance=var)
    assert "closed_form" not in r.iterations and r.status == "optimal"
