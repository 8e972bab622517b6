"""The coverage experiments (kind "coverage-batch", configs/ext_uncertainty_*.toml) run --quick."""

import numpy as np
import pandas as pd
import pytest

from ldpopt import methods
from ldpopt.experiments import run
from ldpopt.experiments.config import load_config
from ldpopt.experiments.task_kinds.uncertainty import coverage_table


def test_coverage_quick_table(tmp_path):
    cfg = load_config("ext_uncertainty_coverage")
    t = run("ext_uncertainty_coverage", quick=True, out=tmp_path, progress=False)
    ranks = t[t.metric == "coverage_rank"]
    t = t[t.metric == "coverage"]
    assert set(t.method) == set(cfg.methods) == set(ranks.method)
    assert set(t.band) <= {"zero", "lt1sigma", "1-2sigma", "2-5sigma", "ge5sigma", "sub-head", "sub-tail",
                           "sub-mixed", "topk", "topk-set"}
    assert {"lt1sigma", "ge5sigma", "sub-head", "sub-tail", "sub-mixed", "topk"} <= set(t.band)
    assert set(ranks.band) == {f"rank{i}" for i in range(1, 11)}
    # the per-rank rows are the top-10 rows split by rank: the same hits in total
    tk = t[t.band == "topk"]
    assert np.isclose((tk.value * tk["count"]).sum(), (ranks.value * ranks["count"]).sum())
    # every bootstrap method's interval contains Base's (Base's at the flagged entries, the hull
    # elsewhere): never narrower than Base's on the per-value bands and the subset sums
    boot = t[~t.method.isin(["base", "norm"]) & ~t.band.str.startswith("topk")]
    assert (boot.rel_width >= 1 - 1e-9).all()
    assert set(t.level) == {0.9, 0.95}
    assert ((t.value >= 0) & (t.value <= 1)).all() and (t["count"] > 0).all()
    # 95 % intervals contain the 90 % ones: coverage and width are monotone in the level
    key = ["rep", "batch_rep", "method", "band"]
    a = t[t.level == 0.9].set_index(key).sort_index()
    b = t[t.level == 0.95].set_index(key).sort_index()
    assert (b.value >= a.value - 1e-12).all() and (b.width >= a.width - 1e-15).all()
    # analytic Base/Norm: pooled per-value coverage near nominal even in 3 quick repetitions
    base = t[(t.method.isin(["base", "norm"])) & (t.band.isin(["zero", "lt1sigma", "ge5sigma"]))]
    pooled = coverage_table(base, by=())
    for lv in (0.9, 0.95):
        s = base[base.level == lv]
        want = np.average(s.value, weights=s["count"])
        assert abs(want - lv) < 0.05, (lv, want)
        # coverage_table pools the same way, per band
        for band in ("lt1sigma", "ge5sigma"):
            sb = s[s.band == band]
            assert abs(pooled[(lv, band)].iloc[0] - np.average(sb.value, weights=sb["count"])) < 1e-12


def test_heldout_quick_runs_on_shipped_data(tmp_path):
    """The held-out config (data no construction was tuned on) runs --quick on a shipped dataset;
    Norm-Sub's per-value and subset intervals are never narrower than Base's clipped interval."""
    t = run("ext_uncertainty_heldout", quick=True, out=tmp_path, progress=False)
    assert set(t.dataset) == {"bms-webview-2"} and set(t.method) == {"base", "norm-sub"}
    ns = t[(t.method == "norm-sub") & (t.metric == "coverage") & ~t.band.str.startswith("topk")]
    assert {"lt1sigma", "sub-head", "sub-tail", "sub-mixed"} <= set(ns.band)
    assert (ns.rel_width >= 1 - 1e-9).all()


@pytest.mark.parametrize("name", ["ext_uncertainty_recheck", "ext_uncertainty_recheck_boot"])
def test_recheck_quick_runs_base_per_rank(tmp_path, name):
    """The recheck configs (the doubtful cells at more repetitions) run --quick: Base only, per-rank
    rows present, and each task's repetitions are clusters of their own (two tasks of 20)."""
    t = run(name, quick=True, out=tmp_path, progress=False)
    assert set(t.method) == {"base"} and set(t.dataset) == {"emoji"}
    ranks = t[t.metric == "coverage_rank"]
    assert set(ranks.band) == {f"rank{i}" for i in range(1, 11)} and set(ranks["count"]) == {20}
    cov = t[(t.metric == "coverage") & (t.band == "lt1sigma")]
    assert cov.groupby(["rep", "batch_rep"]).ngroups == 40


def test_fit_configs_draw_what_their_siblings_draw():
    """The configs of the methods that fit or iterate share the design of the tuning and held-out
    configs (data, oracles, ε, seed, parameters: only the methods differ), so every repetition,
    subset and resample is the same draw: Base's rows of the two held-out --quick runs are equal."""
    for a in ("ext_uncertainty_coverage", "ext_uncertainty_heldout"):
        for b in (f"{a}_fit", f"{a}_power"):
            for quick in (False, True):
                ca, cb = load_config(a, quick=quick), load_config(b, quick=quick)
                assert (ca.datasets, ca.oracles, ca.epsilons, ca.seed, ca.repetitions, ca.params) == \
                       (cb.datasets, cb.oracles, cb.epsilons, cb.seed, cb.repetitions, cb.params), (a, quick)
        # between them every method intervals() offers that the sibling does not measure
        fit, power = (set(load_config(f"{a}{x}").methods) for x in ("_fit", "_power"))
        # every method that applies to these (categorical) datasets: not those assuming an ordered domain,
        # nor EB-Shrink, whose coverage (its own Morris interval and the bootstrap) is measured per band by
        # benchmarks/bench_ordered.py (docs/results/ordered-domains.md), nor the deployments' releases
        # (no family: rounding baselines, measured by benchmarks/bench_central.py)
        expected = {m for m in methods.available().index
                    if not methods.get(m).needs_order and methods.get(m).family is not None} - {"eb-shrink"}
        assert fit | power | set(load_config(a).methods) == expected
        assert fit & power == {"base"} and not (fit | power) - {"base"} & set(load_config(a).methods)


def test_fit_quick_counts_flags_and_the_unflagged_entries(tmp_path):
    """--quick of the configs for the methods that fit or iterate: every bootstrapped method's
    ``coverage`` rows count their flagged entries, and the unflagged metrics hold exactly the rest
    of each band (count − flagged), for what the user gets and for the method's own interval alike
    (tuning quick: a Zipf head, where some entries are not flagged); Base's rows (and top-10 ranks)
    of the held-out one equal those of its sibling config's run, the same draws."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = pd.concat([run("ext_uncertainty_coverage_fit", quick=True, out=tmp_path, progress=False),
                       run("ext_uncertainty_coverage_power", quick=True, out=tmp_path, progress=False)])
        h = run("ext_uncertainty_heldout_fit", quick=True, out=tmp_path, progress=False)
        s = run("ext_uncertainty_heldout", quick=True, out=tmp_path, progress=False)
    boot = ["em", "mle-apx-paper", "power", "power-ns", "calibrate"]
    t = t[~((t.experiment == "ext_uncertainty_coverage_power") & (t.method == "base"))]  # Base once
    cov = t[(t.metric == "coverage") & ~t.band.str.startswith("topk")]
    assert cov[cov.method == "base"]["flagged"].isna().all()
    b = cov[cov.method.isin(boot)]
    assert set(b.method) == set(boot) and b["flagged"].notna().all()
    assert ((b["flagged"] >= 0) & (b["flagged"] <= b["count"])).all()
    key = ["method", "level", "band", "batch_rep"]
    free = t[t.metric == "coverage_unflagged"].set_index(key)
    raw = t[t.metric == "coverage_unflagged_raw"].set_index(key)
    base = t[t.metric == "coverage_unflagged_base"].set_index(key)
    rest = b.assign(rest=b["count"] - b["flagged"]).set_index(key)["rest"]
    assert (rest[rest == 0].index.isin(free.index)).sum() == 0  # a band wholly flagged has no row
    np.testing.assert_array_equal(free["count"], rest.loc[free.index])
    np.testing.assert_array_equal(raw.sort_index()["count"], free.sort_index()["count"])
    np.testing.assert_array_equal(base.sort_index()["count"], free.sort_index()["count"])
    # the user's interval contains Base's on every entry: it covers at least as often, row by row
    assert (free.sort_index()["value"] >= base.sort_index()["value"] - 1e-12).all()
    assert (rest > 0).sum() == len(free) > 0 and (b["flagged"] > 0).any()
    # the user's interval on the unflagged entries is the hull with Base's: never narrower than Base's
    assert (free["rel_width"].dropna() >= 1 - 1e-9).all()
    cols = ["level", "band", "batch_rep", "value", "count", "width"]
    pick = lambda x: x[(x.method == "base") & x.metric.isin(["coverage", "coverage_rank"])][cols].sort_values(cols[:3])
    assert len(pick(h)) > 0
    np.testing.assert_array_equal(pick(h).to_numpy(dtype=str), pick(s).to_numpy(dtype=str))
