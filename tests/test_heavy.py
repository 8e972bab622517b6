"""ldpopt.heavy: string encoding, the generic round's joint law (real path and fast path against the
enumerated law of ldpopt.oracles.jointlaw), PEM / TreeHist / SFP on planted heavy hitters, argument
errors, and the prefix levels made consistent (ldpopt's tree pass against cvxpy as referee)."""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest

from ldpopt import heavy, oracles
from ldpopt.heavy.consistency import consistent, level_tree
from ldpopt.heavy.pem import extend, pem_lengths
from ldpopt.heavy.rounds import run_round, split_users
from ldpopt.heavy.sfp import fragment_values, word_hash
from ldpopt.oracles.jointlaw import count_moments
from test_oracles_joint_law import _cov_z, _mean_z


def test_encode_decode_and_prefix_order():
    words = ["google", "ebay", "yahoo.com", b"a\xff"]
    codes = heavy.encode(words, 6)
    assert heavy.decode(codes, 6) == ["google", "ebay  ", "yahoo.", "a\\xff    "]
    assert codes[0] == int.from_bytes(b"google", "big")
    # numeric order of codes = byte order of the padded strings; a prefix is a shift
    assert list(np.argsort(codes)) == sorted(range(4), key=lambda i: heavy.decode(codes, 6)[i].encode("latin-1", "replace"))
    from ldpopt.heavy.strings import prefixes
    assert prefixes(codes, 48, 16)[0] == int.from_bytes(b"go", "big")
    with pytest.raises(ValueError, match="nbytes"):
        heavy.encode(["x"], 8)
    with pytest.raises(ValueError, match="pad"):
        heavy.encode(["x"], 2, pad=b"ab")


def _group_round_moments(o, values_idx, counts, g):
    """Exact mean/cov of one group's round counts: each user in the group w.p. 1/g, then the oracle."""
    d = o.d
    mean, cov = np.zeros(d), np.zeros((d, d))
    for x, n_x in zip(values_idx, counts):
        e = np.zeros(d, dtype=np.int64)
        e[x] = 1
        mu, sig = count_moments(o, e)
        second = sig + np.outer(mu, mu)
        mean += n_x * mu / g
        cov += n_x * (second / g - np.outer(mu, mu) / g**2)
    return mean, cov


@pytest.mark.parametrize("name", ["olh", "grr"])
def test_round_counts_joint_law_real_and_fast_paths(name):
    """A round over candidates {1, 4, 6} of 3-bit prefixes plus "other" (d = 4), users split into 2
    groups: the counts of group 0's round on both paths against the exact mixture moments."""
    codes = np.array([2, 3, 8, 9, 12, 13, 15], dtype=np.int64)  # 4-bit strings
    counts = np.array([4, 2, 5, 1, 3, 2, 3])
    cand = np.array([1, 4, 6], dtype=np.int64)
    pre = codes >> 1                      # 3-bit prefixes: 1, 1, 4, 4, 6, 6, 7
    idx = np.array([0, 0, 1, 1, 2, 2, 3])  # 7 is not a candidate: "other"
    o = oracles.get(name, 1.5, 4)
    mean, cov = _group_round_moments(o, idx, counts, 2)
    gen = np.random.default_rng(7)
    reps = 1200
    draws = {}
    for exact in (False, True):
        out = np.empty((reps, 4))
        for r in range(reps):
            split = split_users(counts, 2, gen, exact)
            out[r] = run_round(name, 1.5, cand, False, pre, split[0], gen, exact).counts
        draws[exact] = out
        assert _mean_z(out, mean, cov).max() < 5
        assert _cov_z(out, mean, cov).max() < 5
    # and the two paths against each other (means within 5 joint s.e.)
    se = np.sqrt(2 * np.diag(cov) / reps)
    assert np.all(np.abs(draws[True].mean(0) - draws[False].mean(0)) < 5 * se)


def test_split_users_is_uniform_and_keeps_every_user():
    counts = np.array([1000, 0, 37, 5000])
    for exact in (False, True):
        s = split_users(counts, 5, 3, exact)
        assert s.shape == (5, 4) and np.array_equal(s.sum(0), counts)
        # each group holds ~1/5 of item 3's users: binomial s.e. sqrt(5000·0.16) ≈ 28
        assert np.all(np.abs(s[:, 3] - 1000) < 5 * 28.3)


def test_extend_and_pem_lengths():
    assert list(extend(np.array([3, 1]), 2)) == [4, 5, 6, 7, 12, 13, 14, 15]
    assert pem_lengths(48, 32, 6) == [11, 17, 23, 29, 35, 41, 47, 48]  # γ = 5, g = ⌈43/6⌉ = 8
    assert pem_lengths(48, 64, 6) == [12, 18, 24, 30, 36, 42, 48]
    with pytest.raises(ValueError, match="step_bits"):
        pem_lengths(48, 32, 0)
    with pytest.raises(ValueError, match="start_bits"):
        pem_lengths(16, 4, 4, start_bits=16)


def _planted(seed=0, heavy_n=(6000, 4000, 3000, 2500, 2000), m=24, tail=400, tail_n=30):
    """Five planted heavy strings over a uniform tail of light ones (m-bit codes)."""
    rng = np.random.default_rng(seed)
    codes = rng.choice(1 << m, size=len(heavy_n) + tail, replace=False).astype(np.int64)
    counts = np.r_[np.array(heavy_n), np.full(tail, tail_n)]
    return codes, counts


@pytest.mark.parametrize("exact", [False, True])
def test_protocols_find_planted_heavy_hitters(exact):
    codes, counts = _planted()
    top = heavy.true_top(codes, counts, 5)
    r = heavy.pem(codes, counts, total_bits=24, epsilon=6.0, k=5, step_bits=4, rng=1, exact=exact)
    assert set(r.items) == set(top) and heavy.precision_recall_f1(r.items, top) == (1.0, 1.0, 1.0)
    # estimates within 6 s.e. of the truth (last round: σ of its group)
    f_true = {int(c): w / counts.sum() for c, w in zip(codes, counts)}
    se = np.sqrt(r.levels[-1].sigma2)
    assert all(abs(f - f_true[int(c)]) < 6 * se for c, f in zip(r.items, r.frequencies))
    t = heavy.treehist(codes, counts, total_bits=24, epsilon=8.0, k=5, step_bits=8, rng=2, exact=exact)
    assert set(t.items) == set(top)
    s = heavy.sfp(codes, counts, total_bits=24, epsilon=8.0, k=5, fragment_bits=8, k_fragments=8, rng=3,
                  exact=exact and False)  # SFP's fragment domain is 2^16: the real OLH path is O(n·2^16)
    assert set(s.items) == set(top)


def test_any_oracle_factory_runs_the_rounds():
    codes, counts = _planted(m=16)
    top = heavy.true_top(codes, counts, 5)
    calls = []

    def grr(epsilon, d):
        calls.append(d)
        return oracles.get("grr", epsilon, d)

    r = heavy.pem(codes, counts, total_bits=16, epsilon=8.0, k=5, step_bits=4, oracle=grr, rng=4)
    assert set(r.items) == set(top)
    assert calls == [2 ** 7] + [5 * 16 + 1] * 2 + [5 * 2 + 1]  # γ = 3: 7, 11, 15, 16 bits
    s = heavy.sfp(codes, counts, total_bits=16, epsilon=10.0, k=5, fragment_bits=4, oracle="olh",
                  word_oracle=grr, rng=5)
    assert set(s.items) == set(top)
    with pytest.raises(ValueError, match="oracle"):
        heavy.pem(codes, counts, total_bits=16, epsilon=1.0, k=5, oracle=42, rng=0)
    with pytest.raises(ValueError, match="FrequencyOracle"):
        heavy.pem(codes, counts, total_bits=16, epsilon=1.0, k=5, oracle=lambda e, d: None, rng=0)


def test_sfp_fragments_carry_the_word_hash():
    codes = np.array([0x616263, 0x646566], dtype=np.int64)
    v = fragment_values(codes, 24, 8, 1)
    assert list(v & 0xFF) == [0x62, 0x65]
    assert list(v >> 8) == list(word_hash(codes))
    assert np.all((word_hash(np.arange(10000)) >= 0) & (word_hash(np.arange(10000)) < 256))


def test_argument_errors_name_the_argument():
    codes, counts = _planted(m=16)
    for kw, msg in [({"k": 0}, "k must"), ({"epsilon": -1}, "epsilon"), ({"total_bits": 60}, "total_bits")]:
        args = dict(total_bits=16, epsilon=1.0, k=5, rng=0) | kw
        with pytest.raises(ValueError, match=msg):
            heavy.pem(codes, counts, **args)
    with pytest.raises(ValueError, match="codes must be distinct"):
        heavy.pem(np.array([1, 1]), np.array([3, 4]), total_bits=16, epsilon=1.0, k=1, rng=0)
    with pytest.raises(ValueError, match="codes must lie"):
        heavy.pem(np.array([1 << 20]), np.array([3]), total_bits=16, epsilon=1.0, k=1, rng=0)
    with pytest.raises(ValueError, match="step_bits must divide"):
        heavy.treehist(codes, counts, total_bits=16, epsilon=1.0, step_bits=3, rng=0)
    with pytest.raises(ValueError, match="fragment_bits"):
        heavy.sfp(codes, counts, total_bits=16, epsilon=1.0, k=3, fragment_bits=5, rng=0)
    with pytest.raises(ValueError, match="max_candidates"):
        heavy.sfp(codes, counts, total_bits=16, epsilon=0.1, k=3, fragment_bits=2, k_fragments=200,
                  max_candidates=10, rng=0)


def test_consistency_tree_matches_cvxpy_and_holds_the_sums():
    codes, counts = _planted(seed=3, m=16)
    r = heavy.pem(codes, counts, total_bits=16, epsilon=2.0, k=5, step_bits=4, rng=9)
    c, sol = consistent(r)
    assert sol.status == "optimal"
    mean, var, groups, root, _ = level_tree(r)
    f = np.asarray(sol.f)
    for parent, children in groups:
        assert f[parent] == pytest.approx(f[children].sum(), abs=1e-9)
    assert f[root] == pytest.approx(1.0, abs=1e-12) and f.min() >= -1e-12
    # referee: the same weighted least squares written out in cvxpy
    x = cp.Variable(mean.size)
    cons = [x >= 0, x[root] == 1] + [x[p] == cp.sum(x[ch]) for p, ch in groups]
    cp.Problem(cp.Minimize(cp.sum(cp.multiply(1 / var, cp.square(x - mean)))), cons).solve(solver="CLARABEL")
    assert np.max(np.abs(f - x.value)) < 1e-6
    # the consistent items are the top of the consistent last level
    assert c.items.size == r.items.size and np.all(np.diff(c.frequencies) <= 0)
    with pytest.raises(ValueError, match="prefix tree"):
        level_tree(heavy.sfp(codes, counts, total_bits=16, epsilon=4.0, k=3, fragment_bits=8, rng=0))
