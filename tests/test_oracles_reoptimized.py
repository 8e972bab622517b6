"""RUE, RLH and RWS (Fang, Chen & Liu, USENIX Security 2025): their parameters against a numerical
minimisation of the mean MSE, RWS's law against Subset Selection's by enumeration of its reports,
privacy tight at ε, the seed → subset map uniform, and bad input named. (``check_oracle`` on each runs
in tests/test_oracle_conformance.py with every registered oracle; the authors' code in
benchmarks/bench_rws_conformance.py.)"""

from __future__ import annotations

import math
from itertools import combinations

import numpy as np
import pytest
from scipy.optimize import minimize_scalar
from scipy.stats import chi2

from ldpopt import oracles
from ldpopt.oracles.reoptimized import mean_mse, rlh_g
from ldpopt.oracles.wheel import rws_k

GRID = [(eps, d) for eps in (0.25, 0.5, 1.0, 2.0, 3.0, 4.0, 6.0) for d in (2, 3, 5, 8, 32, 128, 1000)]


def test_mean_mse_is_the_mean_of_the_oracles_variance_over_the_domain():
    f = np.random.default_rng(0).dirichlet(np.ones(9))
    for o in (oracles.OUE(1.0, 9), oracles.RUE(2.0, 9), oracles.RWS(1.5, 9)):
        assert math.isclose(float(np.mean(o.variance(f, 1))), float(mean_mse(o.p, o.q, 9)), rel_tol=1e-12)


@pytest.mark.parametrize("eps,d", GRID)
def test_rue_is_the_minimiser_of_the_mean_mse_on_the_tight_unary_curve(eps, d):
    # the unary encodings with p(1 − q)/((1 − p)q) = e^ε: q = p/(p + (1 − p)e^ε), p ∈ (q, 1)
    def m(p):
        q = p / (p + (1 - p) * math.exp(eps))
        return float(mean_mse(p, q, d))

    best = minimize_scalar(m, bounds=(1e-9, 1 - 1e-9), method="bounded", options={"xatol": 1e-12})
    rue = oracles.RUE(eps, d)
    assert abs(rue.p - best.x) < 1e-5
    assert m(rue.p) <= best.fun * (1 + 1e-12)
    assert math.isclose(rue.p * (1 - rue.q) / ((1 - rue.p) * rue.q), math.exp(eps), rel_tol=1e-12)


@pytest.mark.parametrize("eps,d", GRID)
def test_rlh_g_and_rws_k_are_the_integer_minimisers(eps, d):
    def m_g(g):
        return float(mean_mse(math.exp(eps) / (math.exp(eps) + g - 1), 1 / g, d))

    g_best = min(range(2, 2000), key=m_g)
    assert m_g(rlh_g(eps, d)) <= m_g(g_best) * (1 + 1e-12)
    assert oracles.RLH(eps, d).g == rlh_g(eps, d) and oracles.RLH(eps, d).q == 1 / rlh_g(eps, d)

    def m_k(k):
        ss = oracles.SS(eps, d, k=k)
        return float(mean_mse(ss.p, ss.q, d))

    ks = range(1, d)
    k_best = min(ks, key=m_k)
    assert m_k(rws_k(eps, d)) <= m_k(k_best) * (1 + 1e-12)


@pytest.mark.parametrize("eps,d,k", [(1.0, 5, 1), (1.0, 6, 2), (0.5, 6, 3), (2.0, 7, 3)])
def test_rws_report_law_is_subset_selection_and_tight_at_epsilon(eps, d, k):
    rws, ss = oracles.RWS(eps, d, k=k), oracles.SS(eps, d, k=k)
    P, S = rws.output_distribution(), rws.output_supports()
    assert P.shape == (d, math.comb(d, k) * d) and np.allclose(P.sum(axis=1), 1.0, atol=1e-12)
    # group the reports (S, y) by their support set: the law of the support is SS(k)'s
    index = {frozenset(c): i for i, c in enumerate(combinations(range(d), k))}
    cols = np.array([index[frozenset(np.flatnonzero(S[:, j]).tolist())] for j in range(S.shape[1])])
    law = np.stack([np.bincount(cols, weights=P[v], minlength=len(index)) for v in range(d)])
    assert np.allclose(law, ss.output_distribution(), rtol=1e-12, atol=1e-15)
    ratio = np.log(P.max(axis=0) / P.min(axis=0)).max()
    assert math.isclose(ratio, eps, rel_tol=1e-12)  # tight
    assert math.isclose(rws.p, ss.p) and math.isclose(rws.q, ss.q)


@pytest.mark.parametrize("name", ["rue", "rlh"])
def test_reoptimized_oracles_are_tight_at_epsilon(name):
    P = np.asarray(oracles.get(name, 1.3, 5).output_distribution())
    assert math.isclose(float(np.log(P.max(axis=0) / P.min(axis=0)).max()), 1.3, rel_tol=1e-9)


def test_rws_seed_names_a_uniform_subset_and_the_spin_lands_inside_w_p_p():
    rws = oracles.RWS(1.0, 6, k=2)
    gen = np.random.default_rng(3)
    m = 30_000
    reports = rws.perturb(np.zeros(m, dtype=np.int64), gen)
    sub = np.sort(rws.subsets(reports[:, 0]), axis=1)
    code = sub[:, 0] * 6 + sub[:, 1]
    freq = np.bincount(code, minlength=36)[[a * 6 + b for a, b in combinations(range(6), 2)]]
    assert freq.sum() == m
    x2 = float(((freq - m / 15) ** 2 / (m / 15)).sum())
    assert chi2.sf(x2, 14) > 1e-4
    inside = rws.support_matrix(reports)[:, 0].mean()
    assert abs(inside - rws.p) < 4.5 * math.sqrt(rws.p * (1 - rws.p) / m)


def test_rws_aggregate_matches_its_support_matrix_on_many_reports():
    rws = oracles.RWS(2.0, 40)
    reports = rws.perturb(np.random.default_rng(1).integers(0, 40, 5000), 2)
    assert np.array_equal(rws.aggregate(reports, device="numpy"), rws.support_matrix(reports).sum(axis=0))
    assert int(rws.aggregate(reports).sum()) == 5000 * rws.k


@pytest.mark.parametrize("call,message", [
    (lambda: oracles.RWS(1.0, 8, k=0), "k must be an integer with 1 <= k < d = 8"),
    (lambda: oracles.RWS(1.0, 8, k=2.5), "k must be an integer"),
    (lambda: oracles.RWS(1.0, 8).aggregate(np.zeros((3, 3), dtype=np.int64)), "reports must be a non-empty (n, 2)"),
    (lambda: oracles.RWS(1.0, 8).aggregate(np.array([[1, 8]])), "spin must lie in [0, 8)"),
    (lambda: oracles.RLH(1.0, 8, g=1), "g must be"),
])
def test_bad_input_is_named(call, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)").replace("[", r"\[")):
        call()


# -- RWS with a bounded seed pool ----------------------------------------------------------------------
def test_pooled_rws_aggregates_through_its_table_and_shards_merge():
    o = oracles.get("rws-pool", 1.5, 37, pool=8, pool_seed=3)
    gen = np.random.default_rng(0)
    r = o.perturb(gen.integers(0, 37, 5000), gen)
    assert np.array_equal(o.aggregate(r), o.support_matrix(r).sum(axis=0))  # the supports, report by report
    a, b = r[:1234], r[1234:]
    assert np.array_equal(o.pool_table(a) + o.pool_table(b), o.pool_table(r))
    assert np.array_equal(o.aggregate(a) + o.aggregate(b), o.aggregate(r))
    assert set(np.unique(r[:, 0])) <= set(o.pool_keys.tolist())
    with pytest.raises(ValueError, match="pool"):
        o.aggregate(oracles.get("rws", 1.5, 37).perturb([1, 2], 0))  # per-user seeds are not pool keys
    for bad in ({"pool": 0}, {"pool": 1 << 20}, {"pool_seed": -1}):
        with pytest.raises(ValueError, match="pool"):
            oracles.get("rws-pool", 1.5, 37, **bad)


def test_pooled_rws_bias_given_the_pool_is_exact_and_averages_out_over_lags():
    o = oracles.get("rws-pool", 1.0, 7, k=2, pool=3, pool_seed=1)
    pi = o.support_probabilities()
    # Σ_δ |S ∩ (S + δ)| = k² for every S, so the lags δ ≠ 0 average to k(k − 1)/(d − 1): RWS's q
    assert pi[0] == pytest.approx(o.p, abs=1e-12) and pi[1:].mean() == pytest.approx(o.q, abs=1e-12)
    # by enumeration of the pool's outputs (j, y)
    support = o.output_distribution() @ o.output_supports().T.astype(float)  # (x, v)
    assert np.allclose(support, pi[(np.arange(7)[None, :] - np.arange(7)[:, None]) % 7], atol=1e-12)
    tc = np.array([900, 500, 300, 150, 100, 50, 0])
    f, n, reps = tc / tc.sum(), int(tc.sum()), 600
    gen = np.random.default_rng(5)
    est = np.array([o.estimate(o.sample_counts(tc, gen), n).f_tilde for _ in range(reps)])
    bias = o.bias_given_hashes(f)
    assert np.abs(bias).max() > 0.02  # a pool of 3 is biased, and the test can see it
    se = np.sqrt(o.variance_given_hashes(f, n) / reps)
    assert np.all(np.abs(est.mean(axis=0) - f - bias) < 5 * se)
