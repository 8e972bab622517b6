"""Modular Subset Selection (ldpopt.oracles.modular): the conformance suite, unbiasedness by
enumeration on generated moduli, the LSMR decoder against the weighted normal equations, refusals."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ldpopt import oracles, testing
from ldpopt.oracles.channel import Channel
from ldpopt.oracles.modular import MSS, default_moduli, mss_decode


def _coprime_moduli(gen, d):
    """Random pairwise-coprime moduli with Σ(m − 1) + 1 >= d."""
    while True:
        ms: list[int] = []
        while sum(m - 1 for m in ms) + 1 < d or len(ms) < 2:
            m = int(gen.integers(2, d + 2))
            if all(math.gcd(m, x) == 1 for x in ms):
                ms.append(m)
        return tuple(ms)


def test_mss_passes_conformance():
    report = testing.check_oracle(MSS(1.0, 8, moduli=(3, 4, 5)), reps=400)
    assert {"interface", "epsilon", "joint_law", "estimate", "channel"} <= set(report.passed)


@pytest.mark.parametrize("seed", range(6))
def test_unbiased_and_epsilon_ldp_by_enumeration(seed):
    gen = np.random.default_rng(seed)
    d = int(gen.integers(3, 9))
    eps = float(gen.uniform(0.3, 4))
    o = MSS(eps, d, moduli=_coprime_moduli(gen, d))
    P, S = o.output_distribution(), o.output_supports()
    # E[soft support of v | x] = p if v = x else q: the estimate (c/n − q)/(p − q) is unbiased
    assert np.allclose(P @ S.T, np.where(np.eye(d, dtype=bool), o.p, o.q), atol=1e-12)
    assert Channel(P.T).epsilon <= eps * (1 + 1e-12)
    # the law of a report: index uniform, then Subset Selection on the residue
    j, _ = o.perturb(np.repeat(np.arange(d), 2000), gen)
    assert abs(np.bincount(j, minlength=o.ell) / j.size - 1 / o.ell).max() < 0.02


@pytest.mark.parametrize("seed", range(3))
def test_lsmr_decoder_is_the_weighted_least_squares(seed):
    """mss_decode against the normal equations solved densely, on generated counts."""
    gen = np.random.default_rng(10 + seed)
    d = int(gen.integers(5, 30))
    eps = float(gen.uniform(0.5, 3))
    ms = _coprime_moduli(gen, d)
    nb = gen.integers(50, 500, len(ms))
    C = [gen.integers(0, n, m).astype(float) for n, m in zip(nb, ms, strict=True)]
    f, _ = mss_decode(C, nb, ms, eps, d)
    rows, g, w = [], [], []
    for m, n, c in zip(ms, nb, C, strict=True):
        ss = oracles.SS(eps, m)
        A = (np.arange(d)[None, :] % m == np.arange(m)[:, None]).astype(float)
        rows.append(A)
        g.append((c / n - ss.q) / (ss.p - ss.q))
        w.append(np.full(m, n * (ss.p - ss.q) ** 2 / (ss.q * (1 - ss.q))))
    A, g, w = np.vstack(rows), np.concatenate(g), np.concatenate(w)
    want = np.linalg.solve(A.T @ (w[:, None] * A), A.T @ (w * g))
    assert np.allclose(f, want, rtol=1e-7, atol=1e-9)


def test_default_moduli_are_coprime_and_identify():
    for d in (2, 3, 10, 100, 1000):
        ms = default_moduli(d)
        assert all(math.gcd(a, b) == 1 for i, a in enumerate(ms) for b in ms[i + 1:])
        assert sum(m - 1 for m in ms) + 1 >= d
    MSS(1.0, 40)  # builds: the default moduli identify every frequency


def test_mss_refuses_bad_input():
    with pytest.raises(ValueError, match="pairwise coprime"):
        MSS(1.0, 10, moduli=(4, 6, 7))
    with pytest.raises(ValueError, match="identify every frequency"):
        MSS(1.0, 10, moduli=(2, 3))
    with pytest.raises(ValueError, match="d must be <="):
        MSS(1.0, 5000)
    with pytest.raises(ValueError, match="num must be"):
        default_moduli(10, 1)
    o = MSS(1.0, 10, moduli=(3, 4, 5))
    with pytest.raises(ValueError, match="reports must be"):
        o.aggregate(np.array([1, 2]))
    with pytest.raises(ValueError, match="values must be"):
        o.perturb([10], rng=0)


@pytest.mark.parametrize("seed", range(4))
def test_exact_covariance_against_the_enumerated_law(seed):
    """The reports' moments (Subset Selection's pair probabilities, no enumeration) against the covariance
    of the support counts enumerated over every output (jointlaw.count_moments), on generated moduli."""
    from ldpopt.oracles.jointlaw import count_moments

    gen = np.random.default_rng(seed)
    d = int(gen.integers(3, 9))
    o = MSS(float(gen.uniform(0.5, 3.0)), d, moduli=_coprime_moduli(gen, d))
    tc = gen.integers(0, 40, d)
    tc[0] += 1
    n = int(tc.sum())
    _, cov_c = count_moments(o, tc)
    want = cov_c / (n * (o.p - o.q)) ** 2
    cov = o.count_covariance(n, d)
    assert cov.pair is None and np.allclose(cov.matrix(tc / n), want, rtol=1e-7, atol=1e-13)
    assert np.allclose(o.variance(tc / n, n), np.diag(want), rtol=1e-7, atol=1e-13)
    Wq = gen.normal(size=(3, d))
    assert np.allclose(cov.moments.query_moments(Wq) @ (tc / n) - (Wq**2) @ (tc / n),
                       n * np.einsum("kd,de,ke->k", Wq, want, Wq), rtol=1e-7, atol=1e-12)


def test_variance_against_the_real_client():
    """R runs of the real client: each f̂_v's sample variance against the stated one (a chi-square band),
    and the estimate carries the oracle as its noise source (σ_v², intervals)."""
    o = MSS(1.0, 10, moduli=(3, 4, 5))
    tc = np.array([300, 200, 150, 100, 80, 60, 50, 30, 20, 10])
    n, R = int(tc.sum()), 300
    gen = np.random.default_rng(4)
    values = np.repeat(np.arange(10), tc)
    F = np.stack([o.estimate(o.aggregate(o.perturb(values, gen)), n).f_tilde for _ in range(R)])
    ratio = F.var(axis=0, ddof=1) / o.variance(tc / n, n)
    assert np.all(np.abs(ratio - 1) < 4 * math.sqrt(2 / (R - 1))), ratio
    est = o.simulate(tc, rng=0)
    assert est.noise is o and np.allclose(est.sigma2_v, o.variance(np.clip(est.f_tilde, 0, 1), n))
