"""Tests specific to OUE, SUE (ldpopt/oracles/unary.py) and SS (ldpopt/oracles/subset.py).

References are independent of the code under test: enumeration of the output space, mpmath at 50
digits, binomial pmfs, np.unpackbits, analytic means and variances. Statistical tests use fixed seeds;
each states its tolerance (5 standard errors per cell, or a chi-square p-value > 1e-6 for whole
distributions, i.e. a false alarm rate far below one in the whole suite).
"""

from __future__ import annotations

import math

import mpmath
import numpy as np
import pytest
from scipy import stats

from ldpopt import oracles
from ldpopt.oracles import OUE, SS, SUE
from ldpopt.oracles import unary as unary_mod
from ldpopt.oracles.unary import _bernoulli_bytes, _bernoulli_tables, column_counts

EPSILONS = [1e-6, 0.1, 1.0, 3.0, 8.0, 50.0]


def _configs(dmax=6):
    """(class, kwargs) for every small-d configuration: OUE, SUE and SS with every k in [1, d)."""
    out = []
    for d in range(2, dmax + 1):
        out += [(OUE, {"d": d}), (SUE, {"d": d})]
        out += [(SS, {"d": d, "k": k}) for k in range(1, d)]
    return out


def _support(o) -> np.ndarray:
    """(d, |Y|) bool: does output column y contain u? (from the documented column orders)"""
    if isinstance(o, SS):
        sets = o.subsets()
        member = np.zeros((o.d, sets.shape[0]), dtype=bool)
        for col, s in enumerate(sets):
            member[list(s), col] = True
        return member
    cols = np.arange(1 << o.d)
    return ((cols[None, :] >> np.arange(o.d)[:, None]) & 1).astype(bool)


def _columns(o, reports) -> np.ndarray:
    """Column index of each real report in output_distribution's order."""
    if isinstance(o, SS):
        masks = (1 << reports).sum(axis=1)
        lookup = {int((1 << s).sum()): i for i, s in enumerate(o.subsets())}
        table = np.full(1 << o.d, -1)
        table[list(lookup)] = list(lookup.values())
        return table[masks]
    bits = np.unpackbits(reports, axis=1, count=o.d).astype(np.int64)
    return bits @ (1 << np.arange(o.d))


# -- exact output distribution: privacy, p and q ----------------------------------------------
@pytest.mark.parametrize("epsilon", EPSILONS)
def test_output_distribution_is_tight_eps_ldp_with_class_p_q(epsilon):
    for cls, kw in _configs():
        o = cls(epsilon=epsilon, **kw)
        P = o.output_distribution()
        assert P.shape[0] == o.d and np.all(P > 0)
        np.testing.assert_allclose(P.sum(axis=1), 1.0, rtol=0, atol=1e-12)
        worst = float(np.max(P.max(axis=0) / P.min(axis=0)))
        assert worst <= math.exp(epsilon) * (1 + 1e-12), (o, worst)
        assert worst >= math.exp(epsilon) * (1 - 1e-12), (o, worst)  # tight
        # p = Pr[own value in Y], q = Pr[another value in Y], from the enumerated table
        M = _support(o).astype(np.float64)
        marg = P @ M.T  # marg[v, u] = Pr[u ∈ Ψ(v)]
        np.testing.assert_allclose(np.diag(marg), o.p, rtol=1e-12, atol=0)
        off = marg[~np.eye(o.d, dtype=bool)]
        np.testing.assert_allclose(off, o.q, rtol=1e-11, atol=1e-300)


def test_output_distribution_refuses_large_spaces():
    with pytest.raises(ValueError, match="d = 17"):
        OUE(1.0, 17).output_distribution()
    with pytest.raises(ValueError, match="C\\(d, k\\)"):
        SS(1.0, 40, k=20).output_distribution()


def test_ss_output_distribution_matches_unnormalised_definition():
    # Pr[Y] ∝ e^ε if v ∈ Y else 1, normalised by brute force (independent of p)
    o = SS(0.7, 6, k=2)
    member = _support(o)
    w = np.where(member, math.exp(0.7), 1.0)
    np.testing.assert_allclose(o.output_distribution(), w / w.sum(axis=1, keepdims=True), rtol=1e-13)


# -- p, q, λ numerics against mpmath ------------------------------------------------------------
def _mp_pq(cls, eps, d, k=None):
    mpmath.mp.dps = 50
    e = mpmath.e ** mpmath.mpf(eps)
    if cls is OUE:
        return mpmath.mpf(1) / 2, 1 / (e + 1)
    if cls is SUE:
        h = mpmath.sqrt(e)
        return h / (h + 1), 1 / (h + 1)
    p = k * e / (k * e + d - k)
    return p, (p * (k - 1) + (1 - p) * k) / (d - 1)


@pytest.mark.parametrize("epsilon", [1e-6, 1e-3, 0.5, 1.0, 5.0, 20.0, 50.0])
@pytest.mark.parametrize("cls,d,k", [(OUE, 1024, None), (SUE, 1024, None), (SS, 1024, 3), (SS, 7, 6),
                                     (SS, 2, 1)])
def test_p_q_match_high_precision(cls, d, k, epsilon):
    o = cls(epsilon, d) if k is None else cls(epsilon, d, k=k)
    p, q = _mp_pq(cls, epsilon, d, k)
    assert math.isfinite(o.p) and math.isfinite(o.q) and 0 <= o.q < o.p <= 1
    assert abs(o.p - float(p)) <= 1e-14 * float(p)
    assert abs(o.q - float(q)) <= 1e-14 * float(q)
    # p − q as Estimate computes it keeps its relative accuracy even at ε = 1e-6
    assert abs((o.p - o.q) - float(p - q)) <= 1e-8 * float(p - q)
    if cls is SS:
        lam = (p - mpmath.mpf(k) / d) / (1 - mpmath.mpf(k) / d)
        assert abs(o.mixture_weight - float(lam)) <= 1e-13 * float(lam)


def test_ss_default_k_and_the_papers_p_one_half():
    assert SS(1.0, 100).k == round(100 / (math.e + 1)) == 27
    assert SS(10.0, 5).k == 1  # d/(e^ε+1) ≈ 2e-4 → at least 1
    assert SS(1e-6, 9).k == 4 and SS(1e-6, 2).k == 1  # < d/2, so always < d
    # k = d/(e^ε+1) exactly: p = 1/2 and q = (2k−1)/(2(d−1)) as in arXiv §2.4
    o = SS(math.log(3.0), 8)
    assert o.k == 2 and o.params() == {"k": 2}
    assert o.p == pytest.approx(0.5, rel=1e-15)
    assert o.q == pytest.approx(3 / 14, rel=1e-15)


def test_oue_variance_is_eq6():
    o, n = OUE(1.3, 50), 1000
    f = np.linspace(0, 0.1, 50)
    e = math.exp(1.3)
    np.testing.assert_allclose(o.variance(f, n), (4 * e / (e - 1) ** 2 + f) / n, rtol=1e-12)


# -- the Bernoulli(q) byte generator and its alias table ----------------------------------------
@pytest.mark.parametrize("q", [0.5, 1 / (math.e + 1), 0.01, 1 / (math.exp(50) + 1)])
def test_alias_table_reproduces_the_16_bit_product_pmf(q):
    f8, frac, alias = _bernoulli_tables(q)
    threshold = (f8 + frac) / 256.0
    n = threshold.size
    # reconstruct Pr[s] = threshold[s]/n + Σ_{j: alias[j] = s} (1 − threshold[j])/n with exact sums
    donated: dict[int, list[float]] = {}
    for j in np.flatnonzero(threshold < 1):
        donated.setdefault(int(alias[j]), []).append((1 - threshold[j]) / n)
    pmf = threshold / n
    for s, parts in donated.items():
        pmf[s] = math.fsum([pmf[s], *parts])
    w = np.bitwise_count(np.arange(n, dtype=np.uint16)).astype(np.int64)
    ref = np.array([float(mpmath.mpf(q) ** int(i) * (1 - mpmath.mpf(q)) ** (16 - int(i)))
                    for i in range(17)])[w]
    np.testing.assert_allclose(pmf, ref, rtol=0, atol=1e-15)


def test_bernoulli_bytes_symbol_frequencies_chi_square():
    """All 65536 16-bit symbols (including the tie-refinement path) at their exact frequencies."""
    q = 0.3
    nsym = 1 << 22
    sym = _bernoulli_bytes(q, 2 * nsym, np.random.default_rng(7)).view(np.uint16)
    obs = np.bincount(sym, minlength=1 << 16)
    w = np.bitwise_count(np.arange(1 << 16, dtype=np.uint16)).astype(np.float64)
    expected = nsym * q ** w * (1 - q) ** (16 - w)
    # pool cells by popcount class as well (a sharper test of the marginal law)
    obs_w = np.bincount(w.astype(int), weights=obs, minlength=17)
    exp_w = nsym * stats.binom.pmf(np.arange(17), 16, q)
    keep = exp_w > 5
    assert stats.chisquare(obs_w[keep], exp_w[keep] * obs_w[keep].sum() / exp_w[keep].sum()).pvalue > 1e-6
    big = expected > 5  # chi-square on the cells with enough mass, rest pooled
    o = np.append(obs[big], obs[~big].sum())
    e = np.append(expected[big], expected[~big].sum())
    assert stats.chisquare(o, e * o.sum() / e.sum()).pvalue > 1e-6


def test_bernoulli_bytes_bit_positions_are_iid():
    q, m = 0.2, 40000
    bits = np.unpackbits(_bernoulli_bytes(q, m * 3, np.random.default_rng(3)).reshape(m, 3), axis=1)
    se = math.sqrt(q * (1 - q) / m)
    assert np.all(np.abs(bits.mean(axis=0) - q) < 5 * se)
    # pairwise independence of neighbouring bits (also across the 16-bit symbol boundary)
    both = (bits[:, :-1] & bits[:, 1:]).mean(axis=0)
    assert np.all(np.abs(both - q * q) < 5 * math.sqrt(q * q * (1 - q * q) / m))


# -- aggregation of packed reports ---------------------------------------------------------------
@pytest.mark.parametrize("m,d", [(1, 3), (31, 8), (33, 13), (1000, 100), (4097, 1030)])
def test_column_counts_match_unpackbits(m, d, monkeypatch):
    rng = np.random.default_rng(m)
    packed = rng.integers(0, 256, size=(m, (d + 7) // 8), dtype=np.uint8)  # padding bits set: ignored
    ref = np.unpackbits(packed, axis=1, count=d).sum(axis=0)
    np.testing.assert_array_equal(column_counts(packed, d), ref)
    monkeypatch.setattr(unary_mod, "_AGG_BLOCK_BYTES", 300)  # force several row blocks
    np.testing.assert_array_equal(column_counts(packed, d), ref)
    o = OUE(1.0, d)
    np.testing.assert_array_equal(o.aggregate(packed), ref)


def test_unary_reports_are_packed_with_zero_padding():
    o = SUE(2.0, 13)
    r = o.perturb(np.arange(13).repeat(50), 0)
    assert r.dtype == np.uint8 and r.shape == (650, 2)
    assert np.all(r[:, 1] & 0b111 == 0)


# -- real perturbation against the exact output distribution -------------------------------------
@pytest.mark.parametrize("cls,kw", [(OUE, {"d": 4}), (SUE, {"d": 4}), (OUE, {"d": 10}),
                                    (SS, {"d": 4, "k": 1}), (SS, {"d": 4, "k": 2}),
                                    (SS, {"d": 4, "k": 3}), (SS, {"d": 6, "k": 2}),
                                    (SS, {"d": 6, "k": 5})])
def test_perturb_matches_output_distribution(cls, kw):
    o = cls(epsilon=1.2, **kw)
    P = o.output_distribution()
    N = 60000 if o.d <= 6 else 150000
    rng = np.random.default_rng(2024)
    for v in sorted({0, 1, o.d - 1}):
        cols = _columns(o, o.perturb(np.full(N, v), rng))
        obs = np.bincount(cols, minlength=P.shape[1])
        exp = N * P[v]
        assert np.all(np.abs(obs - exp) <= 5 * np.sqrt(exp * (1 - P[v])) + 1), (o, v)  # 5 sigma per cell
        assert stats.chisquare(obs, exp).pvalue > 1e-6, (o, v)


def test_ss_reports_are_k_distinct_values_in_range_also_for_large_k():
    for k in (1, 7, 25, 43, 49):
        o = SS(0.5, 50, k=k)
        r = o.perturb(np.random.default_rng(k).integers(0, 50, 3000), k)
        assert r.shape == (3000, k) and r.min() >= 0 and r.max() < 50
        s = np.sort(r, axis=1)
        assert np.all(s[:, 1:] != s[:, :-1])
        assert o.aggregate(r).sum() == 3000 * k


# -- unbiasedness, Eq. 2 variance, fast path vs real path ----------------------------------------
def _population(d, n):
    w = 1.0 / np.arange(1, d + 1) ** 1.2
    tc = np.floor(n * w / w.sum()).astype(np.int64)
    tc[-1] = 0
    tc[0] += n - tc.sum()
    return tc


@pytest.mark.parametrize("make", [lambda: OUE(1.0, 8), lambda: SUE(1.0, 8), lambda: SS(1.0, 8),
                                  lambda: SS(2.0, 9, k=6)], ids=["oue", "sue", "ss", "ss-k6"])
def test_real_path_unbiased_eq2_variance_and_fast_path_agrees(make):
    """R = 500 replications. Means: within 5 standard errors. Variances: the sample variance of R
    draws has relative standard error ≈ sqrt(2/(R−1)) = 0.063 (up to the small excess kurtosis of a
    binomial sum), so a relative error < 0.35 (≈ 5.5 s.e.) is required."""
    o = make()
    n, R = 2000, 500
    tc = _population(o.d, n)
    f = tc / n
    gen = np.random.default_rng(99)
    real = np.array([o.simulate(tc, gen, exact=True).counts for _ in range(R)])
    fast = np.array([o.simulate(tc, gen, exact=False).counts for _ in range(R)])
    p, q = o.p, o.q
    mean_c = tc * p + (n - tc) * q
    var_c = tc * p * (1 - p) + (n - tc) * q * (1 - q)
    for counts in (real, fast):
        assert np.all(np.abs(counts.mean(axis=0) - mean_c) < 5 * np.sqrt(var_c / R))
        assert np.all(np.abs(counts.var(axis=0, ddof=1) / var_c - 1) < 0.35)
    # the same through f̃ and Estimate.variance (Eq. 2)
    ft = (real / n - q) / (p - q)
    var_f = o.variance(f, n)
    assert np.all(np.abs(ft.mean(axis=0) - f) < 5 * np.sqrt(var_f / R))
    assert np.all(np.abs(ft.var(axis=0, ddof=1) / var_f - 1) < 0.35)
    # real vs fast directly
    assert np.all(np.abs(real.mean(axis=0) - fast.mean(axis=0)) < 5 * np.sqrt(2 * var_c / R))
    assert o.sample_counts_exact
    if isinstance(o, SS):
        # every report has k elements: Σc = n·k exactly (so Σ f̃ = 1) on both paths
        assert np.all(real.sum(axis=1) == n * o.k) and np.all(fast.sum(axis=1) == n * o.k)
        np.testing.assert_allclose(ft.sum(axis=1), 1.0, rtol=0, atol=1e-9)
    else:
        # independent bits: the real counts of two values are uncorrelated (|r| < 5/sqrt(R))
        r = np.corrcoef(real[:, 0], real[:, 1])[0, 1]
        assert abs(r) < 5 / math.sqrt(R)


# -- reproducibility and bad input ---------------------------------------------------------------
@pytest.mark.parametrize("make", [lambda: OUE(1.0, 20), lambda: SUE(0.5, 9), lambda: SS(1.0, 20),
                                  lambda: SS(1.0, 20, k=15)])
def test_same_seed_same_arrays(make):
    o = make()
    vals = np.arange(o.d).repeat(30)
    np.testing.assert_array_equal(o.perturb(vals, 5), o.perturb(vals, 5))
    assert not np.array_equal(o.perturb(vals, 5), o.perturb(vals, 6))
    tc = np.bincount(vals, minlength=o.d)
    for exact in (True, False):
        a, b = o.simulate(tc, 11, exact=exact), o.simulate(tc, 11, exact=exact)
        np.testing.assert_array_equal(a.counts, b.counts)
        np.testing.assert_array_equal(a.f_tilde, b.f_tilde)


@pytest.mark.parametrize("cls", [OUE, SUE, SS])
def test_bad_values_and_epsilon_are_named(cls):
    o = cls(1.0, 6)
    for bad in ([0, 6], [-1], [0.5, 1], [np.nan]):
        with pytest.raises(ValueError, match="values"):
            o.perturb(np.array(bad), 0)
    for eps in (0, -1.0, float("inf")):
        with pytest.raises(ValueError, match="epsilon"):
            cls(eps, 6)
    with pytest.raises(ValueError, match="true_counts"):
        o.simulate([1, 2, 3], 0)


def test_ss_bad_k_and_bad_reports():
    for k in (0, 6, 7, -1, 2.5, "2", True):
        with pytest.raises(ValueError, match="k must be an integer"):
            SS(1.0, 6, k=k)
    assert SS(1.0, 6, k=2.0).k == 2
    assert oracles.get("ss", epsilon=1.0, d=6, k=3).k == 3
    o = SS(1.0, 6, k=3)
    with pytest.raises(ValueError, match="reports"):
        o.aggregate(np.array([[0, 1]]))
    with pytest.raises(ValueError, match="reports"):
        o.aggregate(np.array([[0, 1, 6]]))
    with pytest.raises(ValueError, match="distinct"):
        o.aggregate(np.array([[0, 1, 2], [3, 3, 4]]))


def test_unary_bad_reports():
    o = OUE(1.0, 20)
    with pytest.raises(TypeError, match="reports"):
        o.aggregate(np.zeros((3, 3), dtype=np.int64))
    with pytest.raises(ValueError, match="reports"):
        o.aggregate(np.zeros((3, 2), dtype=np.uint8))
    with pytest.raises(ValueError, match="reports"):
        o.aggregate(np.zeros((0, 3), dtype=np.uint8))


def test_registry_builds_these_oracles():
    assert isinstance(oracles.get("OUE", epsilon=1.0, d=5), OUE)
    assert isinstance(oracles.get("sue", epsilon=1.0, d=5), SUE)
    assert repr(oracles.get("ss", epsilon=1.0, d=10)) == "SS(epsilon=1, d=10, k=3)"
