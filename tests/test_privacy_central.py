"""ldpopt.privacy.central: each mechanism's variance, law, sampler and (ε, δ) against references that
share nothing with it (mpmath sums of the pmf, scipy quadrature of the densities' hockey-stick
divergence), on generated scales and budgets."""

from __future__ import annotations

import functools
import itertools
import math

import mpmath
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import integrate, stats

from conftest import examples
from ldpopt.privacy import central

NAMES = sorted(central.MECHANISMS)
scales = st.floats(min_value=0.2, max_value=6.0)


@functools.lru_cache(maxsize=64)
def _mp_norm(sigma: float):
    s = mpmath.mpf(sigma)
    return mpmath.nsum(lambda j: mpmath.exp(-j * j / (2 * s * s)), [-mpmath.inf, mpmath.inf])


def _mp_pmf(name: str, sigma_or_b: float, k: int):
    if name == "discrete-laplace":
        r = mpmath.exp(-1 / mpmath.mpf(sigma_or_b))
        return (1 - r) / (1 + r) * r ** abs(k)
    s = mpmath.mpf(sigma_or_b)
    return mpmath.exp(-k * k / (2 * s * s)) / _mp_norm(sigma_or_b)


@settings(max_examples=examples(15), deadline=None)
@given(name=st.sampled_from(["discrete-laplace", "discrete-gaussian"]), scale=scales)
def test_discrete_variance_and_pmf_against_mpmath(name, scale):
    m = central.get(name)
    half = int(40 * scale) + 10
    ks = list(range(-half, half + 1))
    pm = [_mp_pmf(name, scale, k) for k in ks]
    assert float(abs(mpmath.fsum(pm) - 1)) < 1e-12
    var = float(mpmath.fsum(p * k * k for p, k in zip(pm, ks)))
    assert m.variance(scale) == pytest.approx(var, rel=1e-10)
    lp = m.logpdf(np.array(ks[half - 5: half + 6], dtype=float), scale)
    assert np.allclose(lp, [float(mpmath.log(p)) for p in pm[half - 5: half + 6]], rtol=0, atol=1e-10)


@pytest.mark.parametrize("name", NAMES)
def test_continuous_density_integrates_and_variance(name):
    m = central.get(name)
    if m.discrete:
        return
    for s in (0.5, 3.0):
        mass = integrate.quad(lambda x, s=s: math.exp(float(m.logpdf(x, s))), -np.inf, np.inf)[0]
        var = integrate.quad(lambda x, s=s: x * x * math.exp(float(m.logpdf(x, s))), -np.inf, np.inf)[0]
        assert mass == pytest.approx(1, abs=1e-9) and m.variance(s) == pytest.approx(var, rel=1e-8)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("scale", [0.4, 2.5, 40.0])
def test_sampler_mean_variance_and_law(name, scale):
    m = central.get(name)
    size = 200_000
    x = m.sample(size, scale, rng=7)
    var = m.variance(scale)
    assert abs(x.mean()) < 5 * math.sqrt(var / size)
    # the variance's SE from the fourth moment (heavy Laplace tails: κ = 6)
    se = var * math.sqrt(5.0 / size)
    assert abs(x.var() - var) < 5 * se
    if m.discrete:
        assert np.all(x == np.round(x))
        ks, counts = np.unique(x, return_counts=True)
        keep = np.exp(m.logpdf(ks, scale)) * size >= 20
        expected = np.exp(m.logpdf(ks[keep], scale)) * size
        chi2 = float(((counts[keep] - expected) ** 2 / expected).sum())
        assert stats.chi2.sf(chi2, max(1, keep.sum() - 1)) > 1e-4


def _hockey_stick_continuous(m, eps, scale, shift):
    f = lambda x: max(0.0, math.exp(float(m.logpdf(x, scale))) - math.exp(eps) * math.exp(float(m.logpdf(x - shift, scale))))
    lo, hi = -60 * scale - 5, 60 * scale + 5
    return integrate.quad(f, lo, hi, points=[0.0, shift, shift / 2], limit=400, epsabs=1e-13)[0]


@settings(max_examples=examples(12), deadline=None)
@given(name=st.sampled_from(["laplace", "gaussian"]), scale=st.floats(0.3, 5.0), eps=st.floats(0.0, 3.0))
def test_continuous_delta_is_the_hockey_stick_divergence(name, scale, eps):
    m = central.get(name)
    ref = _hockey_stick_continuous(m, eps, scale, 1.0)
    assert m.delta(eps, scale) == pytest.approx(ref, abs=1e-9)
    if name == "gaussian":   # replace: two counts move, Δ₂ = √2: the same curve at shift √2 (rotation)
        assert m.delta(eps, scale, "replace") == pytest.approx(_hockey_stick_continuous(m, eps, scale, math.sqrt(2)), abs=1e-9)


@settings(max_examples=examples(12), deadline=None)
@given(name=st.sampled_from(["discrete-laplace", "discrete-gaussian"]), scale=st.floats(0.3, 4.0), eps=st.floats(0.0, 3.0))
def test_discrete_delta_is_the_hockey_stick_sum(name, scale, eps):
    m = central.get(name)
    half = int(40 * scale) + 10
    pm = {k: _mp_pmf(name, scale, k) for k in range(-half - 2, half + 3)}
    e = mpmath.exp(eps)
    ref = mpmath.fsum(max(0, pm[k] - e * pm[k - 1]) for k in range(-half, half + 1))
    assert m.delta(eps, scale) == pytest.approx(float(ref), abs=1e-12)
    if name == "discrete-gaussian":   # one count up, one down: Σ_{x1,x2} (P(x1)P(x2) − e^ε P(x1−1)P(x2+1))₊
        ks = np.arange(-half, half + 1)
        p = np.array([float(pm[int(k)]) for k in ks])
        pl = np.array([float(pm[int(k) - 1]) for k in ks])
        ph = np.array([float(pm[int(k) + 1]) for k in ks])
        ref2 = np.maximum(0, np.outer(p, p) - float(e) * np.outer(pl, ph)).sum()
        assert m.delta(eps, scale, "replace") == pytest.approx(ref2, abs=1e-10)


@settings(max_examples=examples(10), deadline=None)
@given(scale=st.floats(0.6, 1.6), eps=st.floats(0.0, 3.0), cells=st.integers(2, 3),
       relation=st.sampled_from(sorted(central.RELATIONS)))
def test_discrete_gaussian_delta_for_a_record_in_several_cells_is_the_product_hockey_stick(scale, eps, cells, relation):
    """A record counted in c cells (a hierarchy's levels): the exact δ is the hockey-stick divergence of
    the product of the moved cells' laws, enumerated here over the whole grid of their noise values
    (c cells for add-remove, 2c for replace), which shares nothing with the convolution of the code."""
    m = central.get("discrete-gaussian")
    moved = cells if relation == "add-remove" else 2 * cells
    if moved > 4:
        moved, cells = 4, 2   # a 4-dimensional grid is the largest enumerated here
    half = int(12 * scale) + 4
    ks = np.arange(-half, half + 1)
    p = np.array([float(_mp_pmf("discrete-gaussian", scale, int(k))) for k in ks])
    shifted = np.array([float(_mp_pmf("discrete-gaussian", scale, int(k) - 1)) for k in ks])
    joint_p, joint_q = p, shifted
    for _ in range(moved - 1):   # each moved cell: x vs x − 1 (a cell moved down has the same law)
        joint_p, joint_q = np.multiply.outer(joint_p, p), np.multiply.outer(joint_q, shifted)
    ref = np.maximum(0.0, joint_p - math.exp(eps) * joint_q).sum()
    got = m.delta(eps, scale, relation, contributions=cells if relation == "add-remove" else moved // 2)
    assert got == pytest.approx(ref, abs=1e-9)


@settings(max_examples=examples(15), deadline=None)
@given(name=st.sampled_from(["laplace", "gaussian", "discrete-laplace"]), scale=st.floats(0.3, 5.0),
       cells=st.integers(1, 6), relation=st.sampled_from(sorted(central.RELATIONS)))
def test_a_record_in_several_cells_is_the_sensitivity_scaled(name, scale, cells, relation):
    """c cells each moved by 1: Laplace's pure ε is c·Δ₁/b, and the Gaussian's curve is Balle–Wang's
    at Δ₂ = √c·Δ₂ (the continuous hockey-stick integral at that shift, computed by quadrature)."""
    m = central.get(name)
    l1, l2 = central.RELATIONS[relation]
    if m.pure:
        assert m.epsilon(scale, relation=relation, contributions=cells) == pytest.approx(cells * l1 / scale)
        return
    for eps in (0.1, 1.0):
        ref = _hockey_stick_continuous(m, eps, scale, math.sqrt(cells) * l2)   # quadrature: good to ~1e-9
        assert m.delta(eps, scale, relation, contributions=cells) == pytest.approx(ref, abs=5e-9)


@settings(max_examples=examples(20), deadline=None)
@given(name=st.sampled_from(NAMES), scale=st.floats(0.3, 20.0), delta=st.sampled_from([1e-9, 1e-6, 1e-3]),
       relation=st.sampled_from(sorted(central.RELATIONS)))
def test_epsilon_inverts_delta(name, scale, delta, relation):
    m = central.get(name)
    eps = m.epsilon(scale, delta, relation)
    if m.pure and relation == "replace":   # the profile below Δ₁/b is not stated for two counts moved
        assert eps == 2.0 / scale
        return
    assert m.delta(eps, scale, relation) <= delta * (1 + 1e-6) + 1e-15
    if eps > 1e-6:
        assert m.delta(eps * (1 - 1e-4), scale, relation) >= delta * (1 - 1e-3)


def test_pure_epsilon_and_gaussian_has_no_pure_epsilon():
    assert central.get("laplace").epsilon(2.0) == 0.5
    assert central.get("discrete-laplace").epsilon(2.0, relation="replace") == 1.0
    assert central.get("gaussian").epsilon(2.0) == math.inf


@pytest.mark.parametrize(("call", "match"), [
    (lambda: central.get("laplce"), "mechanism must be one of"),
    (lambda: central.get("laplace").variance(0), "scale must be finite and > 0"),
    (lambda: central.get("gaussian").variance(float("nan")), "scale must be finite and > 0"),
    (lambda: central.get("gaussian").delta(-1, 1.0), "epsilon must be a real number >= 0"),
    (lambda: central.get("gaussian").epsilon(1.0, 1.5), r"delta must be a real number in \[0, 1\)"),
    (lambda: central.get("laplace").delta(0.1, 1.0, "swap"), "relation must be one of"),
    (lambda: central.get("laplace").sample(-1, 1.0), "size must be an integer >= 0"),
    (lambda: central.get("laplace").delta(0.5, 1.0, "replace"), "epsilon must be >= 2.0"),
    (lambda: central.get("gaussian").delta(0.5, 1.0, contributions=0), "contributions must be an integer >= 1"),
    (lambda: central.get("gaussian").epsilon(1.0, 1e-6, contributions=2.5), "contributions must be an integer >= 1"),
])
def test_bad_input_is_one_line(call, match):
    with pytest.raises(ValueError, match=match) as info:
        call()
    assert "\n" not in str(info.value)


# -- every regime: no cap below the truth, at any σ ------------------------------------------------

def _mp_gauss_delta(eps, sigma, l2=1.0):
    with mpmath.workdps(80):
        a = mpmath.mpf(l2) / (2 * mpmath.mpf(sigma))
        c = mpmath.mpf(eps) * mpmath.mpf(sigma) / l2
        return mpmath.ncdf(a - c) - mpmath.e ** mpmath.mpf(eps) * mpmath.ncdf(-a - c)


@settings(max_examples=40, deadline=None)
@given(log_sigma=st.floats(min_value=-6.0, max_value=3.0), log_delta=st.floats(min_value=-15.0, max_value=-0.5))
def test_gaussian_epsilon_is_tight_at_every_sigma_against_mpmath(log_sigma, log_delta):
    # σ <= 0.03 was stated ε = 700.0000000001 whatever σ (a cap below the truth)
    sigma, delta = 10.0**log_sigma, 10.0**log_delta
    eps = central.get("gaussian").epsilon(sigma, delta)
    assert math.isfinite(eps)
    assert _mp_gauss_delta(eps, sigma) <= delta * (1 + 1e-9)          # never below the true ε
    assert eps == 0.0 or _mp_gauss_delta(eps * (1 - 1e-6), sigma) > delta  # and tight


def test_small_scales_are_stated_above_any_cap():
    g, dg, lap = (central.get(m) for m in ("gaussian", "discrete-gaussian", "laplace"))
    eps = [g.epsilon(s, 1e-9) for s in (0.05, 0.03, 0.01, 1e-3)]
    assert all(a < b for a, b in itertools.pairwise(eps)) and eps[1] > 700
    # the discrete Gaussian at σ = 0.03: its loss at the mode is 1/(2σ²) ≈ 555.6 (almost all the mass)
    assert dg.epsilon(0.03, 1e-9) == pytest.approx(1 / (2 * 0.03**2), rel=1e-9)
    assert dg.epsilon(0.01, 1e-9) == pytest.approx(1 / (2 * 0.01**2), rel=1e-9)
    assert lap.epsilon(1e-3) == pytest.approx(1000.0)


def test_release_only_with_integer_noise():
    rng = np.random.default_rng(11)
    for name in central.MECHANISMS:
        m = central.get(name)
        counts = rng.integers(0, 1000, size=(3, 4))
        if m.discrete:
            out = m.release(counts, 2.0, rng=1)
            assert out.dtype == np.int64 and out.shape == counts.shape and m.release_safe
            assert not np.array_equal(out, counts)
        else:
            assert not m.release_safe
            with pytest.raises(ValueError, match="simulation only: floating-point noise"):
                m.release(counts, 2.0)
    with pytest.raises(ValueError, match="counts must be integers"):
        central.get("discrete-laplace").release([1.5], 2.0)
