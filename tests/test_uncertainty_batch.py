"""The coverage grid's batched bootstrap (ldpopt.uncertainty.batch) equals ``intervals`` call by call."""

import warnings

import numpy as np
import pytest

from ldpopt import oracles
from ldpopt.datasets.synthetic import zipf
from ldpopt.experiments.task_kinds.uncertainty import _subsets
from ldpopt.uncertainty import FallbackWarning, bootstrap, intervals
from ldpopt.uncertainty.batch import bootstrap_many

# every method intervals() bootstraps: the seven closed forms, then the ones that fit or iterate
METHODS = ["base-pos", "base-cut", "norm-mul", "norm-sub", "norm-cut", "norm-hyb", "mle-apx",
           "em", "power", "power-ns", "calibrate", "mle-apx-paper"]


@pytest.fixture
def resample_once(monkeypatch):
    """The per-call reference resamples each (estimate, method, seed) once: ``intervals`` at the second
    level, for a subset query or raw (``boundary=None``) draws exactly the resamples of the first call
    (same seed), so they are kept and handed out again instead of drawn again — the quantiles,
    pivots and Base fallback are still computed per call. Returns the number of draws made."""
    import importlib

    bmod = importlib.import_module("ldpopt.uncertainty.bootstrap")  # the module (the package's name is the function)

    real, memo, made = bmod.resample_method, {}, []

    def once(estimate, method, n_resamples, rng, params=None, **kw):
        gen = rng if isinstance(rng, np.random.Generator) else None
        seed = repr(gen.bit_generator.state) if gen is not None else repr(rng)
        key = (id(estimate), getattr(method, "name", method), n_resamples, seed,
               repr(sorted((params or {}).items())), repr(sorted(kw.items())))
        if key not in memo:
            made.append(key)
            got = real(estimate, method, n_resamples, rng, params, **kw)
            memo[key] = (got, gen.bit_generator.state if gen is not None else None)
        got, after = memo[key]
        if gen is not None:  # leave the generator where the real draw leaves it
            gen.bit_generator.state = after
        return tuple(np.array(a, copy=True) for a in got)

    monkeypatch.setattr(bmod, "resample_method", once)
    return made


@pytest.mark.parametrize("oracle", ["oue", "grr"])
def test_bootstrap_many_equals_intervals_per_call(oracle, resample_once):
    """Per value and per subset sum, every method ``intervals`` bootstraps and every level, two
    estimates: the batched path gives the lo, hi and fallback of ``intervals`` with the same seed
    (within 1e-12), and with ``raw`` the method's own basic interval before the Base fallback
    (``bootstrap(..., boundary=None)``), on a heavy tail where both flagged and unflagged entries
    occur. The power-law fit runs once per estimate for Power, PowerNS and Calibrate together."""
    ds = zipf(d=300, s=1.1, n=50_000, rng=2)
    o = oracles.get(oracle, 2.0, ds.d)
    ests = [o.simulate(ds.counts, 10 + r) for r in range(2)]
    subs = _subsets(np.random.default_rng(0), ds.frequencies, 5, 4)
    seeds = [7, 8]
    seen_flag = seen_free = 0
    for r, out in bootstrap_many(ests, METHODS, [0.9, 0.95], 40, seeds, queries=subs, raw=True):
        for m in METHODS:
            for lv in (0.9, 0.95):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", FallbackWarning)
                    want = intervals(ests[r], m, lv, n_resamples=40, interval="basic", rng=seeds[r])
                lo, hi, flag = out[(m, lv, None)]
                np.testing.assert_allclose(lo, want.lo, rtol=0, atol=1e-12)
                np.testing.assert_allclose(hi, want.hi, rtol=0, atol=1e-12)
                np.testing.assert_array_equal(flag, want.fallback)
                # the raw interval: the method's own basic interval (boundary=None) where it is not
                # flagged by the fit, NaN where no quantile was taken
                rlo, rhi = out[("raw", m, lv, None)]
                taken = np.isfinite(rlo)
                seen_flag, seen_free = seen_flag + flag.sum(), seen_free + (~flag).sum()
                if lv != 0.9:  # the raw check at one level (the quantiles of both come from one pass)
                    continue
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", FallbackWarning)
                    own = bootstrap(ests[r], m, lv, n_resamples=40, rng=seeds[r], boundary=None)
                assert (taken | flag).all() and taken.any()
                np.testing.assert_allclose(rlo[taken], own.lo[taken], rtol=0, atol=1e-12)
                np.testing.assert_allclose(rhi[taken], own.hi[taken], rtol=0, atol=1e-12)
                for k, M in subs.items():
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore", FallbackWarning)
                        wq = intervals(ests[r], m, lv, query=M, n_resamples=40, interval="basic", rng=seeds[r])
                    qlo, qhi, qflag = out[(m, lv, k)]
                    np.testing.assert_allclose(qlo, wq.lo, rtol=0, atol=1e-12)
                    np.testing.assert_allclose(qhi, wq.hi, rtol=0, atol=1e-12)
                    np.testing.assert_array_equal(qflag, wq.fallback)
                    if lv != 0.9:
                        continue
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore", FallbackWarning)
                        oq = bootstrap(ests[r], m, lv, queries=M, n_resamples=40, rng=seeds[r], boundary=None)
                    np.testing.assert_allclose(out[("raw", m, lv, k)][0], oq.lo, rtol=0, atol=1e-12)
                    np.testing.assert_allclose(out[("raw", m, lv, k)][1], oq.hi, rtol=0, atol=1e-12)
    assert seen_flag > 0 and seen_free > 0
    assert len(resample_once) <= 2 * len(ests) * len(METHODS)  # per estimate and method: per value, per query


def test_bootstrap_many_without_queries_gives_per_value_intervals_only():
    """No query matrices: only the per-value keys."""
    ds = zipf(d=200, s=1.1, n=20_000, rng=3)
    est = oracles.get("oue", 1.0, ds.d).simulate(ds.counts, 4)
    (_, out), = bootstrap_many([est], ["norm-sub", "power"], [0.9], 20, [5])
    assert set(out) == {("norm-sub", 0.9, None), ("power", 0.9, None)}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FallbackWarning)
        want = intervals(est, "power", 0.9, n_resamples=20, interval="basic", rng=5)
    np.testing.assert_allclose(out[("power", 0.9, None)][0], want.lo, rtol=0, atol=1e-12)


def test_bootstrap_many_bad_seeds_name_the_argument():
    o = oracles.get("oue", 1.0, 20)
    est = o.simulate(np.full(20, 50), 0)
    with pytest.raises(ValueError, match="seeds"):
        next(bootstrap_many([est], ["norm-sub"], [0.9], 20, seeds=[1, 2]))
