"""Exact variances of range answers (ldpopt.hierarchy.variance, .haar) against Monte Carlo of the
simulated protocols, and the building blocks against closed forms."""

import numpy as np
import pytest

from ldpopt import oracles
from ldpopt.hierarchy import collect
from ldpopt.hierarchy.queries import cover_answers, leaf_answers
from ldpopt.hierarchy.variance import flat_range_variance, hierarchical_range_variance
from ldpopt.hierarchy.haar import haar_collect, haar_leaves, haar_range_variance
from ldpopt.hierarchy.collect import group_sizes, split_users
from ldpopt.hierarchy.haar import _adjoint, sylvester

R = 1000
TOL = 4 * np.sqrt(2 / R)  # 4 standard errors of a sample-variance ratio


@pytest.fixture(scope="module")
def data():
    rng = np.random.default_rng(11)
    tc = rng.integers(0, 60, 13)
    tc[3] = 400
    a = np.array([2, 5, 0, 7, 1])
    b = np.array([9, 5, 6, 11, 12])
    return tc, tc / tc.sum(), a, b


def _check(samples, truth, var):
    samples = np.asarray(samples)
    assert np.all(np.abs(samples.mean(axis=0) - truth) <= 4.5 * np.sqrt(var / R))  # unbiased
    np.testing.assert_allclose(samples.var(axis=0, ddof=1) / var, 1.0, atol=TOL)


@pytest.mark.parametrize("oracle,B", [("oue", 3), ("grr", 2), ("olh", 4)])
def test_hierarchical_variance_raw_and_consistent_match_monte_carlo(data, oracle, B):
    tc, f, a, b = data
    rng = np.random.default_rng(len(oracle) * B)
    raw, con = [], []
    for _ in range(R):
        h = collect(tc, oracle, 1.0, B, rng=rng)
        raw.append(cover_answers(h.tree, h.y, a, b))
        con.append(leaf_answers(h.consistent()[: h.tree.d], a, b))
    n, truth = int(tc.sum()), leaf_answers(f, a, b)
    _check(raw, truth, hierarchical_range_variance(f, n, oracle, 1.0, B, a, b, consistent=False))
    _check(con, truth, hierarchical_range_variance(f, n, oracle, 1.0, B, a, b, consistent=True))


def test_consistent_full_range_is_exact(data):
    tc, f, _, _ = data
    h = collect(tc, "oue", 1.0, 2, rng=0)
    assert abs(leaf_answers(h.consistent()[:13], 0, 12)[0] - 1.0) <= 1e-12
    assert hierarchical_range_variance(f, int(tc.sum()), "oue", 1.0, 2, 0, 12)[0] <= 1e-15


def test_flat_variance_matches_monte_carlo(data):
    tc, f, a, b = data
    rng = np.random.default_rng(3)
    fo = oracles.get("grr", epsilon=1.0, d=13)
    samples = [leaf_answers(fo.simulate(tc, rng).f_tilde, a, b) for _ in range(R)]
    _check(samples, leaf_answers(f, a, b), flat_range_variance(f, int(tc.sum()), "grr", 1.0, a, b))


def test_haar_variance_matches_monte_carlo(data):
    tc, f, a, b = data
    rng = np.random.default_rng(5)
    samples = [leaf_answers(haar_leaves(*haar_collect(tc, 1.0, rng=rng)), a, b) for _ in range(R)]
    _check(samples, leaf_answers(f, a, b), haar_range_variance(f, int(tc.sum()), 1.0, a, b))


def test_haar_building_blocks():
    for m in (1, 2, 8, 32):
        H = sylvester(m)
        np.testing.assert_array_equal(H @ H, m * np.eye(m))
        assert np.all(np.abs(H) == 1)
    # exact coefficients reconstruct the histogram: θ_{ℓ,j} = f(left half) − f(right half)
    rng = np.random.default_rng(0)
    f = rng.dirichlet(np.ones(11))
    fp = np.r_[f, np.zeros(5)]
    theta = [fp.reshape(2 ** (l + 1), -1).sum(axis=1)[0::2] - fp.reshape(2 ** (l + 1), -1).sum(axis=1)[1::2]
             for l in range(4)]
    np.testing.assert_allclose(haar_leaves(theta, 11), f, atol=1e-15)
    # the adjoint is the transpose of the (linear part of the) reconstruction
    U = rng.normal(size=(16, 3))
    lin = lambda th: haar_leaves(th, 16) - haar_leaves([np.zeros(2**l) for l in range(4)], 16)
    dense = np.column_stack([lin([np.eye(1, 2**l, j).ravel() if l == L else np.zeros(2**l) for l in range(4)])
                             for L in range(4) for j in range(2**L)])
    np.testing.assert_allclose(np.concatenate(_adjoint(U, 4)), dense.T @ U, atol=1e-14)


def test_split_users_is_a_partition():
    tc = np.array([5, 0, 7, 3, 10])
    g = split_users(tc, 4, rng=1)
    np.testing.assert_array_equal(g.sum(axis=0), tc)
    np.testing.assert_array_equal(g.sum(axis=1), group_sizes(25, 4))
    np.testing.assert_array_equal(group_sizes(25, 4), [7, 6, 6, 6])


def test_errors():
    with pytest.raises(ValueError, match="at least one user per collected level"):
        collect([1, 1, 0, 0, 0, 0, 0, 0], "oue", 1.0, 2, rng=0)
    with pytest.raises(ValueError, match="range"):
        hierarchical_range_variance(np.full(8, 1 / 8), 100, "oue", 1.0, 2, [3], [2])
    with pytest.raises(ValueError, match="analytic"):
        hierarchical_range_variance(np.full(8, 1 / 8), 100, "hr", 1.0, 2, [0], [2])
    with pytest.raises(ValueError, match="length"):
        from ldpopt.hierarchy.queries import random_ranges
        random_ranges(8, 9, 2, np.random.default_rng(0))
