"""Bootstrap intervals (the batched forms against the methods: tests/test_method_conformance.py), coverage on a seeded grid, bias sign near zero."""

import numpy as np
import pytest

from ldpopt import methods, oracles
from ldpopt.estimate import Estimate
from ldpopt.uncertainty import intervals


def _estimates(name="oue", eps=1.0, d=12, n=5000, seed=0, B=25):
    o = oracles.get(name, eps, d)
    f = np.linspace(3, 0, d) ** 2
    f /= f.sum()
    tc = np.round(f * n).astype(np.int64)
    ests = [o.simulate(tc, seed + i) for i in range(B)]
    return ests, tc / tc.sum()


def test_unbatched_method_runs_per_resample():
    ests, _ = _estimates(d=8, n=3000, B=1)
    r = intervals(ests[0], "mle-apx", n_resamples=20, rng=1)
    assert r.bootstrap_distribution.shape == (20, 8)
    np.testing.assert_allclose(r.values, methods.postprocess(ests[0], "mle-apx"))
    np.testing.assert_allclose(r.bootstrap_distribution.sum(axis=1), 1.0, atol=1e-9)
    assert np.all(r.lo <= r.values + 1e-12) or np.all(r.lo <= r.hi)


def _coverage(method, level, interval=None, name="oue", trials=200, d=10, n=4000, eps=1.0):
    ests, f = _estimates(name, eps, d, n, seed=100, B=trials)
    hits = np.zeros(d)
    for i, e in enumerate(ests):
        r = intervals(e, method, level, interval=interval, n_resamples=200, rng=i)
        hits += (r.lo <= f) & (f <= r.hi)
    return hits / trials, f


@pytest.mark.parametrize("name", ["oue", "grr"])
@pytest.mark.parametrize("method", ["base", "norm"])
def test_analytic_coverage_is_nominal(method, name):
    """200 datasets: per-value coverage of the nominal-90 % interval within 4 binomial sd, pooled
    within 3.5 sd (values of one dataset are nearly independent here)."""
    cov, _ = _coverage(method, 0.9, name=name)
    sd = np.sqrt(0.9 * 0.1 / 200)
    assert np.all(np.abs(cov - 0.9) < 4 * sd), cov
    assert abs(cov.mean() - 0.9) < 3.5 * sd / np.sqrt(len(cov)) + 0.005, cov.mean()


def test_bootstrap_coverage_of_base_matches_nominal():
    cov, _ = _coverage("base", 0.9, interval="basic", trials=150)
    sd = np.sqrt(0.9 * 0.1 / 150)
    assert abs(cov.mean() - 0.9) < 3.5 * sd / np.sqrt(len(cov)) + 0.01, cov


def test_norm_sub_basic_interval_covers_large_values():
    """Values ≥ 5σ: Norm-Sub is a shift there, the basic interval has nominal coverage."""
    cov, f = _coverage("norm-sub", 0.9, trials=150)
    sigma = oracles.get("oue", 1.0, 10).approx_variance(4000) ** 0.5
    big = f >= 5 * sigma
    assert big.sum() >= 3
    sd = np.sqrt(0.9 * 0.1 / 150)
    assert np.all(np.abs(cov[big] - 0.9) < 4 * sd + 0.02), cov[big]


def test_base_cut_bias_is_positive_at_zero_frequency_values():
    """Base-Cut keeps only estimates above T > 0, so at f_v = 0 its mean is > 0 (arXiv §3.1);
    the bootstrap's bias estimate must be > 0 there and ≈ 0 for Base."""
    o = oracles.get("oue", 0.5, 200)
    tc = np.zeros(200, dtype=np.int64)
    tc[:5] = [4000, 3000, 2000, 1000, 500]
    est = o.simulate(tc, 3)
    r = intervals(est, "base-cut", n_resamples=400, rng=2)
    zero = np.flatnonzero(r.extra["world"] == 0)  # zero in the bootstrap world (the bias is w.r.t. it)
    assert len(zero) > 150
    assert np.all(r.bias[zero] >= 0) and r.bias[zero].mean() > 0
    # independent reference: at f_v = 0, f̃_v ≈ N(0, σ²) (Eq. 2 at f = 0 is σ² of Eq. 7), so
    # E[f̃_v 1{f̃_v ≥ T}] = σ φ(T/σ); MC sd of the mean over 195 values × 400 resamples ≤ σ/√78000
    from scipy.stats import norm as N
    from ldpopt.methods.baseline import cut_threshold
    sig, T = est.sigma, cut_threshold(est, 2.0)
    theory = sig * N.pdf(T / sig)
    assert abs(r.bias[zero].mean() - theory) < 4 * sig / np.sqrt(400 * len(zero)) + 0.1 * theory
    # Base is unbiased: its bootstrap bias at zero is MC noise only
    b = intervals(est, "base", interval="normal", n_resamples=400, rng=2)
    assert abs(b.bias[zero].mean()) < 4 * sig / np.sqrt(400 * len(zero))


def test_queries_topk_and_heavy_hitters():
    ests, f = _estimates(d=12, n=20000, B=1)
    e = ests[0]
    r = intervals(e, "norm-sub", query="topk:3", rng=0)
    want = np.argsort(-methods.postprocess(e, "norm-sub"), kind="stable")[:3]
    assert r.labels == [int(i) for i in want] and r.values.shape == (3,)
    h = intervals(e, "norm-sub", query="hh:0.1", rng=0)
    assert np.all(h.values >= 0.1) and np.all((0 <= h.extra["membership"]) & (h.extra["membership"] <= 1))
    s = intervals(e, "norm", query="subsets:4:7", rng=0)
    assert s.values.shape == (7,) and s.interval == "normal"
    with pytest.raises(ValueError, match="topk"):
        intervals(e, "norm", query="topk:0")
    with pytest.raises(ValueError, match="level"):
        intervals(e, "norm-sub", level=1.5)
    with pytest.raises(ValueError, match="interval must be"):
        intervals(e, "norm-sub", interval="studentised")
    with pytest.raises(ValueError, match="n_resamples"):
        intervals(e, "norm-sub", n_resamples=3)


def test_boundary_entries_get_bases_interval_and_cover_small_truths():
    """Where the fit is 0 the raw basic interval of a clipped method collapses to [0, 0]; the default
    flags those entries and gives Base's clipped normal interval, so small positive truths are
    covered again."""
    o = oracles.get("oue", 1.0, 60)
    f = np.r_[[0.5, 0.2, 0.1], np.full(57, 0.2 / 57)]
    tc = np.round(f * 5000).astype(np.int64)
    hits_raw = hits = n0 = 0
    for i in range(60):
        e = o.simulate(tc, 500 + i)
        r = intervals(e, "norm-sub", 0.9, n_resamples=100, rng=i)
        raw = ldpopt_bootstrap(e, "norm-sub", 0.9, n_resamples=100, rng=i, boundary=None)
        z = r.fallback
        assert z[r.extra["world"] <= 0].all()
        b = intervals(e, "base", 0.9)
        np.testing.assert_array_equal(r.lo[z], np.clip(b.lo[z], 0, 1))
        np.testing.assert_array_equal(r.hi[z], np.clip(b.hi[z], 0, 1))
        t = tc / tc.sum()
        hits += ((r.lo <= t) & (t <= r.hi))[z].sum()
        hits_raw += ((raw.lo <= t) & (t <= raw.hi))[z].sum()
        n0 += z.sum()
    assert n0 > 500
    assert hits / n0 > 0.85 > 0.5 > hits_raw / n0


from ldpopt.uncertainty import bootstrap as ldpopt_bootstrap  # noqa: E402


def test_basic_interval_may_exclude_its_point_and_says_so():
    # Norm-Sub's sum over the 500 smallest values (Zipf 1.5, OUE eps = 1): the estimate is biased up
    # several-fold, the basic interval subtracts the world's bias and lies below T; the entry is
    # flagged, and the flag agrees with the end points
    d, n = 1000, 100000
    f = 1.0 / np.arange(1, d + 1) ** 1.5
    tc = np.round(f / f.sum() * n).astype(np.int64)
    est = oracles.get("oue", 1.0, d).simulate(tc, 0)
    U = np.zeros((1, d))
    U[0, 500:] = 1
    r = ldpopt_bootstrap(est, "norm-sub", 0.9, queries=U, n_resamples=100, rng=0, boundary=None)
    assert r.values[0] > r.hi[0] and r.extra["excludes_point"][0]
    # the interval is T minus the error quantiles: it contains the median-corrected point
    dev = r.bootstrap_distribution[:, 0] - r.extra["world"][0]
    assert r.lo[0] <= r.values[0] - np.median(dev) <= r.hi[0]
    # a per-value result: the flag is exactly "outside [lo, hi]", and hh restricts it with the set
    p = intervals(est, "norm-sub", 0.9, n_resamples=50, rng=1)
    np.testing.assert_array_equal(p.extra["excludes_point"], (p.values < p.lo) | (p.values > p.hi))
    h = intervals(est, "norm-sub", 0.9, query="hh:0.01", n_resamples=50, rng=1)
    assert h.extra["excludes_point"].shape == h.values.shape == h.extra["fallback"].shape


def test_interval_and_boundary_hull_on_a_subset_equal_the_full_ones_indexed():
    """The top-k paths compute the fixed-set interval and its boundary fallback on the selected
    values only: per value they must be the same floats as over all d, then indexed."""
    from ldpopt.uncertainty.bootstrap import boundary_hull, interval_from, resample_method

    o = oracles.get("oue", 1.0, 60)
    f = np.r_[[0.5, 0.2, 0.1], np.full(57, 0.2 / 57)]
    e = o.simulate(np.round(f * 5000).astype(np.int64), 7)
    world, boot = resample_method(e, "norm-sub", 80, 3)
    point = methods.get("norm-sub").func(e)
    assert (world <= 0).any()  # the boundary fallback has entries to change
    idx = np.r_[np.flatnonzero(world <= 0)[:4], 0, 1, 2]
    for level in (0.8, 0.9):
        _, _, lo, hi = interval_from(point, world, boot, level, "basic")
        hlo, hhi, at0 = boundary_hull(e, level, None, world, lo, hi)
        _, _, slo, shi = interval_from(point[idx], world[idx], boot[:, idx], level, "basic")
        np.testing.assert_array_equal(slo, lo[idx])
        np.testing.assert_array_equal(shi, hi[idx])
        s_hlo, s_hhi, s_at0 = boundary_hull(e, level, None, world[idx], slo, shi, index=idx)
        np.testing.assert_array_equal(s_hlo, hlo[idx])
        np.testing.assert_array_equal(s_hhi, hhi[idx])
        np.testing.assert_array_equal(s_at0, at0[idx])
        assert not (np.array_equal(s_hlo, slo) and np.array_equal(s_hhi, shi))  # the fallback changed some
