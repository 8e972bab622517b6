"""Hay et al.'s consistency with per-level variances (ldpopt.hierarchy.consistency) against cvxpy's
weighted least squares under the Hierarchy equalities, dense KKT algebra, and Hay's printed formula."""

import warnings

import numpy as np
import pytest

from ldpopt.estimate import Estimate
from ldpopt.hierarchy import consistency, nonnegative_heuristic
from ldpopt.hierarchy.consistency import consistency_adjoint
from ldpopt.hierarchy.nonneg import nonnegative_qp
from ldpopt.problems import Problem
from ldpopt.problems.constraints.base import NonNegative, SubsetSum
from ldpopt.problems.constraints.ranges import range_tree


def _noisy_tree(tree, rng, scale=1e-2):
    y = tree.node_totals(rng.dirichlet(np.ones(tree.d))) + rng.normal(size=tree.size) * scale
    y[tree.root] = 1.0
    return y


def _dense_kkt(tree, y, s):
    """min Σ_{0<s<inf} (x − y)²/s s.t. H x = 0 and x_v = y_v where s_v = 0, by one dense solve."""
    n = tree.size
    H = tree.hierarchy().matrix(n).toarray()
    obs = np.isfinite(s) & (s > 0)
    W = np.diag(np.where(obs, 1 / np.where(obs, s, 1), 0.0))
    fixed = s == 0
    A = np.vstack([H, np.eye(n)[fixed]])
    rhs = np.concatenate([np.zeros(H.shape[0]), y[fixed]])
    K = np.block([[2 * W, A.T], [A, np.zeros((A.shape[0], A.shape[0]))]])
    return np.linalg.solve(K, np.concatenate([2 * W @ np.where(obs, y, 0), rhs]))[:n]


def _cvxpy_ls(tree, y, var, extra=()):
    est = Estimate.from_frequencies(y, 10_000, 1.0, 0.7, 0.3)
    v = np.repeat(var, tree.level_size)
    v[tree.root] = 1.0  # fixed by Σ leaves = 1 anyway
    cons = [SubsetSum(tree.leaves, 1.0, name="leaves"), tree.hierarchy(), *extra]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sol = Problem(est, "posterior", cons, mean=y, variance=v).solve()
    assert sol.status == "optimal"
    return sol.f


CASES = [(2, depth) for depth in (2, 3, 4, 5)] + [(4, depth) for depth in (2, 3, 4, 5)] + [(16, 2), (16, 3)]


@pytest.mark.parametrize("B,depth", CASES)
def test_matches_cvxpy_hierarchy_least_squares(B, depth):
    rng = np.random.default_rng(100 * B + depth)
    for _ in range(2):  # a ragged and (sometimes) a complete tree of this depth
        d = int(rng.integers(B ** (depth - 2) + 1, B ** (depth - 1) + 1))
        tree = range_tree(d, B)
        assert len(tree.level_size) == depth
        var = rng.uniform(0.2, 5.0, depth) * 1e-4
        var[-1] = 0.0
        y = _noisy_tree(tree, rng)
        x = consistency(tree, y, var)
        assert np.max(np.abs(x - _cvxpy_ls(tree, y, var))) <= 1e-9
        assert np.max(np.abs(tree.hierarchy().matrix(tree.size) @ x)) <= 1e-12


@pytest.mark.parametrize("d,B", [(2, 2), (5, 2), (9, 3), (7, 4), (16, 2)])
def test_matches_dense_kkt_with_fixed_and_unobserved_nodes(d, B):
    rng = np.random.default_rng(d * B)
    tree = range_tree(d, B)
    s = rng.uniform(0.5, 2.0, tree.size)  # per-node variances
    s[tree.root] = 0.0
    if len(tree.level_size) > 2:
        lv1 = slice(int(tree.level_start[1]), int(tree.level_start[1] + tree.level_size[1]))
        s[lv1] = np.inf  # level 1 not collected
    y = rng.normal(size=tree.size)
    y[tree.root] = 1.0
    np.testing.assert_allclose(consistency(tree, y, s), _dense_kkt(tree, y, s), atol=1e-12)


@pytest.mark.parametrize("B,h", [(2, 3), (3, 2), (4, 3)])
def test_uniform_variance_complete_tree_is_hays_formula(B, h):
    """Hay et al. 2010 Thm 3 as printed: z_v = (B^i − B^{i−1})/(B^i − 1) y_v + (B^{i−1} − 1)/(B^i − 1) Σ z_c
    (i = height, leaves i = 1), x_c = z_c + (x_v − Σ z)/B, every node observed with equal variance."""
    rng = np.random.default_rng(B + h)
    tree = range_tree(B**h, B)
    y = rng.normal(size=tree.size)
    z = y.copy()
    starts, sizes = tree.level_start, tree.level_size
    for k in range(1, h + 1):
        i = k + 1
        kids = z[starts[k - 1]: starts[k - 1] + sizes[k - 1]].reshape(-1, B).sum(axis=1)
        sl = slice(starts[k], starts[k] + sizes[k])
        z[sl] = (B**i - B ** (i - 1)) / (B**i - 1) * y[sl] + (B ** (i - 1) - 1) / (B**i - 1) * kids
    x = z.copy()
    for k in range(h, 0, -1):
        par = np.arange(sizes[k - 1]) // B
        ch = slice(starts[k - 1], starts[k - 1] + sizes[k - 1])
        kids = z[ch].reshape(-1, B).sum(axis=1)
        x[ch] = z[ch] + (x[starts[k] + par] - kids[par]) / B
    np.testing.assert_allclose(consistency(tree, y, np.ones(h + 1)), x, atol=1e-12)


@pytest.mark.parametrize("d,B", [(11, 2), (10, 3), (20, 4)])
def test_adjoint_is_the_transpose_of_the_linear_map(d, B):
    rng = np.random.default_rng(d)
    tree = range_tree(d, B)
    var = rng.uniform(0.5, 2, len(tree.level_size))
    var[-1] = 0.0
    L = consistency(tree, np.eye(tree.size), var)
    np.testing.assert_allclose(consistency_adjoint(tree, np.eye(tree.size), var), L.T, atol=1e-14)
    y = rng.normal(size=tree.size)
    np.testing.assert_allclose(L @ y, consistency(tree, y, var), atol=1e-13)


def test_nonnegative_qp_matches_cvxpy_over_the_nodes_and_heuristic_is_feasible():
    rng = np.random.default_rng(7)
    tree = range_tree(40, 4)
    f = rng.dirichlet(np.full(40, 0.3))
    y = tree.node_totals(f) + rng.normal(size=tree.size) * 0.03
    y[tree.root] = 1.0
    var = np.r_[rng.uniform(0.5, 2, len(tree.level_size) - 1) * 1e-3, 0.0]
    assert consistency(tree, y, var).min() < 0  # the case non-negativity is for
    exact = nonnegative_qp(tree, y, var)
    ref = _cvxpy_ls(tree, y, var, extra=[NonNegative()])
    assert np.max(np.abs(exact - ref)) <= 1e-6  # two interior-point solves of one QP
    heur = nonnegative_heuristic(tree, y, var)
    for x in (exact, heur):
        assert x.min() >= 0 and abs(x[: tree.d].sum() - 1) <= 1e-9
        assert np.max(np.abs(tree.hierarchy().matrix(tree.size) @ x)) <= 1e-9
    s = np.repeat(var, tree.level_size)[:-1]
    obj = [np.sum((x[:-1] - y[:-1]) ** 2 / s) for x in (exact, heur)]
    assert obj[0] <= obj[1] + 1e-9  # the heuristic is not the weighted optimum


def test_bad_inputs_name_the_argument():
    tree = range_tree(8, 2)
    with pytest.raises(ValueError, match="var"):
        consistency(tree, np.zeros(tree.size), np.ones(3))
    with pytest.raises(ValueError, match="var"):
        consistency(tree, np.zeros(tree.size), -np.ones(tree.size))
    with pytest.raises(ValueError, match="y must"):
        consistency(tree, np.zeros(5), np.ones(4))
    with pytest.raises(ValueError, match="xbar"):
        consistency_adjoint(tree, np.zeros(5), np.ones(4))
