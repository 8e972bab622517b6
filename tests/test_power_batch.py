"""The s fit of B resamples in lockstep (``ldpopt.methods.bayes.exponent_fit_batch``) against the per-resample
fit it replaces in the bootstrap (``exponent_fit.fit_mle``, kept as the reference), and the intervals
of Power, PowerNS and Calibrate through the batched path against the per-resample path."""

from __future__ import annotations

import numpy as np
import pytest

from ldpopt import oracles
from ldpopt.estimate import Estimate
from ldpopt.methods.bayes import exponent_fit_batch as pbm
from ldpopt.methods.bayes import exponent_fit as pf
from ldpopt.methods.bayes import posterior as bayes
from ldpopt.methods.bayes import prefit
from ldpopt.uncertainty import intervals, resample
from ldpopt.uncertainty.fit import plausible_truth, population

CASES = [("oue", 1.0, 48, 20_000), ("grr", 2.0, 16, 5_000), ("olh", 1.0, 32, 10_000),
         ("oue", 4.0, 64, 3_000)]


def _resamples(oracle, eps, d, n, B, seed):
    rng = np.random.default_rng(seed)
    est = oracles.get(oracle, eps, d).simulate(rng.multinomial(n, rng.dirichlet(np.full(d, 0.5))), seed)
    C = resample.draw_counts(resample.oracle_of(est), population(plausible_truth(est), n), B, rng)
    ests = [Estimate.from_counts(c, n, est.epsilon, est.p, est.q, oracle=est.oracle, **est.meta)
            for c in C]
    return est, np.stack([bayes._x(e) for e in ests]), bayes._engine_sd(est)


@pytest.mark.parametrize("oracle,eps,d,n", CASES)
def test_batched_fit_matches_the_per_resample_fit(oracle, eps, d, n):
    _, X, S = _resamples(oracle, eps, d, n, 6, 11)
    got = pbm.fit_mle_batch(X, S, n, 0.0, 10.0)
    for x, (s, at_hi) in zip(X, got):
        ref, ref_hi = pf._fit_mle(*np.unique(x, return_counts=True), S, n, 0.0, 10.0, pf.GRID_POINTS, True)
        # the reference's Newton stops at a step ≤ 1e-10·(1 + s): agreement to that tolerance
        assert abs(s - ref) <= 2e-10 * (1.0 + abs(ref)), (s, ref)
        assert at_hi == ref_hi


def test_a_failed_check_falls_back_to_the_reference(monkeypatch):
    _, X, S = _resamples("oue", 1.0, 32, 10_000, 4, 2)
    monkeypatch.setattr(pbm, "CHECK_TOL", -1.0)       # no interpolant passes: every row falls back
    calls = []
    real = pf._fit_mle
    monkeypatch.setattr(pf, "_fit_mle", lambda *a: calls.append(1) or real(*a))
    got = pbm.fit_mle_batch(X, S, 10_000, 0.0, 10.0)
    assert len(calls) == 4
    assert got == [real(*np.unique(x, return_counts=True), S, 10_000, 0.0, 10.0, pf.GRID_POINTS, True)
                   for x in X]


@pytest.mark.parametrize("oracle,eps,d,n", CASES[:3])
def test_intervals_match_the_per_resample_path(oracle, eps, d, n, monkeypatch):
    est, _, _ = _resamples(oracle, eps, d, n, 1, 5)
    fields = lambda r: np.concatenate([r.lo, r.hi, r.se])  # noqa: E731
    pf._FIT_MEMO.clear()
    bayes._PM_MEMO.clear()
    filled = []
    real_fit, real_means = pbm.prefit, pbm.prefill_means
    monkeypatch.setattr(pbm, "prefit", lambda *a: filled.append(("fit", real_fit(*a))) or filled[-1][1])
    monkeypatch.setattr(pbm, "prefill_means",
                        lambda *a: filled.append(("means", real_means(*a))) or filled[-1][1])
    batched = {m: fields(intervals(est, m, 0.9, n_resamples=10, rng=3)) for m in resample.POWER_FITTED}
    # the batched path did the work: 10 fits and 10 posterior means filled by the first method
    assert filled[:2] == [("fit", 10), ("means", 10)], filled
    pf._FIT_MEMO.clear()
    bayes._PM_MEMO.clear()       # the reference computes every fit and posterior mean afresh
    monkeypatch.setattr(prefit, "prefit_rows", lambda *a: None)
    for m in resample.POWER_FITTED:
        ref = fields(intervals(est, m, 0.9, n_resamples=10, rng=3))
        np.testing.assert_allclose(batched[m], ref, rtol=1e-9, atol=1e-12 / est.n)
    pf._FIT_MEMO.clear()
    bayes._PM_MEMO.clear()


def test_prefit_fills_the_memo_under_fit_mles_keys():
    _, X, S = _resamples("oue", 1.0, 24, 8_000, 5, 4)
    pf._FIT_MEMO.clear()
    assert pbm.prefit(X, S, 8_000, 0.0, 10.0) == 5
    assert pbm.prefit(X, S, 8_000, 0.0, 10.0) == 0           # all present: nothing re-fitted
    for x in X:
        assert pf.memo_key(x, S, 8_000, 0.0, 10.0, pf.GRID_POINTS, True)[0] in pf._FIT_MEMO
    pf._FIT_MEMO.clear()


def test_prefilled_posterior_means_match_the_per_row_engine(monkeypatch):
    from ldpopt.methods.bayes import engine as core

    _, X, S = _resamples("oue", 1.0, 40, 20_000, 6, 8)
    s_rows = np.array([1.1, 1.13, 1.2, np.nan, 1.05, 1.17])
    bayes._PM_MEMO.clear()
    assert pbm.prefill_means(X, S, 20_000, s_rows) == 5
    assert len(bayes._PM_MEMO) == 5
    for x, s in zip(X, s_rows):
        prior = core.Prior("power-law", 20_000, s=float(s))
        got = bayes._PM_MEMO.get(bayes._pm_key(x, S, prior))
        if np.isnan(s):
            assert got is None
            continue
        L = core.logsums(x, S, prior, ("z", "k"), relative=True)
        np.testing.assert_allclose(got, np.exp(L[:, 1] - L[:, 0]), rtol=1e-11)
    bayes._PM_MEMO.clear()
    assert pbm.prefill_means(X, S, 20_000, [0.5, 3.0, 1, 1, 1, 1]) == 0   # range too wide
    assert not bayes._PM_MEMO
