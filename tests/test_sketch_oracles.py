"""The sketch and Bloom-filter oracles (CMS, HCMS, RAPPOR) on the joint law of their counts, their
variances including hash collisions, exact ε and Apple's estimator.

References are independent of the code under test: the enumerated law of each oracle's outputs
(``jointlaw.count_moments`` over ``output_distribution``, tiny k, m, T), and simulations over hash
families. Tolerances: z ≤ 5 on covariance entries as tests/test_oracles_joint_law.py, χ² homogeneity
p-values ≥ 1e-4, fixed seeds.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from ldpopt import oracles
from ldpopt.oracles.jointlaw import count_moments
from test_oracles_joint_law import _cov_z, _mean_z

TC = np.array([12, 7, 5, 3, 0, 3])
SMALL = {
    "cms": dict(k=3, m=4, hash_seed=1),
    "hcms": dict(k=3, m=4, hash_seed=1),
    "rappor": dict(num_bits=4, num_hashes=2, cohorts=2, hash_seed=3),
}
EPS = {"cms": 1.0, "hcms": 1.0, "rappor": 4.0}


def _small(name):
    return oracles.get(name, EPS[name], 6, **SMALL[name])


def _real(o, tc, reps, gen):
    """(reps, d) counts of the real protocol: all repetitions' users perturbed at once, each
    repetition's supports summed (support_matrix sums to aggregate: tested below)."""
    n = int(tc.sum())
    S = o.support_matrix(o.perturb(np.tile(np.repeat(np.arange(o.d), tc), reps), gen))
    return S.reshape(reps, n, o.d).sum(axis=1).astype(np.float64)


@pytest.mark.parametrize("name", sorted(SMALL))
def test_fast_and_real_paths_have_the_enumerated_joint_law(name):
    o = _small(name)
    mean, cov = count_moments(o, TC)
    gen = np.random.default_rng(7)
    fast = np.array([o.sample_counts(TC, gen) for _ in range(8000)], dtype=np.float64)
    real = _real(o, TC, 8000, gen)
    for x in (fast, real):
        assert _mean_z(x, mean, cov).max() <= 5
        assert _cov_z(x, mean, cov).max() <= 5
    # the covariance is not diagonal: a test that only checked marginals would miss a wrong sampler
    off = cov - np.diag(np.diag(cov))
    assert np.abs(off).max() > 0.05 * np.diag(cov).max()


@pytest.mark.parametrize("name", sorted(SMALL))
def test_fast_and_real_paths_are_homogeneous_on_joint_outcomes(name):
    """χ² homogeneity of the joint outcome (c_0, c_1) between the two paths (not only moments)."""
    o = _small(name)
    tc = np.array([3, 2, 1, 0, 1, 1])
    gen = np.random.default_rng(11)
    fast = np.array([o.sample_counts(tc, gen) for _ in range(4000)])
    real = _real(o, tc, 4000, gen)
    key = lambda x: np.rint(x[:, 0] * 10).astype(int) * 1000 + np.rint(x[:, 1] * 10).astype(int)
    kf, kr = key(fast), key(real)
    cats, inv = np.unique(np.concatenate([kf, kr]), return_inverse=True)
    table = np.stack([np.bincount(inv[:4000], minlength=cats.size), np.bincount(inv[4000:], minlength=cats.size)])
    table = table[:, table.sum(axis=0) >= 10]  # pool nothing: drop sparse cells (the test stays valid)
    assert table.shape[1] >= 6
    assert stats.chi2_contingency(table)[1] > 1e-4


@pytest.mark.parametrize("name", sorted(SMALL))
def test_variance_and_bias_given_hashes_are_exact(name):
    o = _small(name)
    n = int(TC.sum())
    f = TC / n
    mean, cov = count_moments(o, TC)
    pq = o.p - o.q
    np.testing.assert_allclose(o.variance_given_hashes(f, n), np.diag(cov) / (n * pq) ** 2, rtol=1e-10)
    np.testing.assert_allclose(o.bias_given_hashes(f), (mean / n - o.q) / pq - f, atol=1e-12)
    assert np.abs(o.bias_given_hashes(f)).max() > 0.01  # collisions bias a fixed family


@pytest.mark.parametrize("name", ["cms", "hcms"])
def test_family_averaged_variance_matches_simulation_over_families(name):
    tc = np.array([400, 200, 100, 50, 30, 20, 0, 0, 100, 100])
    n, f = int(tc.sum()), tc / tc.sum()
    gen = np.random.default_rng(3)
    family = [oracles.get(name, 1.0, 10, k=4, m=8, hash_seed=s) for s in range(2500)]
    est = np.array([o.estimate(o.sample_counts(tc, gen), n).f_tilde for o in family])
    o = oracles.get(name, 1.0, 10, k=4, m=8)
    err = est - f
    se_mean = err.std(axis=0, ddof=1) / math.sqrt(len(est))
    assert np.all(np.abs(err.mean(axis=0)) <= 5 * se_mean)  # unbiased over the family
    sq = err ** 2
    z = (sq.mean(axis=0) - o.variance(f, n)) / (sq.std(axis=0, ddof=1) / math.sqrt(len(est)))
    assert np.abs(z).max() <= 5
    # the collision term is a visible part of it here (Σ f² / (k(m−1)) does not shrink with n)
    assert o.collision_variance(f).min() > 0.1 * o.variance(f, n).min()


@pytest.mark.parametrize("name", ["cms", "hcms"])
def test_pure_view_equals_apples_estimator_on_the_sketch_matrix(name):
    o = oracles.get(name, 2.0, 50, k=8, m=16, hash_seed=5)
    gen = np.random.default_rng(2)
    values = gen.integers(0, 50, size=3000)
    S, N = o.sketch(o.perturb(values, gen))
    M = o.sketch_matrix(S, N)  # Apple's M (CMS) or M Hᵀ (HCMS)
    n, k, m = 3000, o.k, o.m
    apple = m / (m - 1) * (M[np.arange(k)[:, None], o.buckets].sum(axis=0) / k - n / m)
    est = o.estimate(o.counts_from_sketch(S, N), n)
    np.testing.assert_allclose(est.f_tilde * n, apple, rtol=1e-10, atol=1e-8)


@pytest.mark.parametrize("name", sorted(SMALL))
def test_exact_epsilon_by_enumeration(name):
    o = _small(name)
    L = np.log(o.output_distribution())
    eps = float((L[:, None, :] - L[None, :, :]).max())
    exact = o.exact_epsilon_one() if name == "rappor" else o.exact_epsilon()
    assert eps == pytest.approx(exact, rel=1e-12)
    if name != "rappor":
        assert eps == pytest.approx(o.epsilon, rel=1e-12)


def test_support_matrix_sums_to_aggregate():
    gen = np.random.default_rng(4)
    for name, kw in (("cms", dict(k=5, m=32)), ("hcms", dict(k=5, m=32)), ("rappor", dict(num_bits=16))):
        o = oracles.get(name, 2.0, 20, **kw)
        r = o.perturb(gen.integers(0, 20, size=500), gen)
        np.testing.assert_allclose(o.support_matrix(r).sum(axis=0), o.aggregate(r))


def test_bad_parameters_and_reports_are_named():
    with pytest.raises(ValueError, match="m must be a power of 2"):
        oracles.get("hcms", 1.0, 10, m=12)
    with pytest.raises(ValueError, match="k must be"):
        oracles.get("cms", 1.0, 10, k=0)
    with pytest.raises(ValueError, match="inst_p must be < inst_q"):
        oracles.get("rappor", 1.0, 10, inst_p=0.8, inst_q=0.2)
    o = oracles.get("cms", 1.0, 10, k=2, m=8)
    with pytest.raises(ValueError, match="bits must be"):
        o.aggregate((np.array([0, 1]), np.zeros((2, 7))))
    with pytest.raises(ValueError, match="y must be -1 or"):
        oracles.get("hcms", 1.0, 10, k=2, m=8).aggregate(np.array([[0, 1, 0]]))


def test_registry_builds_them_and_keeps_the_pure_list_apart():
    assert {"cms", "hcms", "rappor"} <= set(oracles.available(sketches=True))
    assert not {"cms", "hcms", "rappor"} & set(oracles.available())
    assert isinstance(oracles.get("CMS", 1.0, 10), oracles.CMS)
    with pytest.raises(ValueError, match="oracle must be one of"):
        oracles.get("sketchy", 1.0, 10)


def test_rappor_real_simulation_accumulates_fractional_counts():
    o = oracles.get("rappor", 3.0, 8, num_bits=16, num_hashes=3)
    est = o.simulate(np.array([50, 30, 20, 0, 0, 0, 0, 0]), 1, exact=True)
    assert est.n == 100 and np.any(est.counts != np.floor(est.counts))  # multiples of 1/h, kept
    assert np.allclose(est.counts * 3, np.rint(est.counts * 3))
