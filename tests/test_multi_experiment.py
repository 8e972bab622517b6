"""The ext_multi and ext_multi_peers experiments' quick runs: their numbers against properties that
could fail (consistency helps, ldpopt's check certifies the optimum, the reconstruction beats direct
3-way collection at this size) and their figures."""

from __future__ import annotations

from ldpopt.experiments import run
from ldpopt.experiments.config import load_config
from ldpopt.experiments.figures.draw import plot


def test_ext_multi_quick_numbers_and_figure(tmp_path):
    t = run("ext_multi", quick=True, out=tmp_path, progress=False)
    cfg = load_config("ext_multi", quick=True)
    assert set(t.method) == set(cfg.methods)
    assert (t[t.method.str.endswith(":weighted")].status == "optimal").all()
    m = t.groupby(["epsilon", "method", "metric"]).value.mean()
    for eps in cfg.epsilons:
        # consistency lowers the error of the 2-way marginals below the raw and per-marginal Norm-Sub ones
        assert m[eps, "2way:weighted", "tv2"] < m[eps, "2way:norm-sub", "tv2"] < m[eps, "2way:raw", "tv2"]
        # 3-way marginals from the consistent 2-way ones beat collecting the 3-way ones without consistency
        assert m[eps, "2way:weighted", "tv3"] < m[eps, "3way:raw", "tv3"]
    assert (t[t.metric == "fw-gap"].value < 1e-3).all()
    paths = plot(tmp_path / "ext_multi-quick", out=tmp_path / "fig")
    assert [p.name for p in paths] == ["ext_multi_oue.png"] and paths[0].stat().st_size > 10_000


def test_ext_multi_peers_quick_numbers(tmp_path):
    t = run("ext_multi_peers", quick=True, out=tmp_path, progress=False)
    m = t.groupby(["oracle", "epsilon", "method"]).value.mean()
    for key in {k[:2] for k in m.index}:
        for proto in ("spl", "smp", "rsfd"):
            # both projections onto the simplex are no worse than the raw unbiased estimate on average
            # (equal when no entry is negative); over the run, better for SPL, whose ε/k per attribute is small
            for post in ("norm-sub", "peer-mi"):
                assert m[key + (f"{proto}:{post}",)] <= m[key + (f"{proto}:raw",)] + 1e-15
    mean = t.groupby("method").value.mean()
    assert mean["spl:norm-sub"] < mean["spl:raw"] and mean["spl:peer-mi"] < mean["spl:raw"]
    assert set(t.metric) == {"tv1"}
