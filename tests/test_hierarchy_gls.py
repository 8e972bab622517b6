"""Linear-time GLS on any tree (ldpopt.hierarchy.gls, .tree) against a dense KKT solve and its
covariance on generated trees (random fan-outs, leaves at several depths, random variances), against
``Problem`` (unconstrained, and with f >= 0 where the fit is already non-negative), and against the
fixed-fan-out two passes of hierarchy.consistency."""

import warnings

import numpy as np
import pytest
from scipy import stats

from ldpopt.estimate import Estimate
from ldpopt.hierarchy import Tree, consistency, gls
from ldpopt.problems import Fixed, Hierarchy, NonNegative, Problem, range_tree


def _random_parent(n, rng, max_fanout=None):
    """A random rooted tree on n nodes (a random recursive tree, or fan-outs capped), relabelled."""
    par = np.full(n, -1)
    for v in range(1, n):
        par[v] = rng.integers(0, v) if max_fanout is None else (v - 1) // max_fanout
    perm = rng.permutation(n)
    out = np.full(n, -1)
    out[perm] = np.where(par >= 0, perm[np.maximum(par, 0)], -1)
    return out


def _ancestry(par):
    """A (nodes × leaves): node v's total is the sum of the leaves under it (a loop: reference only)."""
    n = par.size
    is_leaf = ~np.isin(np.arange(n), par[par >= 0])
    leaves = np.flatnonzero(is_leaf)
    A = np.zeros((n, leaves.size))
    for j, v in enumerate(leaves):
        while v >= 0:
            A[v, j] = 1.0
            v = par[v]
    return A


def _dense(par, y, s):
    """Dense GLS over the leaves (x = A b): fit, and the fit's covariance (A (AᵀWA)⁻¹ Aᵀ); inf = weight 0."""
    A = _ancestry(par)
    w = np.where(np.isinf(s), 0.0, 1.0 / np.where(np.isinf(s), 1.0, s))
    M = np.linalg.inv(A.T @ (w[:, None] * A))
    L = A @ M @ A.T * w[None, :]
    return L @ np.where(np.isinf(s), 0.0, y), A @ M @ A.T, L


@pytest.mark.parametrize("seed", range(12))
def test_fit_variance_and_queries_equal_the_dense_gls(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 60))
    par = _random_parent(n, rng, None if seed % 2 else int(rng.integers(1, 5)))
    t = Tree(par)
    s = rng.uniform(0.05, 20.0, n) ** rng.uniform(0.5, 2)
    internal = np.setdiff1d(np.arange(n), t.leaves)
    s[internal[rng.random(internal.size) < 0.3]] = np.inf            # some totals not measured
    y = rng.normal(0.0, 10.0, n)
    x_ref, cov, L = _dense(par, y, s)
    fit = gls(t, y, s)
    np.testing.assert_allclose(fit.x, x_ref, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(fit.variance, np.diag(cov), rtol=1e-9, atol=1e-12)
    W = rng.normal(size=(n, 3))
    np.testing.assert_allclose(fit.weights(W), L.T @ W, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(fit.query_variance(W), np.einsum("ij,ik,kj->j", W, cov, W), rtol=1e-8)
    C = np.diag(np.where(np.isinf(s), 0.0, s))
    np.testing.assert_allclose(fit.query_variance(W, covariance=lambda u: np.einsum("ij,ik,kj->j", u, C, u)),
                               fit.query_variance(W), rtol=1e-10)
    # every internal node is the sum of its children
    np.testing.assert_allclose(t.node_totals(fit.x), fit.x, rtol=1e-9, atol=1e-9)
    # several columns at once = one at a time
    Y = np.column_stack([y, rng.normal(size=n)])
    np.testing.assert_allclose(gls(t, Y, s).x[:, 1], gls(t, Y[:, 1], s).x, rtol=1e-12, atol=1e-12)


def test_an_exact_node_keeps_its_value_and_shares_no_variance():
    rng = np.random.default_rng(5)
    par = _random_parent(30, rng, 3)
    t = Tree(par)
    y = t.node_totals(rng.uniform(0, 10, 30)) + rng.normal(size=30)
    s = rng.uniform(0.5, 2.0, 30)
    s[0] = 0.0                                                         # the root published exactly
    fit = gls(t, y, s)
    assert fit.x[0] == pytest.approx(y[0], abs=1e-12) and fit.variance[0] == pytest.approx(0.0, abs=1e-15)
    # the same as the dense GLS with the root as an equality (a huge weight's limit)
    s2 = s.copy()
    s2[0] = 1e-12
    np.testing.assert_allclose(fit.x, _dense(par, y, s2)[0], atol=1e-6)


@pytest.mark.parametrize("d,branching", [(37, 3), (64, 4), (200, 16)])
def test_equals_the_fixed_fanout_two_passes(d, branching):
    rng = np.random.default_rng(d)
    rt = range_tree(d, branching)
    var = rng.uniform(0.5, 4.0, len(rt.level_size))
    y = rng.normal(size=(rt.size, 2))
    x = gls(Tree(rt.parent), y, np.repeat(var, rt.level_size)).x
    np.testing.assert_allclose(x, consistency(rt, y, var), rtol=1e-10, atol=1e-10)


def _problem(y, s, cons, n=10_000):
    est = Estimate.from_central(np.maximum(np.rint(y), 0).astype(np.int64), "gaussian", 1.0, n=n)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sol = Problem(est, "posterior", cons, mean=y / n, variance=s / n**2).solve(progress=False)
    return sol, sol.f * n


@pytest.mark.parametrize("seed", range(3))
def test_certified_against_problem(seed):
    rng = np.random.default_rng(100 + seed)
    n = int(rng.integers(20, 80))
    par = _random_parent(n, rng, None if seed else 4)
    t = Tree(par)
    truth = t.node_totals(rng.uniform(50, 200, n))
    s = rng.uniform(1.0, 9.0, n)
    y = truth + rng.normal(size=n) * np.sqrt(s)
    fit = gls(t, y, s)
    sol, f = _problem(y, s, [Hierarchy(t.groups())])
    assert sol.status == "optimal"
    np.testing.assert_allclose(f, fit.x, atol=1e-6 * np.abs(fit.x).max())
    # the structured tree solver (root fixed at the fit's value) with f >= 0: the fit is positive here,
    # so the constrained optimum is the same point
    root = int(np.flatnonzero(par < 0)[0])
    assert fit.x.min() > 0
    sol, f = _problem(y, s, [NonNegative(), Fixed([root], fit.x[root] / 10_000), Hierarchy(t.groups())])
    np.testing.assert_allclose(f, fit.x, atol=1e-5 * np.abs(fit.x).max())


def test_negative_fit_is_left_to_problem():
    rng = np.random.default_rng(9)
    par = _random_parent(25, rng, 3)
    t = Tree(par)
    s = np.full(25, 4.0)
    y = rng.normal(0.0, 2.0, 25)                                       # near zero: the GLS goes negative
    fit = gls(t, y, s)
    assert fit.x.min() < 0
    _, f = _problem(y, s, [NonNegative(), Hierarchy(t.groups())])
    assert f.min() >= -1e-9 and np.allclose(t.node_totals(f), f, atol=1e-7)


def test_gaussian_coverage_of_the_exact_intervals():
    """Nominal 90 % intervals x̂ ± z·se cover the truth at a rate inside the binomial 99.9 % band."""
    rng = np.random.default_rng(11)
    par = _random_parent(200, rng, 5)
    t = Tree(par)
    truth = t.node_totals(rng.uniform(0, 100, 200))
    s = rng.uniform(0.5, 30.0, 200)
    reps = 200
    Y = truth[:, None] + rng.normal(size=(200, reps)) * np.sqrt(s)[:, None]
    fit = gls(t, Y, s)
    z = stats.norm.ppf(0.95)
    hits = int((np.abs(fit.x - truth[:, None]) <= z * fit.se[:, None]).sum())
    lo, hi = stats.binom.interval(0.999, 200 * reps, 0.9)
    # the cells of one draw are correlated: the band is the independent one widened by 3
    assert lo - 3 * (0.9 * 200 * reps - lo) <= hits <= hi + 3 * (hi - 0.9 * 200 * reps)
    # per node the empirical variance is the stated one (chi-square band over reps)
    emp = ((fit.x - truth[:, None]) ** 2).mean(axis=1)
    ratio = emp / fit.variance
    assert stats.chi2.ppf(1e-4, reps) / reps < ratio.min() and ratio.max() < stats.chi2.ppf(1 - 1e-4, reps) / reps


def test_tree_layout_and_errors():
    t = Tree.from_children({0: [1, 2, 3], 2: [4, 5]})
    assert t.n_levels == 3 and t.leaves.tolist() == [1, 3, 4, 5]
    assert [(p, c.tolist()) for p, c in t.groups()] == [(0, [1, 2, 3]), (2, [4, 5])]
    for bad, msg in [([0, 0], "root"), ([-1, 2, 1], "cycle"), ([-1, 5], r"\[0, 2\)"), ([[-1]], "1-D"),
                     (np.array([-1.0, 0.0]), "integer")]:
        with pytest.raises(ValueError, match=msg):
            Tree(bad)
    with pytest.raises(ValueError, match="more than one parent"):
        Tree.from_children([(0, [1]), (2, [1])])
    with pytest.raises(ValueError, match="finite at every leaf"):
        gls(t, np.zeros(6), [1, np.inf, 1, 1, 1, 1])
    with pytest.raises(ValueError, match="var must be >= 0"):
        gls(t, np.zeros(6), [1, -1, 1, 1, 1, 1])
    with pytest.raises(ValueError, match="one entry per depth"):
        gls(t, np.zeros(6), [1.0, 2.0])
    with pytest.raises(ValueError, match="one row per tree node"):
        gls(t, np.zeros(5), 1.0)
    with pytest.raises(ValueError, match="y must be finite"):
        gls(t, [np.nan, 0, 0, 0, 0, 0], 1.0)
    fit = gls(t, [np.nan, 0, 0, 0, 0, 0], [np.inf, 1, 1, 1, 1, 1])   # an unmeasured node's y is ignored
    assert np.isfinite(fit.x).all()
    with pytest.raises(ValueError, match="one row per tree node"):
        fit.weights(np.zeros(3))


def test_residual_z_has_unit_variance_and_finds_a_corrupted_leaf():
    rng = np.random.default_rng(12)
    par = _random_parent(150, rng, 4)
    t = Tree(par)
    truth = t.node_totals(rng.uniform(0, 100, 150))
    s = rng.uniform(0.5, 30.0, 150)
    reps = 150
    Z = np.column_stack([gls(t, truth + rng.normal(size=150) * np.sqrt(s), s).cells()["residual_z"].to_numpy()
                         for _ in range(reps)])
    v = np.nanmean(Z**2, axis=1)
    lo, hi = stats.chi2.ppf([1e-4, 1 - 1e-4], reps) / reps
    assert lo < v.min() and v.max() < hi
    # a leaf measured off by δ moves its own z by δ(1 − L_vv)/√(s − P) = δ√(s − P)/s (L_vv = P/s, the
    # hat matrix's diagonal): at δ = 40 s/√(s − P) its |z| is the tree's largest (ties: the nodes of
    # a single check share it), about 40
    y = truth + rng.normal(size=150) * np.sqrt(s)
    leaf = int(t.leaves[3])
    fit = gls(t, y, s)
    y[leaf] += 40 * s[leaf] / np.sqrt(s[leaf] - fit.variance[leaf])
    z = np.abs(gls(t, y, s).cells()["residual_z"].to_numpy())
    assert z[leaf] >= np.nanmax(z) - 1e-9 and 35 < z[leaf] < 45
