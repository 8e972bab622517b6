"""ldpopt._fsum.fsum against math.fsum itself (the reference: CPython's correctly rounded sum) on
inputs that break a plain float sum: cancellation, a dynamic range from subnormals to 2⁹⁶⁰, exact
ties of the rounding, and the non-finite values and errors math.fsum gives."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ldpopt import _fsum
from ldpopt._fsum import fsum


def _reference(v):
    v = np.asarray(v, float).ravel()
    return math.fsum(v.tolist())


def _same(a: float, b: float) -> bool:
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return a == b and math.copysign(1.0, a) == math.copysign(1.0, b)


def _cases(rng):
    n = 5000  # above SMALL: the vectorised path
    x = rng.standard_normal(n // 2) * 10.0 ** rng.integers(-20, 20, n // 2)
    cancel = np.r_[x, -x, 3e-30]
    rng.shuffle(cancel)
    yield "cancellation", cancel
    yield "dynamic range", rng.standard_normal(n) * 10.0 ** rng.integers(-300, 289, n)
    yield "powers of two to 2^959", 2.0 ** rng.integers(-1074, 960, n).astype(float) * rng.choice([-1.0, 1.0], n)
    yield "subnormals", rng.integers(1, 2**52, n) * 5e-324 * rng.choice([-1.0, 1.0], n)
    yield "subnormals and normals", np.r_[rng.integers(1, 2**20, n) * 5e-324, 2.0**-1000, -(2.0**-1021)]
    # 1 + (n + 1)·2⁻⁵³ − n·2⁻⁵³: the exact sum is the tie 1 + 2⁻⁵³, which rounds to even (1.0); a
    # last 2⁻¹⁰⁷⁴ decides it either way
    ties = np.r_[np.full(n, 3 * 2.0**-53), -np.full(n, 2 * 2.0**-53), 1.0]
    yield "tie to even", ties
    yield "tie broken up", np.r_[ties, 5e-324]
    yield "tie broken down", np.r_[ties, -5e-324]
    kl = np.exp(-rng.random(n) * 700)  # a post-processed f under a KL term: 1e-300 to 1
    kl[rng.random(n) < 0.3] = 0.0
    yield "wide positive with zeros", kl
    yield "all zeros", np.zeros(n)
    yield "negative zeros", -np.zeros(n)


def test_fsum_is_math_fsum_on_adversarial_inputs():
    rng = np.random.default_rng(7)
    for name, v in _cases(rng):
        got, ref = fsum(v), _reference(v)
        assert _same(got, ref), (name, got, ref)
        if name == "cancellation":  # a plain float sum is off there: the case tests something
            assert float(np.sum(v)) != ref


@pytest.mark.parametrize("seed", range(4))
def test_fsum_is_math_fsum_on_random_mixtures(seed):
    rng = np.random.default_rng(100 + seed)
    for _ in range(40):
        n = int(rng.integers(300, 4000))
        v = rng.standard_normal(n) * 2.0 ** rng.integers(-1080, 950, n).astype(float)
        v[rng.random(n) < 0.2] = 0.0
        v = np.r_[v, -v[: n // 3]]
        assert _same(fsum(v), _reference(v))


def test_fsum_on_short_and_long_paths_and_many_chunks(monkeypatch):
    rng = np.random.default_rng(3)
    v = np.r_[rng.random(3000) * 1e-200, rng.random(3000), -rng.random(3000)]
    ref = _reference(v)
    assert _same(fsum(v[:100]), _reference(v[:100]))  # short: math.fsum itself
    monkeypatch.setattr(_fsum, "CHUNK", 1000)  # several bincount passes, their parts summed together
    assert _same(fsum(v), ref)
    monkeypatch.setattr(_fsum, "SMALL", 10**9)
    assert _same(fsum(v), ref)


@pytest.mark.parametrize("values, outcome", [
    ([np.inf], np.inf), ([-np.inf], -np.inf), ([np.nan], np.nan), ([np.inf, np.nan], np.nan),
    ([np.inf, -np.inf], ValueError), ([1e308, 1e308, -1e308], OverflowError),
])
def test_fsum_non_finite_and_errors_as_math_fsum(values, outcome):
    v = np.r_[np.ones(3000), values, -np.ones(3000)]
    if isinstance(outcome, type):
        with pytest.raises(outcome):
            math.fsum(v.tolist())
        with pytest.raises(outcome):
            fsum(v)
    else:
        assert _same(fsum(v), outcome) and _same(_reference(v), outcome)


def test_huge_values_past_the_vectorised_range_go_to_math_fsum():
    v = np.r_[np.full(3000, 2.0**1000), np.full(3000, -(2.0**1000)), 1.0]
    assert fsum(v) == 1.0 == _reference(v)
