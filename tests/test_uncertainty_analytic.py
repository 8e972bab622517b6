"""Analytic covariance of f̃ (Base, Norm) against the enumerated joint law, and against the bootstrap."""

import numpy as np
import pytest

from ldpopt import oracles
from ldpopt.oracles.jointlaw import count_moments
from ldpopt.uncertainty import analytic, intervals
from ldpopt.uncertainty.analytic import pair_parameters, query_variance, variance_line
from ldpopt.uncertainty.resample import draw_counts

SYMMETRIC = ["grr", "oue", "sue", "olh", "blh", "ss"]


def _exact_cov_f(oracle, tc):
    """Cov f̃ from the enumerated law of the counts (the independent reference)."""
    _, C = count_moments(oracle, tc)
    n = tc.sum()
    return C / (n * (oracle.p - oracle.q)) ** 2


@pytest.mark.parametrize("name", SYMMETRIC)
def test_covariance_structure_matches_enumerated_joint_law(name):
    d = 6
    o = oracles.get(name, 1.0, d)
    tc = np.array([5, 0, 3, 1, 0, 11])
    est = o.estimate(np.full(d, 3), int(tc.sum()))
    f = tc / tc.sum()
    S = _exact_cov_f(o, tc)
    P = np.eye(d) - 1.0 / d
    U = np.array([[1, 1, 0, 0, 0, 0], [0, 1, 0, 1, 1, 0], [1, 1, 1, 1, 1, 1], [0, 0, 0, 0, 0, 1]])
    np.testing.assert_allclose(query_variance(est, "base", f), np.diag(S), rtol=1e-10)
    np.testing.assert_allclose(query_variance(est, "base", f, U), np.einsum("iv,vw,iw->i", U, S, U),
                               rtol=1e-9, atol=1e-15)
    SN = P @ S @ P
    np.testing.assert_allclose(query_variance(est, "norm", f), np.diag(SN), rtol=1e-9, atol=1e-15)
    np.testing.assert_allclose(query_variance(est, "norm", f, U), np.einsum("iv,vw,iw->i", U, SN, U),
                               rtol=1e-9, atol=1e-15)


def test_hr_has_no_pair_form_and_says_so():
    o = oracles.get("hr", 1.0, 6)
    est = o.estimate(np.full(6, 3), 10)
    assert pair_parameters(est) is None
    with pytest.raises(ValueError, match="bootstrap"):
        query_variance(est, "norm", np.full(6, 1 / 6))
    # per-value Base is still analytic (Eq. 2), and intervals() falls back to the bootstrap for Norm
    assert intervals(est, "base").interval == "normal"
    assert intervals(est, "norm", n_resamples=20).interval == "basic"


@pytest.mark.parametrize("name", ["grr", "oue", "olh", "sue", "blh"])
def test_batched_draws_have_the_joint_law(name):
    """draw_counts (B rows at once) has the enumerated mean and covariance (joint, not marginal)."""
    d = 5
    o = oracles.get(name, 1.0, d)
    tc = np.array([40, 0, 25, 10, 5])
    mu, C = count_moments(o, tc)
    X = draw_counts(o, tc, 40000, np.random.default_rng(3)).astype(float)
    se_mean = np.sqrt(np.diag(C) / X.shape[0])
    assert np.all(np.abs(X.mean(0) - mu) < 5 * se_mean)
    emp = np.cov(X, rowvar=False)
    scale = np.sqrt(np.outer(np.diag(C), np.diag(C)))
    # sd of a sample covariance ≈ scale·√(2/B) at most; 6 sd
    assert np.all(np.abs(emp - C) < 6 * scale * np.sqrt(2 / X.shape[0]))


@pytest.mark.parametrize("name", ["grr", "oue", "olh"])  # SS: structure checked by enumeration above; its sample_counts loops over B (slow)
@pytest.mark.parametrize("method", ["base", "norm"])
def test_analytic_se_agrees_with_bootstrap(name, method):
    """The bootstrap sd is within Monte-Carlo error (relative sd √(1/(2(B−1)))) of the analytic SE."""
    d, n = 30, 20000
    f = np.arange(d, 0, -1.0) ** 1.2
    f /= f.sum()
    o = oracles.get(name, 2.0, d)
    est = o.simulate(np.round(f * n).astype(np.int64), 7)
    B = 3000
    a = analytic(est, method, 0.9)
    b = intervals(est, method, 0.9, interval="normal", n_resamples=B, rng=11)
    rel = b.se / a.se - 1
    tol = 4.5 * np.sqrt(1 / (2 * (B - 1)))
    assert np.max(np.abs(rel)) < tol
    # and the same for subset sums (rank-2 covariance terms matter here)
    Q = [np.arange(0, 10), np.arange(5, 30), np.arange(d)[::3]]
    aq = analytic(est, method, 0.9, queries=Q)
    bq = intervals(est, method, 0.9, query=Q, interval="normal", n_resamples=B, rng=12)
    assert np.max(np.abs(bq.se / aq.se - 1)) < tol


def test_analytic_is_the_score_interval():
    """The end points are the roots of (T − F)² = z²·Var(F) with Var(F) the exact variance at the
    answer F itself (query_variance, checked against the enumerated law above, at an f whose entry is
    F), and T lies inside."""
    d = 10
    o = oracles.get("grr", 3.0, d)
    est = o.simulate(np.arange(d) * 100, 0)
    z = 1.6448536269514722
    for method in ("base", "norm"):
        r = analytic(est, method, 0.9)
        T = r.values
        for F in (r.lo, r.hi):
            g = np.clip(F, 0, 1)
            for v in range(d):
                if F[v] < 0 or F[v] > 1:
                    continue
                f = np.full(d, (1 - g[v]) / (d - 1))
                f[v] = g[v]
                var = query_variance(est, method, f)[v]
                np.testing.assert_allclose((T[v] - F[v]) ** 2, z * z * var, rtol=1e-9)
        assert np.all((r.lo <= T) & (T <= r.hi)) and np.all(r.bias == 0)
    r = analytic(est, "norm", 0.9)
    np.testing.assert_allclose(r.values, est.f_tilde + (1 - est.f_tilde.sum()) / 10)
    assert r.confidence_interval.low is r.lo and r.standard_error is r.se
    with pytest.raises(ValueError, match="method must declare a linear form"):
        analytic(est, "norm-sub")


@pytest.mark.parametrize("name", ["grr", "oue", "ss"])
@pytest.mark.parametrize("method", ["base", "norm"])
def test_variance_line_is_the_exact_variance(name, method):
    """α + β·(uᵀf) equals query_variance(f) for random f on the simplex, per value and per 0-1 row."""
    d = 8
    o = oracles.get(name, 1.0, d)
    est = o.estimate(np.full(d, 3), 1000)
    U = np.array([[1, 1, 0, 0, 0, 0, 0, 0], [0, 1, 0, 1, 1, 0, 1, 0], [1] * 8, [0] * 7 + [1]])
    g = np.random.default_rng(0)
    for _ in range(3):
        f = g.dirichlet(np.ones(d))
        a, b = variance_line(est, method)
        np.testing.assert_allclose(a + b * f, query_variance(est, method, f), rtol=1e-10)
        a, b = variance_line(est, method, U)
        np.testing.assert_allclose(a + b * (U @ f), query_variance(est, method, f, U), rtol=1e-9, atol=1e-15)


@pytest.mark.parametrize("level", [0.0, 1.0, 2.0, -0.5, float("nan")])
def test_analytic_refuses_a_level_outside_0_1(level):
    """A level outside (0, 1) is an error naming it, never NaN bounds (intervals and bootstrap refuse
    it the same way)."""
    est = oracles.get("oue", 1.0, 6).simulate(np.array([400, 250, 150, 100, 60, 40]) * 10, rng=0)
    with pytest.raises(ValueError, match="level must lie strictly between 0 and 1"):
        analytic(est, "norm", level=level)
