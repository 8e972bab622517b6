"""A linear objective (an LP: c·f over the simplex and a box) is solved ``optimal`` at the value of the
greedy fill (the smallest costs first, each up to its box), and PIQP runs it at its 1e-10 settings,
not at the 1e-14 gap of a curved quadratic (where it ran to its iteration limit)."""

import warnings

import cvxpy as cp
import numpy as np
from conftest import examples
from hypothesis import given, settings
from hypothesis import strategies as st

import ldpopt
from ldpopt.problems import Problem, Simplex
from ldpopt.problems.solvers.policy import QP_OPTIONS, direct_qp_options


def _greedy(c, cap):
    """min c·f over f ≥ 0, Σ f = 1, f ≤ cap: fill the cheapest values first."""
    f = np.zeros(c.size)
    left = 1.0
    for i in np.argsort(c, kind="stable"):
        f[i] = min(cap, left)
        left -= f[i]
        if left <= 0:
            break
    return float(c @ f)


@settings(max_examples=examples(4), deadline=None)
@given(d=st.integers(5, 120), seed=st.integers(0, 2**31 - 1), ties=st.booleans(), k=st.sampled_from([1.5, 2.0, 4.0]))
def test_an_lp_is_optimal_at_the_greedy_value(d, seed, ties, k):
    rng = np.random.default_rng(seed)
    c = rng.choice([0.0, 1.0, 2.0], d) if ties else rng.standard_normal(d)
    est = ldpopt.oracles.get("grr", 1.0, d).estimate(rng.multinomial(1000, np.full(d, 1.0 / d)), 1000)
    cap = k / d
    prob = Problem(est, lambda f, e: c @ f, [Simplex(), lambda f, e: [f <= cap + 0.0 * f]])
    assert direct_qp_options(prob, "PIQP")["eps_duality_gap_abs"] == 1e-10
    assert prob.objective.solver_options.get("PIQP") != QP_OPTIONS["PIQP"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sol = prob.solve()
    assert sol.status == "optimal", sol.message
    assert abs(float(c @ sol.f) - _greedy(c, cap)) <= 1e-7 * max(1.0, np.abs(c).max())
    assert sol.f.min() >= -1e-9 and sol.f.max() <= cap + 1e-9 and abs(sol.f.sum() - 1.0) <= 1e-9


def test_a_curved_quadratic_keeps_the_tight_gap():
    est = ldpopt.oracles.get("grr", 1.0, 6).estimate(np.array([30, 20, 10, 5, 5, 30]), 100)
    prob = Problem(est, lambda f, e: cp.sum_squares(f - e.f_tilde) + cp.sum_squares(cp.diff(f)), [Simplex()])
    assert prob.objective.solver_options.get("PIQP") == QP_OPTIONS["PIQP"]
