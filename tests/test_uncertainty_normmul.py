"""Norm-Mul's ratio pivot (ldpopt/uncertainty/bootstrap.py, RATIO_PIVOT): the interval is the basic
interval of T·S = max(f̃, 0) against max(F*, 0) computed by hand, for values, subset sums and the
top-k set; seeded coverage of the values ≥ 5σ where the plain pivot T − f under-covers; every
other method is untouched."""

import numpy as np
import pytest

from ldpopt import oracles
from ldpopt.uncertainty import intervals
from ldpopt.uncertainty.bootstrap import boundary_hull, interval_from, resample_method


def _zipf(d=200, n=300000, s=1.5):
    f = 1.0 / np.arange(1, d + 1) ** s
    tc = np.round(f / f.sum() * n).astype(np.int64)
    return tc, tc / tc.sum()


def test_interval_is_basic_interval_of_positive_part():
    tc, _ = _zipf(d=80, n=20000)
    est = oracles.get("oue", 1.0, 80).simulate(tc, 4)
    r = intervals(est, "norm-mul", 0.9, n_resamples=60, rng=9)
    # the obvious path: the same resamples (same seed), the pivot max(F*, 0) − f̂ on the raw estimates
    world, boot, F = resample_method(est, "norm-mul", 60, np.random.default_rng(9), raw=True)
    np.testing.assert_array_equal(boot, r.bootstrap_distribution)
    _, _, lo, hi = interval_from(np.maximum(est.f_tilde, 0), world, np.maximum(F, 0), 0.9, "basic")
    lo, hi, _ = boundary_hull(est, 0.9, None, world, lo, hi)
    np.testing.assert_allclose(r.lo, lo, atol=1e-15)
    np.testing.assert_allclose(r.hi, hi, atol=1e-15)
    # se and bias stay those of the method's own output
    np.testing.assert_allclose(r.se, boot.std(axis=0, ddof=1))
    np.testing.assert_allclose(r.bias, boot.mean(axis=0) - world)
    assert r.extra["scale"] == pytest.approx(np.maximum(est.f_tilde, 0).sum()) and "T·S" in r.how
    # subset sums: the same pivot summed
    subs = [[0, 1, 2], [5, 9]]
    q = intervals(est, "norm-mul", 0.9, query=subs, n_resamples=60, rng=9)
    U = np.zeros((2, 80))
    U[0, subs[0]] = U[1, subs[1]] = 1
    _, _, qlo, qhi = interval_from(U @ np.maximum(est.f_tilde, 0), U @ world, np.maximum(F, 0) @ U.T, 0.9, "basic")
    qlo, qhi, _ = boundary_hull(est, 0.9, U, U @ world, qlo, qhi)  # Base's interval / the hull with it
    np.testing.assert_allclose(q.lo, qlo, atol=1e-15)
    np.testing.assert_allclose(q.hi, qhi, atol=1e-15)


def test_topk_rank_pivot_on_positive_part():
    tc, _ = _zipf(d=80, n=20000)
    est = oracles.get("olh", 1.0, 80).simulate(tc, 2)
    r = intervals(est, "norm-mul", 0.9, query="topk:5", selection="rank", n_resamples=60, rng=3)
    world, boot, F = resample_method(est, "norm-mul", 60, np.random.default_rng(3), raw=True)
    P = np.maximum(F, 0)
    Sb = np.argsort(-P, axis=1, kind="stable")[:, :5]      # the same selection as on T* = P / S*
    dev = np.take_along_axis(P, Sb, axis=1) - world[Sb]
    x = np.maximum(est.f_tilde, 0)[r.labels]
    np.testing.assert_allclose(r.lo, np.clip(x - np.quantile(dev, 0.95, axis=0), 0, 1), atol=1e-15)
    np.testing.assert_allclose(r.hi, np.clip(x - np.quantile(dev, 0.05, axis=0), 0, 1), atol=1e-15)


def test_large_values_cover_where_the_plain_pivot_fails():
    # GRR at eps = 1, d = 200: S = Σ max(f̃, 0) ≈ 2, so Norm-Mul halves the large values; the plain
    # pivot T − f in the Norm-Sub world misses that (measured 0.48 here), the ratio pivot does not
    d, lv = 200, 0.9
    tc, f = _zipf(d=d)
    o = oracles.get("grr", 1.0, d)
    new, old = [], []
    for rep in range(40):
        est = o.simulate(tc, 100 + rep)
        big = f >= 5 * est.sigma
        r = intervals(est, "norm-mul", lv, n_resamples=100, rng=rep)
        new.append(((r.lo <= f) & (f <= r.hi))[big])
        _, _, lo, hi = interval_from(r.values, r.extra["world"], r.bootstrap_distribution, lv, "basic")
        old.append(((lo <= f) & (f <= hi))[big])
    cov_new, cov_old = np.mean(np.concatenate(new)), np.mean(np.concatenate(old))
    assert sum(map(len, new)) >= 100
    assert 0.82 <= cov_new <= 0.97, cov_new       # 120 correlated values: ~±0.05 around 0.89
    assert cov_new > cov_old + 0.25, (cov_new, cov_old)


@pytest.mark.parametrize("method", ["norm-sub", "base-pos", "norm-cut"])
def test_other_methods_keep_the_plain_pivot(method):
    tc, _ = _zipf(d=60, n=20000)
    est = oracles.get("oue", 1.0, 60).simulate(tc, 1)
    r = intervals(est, method, 0.9, n_resamples=30, rng=5)
    world, boot = resample_method(est, method, 30, np.random.default_rng(5))
    _, _, lo, hi = interval_from(r.values, world, boot, 0.9, "basic")
    lo, hi, _ = boundary_hull(est, 0.9, None, world, lo, hi)
    np.testing.assert_array_equal(r.lo, lo)
    np.testing.assert_array_equal(r.hi, hi)
    assert "scale" not in r.extra and "T·S" not in r.how
