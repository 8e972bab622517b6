"""Closed-form methods (baseline.py, normalize.py, mle.py): every registry claim checked.

Estimates come from hypothesis (support fractions r_v = c_v/n ∈ [0, 1], so counts are valid) in
several shapes: random, all-negative (r_v < q), all-equal, one-dominant, d = 2; p, q from GRR, OUE,
SUE (p + q = 1) and BLH (p + q > 1) with ε ∈ [0.1, 8].
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.stats import norm as normal

from conftest import examples
from ldpopt import Estimate
from ldpopt.methods import get, postprocess
from ldpopt.methods.baseline import cut_threshold
from ldpopt.methods.normalize import project_simplex, simplex_shift
from _reference import pq

METHODS = ["base", "base-pos", "base-cut", "norm", "norm-mul", "norm-cut", "norm-sub", "norm-hyb",
           "mle-apx", "mle-apx-paper"]


def make(r, kind="oue", eps=1.0, n=10_000) -> Estimate:
    r = np.asarray(r, dtype=float)
    p, q = pq(kind, eps, r.shape[0])
    return Estimate.from_counts(r * n, n, eps, p, q, kind)


def make_f(f, kind="oue", eps=1.0, n=10_000) -> Estimate:
    f = np.asarray(f, dtype=float)
    p, q = pq(kind, eps, f.shape[0])
    return Estimate.from_frequencies(f, n, eps, p, q, kind)


@st.composite
def estimates(draw, max_d=12):
    kind = draw(st.sampled_from(["grr", "oue", "sue", "blh"]))
    eps = draw(st.floats(0.1, 8.0))
    d = draw(st.integers(2, max_d))
    n = draw(st.sampled_from([1, 7, 1000, 10**6]))
    p, q = pq(kind, eps, d)
    shape = draw(st.sampled_from(["random", "negative", "equal", "dominant", "two"]))
    if shape == "two":
        d, (p, q) = 2, pq(kind, eps, 2)
    unit = st.floats(0.0, 1.0)
    if shape == "random" or shape == "two":
        r = np.array(draw(st.lists(unit, min_size=d, max_size=d)))
    elif shape == "negative":  # every f̃_v < 0
        r = np.array(draw(st.lists(st.floats(0.0, 0.999), min_size=d, max_size=d))) * q
    elif shape == "equal":
        r = np.full(d, draw(unit))
    else:
        r = np.array(draw(st.lists(st.floats(0.0, 1.0), min_size=d, max_size=d))) * q
        r[draw(st.integers(0, d - 1))] = draw(st.floats(q, 1.0))
    counts = np.round(r * n) if n > 1 else r  # integral counts most of the time
    return Estimate.from_counts(counts, n, eps, p, q, kind)


def sum_tol(est: Estimate) -> float:
    # relative 1e-12, relative to the size of the numbers summed
    return 1e-12 * max(1.0, float(np.sum(np.abs(est.f_tilde))))


# -- registry claims on hypothesis estimates ---------------------------------------------------
@settings(max_examples=examples(75), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(est=estimates())
@pytest.mark.parametrize("name", METHODS)
def test_registry_claims_hold(name, est):
    info = get(name)
    out = postprocess(est, name)
    assert out.dtype == np.float64 and out.shape == (est.d,) and np.all(np.isfinite(out))
    if info.non_negative == "yes":
        assert np.all(out >= 0)
    total = float(np.sum(out))
    if info.sums_to_one == "yes":
        assert abs(total - 1.0) <= sum_tol(est)
    elif info.sums_to_one == "almost":
        assert total <= 1.0 + sum_tol(est)
    # order: sort by f̃; outputs must not decrease ("yes"/"weak")
    ft = est.f_tilde
    order = np.argsort(ft, kind="stable")
    fo, oo = ft[order], out[order]
    if info.order_preserving in ("yes", "weak"):
        assert np.all(np.diff(oo) >= -1e-13 * max(1.0, np.max(np.abs(oo))))
        same = np.diff(fo) == 0
        if name not in ("mle-apx", "mle-apx-paper"):  # MLE works on counts; f̃ ties may round apart
            assert np.all(np.diff(oo)[same] == 0)
    if info.order_preserving == "yes":
        # strict where the gap in f̃ is above the rounding of f̃ + δ
        big = np.diff(fo) > 1e-12 * max(1.0, np.max(np.abs(oo)))
        assert np.all(np.diff(oo)[big] > 0)


# -- "no" claims: a counterexample each ----------------------------------------------------------
NEG = make_f([0.7, 0.5, -0.1, -0.1])  # Σ = 1, two negatives


def test_non_negativity_fails_where_claimed():
    for name in ("base", "norm"):
        assert get(name).non_negative == "no"
        assert np.min(postprocess(NEG, name)) < 0


def test_sum_to_one_fails_where_claimed():
    assert get("base").sums_to_one == "no"
    assert abs(postprocess(make_f([0.5, 0.2, 0.1]), "base").sum() - 1) > 0.1
    assert postprocess(NEG, "base-pos").sum() == pytest.approx(1.2)  # positive bias
    est = make_f([0.7, 0.25, 0.02, 0.01, 0.02], eps=1.0, n=100)
    t = cut_threshold(est)
    assert 0.02 < t < 0.25  # so 0.02, 0.01, 0.02 are cut
    assert postprocess(est, "base-cut").sum() == pytest.approx(0.95)


def test_weak_order_counterexamples_create_ties():
    """'weak' methods tie distinct estimates (all at 0): documented counterexamples to strictness."""
    est = make_f([0.6, 0.5, -0.2, -0.1])
    for name in ("base-pos", "base-cut", "norm-mul", "norm-cut", "norm-sub", "mle-apx", "mle-apx-paper"):
        assert get(name).order_preserving == "weak"
        out = postprocess(est, name)
        assert out[2] == out[3] == 0.0, name  # f̃_2 < f̃_3 but f'_2 = f'_3


def test_norm_hyb_is_not_order_preserving():
    """Registry says 'no' (arXiv §3.6 says all methods preserve order): the documented example."""
    assert get("norm-hyb").order_preserving == "no"
    est = make_f([0.3, 0.29, -0.5, -0.5])
    out = postprocess(est, "norm-hyb", k=1)
    np.testing.assert_allclose(out, [0.3, 0.7, 0.0, 0.0], atol=1e-15)
    assert est.f_tilde[1] < est.f_tilde[0] and out[1] > out[0]


# -- Base, Base-Pos, Base-Cut ------------------------------------------------------------------
def test_base_and_base_pos_values():
    np.testing.assert_array_equal(postprocess(NEG, "base"), NEG.f_tilde)
    np.testing.assert_array_equal(postprocess(NEG, "base-pos"), [0.7, 0.5, 0, 0])


def test_cut_threshold_matches_eq9():
    est = make(np.linspace(0, 0.5, 100), "oue", 1.0, 50_000)
    p, q = est.p, est.q
    sigma = np.sqrt(q * (1 - q) / (50_000 * (p - q) ** 2))
    for alpha in (2.0, 0.05, 10.0):
        assert cut_threshold(est, alpha) == pytest.approx(normal.ppf(1 - alpha / 100) * sigma, rel=1e-12)
    assert cut_threshold(est, 0.05) > cut_threshold(est, 2.0)
    out = postprocess(est, "base-cut", alpha=0.05)
    t = cut_threshold(est, 0.05)
    np.testing.assert_array_equal(out, np.where(est.f_tilde >= t, est.f_tilde, 0.0))


def test_base_cut_large_alpha_is_base_pos():
    est = make_f([0.6, 0.5, -0.05, -0.05])  # α = 3 ≥ d/2: T < 0, negatives still cut
    assert cut_threshold(est, 3.0) < 0
    np.testing.assert_array_equal(postprocess(est, "base-cut", alpha=3.0), postprocess(est, "base-pos"))


# -- Norm, Norm-Mul ------------------------------------------------------------------------------
def test_norm_is_identity_when_sum_is_one_and_shifts_otherwise():
    np.testing.assert_allclose(postprocess(NEG, "norm"), NEG.f_tilde, atol=1e-16)
    est = make_f([0.5, 0.2, 0.1, 0.0])
    np.testing.assert_allclose(postprocess(est, "norm"), [0.55, 0.25, 0.15, 0.05], atol=1e-15)


def test_norm_mul_values_and_all_negative_choice():
    np.testing.assert_allclose(postprocess(NEG, "norm-mul"), [0.7 / 1.2, 0.5 / 1.2, 0, 0], rtol=1e-15)
    est = make_f([-0.1, -0.2, -0.3])
    np.testing.assert_array_equal(postprocess(est, "norm-mul"), np.full(3, 1 / 3))


# -- Norm-Cut: when exactly it falls short of 1 ------------------------------------------------
@settings(max_examples=examples(100), deadline=None)
@given(est=estimates())
def test_norm_cut_shortfall_condition(est):
    f = est.f_tilde
    out = postprocess(est, "norm-cut")
    pos = np.maximum(f, 0)
    if pos.sum() <= 1:
        np.testing.assert_array_equal(out, pos)  # sum = Σ max(f̃, 0): short by 1 − Σ⁺
        return
    kept = out > 0
    assert np.all(out[kept] == f[kept])
    assert out.sum() <= 1 + 1e-12
    cut = (f > 0) & ~kept
    assert cut.any()
    if kept.any():  # kept values form a tie-closed top set
        assert f[kept].min() > f[cut].max()
    else:
        assert f.max() > 1 or np.sum(f[f == f.max()]) > 1
    # maximality: adding back the largest cut tie group overshoots 1
    group = f == f[cut].max()
    assert out.sum() + f[group].sum() > 1


def test_norm_cut_sums_to_one_only_by_coincidence():
    np.testing.assert_allclose(postprocess(make_f([0.5, 0.5, -0.1]), "norm-cut").sum(), 1.0, atol=1e-15)
    out = postprocess(make_f([0.6, 0.3, 0.2, -0.1]), "norm-cut")
    np.testing.assert_allclose(out, [0.6, 0.3, 0, 0], atol=1e-16)  # sum 0.9 < 1
    out = postprocess(make_f([0.5, 0.3, 0.1, -0.1]), "norm-cut")
    assert out.sum() == pytest.approx(0.9)  # Σ⁺ = 0.9 ≤ 1: only negatives cut
    out = postprocess(make_f([1.1, 0.1, -0.2], eps=2.0), "norm-cut")
    np.testing.assert_array_equal(out, 0.0)  # max f̃ > 1: everything cut


def test_norm_cut_keeps_ties_together():
    out = postprocess(make_f([0.6, 0.3, 0.3, -0.2]), "norm-cut")
    np.testing.assert_allclose(out, [0.6, 0, 0, 0])  # 0.6 + 0.3 + 0.3 > 1: both 0.3 cut


# -- Norm-Sub = Euclidean projection (brute force over supports) ----------------------------------
def brute_projection(y: np.ndarray, total: float) -> np.ndarray:
    """Enumerate supports S, solve min ‖f − y‖ s.t. Σ_S f = total, f = 0 off S; keep the best feasible."""
    d = y.shape[0]
    best, best_obj = None, np.inf
    for k in range(1, d + 1):
        for S in itertools.combinations(range(d), k):
            S = list(S)
            f = np.zeros(d)
            f[S] = y[S] - (y[S].sum() - total) / k
            if np.all(f >= -1e-12):
                obj = float(np.sum((f - y) ** 2))
                if obj < best_obj - 1e-15:
                    best, best_obj = f, obj
    return best


@settings(max_examples=examples(60), deadline=None)
@given(y=st.lists(st.floats(-3, 3), min_size=1, max_size=8), total=st.sampled_from([1.0, 0.3, 2.5]))
def test_project_simplex_equals_brute_force(y, total):
    y = np.array(y)
    np.testing.assert_allclose(project_simplex(y, total), brute_projection(y, total), atol=1e-12)


@settings(max_examples=examples(40), deadline=None)
@given(est=estimates(max_d=8))
def test_norm_sub_is_projection_of_f_tilde(est):
    out = postprocess(est, "norm-sub")
    ref = brute_projection(est.f_tilde, 1.0)
    np.testing.assert_allclose(out, ref, atol=1e-12 * max(1, np.abs(est.f_tilde).max()))
    # Norm-Sub's δ: f' = max(f̃ + δ, 0), δ = −τ
    np.testing.assert_allclose(out, np.maximum(est.f_tilde - simplex_shift(est.f_tilde), 0), atol=1e-15)


def test_project_simplex_large_random_sums_exactly():
    y = np.random.default_rng(3).normal(0, 0.01, 200_000)
    f = project_simplex(y)
    assert abs(f.sum() - 1) < 1e-12 and f.min() >= 0
    tau = simplex_shift(y)
    assert np.all(f[y > tau] == y[y > tau] - tau)


def test_project_simplex_edge_cases():
    np.testing.assert_array_equal(project_simplex([0.2, 0.5], 0.0), [0, 0])
    np.testing.assert_allclose(project_simplex([5.0]), [1.0])
    np.testing.assert_allclose(project_simplex([0.4, 0.4, 0.4]), [1 / 3] * 3)


# -- Norm-Hyb rules ------------------------------------------------------------------------------
def test_norm_hyb_keeps_values_above_threshold():
    rng = np.random.default_rng(5)
    f = np.concatenate([[0.3, 0.2], rng.normal(0, 0.01, 98)])
    est = make_f(f, "oue", 1.0, 100_000)
    t = cut_threshold(est)
    out = postprocess(est, "norm-hyb")
    keep = f >= t
    assert keep.sum() >= 2 and f[keep].sum() <= 1
    np.testing.assert_array_equal(out[keep], f[keep])
    np.testing.assert_allclose(out[~keep], project_simplex(f[~keep], 1 - f[keep].sum()), atol=1e-15)
    assert abs(out.sum() - 1) < 1e-12


def test_norm_hyb_over_one_rule_and_k():
    f = [0.5, 0.4, 0.3, -0.1, -0.1]
    est = make_f(f)
    out = postprocess(est, "norm-hyb", k=3)  # top-3 sum 1.2 > 1: keep top-2 (0.9 < 1)
    np.testing.assert_allclose(out, [0.5, 0.4, 0.1, 0, 0], atol=1e-15)
    out = postprocess(est, "norm-hyb", k=1)
    np.testing.assert_allclose(out[0], 0.5)
    np.testing.assert_allclose(out[1:], project_simplex(f[1:], 0.5), atol=1e-15)
    # ties at the k-th value are kept together: k = 2 with 0.2 tied keeps three values (sum 0.9),
    # the remaining -0.1 is projected onto total 0.1
    est = make_f([0.5, 0.2, 0.2, -0.1])
    out = postprocess(est, "norm-hyb", k=2)
    np.testing.assert_allclose(out, [0.5, 0.2, 0.2, 0.1], atol=1e-15)


# -- bad input -----------------------------------------------------------------------------------
@pytest.mark.parametrize("alpha", [0, -1, 4.5, 5, float("nan"), float("inf")])
def test_bad_alpha(alpha):
    est = make_f([0.5, 0.3, 0.1, 0.1])
    with pytest.raises(ValueError, match="alpha"):
        postprocess(est, "base-cut", alpha=alpha)
    with pytest.raises(ValueError, match="alpha"):
        postprocess(est, "norm-hyb", alpha=alpha)


def test_bad_k_and_types():
    est = make_f([0.5, 0.3, 0.1, 0.1])
    for k in (0, 5, -1):
        with pytest.raises(ValueError, match="k must"):
            postprocess(est, "norm-hyb", k=k)
    with pytest.raises(TypeError, match="k must"):
        postprocess(est, "norm-hyb", k=1.5)
    with pytest.raises(ValueError, match="alpha or k"):
        postprocess(est, "norm-hyb", alpha=1.0, k=2)
    with pytest.raises(TypeError, match="alpha"):
        postprocess(est, "base-cut", alpha="2")
    from ldpopt.methods.normalize import norm_sub
    with pytest.raises(TypeError, match="Estimate"):
        norm_sub(np.array([0.5, 0.5]))
    with pytest.raises(ValueError, match="total"):
        project_simplex([0.1, 0.2], -1)
    with pytest.raises(ValueError, match="finite"):
        project_simplex([0.1, np.nan])
