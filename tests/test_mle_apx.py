"""MLE-Apx (ldpopt.methods.mle): KKT conditions of arXiv Eq. 13, brute force over supports, the
paper's iteration, and the two printed versions of Eq. 14.

KKT tolerance: the gradient of Eq. 13 is checked with one common multiplier to 1e-10 relative to
max(1, max |gradient| on the support) — gradients reach ~B²/s·|f̃ − f|, so an absolute bound would
measure the size of the numbers, not the solve.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.optimize import brentq

from ldpopt import Estimate
from ldpopt.methods import postprocess
from ldpopt.methods.mle import (mle_apx, mle_apx_formula_arxiv, mle_apx_formula_ndss, mle_apx_lambda,
                                mle_apx_paper, mle_apx_paper_iterate, mle_gradient, mle_objective)
from ldpopt.methods.normalize import norm_sub
from _reference import pq

KINDS = ["grr", "oue", "sue", "blh"]  # C > 0 (GRR d ≥ 3, OUE), C = 0 (SUE, GRR d = 2), C < 0 (BLH)


def sample(kind, eps, d, n, rng, conc=0.3) -> Estimate:
    """Support counts c_v ~ Binomial(n, q + (p − q) f_v) for a Dirichlet f (Eq. 2's model)."""
    p, q = pq(kind, eps, d)
    f = rng.dirichlet(np.full(d, conc))
    c = rng.binomial(n, q + (p - q) * f).astype(float)
    return Estimate.from_counts(c, n, eps, p, q, kind)


def kkt_residual(est: Estimate, f: np.ndarray) -> float:
    """max of: stationarity spread on the support, off-support violation, all relative to the
    gradient scale; feasibility is asserted separately."""
    g = mle_gradient(est, f)
    sup = f > 0
    lam = float(np.median(g[sup]))
    scale = max(1.0, float(np.max(np.abs(g[sup]))))
    res = float(np.max(np.abs(g[sup] - lam))) / scale
    if (~sup).any():
        res = max(res, float(np.max(lam - g[~sup])) / scale)
    return res


def instances():
    rng = np.random.default_rng(20200223)
    for kind in KINDS:
        for eps in (0.1, 0.5, 1.0, 2.0, 4.0, 8.0):
            for d in (2, 3, 10, 100, 10_000):
                yield kind, eps, d, sample(kind, eps, d, 100_000, rng)


@pytest.mark.parametrize("method", ["sort", "brentq"])
def test_kkt_conditions_on_random_instances(method):
    for kind, eps, d, est in instances():
        f = mle_apx(est, method=method)
        assert np.all(f >= 0) and abs(f.sum() - 1) <= 1e-12, (kind, eps, d)
        assert kkt_residual(est, f) <= 1e-10, (kind, eps, d)


def test_gradient_formula_matches_finite_differences():
    est = sample("oue", 1.0, 6, 1000, np.random.default_rng(1))
    f = np.full(6, 1 / 6)
    h = 1e-6
    num = np.array([(mle_objective(est, f + h * e) - mle_objective(est, f - h * e)) / (2 * h)
                    for e in np.eye(6)])
    np.testing.assert_allclose(mle_gradient(est, f), num, rtol=1e-6)


def test_brentq_unpolished_agrees_and_lambda_form_is_the_solution():
    rng = np.random.default_rng(2)
    for kind in KINDS:
        est = sample(kind, 1.0, 500, 10_000, rng)
        f = mle_apx(est)
        np.testing.assert_allclose(mle_apx(est, method="brentq", polish=False), f, atol=1e-10)
        np.testing.assert_array_equal(mle_apx(est, method="brentq"), f)
        # f(λ) at the common gradient value reproduces the solution (the closed form of f_v(λ))
        lam = float(np.median(mle_gradient(est, f)[f > 0]))
        np.testing.assert_allclose(mle_apx_lambda(est, lam), f, atol=1e-9)


# -- brute force over supports with scipy 1-D solves ----------------------------------------------
def brute_force(est: Estimate) -> np.ndarray:
    """For every support S: solve min Σ_S h_v s.t. Σ_S f = 1 by brentq on the common multiplier λ,
    each f_v(λ) itself by brentq on h_v'(f) = λ over [0, 1] (h_v' from the quotient rule, no x);
    keep feasible supports (0 < f ≤ 1 on S) and return the one with the smallest Eq. 13 objective."""
    d = est.d
    p, q = est.p, est.q
    a = est.counts / est.n - q
    B, s, C = p - q, q * (1 - q), (p - q) * (1 - p - q)

    def hp(v, f):
        u, w = a[v] - B * f, s + C * f
        return (-2 * B * u * w - C * u * u) / (w * w)

    def f_of(v, lam):
        return brentq(lambda f: hp(v, f) - lam, 0.0, 1.0, xtol=1e-15, rtol=8.9e-16)

    best, best_obj = None, np.inf
    for k in range(1, d + 1):
        for S in itertools.combinations(range(d), k):
            lo = max(hp(v, 0.0) for v in S)   # below: some f_v < 0 on S
            hi = min(hp(v, 1.0) for v in S)   # above: some f_v > 1
            if lo >= hi:
                continue

            def excess(lam):
                return sum(f_of(v, lam) for v in S) - 1.0

            if excess(lo) > 0 or excess(hi) < 0:
                continue  # Σ_S f = 1 needs some f_v outside [0, 1]: S infeasible
            lam = brentq(excess, lo, hi, xtol=1e-14 * max(1, abs(lo), abs(hi)), rtol=8.9e-16)
            f = np.zeros(d)
            for v in S:
                f[v] = f_of(v, lam)
            obj = mle_objective(est, f)
            if obj < best_obj:
                best, best_obj = f, obj
    return best


def test_matches_brute_force_over_supports():
    rng = np.random.default_rng(7)
    cases = [(kind, eps, d) for kind in KINDS for eps in (0.3, 2.0, 6.0) for d in (2, 3, 5)]
    cases += [("oue", 0.5, 8), ("blh", 1.0, 8), ("grr", 1.0, 7)]
    for kind, eps, d in cases:
        est = sample(kind, eps, d, 2_000, rng, conc=0.5)
        ref = brute_force(est)
        f = mle_apx(est)
        np.testing.assert_allclose(f, ref, atol=1e-9, err_msg=f"{kind} eps={eps} d={d}")
        assert mle_objective(est, f) <= mle_objective(est, ref) + 1e-9 * max(1, mle_objective(est, ref))


# -- the paper's iteration -----------------------------------------------------------------------
def test_paper_iteration_reaches_the_exact_optimum_on_all_instances():
    """Finding: the arXiv iteration (Eq. 14, drop negatives, repeat) reaches the exact optimum on
    all 864 random instances below (4 oracles × 6 ε × 6 d × 3 skews × 2 n), as proved in
    ldpopt.methods.mle; with this seed it needs up to 9 rounds and more than one on ~2/3 of them."""
    rng = np.random.default_rng(11)
    iters = []
    for kind in KINDS:
        for eps in (0.1, 0.5, 1.0, 2.0, 4.0, 8.0):
            for d in (2, 3, 5, 10, 100, 1000):
                for conc in (0.05, 0.3, 2.0):
                    for n in (100, 100_000):
                        est = sample(kind, eps, d, n, rng, conc)
                        f_paper, it = mle_apx_paper_iterate(est)
                        f = mle_apx(est)
                        np.testing.assert_allclose(f_paper, f, atol=1e-12, rtol=0)
                        assert kkt_residual(est, f_paper) <= 1e-10
                        iters.append(it)
    iters = np.array(iters)
    assert iters.size == 864
    assert iters.max() >= 5 and np.mean(iters > 1) > 0.5  # the iteration is really exercised


def test_paper_iteration_worst_case_needs_d_rounds():
    """An estimate built so that each round turns exactly one more value negative: the iteration
    needs d rounds (d − 1 removals and a final check), i.e. O(d²) work; still exact.
    f̃ = (1, −z_2, …, −z_d) with z_k = k z_{k−1} − Σ_{2≤i<k} z_i + z_{k−1}/2 (rescaled)."""
    for kind in ("sue", "oue"):
        for d in (8, 10):
            z = [1.0]
            for k in range(3, d + 1):
                z.append(k * z[-1] - sum(z) + 0.5 * z[-1])
            f = np.concatenate([[1.0], -0.5 * np.array(z) / z[-1]])
            est = Estimate.from_frequencies(f, 1000, 1.0, *pq(kind, 1.0, d), kind)
            f_paper, it = mle_apx_paper_iterate(est)
            assert it == d
            np.testing.assert_allclose(f_paper, mle_apx(est), atol=1e-14)
            np.testing.assert_allclose(f_paper, np.eye(d)[0], atol=1e-14)
    with pytest.raises(RuntimeError, match="max_iter"):
        mle_apx_paper_iterate(est, max_iter=d - 1)


# -- the two printed Eq. 14 --------------------------------------------------------------------
def test_arxiv_formula_sums_to_one_on_any_support_and_is_exact_on_the_optimal_one():
    rng = np.random.default_rng(3)
    for kind in KINDS:
        est = sample(kind, 1.5, 40, 5_000, rng)
        for _ in range(20):
            sup = rng.random(40) < rng.uniform(0.1, 1.0)
            sup[rng.integers(40)] = True
            assert abs(mle_apx_formula_arxiv(est, sup).sum() - 1) < 1e-12
        f = mle_apx(est)
        np.testing.assert_allclose(mle_apx_formula_arxiv(est, np.flatnonzero(f > 0)), f, atol=1e-13)


def test_ndss_formula_sums_to_one_only_when_one_minus_p_minus_q_is_zero():
    rng = np.random.default_rng(4)
    for kind, expect_one in (("oue", False), ("grr", False), ("blh", False), ("sue", True)):
        est = sample(kind, 1.0, 30, 5_000, rng)
        sup = mle_apx(est) > 0
        total = mle_apx_formula_ndss(est, sup).sum()
        if expect_one:
            assert abs(total - 1) < 1e-12
            np.testing.assert_allclose(mle_apx_formula_ndss(est, sup), mle_apx(est), atol=1e-12)
        else:  # off by far more than rounding (1e-12)
            assert abs(total - 1) > 1e-6, (kind, total)
    # an engineered support where the error is large: Σ_{D1} f̃ = 1.4 under OUE
    est = Estimate.from_frequencies([0.8, 0.6, -0.2, -0.2], 1000, 1.0, *pq("oue", 1.0, 4), "oue")
    assert abs(mle_apx_formula_ndss(est, [0, 1]).sum() - 1) > 0.05
    assert abs(mle_apx_formula_arxiv(est, [0, 1]).sum() - 1) < 1e-14
    # ... or when Σ_{D1} f̃ = 1 (then x = 0 and both formulas return f̃)
    est = Estimate.from_frequencies([0.5, 0.3, 0.2], 1000, 1.0, *pq("oue", 1.0, 3), "oue")
    np.testing.assert_allclose(mle_apx_formula_ndss(est, [0, 1, 2]), [0.5, 0.3, 0.2], atol=1e-14)


def test_ndss_formula_with_corrected_denominator_is_the_arxiv_one():
    """x_NDSS = −x_arXiv: NDSS's f formula at −x_arXiv reproduces arXiv Eq. 14 (so only NDSS's x
    denominator is misprinted)."""
    est = sample("oue", 2.0, 50, 5_000, np.random.default_rng(5))
    p, q = est.p, est.q
    sup = mle_apx(est) > 0
    m = sup.sum()
    a = est.counts / est.n - q
    x_arxiv = (a[sup].sum() - (p - q)) / ((p - q) * (1 - p - q) + m * q * (1 - q))
    y = -x_arxiv
    f_ndss = (q * (1 - q) * y + est.f_tilde[sup] * (p - q)) / (p - q - (p - q) * (1 - p - q) * y)
    np.testing.assert_allclose(f_ndss, mle_apx_formula_arxiv(est, sup)[sup], atol=1e-13)


# -- special cases -------------------------------------------------------------------------------
@pytest.mark.parametrize("kind,d", [("sue", 50), ("grr", 2)])
def test_equals_norm_sub_when_p_plus_q_is_one(kind, d):
    est = sample(kind, 1.0, d, 10_000, np.random.default_rng(6))
    assert abs(est.p + est.q - 1) < 1e-15
    np.testing.assert_allclose(mle_apx(est), norm_sub(est), atol=1e-13)


def test_registered_and_weakly_order_preserving_form():
    est = sample("oue", 0.5, 200, 10_000, np.random.default_rng(8))
    f = postprocess(est, "mle-apx")
    np.testing.assert_array_equal(f, mle_apx(est))
    np.testing.assert_allclose(postprocess(est, "mle-apx-paper"), f, atol=1e-13)
    # f = max(γ f̃ + δ, 0) with γ > 0: fit γ, δ on the support
    sup = f > 0
    gamma, delta = np.polyfit(est.f_tilde[sup], f[sup], 1)
    assert gamma > 0
    np.testing.assert_allclose(np.maximum(gamma * est.f_tilde + delta, 0), f, atol=1e-10)


# -- bad input -----------------------------------------------------------------------------------
def test_bad_input():
    est = sample("oue", 1.0, 5, 100, np.random.default_rng(9))
    with pytest.raises(ValueError, match="method"):
        mle_apx(est, method="newton")
    with pytest.raises(ValueError, match="support"):
        mle_apx_formula_arxiv(est, np.zeros(5, dtype=bool))
    with pytest.raises(ValueError, match="support"):
        mle_apx_formula_ndss(est, [0, 7])
    with pytest.raises(ValueError, match="max_iter"):
        mle_apx_paper(est, max_iter=0)
    with pytest.raises(TypeError, match="Estimate"):
        mle_apx(np.ones(5) / 5)
    with pytest.raises(ValueError, match="shape"):
        mle_gradient(est, np.ones(4))
    degenerate = Estimate.from_counts([3, 4, 5], 10, 1.0, 0.7, 0.0, "x")  # q = 0
    with pytest.raises(ValueError, match="0 < q and p < 1"):
        mle_apx(degenerate)
    degenerate = Estimate.from_counts([3, 4, 5], 10, 1.0, 1.0, 0.2, "x")  # p = 1
    with pytest.raises(ValueError, match="0 < q and p < 1"):
        mle_apx_paper(degenerate)
