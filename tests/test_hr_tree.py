"""HR's fast path by halving the Hadamard cube (issue 16, ``oracles._hadamard_tree``): exact joint law.

References, all independent of the tree: the exact law of the count vector c by enumerating every
tuple of user outputs (with d = K − 1 the map N ↦ c is one-to-one, so this is the law of the whole
output histogram), the previous exact path (``sample_counts_mixture``), the exact covariance
(``jointlaw.count_moments``), and the sets C_r themselves. Statistical tests use fixed seeds and
p-value thresholds of 1e-4 (a false failure is a ~1e-4 event per test).
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats

from ldpopt import oracles
from ldpopt.oracles._hadamard_tree import binomial_half, tree_histogram
from ldpopt.oracles.jointlaw import count_moments


def _exact_law(o, values):
    """{c: Pr[c]} for users with these values, over all K^n output tuples (Pr[y | v] enumerated)."""
    P = o.output_distribution()
    ys = np.arange(o.K, dtype=np.int64)
    support = (np.bitwise_count(np.arange(1, o.d + 1)[:, None] & ys[None, :]) & 1) == 0  # (d, K): y ∈ C_v
    law: dict[tuple, float] = {}
    for tup in itertools.product(range(o.K), repeat=len(values)):
        pr = math.prod(P[v, y] for v, y in zip(values, tup))
        c = tuple(int(x) for x in support[:, list(tup)].sum(axis=1))
        law[c] = law.get(c, 0.0) + pr
    return law


def _chi2_pvalue(draws: np.ndarray, law: dict) -> float:
    keys = list(law)
    index = {k: i for i, k in enumerate(keys)}
    obs = np.zeros(len(keys))
    for row in map(tuple, draws.astype(int)):
        assert row in index, f"impossible count vector {row}"
        obs[index[row]] += 1
    exp = np.array([law[k] for k in keys]) * draws.shape[0]
    # pool the cells expected below 5 into one (the chi-square approximation needs it)
    low = exp < 5
    obs = np.append(obs[~low], obs[low].sum())
    exp = np.append(exp[~low], exp[low].sum())
    if exp[-1] == 0:
        obs, exp = obs[:-1], exp[:-1]
    return stats.chisquare(obs, exp).pvalue


def _tree_by_sides(o, tc, gen):
    """The tree fed by the sides (the feed before issue 16's mixture feed, kept as a reference):
    Binomial(n_v, p) users of v on C_v, the rest on its complement."""
    inside = np.zeros(o.K, dtype=np.int64)
    inside[1:o.d + 1] = gen.binomial(tc, o.p)
    outside = np.zeros(o.K, dtype=np.int64)
    outside[1:o.d + 1] = tc - inside[1:o.d + 1]
    return o._counts_from_histogram(tree_histogram(inside, outside, gen))


@pytest.mark.parametrize("path", ["sample_counts_tree", "tree_by_sides", "sample_counts_mixture"])
@pytest.mark.parametrize("eps, d, values", [
    (1.0, 3, (0, 0, 1, 2)),        # K = 4: the law of c is the law of the whole histogram
    (0.5, 7, (0, 3, 3, 6)),        # K = 8
    (2.0, 7, (5, 5, 5, 5)),        # one value only: one class per side
    (1.0, 5, (0, 4, 4, 1)),        # d < K − 1: the tree keeps only rows ≤ d (the law of c)
])
def test_fast_paths_have_the_enumerated_law(eps, d, values, path):
    o = oracles.get("hr", epsilon=eps, d=d)
    law = _exact_law(o, values)
    assert abs(sum(law.values()) - 1) < 1e-12
    tc = np.bincount(values, minlength=d)
    gen = np.random.default_rng(1600 + d)
    sample = (lambda tc, gen: _tree_by_sides(o, tc, gen)) if path == "tree_by_sides" else getattr(o, path)
    draws = np.array([sample(tc, gen) for _ in range(20000)])
    assert _chi2_pvalue(draws, law) > 1e-4
    if path == "sample_counts_mixture":
        # sample_counts at these sizes (λn far below the switch) is the mixture path itself: the same
        # draws from the same generator, so the law tested here is its law too (its 20,000 draws were
        # these draws, once a parametrization of their own)
        again = np.random.default_rng(1600 + d)
        assert np.array_equal(np.array([o.sample_counts(tc, again) for _ in range(200)]), draws[:200])


def test_sample_counts_takes_the_mixture_below_the_switch_and_the_tree_above():
    from ldpopt.oracles.hadamard import MIXTURE_SEED_STABLE

    o = oracles.get("hr", epsilon=1.0, d=1024)  # K = 2048: cost crossover at λn = 2048·11/4 < 2·10⁶
    lam = math.tanh(0.5)
    switch = max(2048 * 11 / 4, MIXTURE_SEED_STABLE)
    small = np.full(1024, int(switch / lam / 1024) - 1)
    large = small + 2
    assert lam * small.sum() < switch <= lam * large.sum()
    assert np.array_equal(o.sample_counts(small, 5), o.sample_counts_mixture(small, 5))
    assert np.array_equal(o.sample_counts(large, 5), o.sample_counts_tree(large, 5))
    assert not np.array_equal(o.sample_counts(large, 5), o.sample_counts_mixture(large, 5))


def test_the_enumeration_rejects_a_wrong_law():
    """Power check of the test above: the marginally right but jointly wrong law (each value's
    outputs drawn from the right marginal but each count independently) is rejected."""
    o = oracles.get("hr", epsilon=1.0, d=7)
    values = (0, 3, 3, 6)
    law = _exact_law(o, values)
    tc = np.bincount(values, minlength=7)
    gen = np.random.default_rng(3)
    # c_u ~ Binomial per user independently, with the exact marginal Pr[y_i ∈ C_u | v_i]
    P = o.output_distribution()
    support = (np.bitwise_count(np.arange(1, 8)[:, None] & np.arange(8)[None, :]) & 1) == 0
    marg = P @ support.T.astype(float)  # (v, u)
    draws = sum(gen.random((20000, 7)) < marg[v] for v in values)
    assert all(abs(marg[v, v] - o.p) < 1e-12 for v in values)
    with pytest.raises(AssertionError):  # an impossible vector, or a tiny p-value
        assert _chi2_pvalue(draws, law) > 1e-4


def test_tree_and_mixture_paths_agree_in_law_at_moderate_n():
    """Tree against the previous exact path and the tree fed by the sides (all against the exact
    covariance), K = 16, n = 3,000 with values on both of the mixture's samplers and cells on both
    of binomial_half's samplers (bit count up to 1,024, numpy above)."""
    tc = np.array([1500, 0, 700, 3, 250, 90, 0, 17, 1, 400, 30, 9])
    o = oracles.get("hr", epsilon=0.7, d=tc.shape[0])
    mean, cov = count_moments(o, tc)
    gen = np.random.default_rng(16)
    reps = 6000
    a = np.array([o.sample_counts_tree(tc, gen) for _ in range(reps)], dtype=np.float64)
    b = np.array([o.sample_counts_mixture(tc, gen) for _ in range(reps)], dtype=np.float64)
    s = np.array([_tree_by_sides(o, tc, gen) for _ in range(reps)], dtype=np.float64)
    for x in (a, b, s):
        assert np.abs(x.mean(0) - mean).max() <= 5 * np.sqrt(np.diag(cov).max() / reps)
        # the full covariance matrix (off-diagonal entries are the joint law), relative to the scale
        assert np.abs(np.cov(x.T) - cov).max() <= 0.12 * np.diag(cov).max()
    # two-sample test of one correlated linear functional (a random ±1 contrast of the counts)
    w = np.random.default_rng(5).choice([-1.0, 1.0], size=tc.shape[0])
    assert stats.ks_2samp(a @ w, b @ w).pvalue > 1e-4
    assert stats.ks_2samp(a @ w, s @ w).pvalue > 1e-4


def test_tree_at_n_1e9_is_exact_in_moments():
    """Large n: the standardised sum over draws of (c − E c) and the variance of a ±1 contrast
    against the exact covariance (count_moments, linear in the histogram)."""
    d = 12
    tc = (np.array([0.5, 0.2, 0.1, 0.05, 0.05, 0.04, 0.03, 0.01, 0.01, 0.005, 0.003, 0.002]) * 1e9).astype(np.int64)
    o = oracles.get("hr", epsilon=1.0, d=d)
    mean, cov = count_moments(o, tc)
    gen = np.random.default_rng(9)
    x = np.array([o.sample_counts_tree(tc, gen) for _ in range(2000)], dtype=np.float64)
    assert (x.sum(1) >= 0).all()
    z = (x.mean(0) - mean) / np.sqrt(np.diag(cov) / x.shape[0])
    assert np.abs(z).max() <= 5
    w = np.random.default_rng(1).choice([-1.0, 1.0], size=d)
    ratio = (x @ w).var(ddof=1) / (w @ cov @ w)
    assert abs(math.log(ratio)) <= 5 * math.sqrt(2 / x.shape[0])


def test_tree_histogram_puts_each_side_on_its_set():
    K = 32
    gen = np.random.default_rng(0)
    ys = np.arange(K)
    for r in (1, 6, 16, 31):
        in_cr = (np.bitwise_count(r & ys) & 1) == 0
        for side in (0, 1):
            counts = np.zeros((2, K), dtype=np.int64)
            counts[side, r] = 1000
            N = tree_histogram(counts[0], counts[1], gen)
            assert N.sum() == 1000
            assert N[in_cr if side else ~in_cr].sum() == 0
            assert (N[in_cr if side == 0 else ~in_cr] > 0).all()  # 1000 users over 16 outputs
    # row 0 (all +1): uniform on everything
    N = tree_histogram(np.eye(1, K, 0, dtype=np.int64)[0] * 10**6, np.zeros(K, dtype=np.int64), gen)
    assert N.sum() == 10**6 and stats.chisquare(N).pvalue > 1e-4


def test_tree_histogram_rejects_bad_input():
    with pytest.raises(ValueError, match="power-of-2"):
        tree_histogram(np.zeros(6, dtype=np.int64), np.zeros(6, dtype=np.int64), np.random.default_rng())
    with pytest.raises(ValueError, match="outside"):
        tree_histogram(np.zeros(4, dtype=np.int64), np.array([1, 0, 0, 0]), np.random.default_rng())


@pytest.mark.parametrize("x", [0, 1, 7, 63, 64, 65, 300])
@pytest.mark.parametrize("share", [0.25, 0.75])
def test_binomial_half_has_the_binomial_law(x, share):
    """Both samplers (bit count at x ≤ 64, numpy above; with most cells large numpy draws all)
    against the Binomial pmf, with cells of 3 and 1000 in the same call (the redraw of the
    large cells must land on them)."""
    gen = np.random.default_rng(x)
    arr = np.full((400, 100), 3, dtype=np.int64)
    rows = np.arange(400) % 4 < 4 * share
    arr[rows] = x
    arr[~rows, :4] = 1000
    k = binomial_half(arr, gen)
    assert k.shape == arr.shape and k.dtype == np.int64
    assert ((k >= 0) & (k <= arr)).all()
    assert (k[~rows, :4] > 300).all()
    three = k[~rows, 4:].ravel()
    exp3 = three.size * stats.binom.pmf(range(4), 3, 0.5)
    assert stats.chisquare(np.bincount(three, minlength=4), exp3).pvalue > 1e-4
    draws = k[rows].ravel()
    if x == 0:
        assert (draws == 0).all()
        return
    assert _binomial_half_pvalue(draws, x) > 1e-4


def test_tree_histogram_at_k_2_and_1():
    """K = 2 (d = 1) goes straight to the last bit: C_1 = {0}, so row 1's (+) users output 0 and its
    (−) users 1; row 0's users are Binomial-split; K = 1 returns the count itself."""
    gen = np.random.default_rng(2)
    assert tree_histogram(np.array([0, 7]), np.array([0, 3]), gen).tolist() == [7, 3]
    N = np.array([tree_histogram(np.array([40, 0]), np.array([0, 0]), gen) for _ in range(2000)])
    assert (N.sum(1) == 40).all()
    obs = np.bincount(N[:, 0], minlength=41)
    exp = 2000 * stats.binom.pmf(np.arange(41), 40, 0.5)
    mid = slice(14, 27)  # cells expected ≥ 5; the two tails pooled
    obs = np.r_[obs[:14].sum(), obs[mid], obs[27:].sum()]
    exp = np.r_[exp[:14].sum(), exp[mid], exp[27:].sum()]
    assert stats.chisquare(obs, exp).pvalue > 1e-4
    assert tree_histogram(np.array([9]), np.array([0]), gen).tolist() == [9]


@pytest.mark.parametrize("x", [65, 100, 127, 128, 129, 191, 192, 255])
def test_binomial_half_bit_count_over_several_words(x):
    """The multi-word bit count (x > 64: more words, the last one masked to the bits left) against the
    Binomial(x, 1/2) pmf, exactly at and around the word boundaries, with words_max = 4 (x ≤ 256 by
    bit count). The cells of one call hold different word counts (x, 3, 1000, 200), so a segment
    sum landing on a neighbour's cell would show in the chi-square of each group."""
    gen = np.random.default_rng(7000 + x)
    arr = np.tile(np.array([x, 3, 1000, 200], dtype=np.int64), (20000, 1))
    k = binomial_half(arr, gen, words_max=4)
    assert k.dtype == np.int64 and ((k >= 0) & (k <= arr)).all()
    for col, m in enumerate((x, 3, 200)):
        assert _binomial_half_pvalue(k[:, [0, 1, 3][col]], m) > 1e-4


def test_binomial_half_bit_count_is_the_number_of_ones():
    """Deterministic check of the masks and segment sums: with a generator whose words are all ones,
    every bit-counted cell returns x itself (a mask one bit too wide or narrow, or a sum over the wrong
    words, would not); all zeros give 0."""

    class Const:
        def __init__(self, word):
            self.word = np.uint64(word)

        def integers(self, low, high, size, dtype, endpoint):
            return np.full(size, self.word, dtype=dtype)

        def binomial(self, n, p):
            raise AssertionError("no cell here is above the bit-count range")

    x = np.array([0, 1, 63, 64, 65, 127, 128, 129, 500, 1023, 1024, 7, 0, 640], dtype=np.int64)
    assert np.array_equal(binomial_half(x, Const(np.iinfo(np.uint64).max)), x)
    assert np.array_equal(binomial_half(x.reshape(2, 7), Const(0)), np.zeros((2, 7), dtype=np.int64))


def test_binomial_half_large_cells_take_numpy():
    """Cells above 64·words_max go to numpy's binomial (mean and spread of Binomial(5000, 1/2))."""
    gen = np.random.default_rng(11)
    arr = np.array([5000, 10] * 20000, dtype=np.int64)
    k = binomial_half(arr, gen, words_max=2)
    big = k[::2]
    assert abs(big.mean() - 2500) < 5 * math.sqrt(1250 / big.size)
    assert abs(math.log(big.var() / 1250)) < 5 * math.sqrt(2 / big.size)


def test_binomial_half_rejects_a_word_count_past_its_sums():
    with pytest.raises(ValueError, match="words_max"):
        binomial_half(np.array([5]), np.random.default_rng(), words_max=1024)
    with pytest.raises(ValueError, match="words_max"):
        binomial_half(np.array([5]), np.random.default_rng(), words_max=0)


def _binomial_half_pvalue(draws, m):
    """Chi-square p-value of ``draws`` against the Binomial(m, 1/2) pmf, the cells expected below 5
    pooled into one."""
    obs = np.bincount(draws, minlength=m + 1)
    exp = draws.size * stats.binom.pmf(np.arange(m + 1), m, 0.5)
    keep = exp >= 5
    if not keep.all():
        obs = np.append(obs[keep], obs[~keep].sum())
        exp = np.append(exp[keep], exp[~keep].sum())
    return stats.chisquare(obs, exp).pvalue
