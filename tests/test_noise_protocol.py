"""The noise protocol (ldpopt.noise): every source answers it, features ask it, and check_mechanism
catches a source whose statements disagree with its sampler."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ldpopt
from ldpopt import Estimate, oracles
from ldpopt.noise import AdditiveNoise, NoiseSource, SupportCounts
from ldpopt.privacy.central import MECHANISMS, CentralNoise
from ldpopt.testing import check_mechanism


class Geometric(AdditiveNoise):
    """The two-sided geometric mechanism of Ghosh, Roughgarden & Sundararajan (STOC 2009), written
    independently of ldpopt's discrete Laplace: P(k) = (1 − α)/(1 + α) α^|k|, α = e^−ε."""

    discrete = True
    likelihood = "laplace"

    def __init__(self, epsilon: float):
        self.epsilon, self.alpha = float(epsilon), math.exp(-float(epsilon))
        self.name = f"geometric:{epsilon:g}"

    def noise_variance(self):
        return 2 * self.alpha / (1 - self.alpha) ** 2

    def noise_logpdf(self, k):
        return math.log((1 - self.alpha) / (1 + self.alpha)) - self.epsilon * np.abs(np.asarray(k, float))

    def noise_sample(self, size, rng):
        return (rng.geometric(1 - self.alpha, size) - rng.geometric(1 - self.alpha, size)).astype(float)

    def privacy_statement(self):
        return {"model": "central", "mechanism": self.name, "scale": 1 / self.epsilon, "epsilon": self.epsilon,
                "delta": 0.0, "relation": "add-remove"}


class HalfVariance(Geometric):      # planted: forgets the factor 2 of the variance
    def noise_variance(self):
        return self.alpha / (1 - self.alpha) ** 2


class Overclaims(Geometric):        # planted: states a smaller ε than the pmf gives
    def privacy_statement(self):
        return {**super().privacy_statement(), "epsilon": 0.8 * self.epsilon}


class WrongSampler(Geometric):      # planted: rounded normal draws of about the right variance, not its law
    def noise_sample(self, size, rng):
        return np.round(rng.normal(0.0, math.sqrt(self.noise_variance()), size))


def test_a_source_of_ones_own_passes_every_check():
    assert set(check_mechanism(Geometric(0.5), reps=1000).values()) == {"passed"}


@pytest.mark.parametrize("planted, check", [(HalfVariance, "covariance"), (Overclaims, "privacy"),
                                            (WrongSampler, "law")])
def test_check_mechanism_catches_a_planted_defect(planted, check):
    with pytest.raises(AssertionError, match=f"fails {check}"):
        check_mechanism(planted(0.5), checks=[check], reps=1000)


@pytest.mark.parametrize("name", sorted(MECHANISMS))
def test_every_central_mechanism_conforms(name):
    report = check_mechanism(CentralNoise(name, 2.0), reps=1000)
    assert report["covariance"] == report["law"] == report["likelihood"] == "passed"
    assert report["privacy"] == ("passed" if MECHANISMS[name].discrete else report["privacy"])


@pytest.mark.parametrize("name", ["grr", "oue", "olh", "ss"])
def test_oracles_answer_the_protocol(name):
    o = oracles.get(name, 1.0, 5)
    assert isinstance(o, NoiseSource) and o.support_counts and not o.additive
    assert check_mechanism(o, checks=["interface", "covariance"], d=5, reps=400) == {
        "interface": "passed", "covariance": "passed"}


def test_check_mechanism_refuses_bad_arguments():
    with pytest.raises(TypeError, match="source must be a NoiseSource"):
        check_mechanism(object())
    with pytest.raises(ValueError, match="checks must be among"):
        check_mechanism(Geometric(1.0), checks=["speed"])
    with pytest.raises(ValueError, match="reps must be an integer >= 200"):
        check_mechanism(Geometric(1.0), reps=10)


@settings(max_examples=8, deadline=None)
@given(d=st.integers(2, 12), n=st.integers(10, 10**6), scale=st.floats(0.5, 20.0),
       name=st.sampled_from(sorted(MECHANISMS)))
def test_a_central_estimates_source_is_its_mechanism(d, n, scale, name):
    # the source an estimate finds from its record states the variance, law and privacy it was made with
    rng = np.random.default_rng(d)
    counts = rng.integers(-5, 50, d).astype(float)
    est = Estimate.from_central(counts, name, scale, n=n)
    again = Estimate(est.f_tilde, est.counts, est.n, est.epsilon, est.p, est.q, est.oracle, est.meta)  # record only
    for src in (est.noise, again.noise):
        assert isinstance(src, CentralNoise) and src.mechanism is MECHANISMS[name] and src.scale == scale
        assert src.count_covariance(n, d).e == est.meta["extra_variance"]
        assert src.privacy_statement()["epsilon"] == est.epsilon


def test_a_source_of_ones_own_makes_estimates_features_use():
    src = Geometric(0.5)
    est = Estimate.from_source(src.sample_counts(np.array([600, 250, 100, 50]), np.random.default_rng(0)), src,
                               n=1000)
    assert est.noise is src and est.as_ordered().noise is src
    r = ldpopt.uncertainty.analytic(est, "norm")
    assert np.allclose(r.se**2, src.noise_variance() / 1000**2 * (1 - 1 / 4))     # Norm: e(1 − 1/d)
    assert ldpopt.methods.get("mle-apx").why_not(est) is not None                 # not support counts
    sol = ldpopt.Problem(est, "central-mle").solve()                              # its likelihood: l1
    assert sol.status == "optimal" and abs(sol.f.sum() - 1) < 1e-9


def test_an_unregistered_oracle_is_support_counts_with_eq2_only():
    est = Estimate.from_frequencies([0.5, 0.3, 0.2], 100, epsilon=1.0, p=0.6, q=0.2, oracle="unknown")
    src = est.noise
    assert isinstance(src, SupportCounts) and src.count_covariance(100, 3).pair is None
    assert np.allclose(src.count_covariance(100, 3).variance([0.5, 0.3, 0.2]), est.variance([0.5, 0.3, 0.2]), rtol=1e-14)
    with pytest.raises(ValueError, match="not registered"):
        src.sample_counts(np.array([50, 30, 20]), np.random.default_rng(0))


def test_central_noise_of_earlier_releases_warns_and_answers():
    est = Estimate.from_central([60, 41], "gaussian", 3.0, n=100)
    from ldpopt.estimate import central_noise

    with pytest.warns(DeprecationWarning, match="Estimate.noise"):
        mech, scale = central_noise(est)
    assert mech is MECHANISMS["gaussian"] and scale == 3.0
    with pytest.warns(DeprecationWarning, match="ldpopt.privacy.central.CentralNoise"):
        from ldpopt.uncertainty.resample import CentralNoise as Old
    assert Old is CentralNoise
