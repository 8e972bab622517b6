"""The power-law likelihood at many s in one pass (issue 16, ``ldpopt/methods/bayes/exponent_grid.py``)
against the engine's per-s path, and the s fit that uses it against the per-s fit (kept as
``fit_mle(..., batched=False)``): same sums to ≤ 1e-13, same s and Power output to ≤ 1e-12."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from ldpopt import oracles
from ldpopt.methods.bayes import engine as core
from ldpopt.methods.bayes import exponent_fit as pf
from ldpopt.methods.bayes import exponent_grid as pm
from ldpopt.methods.bayes import posterior as bayes

from test_bayes_fit import random_cases

GRID = np.expm1(np.linspace(0.0, np.log1p(10.0), 11))
GRID[-1] = 10.0


def per_s(x, S, n, s_arr, exact=False):
    f = core.exact_logsums if exact else core.logsums
    return np.stack([f(x, S, core.Prior("power-law", n, s=float(s)), ("z", "l1", "l2"), relative=True)
                     for s in s_arr])


def close(a, b, tol):
    # the engine's accuracy statement: log-sums to tol relative to max(1, |L|)
    assert a.shape == b.shape
    assert np.all(np.isfinite(a) == np.isfinite(b))
    fin = np.isfinite(b)
    err = np.abs(a[fin] - b[fin]) / np.maximum(1.0, np.abs(b[fin]))
    assert err.max(initial=0.0) <= tol, err.max()


# (n, S, x): long Euler–Maclaurin windows (OUE at n = 10⁶ and GRR-like σn ≫ 1000), short windows
# (large ε), x far outside [1, n] (OUE at ε = 50 puts f̃·n near 2n with S ≪ 1), n = 10⁹
CASES = [
    (10**6, 1919.0, np.r_[np.linspace(-8000, 150_000, 300), [0.0, 1.0, 999.5, 1000.0]]),
    (10**6, 1.2e5, np.linspace(-4e5, 6e5, 200)),
    (5000, 3.1, np.linspace(-20, 400, 250)),
    (10**5, 9e-9, np.array([2e5, 1.5e5, -3.0, 0.4, 7.2, 1e5 + 0.3])),
    (10**9, 4.4e4, np.linspace(-2e5, 3e6, 120)),
    (40, 0.8, np.linspace(-5, 60, 90)),
]


@pytest.mark.parametrize("case", CASES, ids=[f"n{c[0]}-S{c[1]:g}" for c in CASES])
def test_multi_exact_sums_equal_per_s_sums(case):
    n, S, x = case
    close(pm.exact_logsums(x, S, n, GRID), per_s(x, S, n, GRID, exact=True), 1e-13)


@pytest.mark.parametrize("case", CASES, ids=[f"n{c[0]}-S{c[1]:g}" for c in CASES])
def test_multi_logsums_equal_per_s_logsums(case):
    n, S, x = case
    close(pm.logsums(x, S, n, GRID), per_s(x, S, n, GRID), 1e-13)


def test_shifted_path_beyond_the_unshifted_range():
    # s·log n = 50·log 10⁹ ≈ 1036 > 600: the direct sums must take the shifted (per-s) path, else
    # n^{−s} ≈ 1e-450 underflows and L_z = −inf
    n, S, x = 10**9, 2.5, np.r_[np.linspace(1, 60, 50), [5e8, 1e9 - 3.0]]
    s = np.array([0.0, 1.0, 50.0])
    assert 50.0 * np.log(n) > pm._UNSHIFTED_MAX
    out = pm.exact_logsums(x, S, n, s)
    assert np.all(np.isfinite(out[:, :, 0]))
    close(out, per_s(x, S, n, s, exact=True), 1e-13)


def test_union_window_contains_every_s_window():
    n, v = 10**6, 1919.0 ** 2
    x = np.linspace(-8000, 150_000, 500)
    priors = [core.Prior("power-law", n, s=float(s)) for s in GRID]
    lo, hi = pm.union_windows(x, v, priors)
    for p in priors:
        l_, h_ = core._windows_c(x, v, p)
        assert np.all(lo <= l_) and np.all(hi >= h_)


def test_loglik_scores_equal_loglik_score():
    rng = np.random.default_rng(3)
    x = np.unique(np.round(rng.normal(50, 300, 4000)))
    w = rng.integers(1, 9, x.shape[0])
    got = pf.loglik_scores(x, 310.0, 20_000, GRID, w)
    for s, (ell, g, h) in zip(GRID, got):
        e0, g0, h0 = pf.loglik_score(x, 310.0, 20_000, float(s), w)
        assert ell == pytest.approx(e0, rel=1e-13, abs=1e-9)
        assert g == pytest.approx(g0, rel=1e-11, abs=1e-9 * (1 + abs(h0)))
        assert h == pytest.approx(h0, rel=1e-11, abs=1e-9)


def test_hermite_start_is_the_root_of_a_cubic_score():
    # ℓ'(s) = −(s − 0.3)(s + 2)(s + 5) is a cubic: the Hermite interpolant is ℓ' itself
    g = lambda s: -(s - 0.3) * (s + 2.0) * (s + 5.0)                         # noqa: E731
    h = lambda s: -((s + 2.0) * (s + 5.0) + (s - 0.3) * (s + 5.0) + (s - 0.3) * (s + 2.0))  # noqa: E731
    a, b = 0.0, 1.0
    s0 = pf._hermite_start(a, b, (0.0, g(a), h(a)), (0.0, g(b), h(b)))
    assert s0 == pytest.approx(0.3, abs=1e-13)
    # no root inside: None (the caller keeps the old start)
    assert pf._hermite_start(0.5, 1.0, (0.0, g(0.5), h(0.5)), (0.0, g(1.0), h(1.0))) is None


def _fit_both(est):
    """(s, at_hi) of the batched and the per-s fit, and how far apart the two may be: 1e-12·s, or,
    when ℓ is flat at its maximum, the root's own rounding limit |δℓ'|/|ℓ''| with δℓ' a few ulps
    of d·E_prior[log k] (ℓ' = d·E_prior[log k] − Σ_v E_post,v[log k] cancels there; e.g. GRR at
    d = 1024, ε = 0.2: ℓ'' ≈ −2e-3, so neither path fixes s better than ~1e-10)."""
    x, S = bayes._x(est), bayes.noise_sd_counts(est)
    new = pf.fit_mle(x, S, est.n, 0.0, 10.0)
    old = pf.fit_mle(x, S, est.n, 0.0, 10.0, batched=False)
    _, g, h = pf.loglik_score(x, S, est.n, old[0])
    _, Ap, _ = pf._prior_logk_moments(core.Prior("power-law", est.n, s=old[0]))
    g_noise = 8.0 * np.finfo(float).eps * x.shape[0] * max(abs(Ap), 1.0)
    tol = 1e-12 * max(old[0], 1e-3) + (g_noise / abs(h) if h != 0 else np.inf)
    return new, old, tol


@pytest.mark.parametrize("case", random_cases(), ids=lambda c: f"{c[0]}-d{c[1]}-n{c[2]}-e{c[3]}-a{c[4]}")
def test_batched_fit_equals_the_per_s_fit_on_the_sweep(case):
    name, d, n, eps, _, tc, seed = case
    est = oracles.get(name, epsilon=eps, d=d).simulate(tc, np.random.default_rng(seed))
    (s_new, hi_new), (s_old, hi_old), tol = _fit_both(est)
    assert hi_new == hi_old
    assert abs(s_new - s_old) <= tol


@pytest.mark.parametrize("oracle,d,n,eps", [("oue", 2000, 10**6, 1.0), ("grr", 1024, 10**6, 0.2),
                                            ("olh", 500, 10**9, 1.0), ("oue", 300, 10**4, 8.0),
                                            ("grr", 64, 10**5, 0.05)])
def test_batched_fit_and_power_equal_the_per_s_path_at_extremes(oracle, d, n, eps):
    w = np.arange(1, d + 1, dtype=np.float64) ** -1.1
    tc = np.random.default_rng(d).multinomial(n, w / w.sum())
    est = oracles.get(oracle, epsilon=eps, d=d).simulate(tc, np.random.default_rng(1), exact=False)
    (s_new, _), (s_old, _), tol = _fit_both(est)
    assert abs(s_new - s_old) <= tol
    # Power's output moves by at most |Δs|·2 log n relative (d log f'/ds = −Cov_post(k, log k)/E[k])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        np.testing.assert_allclose(bayes.power(est, s=s_new), bayes.power(est, s=s_old),
                                   rtol=1e-12 + 2.0 * np.log(n) * abs(s_new - s_old))


class _GarbageNumpy:
    """numpy, except that ``empty`` returns +inf, -inf, +inf, ... (what uninitialised memory may hold)."""

    def __getattr__(self, name):
        return getattr(np, name)

    @staticmethod
    def empty(shape, dtype=float):
        if np.dtype(dtype).kind != "f":
            return np.zeros(shape, dtype)
        return np.resize(np.array([np.inf, -np.inf], dtype=dtype), shape)


@pytest.mark.parametrize("case", CASES, ids=[f"n{c[0]}-S{c[1]:g}" for c in CASES])
def test_multi_logsums_raise_no_numpy_warning_whatever_fresh_memory_holds(case, monkeypatch):
    """The conversion of interpolated panels ran over entries not yet computed (np.empty), and
    printed "invalid value encountered in add" into reports and bootstrap runs when that memory held
    ±inf; the values kept were right, so the result must not change either."""
    n, S, x = case
    ref = pm.logsums(x, S, n, GRID)
    monkeypatch.setattr(pm, "np", _GarbageNumpy())
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        got = pm.logsums(x, S, n, GRID)
    np.testing.assert_array_equal(got, ref)
