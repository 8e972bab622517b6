"""Every released cell with its uncertainty (ldpopt.uncertainty.cells, ldpopt.hierarchy.release): the
flag rule and the corrections in σ against their definitions on generated arrays, the exact normal
interval, the bootstrap through a noise sampler (SE against the known σ of a linear release), the flat
histogram's table against ``intervals``, and the non-linear tree release's invariants."""

import numpy as np
import pytest
from scipy import stats

import ldpopt
from ldpopt.hierarchy import Tree, central_sampler, gls, tree_cells
from ldpopt.hierarchy.release import clip_round
from ldpopt.privacy import central
from ldpopt.uncertainty.cells import (
    COLUMNS,
    bootstrap_cells,
    cell_frame,
    correction_sigma,
    flag_corrections,
    histogram_cells,
)


@pytest.mark.parametrize("seed", range(5))
def test_corrections_and_flags_follow_their_definitions(seed):
    rng = np.random.default_rng(seed)
    m = 300
    raw = rng.normal(0, 50, m)
    sigma = rng.uniform(0.01, 3.0, m)
    est = raw + rng.standard_t(2, m) * sigma * rng.choice([0.5, 5.0, 20.0], m)
    cs = correction_sigma(est, raw, sigma)
    for i in rng.choice(m, 20, replace=False):
        assert cs[i] == pytest.approx((est[i] - raw[i]) / sigma[i])
        assert flag_corrections(est, raw, sigma)[i] == (abs(est[i] - raw[i]) > max(7 * sigma[i], 1.0))
    k = rng.uniform(1, 10)
    fl = flag_corrections(est, raw, sigma, sigmas=k, floor=0.0)
    np.testing.assert_array_equal(fl, np.abs(cs) > k)
    # σ = 0 and σ = inf cells
    assert correction_sigma([1.0, 1.0, 2.0], [1.0, 2.0, 5.0], [0.0, 0.0, np.inf]).tolist()[:2] == [0.0, -np.inf]
    assert np.isnan(correction_sigma([2.0], [5.0], [np.inf])[0])
    assert not flag_corrections([100.0], [5.0], [np.inf])[0]


def test_cell_frame_normal_interval_and_errors():
    rng = np.random.default_rng(1)
    x, se = rng.normal(size=50), rng.uniform(0.1, 2, 50)
    t = cell_frame(x, se, x, np.ones(50), level=0.9)
    assert tuple(t.columns) == COLUMNS
    np.testing.assert_allclose(t["ci_high"] - t["ci_low"], 2 * stats.norm.ppf(0.95) * se)
    assert not t["flagged"].any() and (t["correction_sigma"] == 0).all()
    with pytest.raises(ValueError, match="one shape"):
        cell_frame(x, se, x[:3], np.ones(50))
    with pytest.raises(ValueError, match="se must be >= 0"):
        cell_frame(x, -se, x, np.ones(50))
    with pytest.raises(ValueError, match="together"):
        cell_frame(x, se, x, np.ones(50), ci_low=x)
    with pytest.raises(ValueError, match="sigma must be >= 0"):
        correction_sigma(x, x, -np.ones(50))
    with pytest.raises(ValueError, match="level"):
        cell_frame(x, se, x, np.ones(50), level=1.5)
    with pytest.raises(ValueError, match="sigmas must be > 0"):
        flag_corrections(x, x, np.ones(50), sigmas=0)


def test_bootstrap_of_a_linear_release_recovers_its_exact_se():
    rng = np.random.default_rng(2)
    t = Tree(np.concatenate(([-1], rng.integers(0, np.arange(1, 80)))))
    var = rng.uniform(1.0, 25.0, t.size)
    y = t.node_totals(rng.uniform(50, 100, t.size)) + rng.normal(size=t.size) * np.sqrt(var)
    exact = gls(t, y, var)
    B = 400
    boot = tree_cells(t, y, var, lambda Y: gls(t, Y, var).x, n_resamples=B, rng=3)
    np.testing.assert_allclose(boot["estimate"], exact.x, rtol=1e-12)
    ratio = (boot["se"].to_numpy() / exact.se) ** 2          # a chi-square(B − 1)/(B − 1) per node
    lo, hi = stats.chi2.ppf([1e-5, 1 - 1e-5], B - 1) / (B - 1)
    assert lo < ratio.min() and ratio.max() < hi
    # same seed, same numbers
    again = tree_cells(t, y, var, lambda Y: gls(t, Y, var).x, n_resamples=B, rng=3)
    np.testing.assert_array_equal(again["se"], boot["se"])


def test_nonlinear_tree_release_and_central_sampler():
    rng = np.random.default_rng(4)
    t = Tree(np.concatenate(([-1], rng.integers(0, np.arange(1, 60)))))
    truth = t.node_totals(rng.integers(0, 6, t.size).astype(float))
    b = 2.0
    noise = central.get("laplace").sample(t.size, b, rng)
    y = truth + noise
    var = central.get("laplace").variance(b)
    tab = tree_cells(t, y, var, "gls-clip-round", n_resamples=60, rng=0,
                     sampler=central_sampler("laplace", b, t.size))
    x = tab["estimate"].to_numpy()
    assert (x >= 0).all() and np.array_equal(x, np.rint(x)) and np.allclose(t.node_totals(x), x)
    np.testing.assert_array_equal(x, clip_round(t, gls(t, y, var).x))
    assert (tab["ci_low"] <= tab["ci_high"]).all() and (tab["se"] >= 0).all()
    draws = central_sampler("laplace", np.full(t.size, b), t.size)(400, np.random.default_rng(5))
    assert draws.shape == (t.size, 400)
    assert abs(draws.var() / var - 1) < 0.1                  # 24k Laplace draws: the variance within 10 %
    with pytest.raises(ValueError, match="post must be one of"):
        tree_cells(t, y, var, "norm-sub")
    with pytest.raises(ValueError, match="scale must be > 0"):
        central_sampler("laplace", [1.0, 2.0], t.size)
    with pytest.raises(ValueError, match="sampler must return"):
        bootstrap_cells(lambda Y: Y, y, np.ones(t.size), sampler=lambda B, r: np.zeros((2, B)), n_resamples=10)


@pytest.mark.filterwarnings("ignore::ldpopt.uncertainty.FallbackWarning")
def test_histogram_cells_match_intervals():
    est = ldpopt.oracles.get("oue", 1.0, 8).simulate(np.array([500, 300, 150, 50, 0, 0, 0, 0]) * 20, rng=0)
    tab = histogram_cells(est, "norm-sub", n_resamples=50, rng=1)
    res = ldpopt.uncertainty.intervals(est, "norm-sub", n_resamples=50, rng=1)
    np.testing.assert_allclose(tab["estimate"], res.values)
    np.testing.assert_allclose(tab["ci_low"], res.lo)
    np.testing.assert_allclose(tab["correction_sigma"], (res.values - est.f_tilde) / np.sqrt(est.sigma2_v))
    cen = ldpopt.Estimate.from_central(np.array([900, 50, 30, 20, -5, 3]), "gaussian", 4.0, n=1000)
    tab = histogram_cells(cen, "base")
    np.testing.assert_allclose(tab["correction_sigma"], 0.0)


def test_postprocess_ci_writes_corrections_and_prints_the_flag_count(tmp_path, capsys):
    import pandas as pd

    from ldpopt.cli import main

    est = ldpopt.oracles.get("oue", 1.0, 8).simulate(np.array([500, 300, 150, 50, 0, 0, 0, 0]) * 20, rng=0)
    counts = tmp_path / "counts.csv"
    pd.DataFrame({"value": np.arange(8), "count": est.counts}).to_csv(counts, index=False)
    out = tmp_path / "out.csv"
    rc = main(["postprocess", "--counts", str(counts), "--oracle", "oue", "--epsilon", "1", "--n", str(est.n),
               "--method", "norm-sub", "--ci", "0.9", "--resamples", "20", "--out", str(out)])
    assert rc == 0
    t = pd.read_csv(out)
    sig = np.sqrt(est.sigma2_v)
    np.testing.assert_allclose(t["norm-sub_correction_sigma"], (t["norm-sub"] - est.f_tilde) / sig, rtol=1e-9)
    k = int(t["norm-sub_flagged"].sum())
    assert f"norm-sub: {k} of 8" in capsys.readouterr().err
