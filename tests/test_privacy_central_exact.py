"""The exact integer samplers behind ``Mechanism.release``: their law against the pmf summed in mpmath
(independent of the code), determinism under a seed, the extremes of the scale, and bad input."""

from __future__ import annotations

import math
import time
from fractions import Fraction

import mpmath
import numpy as np
import pytest
from scipy import stats

from ldpopt.privacy import central

DRAWS = 100_000


def _pmf(name: str, scale, ks: np.ndarray) -> np.ndarray:
    # the pmf at the scale's exact value (mpf of a float or of a fraction's ratio at 40 digits)
    with mpmath.workdps(40):
        s = mpmath.mpf(scale.numerator) / scale.denominator if isinstance(scale, Fraction) else mpmath.mpf(scale)
        if name == "discrete-laplace":
            r = mpmath.exp(-1 / s)
            return np.array([float((1 - r) / (1 + r) * r ** abs(int(k))) for k in ks])
        norm = mpmath.nsum(lambda j: mpmath.exp(-j * j / (2 * s * s)), [-mpmath.inf, mpmath.inf])
        return np.array([float(mpmath.exp(-int(k) ** 2 / (2 * s * s)) / norm) for k in ks])


def _generated_cases():
    # fixed scales on both int64 and Python-int paths (0.3: a 2⁵⁴ denominator; a numerator near 2⁶¹:
    # U + tV leaves int64 after two e^{-1} successes), fractions, and scales from a seeded generator
    gen = np.random.default_rng(2026)
    drawn = [float(x) for x in gen.uniform(0.2, 9.0, size=2)]
    return ([("discrete-laplace", s) for s in (0.3, 2.0, Fraction(7, 3), Fraction(2**61 + 1, 2**60), *drawn)]
            + [("discrete-gaussian", s) for s in (0.3, 1.0, 2.5, Fraction(17, 5), Fraction(2**40 + 1, 2**39), *drawn)])


@pytest.mark.parametrize(("name", "scale"), _generated_cases())
def test_exact_release_law_is_the_pmf(name, scale):
    m = central.get(name)
    x = m.release(np.zeros(DRAWS, dtype=np.int64), scale, rng=11)
    assert x.dtype == np.int64
    half = int(50 * float(scale)) + 5
    ks = np.arange(-half, half + 1)
    p = _pmf(name, scale, ks)
    expected = p * DRAWS
    keep = expected >= 20
    observed = np.array([np.count_nonzero(x == k) for k in ks[keep]])
    # the cells with fewer than 20 expected pooled into one tail cell
    cells_obs = np.append(observed, DRAWS - observed.sum())
    cells_exp = np.append(expected[keep], DRAWS - expected[keep].sum())
    cells_obs, cells_exp = cells_obs[cells_exp > 1e-9], cells_exp[cells_exp > 1e-9]
    chi2 = float(((cells_obs - cells_exp) ** 2 / cells_exp).sum())
    assert stats.chi2.sf(chi2, max(1, cells_exp.size - 1)) > 1e-4, (chi2, cells_exp.size)
    # and the most likely cell alone, by an exact binomial test
    mode = int(np.argmax(p))
    assert stats.binomtest(int(np.count_nonzero(x == ks[mode])), DRAWS, float(p[mode])).pvalue > 1e-4


@pytest.mark.parametrize("name", ["discrete-laplace", "discrete-gaussian"])
def test_release_is_determined_by_its_seed(name):
    m = central.get(name)
    counts = np.random.default_rng(5).integers(0, 100, size=(7, 9))
    a, b, c = (m.release(counts, 3.7, rng=r) for r in (4, 4, 5))
    assert a.dtype == np.int64 and a.shape == counts.shape
    assert np.array_equal(a, b) and not np.array_equal(a, c)
    gen1, gen2 = np.random.default_rng(8), np.random.default_rng(8)
    assert np.array_equal(m.release(counts, 0.9, rng=gen1), m.release(counts, 0.9, rng=gen2))


@pytest.mark.parametrize("name", ["discrete-laplace", "discrete-gaussian"])
@pytest.mark.parametrize("scale", [1e-3, 1e6, 2.0**52])
def test_extreme_scales_are_quick_and_right(name, scale):
    m = central.get(name)
    size = 20_000
    start = time.process_time()
    x = m.release(np.zeros(size, dtype=np.int64), scale, rng=3)
    assert time.process_time() - start < 5.0
    assert x.dtype == np.int64
    if scale < 1:   # P(noise != 0) is below e^{-999}: every draw is 0
        assert not x.any()
        return
    var = m.variance(scale)
    xf = x.astype(np.float64)
    assert abs(xf.mean()) < 5 * math.sqrt(var / size)
    assert abs(xf.var() / var - 1) < 5 * math.sqrt(5.0 / size)


def test_exact_scale_is_the_floats_own_value():
    assert central.exact_scale(0.1) == Fraction(3602879701896397, 2**55)
    assert central.exact_scale(3) == Fraction(3) and central.exact_scale(Fraction(7, 3)) == Fraction(7, 3)
    gen = np.random.default_rng(1)
    for x in gen.uniform(1e-6, 1e6, size=50):
        assert central.exact_scale(float(x)) == Fraction(float(x))


@pytest.mark.parametrize(("scale", "match"), [
    (0.0, "scale must be finite and > 0"),
    (-1.0, "scale must be finite and > 0"),
    (float("nan"), "scale must be finite and > 0"),
    (float("inf"), "scale must be finite and > 0"),
    (2.0**53, r"scale must be <= 2\*\*52"),
    (Fraction(2**63 + 1, 2**62), r"numerator below 2\*\*62"),
])
@pytest.mark.parametrize("name", ["discrete-laplace", "discrete-gaussian"])
def test_bad_scale_is_refused_in_one_line(name, scale, match):
    with pytest.raises(ValueError, match=match) as info:
        central.get(name).release([1, 2], scale, rng=0)
    assert "\n" not in str(info.value)


def test_bad_counts_and_continuous_release_are_refused():
    with pytest.raises(ValueError, match="counts must be integers"):
        central.get("discrete-gaussian").release([1.5, 2.0], 1.0, rng=0)
    for name in ("laplace", "gaussian"):
        with pytest.raises(ValueError, match="simulation only"):
            central.get(name).release([1, 2], 1.0, rng=0)
