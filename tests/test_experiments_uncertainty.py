"""The coverage experiments (kind "coverage-batch", configs/ext_uncertainty_*.toml) run --quick."""

import numpy as np

from ldpopt.experiments import load_config, run
from ldpopt.experiments.tasks_uncertainty import coverage_table


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


def test_recheck_quick_runs_base_per_rank(tmp_path):
    """The recheck config (the doubtful cells at more repetitions) runs --quick: Base only, per-rank
    rows present, and each task's repetitions are clusters of their own (two tasks of 20)."""
    t = run("ext_uncertainty_recheck", quick=True, out=tmp_path, progress=False)
    assert set(t.method) == {"base"} and set(t.dataset) == {"emoji"}
    ranks = t[t.metric == "coverage_rank"]
    assert set(ranks.band) == {f"rank{i}" for i in range(1, 11)} and set(ranks["count"]) == {20}
    cov = t[(t.metric == "coverage") & (t.band == "lt1sigma")]
    assert cov.groupby(["rep", "batch_rep"]).ngroups == 40
