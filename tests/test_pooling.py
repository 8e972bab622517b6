"""Pooling groups under different oracles / ε (issue 15 item 2)."""

import numpy as np
import pytest

from ldpopt.methods.channel_inverse import invert
from ldpopt.methods.channel_mle import Terms, channel_mle, channel_mle_cvxpy, kkt_residual
from ldpopt.methods.normalize import project_simplex
from ldpopt.oracles import get
from ldpopt.oracles.channel import Channel, memoised_grr
from ldpopt.pooling import (Group, group_from_estimate, pool_ivw, pool_mle, project_weighted_simplex,
                            variance_diag)

TRUE = np.array([400, 0, 250, 90, 30, 0, 140, 90])
SPEC = [("grr", 0.5, 3), ("oue", 2.0, 1), ("olh", 1.0, 2)]  # (oracle, ε, population multiple)


def _groups(seed=1):
    ests, oracles = [], []
    for i, (name, eps, mult) in enumerate(SPEC):
        o = get(name, epsilon=eps, d=TRUE.shape[0])
        oracles.append(o)
        ests.append(o.simulate(TRUE * mult, seed + 17 * i))
    return oracles, ests


def test_variance_diag_is_eq2_and_the_covariance_diagonal():
    oracles, ests = _groups()
    f = TRUE / TRUE.sum()
    for o, est in zip(oracles, ests):
        g = group_from_estimate(est)
        inv = invert(g.channel, g.counts)
        assert np.max(np.abs(inv.f - est.f_tilde)) <= 1e-12  # the group's f̂ is the oracle's f̃
        v = variance_diag(g.channel, inv.A, f, est.n)
        np.testing.assert_allclose(v, o.variance(f, est.n), rtol=1e-10)
        np.testing.assert_allclose(v, np.diagonal(inv.covariance(f)), rtol=1e-10)


def test_ivw_weights_are_optimal_and_variance_is_harmonic():
    oracles, ests = _groups()
    f = TRUE / TRUE.sum()
    r = pool_ivw(ests, at=f, sampling=False)
    Vg = np.stack([o.variance(f, e.n) for o, e in zip(oracles, ests)])  # Base's Eq. 2, per group
    np.testing.assert_allclose(r.variance, 1.0 / np.sum(1.0 / Vg, axis=0), rtol=1e-10)
    assert np.all(r.variance <= Vg.min(axis=0))
    np.testing.assert_allclose(r.f_raw, np.sum(r.weights * np.stack([e.f_tilde for e in ests]), axis=0), atol=1e-14)
    # any other unbiased weights (columns summing to 1) give at least the pooled variance
    rng = np.random.default_rng(0)
    for _ in range(200):
        w = rng.dirichlet(np.ones(3), size=TRUE.shape[0]).T
        assert np.all(np.sum(w * w * Vg, axis=0) >= r.variance * (1 - 1e-12))


def test_ivw_at_truth_is_unbiased_with_the_pooled_variance_by_simulation():
    oracles, ests = _groups()
    oracles, ests = oracles[:2], ests[:2]  # GRR + OUE: cheap exact fast paths
    f = TRUE / TRUE.sum()
    r = pool_ivw(ests, at=f, sampling=False)
    reps = []
    for s in range(800):  # exact fast paths, fixed weights
        fs = np.stack([o.simulate(TRUE * m, 10 * s + i).f_tilde for i, (o, (_, _, m)) in enumerate(zip(oracles, SPEC))])
        reps.append(np.sum(r.weights * fs, axis=0))
    reps = np.array(reps)
    z = (reps.mean(axis=0) - f) / np.sqrt(r.variance / reps.shape[0])
    assert np.max(np.abs(z)) < 4.0
    ratio = reps.var(axis=0, ddof=1) / r.variance
    assert np.all((ratio > 0.8) & (ratio < 1.2))  # 800 reps: sd of the ratio ≈ 0.05


def test_weighted_simplex_projection_against_solver_and_norm_sub():
    import cvxpy as cp

    rng = np.random.default_rng(4)
    x = rng.normal(0.1, 0.2, size=12)
    V = rng.uniform(0.5, 2.0, size=12)
    f = project_weighted_simplex(x, V)
    y = cp.Variable(12, nonneg=True)
    cp.Problem(cp.Minimize(cp.sum(cp.multiply(1.0 / V, cp.square(y - x)))), [cp.sum(y) == 1]).solve(solver="CLARABEL")
    assert np.max(np.abs(f - y.value)) <= 1e-7
    assert f.min() >= 0 and abs(f.sum() - 1) <= 1e-12
    np.testing.assert_allclose(project_weighted_simplex(x, np.full(12, 0.3)), project_simplex(x), atol=1e-14)


def test_joint_mle_equals_solver_and_sums_group_likelihoods():
    _, ests = _groups()
    gs = [group_from_estimate(e) for e in ests] + [Group(memoised_grr(2.0, 1.0, 8), memoised_grr(2.0, 1.0, 8).sample_counts(TRUE, 9)[0:1])]
    r = pool_mle(gs)
    terms = [(g.channel, g.counts) for g in gs]
    assert kkt_residual(terms, r.f) <= 1e-8
    assert np.max(np.abs(r.f - channel_mle_cvxpy(terms))) <= 1e-6
    f = np.full(8, 1 / 8)
    assert Terms(terms).loglik(f) == pytest.approx(sum(Terms([t]).loglik(f) for t in terms), rel=1e-13)
    # one group alone: the same as that group's own MLE
    np.testing.assert_allclose(pool_mle(gs[:1]).f, channel_mle(terms[:1]).f, atol=1e-9)


def test_bad_groups():
    _, ests = _groups()
    with pytest.raises(ValueError, match="groups must hold"):
        pool_ivw([])
    with pytest.raises(ValueError, match="share the domain"):
        pool_mle([ests[0], (Channel.grr(1.0, 4), np.array([1, 2, 3, 4]))])
    with pytest.raises(ValueError, match="at must be"):
        pool_ivw(ests, at=np.ones(3))
    with pytest.raises(TypeError, match="groups\\[0\\]"):
        pool_ivw(["grr"])
    with pytest.raises(ValueError, match="V must be positive"):
        project_weighted_simplex([0.5, 0.5], [1.0, 0.0])


def test_random_group_composition_variance_and_weights():
    """Groups formed by users' random choices: the composition term f_v(1 − f_v)/n_g is in the pooled variance
    (against the population's histogram) and the weights that include it beat those that do not."""
    tc = TRUE * 20
    f = tc / tc.sum()
    specs = [("oue", 0.5, 0.7), ("grr", 4.0, 0.3)]
    oracles = [get(o, epsilon=e, d=8) for o, e, _ in specs]
    rng = np.random.default_rng(5)
    err_w, err_v, pred = [], [], []
    for _ in range(800):
        split = rng.multinomial(tc, [s for _, _, s in specs])
        ests = [o.simulate(split[:, i], rng) for i, o in enumerate(oracles)]
        w = pool_ivw(ests, at=f)
        err_w.append(w.f_raw - f)
        err_v.append(pool_ivw(ests, at=f, sampling=False).f_raw - f)
        pred.append(w.variance)
    err_w, err_v, pred = map(np.array, (err_w, err_v, pred))
    assert np.max(np.abs(err_w.mean(axis=0)) / np.sqrt(pred.mean(axis=0) / 800)) < 4.0  # unbiased
    ratio = (err_w ** 2).mean(axis=0) / pred.mean(axis=0)
    assert np.all((ratio > 0.8) & (ratio < 1.2)), ratio
    assert np.mean(err_w ** 2) < np.mean(err_v ** 2)


def test_ivw_fast_path_equals_channel_path():
    """Groups from Estimates use f̃ and Eq. 2 (O(d)); the generic channel inversion and
    variance_diag (the slow, obviously correct path) give the same pooled estimate."""
    _, ests = _groups()
    fast = pool_ivw(ests)
    slow = pool_ivw([Group(g.channel, g.counts) for g in map(group_from_estimate, ests)])
    np.testing.assert_allclose(fast.group_variance, slow.group_variance, rtol=1e-10)
    assert np.max(np.abs(fast.f - slow.f)) <= 1e-12 and np.max(np.abs(fast.f_raw - slow.f_raw)) <= 1e-12
