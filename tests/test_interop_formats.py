"""Peer report readers (ldpopt.interop) without the peer packages: reports built in each peer's
documented format by encoders that follow the peer's client code (tests/_peer_encoders.py).

Counts are checked against an independent per-report count (plain-Python XXH32 for local hashing,
a loop over reports); estimates are checked for unbiasedness over repetitions against the oracle's
exact variance (Eq. 2); post-processing runs on top. The same checks with the real packages are in
tests/test_interop_peers.py."""

from __future__ import annotations

import zlib

import numpy as np
import pytest

import _peer_encoders as enc
from ldpopt import methods
from ldpopt.aggregate import Partial
from ldpopt.interop import multi_freq_ldpy as M
from ldpopt.interop import pure_ldp as P
from ldpopt.interop._xxh32 import hash_values, xxh32_short

D, EPS = 9, 1.0


def test_xxh32_matches_the_specification_vectors_and_a_scalar_reference():
    # published test vectors of XXH32 (xxHash repository, seed 0)
    assert int(xxh32_short(np.zeros(0, np.uint8), np.uint32(0))) == 0x02CC5D05
    assert int(xxh32_short(np.frombuffer(b"abc", np.uint8), np.uint32(0))) == 0x32D153FF
    assert enc.xxh32_ref(b"", 0) == 0x02CC5D05 and enc.xxh32_ref(b"abc", 0) == 0x32D153FF
    rng = np.random.default_rng(3)
    seeds = rng.integers(0, 2**63 - 1, 60, dtype=np.int64)
    values = np.array([0, 7, 10, 99, 1000, 123456, 10**9, 10**14 + 3])
    got = hash_values(seeds, values, 2**31 - 1)
    want = [[enc.xxh32_ref(str(int(v)).encode(), int(s)) % (2**31 - 1) for v in values] for s in seeds]
    assert np.array_equal(got, want)


def _support_loop(reports, d, g):
    """Independent LH count: for each report and each value, the scalar reference hash."""
    c = np.zeros(d, np.int64)
    for y, s in reports:
        for v in range(d):
            c[v] += enc.xxh32_ref(str(v).encode(), int(s)) % g == y
    return c


@pytest.mark.parametrize("lib", ["pure-ldp", "multi-freq-ldpy"])
def test_lh_counts_equal_an_independent_count(lib):
    rng = np.random.default_rng(11)
    v = rng.integers(0, D, 300)
    g = 2 if lib == "pure-ldp" else int(round(np.exp(EPS))) + 1
    reps = enc.lh(v, EPS, D, g, rng)
    part = P.read_lh(reps, EPS, D) if lib == "pure-ldp" else M.read_lh([tuple(r) for r in reps], EPS, D)
    assert part.params == {"g": g} and part.n == 300
    assert np.array_equal(part.counts, _support_loop(reps, D, g))


def test_flh_counts_equal_an_independent_count():
    rng = np.random.default_rng(12)
    reps = enc.lh(rng.integers(0, D, 300), EPS, D, 3, rng, seed_high=20)
    part = P.read_flh(reps, EPS, D, k=20, g=3)
    assert np.array_equal(part.counts, _support_loop(reps, D, 3))
    with pytest.raises(ValueError, match="k = 10"):
        P.read_flh(reps, EPS, D, k=10, g=3)


def test_simple_formats_count_exactly():
    rng = np.random.default_rng(13)
    v = rng.integers(0, D, 400)
    de = enc.grr(v, EPS, D, rng)
    assert np.array_equal(P.read_de(list(de), EPS, D).counts, [np.sum(de == u) for u in range(D)])
    bits = enc.ue(v, EPS, D, rng, oue=True)
    assert np.array_equal(M.read_ue(list(bits), EPS, D).counts, bits.sum(axis=0).astype(int))
    assert P.read_ue(bits, EPS, D).oracle == "sue" and M.read_ue(bits, EPS, D).oracle == "oue"
    ssr = enc.ss(v, EPS, D, rng)
    assert np.array_equal(M.read_ss(list(ssr), EPS, D).counts, [np.sum(ssr == u) for u in range(D)])
    y = enc.hr_pure_ldp(v, 0.5, D, rng)
    K = 16
    ref = [sum(bin((u + 1) & int(t)).count("1") % 2 == 0 for t in y) for u in range(D)]
    assert K == P.read_hr(y, 0.5, D).build_oracle().K and np.array_equal(P.read_hr(y, 0.5, D).counts, ref)


def test_bad_reports_refused_naming_the_problem():
    with pytest.raises(ValueError, match=r"\[0, 9\)"):
        P.read_de([0, 9], EPS, D)
    with pytest.raises(ValueError, match="shape"):
        M.read_ue([[0, 1]], EPS, D)
    with pytest.raises(ValueError, match="g = 2"):
        P.read_lh([(2, 5)], EPS, D)
    with pytest.raises(ValueError, match="distinct"):
        M.read_ss([[1, 1]], 1.5, D)
    with pytest.raises(ValueError, match="epsilon"):
        P.read_hr([1], 2.0, D)
    with pytest.raises(ValueError, match="whole numbers"):
        M.read_ue([[0.5] * D], EPS, D)


# one encoder + reader per (library, oracle); the hash of the encoders' own values uses the
# vectorised hash (its equality with the scalar reference is tested above)
def _cases():
    hv = lambda s, v, g: hash_values(s, np.arange(D), g)[np.arange(len(v)), v]  # noqa: E731
    g_opt = int(round(np.exp(EPS))) + 1
    return {
        ("pure-ldp", "DE/GRR"): (lambda v, r: enc.grr(v, EPS, D, r), lambda x: P.read_de(x, EPS, D)),
        ("pure-ldp", "UE/SUE"): (lambda v, r: enc.ue(v, EPS, D, r, False), lambda x: P.read_ue(x, EPS, D)),
        ("pure-ldp", "UE/OUE"): (lambda v, r: enc.ue(v, EPS, D, r, True), lambda x: P.read_ue(x, EPS, D, True)),
        ("pure-ldp", "LH/BLH"): (lambda v, r: enc.lh(v, EPS, D, 2, r, hasher=hv), lambda x: P.read_lh(x, EPS, D)),
        ("pure-ldp", "LH/OLH"): (lambda v, r: enc.lh(v, EPS, D, g_opt, r, hasher=hv),
                                 lambda x: P.read_lh(x, EPS, D, use_olh=True)),
        ("pure-ldp", "HR"): (lambda v, r: enc.hr_pure_ldp(v, EPS, D, r), lambda x: P.read_hr(x, EPS, D)),
        ("multi-freq-ldpy", "GRR"): (lambda v, r: enc.grr(v, EPS, D, r), lambda x: M.read_grr(x, EPS, D)),
        ("multi-freq-ldpy", "UE/OUE"): (lambda v, r: enc.ue(v, EPS, D, r, True), lambda x: M.read_ue(x, EPS, D)),
        ("multi-freq-ldpy", "LH/OLH"): (lambda v, r: enc.lh(v, EPS, D, g_opt, r, hasher=hv),
                                        lambda x: M.read_lh(x, EPS, D)),
        ("multi-freq-ldpy", "SS"): (lambda v, r: enc.ss(v, EPS, D, r), lambda x: M.read_ss(x, EPS, D)),
    }


CASES = _cases()
TRUE = np.array([30, 0, 5, 10, 20, 15, 0, 10, 10])  # n = 100 per repetition


@pytest.mark.parametrize("case", list(CASES), ids=lambda c: f"{c[0]}:{c[1]}")
def test_estimate_unbiased_over_repetitions_and_postprocessing_runs(case):
    encode, read = CASES[case]
    rng = np.random.default_rng(zlib.crc32(repr(case).encode()))  # hash() of a str differs per process
    R = 300
    v = np.repeat(np.arange(D), TRUE)
    parts = [read(encode(v, rng)) for _ in range(R)]
    f = TRUE / TRUE.sum()
    est = np.array([p.finalize().f_tilde for p in parts])
    var = parts[0].build_oracle().variance(f, TRUE.sum())  # exact Var of f̃ (Eq. 2)
    z = (est.mean(axis=0) - f) / np.sqrt(var / R)
    assert np.max(np.abs(z)) < 4.5, z
    # the merged partial is the estimate from all R·n reports
    total = Partial.merge_all(parts)
    assert total.n == R * TRUE.sum()
    assert np.allclose(total.finalize().f_tilde, est.mean(axis=0), atol=1e-12)
    post = methods.get("norm-sub").func(parts[0].finalize())
    assert np.all(post >= 0) and abs(post.sum() - 1) < 1e-9


def test_flh_pool_bias_matches_a_simulation_of_the_pool_client():
    # FastLH with a tiny pool (k = 3 seeds) is visibly biased; flh_pool_bias predicts E[f̃ | pool]
    d, k, g, n = 12, 3, 3, 400_000
    rng = np.random.default_rng(5)
    f = rng.dirichlet(np.ones(d))
    H = hash_values(np.arange(k), np.arange(d), g)
    reps = enc.lh(rng.choice(d, n, p=f), EPS, d, g, rng, seed_high=k, hasher=lambda s, v, gg: H[s, v])
    part = P.read_flh(reps, EPS, d, k=k, g=g)
    est = part.finalize().f_tilde
    bias = P.flh_pool_bias(f, EPS, k, g=g)
    p, q = part.build_oracle().p, 1.0 / g
    # the slow, obviously correct route: the d×d collision-rate matrix ρ_uv, summed over u ≠ v
    rho = (H[:, :, None] == H[:, None, :]).mean(axis=0)
    off = rho - q
    np.fill_diagonal(off, 0.0)
    ps = (1 - p) / (g - 1)
    assert np.allclose(bias, (p - ps) / (p - q) * off @ f, rtol=0, atol=1e-15)
    pi = (f + bias) * (p - q) + q  # E[c_v/n] implied by the predicted mean
    sd = np.sqrt(pi * (1 - pi) / n) / (p - q)
    assert np.max(np.abs(est - f - bias) / sd) < 4.5  # the prediction holds at every value
    assert np.max(np.abs(bias) / sd) > 10 and np.max(np.abs(est - f) / sd) > 8  # and the bias is real
    with pytest.raises(ValueError, match="k must be an integer"):
        P.flh_pool_bias(f, EPS, 0, g=g)
    with pytest.raises(ValueError, match="probability vector"):
        P.flh_pool_bias(f * 2, EPS, k, g=g)
