"""``postprocess --ci`` with every method: the s fit of Power, PowerNS and Calibrate is done once
per resample (they draw the same resamples and fitted s on each three times: ~98 % of the run at
d = 256), with intervals bit-identical to fitting afresh; a progress callback per resample."""

from __future__ import annotations

import numpy as np
import pytest

from ldpopt import oracles
from ldpopt.methods.bayes import exponent_fit as pf
from ldpopt.uncertainty import intervals
from ldpopt.uncertainty.resample import apply_batch

B = 12


@pytest.fixture()
def est():
    rng = np.random.default_rng(5)
    tc = rng.multinomial(3000, rng.dirichlet(np.full(24, 0.5)))
    return oracles.get("oue", 1.0, 24).simulate(tc, 7)


def _fields(r):
    return np.concatenate([r.se, r.lo, r.hi, r.bias])


def test_one_fit_per_resample_and_the_same_intervals(est, monkeypatch):
    fresh = {}
    for name in ("power", "power-ns", "calibrate"):
        pf._FIT_MEMO.clear()
        fresh[name] = _fields(intervals(est, name, 0.9, n_resamples=B, rng=3))
    pf._FIT_MEMO.clear()
    calls = []
    real = pf._fit_mle
    monkeypatch.setattr(pf, "_fit_mle", lambda *a: calls.append(1) or real(*a))
    for name in ("power", "power-ns", "calibrate"):
        np.testing.assert_array_equal(_fields(intervals(est, name, 0.9, n_resamples=B, rng=3)), fresh[name])
    # B resamples + the point estimate, fitted once each (distinct resamples: B + 1 distinct fits)
    assert len(calls) <= B + 1, len(calls)


def test_memo_is_keyed_on_the_data_not_the_call(est):
    x = est.f_tilde * est.n
    S = float(np.sqrt(est.n * est.q * (1 - est.q)) / (est.p - est.q))
    pf._FIT_MEMO.clear()
    a = pf.fit_mle(x, S, est.n, 0.0, 10.0)
    assert pf.fit_mle(x[::-1], S, est.n, 0.0, 10.0) == a      # same multiset of values: a hit
    assert len(pf._FIT_MEMO) == 1
    b = pf.fit_mle(x, S * 1.5, est.n, 0.0, 10.0)              # another noise level: another fit
    assert len(pf._FIT_MEMO) == 2 and b != a


def test_progress_is_called_once_per_resample_of_a_row_by_row_method(est):
    F = np.tile(est.f_tilde, (5, 1))
    C = np.tile(est.counts, (5, 1))
    ticks = []
    apply_batch(est, "em", F, counts=C, progress=ticks.append)
    assert ticks == [1] * 5
    ticks.clear()
    apply_batch(est, "norm-sub", F, counts=C, progress=ticks.append)
    assert ticks == []


def test_posterior_mean_is_shared_by_power_and_calibrate_and_bit_identical(est):
    from ldpopt.methods.bayes import posterior as bayes

    bayes._PM_MEMO.clear()
    p1 = bayes.power(est)
    assert len(bayes._PM_MEMO) == 1
    c1 = bayes.calibrate(est)                      # same x, S and prior: a memo hit
    assert len(bayes._PM_MEMO) == 1
    bayes._PM_MEMO.clear()
    c2 = bayes.calibrate(est)                      # computed afresh
    np.testing.assert_array_equal(c1, c2)
    np.testing.assert_array_equal(p1, c2)
    p1[0] = -1.0                                   # the caller's array is its own
    np.testing.assert_array_equal(bayes.power(est), c2)
    bayes._PM_MEMO.clear()
