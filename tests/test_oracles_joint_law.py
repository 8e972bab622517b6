"""Joint law of the support counts beyond the conformance suite: Subset Selection's tree sampler
against the exact mean and covariance by enumeration of ``output_distribution``
(``oracles.jointlaw.count_moments``) in both of its splitting modes and at large n, and the variance
of set sums (Σ over the whole domain, over a random half) of every pure oracle's fast path against
its real path at d = 1024. Every registered oracle's fast and real paths against the enumerated law
at d = 5 are in tests/test_oracle_conformance.py (``check_oracle``'s ``joint_law``).

Before the fix, OLH/BLH (fast path: a random-function law; real path: a balanced affine family)
and SS (fast path: independent counts; real path: Σ c = n k) failed the covariance test with
max |z| of 21–30 and the set-sum test with variance ratios real/fast of 0.008–0.54
(benchmarks/joint_law.py prints the whole table).

Statistical tolerances: z-scores of covariance entries ≤ 5 (with ≤ 21 entries a false failure is a
~1e-5 event), variance ratios within 5 standard errors of the log ratio (≈ 2/√R), fixed seeds.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from ldpopt import oracles
from ldpopt.oracles import subset_counts as _subset_counts
from ldpopt.oracles.jointlaw import count_moments
from ldpopt.oracles.subset import SS

NAMES = oracles.available()


def _cov_z(x: np.ndarray, mean: np.ndarray, cov: np.ndarray) -> np.ndarray:
    """z of every covariance entry (j <= k) of the draws x (R, d) against the exact (mean, cov), using
    the empirical s.e. of the products (c_j − μ_j)(c_k − μ_k); an entry with zero spread must match."""
    xc = x - mean
    j, k = np.triu_indices(x.shape[1])
    prod = xc[:, j] * xc[:, k]
    se = prod.std(axis=0, ddof=1) / math.sqrt(x.shape[0])
    dev = prod.mean(axis=0) - cov[j, k]
    return np.where(se > 0, np.abs(dev) / np.where(se > 0, se, 1.0), np.where(np.abs(dev) > 1e-9, np.inf, 0.0))


def _mean_z(x, mean, cov):
    se = np.sqrt(np.diag(cov) / x.shape[0])
    return np.abs(x.mean(axis=0) - mean) / np.where(se > 0, se, 1.0)


def _real_counts(o, tc, reps, gen, block_cells=1 << 23):
    """(reps, d) counts of the real protocol: many repetitions' users perturbed at once, then each
    repetition's supports summed (``support_matrix(...).sum(0) == aggregate(...)`` is an interface
    guarantee, tested per oracle elsewhere)."""
    n, d = int(tc.sum()), o.d
    values = np.repeat(np.arange(d), tc)
    out = np.empty((reps, d), dtype=np.int64)
    per = max(1, block_cells // (n * d))
    for r0 in range(0, reps, per):
        r1 = min(reps, r0 + per)
        S = o.support_matrix(o.perturb(np.tile(values, r1 - r0), gen))
        out[r0:r1] = S.reshape(r1 - r0, n, d).sum(axis=1)
    return out


@pytest.mark.slow
@pytest.mark.parametrize("epsilon, d, k, tc", [
    (0.5, 5, 3, [9, 0, 4, 2, 6]),       # k > d/2: the real path draws the complement
    (1.0, 7, 1, [3, 3, 0, 5, 1, 1, 2]),  # k = 1 (no pinned remainder)
    (0.3, 4, 3, [10, 1, 1, 0]),
    (2.0, 8, 4, [40, 0, 0, 3, 2, 1, 1, 5]),
])
def test_ss_tree_sampler_matches_enumeration_per_user_and_multinomial(epsilon, d, k, tc, monkeypatch):
    """Both ways of splitting a tree node (per user, windowed multinomial) give the exact law."""
    o = SS(epsilon, d, k=k)
    tc = np.array(tc)
    mean, cov = count_moments(o, tc)
    for per_user_cost, total in ((0, 10**18), (10**9, 0)):  # all per user; all multinomial
        monkeypatch.setattr(_subset_counts, "_PER_USER_COST", per_user_cost)
        monkeypatch.setattr(_subset_counts, "_PER_USER_TOTAL", total)
        gen = np.random.default_rng(d * 10 + k)
        x = np.array([o.sample_counts(tc, gen) for _ in range(1000)], dtype=np.float64)
        assert np.all(x.sum(axis=1) == tc.sum() * k)
        assert _mean_z(x, mean, cov).max() <= 5
        assert _cov_z(x, mean, cov).max() <= 5


@pytest.mark.slow
def test_ss_tree_sampler_at_large_n_matches_the_exact_moments():
    """n = 10⁶ users on d = 9: the multinomial splits carry large counts; mean and covariance still
    match the enumerated law (which scales linearly in the histogram)."""
    o = SS(1.0, 9, k=3)
    tc = np.array([400_000, 250_000, 150_000, 100_000, 50_000, 30_000, 15_000, 5_000, 0])
    mean, cov = count_moments(o, tc)
    gen = np.random.default_rng(9)
    x = np.array([o.sample_counts(tc, gen) for _ in range(1500)], dtype=np.float64)
    assert np.all(x.sum(axis=1) == tc.sum() * 3)
    assert _mean_z(x, mean, cov).max() <= 5
    assert _cov_z(x, mean, cov).max() <= 5


@pytest.mark.parametrize("d, k, n", [(2, 1, 1), (3, 2, 5), (17, 8, 40), (100, 99, 30), (1000, 1, 7), (1000, 500, 300),
                                     (513, 128, 10_000)])
def test_ss_fast_path_sums_to_n_k_and_stays_in_range(d, k, n):
    o = SS(1.0, d, k=k)
    gen = np.random.default_rng(d + k)
    for _ in range(5):
        tc = gen.multinomial(n, gen.dirichlet(np.ones(d) * 0.3))
        c = o.sample_counts(tc, gen)
        assert c.dtype == np.int64 and c.sum() == n * k
        assert np.all((c >= 0) & (c <= n))


# -- variance of set sums at d = 1024: fast path vs real path ---------------------------------------------
_D = 1024
_TC = np.random.default_rng(7).multinomial(500, np.arange(1, _D + 1) ** -1.1 / np.sum(np.arange(1, _D + 1) ** -1.1))
_HALF = np.random.default_rng(3).permutation(_D)[: _D // 2]


@pytest.mark.parametrize("name", [pytest.param(nm, marks=pytest.mark.slow) if nm in ("olh", "blh", "ss") else nm
                                  for nm in NAMES])
def test_set_sum_variance_fast_path_equals_real_path(name):
    o = oracles.get(name, epsilon=1.0, d=_D)
    reps = 400
    gen = np.random.default_rng(300 + NAMES.index(name))
    fast = np.array([o.sample_counts(_TC, gen) for _ in range(reps)], dtype=np.float64)
    real = _real_counts(o, _TC, reps, gen).astype(np.float64)
    tol = 5 * 2 / math.sqrt(reps)  # s.e. of log(var ratio) ≈ sqrt(2/(R−1) · 2)
    for S in (np.arange(_D), _HALF):
        vf, vr = fast[:, S].sum(axis=1).var(ddof=1), real[:, S].sum(axis=1).var(ddof=1)
        if vf == 0.0 or vr == 0.0:
            assert vf == vr == 0.0  # a fixed total (Σ c = n for GRR, n k for SS) on both paths
        else:
            assert abs(math.log(vr / vf)) <= tol, (name, S.size, vr / vf)


def test_hr_set_sum_variance_matches_the_exact_variance():
    """HR at d = 1024 against the exact Var(Σ_{v∈S} c_v) from its K = 2048 outputs. A set sum of HR
    supports is heavy-tailed (output y = 0 supports every value), so the standard error of a sample
    variance is estimated from the squared deviations themselves, not as sqrt(2/R)."""
    o = oracles.get("hr", epsilon=1.0, d=_D)
    P = o.output_distribution()                       # (d, K)
    ys = np.arange(o.K)
    inside = (np.bitwise_count(np.arange(1, _D + 1)[:, None] & ys[None, :]) & 1) == 0  # (d, K): y ∈ C_v
    gen = np.random.default_rng(17)
    R = 2000
    fast = np.array([o.sample_counts(_TC, gen) for _ in range(R)], dtype=np.float64)
    real = np.array([o.simulate(_TC, gen, exact=True).counts for _ in range(R)], dtype=np.float64)
    for S in (np.arange(_D), _HALF):
        T = inside[S].sum(axis=0).astype(np.float64)  # T_S(y)
        mean_x, sq_x = P @ T, P @ T ** 2
        mean, var = _TC @ mean_x, _TC @ (sq_x - mean_x ** 2)
        for x in (fast, real):
            t = x[:, S].sum(axis=1)
            dev2 = (t - mean) ** 2
            assert abs(t.mean() - mean) <= 5 * math.sqrt(var / R)
            assert abs(dev2.mean() - var) <= 5 * dev2.std(ddof=1) / math.sqrt(R)


@pytest.mark.parametrize("big", [False, True])
def test_ss_multinomial_split_histograms_have_the_hypergeometric_moments(big):
    """_multinomial_splits, with the int64-key grouping of equal (ngood, nbad, nsample) and (big) the
    fallback for huge domains: per row, the users' L have the hypergeometric mean and variance."""
    scale = 3_000_000 if big else 30
    ngood = np.array([scale, scale, 2 * scale, scale])
    nbad = np.array([scale, scale, scale, 3 * scale])
    nsample = np.array([7, 7, 20, 11])
    count = np.array([200_000, 100_000, 150_000, 120_000])
    row, L, c = _subset_counts._multinomial_splits(np.random.default_rng(5), ngood, nbad, nsample, count)
    for i in range(4):
        sel = row == i
        assert c[sel].sum() == count[i]
        N, K, n = ngood[i] + nbad[i], ngood[i], nsample[i]
        mu = n * K / N
        var = n * (K / N) * (1 - K / N) * (N - n) / (N - 1)
        mean = (L[sel] * c[sel]).sum() / count[i]
        assert abs(mean - mu) <= 5 * math.sqrt(var / count[i])
        emp_var = ((L[sel] - mu) ** 2 * c[sel]).sum() / count[i]
        assert abs(emp_var / var - 1) <= 5 * math.sqrt(2 / count[i]) + 0.01
