"""A linear method's form (``ldpopt.methods.linear.Centring``): its variance formulas against an
independent dense computation, U·M·Σ·Mᵀ·Uᵀ with Σ built entry by entry from the count covariance,
on generated forms, sources, truths and query rows; and the registry's forms against the methods'
own outputs."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from ldpopt import methods, oracles
from ldpopt.methods.linear import Centring
from ldpopt.noise import CountCovariance


def _dense_sigma(cov: CountCovariance, d: int, f: np.ndarray) -> np.ndarray:
    sig = np.empty((d, d))
    a, b = cov.pair if cov.pair is not None else (0.0, 0.0)
    for u in range(d):
        for v in range(d):
            if u == v:
                sig[u, v] = cov.kappa * (cov.A + cov.B * f[u]) + cov.noise_var / cov.n**2
            else:
                sig[u, v] = cov.kappa * (a + b * (f[u] + f[v]))
    return sig


@st.composite
def cases(draw):
    d = draw(st.integers(2, 9))
    theta = draw(st.sampled_from([0.0, 1.0, draw(st.floats(0.0, 1.0))]))
    raw = np.array(draw(st.lists(st.floats(0.01, 1.0), min_size=d, max_size=d)))
    f = raw / raw.sum()
    cov = CountCovariance(kappa=draw(st.floats(1e-5, 1e-2)), A=draw(st.floats(0.0, 0.5)),
                          B=draw(st.floats(-0.5, 0.5)),
                          pair=(draw(st.floats(-0.2, 0.2)), draw(st.floats(-0.2, 0.2))),
                          noise_var=draw(st.sampled_from([0.0, draw(st.floats(0.0, 50.0))])), n=1000, how="drawn")
    m = draw(st.integers(1, 5))
    U = np.array(draw(st.lists(st.lists(st.integers(0, 1), min_size=d, max_size=d), min_size=m, max_size=m)),
                 dtype=float)
    return d, theta, f, cov, U


@given(cases())
@settings(max_examples=examples(60), deadline=None)
def test_variance_and_line_match_the_dense_covariance(case):
    d, theta, f, cov, U = case
    M = np.eye(d) - theta * np.ones((d, d)) / d
    full = M @ _dense_sigma(cov, d, f) @ M.T
    form = Centring(theta)
    np.testing.assert_allclose(form.query_variance(cov, d, f), np.diag(full), rtol=1e-9, atol=1e-15)
    np.testing.assert_allclose(form.query_variance(cov, d, f, U), np.diag(U @ full @ U.T), rtol=1e-9, atol=1e-15)
    alpha, beta = form.line(cov, d, U)
    np.testing.assert_allclose(alpha + beta * (U @ f), np.diag(U @ full @ U.T), rtol=1e-9, atol=1e-15)
    alpha, beta = form.line(cov, d)
    np.testing.assert_allclose(alpha + beta * f, np.diag(full), rtol=1e-9, atol=1e-15)


def test_without_pair_terms_only_the_identity_single_values_are_exact():
    cov = CountCovariance(kappa=1e-3, A=0.2, B=0.1, pair=None, noise_var=0.0, n=1000, how="diagonal only")
    f = np.full(4, 0.25)
    np.testing.assert_allclose(Centring(0.0).query_variance(cov, 4, f), 1e-3 * (0.2 + 0.1 * f))
    with pytest.raises(ValueError, match="not analytic"):
        Centring(1.0).query_variance(cov, 4, f)
    with pytest.raises(ValueError, match="not analytic"):
        Centring(0.0).line(cov, 4, np.ones((1, 4)))


@pytest.mark.parametrize("bad", [-0.1, 1.5, float("nan"), "1"])
def test_theta_outside_the_unit_interval_is_refused(bad):
    with pytest.raises(ValueError, match="theta"):
        Centring(bad)


@pytest.mark.parametrize("oracle", ["grr", "oue", "olh", "ss"])
def test_each_declared_form_is_the_methods_output(oracle):
    est = oracles.get(oracle, 1.0, 7).simulate(np.array([500, 300, 100, 50, 30, 15, 5]), rng=3)
    declared = [name for name in methods.names() if methods.get(name).linear is not None]
    assert {"base", "norm"} <= set(declared)
    for name in declared:
        np.testing.assert_allclose(methods.get(name).linear.apply(est.f_tilde), methods.postprocess(est, name),
                                   rtol=0, atol=1e-15)
