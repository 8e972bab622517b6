"""The exact feasibility decision of built-in linear constraints (ldpopt.problems.constraints.feasibility.decide,
ldpopt.problems.constraints.exact_lp): random mixed systems at margins 10^-k (k ≤ 15) on both sides against an
independent Fourier–Motzkin reference in rational arithmetic (tests/_lp_reference.py), the exact
group sums against Fractions, the rational simplex on its own, and conflicts the earlier search
missed (a Monotone pair spanning the whole domain of d = 2 merged two different values; a chain
against a row at 1e-13, 'optimal' before)."""

from __future__ import annotations

import warnings
from fractions import Fraction

import numpy as np
import pytest
from _lp_reference import feasible, random_system

from ldpopt import oracles
from ldpopt.problems import (
    Fixed,
    LinearEquality,
    Monotone,
    NonNegative,
    Problem,
    Simplex,
    SolverWarning,
    SubsetSum,
    SumTo,
)
from ldpopt.problems.constraints.exact_lp import ExactSystem, exact_group_sums
from ldpopt.problems.constraints.feasibility import decide


def _est(d, seed=0):
    rng = np.random.default_rng(seed)
    o = oracles.get("oue", 1.0, d)
    return o.estimate(o.sample_counts(np.full(d, 100), rng=rng), 100 * d)


def test_random_mixed_systems_agree_with_fourier_motzkin():
    """d = 2–7, 1–4 of Box, Fixed, SubsetSum, Monotone, PartitionTotals, LinearEquality, Hierarchy over
    the simplex or a SumTo, one total 10^-k (k = 1..15) inside or outside: every system is decided,
    and the same way as the reference; a certificate's margin is positive."""
    rng = np.random.default_rng(20261124)
    ests = {}
    seen = {True: 0, False: 0}
    thin = 0
    for _ in range(160):
        d = int(rng.integers(2, 8))
        ests.setdefault(d, _est(d, d))
        cons, rows = random_system(rng, d)
        truth = feasible(rows, d)
        if truth is None:
            continue  # the reference's elimination would grow too large
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got = decide(Problem(ests[d], "cls", cons))
        assert got.complete and got.feasible is truth, (cons, truth, got)
        if not truth:
            assert got.certificate.margin > 0 and got.certificate.source == "ldpopt"
            thin += got.certificate.margin < 1e-9
        seen[truth] += 1
    assert seen[True] >= 50 and seen[False] >= 50 and thin >= 5, (seen, thin)


def test_exact_group_sums_are_exact():
    """Sums whose float evaluation loses the small terms (1e16 + 1 − 1e16), infinite entries, empty groups."""
    x = np.array([1e16, 1.0, -1e16, 0.1, 0.2, np.inf, 3.0, 2.0**-1074])
    inv = np.array([0, 0, 0, 1, 1, 2, 2, 4])
    got = exact_group_sums(x, inv, 5)
    assert got[0] == 1 and got[1] == Fraction(0.1) + Fraction(0.2) and got[2] is None
    assert got[3] == 0 and got[4] == Fraction(2) ** -1074


def test_rational_simplex_decides_a_degenerate_system_and_its_certificate_checks():
    """x1 + x2 = 1, x1 − x2 ≤ 0, x1 ≥ 1/2 + 2^-60 (infeasible by 2^-60 after doubling), x ∈ [0, 1]²:
    the rational simplex finds the certificate, which farkas_margin confirms; with 1/2 the point
    (1/2, 1/2) is found."""
    A = [[1.0, 1.0], [1.0, -1.0]]
    lo = [Fraction(0.5) + Fraction(2) ** -60, Fraction(0)]
    verdict, y = ExactSystem(A, [1.0, 0.0], [False, True], lo, [Fraction(1), Fraction(1)]).simplex()
    assert verdict == "infeasible"
    assert ExactSystem(A, [1.0, 0.0], [False, True], lo, [Fraction(1)] * 2).farkas_margin(y) == Fraction(2) ** -59
    verdict, x = ExactSystem(A, [1.0, 0.0], [False, True], [Fraction(0.5), Fraction(0)], [Fraction(1)] * 2).simplex()
    assert verdict == "feasible" and x == [Fraction(1, 2), Fraction(1, 2)]


@pytest.mark.parametrize("d,cons,names", [
    # a pair over the whole domain (d = 2) was taken for a Σ f row and its two values merged: f0 ≤ f1
    # with f0 + f1 = 1 and f0 = 1/2 + 1e-13 was left to the solvers
    (2, [NonNegative(), SumTo(1.0), Fixed([0], 0.5 + 1e-13), Monotone("nondecreasing", pairs=[(0, 1)])],
     ["sum", "fixed", "monotone"]),
    # a chain on six values against a row with f0 + f1 + f2 − f3 − f4 − f5 = 1e-13 (≤ 0 on the chain):
    # 'optimal' before, at d = 6 and d = 42,178 (HiGHS's duals were no exact certificate, the float
    # point inside its tolerance); the rational simplex on the aggregated system decides it
    (6, [Simplex(), Monotone("nondecreasing", order=[0, 1, 2, 3, 4, 5]),
         LinearEquality([[1.0, 1.0, 1.0, -1.0, -1.0, -1.0]], 1e-13)], ["monotone", "linear"]),
    (42_178, [Simplex(), Monotone("nondecreasing", order=[0, 1, 2, 3, 4, 5]),
              LinearEquality(np.r_[[1.0, 1.0, 1.0, -1.0, -1.0, -1.0], np.zeros(42_172)][None, :], 1e-13)],
     ["monotone", "linear"]),
])
def test_conflicts_the_earlier_search_missed(d, cons, names):
    P = Problem(_est(d), "cls", cons)
    got = decide(P)
    assert got.feasible is False and got.certificate.names == names and 0 < got.certificate.margin <= 1e-12
    with pytest.warns(SolverWarning, match="conflict"):
        sol = P.solve()
    assert sol.status == "infeasible" and [a["solver"] for a in sol.attempts] == ["LDPOPT-FEASIBILITY"]


def test_feasible_at_the_boundary_is_proved_and_a_user_non_affine_row_is_not_complete():
    import cvxpy as cp

    est = _est(6)
    on_edge = decide(Problem(est, "cls", [Simplex(), SubsetSum([0, 1, 2], 1.0, ">="), Monotone(order=[3, 4, 5])]))
    assert on_edge.feasible is True and on_edge.complete
    conic = decide(Problem(est, "cls", [Simplex(), lambda f, e: cp.sum_squares(f) <= 0.5]))
    assert conic.feasible is True and not conic.complete  # the built-ins alone; the cone is the solvers'
