"""Numerical domains (issue 15 item 4): Square Wave sampler and channel against the analytic law,
EM/EMS properties, the penalised likelihood against a cvxpy referee, metrics against brute force."""

import cvxpy as cp
import numpy as np
import pytest
from scipy import integrate, stats

from ldpopt.numeric import em, ems
from ldpopt.numeric.square_wave import SquareWave, sw_half_width
from ldpopt.numeric.metrics import quantile_error, range_query_error, wasserstein1
from ldpopt.numeric.em import smooth
from ldpopt.numeric.metrics import quantile
from ldpopt.numeric.penalized import choose_lambda, penalized_mle, penalized_objective


# -- the mechanism -------------------------------------------------------------------------------
@pytest.mark.parametrize("eps", [0.25, 1.0, 4.0])
def test_half_width_and_densities_are_the_papers(eps):
    e = np.exp(eps)
    b = (eps * e - e + 1) / (2 * e * (e - 1 - eps))  # the printed formula, evaluated naively
    sw = SquareWave(eps)
    assert sw.b == pytest.approx(b, rel=1e-9)
    assert sw.p / sw.q == pytest.approx(e, rel=1e-12)  # ε-LDP: the density ratio is exactly e^ε
    assert 2 * sw.b * sw.p + sw.q == pytest.approx(1.0, abs=1e-12)  # the density integrates to 1


def test_half_width_small_epsilon_tends_to_one_half():
    assert sw_half_width(1e-3) == pytest.approx(0.5, abs=1e-3)


@pytest.mark.parametrize("v", [0.0, 0.3, 1.0])
def test_sampler_matches_the_density(v):
    """KS test of 200,000 reports of one value against the piecewise-uniform CDF of M_v."""
    sw = SquareWave(1.0)
    r = sw.perturb(np.full(200_000, v), rng=7)
    lo, hi = sw.output_range
    assert r.min() >= lo and r.max() <= hi

    def cdf(t):
        t = np.clip(t, lo, hi)
        inside = np.clip(t, v - sw.b, v + sw.b) - (v - sw.b)
        return sw.q * (t - lo) + (sw.p - sw.q) * inside

    assert stats.kstest(r, cdf).pvalue > 1e-3
    # a wrong window (b 5 % too wide) must be rejected at the same sample size
    wrong = SquareWave(1.0)
    wrong.b *= 1.05
    assert stats.kstest(r, lambda t: np.clip(wrong.q * (np.clip(t, lo, hi) - lo) + (wrong.p - wrong.q) * (
        np.clip(t, v - wrong.b, v + wrong.b) - (v - wrong.b)), 0, 1)).pvalue < 1e-3


def test_binned_reports_follow_the_channel_jointly():
    """Chi-square of the binned reports of values spread uniformly over [0, 1] against K·f: the
    sampler and the exact channel agree as a joint law (many input bins at once)."""
    sw, d = SquareWave(2.0), 16
    rng = np.random.default_rng(3)
    vals = rng.random(300_000)
    f = np.histogram(vals, bins=d, range=(0, 1))[0] / vals.size
    c = sw.bin_reports(sw.perturb(vals, rng), 24)
    expected = sw.channel(d, 24) @ f * vals.size
    assert stats.chisquare(c, expected).pvalue > 1e-3
    # the test has power: the channel of a slightly different ε is rejected by the same reports
    assert stats.chisquare(c, SquareWave(1.9).channel(d, 24) @ f * vals.size).pvalue < 1e-3


def test_channel_entries_are_exact_integrals_and_columns_sum_to_one():
    sw = SquareWave(1.5)
    d, d_out = 6, 9
    K = sw.channel(d, d_out)
    assert np.allclose(K.sum(axis=0), 1.0, atol=1e-13)
    e_in, e_out = np.linspace(0, 1, d + 1), sw.output_edges(d_out)
    for j, i in [(0, 0), (4, 2), (8, 5), (2, 3)]:
        ref = integrate.quad(lambda v: integrate.quad(
            lambda r: float(sw.density(r, v)), e_out[j], e_out[j + 1], points=[v - sw.b, v + sw.b])[0],
            e_in[i], e_in[i + 1])[0] * d
        assert K[j, i] == pytest.approx(ref, rel=1e-8)
    # LDP of the discretised channel: any two inputs' probabilities of an output bin differ by ≤ e^ε
    ratio = K.max(axis=1) / K.min(axis=1)
    assert ratio.max() <= np.exp(1.5) * (1 + 1e-12)


def test_bad_inputs_raise_naming_the_argument():
    sw = SquareWave(1.0)
    with pytest.raises(ValueError, match="values"):
        sw.perturb(np.array([0.2, 1.2]), rng=1)
    with pytest.raises(ValueError, match="epsilon"):
        SquareWave(-1.0)
    with pytest.raises(ValueError, match="reports"):
        sw.bin_reports(np.array([5.0]), 8)
    with pytest.raises(ValueError, match="channel"):
        em(np.ones(4), np.ones((4, 4)))
    with pytest.raises(ValueError, match="lam"):
        penalized_mle(np.ones(4), sw.channel(4), -1.0)


# -- EM and EMS ----------------------------------------------------------------------------------
def _data(eps=1.0, d=32, n=50_000, seed=5):
    sw = SquareWave(eps)
    rng = np.random.default_rng(seed)
    vals = rng.beta(5, 2, n)
    return sw.bin_reports(sw.perturb(vals, rng), d), sw.channel(d), np.histogram(vals, bins=d, range=(0, 1))[0] / n


def test_em_is_monotone_in_likelihood_and_reaches_the_mle():
    c, K, _ = _data()
    r = em(c, K)
    assert r.converged and np.all(np.diff(r.loglik) >= -1e-9)
    assert r.f.min() >= 0 and r.f.sum() == pytest.approx(1.0, abs=1e-12)
    # the unpenalised MLE by cvxpy (referee): EM's likelihood is within its stopping tolerance region
    f = cp.Variable(K.shape[1], nonneg=True)
    prob = cp.Problem(cp.Maximize(c @ cp.log(K @ f)), [cp.sum(f) == 1])
    prob.solve(solver=cp.CLARABEL)
    assert prob.status == "optimal"
    assert r.loglik[-1] <= prob.value + 1e-6
    # EM's slow tail: the paper's rule (|ΔL| < 1e-3) stops 2.5 units (of 1.7e5) below the MLE here
    assert prob.value - 5.0 <= r.loglik[-1]


def test_ems_smoothing_step_is_the_binomial_filter():
    f = np.array([0.1, 0.2, 0.3, 0.4])
    g = np.array([(2 * .1 + .2) / 3, (.1 + .4 + .3) / 4, (.2 + .6 + .4) / 4, (2 * .4 + .3) / 3])
    assert np.allclose(smooth(f), g / g.sum())
    c, K, truth = _data(d=256, n=100_000)  # the smoothing is per bin: at d = 32 it over-smooths Beta(5, 2)
    r_ems, r_em = ems(c, K), em(c, K)
    assert r_ems.converged and r_ems.nit < r_em.nit
    assert wasserstein1(r_ems.f, truth) < wasserstein1(r_em.f, truth)  # the paper's point, on Beta(5, 2)


# -- the penalised likelihood --------------------------------------------------------------------
@pytest.mark.parametrize("lam", [1e-9, 1e-7, 1e-5])
def test_penalized_mle_matches_cvxpy(lam):
    c, K, _ = _data(d=24, n=20_000)
    r = penalized_mle(c, K, lam)
    assert r.converged and r.gap <= 1e-8
    d = K.shape[1]
    f = cp.Variable(d, nonneg=True)
    D = np.diff(np.eye(d), 2, axis=0)
    prob = cp.Problem(cp.Minimize(-(c / c.sum()) @ cp.log(K @ f) + lam * d**5 * cp.sum_squares(D @ f)),
                      [cp.sum(f) == 1])
    prob.solve(solver=cp.CLARABEL)
    assert prob.status == "optimal"
    assert r.objective == pytest.approx(penalized_objective(r.f, c, K, lam), abs=1e-12)
    assert r.objective <= prob.value + 1e-7  # certified: not worse than the referee
    assert prob.value <= r.objective + r.gap + 1e-7  # and the certificate is a true bound
    assert np.abs(r.f - f.value).max() < 1e-3


def test_choose_lambda_picks_the_best_held_out_and_smooths():
    c, K, truth = _data(d=64, n=100_000, eps=1.0)
    r = choose_lambda(c, K, rng=11)
    assert r.lam == max(r.cv, key=r.cv.get) and r.converged
    assert wasserstein1(r.f, truth) < wasserstein1(em(c, K).f, truth)


# -- metrics -------------------------------------------------------------------------------------
def test_wasserstein1_against_scipy_on_fine_samples():
    rng = np.random.default_rng(2)
    a, b = rng.dirichlet(np.ones(10)), rng.dirichlet(np.ones(10))
    # piecewise-uniform densities: scipy's W1 between weighted fine grids converges to the exact value
    m = 4000
    x = (np.arange(10 * m) + 0.5) / (10 * m)
    ref = stats.wasserstein_distance(x, x, np.repeat(a, m), np.repeat(b, m))
    assert wasserstein1(a, b) == pytest.approx(ref, abs=1e-6)
    assert wasserstein1(a, a) == 0.0
    assert wasserstein1([1, 0, 0, 0], [0, 0, 0, 1]) == pytest.approx(0.75)


def test_quantiles_and_range_queries_against_brute_force():
    f = np.array([0.0, 0.5, 0.0, 0.5])
    assert np.allclose(quantile(f, [0.25, 0.5, 0.75]), [0.375, 0.5, 0.875])
    assert quantile_error(f, f) == 0.0
    assert quantile_error([1, 0], [0, 1]) == pytest.approx(0.5)
    rng = np.random.default_rng(4)
    a, b = rng.dirichlet(np.ones(20)), rng.dirichlet(np.ones(20))
    err = range_query_error(a, b, 0.25, n_queries=50, rng=9)
    starts = np.random.default_rng(9).integers(0, 20 - 5 + 1, size=50)
    assert err == pytest.approx(np.mean([abs(a[s:s + 5].sum() - b[s:s + 5].sum()) for s in starts]))
