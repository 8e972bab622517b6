"""Power, PowerNS, Calibrate (Wang et al. arXiv §3.2 Eq. 10, NDSS §IV-E; Jia & Gong §III).

Fast paths against slow, obviously-correct references (full sums over every count, log-space),
the two papers' estimators against each other, Table-1 properties, prior fits on data simulated from
the prior (5-sigma tolerances), Jia & Gong's noise claim, and bad input.
"""

from __future__ import annotations

import numpy as np
import pytest
from scipy import optimize

from ldpopt.estimate import Estimate
from ldpopt.methods.bayes import engine as core
from ldpopt.methods import get, postprocess
from ldpopt.methods.bayes import posterior as bayes


# -- helpers ---------------------------------------------------------------------------------------
def oue_estimate(true_counts, eps, seed):
    """OUE (p = 1/2, q = 1/(e^ε + 1)) support counts sampled exactly: Bin(t, p) + Bin(n − t, q)."""
    rng = np.random.default_rng(seed)
    tc = np.asarray(true_counts, dtype=np.int64)
    n = int(tc.sum())
    p, q = 0.5, 1.0 / (np.exp(eps) + 1.0)
    c = rng.binomial(tc, p) + rng.binomial(n - tc, q)
    return Estimate.from_counts(c, n, eps, p, q, oracle="oue")


def zipf_counts(d, n, a, seed):
    rng = np.random.default_rng(seed)
    w = np.arange(1, d + 1, dtype=np.float64) ** -a
    return rng.multinomial(n, w / w.sum())


def simplex_by_sort(y):
    """Independent sort-based Euclidean projection onto the probability simplex."""
    u = np.sort(y)[::-1]
    css = np.cumsum(u) - 1.0
    k = np.arange(1, len(y) + 1)
    rho = np.flatnonzero(u - css / k > 0)[-1]
    return np.maximum(y - css[rho] / (rho + 1), 0.0)


def rel_err(a, b):
    return float(np.max(np.abs(np.asarray(a) / np.asarray(b) - 1.0)))


CASES = [  # d, n, epsilon, s — small n so the O(n d) references stay cheap
    (40, 3000, 1.0, 1.5),
    (400, 20000, 1.0, 0.7),     # enough distinct f̃ for the interpolation path
    (200, 10000, 5.0, 2.5),
    (50, 2000, 0.001, 1.2),     # σn ≫ n: every count is in the window
    (30, 500, 20.0, 1.0),       # σn ≪ 1: the posterior is (almost) a point mass
    (60, 4000, 1.0, 40.0),      # large s: prior mass almost all at k = 1
]


# -- fast vs reference ---------------------------------------------------------------------------
@pytest.mark.parametrize("d,n,eps,s", CASES)
def test_power_and_calibrate_match_references(d, n, eps, s):
    est = oue_estimate(zipf_counts(d, n, 1.2, seed=d), eps, seed=n)
    ref = bayes.power_reference(est, s)
    assert np.all(np.isfinite(ref))
    assert rel_err(bayes.power(est, s=s), ref) <= 1e-9
    assert rel_err(bayes.calibrate(est, "power-law", s=s), bayes.calibrate_reference(est, "power-law", s=s)) <= 1e-9
    assert rel_err(bayes.power_ns(est, s=s) + 1.0, simplex_by_sort(ref) + 1.0) <= 1e-9


@pytest.mark.parametrize("d,n,eps", [(40, 3000, 1.0), (300, 20000, 2.0), (30, 500, 20.0), (40, 2000, 0.001)])
def test_calibrate_gaussian_matches_reference(d, n, eps):
    est = oue_estimate(np.random.default_rng(d).poisson(n / d, size=d), eps, seed=1)
    n = est.n
    for mu, tau in [(n / d, 0.3 * n / d + 1.0), (0.0, 5.0), (n / 2, n / 10)]:
        fast = bayes.calibrate(est, "gaussian", mu=mu, tau=tau)
        ref = bayes.calibrate_reference(est, "gaussian", mu=mu, tau=tau)
        # posterior means can be exactly 0 (mass only at k = 0): compare with an absolute floor 1/n²
        assert np.all(np.abs(fast - ref) <= 1e-9 * np.abs(ref) + 1e-300)


def test_interpolation_path_is_used_and_exact():
    """Dense f̃: far fewer exact evaluations than values, same answer as the exact path."""
    est = oue_estimate(zipf_counts(3000, 200000, 1.1, seed=3), 1.0, seed=4)
    x, S = est.f_tilde * est.n, bayes.noise_sd_counts(est)
    prior = core.Prior("power-law", est.n, s=1.3)
    calls = []
    real = core.exact_logsums

    def spy(xs, *a, **k):
        calls.append(len(xs))
        return real(xs, *a, **k)

    core.exact_logsums = spy
    try:
        fast = core.logsums(x, S, prior, ("z", "k", "l1", "l2"))
    finally:
        core.exact_logsums = real
    assert sum(calls) < len(np.unique(x)) / 3
    sub = np.random.default_rng(0).choice(len(x), 400, replace=False)
    exact = real(x[sub], S, prior, ("z", "k", "l1", "l2"))
    assert np.max(np.abs(fast[sub, 1:] - fast[sub, :1] - (exact[:, 1:] - exact[:, :1]))) <= 1e-11
    assert np.max(np.abs(fast[sub, 0] - exact[:, 0]) / (1 + np.abs(exact[:, 0]))) <= 1e-11


def test_truncation_window_is_provably_negligible():
    """Terms outside the window are below e^{-T} times the largest term (checked by brute force)."""
    n, S = 5000, 300.0
    prior = core.Prior("power-law", n, s=1.7)
    x = np.array([-2000.0, -10.0, 0.0, 1.0, 40.0, 700.0, 2500.0, 4999.0, 7000.0])
    lo, hi = core.windows(x, S, prior)
    k = np.arange(1, n + 1, dtype=np.float64)
    for xi, a, b in zip(x, lo, hi):
        phi = -((k - xi) ** 2) / (2 * S * S) - 1.7 * np.log(k)
        outside = (k < a) | (k > b)
        if outside.any():
            assert phi[outside].max() < phi.max() - core._tail_T(n) + 1e-9


def _mp_logsums(x, S, prior, moments):
    """mpmath: log Σ_k μ_m(k) exp(φ_x(k)) − G(x) over the whole support, from the float inputs."""
    import mpmath

    with mpmath.workdps(60):
        xm, Sm = mpmath.mpf(float(x)), mpmath.mpf(float(S))
        ks = range(prior.kmin, prior.n + 1)
        if prior.kind == "power-law":
            lw = [-mpmath.mpf(prior.s) * mpmath.log(k) for k in ks]
        else:
            lw = [-((k - mpmath.mpf(prior.mu)) ** 2) / (2 * mpmath.mpf(prior.tau) ** 2) for k in ks]
        phi = [-((k - xm) ** 2) / (2 * Sm ** 2) + w for k, w in zip(ks, lw)]
        # G(x) (module doc of engine) in multiprecision: c, v, A and the nearest support point
        if prior.kind == "power-law":
            c, v, A = xm, Sm ** 2, 0
        else:
            a, b = Sm ** 2, mpmath.mpf(prior.tau) ** 2
            c, v, A = (prior.mu * a + xm * b) / (a + b), a * b / (a + b), -((xm - prior.mu) ** 2) / (2 * (a + b))
        kr = min(max(int(mpmath.nint(c)), prior.kmin), prior.n)
        G = -((kr - c) ** 2) / (2 * v) + A
        mult = {"z": lambda k: 1, "k": lambda k: k, "k2": lambda k: k * k,
                "l1": lambda k: mpmath.log(k), "l2": lambda k: mpmath.log(k) ** 2}
        return [float(mpmath.log(mpmath.fsum(mult[m](k) * mpmath.exp(f) for k, f in zip(ks, phi))) - G)
                for m in moments]


@pytest.mark.parametrize("kind,x,S", [
    ("power-law", 2.0e5, 9e-9),        # OUE ε = 50, f̃ = 2 at n = 1000 scale: point mass at n
    ("power-law", 1000.0 + 1e16, 1e8),  # far outside, posterior on n − j ∝ e^{−j}: not a point mass
    ("power-law", -3e15, 6e7),          # far below k = 1
    ("power-law", 500.3, 1e-7),         # inside, tiny S
    ("gaussian", 1000.0 + 1e16, 1e8),
    ("gaussian", -2e15, 5e7),
])
def test_relative_logsums_far_outside_support_match_mpmath(kind, x, S):
    """|L| ≈ 5e15 or more there: the absolute sums cannot hold the ratios, the relative ones must."""
    n = 1000
    prior = core.Prior(kind, n, s=1.3, mu=300.0, tau=2e7)
    moments = ("z", "k", "k2", "l1", "l2") if kind == "power-law" else ("z", "k", "k2")
    fast = core.exact_logsums(np.array([x]), S, prior, moments, relative=True)[0]
    ref = np.array(_mp_logsums(x, S, prior, moments))
    assert np.all(np.abs(fast - ref) <= 1e-12 * (1 + np.abs(ref)))
    # the window is a handful of points next to the nearest end, not all of [kmin, n]
    lo, hi = core.windows(np.array([x]), S, prior)
    if abs(x) > 1e6:
        assert hi[0] - lo[0] < 200


def test_power_far_outside_support_matches_mpmath_reference():
    """f̃·n = n + 10¹⁶ with σn = 10⁸: posterior on n − j ∝ e^{−j}, mean n − 1/(e − 1); the float64
    reference loses it (terms ≈ −5e15), the multiprecision one and the fast path do not."""
    n, p, q = 1000, 2e-13, 1e-13
    ft = np.array([1e13, 0.99999 * 1e13, 0.5, 1e-3, -1.0])
    est = Estimate.from_frequencies(ft, n, float(np.log(2.0)), p, q, oracle="test")
    S = bayes.noise_sd_counts(est)
    assert S == pytest.approx(1e8, rel=1e-6)
    ref = bayes.power_reference(est, 1.5, dps=60)
    fast = bayes.power(est, s=1.5)
    assert rel_err(fast, ref) <= 1e-9
    # ≈ geometric posterior: mean n − r/(1 − r), r ≈ e^{−1}(1 + 1.5/n) (prior ratio (n/(n−1))^1.5)
    r = np.exp(-1.0) * (1 + 1.5 / n)
    assert (1.0 - ref[0]) * n == pytest.approx(r / (1 - r), rel=1e-4)
    assert np.all(np.diff(fast[[4, 3, 2, 1, 0]]) > 0)              # order preserved
    # the mpmath path of the reference agrees with the float64 one where the latter is fine
    est2 = oue_estimate(zipf_counts(6, 300, 1.2, seed=5), 1.0, seed=6)
    assert rel_err(bayes.power_reference(est2, 1.2, dps=30), bayes.power_reference(est2, 1.2)) <= 1e-12


def test_power_order_preserved_above_one_and_cheap_at_huge_n():
    """OUE at ε = 50: f̃ = 2 must map to ≈ 1 (≥ Power(f̃ = 1)); at n = 10⁹ the windows stay small."""
    from ldpopt import oracles

    for n in (10**5, 10**9):
        est = oracles.get("oue", 50.0, 8).estimate([0, n, n // 2, 1, 0, n, 3, n // 3], n)
        f = postprocess(est, "power", s=1.5)
        assert f[1] == f[5] and f[1] == pytest.approx(1.0, abs=1e-12) and f[1] >= f[2]
        assert f[2] == pytest.approx(1.0, abs=1e-12) and f[7] == pytest.approx(2 * (n // 3) / n, rel=1e-12)
        lo, hi = core.windows(est.f_tilde * n, bayes.noise_sd_counts(est), core.Prior("power-law", n, s=1.5))
        assert np.max(hi - lo) < 1000


def test_prior_log_moments_euler_maclaurin_match_direct_sums():
    """Σ k^{−a} (log k)^j, j = 0..2 (prior moments in the s fit, O(1) in n) vs the direct sums."""
    for n in (2001, 100_000):
        k = np.arange(1, n + 1, dtype=np.float64)
        lk = np.log(k)
        for a in (0.0, 0.5, 1.0, 1.5, 3.0, 10.0):
            got = bayes._power_log_sums(a, n)
            w = k ** -a
            for g, ref in zip(got, ((w).sum(), (w * lk).sum(), (w * lk * lk).sum())):
                assert g == pytest.approx(ref, rel=1e-12)


# -- the two papers coincide -----------------------------------------------------------------------
def test_power_equals_calibrate_power_law():
    """Wang Eq. 10 (f̃·n, σn) and Jia & Gong Eq. 3/11/12/14 (support counts) give the same numbers,
    through two independent brute-force references, and the fast paths agree incl. the MLE fit."""
    est = oue_estimate(zipf_counts(120, 8000, 1.3, seed=7), 2.0, seed=8)
    for s in (0.0, 1.0, 1.9, 6.0):
        assert rel_err(bayes.power_reference(est, s), bayes.calibrate_reference(est, "power-law", s=s)) <= 1e-11
    assert rel_err(bayes.power(est, fit="mle"), bayes.calibrate(est, "power-law", fit="mle")) <= 1e-12
    # Eq. 7 × n is Eq. 14
    assert bayes.noise_sd_counts(est) ** 2 == pytest.approx(est.sigma2 * est.n ** 2, rel=1e-13)


# -- Table-1 properties ----------------------------------------------------------------------------
def test_power_positive_and_order_preserving():
    est = oue_estimate(zipf_counts(800, 50000, 1.1, seed=11), 1.0, seed=12)
    f = bayes.power(est, s=1.4)
    assert np.all(f >= 1.0 / est.n * (1 - 1e-12))          # prior support k ≥ 1
    order = np.argsort(est.f_tilde, kind="stable")
    ft, fp = est.f_tilde[order], f[order]
    strict = np.diff(ft) > 0
    assert np.all(np.diff(fp)[strict] > 0)
    assert np.all(np.diff(fp)[~strict] == 0)
    info = get("power")
    assert (info.non_negative, info.sums_to_one, info.order_preserving) == ("yes", "no", "yes")


def test_power_ns_sums_to_one():
    est = oue_estimate(zipf_counts(500, 30000, 1.2, seed=13), 0.5, seed=14)
    f = postprocess(est, "power-ns", s=1.2)
    assert np.all(f >= 0)
    assert f.sum() == pytest.approx(1.0, abs=1e-12)
    assert get("power-ns").sums_to_one == "yes"


def test_n_equals_one():
    est = Estimate.from_counts([1, 0], 1, 1.0, 0.5, 1 / (1 + np.e), oracle="oue")
    assert np.array_equal(bayes.power(est, s=2.0), np.ones(2))    # only count 1 has prior mass
    assert np.allclose(bayes.power_ns(est, s=2.0), [0.5, 0.5])


# -- prior fits ------------------------------------------------------------------------------------
def simulate_from_prior(draw_counts, d, n, eps, seed):
    """Jia & Gong's generative model: f ~ p_f, f̂ = f + N(0, Eq. 14). Returns (estimate, f)."""
    rng = np.random.default_rng(seed)
    p, q = 0.5, 1.0 / (np.exp(eps) + 1.0)
    S = np.sqrt(n * q * (1 - q)) / (p - q)
    k = draw_counts(rng)
    x = k + rng.normal(0.0, S, size=d)
    return Estimate.from_frequencies(x / n, n, eps, p, q, oracle="oue"), k


def test_power_law_mle_recovers_exponent():
    d, n, s0 = 4000, 100000, 1.8
    logk = np.log(np.arange(1, n + 1))
    pk = np.exp(-s0 * logk)
    pk /= pk.sum()
    est, _ = simulate_from_prior(lambda r: r.choice(np.arange(1, n + 1), size=d, p=pk), d, n, 3.0, 21)
    s_hat = bayes.fit_power_law(est, fit="mle")
    _, h = bayes._score_power(est.f_tilde * est.n, bayes.noise_sd_counts(est), n, s_hat)
    se = 1.0 / np.sqrt(-h)                                   # observed-information standard error
    assert abs(s_hat - s0) <= 5 * se                         # 5-sigma
    assert se < 0.1                                          # and the test has power


def test_power_law_mle_matches_brute_force_likelihood():
    est = oue_estimate(zipf_counts(150, 5000, 1.5, seed=31), 3.0, seed=32)
    s_fast = bayes.fit_power_law(est, fit="mle")
    res = optimize.minimize_scalar(lambda s: -bayes.loglik_reference(est, "power-law", s=s),
                                   bounds=(0.0, 10.0), method="bounded", options={"xatol": 1e-9})
    assert s_fast == pytest.approx(res.x, abs=1e-5)


def test_mean_variance_power_law_solves_eq17():
    est = oue_estimate(zipf_counts(300, 20000, 1.2, seed=41), 1.0, seed=42)
    s = bayes.fit_power_law(est, fit="mean-variance")
    k = np.arange(1, est.n + 1, dtype=np.float64)
    w = k ** -s
    assert (k * w).sum() / w.sum() == pytest.approx(np.mean(est.f_tilde * est.n), rel=1e-9)


def test_gaussian_prior_fits_recover_parameters():
    d, n, mu0, tau0 = 3000, 200000, 5000.0, 800.0
    est, _ = simulate_from_prior(lambda r: np.clip(np.rint(r.normal(mu0, tau0, size=d)), 0, n), d, n, 2.0, 51)
    S = bayes.noise_sd_counts(est)
    v = tau0 ** 2 + S ** 2
    se_mu, se_tau = np.sqrt(v / d), np.sqrt(v * v / (2 * d)) / tau0   # delta method on τ² = v − S²
    for fit in ("mle", "mean-variance"):
        mu, tau = bayes.fit_gaussian(est, fit=fit)
        assert abs(mu - mu0) <= 5 * se_mu
        assert abs(tau - tau0) <= 5 * se_tau


def test_gaussian_mle_is_a_stationary_point_of_brute_force_likelihood():
    est = oue_estimate(np.random.default_rng(61).poisson(60, size=100), 2.0, seed=62)
    mu, tau = bayes.fit_gaussian(est, fit="mle")
    f0 = bayes.loglik_reference(est, "gaussian", mu=mu, tau=tau)
    for dmu, dtau in [(1, 0), (-1, 0), (0, 1), (0, -1)]:
        assert bayes.loglik_reference(est, "gaussian", mu=mu + 0.5 * dmu, tau=tau * (1 + 0.01 * dtau)) <= f0 + 1e-9


# -- Jia & Gong's noise claim (§III-B, §IV-B) -------------------------------------------------------
def test_noise_claim_predicted_vs_fitted():
    d, n = 2000, 200000
    tc = zipf_counts(d, n, 1.1, seed=71)
    est = oue_estimate(tc, 1.0, seed=72)
    r = bayes.noise_check(est, tc)
    pv = r["predicted_var"]
    assert abs(r["fitted_mean"]) <= 5 * np.sqrt(r["exact_pooled_var"] / d)
    # Var of a sample variance of d Gaussians ≈ 2v²/d; Eq. 14 drops the f_v term of Eq. 2
    assert abs(r["fitted_var"] - r["exact_pooled_var"]) <= 5 * r["exact_pooled_var"] * np.sqrt(2 / d)
    assert abs(r["exact_pooled_var"] / pv - 1) <= 2.0 / d


# -- bad input -------------------------------------------------------------------------------------
def test_bad_input():
    est = oue_estimate(zipf_counts(20, 500, 1.2, seed=81), 1.0, seed=82)
    with pytest.raises(ValueError, match="s must be >= 0"):
        bayes.power(est, s=-0.5)
    with pytest.raises(ValueError, match="s must be finite"):
        bayes.power(est, s=float("nan"))
    with pytest.raises(TypeError, match="s must be a real number"):
        bayes.power(est, s="1.5")
    with pytest.raises(ValueError, match="prior must be one of"):
        bayes.calibrate(est, prior="laplace")
    with pytest.raises(ValueError, match="fit must be one of"):
        bayes.power(est, fit="em")
    with pytest.raises(ValueError, match="s_bounds"):
        bayes.power(est, s_bounds=(2.0, 1.0))
    with pytest.raises(ValueError, match="tau must be > 0"):
        bayes.calibrate(est, "gaussian", mu=10.0, tau=0.0)
    with pytest.raises(ValueError, match="mu and tau apply"):
        bayes.calibrate(est, "power-law", mu=1.0)
    with pytest.raises(TypeError, match="estimate must be an ldpopt.Estimate"):
        bayes.power(np.array([0.5, 0.5]), s=1.0)
    with pytest.raises(ValueError, match="must be finite"):
        Estimate.from_frequencies([0.5, float("nan")], 100, 1.0, 0.5, 0.25)


def test_power_sum_euler_maclaurin_matches_direct_sum():
    """H_n(a) used by the mean-variance fit: Euler–Maclaurin tail vs the direct sum."""
    for n in (2001, 100_000):
        k = np.arange(1, n + 1, dtype=np.float64)
        for a in (-1.0, 0.0, 0.5, 1.0, 1.0 + 1e-9, 1.5, 3.0, 10.0):
            assert bayes._power_sum(a, n) == pytest.approx(np.sum(k ** -a), rel=1e-12)


@pytest.mark.parametrize("kind,n,S,s", [
    ("power-law", 10**6, 1.44e5, 2.3),   # GRR, d = 1024, ε = 0.2: the window is all of [1, n]
    ("power-law", 10**6, 1.86e4, 1.5),   # GRR, ε = 1
    ("power-law", 300_000, 5000.0, 0.7),
    ("power-law", 10**6, 3000.0, 9.5),   # steep prior: the head k < 1000 dominates
    ("power-law", 10**6, 1e7, 1.1),      # S ≫ n
    ("gaussian", 10**6, 5e4, 0.0),
])
def test_euler_maclaurin_tail_matches_direct_sums(kind, n, S, s):
    """The long-window path (Euler–Maclaurin above k = 1000) against the plain windowed sums."""
    rng = np.random.default_rng(11)
    prior = core.Prior(kind, n, s=s, mu=2e5, tau=3e5)
    x = np.r_[rng.uniform(-5 * S, n + 5 * S, 40), 0.5, 1.0, 999.5, 1000.0, n, n + 3 * S, -3 * S]
    moments = ("z", "k", "l1", "l2") if kind == "power-law" else ("z", "k", "k2")
    lo, hi = core.windows(x, S, prior)
    assert np.any(hi - np.maximum(lo, core.EM_START) + 1 >= core.EM_MIN_TERMS)  # the path is taken
    fast = core.exact_logsums(x, S, prior, moments, relative=True)
    direct = core.exact_logsums(x, S, prior, moments, relative=True, tail_em=False)
    assert np.all(np.abs(fast - direct) <= 1e-14 * (1 + np.abs(direct)))


def test_euler_maclaurin_tail_matches_mpmath():
    """One long window summed in 50-digit arithmetic, term by term."""
    import mpmath

    n, S = 60_000, 4000.0
    prior = core.Prior("power-law", n, s=1.7)
    x = np.array([25_000.3])
    lo, hi = core.windows(x, S, prior)
    assert hi[0] - max(lo[0], core.EM_START) + 1 >= core.EM_MIN_TERMS
    fast = core.exact_logsums(x, S, prior, ("z", "k", "l1"), relative=True)[0]
    with mpmath.workdps(50):
        ks = range(int(lo[0]), int(hi[0]) + 1)
        c, kr = mpmath.mpf(x[0]), int(prior.kref(x)[0])
        terms = [(k, mpmath.exp(-(k - kr) * (k + kr - 2 * c) / (2 * mpmath.mpf(S) ** 2)
                                - mpmath.mpf(1.7) * mpmath.log(k))) for k in ks]
        ref = [float(mpmath.log(mpmath.fsum(f * m(k) for k, f in terms)))
               for m in (lambda k: 1, lambda k: k, mpmath.log)]
    assert np.all(np.abs(fast - np.array(ref)) <= 1e-14 * (1 + np.abs(ref)))


@pytest.mark.parametrize("n", [0, 1, 5, 1000, 10**6])
def test_gaussian_prior_normaliser_matches_direct_sums(n):
    """log C, E[k], E[k²] of the Gaussian prior by the windowed engine vs the plain O(n) sums."""
    for mu in (-5e3, -3.0, 0.0, 0.4, 7.0, n / 3, n, n + 50.0, 2.0 * n + 1e4):
        for tau in (1e-3, 0.5, 3.0, 100.0, 2e3, 5e4, 1e7):
            fast = np.array(bayes._prior_gauss_moments(n, mu, tau))
            ref = np.array(bayes._prior_gauss_moments_direct(n, mu, tau))
            assert np.all(np.abs(fast - ref) <= 1e-12 * (1 + np.abs(ref))), (n, mu, tau, fast, ref)
