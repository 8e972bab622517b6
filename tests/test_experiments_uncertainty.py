"""The coverage experiment (kind "coverage", configs/ext_uncertainty_coverage.toml) runs --quick."""

import numpy as np

from ldpopt.experiments import load_config, run
from ldpopt.experiments.tasks_uncertainty import coverage_table


def test_coverage_quick_table(tmp_path):
    cfg = load_config("ext_uncertainty_coverage")
    t = run("ext_uncertainty_coverage", quick=True, out=tmp_path, progress=False)
    assert set(t.method) == set(cfg.methods)
    assert set(t.band) == {"top10", "10-100", "tail", "ge5sigma", "subsets", "topk-set", "topk-sel", "topk-order",
                          "topk-hull", "topk-cal"}
    assert set(t.level) == {0.9, 0.95}
    assert ((t.value >= 0) & (t.value <= 1)).all() and (t["count"] > 0).all()
    # 95 % intervals contain the 90 % ones: coverage and width are monotone in the level
    key = ["rep", "method", "band"]
    a = t[t.level == 0.9].set_index(key).sort_index()
    b = t[t.level == 0.95].set_index(key).sort_index()
    assert (b.value >= a.value - 1e-12).all() and (b.width >= a.width - 1e-15).all()
    # analytic Base/Norm: pooled per-value coverage near nominal even in 3 quick repetitions
    base = t[(t.method.isin(["base", "norm"])) & (t.band.isin(["top10", "10-100", "tail"]))]
    pooled = coverage_table(base, by=())
    for lv in (0.9, 0.95):
        s = base[base.level == lv]
        want = np.average(s.value, weights=s["count"])
        assert abs(want - lv) < 0.05, (lv, want)
        # coverage_table pools the same way, per band
        for band in ("top10", "10-100", "tail"):
            sb = s[s.band == band]
            assert abs(pooled[(lv, band)].iloc[0] - np.average(sb.value, weights=sb["count"])) < 1e-12
