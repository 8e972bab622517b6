"""ldpopt.design: workloads, the strategy's objective and gradient against independent computations,
the projection, the exact privacy proof, the designer, and the designed oracle (conformance suite,
real client against the fast path, exact covariance, refusals)."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy.stats import chi2

from ldpopt import design as D
from ldpopt import oracles, testing
from ldpopt.design import workloads as W
from ldpopt.design.optimize import _gradient, _inverse_information
from ldpopt.oracles.channel import Channel
from ldpopt.oracles.jointlaw import count_moments


def _random_strategy(gen, m, d, eps):
    """A random ε-LDP strategy: rows z_r·(1 + (e^ε − 1)·U) normalised by columns would break the ratio,
    so draw exp(ε·U) row patterns and normalise each column through the row weights' projection."""
    z = np.full(m, 1.0 / m) * (0.5 + 0.5 / math.exp(eps))
    return D.project_columns(gen.random((m, d)), z, math.exp(eps) * z * (1 - 1e-9))


# -- workloads --------------------------------------------------------------------------------------
@pytest.mark.parametrize("d", [2, 3, 7, 12])
def test_ranges_and_prefixes_by_enumeration(d):
    rows = {(a, b) for a in range(d) for b in range(a, d)}
    got = {(int(np.flatnonzero(r)[0]), int(np.flatnonzero(r)[-1])) for r in W.all_ranges(d)}
    assert got == rows and all(np.all(r[np.flatnonzero(r)[0]:np.flatnonzero(r)[-1] + 1] == 1) for r in W.all_ranges(d))
    assert np.array_equal(W.range_gram(d), W.all_ranges(d).T @ W.all_ranges(d))
    P = W.prefixes(d)
    assert all(P[b, v] == (v <= b) for b in range(d) for v in range(d))


@pytest.mark.parametrize("shape,k", [((2, 3), 1), ((2, 2, 2), 2), ((3, 2, 2), 2), ((2, 3, 2), 3)])
def test_marginals_by_enumeration(shape, k):
    M = W.marginals(shape, k)
    cells = list(itertools.product(*[range(s) for s in shape]))  # value index = C order
    want = []
    for attrs in itertools.combinations(range(len(shape)), k):
        for cell in itertools.product(*[range(shape[a]) for a in attrs]):
            want.append([float(all(x[a] == c for a, c in zip(attrs, cell, strict=True))) for x in cells])
    assert np.array_equal(M, np.array(want))


@pytest.mark.parametrize("seed", range(6))
def test_top_k_is_plans_top_k_and_random_subset_the_mean_over_all_subsets(seed):
    """top_k: the k values of largest f, ties to the smaller index (a sort by (−f, index) written
    here), the values plan's topk:K scores; random_subset: Gram = the mean of uuᵀ over every subset."""
    gen = np.random.default_rng(seed)
    d = int(gen.integers(2, 9))
    f = gen.integers(0, 4, size=d).astype(float)  # many ties
    k = int(gen.integers(1, d + 1))
    want = sorted(range(d), key=lambda v: (-f[v], v))[:k]
    T = W.top_k(f, k)
    assert T.shape == (k, d) and [int(np.flatnonzero(r)[0]) for r in T] == want and np.all(T.sum(axis=1) == 1)
    from ldpopt.planning import closed_form

    o = oracles.get("grr", 1.0, d)
    g = f + 1.0
    var = o.variance(g / g.sum(), 1000)
    top = sorted(range(d), key=lambda v: (-g[v], v))[:k]
    assert closed_form(o, "base", f"topk:{k}", g / g.sum(), 1000) == pytest.approx(var[top].mean(), rel=1e-12)
    s = int(gen.integers(1, d + 1))
    U = np.array([[float(v in c) for v in range(d)] for c in itertools.combinations(range(d), s)])
    R = W.random_subset(d, s)
    np.testing.assert_allclose(R.T @ R, U.T @ U / len(U), atol=1e-15)


def test_top_k_and_random_subset_refuse_bad_input():
    with pytest.raises(ValueError, match="k must be an integer in"):
        W.top_k([0.5, 0.5], 3)
    with pytest.raises(ValueError, match="f must be a finite non-negative"):
        W.top_k([0.5, -0.1, 0.6], 1)
    with pytest.raises(ValueError, match="f must be a finite non-negative"):
        W.top_k([1.0], 1)
    with pytest.raises(ValueError, match="size must be an integer in"):
        W.random_subset(4, 0)
    with pytest.raises(ValueError, match="d must be"):
        W.random_subset(1, 1)


def test_workloads_refuse_bad_input():
    with pytest.raises(ValueError, match="d must be"):
        W.prefixes(1)
    with pytest.raises(ValueError, match="shape must be"):
        W.marginals((2, 1), 1)
    with pytest.raises(ValueError, match="k must be"):
        W.marginals((2, 2), 3)
    with pytest.raises(ValueError, match="workload must be finite"):
        W.as_workload([[1.0, np.nan]])
    with pytest.raises(ValueError, match="nonzero"):
        W.as_workload(np.zeros((2, 3)))
    with pytest.raises(ValueError, match="d = 4 columns"):
        W.as_workload(np.ones((2, 3)), d=4)


# -- objective, gradient, projection ----------------------------------------------------------------
@pytest.mark.parametrize("seed", range(4))
def test_objective_matches_brute_force(seed):
    """The per-value error and the objective against a direct enumeration: for each value u and
    output y, the workload's squared deviation with the reconstruction from a weighted pinv."""
    gen = np.random.default_rng(seed)
    d = int(gen.integers(2, 6))
    m = int(gen.integers(d, 3 * d + 1))
    eps = float(gen.uniform(0.3, 3))
    Q = _random_strategy(gen, m, d, eps)
    Wm = gen.normal(size=(int(gen.integers(1, 5)), d))
    G = Wm.T @ Wm
    s = Q.sum(axis=1)
    V = np.linalg.pinv(Q / np.sqrt(s)[:, None]) / np.sqrt(s)[None, :]  # (QᵀD⁻¹Q)⁻¹QᵀD⁻¹ another way
    z = np.zeros(d)
    for u in range(d):  # enumeration: a reference, tiny d
        for y in range(m):
            e = Wm @ V[:, y] - Wm[:, u]
            z[u] += Q[y, u] * (e @ e)
    assert np.allclose(D.per_value_error(Q, G), z, rtol=1e-8, atol=1e-10)
    assert D.objective(Q, G) == pytest.approx(z.mean(), rel=1e-8, abs=1e-10)
    assert np.allclose(D.reconstruction(Q) @ Q, np.eye(d), atol=1e-9)


@pytest.mark.parametrize("seed", range(3))
def test_gradient_by_finite_differences(seed):
    gen = np.random.default_rng(10 + seed)
    d, m = 4, 7
    Q = gen.random((m, d)) + 0.1
    A = gen.normal(size=(3, d))
    G = A.T @ A + np.eye(d)
    g = _gradient(Q, _inverse_information(Q), G)
    h = 1e-6
    num = np.zeros_like(Q)
    for i, j in itertools.product(range(m), range(d)):
        E = np.zeros_like(Q)
        E[i, j] = h
        num[i, j] = (D.objective(Q + E, G) - D.objective(Q - E, G)) / (2 * h)
    assert np.allclose(g, num, rtol=1e-5, atol=1e-7 * np.abs(num).max())


@pytest.mark.parametrize("seed", range(5))
def test_projection_is_the_nearest_feasible_point(seed):
    gen = np.random.default_rng(20 + seed)
    m, d = int(gen.integers(2, 9)), int(gen.integers(1, 6))
    lo = gen.uniform(0.01, 1.0 / m, m)
    hi = lo * gen.uniform(1.0, 8.0, m)
    if hi.sum() < 1:
        hi *= 1.01 / hi.sum()
        lo = np.minimum(lo, hi)
    R = gen.normal(scale=0.5, size=(m, d))
    P = D.project_columns(R, lo, hi)
    assert np.all(P >= lo[:, None] - 1e-12) and np.all(P <= hi[:, None] + 1e-12)
    assert np.allclose(P.sum(axis=0), 1.0, atol=1e-12)
    # variational inequality (r − x)ᵀ(y − x) ≤ 0 at other feasible points y
    for _ in range(20):
        Y = D.project_columns(gen.normal(size=(m, d)), lo, hi)
        assert np.all(np.sum((R - P) * (Y - P), axis=0) <= 1e-10)


# -- the exact privacy proof ---------------------------------------------------------------------------
def test_exp_lower_is_below_and_close():
    for eps in np.random.default_rng(0).uniform(1e-4, 12, 30):
        T = D.exp_lower(float(eps))
        assert float(T) <= math.exp(eps) * (1 + 1e-15) and T < D.exp_lower(float(eps) * (1 + 1e-12))
        assert abs(float(T) / math.exp(eps) - 1) < 1e-14


@pytest.mark.parametrize("seed", range(6))
def test_verify_ldp_agrees_with_the_channel_epsilon(seed):
    """On generated strategies: proved at ε a little above the channel's float ε, refuted a little below."""
    gen = np.random.default_rng(30 + seed)
    m, d = int(gen.integers(2, 10)), int(gen.integers(2, 8))
    Q = _random_strategy(gen, m, d, float(gen.uniform(0.2, 4)))
    eps = Channel(Q).epsilon
    assert D.verify_ldp(Q, eps * (1 + 1e-7) + 1e-12).verified
    assert not D.verify_ldp(Q, eps * (1 - 1e-7)).verified


def test_verify_ldp_refuses_bad_input_and_infinite_ratio():
    with pytest.raises(ValueError, match="Q must be"):
        D.verify_ldp(np.array([[-0.1, 0.5], [1.1, 0.5]]), 1.0)
    with pytest.raises(ValueError, match="epsilon"):
        D.verify_ldp(np.eye(2), -1.0)
    assert not D.verify_ldp(np.array([[1.0, 0.5], [0.0, 0.5]]), 50.0).verified  # a zero beside a nonzero


# -- the designer --------------------------------------------------------------------------------------
@pytest.mark.parametrize("seed", range(4))
def test_designs_are_exactly_ldp_and_descend(seed):
    gen = np.random.default_rng(40 + seed)
    d = int(gen.integers(3, 7))
    eps = float(gen.uniform(0.3, 4))
    workload = ["identity", "ranges", "prefixes", gen.normal(size=(3, d))][seed]
    r = D.design(workload, eps, d=d, iterations=40, init="random", rng=seed)
    chk = D.verify_ldp(r.strategy, eps)
    assert chk.verified and Channel(r.strategy).epsilon <= eps
    assert r.objective <= r.history[0] and all(b <= a for a, b in zip(r.history, r.history[1:], strict=False))
    assert r.objective == pytest.approx(D.objective(r.strategy, r.gram), rel=1e-10)
    assert 0.0 <= r.stationarity <= 1.0 + 1e-9


@pytest.mark.parametrize("d,eps", [(3, 0.5), (4, 1.0), (5, 2.0), (4, 4.0)])
def test_identity_design_at_least_as_good_as_every_builtin(d, eps):
    r = D.design("identity", eps, d=d, iterations=3, rng=0)
    f = np.full(d, 1.0 / d)
    best = min(float(oracles.get(n, eps, d).variance(f, 1).sum()) for n in oracles.available())
    # the objective is Σ_v Var at the uniform distribution, n = 1 (McKenna et al.'s average case);
    # the design runs at ε(1 − 1e-9), hence the tolerance
    assert r.objective <= best * (1 + 1e-6)


def test_ranges_design_beats_every_builtin_analytically():
    d, eps = 8, 1.0
    r = D.design("ranges", eps, d=d, iterations=60, init="random", rng=0)
    f = np.full(d, 1.0 / d)
    G = W.range_gram(d)
    o = r.oracle()
    designed = float(np.sum(G * o.covariance(f, 1)))
    assert designed == pytest.approx(r.objective, rel=1e-8)  # the oracle's covariance, the design's objective
    for name in oracles.available():
        b = oracles.get(name, eps, d)
        ab = type(b).pair_covariance(b.p, b.q, d, {**b.params(), **b.structural_params()})
        if ab is None:
            continue
        C = (ab[0] + ab[1] * (f[:, None] + f[None, :])) / (b.p - b.q) ** 2
        np.fill_diagonal(C, b.variance(f, 1))
        assert designed < float(np.sum(G * C)), name


def test_design_refuses_bad_arguments():
    with pytest.raises(ValueError, match="workload must be one of"):
        D.design("cubes", 1.0, d=4)
    with pytest.raises(ValueError, match="d is required"):
        D.design("ranges", 1.0)
    with pytest.raises(ValueError, match="epsilon"):
        D.design("ranges", 0.0, d=4)
    with pytest.raises(ValueError, match="rows must be"):
        D.design("ranges", 1.0, d=4, rows=1)
    with pytest.raises(ValueError, match="max_bits must be"):
        D.design("ranges", 1.0, d=4, max_bits=0.5)
    with pytest.raises(ValueError, match="iterations must be"):
        D.design("ranges", 1.0, d=4, iterations=0)
    with pytest.raises(ValueError, match="tol must"):
        D.design("ranges", 1.0, d=4, tol=1.0)
    with pytest.raises(ValueError, match="init must be"):
        D.design("ranges", 1.0, d=4, init="zeros")
    with pytest.raises(ValueError, match="singular"):
        D.design("ranges", 1.0, d=4, init=np.ones((3, 4)) / 3)


@pytest.mark.parametrize("seed", range(3))
def test_a_builtin_name_starts_from_its_channel(seed):
    """init="hr" (or any built-in whose outputs enumerate): one descent from that oracle's channel, its
    own number of outputs kept, never above the channel's objective, ε proved; the same as passing
    the channel as a matrix."""
    gen = np.random.default_rng(60 + seed)
    d = int(gen.integers(3, 9))
    eps = float(gen.uniform(0.3, 4))
    workload = ("ranges", "prefixes", "identity")[seed]
    P = np.asarray(oracles.get("hr", eps, d).output_distribution(), dtype=np.float64).T
    r = D.design(workload, eps, d=d, iterations=15, init="hr", rng=0)
    assert r.start == "hr" and r.rows == P.shape[0] == 2 ** math.ceil(math.log2(d + 1))
    assert r.objective <= D.objective(P, r.gram) * (1 + 1e-6)  # the design runs at ε(1 − 1e-9)
    assert D.verify_ldp(r.strategy, eps).verified
    m = D.design(workload, eps, d=d, iterations=15, init=P, rng=0)
    assert m.objective == pytest.approx(r.objective, rel=1e-7)  # the named start is the channel at ε(1 − 1e-9)


def test_a_builtin_name_that_does_not_enumerate_is_refused():
    with pytest.raises(ValueError, match="init: oue's channel cannot be enumerated at d = 40"):
        D.design("ranges", 1.0, d=40, init="oue")
    with pytest.raises(ValueError, match="init must be .* a built-in oracle's name"):
        D.design("ranges", 1.0, d=4, init=["random", "hadamard"])


def test_bits_budget_limits_the_outputs():
    r = D.design("prefixes", 1.0, d=8, max_bits=4, iterations=5, init="random", rng=0)
    assert r.rows <= 16 and r.oracle().bits <= 4


@pytest.mark.parametrize("d,bits", [(8, 3), (6, 3), (12, 4)])
def test_bits_budget_is_kept_by_the_default_starts(d, bits):
    """With the default starts (random and the built-ins' channels), a channel with more outputs than
    the budget allows is not a start: the design kept has at most 2^bits outputs (HR's has
    2^⌈log₂(d+1)⌉, more than 2^bits for these d)."""
    r = D.design("ranges", 1.0, d=d, max_bits=bits, iterations=5, rng=0)
    assert r.rows <= 2 ** bits and r.oracle().bits <= bits


def test_options_a_start_cannot_honour_are_refused():
    with pytest.raises(ValueError, match="rows sizes the random start only, and init='hr' has none"):
        D.design("ranges", 1.0, d=8, rows=40, init="hr")
    with pytest.raises(ValueError, match="max_bits = 3 allows 8 outputs, and the start 'hr' has 16"):
        D.design("ranges", 1.0, d=8, max_bits=3, init="hr")
    with pytest.raises(ValueError, match="max_bits = 2 allows 4 outputs, fewer than d = 8"):
        D.design("ranges", 1.0, d=8, max_bits=2)
    assert D.design("ranges", 1.0, d=8, rows=9, init=["hr", "random"], iterations=3, rng=0).rows in (9, 16)


# -- the designed oracle ---------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def small():
    return D.design("ranges", 1.0, d=5, iterations=40, init="random", rng=0).oracle()


def test_designed_oracle_passes_conformance(small):
    report = testing.check_oracle(small, reps=400)
    assert {"interface", "epsilon", "joint_law", "estimate", "channel"} <= set(report.passed)


def test_real_client_and_fast_path_agree_in_law(small):
    """Chi-square of the output histogram of the real client and of the fast path against the exact
    expectation Σ_v n_v Q[:, v] (pooled over 20 repetitions of 500 users)."""
    tc = np.array([200, 150, 100, 50, 0])
    values = np.repeat(np.arange(5), tc)
    gen = np.random.default_rng(1)
    want = 20 * (small.channel_blocks()[0] @ tc)
    real = sum(small.output_counts(small.perturb(values, gen)) for _ in range(20))
    fast = sum(small.sample_outputs(tc, gen) for _ in range(20))
    live = want > 0
    for got in (real, fast):
        stat = float(np.sum((got[live] - want[live]) ** 2 / want[live]))
        assert stat < chi2.isf(1e-4, live.sum() - 1)


def test_covariance_matches_the_enumerated_law(small):
    tc = np.array([7, 5, 3, 1, 0])
    n = int(tc.sum())
    _, cov_c = count_moments(small, tc)
    cov_f = cov_c / (n * (small.p - small.q)) ** 2
    assert np.allclose(small.covariance(tc / n, n), cov_f, rtol=1e-8, atol=1e-12)
    assert np.allclose(small.variance(tc / n, n), np.diag(cov_f), rtol=1e-8, atol=1e-12)


def test_estimate_is_the_least_squares_reconstruction(small):
    y = small.sample_outputs([40, 30, 20, 10, 0], 3)
    est = small.estimate_outputs(y)
    assert np.allclose(est.f_tilde, small.V @ y / y.sum(), atol=1e-12)
    assert type(small).from_estimate(est).strategy_id == small.strategy_id


def test_designed_oracle_refuses_bad_strategies():
    with pytest.raises(ValueError, match="not epsilon-LDP"):
        D.DesignedOracle(np.array([[0.9, 0.1], [0.1, 0.9]]), epsilon=1.0)
    with pytest.raises(ValueError, match="sum to 1"):
        D.DesignedOracle(np.array([[0.5, 0.4], [0.4, 0.5]]), epsilon=5.0)
    with pytest.raises(ValueError, match="singular"):
        D.DesignedOracle(np.full((2, 3), 0.5), epsilon=1.0)
    with pytest.raises(ValueError, match="epsilon is required"):
        D.DesignedOracle(np.eye(2))
    o = D.DesignedOracle(np.array([[0.6, 0.4], [0.4, 0.6]]), epsilon=math.log(1.5) + 1e-9)
    with pytest.raises(ValueError, match="reports must be"):
        o.aggregate(np.array([0, 2]))
    with pytest.raises(ValueError, match="values must be"):
        o.perturb([0, 2], rng=0)


def test_compare_ranks_against_independent_covariances():
    """compare's built-in numbers against the exact covariance assembled here from each oracle's
    variance and pair covariance; the design first on its own workload."""
    d, eps, n = 8, 1.0, 500
    gen = np.random.default_rng(5)
    f = gen.dirichlet(np.ones(d))
    Wm = W.all_ranges(d)
    r = D.design("ranges", eps, d=d, iterations=60, init="random", rng=0)
    assert D.compare(Wm, np.full(d, 1.0 / d), n, eps, designs=[r])[0]["mechanism"] == "designed"
    rows = D.compare(Wm, f, n, eps, designs=[r])
    assert [x["mse"] for x in rows if x["mse"] is not None] == sorted(x["mse"] for x in rows if x["mse"] is not None)
    got = {x["mechanism"]: x["mse"] for x in rows}
    for name in oracles.available():
        b = oracles.get(name, eps, d)
        ab = type(b).pair_covariance(b.p, b.q, d, {**b.params(), **b.structural_params()})
        if ab is None:
            assert got[name] is None
            continue
        C = (ab[0] + ab[1] * (f[:, None] + f[None, :])) / (n * (b.p - b.q) ** 2)
        np.fill_diagonal(C, b.variance(f, n))
        assert got[name] == pytest.approx(float(np.sum((Wm @ C) * Wm)) / len(Wm), rel=1e-9)
    with pytest.raises(ValueError, match="f must be"):
        D.compare(Wm, np.ones(d), n, eps)


# -- the designed oracle's covariance everywhere ------------------------------------------------------------
def _generated_designs():
    """Designs on generated settings (d, ε, workload), seeded."""
    gen = np.random.default_rng(72)
    for i in range(3):
        d, eps = int(gen.integers(3, 7)), float(gen.uniform(0.5, 3.0))
        yield D.design(("ranges", "prefixes", "identity")[i], eps, d=d, iterations=25, init="random", rng=i).oracle()


def test_count_covariance_is_the_multinomial_law_of_the_outputs():
    """Cov(f̃) against an independent computation from Q alone: y = Σ_v Multinomial(n_v, Q[:, v]), so
    Cov(y) = Σ_v n_v (diag Q_v − Q_v Q_vᵀ) and f̃ = V y/n with V the weighted least squares solved here."""
    gen = np.random.default_rng(3)
    for o in _generated_designs():
        Q = o.strategy / o.strategy.sum(axis=0)[None, :]
        Dinv = 1.0 / o.strategy.sum(axis=1)
        V = np.linalg.solve(o.strategy.T @ (Dinv[:, None] * o.strategy), o.strategy.T * Dinv[None, :])
        tc = gen.integers(0, 50, o.d)
        tc[0] += 1
        n = int(tc.sum())
        cov_y = sum(tc[v] * (np.diag(Q[:, v]) - np.outer(Q[:, v], Q[:, v])) for v in range(o.d))
        want = V @ cov_y @ V.T / n**2
        cov = o.count_covariance(n, o.d)
        assert cov.moments is not None and cov.pair is None
        assert np.allclose(cov.matrix(tc / n), want, rtol=1e-8, atol=1e-14)
        assert np.allclose(o.covariance(tc / n, n), want, rtol=1e-8, atol=1e-14)
        est = o.simulate(tc, rng=0)
        assert est.noise is o
        assert np.allclose(est.variance(tc / n), np.diag(want), rtol=1e-8, atol=1e-14)
        assert np.allclose(est.sigma2_v, np.diag(cov.matrix(np.clip(est.f_tilde, 0, 1))), rtol=1e-10)
        assert np.allclose(ldpopt_uncertainty().covariance(est, tc / n), want, rtol=1e-8, atol=1e-14)


def ldpopt_uncertainty():
    """The module ldpopt.uncertainty.analytic (the package exports a function of that name)."""
    import importlib

    return importlib.import_module("ldpopt.uncertainty.analytic")


def test_analytic_variance_and_intervals_against_the_real_client():
    """The real client, R repetitions of n users: the sample variance of Base and Norm answers (single
    values and every range) against uncertainty.query_variance (a chi-square band), and the analytic score
    intervals' coverage of the truth near the nominal 90 %."""
    an = ldpopt_uncertainty()
    o = D.design("ranges", 1.5, d=5, iterations=30, init="random", rng=5).oracle()
    tc = np.array([400, 250, 200, 100, 50])
    n, R = int(tc.sum()), 300
    f = tc / n
    U = W.all_ranges(o.d)
    reports = o.perturb(np.tile(np.repeat(np.arange(o.d), tc), R), np.random.default_rng(11)).reshape(R, n)
    Y = np.stack([np.bincount(r, minlength=o.m) for r in reports])
    ests = [o.estimate_outputs(y) for y in Y]
    F = np.stack([e.f_tilde for e in ests])
    assert np.allclose(F, Y @ o.V.T / n, atol=1e-12)   # the estimate is the reconstruction
    band = 4 * math.sqrt(2 / (R - 1))
    for method in ("base", "norm"):
        G = F if method == "base" else F + (1 - F.sum(axis=1, keepdims=True)) / o.d
        for rows, answers in ((None, G), (U, G @ U.T)):
            want = an.query_variance(ests[0], method, f, rows)
            got = answers.var(axis=0, ddof=1)
            live = want > 1e-12   # the whole domain's Base answer is Σf̃ = 1 exactly (1ᵀV = 1ᵀ): no variance
            assert np.all(got[~live] < 1e-20) and np.all(np.abs(got[live] / want[live] - 1) < band), (method, got / want)
        hits = []
        for e in ests[:100]:
            r = an.analytic(e, method, level=0.9, queries=[list(range(a, b + 1)) for a in range(5) for b in range(a, 5)])
            truth = U @ f
            hits.append((r.lo <= truth) & (truth <= r.hi))
        cover = float(np.mean(hits))
        assert abs(cover - 0.9) < 0.05, (method, cover)
        assert "plug" in r.how


def test_plan_and_gls_weights_use_the_channel():
    """plan's closed form, the weighted problems' σ_v² and σ² are the channel's exact ones, not Eq. 2 / Eq. 7
    at the soft supports' stand-in (p, q)."""
    from ldpopt.planning import closed_form

    o = next(_generated_designs())
    f = np.full(o.d, 1.0 / o.d)
    assert math.isclose(closed_form(o, "base", "full", f, 1000), float(np.mean(np.diag(o.covariance(f, 1000)))),
                        rel_tol=1e-10)
    est = o.simulate(np.full(o.d, 200), rng=1)
    eq2 = (o.q * (1 - o.q) + np.clip(est.f_tilde, 0, 1) * (o.p - o.q) * (1 - o.p - o.q)) / (est.n * (o.p - o.q) ** 2)
    assert np.allclose(est.sigma2_v, o.variance(np.clip(est.f_tilde, 0, 1), est.n)) and not np.allclose(est.sigma2_v, eq2)
    uniform = float(np.mean(np.diag(o.covariance(np.full(o.d, 1.0 / o.d), est.n))))
    assert math.isclose(est.sigma2, uniform, rel_tol=1e-10) and math.isclose(o.approx_variance(est.n), uniform, rel_tol=1e-10)


def test_designed_oracle_covariance_refuses_bad_input(small):
    with pytest.raises(ValueError, match="d must be"):
        small.count_covariance(10, small.d + 1)
    with pytest.raises(ValueError, match="f must have shape"):
        small.covariance([0.5, 0.5], 10)
    with pytest.raises(ValueError, match="n"):
        small.count_covariance(0, small.d)


def test_designed_oracle_passes_the_noise_protocol_check(small):
    report = testing.check_mechanism(small, checks=("interface", "covariance"), d=small.d, n=200, reps=3000)
    assert set(report) == {"interface", "covariance"}
