"""The expected-O(d) pivot search (ldpopt.methods.threshold) against references independent of it:
the projection against exact rationals (d ≤ 50) and a textbook sort-and-scan written from Held, Wolfe &
Crowder / Duchi et al. (any d); MLE-Apx against its KKT conditions and against the Brent λ-search
(``method="brentq"``, another algorithm for the same problem).

The pivot loop only runs above ``SMALL`` candidates; to exercise every branch at small d the tests
also run with ``SMALL`` and the first sample shrunk, and with a first pivot forced into the support
(the "bad guess" branch)."""

from __future__ import annotations

import zlib

import numpy as np
import pytest

from _reference import exact_projection, pq
from ldpopt import Estimate
from ldpopt.methods import mle
from ldpopt.methods import threshold
from ldpopt.methods.normalize import norm_sub, project_simplex, simplex_shift
from ldpopt import methods

EPS64 = np.finfo(float).eps


@pytest.fixture(params=["default", "tiny-small", "bad-first-pivot"])
def regime(request, monkeypatch):
    if request.param != "default":
        monkeypatch.setattr(threshold, "SMALL", 3)
        monkeypatch.setattr(threshold, "FIRST", 5)
        monkeypatch.setattr(threshold, "SAMPLE", 3)
    if request.param == "bad-first-pivot":
        monkeypatch.setattr(threshold, "_first_pivot", lambda y, theta, rng: float(np.max(y)))
    return request.param


def vectors(seed: int):
    rng = np.random.default_rng(seed)
    d = int(rng.choice([1, 2, 3, 7, 50, 300, 5000]))
    kind = seed % 6
    if kind == 0:
        y = rng.normal(size=d)
    elif kind == 1:                                   # heavy ties
        y = np.round(rng.normal(size=d), 1)
    elif kind == 2:                                   # all equal
        y = np.full(d, 0.25)
    elif kind == 3:                                   # all negative
        y = -np.abs(rng.normal(size=d)) - 1.0
    elif kind == 4:                                   # LDP-like: noise around a sparse Zipf head
        y = rng.normal(scale=1e-3, size=d)
        y[: min(d, 20)] += 0.5 / np.arange(1, min(d, 20) + 1)
    else:                                             # few distinct values, big and small
        y = rng.choice([-3.0, 0.0, 1e-9, 0.5, 2.0], size=d)
    total = float(rng.choice([1e-17, 5e-324, 1e-9, 0.3, 1.0, 7.0, 1e3]))
    return y, total


def textbook_shift(y, total):
    """τ of the projection onto {f ≥ 0, Σf = total} by sort and scan (Duchi et al. 2008, Fig. 1):
    ρ = max{k : u_k − (Σ_{i≤k} u_i − total)/k > 0} over u sorted decreasing."""
    u = np.sort(np.asarray(y, float))[::-1]
    css = np.cumsum(u) - total
    k = np.arange(1, u.size + 1)
    rho = int(np.flatnonzero(u - css / k > 0)[-1]) + 1 if np.any(u - css / k > 0) else 1
    return css[rho - 1] / rho


@pytest.mark.parametrize("seed", range(60))
def test_projection_agrees_with_a_textbook_sort_and_exact_rationals(seed, regime):
    y, total = vectors(seed)
    out = project_simplex(y, total)
    scale = max(1.0, float(np.max(np.abs(y))), total)
    tol = 4 * y.shape[0] * EPS64 * scale
    tau = textbook_shift(y, total)
    np.testing.assert_allclose(out, np.maximum(y - tau, 0.0), rtol=0, atol=tol + 4 * y.shape[0] * EPS64 * scale)
    assert abs(simplex_shift(y, total) - tau) <= 2 * tol
    assert out.min() >= 0.0 and abs(out.sum() - total) <= tol
    if y.shape[0] <= 50:
        exact = np.array([float(v) for v in exact_projection(y, total)])
        np.testing.assert_allclose(out, exact, rtol=0, atol=tol)


def test_projection_does_not_copy_or_modify_its_input(regime):
    y = np.random.default_rng(3).normal(size=10_000)
    keep = y.copy()
    y.flags.writeable = False                 # a write would raise
    out = project_simplex(y, 1.0)
    np.testing.assert_array_equal(y, keep)
    assert not np.shares_memory(out, y)


def test_bad_input_still_named():
    with pytest.raises(ValueError, match="x must be finite; entry 2"):
        project_simplex([0.1, 0.2, np.inf])
    with pytest.raises(ValueError, match="x must be 1-D"):
        project_simplex(np.ones((2, 2)))
    with pytest.raises(ValueError, match="x must be 1-D and non-empty"):
        project_simplex([])


def sample(kind, eps, d, n, rng) -> Estimate:
    p, q = pq(kind, eps, d)
    f = rng.dirichlet(np.full(d, 0.3))
    counts = rng.binomial(n, q + (p - q) * f).astype(float)
    return Estimate.from_counts(counts, n, eps, p, q, oracle=kind)


@pytest.mark.parametrize("kind", ["grr", "oue", "sue", "blh"])
@pytest.mark.parametrize("eps", [0.1, 1.0, 4.0, 12.0])
@pytest.mark.parametrize("d", [2, 30, 3000])
def test_mle_apx_agrees_with_the_brent_lambda_search(kind, eps, d, regime):
    rng = np.random.default_rng(zlib.crc32(repr((kind, eps, d)).encode()))  # the same draws in every process
    for n in (10, 10_000, 10**9):
        est = sample(kind, eps, d, n, rng)
        out = mle.mle_apx(est)
        # the support found by bisection on λ (no pivot search), then x from it: the same support
        # gives the same numbers to rounding, another support numbers far apart
        other = mle.mle_apx(est, method="brentq")
        np.testing.assert_allclose(out, other, rtol=0, atol=8 * d * EPS64)
        assert out.min() >= 0.0 and abs(out.sum() - 1.0) <= 8 * d * EPS64


def test_norm_sub_and_mle_apx_at_large_d_take_the_pivot_path_and_agree_with_the_references():
    # LDP-shaped input at d = 2·10⁵ (the real first pivot, pool and loop)
    rng = np.random.default_rng(11)
    d, n = 200_000, 10**7
    for kind in ("oue", "grr"):
        est = sample(kind, 1.0, d, n, rng)
        f = norm_sub(est)
        np.testing.assert_allclose(f, np.maximum(est.f_tilde - textbook_shift(est.f_tilde, 1.0), 0.0),
                                   rtol=0, atol=64 * EPS64)
        g = methods.get("mle-apx").func(est)
        np.testing.assert_allclose(g, mle.mle_apx(est, method="brentq"), rtol=0, atol=8 * d * EPS64)
