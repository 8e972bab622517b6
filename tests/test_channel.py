"""Any finite mechanism (issue 15 item 1): the channel's law, ε, sampling, inversion and likelihood."""

import itertools

import numpy as np
import pytest
from scipy import stats

from ldpopt.methods.channel_inverse import invert
from ldpopt.methods.channel_mle import channel_mle, channel_mle_cvxpy, kkt_residual, Terms
from ldpopt.methods.em import solve_mle
from ldpopt.oracles import get
from ldpopt.oracles.channel import Channel, binary_rr, compose, memoised_grr, memoised_unary, product
from ldpopt.oracles.jointlaw import count_moments

TRUE = np.array([40, 0, 25, 9, 3, 0, 14, 9])  # d = 8, two empty values


def _channel_and_counts(name, eps, tc, seed=3):
    o = get(name, epsilon=eps, d=tc.shape[0])
    est = o.simulate(tc * 250, seed)
    ch = Channel.from_oracle(o)
    Y = est.counts if name == "grr" else ch.counts_from_support(est.counts, est.n)
    return o, est, ch, Y


# -- special cases reproduce ldpopt's oracles -------------------------------------------------------
@pytest.mark.parametrize("name", ["grr", "oue", "sue"])
@pytest.mark.parametrize("eps", [0.5, 2.0])
def test_inversion_reproduces_oracle_estimate_and_variance(name, eps):
    o, est, ch, Y = _channel_and_counts(name, eps, TRUE)
    inv = invert(ch, Y)
    assert np.max(np.abs(inv.f - est.f_tilde)) <= 1e-12
    f = TRUE / TRUE.sum()
    np.testing.assert_allclose(inv.variance(f), o.variance(f, est.n), rtol=1e-10)
    # full covariance against the enumerated joint law of the counts (jointlaw.count_moments)
    _, cov_c = count_moments(o, TRUE * 250)
    np.testing.assert_allclose(inv.covariance(f), cov_c / (est.n * (o.p - o.q)) ** 2,
                               rtol=1e-9, atol=1e-12 * np.abs(cov_c).max() / (est.n * (o.p - o.q)) ** 2)


@pytest.mark.parametrize("name", ["oue", "sue"])
def test_support_channel_joint_law_is_the_unary_oracle(name):
    o = get(name, epsilon=1.3, d=5)
    J = Channel.from_oracle(o).joint_matrix()  # row index: component 0 most significant
    y = np.arange(1 << 5)
    bits = (y[:, None] >> np.arange(5)[None, ::-1]) & 1  # bits[i, u] of my row i
    col = (bits << np.arange(5)[None, :]).sum(axis=1)  # oracle's column: bit u = (j >> u) & 1
    np.testing.assert_allclose(J, o.output_distribution()[:, col].T, rtol=0, atol=1e-15)


def test_epsilon_of_channels():
    assert Channel.grr(1.7, 6).epsilon == pytest.approx(1.7, abs=1e-12)
    o = get("oue", epsilon=0.9, d=6)
    assert Channel.from_oracle(o).epsilon == pytest.approx(0.9, abs=1e-12)
    for ch in (memoised_grr(2.0, 1.0, 4), memoised_unary(2.0, 1.0, 4, "sue"), memoised_unary(1.5, 3.0, 3, "oue")):
        Pj = ch.joint_matrix()  # brute force: max log ratio over every joint output and value pair
        brute = np.max(np.log(Pj[:, :, None] / Pj[:, None, :]))
        assert ch.epsilon == pytest.approx(brute, abs=1e-12)
        assert ch.epsilon < 2.0  # one report reveals less than the memo
    assert Channel([[1.0, 0.5], [0.0, 0.5]]).epsilon == np.inf
    with pytest.raises(ValueError, match="more than the claimed epsilon"):
        memoised_grr(2.0, 1.0, 4).check_epsilon(0.5)
    assert memoised_grr(2.0, 1.0, 4).check_epsilon(1.0) < 1.0


# -- composition by enumeration -----------------------------------------------------------------------
def test_memoised_grr_is_the_enumerated_two_round_law():
    d, e1, e2 = 4, 1.5, 0.7
    p1, q1 = np.exp(e1) / (np.exp(e1) + d - 1), 1 / (np.exp(e1) + d - 1)
    p2, q2 = np.exp(e2) / (np.exp(e2) + d - 1), 1 / (np.exp(e2) + d - 1)
    brute = np.zeros((d, d))
    for v, m, y in itertools.product(range(d), repeat=3):
        brute[y, v] += (p1 if m == v else q1) * (p2 if y == m else q2)
    np.testing.assert_allclose(memoised_grr(e1, e2, d).blocks[0], brute, atol=1e-15)


def test_memoised_unary_is_the_enumerated_rappor_law():
    d, e1, e2 = 3, 1.2, 0.8
    o = get("sue", epsilon=e1, d=d)
    keep = np.exp(e2) / (1 + np.exp(e2))
    brute = np.zeros((1 << d, d))
    for v in range(d):
        for memo in itertools.product((0, 1), repeat=d):  # permanent response (memoised bits)
            pm = np.prod([(o.p if u == v else o.q) if b else (1 - (o.p if u == v else o.q)) for u, b in enumerate(memo)])
            for rep in itertools.product((0, 1), repeat=d):  # instantaneous response
                pr = np.prod([keep if r == b else 1 - keep for r, b in zip(rep, memo)])
                row = int("".join(map(str, rep)), 2)
                brute[row, v] += pm * pr
    np.testing.assert_allclose(memoised_unary(e1, e2, d, "sue").joint_matrix(), brute, atol=1e-15)


def test_memoised_grr_matches_ldpopt_grr_run_twice():
    d, e1, e2 = 4, 1.0, 2.0
    g1, g2 = get("grr", epsilon=e1, d=d), get("grr", epsilon=e2, d=d)
    rng = np.random.default_rng(11)
    values = np.repeat(np.arange(d), 20_000)
    out = g2.perturb(g1.perturb(values, rng), rng)
    P = memoised_grr(e1, e2, d).blocks[0]
    for v in range(d):
        obs = np.bincount(out[values == v], minlength=d)
        assert stats.chisquare(obs, 20_000 * P[:, v]).pvalue > 1e-4


# -- sampling ----------------------------------------------------------------------------------------
def test_sample_counts_and_perturb_follow_the_channel_law():
    ch = memoised_unary(1.0, 2.0, 3, "oue")
    tc = np.array([50, 20, 30])
    B = ch.blocks
    mean = np.einsum("jkv,v->jk", B, tc)
    reps = np.stack([ch.sample_counts(tc, s) for s in range(400)])
    assert reps.shape == (400, 3, 2) and np.all(reps.sum(axis=2) == 100)
    z = (reps.mean(axis=0) - mean) / np.sqrt(np.einsum("jkv,v->jk", B * (1 - B), tc) / 400)
    assert np.max(np.abs(z)) < 4.5
    # independence across components given the histogram: covariance of the 1-counts ≈ 0
    c = np.corrcoef(reps[:, :, 1].T)
    assert np.max(np.abs(c[np.triu_indices(3, 1)])) < 0.2
    # the client path gives the same law
    values = np.repeat(np.arange(3), tc)
    agg = np.stack([ch.aggregate(ch.perturb(values, s)) for s in range(400)])
    z2 = (agg.mean(axis=0) - mean) / np.sqrt(np.einsum("jkv,v->jk", B * (1 - B), tc) / 400)
    assert np.max(np.abs(z2)) < 4.5


# -- the exact likelihood ------------------------------------------------------------------------------
@pytest.mark.parametrize("name", ["grr", "oue"])
def test_em_equals_closed_form_mle_and_solver(name):
    o, est, ch, Y = _channel_and_counts(name, 0.8, TRUE)
    r = channel_mle((ch, Y))
    assert kkt_residual((ch, Y), r.f) <= 1e-8
    exact = solve_mle(est).x  # em.py's closed form (GRR) / root-finder (OUE, the binomial composite)
    assert np.max(np.abs(r.f - exact)) <= 1e-8
    ref = channel_mle_cvxpy((ch, Y))
    assert np.max(np.abs(r.f - ref)) <= 1e-6
    assert r.loglik >= Terms((ch, Y)).loglik(ref) - 1e-9 * abs(r.loglik)


@pytest.mark.parametrize("ch", [memoised_grr(1.5, 1.0, 8), memoised_unary(2.0, 1.0, 8, "sue")])
def test_em_on_composed_channel_equals_solver(ch):
    Y = ch.sample_counts(TRUE * 100, 5)
    r = channel_mle((ch, Y))
    assert r.gap <= 1e-12 * Terms((ch, Y)).N
    assert kkt_residual((ch, Y), r.f) <= 1e-8
    assert np.max(np.abs(r.f - channel_mle_cvxpy((ch, Y)))) <= 1e-6
    # the unbiased inversion is the unconstrained optimum's neighbour: MLE on Δ never has lower ℓ
    T = Terms((ch, Y))
    f_inv = invert(ch, Y).f
    if np.all(f_inv > 0):
        assert r.loglik >= T.loglik(f_inv) - 1e-9 * abs(r.loglik)


# -- bad input ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("P, msg", [
    ([[0.5, 0.2], [0.4, 0.8]], "sum to 1"),
    ([[1.2, 0.5], [-0.2, 0.5]], "non-negative"),
    ([0.5, 0.5], "shape"),
    ([[[[0.5]]]], "shape"),
    ([[np.nan, 0.5], [0.5, 0.5]], "finite"),
    ([[1.0], [0.0]], "d >= 2"),
])
def test_bad_channel_raises_naming_P(P, msg):
    with pytest.raises(ValueError, match=rf"P.*{msg}|{msg}.*P"):
        Channel(P)


def test_bad_counts_and_non_identifiable_channel():
    ch = Channel.grr(1.0, 3)
    with pytest.raises(ValueError, match="counts must have shape"):
        invert(ch, [1, 2])
    with pytest.raises(ValueError, match="counts must be finite and >= 0"):
        invert(ch, [1, -2, 3])
    with pytest.raises(ValueError, match="not invertible"):
        invert(Channel([[0.5, 0.5, 0.2], [0.5, 0.5, 0.8]]), [3, 4])
    with pytest.raises(ValueError, match="same d"):
        Terms([(ch, [1, 2, 3]), (Channel.grr(1.0, 4), [1, 2, 3, 4])])
    with pytest.raises(ValueError, match="outer must be one block"):
        compose(Channel.grr(1.0, 3), Channel.support(0.5, 0.2, 3))
    with pytest.raises(ValueError, match="same d"):
        product(Channel.support(0.5, 0.2, 3), binary_rr(1.0))
