"""The coverage grid's batched bootstrap (ldpopt.uncertainty.batch) equals ``intervals`` call by call."""

import warnings

import numpy as np
import pytest

from ldpopt import oracles
from ldpopt.datasets.synthetic import zipf
from ldpopt.experiments.tasks_uncertainty import _subsets
from ldpopt.uncertainty import FallbackWarning, intervals
from ldpopt.uncertainty.batch import bootstrap_many

METHODS = ["base-pos", "base-cut", "norm-mul", "norm-sub", "norm-cut", "norm-hyb", "mle-apx"]


@pytest.mark.parametrize("oracle", ["oue", "grr"])
def test_bootstrap_many_equals_intervals_per_call(oracle):
    """Per value and per subset sum, every method and level, three estimates: the batched path gives
    the lo, hi and fallback of ``intervals`` with the same seed (within 1e-12), on a heavy tail where
    both flagged and unflagged entries occur."""
    ds = zipf(d=300, s=1.1, n=50_000, rng=2)
    o = oracles.get(oracle, 2.0, ds.d)
    ests = [o.simulate(ds.counts, 10 + r) for r in range(3)]
    subs = _subsets(np.random.default_rng(0), ds.frequencies, 5, 4)
    seeds = [7, 8, 9]
    seen_flag = seen_free = 0
    for r, out in bootstrap_many(ests, METHODS, [0.9, 0.95], 40, seeds, queries=subs):
        for m in METHODS:
            for lv in (0.9, 0.95):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", FallbackWarning)
                    want = intervals(ests[r], m, lv, n_resamples=40, interval="basic", rng=seeds[r])
                lo, hi, flag = out[(m, lv, None)]
                np.testing.assert_allclose(lo, want.lo, rtol=0, atol=1e-12)
                np.testing.assert_allclose(hi, want.hi, rtol=0, atol=1e-12)
                np.testing.assert_array_equal(flag, want.fallback)
                seen_flag, seen_free = seen_flag + flag.sum(), seen_free + (~flag).sum()
                for k, M in subs.items():
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore", FallbackWarning)
                        wq = intervals(ests[r], m, lv, query=M, n_resamples=40, interval="basic", rng=seeds[r])
                    qlo, qhi, qflag = out[(m, lv, k)]
                    np.testing.assert_allclose(qlo, wq.lo, rtol=0, atol=1e-12)
                    np.testing.assert_allclose(qhi, wq.hi, rtol=0, atol=1e-12)
                    np.testing.assert_array_equal(qflag, wq.fallback)
    assert seen_flag > 0 and seen_free > 0


def test_bootstrap_many_bad_seeds_name_the_argument():
    o = oracles.get("oue", 1.0, 20)
    est = o.simulate(np.full(20, 50), 0)
    with pytest.raises(ValueError, match="seeds"):
        next(bootstrap_many([est], ["norm-sub"], [0.9], 20, seeds=[1, 2]))
