"""O(d) distinct values by integer keys (ldpopt.methods.distinct) and its two users, EM's dual
solve and Power's log-sums: each must give exactly what the sort / the full evaluation gives."""

import numpy as np
import pytest

from ldpopt.methods.bayes import engine as core
from ldpopt.methods.bayes import posterior as bayes
from ldpopt.methods.em.exact import _separable_solve
from ldpopt.methods.distinct import integer_groups, unique_inverse
from ldpopt.verify.instances import instance


def _same_as_unique(x, keys=None):
    ux, inv = unique_inverse(x, keys)
    rx, rinv = np.unique(np.asarray(x, dtype=np.float64), return_inverse=True)
    assert np.array_equal(ux, rx, equal_nan=True) and np.array_equal(np.signbit(ux), np.signbit(rx))
    assert np.array_equal(inv, rinv) and inv.shape == rinv.shape


@pytest.mark.parametrize("oracle", ["oue", "olh", "grr"])
def test_unique_by_counts_equals_np_unique(oracle):
    est = instance(oracle, 1.0, 10_000, 20_000, 3)
    assert integer_groups(est.counts) is not None  # the O(d) path is the one tested here
    _same_as_unique(bayes._x(est), est.counts)
    _same_as_unique(est.counts)


@pytest.mark.parametrize("x, keys", [
    (np.array([3.0, 1.0, 3.0, 0.0, 7.0]), None),
    (np.array([2.0, -1.0, 2.0]), None),                       # a negative key: the sort
    (np.array([0.5, 1.0, 0.5]), None),                        # fractional: the sort
    (np.array([0.0, -0.0, 1.0]), None),                       # -0.0: the sort
    (np.array([np.nan, 1.0, 1.0]), np.array([0.0, 1.0, 1.0])),
    (np.array([5.0, 4.0, 5.0]), np.array([1.0, 2.0, 1.0])),   # decreasing in the key
    (np.array([5.0, 6.0, 7.0]), np.array([1.0, 2.0, 1.0])),   # not a function of the key
    (np.array([0.0, -0.0, 2.0]), np.array([1.0, 1.0, 2.0])),  # a zero group with both signs
    (np.array([1e300, 0.0]), np.array([1e9, 0.0])),           # span > size: the sort
])
def test_unique_inverse_falls_back_exactly(x, keys):
    _same_as_unique(x, keys)


def test_integer_groups_rejects():
    assert integer_groups(np.array([0.0, 1.5])) is None
    assert integer_groups(np.array([-1.0, 1.0])) is None
    assert integer_groups(np.array([-0.0, 1.0])) is None
    assert integer_groups(np.array([0.0, 10.0]), max_span=5) is None
    assert integer_groups(np.array([4.0, 2.0, 4.0, 9.0])) is None  # span 8 > size 4
    u, inv = integer_groups(np.array([4.0, 2.0, 4.0, 9.0]), max_span=8)
    assert u.tolist() == [2, 4, 9] and inv.tolist() == [1, 0, 1, 2]


@pytest.mark.parametrize("oracle, n, d", [("oue", 10_000, 50_000), ("olh", 1_000_000, 20_000),
                                          ("sue", 500, 3_000)])
def test_em_grouped_dual_is_bit_identical(oracle, n, d):
    est = instance(oracle, 1.0, n, d, 1)
    args = (est.counts, float(n), est.q, est.p - est.q, 10_000)
    f0, mu0, nev0 = _separable_solve(*args, group=False)
    f1, mu1, nev1 = _separable_solve(*args)
    assert np.array_equal(f0, f1) and mu0 == mu1 and nev0 == nev1
    f2, mu2, _ = _separable_solve(*args, shrink=False, group=False)  # the plain reference
    assert np.max(np.abs(f1 - f2)) < 1e-12


def test_em_dual_on_fractional_weights_takes_the_plain_path():
    rng = np.random.default_rng(0)
    w = rng.uniform(0, 50, 1000)
    f0, mu0, _ = _separable_solve(w, 100.0, 0.0, 1.0, 200, group=False)
    f1, mu1, _ = _separable_solve(w, 100.0, 0.0, 1.0, 200)
    assert np.array_equal(f0, f1) and mu0 == mu1


@pytest.mark.parametrize("oracle", ["oue", "grr"])
def test_power_with_count_keys_is_bit_identical(oracle):
    est = instance(oracle, 1.0, 10_000, 30_000, 2)
    prior = core.Prior("power-law", est.n, s=1.1)
    fresh = bayes._posterior_mean_counts(bayes._x(est), bayes.noise_sd_counts(est), prior) / est.n
    assert np.array_equal(bayes.power(est, s=1.1), fresh)
