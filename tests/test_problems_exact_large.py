"""The exact feasibility decision at sizes beyond the rational simplex (ldpopt.problems.feasibility,
exact_point, chain_substitution): full-domain Monotone chains and dense LinearEquality rows at
d ≥ 2,000, each empty or not by a hand-derived argument (below), at margins 1e-13 … 1e-16 on both
sides: an empty set ends ``infeasible`` and nothing else, a non-empty one is proved feasible and
never ends ``infeasible``."""

from __future__ import annotations

import warnings
from fractions import Fraction

import numpy as np
import pytest

from ldpopt import oracles
from ldpopt.problems import LinearEquality, Monotone, NonNegative, Problem, Simplex, SolverWarning, SubsetSum, SumTo
from ldpopt.problems.constraints.exact_point import point_ok
from ldpopt.problems.constraints.feasibility import decide

MARGINS = [1e-13, 1e-14, 1e-15, 1e-16]


def _est(d):
    rng = np.random.default_rng(3)
    o = oracles.get("oue", 1.0, d)
    return o.estimate(o.sample_counts(rng.multinomial(10**6, rng.dirichlet(np.ones(d))), rng=rng), 10**6)


@pytest.fixture(scope="module")
def ests():
    return {d: _est(d) for d in (2000, 2048)}


def _chain_half(d, m):
    """f nonincreasing with Σ f = 1 puts at least the mean share k/d = 1/2 on the first k = d/2
    values (the mean of the largest k is at least the mean of all): ≤ 1/2 − m is empty for every
    m > 0, ≤ 1/2 + m holds at the uniform point."""
    return [Simplex(), Monotone("nonincreasing"), SubsetSum(np.arange(d // 2), 0.5 + m, "<=")]


def _chain_difference(d, m):
    """Σ(first half) − Σ(second half) ≥ 0 on a nonincreasing f (value i of the first half is ≥ value
    i of the second): = −m is empty for m > 0, = +m holds at f_i = (1 ± m)/d (first/second half)."""
    row = np.r_[np.ones(d // 2), -np.ones(d - d // 2)][None, :]
    return [Simplex(), Monotone("nonincreasing"), LinearEquality(row, m)]


def _dense(d, m, rows=20):
    """Random dyadic rows M with b = M x* at the planted x* = 2^-11 (exact in float), and one more
    row M_0 + M_1 with b_0 + b_1 + m: the multipliers (1, 1, −1) give 0 = m, so any m ≠ 0 is
    empty; m = 0 holds at x*."""
    rng = np.random.default_rng(7)
    M = rng.integers(-8, 9, size=(rows, d)) / 8.0
    x = np.full(d, 2.0**-11)
    b = M @ x
    assert Fraction(b[0]) + Fraction(b[1]) == sum(Fraction(v) for v in (M[0] + M[1]) * x[0])  # exact data
    return [NonNegative(), SumTo(float(x.sum())), LinearEquality(np.vstack([M, M[0] + M[1]]), np.r_[b, b[0] + b[1] + m])]


def _status(P):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SolverWarning)
        return P.solve().status


@pytest.mark.parametrize("d", [2000, 2048])
@pytest.mark.parametrize("m", MARGINS)
def test_an_empty_chain_system_is_infeasible_at_any_margin(ests, d, m):
    for cons in (_chain_half(d, -m), _chain_difference(d, -m)):
        P = Problem(ests[d], "cls", cons)
        got = decide(P)
        assert got.feasible is False and got.certificate.margin > 0, got
        assert _status(P) == "infeasible"


@pytest.mark.parametrize("d", [2000, 2048])
def test_a_thin_nonempty_chain_system_is_proved_feasible(ests, d):
    for m in MARGINS + [0.0]:
        for cons in (_chain_half(d, m), _chain_difference(d, m)):
            got = decide(Problem(ests[d], "cls", cons))
            assert got.feasible is True and got.complete, (m, got)


def test_a_solver_saying_infeasible_on_a_proved_feasible_set_is_a_solver_failure(ests):
    """A proof of feasibility outranks a solver's "infeasible" (an empty-looking thin set at a
    solver's tolerance): the status becomes solver_error."""
    from ldpopt.problems.solution import Solution

    P = Problem(ests[2048], "cls", _chain_difference(2048, 1e-16))
    from ldpopt.problems.progress import SolveContext
    from ldpopt.problems.solvers.routes import not_infeasible_if_known_feasible

    ctx = SolveContext.make(problem=P)
    ctx.feasibility = decide(P)
    sol = Solution.failed(2048, "infeasible", "PIQP", "cls", "said infeasible")
    not_infeasible_if_known_feasible(P, ctx, sol)
    assert ctx.feasibility.feasible is True and sol.status == "solver_error"


@pytest.mark.parametrize("m", [1e-13, -1e-16])
def test_dense_rows_conflicting_by_a_hair_are_infeasible(ests, m):
    P = Problem(ests[2048], "cls", _dense(2048, m))
    got = decide(P)
    assert got.feasible is False and got.certificate.names == ["linear"]
    assert _status(P) == "infeasible"


def test_dense_rows_at_the_planted_point_are_proved_feasible(ests):
    P = Problem(ests[2048], "cls", _dense(2048, 0.0))
    assert decide(P).feasible is True
    assert _status(P) != "infeasible"


def test_the_exact_point_check_sees_one_ulp():
    """x = (1/3, 2/3) as Fractions meets x0 + x1 = 1 exactly, 2^-80 more does not; the float pair
    (0.1, 0.2) meets neither x0 + x1 = 0.3 nor = 0.1 + 0.2 rounded (the exact sum of the two binary
    numbers is neither), (0.5, 0.25) meets = 0.75; x0 ≤ 0.1 fails one ulp above."""
    A = np.array([[1.0, 1.0]])
    lo, up = np.zeros(2), np.full(2, np.inf)
    comp = np.array([0, 1])
    assert point_ok(A, [1.0], [False], lo, up, np.zeros(2), comp, {0: Fraction(1, 3), 1: Fraction(2, 3)})
    assert not point_ok(A, [1.0], [False], lo, up, np.zeros(2), comp, {0: Fraction(1, 3), 1: Fraction(2, 3) + Fraction(1, 2**80)})
    assert not point_ok(A, [0.3], [False], lo, up, np.array([0.1, 0.2]))
    assert not point_ok(A, [0.1 + 0.2], [False], lo, up, np.array([0.1, 0.2]))
    assert point_ok(A, [0.75], [False], lo, up, np.array([0.5, 0.25]))
    assert not point_ok(np.array([[1.0, 0.0]]), [0.1], [True], lo, up, np.array([np.nextafter(0.1, 1), 0.0]))
