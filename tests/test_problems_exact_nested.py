"""The exact feasibility decision on range trees (Hierarchy: nested sums) and Monotone partial orders
(pairs) at margins 1e-13 … 1e-17 on both sides, against independent references: small random
systems through the large-system steps against Fourier–Motzkin in rational arithmetic
(tests/_lp_reference.py), and planted systems over thousands of values whose answer is derived by
hand; dense = rows decided without an LP (the interior candidate) and its exact pieces (fraction-free
Gauss–Jordan with skipped rows, exact row sums by limbs) against Fractions."""

from __future__ import annotations

import warnings
from fractions import Fraction

import numpy as np
import pytest
import scipy.sparse as sp
from _lp_reference import feasible, planted_nested_system, random_nested_system

from ldpopt import oracles
from ldpopt.problems import (
    Fixed,
    Hierarchy,
    LinearEquality,
    NonNegative,
    Problem,
    Simplex,
    SolverWarning,
    SubsetSum,
    range_tree,
)
from ldpopt.problems.constraints import feasibility as F
from ldpopt.problems.constraints.exact_lp import solve_exact
from ldpopt.problems.constraints.exact_point import _min_exp, _row_sums, point_ok


def _est(d, seed=0):
    rng = np.random.default_rng(seed)
    o = oracles.get("oue", 1.0, d)
    return o.estimate(o.sample_counts(np.full(d, 100), rng=rng), 100 * d)


def test_small_trees_and_partial_orders_through_the_large_steps_agree_with_fourier_motzkin():
    """120 systems (range trees over 3–6 leaves, partial orders over 3–7 values, margins 10^-13 …
    10^-17): the steps used beyond the rational simplex (phase-one LP, refinement, exact point with
    nested sums substituted) decide every one, as the reference does; so does the whole decision."""
    rng = np.random.default_rng(20261124)
    ests, seen = {}, {True: 0, False: 0}
    for i in range(120):
        cons, rows, d = random_nested_system(rng, ["tree", "pairs"][i % 2])
        truth = feasible(rows, d)
        if truth is None:
            continue
        ests.setdefault(d, _est(d))
        P = Problem(ests[d], "cls", cons)
        lo, up, lo_own, up_own, A, b, ineq, own, names, complete = F.owned_system(P)
        got = F._decide_large(A, b, ineq, lo, up, names, own, lo_own, up_own, complete)
        assert got.feasible is truth, (i, cons, truth, got)
        assert F.decide(P).feasible is truth
        seen[truth] += 1
    assert seen[True] >= 30 and seen[False] >= 20, seen  # both sides are exercised


@pytest.mark.parametrize("kind,size", [("tree", 1024), ("pairs", 2000)])
def test_planted_large_systems_decide_at_any_margin(kind, size):
    """Range trees over 1,024 leaves (1,000+ nested-sum rows, beyond the rational basis solve before
    the substitution) and partial orders over 2,000 values: empty for margin > 0, else the planted
    point meets everything; both sides decided, an empty one ends ``infeasible``."""
    rng = np.random.default_rng(size)
    for k, margin in enumerate([1e-13, -1e-13, 1e-15, -1e-15, 1e-17, -1e-17]):
        cons, truth = planted_nested_system(rng, kind, size, margin)
        d = cons[2].tree.size if kind == "tree" else size
        P = Problem(_est(d, k), "cls", cons)
        got = F.decide(P)
        assert got.feasible is truth, (margin, got)
        if truth is False:
            assert got.certificate.margin > 0
            if k == 0:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", SolverWarning)
                    assert P.solve().status == "infeasible"


def _dense(d, R, seed, conflict=None):
    """R float rows M with b = M f* at an interior planted f* (Σ f* = 1 up to rounding of the data,
    so the simplex is not assumed met at f*), and optionally the row M₀ + M₁ with b₀ + b₁ + conflict."""
    rng = np.random.default_rng(seed)
    M = rng.uniform(-1, 1, (R, d))
    b = M @ rng.dirichlet(np.ones(d))
    if conflict is not None:
        M, b = np.vstack([M, M[0] + M[1]]), np.r_[b, b[0] + b[1] + conflict]
    return M, b


def test_dense_rows_with_an_interior_solution_are_decided_without_an_lp(monkeypatch):
    """20 dense float rows at d = 3,000 with a solution inside the simplex: proved feasible by the
    interior candidate (no LP: HiGHS is not called); a row that conflicts by 1e-13 (or 1e-16 ×
    its size) is not taken as feasible, and the LP route then finds the certificate."""
    d = 3000
    est = _est(d)
    M, b = _dense(d, 20, 1)
    calls = []
    real = F.phase_one
    monkeypatch.setattr(F, "phase_one", lambda *a: calls.append(1) or real(*a))
    got = F.decide(Problem(est, "cls", [Simplex(), LinearEquality(M, b)]))
    assert got.feasible is True and got.how.startswith("interior") and not calls
    fixed = F.decide(Problem(est, "cls", [Simplex(), Fixed([5], 1e-4), LinearEquality(M, b)]))
    assert fixed.feasible is True and not calls
    for conflict in (1e-13, 4e-16):
        Mc, bc = _dense(d, 20, 1, conflict)
        bad = F.decide(Problem(est, "cls", [Simplex(), LinearEquality(Mc, bc)]))
        assert bad.feasible is False and bad.certificate.margin > 0, conflict


def test_solve_exact_leaves_out_a_contradicting_row_and_matches_fractions():
    rng = np.random.default_rng(4)
    for _ in range(30):
        m, n = int(rng.integers(1, 6)), int(rng.integers(1, 8))
        M = [[Fraction(int(v), 2 ** int(rng.integers(0, 40))) for v in rng.integers(-9, 10, n)] for _ in range(m)]
        z0 = [Fraction(int(v), 3) for v in rng.integers(-5, 6, n)]
        r = [sum((a * z for a, z in zip(row, z0)), Fraction(0)) for row in M]
        z = solve_exact(M, r, [Fraction(0)] * n)
        assert z is not None and all(sum(a * v for a, v in zip(row, z)) == rk for row, rk in zip(M, r))
        # the first row again with its right-hand side moved by 2^-80: inconsistent, or left out
        M2, r2 = M + [M[0]], r + [r[0] + Fraction(1, 2**80)]
        if any(M[0]):
            assert solve_exact(M2, r2, [Fraction(0)] * n) is None
            z2 = solve_exact(M2, r2, [Fraction(0)] * n, skip_inconsistent=True)
            assert all(sum(a * v for a, v in zip(row, z2)) == rk for row, rk in zip(M, r))


def test_exact_row_sums_by_limbs_match_fractions():
    rng = np.random.default_rng(0)
    for t in range(10):
        A = sp.random(4, 200, density=0.5, random_state=t, format="csr")
        A.data = rng.uniform(-1, 1, A.nnz) * 10.0 ** rng.integers(-40, 40, A.nnz)
        E = _min_exp(A.data)
        got = _row_sums(A, E)
        for k in range(4):
            ref = sum((Fraction(v) for v in A[k].data), Fraction(0)) / Fraction(2) ** E
            assert ref.denominator == 1 and got[k] == int(ref)


def test_a_conflict_among_totals_beside_a_large_partial_order_is_decided_without_its_rows():
    """A planted partial order over 1,000 values (~2,900 pairs) whose two pinning totals conflict by
    1e-16 (this seed: the phase-one LP over the pairs sees nothing, and the system was undecided
    before): the system without the order's rows is decided exactly, and its certificate names no
    order row."""
    cons, truth = planted_nested_system(np.random.default_rng(10), "pairs", 1000, 1e-16)
    got = F.decide(Problem(_est(1000), "cls", cons))
    assert truth is False and got.feasible is False and "monotone" not in got.certificate.names, got
    assert got.certificate.margin > 0


@pytest.mark.parametrize("leaves", [1024, 1001])
def test_a_range_tree_is_proved_feasible_by_the_uniform_point_without_an_lp(monkeypatch, leaves):
    """A range tree's constraints (f ≥ 0, the leaves summing to 1, every node its children's sum;
    1,001 leaves: one-child nodes f_p = f_c too) are proved feasible by the uniform point over the
    free values, each node its exact sum: no LP runs (HiGHS, scipy's linprog, is never called), and
    the proof is the exact check's (the same point with the leaves at 1/n rounded to float fails it
    unless n is a power of two)."""
    import scipy.optimize

    def no_lp(*a, **k):
        raise AssertionError("an LP ran")

    monkeypatch.setattr(scipy.optimize, "linprog", no_lp)
    monkeypatch.setattr(F, "phase_one", no_lp)
    tree = range_tree(leaves)
    P = Problem(_est(tree.size), "cls", tree.constraints())
    got = F.decide(P)
    assert got.feasible is True and got.how == "uniform point, checked exactly" and got.complete
    lo, up, _, _, A, b, ineq, _, _, _ = F.owned_system(P)
    x = tree.node_totals(np.full(leaves, 1.0 / leaves))  # the float point: exact only for n = 2^k
    assert point_ok(A, b, ineq, lo, up, x) is (leaves & (leaves - 1) == 0)
    # a user's Hierarchy (groups as given, two levels over 6 leaves) takes the same path
    groups = [(6, [0, 1, 2]), (7, [3, 4]), (8, [5]), (9, [6, 7, 8])]
    got = F.decide(Problem(_est(10), "cls", [NonNegative(), SubsetSum(range(6), 0.3), Hierarchy(groups)]))
    assert got.feasible is True and got.how == "uniform point, checked exactly"
    # f_2 = f_7 beside the simplex: a one-child nested sum, met by the plain f = 1/d
    M = np.zeros((1, 10))
    M[0, 2], M[0, 7] = 1.0, -1.0
    got = F.decide(Problem(_est(10), "cls", [Simplex(), LinearEquality(M, [0.0])]))
    assert got.feasible is True and got.how == "uniform point, checked exactly"


@pytest.mark.parametrize("node", ["root", "inner"])
def test_a_range_tree_with_a_node_pinned_one_ulp_off_is_still_decided_infeasible(node):
    """The leaves sum to 1 and a node is pinned at 1 + 2⁻⁵² (the root: it must be 1 exactly; an inner
    node: it holds at most 1): the uniform point is rejected by the exact check (the float screen
    passes it), and the decision still proves the conflict with a verified certificate."""
    tree = range_tree(1001)
    at = tree.root if node == "root" else int(tree.parent[0])
    pinned = Fixed([at], 1.0 + 2.0**-52, name="pinned")
    P = Problem(_est(tree.size), "cls", [*tree.constraints(), pinned])
    lo, up, _, _, A, b, ineq, _, _, _ = F.owned_system(P)
    assert not F._uniform_ok(A, b, ineq, lo, up)
    got = F.decide(P)
    assert got.feasible is False and got.certificate.margin > 0
    assert "pinned" in got.certificate.names and "leaves" in got.certificate.names
    ok = F.decide(Problem(_est(tree.size), "cls", [*tree.constraints(), Fixed([tree.root], 1.0)]))
    assert ok.feasible is True


@pytest.mark.parametrize("scale", [1.0, 2.0**70, 2.0**-1000])
def test_point_ok_matches_fractions_on_both_integer_paths(scale):
    """point_ok (int64 where a float bound allows — scale 1 —, Python integers where the scaled
    numbers pass 2⁶¹ — 2⁷⁰, and 2⁻¹⁰⁰⁰ against the integer entries of A) against the rows and bounds
    evaluated in Fractions: random sparse small-integer rows, dyadic points, right-hand sides exact
    or one ulp off, = and ≤ rows, a bound one ulp above the point."""
    rng = np.random.default_rng(7)
    seen = set()
    for trial in range(40):
        m, d = 12, 30
        A = sp.random(m, d, density=0.3, random_state=rng, data_rvs=lambda k: rng.integers(-3, 4, k).astype(float))
        A = sp.csr_matrix(A)
        x = rng.integers(0, 64, d) / 8.0 * scale
        b = A @ x  # exact: small dyadic sums
        ineq = rng.random(m) < 0.4
        if trial % 2:
            k = int(rng.integers(m))
            b[k] = np.nextafter(b[k], -np.inf) if rng.random() < 0.5 else np.nextafter(b[k], np.inf)
        lo, up = np.zeros(d), np.full(d, np.inf)
        if trial % 5 == 0:
            lo[3] = np.nextafter(x[3], np.inf)
        Af = [[Fraction(v) for v in row] for row in A.toarray().tolist()]
        lhs = [sum((a * Fraction(v) for a, v in zip(row, x.tolist())), Fraction(0)) for row in Af]
        truth = all((lk <= Fraction(bk)) if le else (lk == Fraction(bk)) for lk, bk, le in zip(lhs, b.tolist(), ineq))
        truth = truth and bool(np.all(x >= lo))
        assert point_ok(A, b, ineq, lo, up, x) is truth, (scale, trial)
        seen.add(truth)
    assert seen == {True, False}
