"""ldpopt.methods.deployments: Presto's clip-and-round and the Census-style NNLS against their
definitions, the NNLS cross-checked with scipy.optimize.nnls and with Problem's certified solve, the
rounding to a total against brute force, on generated noisy histograms; the old path
ldpopt.privacy.baselines warns and answers the same."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import optimize

from conftest import examples
import ldpopt
from ldpopt import Estimate
from ldpopt.estimate import simulate_central
from ldpopt.methods import deployments as baselines
from ldpopt.privacy import central
from ldpopt.problems import NonNegative, Problem, SumTo


@st.composite
def central_estimates(draw):
    d = draw(st.integers(2, 30))
    n = draw(st.integers(20, 50_000))
    mech = draw(st.sampled_from(sorted(central.MECHANISMS)))
    scale = draw(st.floats(0.5, 0.2 * n / d + 1.0))
    w = 1.0 / np.arange(1, d + 1) ** draw(st.floats(0.0, 2.0))
    counts = np.floor(n * w / w.sum()).astype(np.int64)
    counts[0] += n - counts.sum()
    return simulate_central(counts, mech, scale, rng=draw(st.integers(0, 2**31)), n_known=draw(st.booleans()))


@settings(max_examples=examples(25), deadline=None)
@given(est=central_estimates())
def test_clip_round_is_max_zero_round(est):
    out = baselines.clip_round(est) * est.n
    want = np.array([max(0, round(float(c))) for c in est.counts])   # Python's round: half to even, as numpy
    np.testing.assert_allclose(out, want, atol=1e-9 * est.n)


@settings(max_examples=examples(20), deadline=None)
@given(est=central_estimates())
def test_nnls_against_scipy(est):
    """Without the total, scipy's NNLS of the identity system; with it, scipy's NNLS of the system
    with the total row weighted 10⁴ (its residual on the total ≤ 1e-6 of n), both in counts. Without
    the total the problem has no sum constraint and goes to the interior-point QP (PIQP), whose
    certified distance |f − f*| is ≈ 2e-6 in frequency: the tolerance is 1e-5·n counts."""
    d = est.d
    free = baselines.nnls(est, total=False) * est.n
    ref, _ = optimize.nnls(np.eye(d), est.counts)
    np.testing.assert_allclose(free, ref, atol=1e-5 * est.n)
    tot = baselines.nnls(est, total=True) * est.n
    w = 1e4
    A = np.vstack([np.eye(d), w * np.ones((1, d))])
    ref, _ = optimize.nnls(A, np.concatenate([est.counts, [w * est.n]]))
    np.testing.assert_allclose(tot, ref, atol=1e-3 * np.sqrt(est.meta["extra_variance"]) * est.n + 1e-6 * est.n)
    assert abs(tot.sum() - est.n) <= 1e-8 * est.n


@settings(max_examples=examples(15), deadline=None)
@given(est=central_estimates())
def test_nnls_is_the_least_squares_problem_as_the_deployment_states_it(est):
    """The deployment's problem stated through Problem (certified) against the registered methods
    the NNLS answers with: the projection onto the simplex with the total, max(f̃, 0) without."""
    import warnings

    for total, cons in ((True, [NonNegative(), SumTo(1.0)]), (False, [NonNegative()])):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")   # the simplex dropped on purpose without the total
            sol = Problem(est, "cls", cons).solve()
        assert sol.status == "optimal"
        np.testing.assert_allclose(baselines.nnls(est, total=total), np.maximum(sol.f, 0.0), atol=1e-5)
    np.testing.assert_array_equal(baselines.nnls(est, total=False), np.maximum(est.f_tilde, 0))
    default = baselines.nnls(est)
    np.testing.assert_allclose(default, baselines.nnls(est, total=est.meta["privacy"]["n_known"]), atol=0)


@settings(max_examples=examples(30), deadline=None)
@given(c=st.lists(st.floats(0, 6, allow_nan=False), min_size=1, max_size=5), data=st.data())
def test_round_to_total_is_the_nearest_integer_vector_with_that_sum(c, data):
    c = np.array(c)
    lo, hi = int(np.floor(c).sum()), int(np.ceil(c).sum())
    total = data.draw(st.integers(lo, hi))
    got = baselines.round_to_total(c, total)
    assert got.sum() == total and np.all(np.abs(got - c) < 1 + 1e-12)
    # brute force over floor/ceil choices: the L1 and L2 distances of the rule are the least
    options = [v for v in itertools.product(*[sorted({np.floor(x), np.ceil(x)}) for x in c]) if sum(v) == total]
    best1 = min(np.abs(np.array(v) - c).sum() for v in options)
    best2 = min(((np.array(v) - c) ** 2).sum() for v in options)
    assert np.abs(got - c).sum() <= best1 + 1e-9 and ((got - c) ** 2).sum() <= best2 + 1e-9


@settings(max_examples=examples(15), deadline=None)
@given(est=central_estimates())
def test_nnls_round_releases_integers_with_the_total(est):
    out = baselines.nnls_round(est) * est.n
    np.testing.assert_allclose(out, np.round(out), atol=1e-6)
    assert out.min() >= 0 and abs(out.sum() - round(float(baselines.nnls(est).sum() * est.n))) < 1e-6


def test_registered_on_any_noisy_counts_and_bad_arguments_refused():
    est = ldpopt.oracles.get("grr", 1.0, 4).estimate(np.array([40, 30, 20, 10]), 100)
    c = est.f_tilde * est.n   # an oracle's unbiased counts: the same definitions apply
    np.testing.assert_allclose(ldpopt.postprocess(est, "clip-round"), np.maximum(np.round(c), 0) / est.n)
    np.testing.assert_array_equal(baselines.nnls(est), ldpopt.postprocess(est, "norm-sub"))  # n is known
    assert ldpopt.postprocess(est, "nnls-round").sum() == pytest.approx(1.0, abs=1e-12)
    with pytest.raises(TypeError, match="estimate must be an ldpopt.Estimate"):
        baselines.clip_round([0.5, 0.5])
    cen = Estimate.from_central([5, -1, 3], "laplace", 1.0)
    with pytest.raises(TypeError, match="total must be"):
        baselines.nnls(cen, total="yes")
    with pytest.raises(ValueError, match="total must lie in"):
        baselines.round_to_total([1.5, 2.5], 7)
    with pytest.raises(ValueError, match="counts must be"):
        baselines.round_to_total([-1.0, 2.0], 1)


def test_the_old_path_warns_and_answers_the_same():
    import importlib
    import sys

    sys.modules.pop("ldpopt.privacy.baselines", None)
    with pytest.warns(DeprecationWarning, match="ldpopt.privacy.baselines is deprecated.*ldpopt.methods.deployments"):
        old = importlib.import_module("ldpopt.privacy.baselines")
    assert old.nnls_round is baselines.nnls_round and old.round_to_total is baselines.round_to_total
