"""Longitudinal oracles: ε over τ rounds (closed form) against the enumerated law of a user's τ reports,
the single-round conformance checks, and the real clients' memo (the same memo every round)."""

import numpy as np
import pytest
from scipy import stats

from ldpopt.conformance.oracles import check_oracle
from ldpopt.oracles.longitudinal import (LGRR, LOLOHA, LOSUE, LOUE, LSOUE, LSUE, LongitudinalClients,
                                         longitudinal_oracle)

CLASSES = (LGRR, LSUE, LSOUE, LOUE, LOSUE, LOLOHA)


def _brute_epsilon(M):
    """ε of a (outputs, d) law by brute force over every joint output: max_y log max_v / min_v."""
    L = np.log(M)
    return float(np.max(L.max(axis=1) - L.min(axis=1)))


@pytest.mark.parametrize("cls", CLASSES)
@pytest.mark.parametrize("eps_inf,eps_1", [(3.0, 1.0), (1.0, 0.4)])
def test_epsilon_rounds_matches_enumeration(cls, eps_inf, eps_1):
    o = cls(eps_inf, 3, eps_1=eps_1)
    assert o.epsilon_first() == pytest.approx(eps_1, abs=1e-12)
    prev = 0.0
    for tau in (1, 2, 3):
        ch = o.rounds_channel(tau)
        M = ch.joint_matrix()
        assert np.allclose(M.sum(axis=0), 1.0)
        brute = _brute_epsilon(M)
        assert o.epsilon_rounds(tau) == pytest.approx(brute, abs=1e-9)
        assert prev < brute < eps_inf
        prev = brute
    assert o.epsilon_rounds(1) == pytest.approx(eps_1, abs=1e-12)
    assert o.epsilon_rounds(10_000) == pytest.approx(eps_inf, abs=1e-9)


@pytest.mark.parametrize("cls", CLASSES)
def test_single_round_conformance(cls):
    report = check_oracle(cls(2.5, 5, eps_1=1.0),
                          checks=["interface", "epsilon", "joint_law", "variance", "estimate", "channel"], reps=300)
    assert len(report.passed) == 6


def test_memo_is_permanent_and_two_rounds_follow_the_enumerated_law():
    o = LGRR(2.0, 3, eps_1=0.8)
    n = 30_000
    cl = LongitudinalClients(o, n, rng=1)
    v = np.zeros(n, dtype=np.int64)
    assert np.array_equal(cl.memo(v), cl.memo(v))
    assert not np.array_equal(cl.memo(v), LongitudinalClients(o, n, rng=2).memo(v))
    gen = np.random.default_rng(3)
    y1, y2 = cl.report(v, gen), cl.report(v, gen)
    observed = np.bincount(y1 * 3 + y2, minlength=9)
    expected = o.rounds_channel(2).joint_matrix()[:, 0] * n
    assert stats.chisquare(observed, expected).pvalue > 1e-4
    # independent memos per round (no memo) would give the product law, which this test must refuse
    indep = np.outer(o.output_distribution()[0], o.output_distribution()[0]).ravel() * n
    assert stats.chisquare(observed, indep).pvalue < 1e-6


def test_unary_memo_two_rounds_law():
    o = LOSUE(2.0, 3, eps_1=0.8)
    n = 20_000
    cl = LongitudinalClients(o, n, rng=4)
    v = np.full(n, 1, dtype=np.int64)
    gen = np.random.default_rng(5)
    b1 = np.unpackbits(cl.report(v, gen), axis=1, count=3)
    b2 = np.unpackbits(cl.report(v, gen), axis=1, count=3)
    # bit 1 (the user's own) over two rounds: its enumerated (2^2,) law is the channel's component 1
    observed = np.bincount(b1[:, 1] * 2 + b2[:, 1], minlength=4)
    expected = o.rounds_channel(2).blocks[1][:, 1] * n
    assert stats.chisquare(observed, expected).pvalue > 1e-4


def test_horizon_and_bad_input():
    o = LSUE(2.0, 4, eps_1=0.5)
    assert o.epsilon_horizon(5) == pytest.approx(o.epsilon_rounds(5))
    # public memo pattern: the largest sum over at most two memos sharing the 5 rounds
    e = o.epsilon_rounds
    assert o.epsilon_horizon(5, distinct_values=2, relation="memo-pattern") == pytest.approx(
        max(e(5), e(4) + e(1), e(3) + e(2)))
    assert o.epsilon_horizon(5, distinct_values=2, relation="memo-pattern") <= 2 * min(e(4), 2.0) + 1e-12
    # any two sequences: first report, then the instantaneous response's ε over any two memos per round
    assert o.epsilon_horizon(5, distinct_values=2).relation == "any"
    with pytest.raises(ValueError, match="relation"):
        o.epsilon_horizon(5, distinct_values=2, relation="public")
    with pytest.raises(ValueError, match="eps_1"):
        LGRR(1.0, 4, eps_1=1.0)
    with pytest.raises(ValueError, match="tau"):
        o.epsilon_rounds(0)
    with pytest.raises(ValueError, match="distinct_values"):
        o.epsilon_horizon(3, distinct_values=4)
    with pytest.raises(ValueError, match="name"):
        longitudinal_oracle("l-xyz", 1.0, 4, eps_1=0.5)
    with pytest.raises(ValueError, match="eps_1"):
        LOUE(0.2, 4, eps_1=0.19)  # beyond what the OUE instantaneous response can reach


@pytest.mark.parametrize("cls", [LGRR, LOSUE])
def test_sample_rounds_matches_real_clients_in_joint_law(cls):
    # mean and the cross-round covariance of the counts: the fast path against the real clients
    o = cls(2.0, 3, eps_1=0.8)
    tc = np.array([30, 15, 5])
    values = np.repeat(np.arange(3), tc)
    gen = np.random.default_rng(11)
    reps = 1500
    fast = np.array([o.sample_rounds(tc, 2, gen) for _ in range(reps)], dtype=float)  # (R, 2, d)
    real = np.empty_like(fast)
    for r in range(reps):
        cl = o.clients(50, gen)
        real[r] = [o.aggregate(cl.report(values, gen)) for _ in range(2)]
    for X in (fast, real):
        assert np.allclose(X.mean(axis=0), tc * o.p + (50 - tc) * o.q, atol=5 * X.std(axis=0).max() / np.sqrt(reps))
    cov = [np.mean((X[:, 0] - X[:, 0].mean(0)) * (X[:, 1] - X[:, 1].mean(0)), axis=0) for X in (fast, real)]
    se = np.sqrt(2) * fast[:, 0].std(0) * fast[:, 1].std(0) / np.sqrt(reps)
    assert np.all(np.abs(cov[0] - cov[1]) < 5 * se)
    # the shared memo: Cov(c_1u, c_2u) = (p₂ − q₂)² Σ_users π(1 − π), π = p₁ for u's own users, q₁ else
    exact = (o.p2 - o.q2) ** 2 * (tc * o.p1 * (1 - o.p1) + (50 - tc) * o.q1 * (1 - o.q1))
    assert np.all(np.abs(cov[0] - exact) < 5 * se / np.sqrt(2)) and np.all(exact > 0)


def test_loloha_reduces_the_horizon_and_its_enumeration_covers_the_hash():
    lol, lgrr = LOLOHA(2.0, 3, eps_1=0.6, g=2), LGRR(2.0, 3, eps_1=0.6)
    # τ reports of one value: LOLOHA's enumerated law runs over all g^d hash functions
    assert lol.epsilon_rounds(3) == pytest.approx(_brute_epsilon(lol.rounds_channel(3).joint_matrix()), abs=1e-9)
    # three distinct values: L-GRR has three memos, LOLOHA at most g = 2
    # (with the memo pattern public: between any two sequences the pattern leaks, tests/test_horizon.py)
    assert lgrr.epsilon_horizon(300, distinct_values=3, relation="memo-pattern") == pytest.approx(3 * 2.0, abs=1e-9)
    assert lol.epsilon_horizon(300, distinct_values=3, relation="memo-pattern") == pytest.approx(2 * 2.0, abs=1e-9)
    assert lol.q == 0.5 and lol.p == pytest.approx(lol.p1 * lol.p2 + (1 - lol.p1) * lol.q2)
    with pytest.raises(ValueError, match="fast path"):
        lol.sample_rounds([5, 5, 5], 2, 0)


@pytest.mark.parametrize("bits", [1, 2, 3])
def test_dbitflippm_conformance_and_epsilon_by_enumeration(bits):
    from ldpopt.oracles.longitudinal import DBitFlipPM

    o = DBitFlipPM(2.0, 5, bits=bits)
    P = o.output_distribution()
    assert np.allclose(P.sum(axis=1), 1.0)
    assert o.epsilon_rounds(7) == pytest.approx(_brute_epsilon(P.T), abs=1e-12)  # the same report every round
    report = check_oracle(o, checks=["interface", "epsilon", "joint_law", "variance", "estimate"], reps=300)
    assert len(report.passed) == 5
    cl = o.clients(200, 0)
    v = np.arange(200) % 5
    assert np.array_equal(cl.report(v, 1), cl.report(v, 2))  # permanent memoisation
    assert ((cl.report(v, 1) >= 0).sum(axis=1) == bits).all()
    with pytest.raises(ValueError, match="bits"):
        DBitFlipPM(2.0, 5, bits=6)


# -- RAPPOR's memoised path with a Bloom filter of h > 1 hashes --------------------------------------
def test_lrappor_epsilon_over_rounds_matches_enumeration():
    from ldpopt.oracles.longitudinal import LRAPPOR

    # one cohort, h = 2, T = 5: values 0 and 1 have disjoint filters (the paper's bound is attained),
    # value 2's hashes collide (one bit): the exact ε for this family is the max over the pairs
    pos = np.array([[[0, 2, 4], [1, 3, 4]]])
    o = LRAPPOR(3.0, 3, eps_1=1.0, num_bits=5, positions=pos)
    assert o.num_hashes == 2 and o.epsilon_first() == pytest.approx(1.0, abs=1e-12)
    assert o.exact_epsilon_inf() == pytest.approx(2 * 2 * np.log((1 - o.f / 2) / (o.f / 2)), abs=1e-12)
    prev = 0.0
    for tau in (1, 2, 3):
        brute = _brute_epsilon(o.rounds_channel(tau).joint_matrix())
        assert o.exact_epsilon_rounds(tau) == pytest.approx(brute, abs=1e-9)
        assert o.epsilon_rounds(tau) == pytest.approx(brute, abs=1e-9)  # a disjoint pair: the bound is exact
        assert prev < brute < 3.0
        prev = brute
    assert o.epsilon_rounds(10_000) == pytest.approx(3.0, abs=1e-9)
    # a family without a disjoint pair: the exact ε is below the paper's bound, and still the enumerated one
    o2 = LRAPPOR(3.0, 3, eps_1=1.0, num_bits=3, positions=np.array([[[0, 1, 2], [1, 2, 0]]]))
    brute = _brute_epsilon(o2.rounds_channel(2).joint_matrix())
    assert o2.exact_epsilon_rounds(2) == pytest.approx(brute, abs=1e-9) and brute < o2.epsilon_rounds(2) - 0.1
    assert o2.exact_epsilon_rounds(1) == pytest.approx(o2.exact_epsilon_one(), abs=1e-12)


def test_lrappor_fast_rounds_match_real_clients_and_the_shared_memo_covariance():
    from ldpopt.oracles.longitudinal import LRAPPOR

    o = LRAPPOR(2.0, 3, eps_1=0.8, num_bits=8, num_hashes=2, cohorts=2)
    tc = np.array([30, 15, 5])
    values = np.repeat(np.arange(3), tc)
    gen = np.random.default_rng(12)
    reps = 1500
    fast = np.array([o.sample_rounds(tc, 2, gen) for _ in range(reps)])  # (R, 2, d)
    real = np.empty_like(fast)
    for r in range(reps):
        cl = o.clients(50, gen)
        real[r] = cl.rounds(np.stack([values, values]), gen)
    cl = o.clients(50, 0)
    assert all(np.array_equal(a, b) for a, b in zip(cl.memo(values), cl.memo(values)))  # permanent
    se_mean = fast.std(axis=0) / np.sqrt(reps)
    assert np.all(np.abs(fast.mean(0) - real.mean(0)) < 5 * np.sqrt(2) * se_mean)
    cov = [np.mean((X[:, 0] - X[:, 0].mean(0)) * (X[:, 1] - X[:, 1].mean(0)), axis=0) for X in (fast, real)]
    se = np.sqrt(2) * fast[:, 0].std(0) * fast[:, 1].std(0) / np.sqrt(reps)
    assert np.all(np.abs(cov[0] - cov[1]) < 5 * se)
    exact = (o.p2 - o.q2) ** 2 * o.memo_support_variance(tc, 50)  # what multi.rounds.rounds_covariance uses
    assert np.all(np.abs(cov[0] - exact) < 5 * se / np.sqrt(2)) and np.all(exact > 0)
    # one round of the memoised path is one-shot RAPPOR in law: its per-round sketch decodes as RAPPOR's
    assert np.allclose(real.mean(axis=(0, 1)), (o.bias_given_hashes(tc / 50) * (o.p - o.q) + tc / 50 * (o.p - o.q)
                                                  + o.q) * 50, atol=5 * real.std(axis=(0, 1)).max() / np.sqrt(reps))


def test_longitudinal_oracles_are_registered_with_a_default_eps_1_valid_at_every_epsilon():
    from ldpopt import oracles

    names = sorted(set(oracles.available(sketches=True, longitudinal=True)) - set(oracles.available(sketches=True)))
    assert names == ["dbitflippm", "l-grr", "l-osue", "l-oue", "l-rappor", "l-soue", "l-sue", "loloha"]
    for name in names:
        assert oracles.oracle_class(name).longitudinal
        for eps in (1e-3, 0.1, 0.5, 2.0, 20.0):
            o = oracles.get(name, eps, 4)
            if name != "dbitflippm":
                assert o.epsilon_first() == pytest.approx(eps / 2, rel=1e-9)
                assert o.epsilon_rounds(1) == pytest.approx(eps / 2, rel=1e-9)
    with pytest.raises(ValueError, match="eps_1"):
        oracles.get("l-rappor", 1.0, 4, eps_1=1.5)


def test_lrappor_rounds_decode_with_rappors_candidate_regression():
    from ldpopt.oracles.longitudinal import LRAPPOR
    from ldpopt.sketches import lasso_ls

    o = LRAPPOR(6.0, 8, eps_1=3.0, num_bits=32, num_hashes=2, cohorts=4)
    values = np.repeat(np.arange(8), [16000, 12000, 8000, 4000, 0, 0, 0, 0])
    cl = o.clients(values.shape[0], 0)
    gen = np.random.default_rng(1)
    for _ in range(2):  # two rounds of the same users, each decoded as one-shot RAPPOR's sketch
        res = lasso_ls(o, *o.sketch(cl.report(values, gen)))
        assert set(res.selected.tolist()) >= {0, 1, 2, 3}
        assert np.abs(res.f - [0.4, 0.3, 0.2, 0.1, 0, 0, 0, 0]).max() < 0.05


def test_lrappor_from_f_keeps_f_and_the_memo():
    from ldpopt.oracles.longitudinal import LRAPPOR

    o = LRAPPOR.from_f(0.5, 8, num_hashes=2, eps_1=1.0, num_bits=16)
    assert isinstance(o, LRAPPOR) and o.f == 0.5 and (o.p1, o.q1) == (0.75, 0.25)
    assert o.epsilon == pytest.approx(4 * np.log(3)) and o.epsilon_first() == pytest.approx(1.0, abs=1e-12)


def test_dbitflippm_refuses_a_kernel_device_it_does_not_have():
    """dBitFlipPM counts with numpy only: "cpu"/"cuda" are refused naming the argument, never ignored."""
    from ldpopt.oracles import DBitFlipPM

    orc = DBitFlipPM(2.0, 4, bits=2)
    rep = [[1, 0, -1, -1], [-1, 1, 1, -1]]
    assert orc.aggregate(rep, device="numpy").tolist() == orc.aggregate(rep).tolist() == [1, 1, 1, 0]
    for device in ("cpu", "cuda", "gpu"):
        with pytest.raises(ValueError, match="device must be"):
            orc.aggregate(rep, device=device)
