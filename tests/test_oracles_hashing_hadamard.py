"""OLH, BLH (local hashing) and HR (Hadamard Response): exact distributions, aggregation against naive
references, the sampler's exactness, unbiasedness/variance by Monte Carlo, fast path vs real path.

Statistical tolerances are 5 standard errors of the quantity tested (a false failure is then a
< 1e-6 event per comparison), with fixed seeds.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.linalg

from ldpopt import oracles
from ldpopt.oracles.hadamard import HR, fwht
from ldpopt.oracles.hashing import BLH, G_MAX, OLH, keyed_hash


_MASK = (1 << 64) - 1


def _splitmix64_slow(key: int, v: int) -> int:
    """Output v of SplitMix64 with state ``key`` (Steele, Lea & Flood 2014; Stafford's variant 13),
    in Python integers: the reference for ``keyed_hash``."""
    z = (key + (v + 1) * 0x9E3779B97F4A7C15) & _MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
    return z ^ (z >> 31)


def _olh_support_slow(o: OLH, reports: np.ndarray) -> np.ndarray:
    """(n, d) bool: H_s(v) == r, evaluated per user and value with Python integers."""
    out = np.zeros((reports.shape[0], o.d), dtype=bool)
    for i, (s, r) in enumerate(reports.tolist()):
        for v in range(o.d):
            out[i, v] = _splitmix64_slow(s & _MASK, v) % o.g == r
    return out


def _hr_support_slow(o: HR) -> np.ndarray:
    """(d, K) bool from the explicit Sylvester matrix: y ∈ C_v iff H[v+1, y] = +1."""
    return scipy.linalg.hadamard(o.K)[1:o.d + 1] == 1


# -- the keyed hash family, exact p and q ----------------------------------------------------------------
def test_keyed_hash_equals_python_splitmix64():
    rng = np.random.default_rng(1)
    keys = rng.integers(np.iinfo(np.int64).min, np.iinfo(np.int64).max, size=40, dtype=np.int64)
    vs = np.array([0, 1, 2, 17, 1023, 42177, 2**31 - 2])
    for g in (2, 3, 4, 7, 1 << 30):
        h = keyed_hash(keys[:, None], vs[None, :], g)
        ref = [[_splitmix64_slow(int(k) & _MASK, int(v)) % g for v in vs] for k in keys]
        np.testing.assert_array_equal(h, np.array(ref))


@pytest.mark.parametrize("g", [2, 3, 4, 7])
def test_keyed_hash_behaves_like_a_random_function(g):
    """Over random keys: every H(v) uniform on [g], and the buckets of two, three values independent
    (collision rate 1/g, triple rate 1/g²), as the random-function law needs (5 s.e. each)."""
    o = OLH(1.0, 64, g=g)
    N = 200_000
    keys = np.random.default_rng(g).integers(np.iinfo(np.int64).min, np.iinfo(np.int64).max, size=N,
                                             dtype=np.int64, endpoint=True)
    h = o.hash(keys[:, None], np.arange(64)[None, :])  # (N, 64)
    freq = np.stack([np.bincount(col, minlength=g) for col in h.T]) / N
    assert np.all(np.abs(freq - 1 / g) <= 5 * math.sqrt((1 / g) * (1 - 1 / g) / N))
    for v, w, u in [(0, 1, 2), (5, 6, 63), (10, 40, 41)]:
        pair = np.mean(h[:, v] == h[:, w])
        assert abs(pair - 1 / g) <= 5 * math.sqrt((1 / g) * (1 - 1 / g) / N)
        triple = np.mean((h[:, v] == h[:, w]) & (h[:, w] == h[:, u]))
        assert abs(triple - 1 / g ** 2) <= 5 * math.sqrt((1 / g ** 2) * (1 - 1 / g ** 2) / N)
    # bucket sizes of one key's function over the 64 values: Binomial(64, 1/g) per bucket, as for a
    # random function (a balanced family would have variance ≈ 0)
    sizes = np.stack([np.bincount(row, minlength=g) for row in h[:20_000]])
    var = sizes.var(ddof=1)
    expected = 64 * (1 / g) * (1 - 1 / g)
    assert abs(var / expected - 1) < 0.05


def _check_privacy_and_pq(o, P, S, epsilon):
    """Rows sum to 1; max ratio <= e^ε (tight); p, q from the marginals equal o.p, o.q."""
    np.testing.assert_allclose(P.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    assert np.all(P > 0)
    worst = float(np.max(P.max(axis=0) / P.min(axis=0)))
    assert worst <= math.exp(epsilon) * (1 + 1e-12)
    assert worst >= math.exp(epsilon) * (1 - 1e-12)
    support = P @ S.T.astype(np.float64)  # [v, u] = Pr[report supports u | value v]
    d = P.shape[0]
    np.testing.assert_allclose(np.diag(support), o.p, rtol=0, atol=1e-12)
    off = support[~np.eye(d, dtype=bool)]
    np.testing.assert_allclose(off, o.q, rtol=0, atol=1e-12)


def _olh_set_law_by_enumerating_functions(o: OLH) -> np.ndarray:
    """Pr[support set | v], (d, 2^d), from the g^d functions H and g reports r one by one."""
    d, g = o.d, o.g
    keep = math.exp(o.epsilon) / (math.exp(o.epsilon) + g - 1)
    P = np.zeros((d, 1 << d))
    for fn in range(g ** d):
        H = [(fn // g ** v) % g for v in range(d)]
        for r in range(g):
            col = sum(1 << u for u in range(d) if H[u] == r)
            for v in range(d):
                P[v, col] += g ** -d * (keep if H[v] == r else (1 - keep) / (g - 1))
    return P


@pytest.mark.parametrize("d, g", [(2, 2), (3, 2), (5, 2), (6, 2), (2, 3), (4, 3), (5, 3), (3, 5), (4, 4)])
@pytest.mark.parametrize("epsilon", [0.05, 0.7, 2.0, 4.0])
def test_olh_exact_distribution_privacy_and_p_q(d, g, epsilon):
    o = OLH(epsilon, d, g=g)
    P = o.output_distribution()
    assert P.shape == (d, 1 << d)
    np.testing.assert_allclose(P, _olh_set_law_by_enumerating_functions(o), rtol=1e-12, atol=0)
    _check_privacy_and_pq(o, P, o.support_matrix(), epsilon)


def test_olh_output_distribution_at_large_g_and_index_of_reports():
    o = OLH(3.0, 5)  # g = 21: 21^6 reports ⟨H, r⟩, 32 support sets
    P = o.output_distribution()
    _check_privacy_and_pq(o, P, o.support_matrix(), 3.0)
    rep = o.perturb(np.arange(5).repeat(20), 0)
    np.testing.assert_array_equal(o.output_index(rep), o.support_matrix(rep) @ (1 << np.arange(5)))
    assert np.all(P[:, o.output_index(rep)] > 0)


@pytest.mark.parametrize("epsilon", [0.3, 1.0, 3.0])
def test_olh_default_g_and_blh(epsilon):
    o = OLH(epsilon, 5)
    assert o.g == max(2, round(math.exp(epsilon) + 1))
    b = BLH(epsilon, 5)
    assert b.g == 2 and b.params()["g"] == 2 and "random function" in b.params()["hash_family"]
    assert b.p == pytest.approx(math.exp(epsilon) / (math.exp(epsilon) + 1), rel=1e-14)
    _check_privacy_and_pq(b, b.output_distribution(), b.support_matrix(), epsilon)


def test_olh_p_and_q_are_the_papers():
    # arXiv §2.4: q = 1/g; p = GRR_g's keep probability (see the module's paper note)
    o = OLH(1.0, 100_003, g=4)
    assert o.q == 0.25
    e = math.exp(1.0)
    assert o.p == pytest.approx(e / (e + 3), rel=1e-14)


@pytest.mark.parametrize("d", [2, 3, 5, 6, 9])
@pytest.mark.parametrize("epsilon", [0.1, 1.0, 3.0])
def test_hr_exact_distribution_privacy_and_p_q(d, epsilon):
    o = HR(epsilon, d)
    assert o.K == 2 ** math.ceil(math.log2(d + 1)) and o.K > d
    P = o.output_distribution()
    S = _hr_support_slow(o)
    assert np.all(S.sum(axis=1) == o.K // 2)
    # |C_u ∩ C_v| = K/4 for u ≠ v (rows orthogonal), hence q = 1/2 exactly
    inter = S.astype(int) @ S.T.astype(int)
    assert np.all(inter[~np.eye(d, dtype=bool)] == o.K // 4)
    expected = np.where(S, 2 * o.p / o.K, 2 * (1 - o.p) / o.K)
    np.testing.assert_allclose(P, expected, rtol=1e-13, atol=0)
    _check_privacy_and_pq(o, P, S, epsilon)
    assert o.q == 0.5


# -- FWHT and aggregation against naive references ---------------------------------------------------------
@pytest.mark.parametrize("K", [1, 2, 4, 8, 64, 512])
def test_fwht_equals_sylvester_matrix(K):
    rng = np.random.default_rng(K)
    x = rng.integers(-1000, 1000, size=K)
    Hm = scipy.linalg.hadamard(K)
    np.testing.assert_array_equal(fwht(x), Hm @ x)
    X = rng.normal(size=(3, 2, K))
    np.testing.assert_allclose(fwht(X), X @ Hm.T, rtol=1e-12, atol=1e-9)
    np.testing.assert_array_equal(fwht(fwht(x)), K * x)


def test_fwht_does_not_modify_input_and_rejects_bad_length():
    x = np.arange(8)
    before = x.copy()
    fwht(x)
    np.testing.assert_array_equal(x, before)
    with pytest.raises(ValueError, match="power of 2"):
        fwht(np.ones(6))


@pytest.mark.parametrize("d", [2, 7, 8, 33])
def test_hr_aggregate_equals_naive_count(d):
    o = HR(1.0, d)
    rng = np.random.default_rng(d)
    y = o.perturb(rng.integers(0, d, 700), rng)
    S = _hr_support_slow(o)
    naive = S[:, y].sum(axis=1)
    np.testing.assert_array_equal(o.aggregate(y), naive)
    np.testing.assert_array_equal(o.aggregate_naive(y), naive)


@pytest.mark.parametrize("d", [2, 5, 8, 16])
def test_hr_side_sampler_is_an_exact_bijection(d):
    """y ↦ y or y XOR lsb(v+1) sends the K equally likely y onto each element of the requested side
    exactly twice: so the output is exactly uniform on C_v (or on its complement)."""
    o = HR(1.0, d)
    S = _hr_support_slow(o)
    ys = np.arange(o.K)
    for v in range(d):
        for inside in (True, False):
            out = o._to_side(np.full(o.K, v), ys, np.full(o.K, inside))
            hits = np.bincount(out, minlength=o.K)
            side = S[v] if inside else ~S[v]
            assert np.all(hits[side] == 2) and np.all(hits[~side] == 0)


OLH_CASES = [(1.0, 6, None), (1.0, 40, None), (3.0, 25, None), (0.5, 37, 3), (1.0, 200, 7), (5.0, 30, None),
             (1.0, 12, 2), (50.0, 64, None)]


@pytest.mark.parametrize("epsilon, d, g", OLH_CASES)
def test_olh_aggregate_equals_naive_evaluation(epsilon, d, g):
    o = OLH(epsilon, d) if g is None else OLH(epsilon, d, g=g)
    rng = np.random.default_rng(d)
    for n in (1, 9, 150):
        rep = o.perturb(rng.integers(0, d, n), rng)
        naive = _olh_support_slow(o, rep)
        np.testing.assert_array_equal(o.support_matrix(rep), naive)
        np.testing.assert_array_equal(o.aggregate(rep), naive.sum(axis=0))


def test_olh_aggregate_blocks_agree_with_one_block():
    """Enough users for several aggregation blocks: the blocked sum equals the support matrix's."""
    o = OLH(1.0, 3000)
    rep = o.perturb(np.random.default_rng(0).integers(0, 3000, 500), 1)
    np.testing.assert_array_equal(o.aggregate(rep), o.support_matrix(rep).sum(axis=0))


# -- the real client randomiser against the exact distribution ------------------------------------------------
@pytest.mark.parametrize("make", [lambda: OLH(1.0, 3, g=2), lambda: OLH(0.7, 4, g=3), lambda: BLH(2.0, 2),
                                  lambda: HR(1.0, 3), lambda: HR(0.5, 5)])
def test_perturb_matches_output_distribution(make):
    o = make()
    P = o.output_distribution()
    rng = np.random.default_rng(2024)
    N = 100_000
    for v in range(o.d):
        idx = o.output_index(o.perturb(np.full(N, v), rng))
        emp = np.bincount(idx, minlength=P.shape[1])
        sd = np.sqrt(N * P[v] * (1 - P[v]))
        assert np.all(np.abs(emp - N * P[v]) <= 5 * sd + 1e-9), o


# -- Monte Carlo: unbiasedness, Eq. 2 variance, fast path vs real path ---------------------------------------
def _counts_moments(o, tc):
    n = tc.sum()
    mean = tc * o.p + (n - tc) * o.q
    var = tc * o.p * (1 - o.p) + (n - tc) * o.q * (1 - o.q)
    return mean, var


@pytest.mark.parametrize("make, n", [
    (lambda: OLH(2.0, 50), 3000),
    (lambda: OLH(1.0, 400), 200),
    (lambda: BLH(1.0, 30), 2000),
    (lambda: HR(1.0, 50), 3000),     # HR fast path per informative user
    (lambda: HR(1.0, 5), 3000),      # HR fast path per value (multinomial fold)
])
def test_real_and_fast_paths_unbiased_with_eq2_variance(make, n):
    o = make()
    d = o.d
    w = 1.0 / np.arange(1, d + 1)
    tc = np.floor(n * w / w.sum()).astype(np.int64)
    tc[0] += n - tc.sum()
    reps = 300
    gen = np.random.default_rng(31)
    real = np.array([o.simulate(tc, gen, exact=True).counts for _ in range(reps)])
    fast = np.array([o.sample_counts(tc, gen) for _ in range(reps)])
    mean, var = _counts_moments(o, tc)
    for sample in (real, fast):
        assert np.all(np.abs(sample.mean(axis=0) - mean) <= 5 * np.sqrt(var / reps))
        # sample variance of R near-normal draws: relative s.e. sqrt(2/(R−1)); 5 s.e. + excess-kurtosis slack
        ratio = sample.var(axis=0, ddof=1) / var
        assert np.all(np.abs(ratio - 1) <= 5 * math.sqrt(2 / (reps - 1)) + 0.05), ratio
    # the unbiased estimator through the real path: mean f̃ within 5 s.e. of f (Eq. 2 variance)
    f = tc / n
    est = (real / n - o.q) / (o.p - o.q)
    assert np.all(np.abs(est.mean(axis=0) - f) <= 5 * np.sqrt(o.variance(f, n) / reps))
    se = np.sqrt(real.var(axis=0, ddof=1) / reps + fast.var(axis=0, ddof=1) / reps)
    assert np.all(np.abs(real.mean(axis=0) - fast.mean(axis=0)) <= 5 * se)


def test_hr_fast_path_joint_law_matches_real_path():
    """HR's sample_counts is exact in distribution, so even the covariance of two counts agrees."""
    o = HR(1.5, 6)
    tc = np.array([400, 300, 150, 100, 50, 0])
    gen = np.random.default_rng(5)
    reps = 2000
    real = np.array([o.simulate(tc, gen, exact=True).counts for _ in range(reps)], dtype=float)
    fast = np.array([o.sample_counts(tc, gen) for _ in range(reps)], dtype=float)
    for j, k in [(0, 1), (0, 2), (1, 3)]:
        cr = np.corrcoef(real[:, j], real[:, k])[0, 1]
        cf = np.corrcoef(fast[:, j], fast[:, k])[0, 1]
        # correlation estimates have s.e. ≈ (1 − ρ²)/sqrt(R) ≤ 1/sqrt(R) each
        assert abs(cr - cf) <= 5 * math.sqrt(2 / reps)
    t_real, t_fast = real.sum(axis=1), fast.sum(axis=1)
    assert abs(t_fast.var(ddof=1) / t_real.var(ddof=1) - 1) <= 5 * math.sqrt(4 / (reps - 1))


def test_olh_blh_hr_flag_their_fast_paths_as_exact():
    # exact in joint law for the random-function family (tests/test_oracles_joint_law.py checks it)
    assert OLH.sample_counts_exact is True and BLH.sample_counts_exact is True
    assert HR.sample_counts_exact is True


# -- reproducibility and bad input ----------------------------------------------------------------------
@pytest.mark.parametrize("name", ["olh", "blh", "hr"])
def test_same_seed_same_arrays(name):
    o = oracles.get(name, epsilon=1.0, d=20)
    values = np.arange(20).repeat(7)
    np.testing.assert_array_equal(o.perturb(values, 3), o.perturb(values, 3))
    assert not np.array_equal(o.perturb(values, 3), o.perturb(values, 4))
    tc = np.arange(20)
    np.testing.assert_array_equal(o.sample_counts(tc, 8), o.sample_counts(tc, 8))
    np.testing.assert_array_equal(o.simulate(tc, 8, exact=True).counts, o.simulate(tc, 8, exact=True).counts)


@pytest.mark.parametrize("name", ["olh", "blh", "hr"])
@pytest.mark.parametrize("bad", [[0, 1, 20], [0, -1], [0.5, 1.0], ["a", "b"], [[0, 1]]])
def test_bad_values_rejected(name, bad):
    o = oracles.get(name, epsilon=1.0, d=20)
    with pytest.raises(ValueError, match="values"):
        o.perturb(np.array(bad), 0)


@pytest.mark.parametrize("g", [1, 0, -2, 2.5, "4"])
def test_bad_g_rejected(g):
    with pytest.raises((ValueError, TypeError), match="g must be"):
        OLH(1.0, 10, g=g)
    with pytest.raises(ValueError, match="g must be"):
        OLH(1.0, 10, g=G_MAX + 1)


@pytest.mark.parametrize("cls", [OLH, BLH, HR])
@pytest.mark.parametrize("epsilon", [0, -0.5, float("nan")])
def test_bad_epsilon_rejected(cls, epsilon):
    with pytest.raises(ValueError, match="epsilon"):
        cls(epsilon, 10)


def test_bad_reports_rejected():
    o = OLH(1.0, 10)
    good = o.perturb(np.arange(10), 0)
    for bad in (good[:, :1], np.hstack([good, good[:, :1]]), good.astype(float), np.array([[5, -1]]),
                np.array([[5, o.g]]), np.zeros((0, 2), dtype=np.int64)):
        with pytest.raises(ValueError, match="reports"):
            o.aggregate(bad)
    h = HR(1.0, 10)
    with pytest.raises(ValueError, match="reports"):
        h.aggregate(np.array([0, h.K]))


def test_output_distribution_refuses_large_spaces():
    with pytest.raises(ValueError, match="too large"):
        OLH(1.0, 1000).output_distribution()
    with pytest.raises(ValueError, match="too large"):
        HR(1.0, 10_000).output_distribution()


@pytest.mark.parametrize("cls", [OLH, BLH, HR])
def test_extreme_epsilon_probabilities(cls):
    for epsilon in (1e-6, 50.0):
        o = cls(epsilon, 1000)
        assert np.isfinite(o.p) and np.isfinite(o.q) and 0 <= o.q < o.p <= 1
    assert OLH(50.0, 10).g == G_MAX and OLH(1e-6, 10).g == 2
