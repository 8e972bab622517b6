"""The attack range and interval (ldpopt.uncertainty.attack): the realised shift of the maximal gain
attack lies in the closed-form range for every oracle and value, and reaches its ends (every fake
report supporting a value, or none); with β = 0 the interval is the analytic Base interval; under
the worst attack it still covers; argument errors."""

from __future__ import annotations

import numpy as np
import pytest

from ldpopt import oracles, robust
from ldpopt.uncertainty import analytic
from ldpopt.uncertainty.attack import attack_interval, attack_shift, fake_report_range

D, N, BETA = 64, 36_000, 0.1  # m = βN/(1 − β) = 4,000 exactly: the fraction is β itself


def _counts(n=N, seed=0):
    w = np.arange(1, D + 1) ** -1.5
    return np.random.default_rng(seed).multinomial(n, w / w.sum())


def _split(name, targets, seed, eps=1.0):
    """(poisoned estimate, the genuine users' own estimate) from one draw of each part."""
    o = oracles.get(name, epsilon=eps, d=D)
    tc = _counts()
    m = robust.fake_user_count(N, BETA)
    gen = np.random.default_rng(seed)
    genuine = o.sample_counts(tc, gen)
    fake = robust.fake_counts(o, "mga", targets, m, gen)
    return o.estimate(genuine + fake, N + m), o.estimate(genuine, N)


@pytest.mark.parametrize("name", ["grr", "oue", "sue", "olh", "blh", "hr", "ss"])
def test_mga_shift_lies_in_the_range_and_reaches_its_top(name):
    v = 9
    pois, gen_est = _split(name, [v], seed=1)
    shift = pois.f_tilde - gen_est.f_tilde
    lo, hi = attack_shift(pois, BETA)
    assert np.all(shift >= lo - 1e-12) and np.all(shift <= hi + 1e-12)
    # MGA on {v}: every fake report supports v, the top of the range
    assert shift[v] == pytest.approx(hi[v], rel=1e-9, abs=1e-12)


def test_grr_mga_reaches_the_bottom_on_every_other_value():
    pois, gen_est = _split("grr", [9], seed=2)
    shift = pois.f_tilde - gen_est.f_tilde
    lo, _ = attack_shift(pois, BETA)
    others = np.setdiff1d(np.arange(D), [9])
    np.testing.assert_allclose(shift[others], lo[others], rtol=1e-9, atol=1e-12)


def test_range_is_the_closed_form_per_oracle():
    for name, eps in (("grr", 1.0), ("oue", 2.0), ("olh", 0.5)):
        o = oracles.get(name, epsilon=eps, d=D)
        est = o.estimate(np.full(D, 100), 100 * D)
        lo, hi = fake_report_range(est)
        assert hi - lo == pytest.approx(1 / (o.p - o.q), rel=1e-12)
        assert lo == pytest.approx(-o.q / (o.p - o.q), rel=1e-12)
    grr = oracles.get("grr", epsilon=1.0, d=D)
    assert fake_report_range(grr.estimate(np.full(D, 1), D))[1] == pytest.approx(
        (np.e + D - 2) / (np.e - 1), rel=1e-12)  # (1 − q)/(p − q) for GRR


def test_beta_zero_is_the_analytic_base_interval():
    o = oracles.get("oue", epsilon=1.0, d=D)
    est = o.simulate(_counts(), 3)
    a, b = attack_interval(est, 0.0, level=0.9), analytic(est, "base", level=0.9)
    np.testing.assert_allclose(a.lo, b.lo, atol=1e-15)
    np.testing.assert_allclose(a.hi, b.hi, atol=1e-15)


@pytest.mark.parametrize("name", ["grr", "oue", "olh"])
def test_interval_covers_the_genuine_frequency_under_the_worst_attacks(name):
    f = _counts() / N
    miss = 0
    reps = 60
    for seed in range(reps):
        for targets in ([0], [9], [40]):  # the top of the range on a head, a middle and a tail value
            pois, _ = _split(name, targets, seed=100 + seed)
            res = attack_interval(pois, BETA, level=0.9)
            miss += int(not (res.lo[targets[0]] <= f[targets[0]] <= res.hi[targets[0]]))
    assert miss / (3 * reps) <= 0.1 + 0.06  # nominal 0.9 or more, sampling slack of 60 × 3 draws


def test_attack_arguments_are_named():
    o = oracles.get("oue", epsilon=1.0, d=D)
    est = o.estimate(np.full(D, 100), 100 * D)
    with pytest.raises(ValueError, match="beta"):
        attack_shift(est, 1.0)
    with pytest.raises(ValueError, match="beta"):
        attack_interval(est, -0.1)
    with pytest.raises(ValueError, match="level"):
        attack_interval(est, 0.1, level=1.5)
