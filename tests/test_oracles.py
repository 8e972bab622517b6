"""Generic checks every registered frequency oracle must pass (issue 2).

Privacy is checked on the exact output distribution (enumeration, no sampling); unbiasedness and the
Eq. 2 variance through the real client/aggregator path; the fast path against the real path; seeds;
bad input. Statistical tolerances are 5 standard errors of the quantity tested.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from ldpopt import Estimate, oracles

NAMES = oracles.available()


def test_registry_lists_every_oracle_of_the_issue():
    assert set(NAMES) >= {"grr", "oue", "sue", "olh", "blh", "hr", "ss"}


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("d", [2, 3, 5])
@pytest.mark.parametrize("epsilon", [0.1, 1.0, 3.0])
def test_privacy_by_enumeration(name, d, epsilon):
    """max over outputs y and inputs v, v' of Pr[y|v]/Pr[y|v'] <= e^ε, with equality (tight)."""
    P = oracles.get(name, epsilon=epsilon, d=d).output_distribution()
    assert P.shape[0] == d
    assert np.all(P >= 0)
    np.testing.assert_allclose(P.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    # every output has positive probability under every input, or zero under all (else ratio = inf)
    pos = P > 0
    assert np.all(pos.all(axis=0) | ~pos.any(axis=0)), "an output is possible for one input only"
    Q = P[:, pos.any(axis=0)]
    worst = float(np.max(Q.max(axis=0) / Q.min(axis=0)))
    assert worst <= math.exp(epsilon) * (1 + 1e-12), f"{name} breaks {epsilon}-LDP: ratio {worst}"
    assert worst >= math.exp(epsilon) * (1 - 1e-9), f"{name} is not tight: ratio {worst} < e^ε"


def _zipfish(d: int, n: int) -> np.ndarray:
    w = 1.0 / np.arange(1, d + 1) ** 1.5
    counts = np.floor(n * w / w.sum()).astype(np.int64)
    counts[0] += n - counts.sum()
    counts[-1] = 0  # a zero-frequency value too
    counts[0] += n - counts.sum()
    return counts


@pytest.mark.parametrize("name", NAMES)
def test_real_path_unbiased_with_eq2_variance(name):
    d, n, reps, epsilon = 6, 3000, 300, 1.0
    o = oracles.get(name, epsilon=epsilon, d=d)
    tc = _zipfish(d, n)
    f = tc / n
    gen = np.random.default_rng(12345)
    F = np.array([o.simulate(tc, gen, exact=True).f_tilde for _ in range(reps)])
    var = o.variance(f, n)
    se_mean = np.sqrt(var / reps)
    assert np.all(np.abs(F.mean(axis=0) - f) <= 5 * se_mean), (F.mean(axis=0), f, se_mean)
    # the sample variance of R normal-ish draws has relative standard error sqrt(2/(R-1))
    ratio = F.var(axis=0, ddof=1) / var
    assert np.all(np.abs(ratio - 1) <= 5 * math.sqrt(2 / (reps - 1))), ratio


@pytest.mark.parametrize("name", NAMES)
def test_fast_path_matches_real_path_in_distribution(name):
    d, n, epsilon = 6, 2000, 1.0
    reps_real, reps_fast = 300, 3000
    o = oracles.get(name, epsilon=epsilon, d=d)
    tc = _zipfish(d, n)
    gen = np.random.default_rng(7)
    real = np.array([o.simulate(tc, gen, exact=True).counts for _ in range(reps_real)])
    fast = np.array([o.sample_counts(tc, gen) for _ in range(reps_fast)])
    # analytic moments of a support count: sum of independent Bernoulli(p) and Bernoulli(q)
    mean = tc * o.p + (n - tc) * o.q
    var = tc * o.p * (1 - o.p) + (n - tc) * o.q * (1 - o.q)
    for sample, reps in ((real, reps_real), (fast, reps_fast)):
        assert np.all(np.abs(sample.mean(axis=0) - mean) <= 5 * np.sqrt(var / reps))
        ratio = sample.var(axis=0, ddof=1) / var
        assert np.all(np.abs(ratio - 1) <= 5 * math.sqrt(2 / (reps - 1))), (name, ratio)
    se = np.sqrt(real.var(axis=0, ddof=1) / reps_real + fast.var(axis=0, ddof=1) / reps_fast)
    assert np.all(np.abs(real.mean(axis=0) - fast.mean(axis=0)) <= 5 * se + 1e-12)
    if o.sample_counts_exact:
        # exact in distribution means the joint law too: check the total's spread (GRR and SS fix it)
        t_real, t_fast = real.sum(axis=1), fast.sum(axis=1)
        v_real, v_fast = t_real.var(ddof=1), t_fast.var(ddof=1)
        if v_real == 0:
            assert v_fast == 0 and t_real[0] == t_fast[0]
        else:
            assert abs(v_fast / v_real - 1) <= 5 * math.sqrt(2 / reps_real + 2 / reps_fast)


@pytest.mark.parametrize("name", NAMES)
def test_same_seed_same_numbers(name):
    o = oracles.get(name, epsilon=1.0, d=37)
    tc = _zipfish(37, 500)
    for exact in (False, True):
        a = o.simulate(tc, 99, exact=exact).counts
        b = o.simulate(tc, 99, exact=exact).counts
        c = o.simulate(tc, 100, exact=exact).counts
        np.testing.assert_array_equal(a, b)
        assert not np.array_equal(a, c)
    values = np.repeat(np.arange(37), tc)
    r1, r2 = o.perturb(values, 5), o.perturb(values, 5)
    np.testing.assert_array_equal(o.aggregate(r1), o.aggregate(r2))


@pytest.mark.parametrize("name", NAMES)
def test_estimate_fields(name):
    o = oracles.get(name, epsilon=2.0, d=16)
    est = o.simulate(_zipfish(16, 1000), 3)
    assert isinstance(est, Estimate)
    assert est.oracle == name and est.d == 16 and est.n == 1000 and est.epsilon == 2.0
    assert (est.p, est.q) == (o.p, o.q)
    np.testing.assert_allclose(est.f_tilde, (est.counts / est.n - est.q) / (est.p - est.q), rtol=1e-12)
    assert est.sigma2 == pytest.approx(o.approx_variance(1000), rel=1e-12)
    with pytest.raises(ValueError):
        est.f_tilde[0] = 1.0  # read-only


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("bad, arg", [
    (np.array([0, 1, 8]), "values"),
    (np.array([0, -1, 2]), "values"),
    (np.array([0.0, 1.5, 2.0]), "values"),
    (np.array([0.0, np.nan]), "values"),
    (np.array([], dtype=np.int64), "values"),
])
def test_perturb_rejects_bad_values(name, bad, arg):
    o = oracles.get(name, epsilon=1.0, d=8)
    with pytest.raises(ValueError, match=arg):
        o.perturb(bad, 0)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("bad", [
    [1, 2, -1, 0], [1, 2, np.inf, 0], [1, 2, np.nan, 0], [1.5, 2, 0, 0], [0, 0, 0, 0], [1, 2, 3],
])
def test_simulate_rejects_bad_true_counts(name, bad):
    o = oracles.get(name, epsilon=1.0, d=4)
    for exact in (False, True):
        with pytest.raises(ValueError, match="true_counts"):
            o.simulate(bad, 0, exact=exact)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("epsilon", [0, -1, float("nan"), float("inf")])
def test_rejects_bad_epsilon(name, epsilon):
    with pytest.raises(ValueError, match="epsilon"):
        oracles.get(name, epsilon=epsilon, d=8)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("d", [1, 0, -3, 2.5])
def test_rejects_bad_d(name, d):
    with pytest.raises(ValueError, match="d must be"):
        oracles.get(name, epsilon=1.0, d=d)


@pytest.mark.parametrize("name", NAMES)
def test_estimate_rejects_bad_n_and_counts(name):
    o = oracles.get(name, epsilon=1.0, d=4)
    with pytest.raises(ValueError, match="n must be"):
        o.estimate([1, 1, 1, 1], 0)
    with pytest.raises(ValueError, match="counts"):
        o.estimate([1, 1, 5, 1], 4)  # a support count above n
    with pytest.raises(ValueError, match="counts"):
        o.estimate([1, 1, -1, 1], 4)


def test_unknown_oracle_is_named():
    with pytest.raises(ValueError, match="oracle must be one of"):
        oracles.get("rappor2", epsilon=1.0, d=4)


@pytest.mark.parametrize("name", NAMES)
def test_extreme_epsilon_gives_finite_probabilities(name):
    for epsilon in (1e-6, 50.0):
        o = oracles.get(name, epsilon=epsilon, d=64)
        p, q = o.p, o.q
        assert np.isfinite(p) and np.isfinite(q) and 0 <= q < p <= 1
        assert np.isfinite(o.approx_variance(1000))
