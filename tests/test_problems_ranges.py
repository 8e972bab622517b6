"""Range trees and partition totals against brute force: the minimal cover of a range by dynamic
programming over all nodes, node totals by explicit loops, the tree CLS against cvxpy with the
parent = Σ children equalities written one by one, and the partition's errors naming the key."""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest

from ldpopt import Estimate
from ldpopt.problems import Hierarchy, PartitionTotals, Problem, Simplex, SubsetSum, range_tree
from ldpopt.problems.check.verdict import constraint_violations


def _min_cover_size(tree, a, b):
    """Fewest nodes whose leaf ranges partition [a, b]: dp over end points, every node tried."""
    best = {a: 0}
    for end in range(a + 1, b + 2):
        options = [best[lo] + 1 for lo, hi in zip(tree.lo, tree.hi) if hi == end and lo >= a and lo in best]
        if options:
            best[end] = min(options)
    return best[b + 1]


@pytest.mark.parametrize("d,B", [(2, 2), (7, 2), (8, 2), (10, 3), (13, 4), (9, 5)])
def test_cover_is_a_minimal_partition_of_the_range(d, B):
    t = range_tree(d, B)
    for a in range(d):
        for b in range(a, d):
            c = t.cover(a, b)
            leaves = np.concatenate([np.arange(t.lo[n], t.hi[n]) for n in c])
            assert sorted(leaves.tolist()) == list(range(a, b + 1)), (a, b, c)  # disjoint, exact
            assert c.shape[0] == _min_cover_size(t, a, b), (a, b, c)
    assert t.cover(0, d - 1).tolist() == [t.root]


@pytest.mark.parametrize("d,B", [(10, 2), (17, 3), (64, 4)])
def test_tree_layout_and_consistency_by_explicit_loops(d, B):
    t = range_tree(d, B)
    x = np.random.default_rng(0).random(d)
    totals = t.node_totals(x)
    for node in range(t.size):  # brute force: sum the node's leaves one by one
        assert totals[node] == pytest.approx(sum(x[v] for v in range(t.lo[node], t.hi[node])), abs=1e-12)
        children = [c for c in range(t.size) if t.parent[c] == node]
        if node >= d:
            assert 1 <= len(children) <= B
            assert totals[node] == pytest.approx(sum(totals[c] for c in children), abs=1e-12)
    H = t.hierarchy().matrix(t.size)
    assert np.max(np.abs(H @ totals)) < 1e-12
    assert H.shape == (t.size - d, t.size)
    assert t.hierarchy().groups[0][0] == d and len(t.hierarchy().groups) == t.size - d
    # every level of a consistent tree sums to the total
    for s, m in zip(t.level_start, t.level_size):
        assert totals[s:s + m].sum() == pytest.approx(x.sum(), abs=1e-12)
    Q = t.query_matrix([(0, d - 1), (1, d // 2), (d - 3, d - 1)])
    np.testing.assert_allclose(Q @ totals, [x.sum(), x[1:d // 2 + 1].sum(), x[d - 3:].sum()], atol=1e-12)
    assert t.answer(totals, 1, d // 2) == pytest.approx(x[1:d // 2 + 1].sum(), abs=1e-12)


def test_tree_cls_matches_cvxpy_with_the_sums_written_out():
    t = range_tree(20, 3)
    rng = np.random.default_rng(2)
    true = t.node_totals(rng.dirichlet(np.ones(20)))
    noisy = true + rng.normal(scale=0.02, size=t.size)
    est = Estimate.from_counts((noisy * 1000 * 0.5 + 100), n=1000, epsilon=1.0, p=0.6, q=0.1)
    sol = Problem(est, "cls", t.constraints()).solve()
    assert sol.status == "optimal", sol.message
    f = cp.Variable(t.size)
    cons = [f >= 0, cp.sum(f[:20]) == 1]
    for node in range(20, t.size):
        cons.append(f[node] == sum(f[c] for c in range(t.size) if t.parent[c] == node))
    cp.Problem(cp.Minimize(cp.sum_squares(f - est.f_tilde)), cons).solve(solver="CLARABEL", tol_gap_abs=1e-12,
                                                                        tol_gap_rel=1e-12, tol_feas=1e-12)
    np.testing.assert_allclose(sol.f, f.value, atol=1e-7)
    assert sol.duals["hierarchy"].shape == (t.size - 20,)


def test_range_tree_arguments():
    with pytest.raises(ValueError, match="branching"):
        range_tree(10, 1)
    with pytest.raises(ValueError, match="d must"):
        range_tree(1, 2)
    with pytest.raises(ValueError, match=r"0 <= a <= b < d"):
        range_tree(10, 2).cover(3, 10)
    est = Estimate.from_counts(np.full(10, 50.0), n=100, epsilon=1.0, p=0.7, q=0.1)
    with pytest.raises(ValueError, match="21 nodes; the estimate has d = 10"):
        Problem(est, "cls", range_tree(10, 2).constraints())


# -- partition totals --------------------------------------------------------------------------------

def _est(d=12):
    return Estimate.from_counts(np.arange(d, 0, -1) * 8.0, n=100, epsilon=1.0, p=0.7, q=0.1)


def test_partition_totals_match_subset_sums_written_one_by_one():
    groups = {"group A": [0, 3, 7], "group B": [1, 2], "rest": [4, 5, 6, 8, 9, 10, 11]}
    totals = {"group A": 0.5, "group B": 0.2, "rest": 0.3}
    est = _est()
    P = Problem(est, "cls", [Simplex(), PartitionTotals(groups, totals)])
    sol = P.solve()
    # the same solver on both sides: with the simplex the partition rows are linearly dependent, so the
    # multipliers are unique only up to a shift, and each solver picks its own (the SubsetSum list goes
    # to ldpopt's structured solver by default, PartitionTotals to the cvxpy chain)
    ref = Problem(est, "cls", [Simplex()] + [SubsetSum(g, totals[k], name=k) for k, g in groups.items()]).solve(
        solver=sol.solver)
    assert sol.status == ref.status == "optimal"
    np.testing.assert_allclose(sol.f, ref.f, atol=1e-8)
    for k, g in groups.items():
        assert sol.f[g].sum() == pytest.approx(totals[k], abs=1e-9)
    p = P.constraints[1]
    np.testing.assert_allclose(list(p.by_key(sol.duals["partition"]).values()),
                               [ref.duals[k] for k in groups], atol=1e-6)
    f = np.full(12, 1 / 12)  # residual by hand: the worst group
    want = max(abs(f[g].sum() - totals[k]) for k, g in groups.items())
    assert constraint_violations(P, f)["partition"] == pytest.approx(want, abs=1e-15)


def test_partition_errors_name_the_key():
    with pytest.raises(ValueError, match=r"value 3 is in groups\['A'\] and groups\['B'\]"):
        PartitionTotals({"A": [0, 3], "B": [3, 4]}, {"A": 0.1, "B": 0.2})
    with pytest.raises(ValueError, match=r"groups\['B'\]: index 12 is out of range \[0, 12\)"):
        Problem(_est(), "cls", [Simplex(), PartitionTotals({"A": [0], "B": [12]}, {"A": 0.1, "B": 0.2})])
    with pytest.raises(ValueError, match=r"groups\['B'\]: index 20 is out of range"):
        PartitionTotals({"A": [0], "B": [20]}, {"A": 0.1, "B": 0.2}, d=12)
    with pytest.raises(ValueError, match="totals has no entry for group 'B'"):
        PartitionTotals({"A": [0], "B": [1]}, {"A": 0.1})
    with pytest.raises(ValueError, match=r"totals\['C'\] names no group"):
        PartitionTotals({"A": [0]}, {"A": 0.1, "C": 0.2})
    with pytest.raises(ValueError, match=r"groups\['A'\] lists value 1 twice"):
        PartitionTotals({"A": [1, 1]}, {"A": 0.1})
    with pytest.raises(ValueError, match=r"totals\['A'\] must be a finite"):
        PartitionTotals({"A": [1]}, {"A": float("nan")})
    with pytest.raises(ValueError, match=r"groups\['A'\] must be a non-empty list of integer"):
        PartitionTotals({"A": []}, {"A": 0.1})


def test_range_tree_hierarchy_equals_the_explicit_groups():
    t = range_tree(11, 3)
    H = t.hierarchy()
    # the same tree written as explicit (parent, children) groups gives the same matrix
    explicit = Hierarchy([(p, [c for c in range(t.size) if t.parent[c] == p]) for p in range(11, t.size)])
    assert (explicit.matrix(t.size) != H.matrix(t.size)).nnz == 0
    with pytest.raises(ValueError, match=r"groups\['B'\]: index 12 is out of range"):
        PartitionTotals({"A": [0], "B": [12]}, {"A": 0.1, "B": 0.2}, d=12)
