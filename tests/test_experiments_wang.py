"""Wang et al. experiment kinds, configs and figures (ldpopt/experiments/task_kinds/wang.py, figures/draw.py,
experiments/configs/wang_*.toml): every config's --quick run completes with the expected table and sane
values; the figures are drawn from the saved results only."""

from __future__ import annotations

import shutil

import numpy as np
import pandas as pd
import pytest

import ldpopt.experiments.task_kinds.wang as tw
import ldpopt.experiments.task_kinds.wang_runs as twr
from ldpopt.experiments import run, toolkit
from ldpopt.experiments.config import load_config
from ldpopt.experiments.runner import tasks_of
from ldpopt.experiments.config import config_paths

CONFIGS = [p.stem for p in config_paths("wang_*.toml")]
KEYS = ["experiment", "dataset", "oracle", "epsilon", "rep", "method", "metric", "value"]


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    out = tmp_path_factory.mktemp("wang")
    return out, {name: run(name, quick=True, out=out, progress=False) for name in CONFIGS}


def _n_methods(cfg, rep):
    slow = set(cfg.params.get("slow_methods", ("power", "power-ns", "calibrate")))
    return sum(1 for m in cfg.methods if not (m in slow and rep >= cfg.params.get("slow_reps", 10**9)))


def test_every_figure_has_a_config():
    # arXiv Fig. 1-5, 7; NDSS Fig. 1-3, 4, 5, 6, 7, 8, 9, 10
    for fig in ("arxiv_fig1", "arxiv_fig2", "arxiv_fig3", "arxiv_fig4", "arxiv_fig5", "arxiv_fig7",
                "ndss_fig1_3", "ndss_fig4", "ndss_fig5", "ndss_fig6", "ndss_fig7", "ndss_fig8", "ndss_fig9", "ndss_fig10"):
        assert any(c.startswith(f"wang_{fig}_") for c in CONFIGS), fig
    for name in CONFIGS:
        cfg = load_config(name)
        assert {"grr", "oue", "olh"} <= set(cfg.oracles) or cfg.kind == "choose-method", name
        assert cfg.repetitions >= 30 or cfg.kind == "choose-method", name


def test_quick_tables_have_the_expected_shape(quick):
    _, tables = quick
    per_query = {"full-domain": lambda p: 2, "set-value": lambda p: 2 * len(p["rho"]),
                 "fixed-sets": lambda p: 2 * len(p["partitions"]), "top-k": lambda p: 2 * len(p["k"]),
                 "benefit": lambda p: 3 * len(p["n"])}
    for name, table in tables.items():
        cfg = load_config(name, quick=True)
        assert table is not None and set(KEYS) <= set(table.columns), name
        assert np.all(np.isfinite(table.value)), name
        if cfg.kind in per_query:
            expected = sum(_n_methods(cfg, t.rep) * per_query[cfg.kind](cfg.params) for t in tasks_of(cfg))
            if cfg.kind == "benefit":
                expected += len(tasks_of(cfg)) * len(cfg.params["n"])  # base-analytic rows
            assert len(table) == expected, name
            err = table[table.metric.isin(["mse", "mae"])].value
            assert (err >= 0).all(), name


def test_full_domain_norm_sub_beats_base_and_post_pos_is_base_pos(quick):
    # Seeded quick run (Zipf n=2e4, d=128, eps=1, 2 reps): Base/Norm-Sub = 4.2 (OUE) and 5.2 (OLH);
    # the paper reports ~10x at n=1e6, d=1024. Bound with margin: > 3.
    _, tables = quick
    for name in ("wang_arxiv_fig1_full_domain", "wang_ndss_fig4_full_domain"):
        m = tables[name][tables[name].metric == "mse"].groupby("method").value.mean()
        assert m["base"] / m["norm-sub"] > 3.0, name
        assert abs(m["norm-sub"] / m["mle-apx"] - 1) < 0.1, name   # "almost exactly the same"
        assert m["post-pos"] == m["base-pos"]                       # single values: Post-Pos = Base-Pos
        assert 0.3 < m["base-pos"] / m["base"] < 0.8, name           # "around half"
        assert abs(m["norm"] / m["base"] - 1) < 0.05, name           # Norm ~ Base
    m = tables["wang_ndss_fig4_full_domain"].query("metric == 'mse'").groupby("method").value.mean()
    assert m["power-ns"] < m["norm-sub"]                              # PowerNS best on Zipf (NDSS §V-C)


def test_bias_variance_unbiased_base_and_norm_biased_base_pos(quick):
    _, tables = quick
    cb = twr.combine_bias_variance(tables["wang_ndss_fig1_3_bias_variance"])
    assert (cb.runs == 400).all()
    for m in ("base", "norm"):
        e = cb[cb.method == m]
        z = e.bias / np.sqrt(e.variance / e.runs)
        # 64 values, 5-sigma each: a false alarm has probability < 64 * 6e-7
        assert np.abs(z).max() < 5.0, m
    # Norm and Norm-Sub sum to one: the bias sums to 0 (NDSS Fig. 2 "bias sum: 0"); Base-Pos > 0
    assert abs(cb[cb.method == "norm-sub"].bias.sum()) < 1e-12
    assert cb[cb.method == "base-pos"].bias.sum() > 0.1
    # Base's empirical variance against Eq. 2 (rel. sd of a 400-run variance ~7%, averaged over 64 values)
    from ldpopt import oracles
    ds = toolkit.dataset_of(tasks_of(load_config("wang_ndss_fig1_3_bias_variance", quick=True))[0])
    est = oracles.get("olh", epsilon=1.0, d=ds.d).simulate(ds.counts, 0)
    e = cb[cb.method == "base"].sort_values("v")
    assert 0.9 < np.mean(e.variance.to_numpy() / est.variance(ds.frequencies)) < 1.1


def test_set_value_symmetric_for_normalising_methods(quick):
    # Sum-to-one methods: error(A) = -error(complement of A), so MSE(rho) = MSE(100 - rho) in
    # distribution; 200 sets per rho -> sampling noise ~10-15%, bound 0.6..1.6.
    _, tables = quick
    t = tables["wang_arxiv_fig2_set_value"]
    m = t[t.metric == "mse"].groupby(["method", "rho"]).value.mean().unstack()
    for meth in ("norm-sub", "mle-apx", "norm-hyb", "power-ns"):
        assert 0.6 < m.loc[meth, 10.0] / m.loc[meth, 90.0] < 1.6, meth
        assert 0.6 < m.loc[meth, 30.0] / m.loc[meth, 70.0] < 1.6, meth
    assert (m.loc["base-pos", 90.0] > 10 * m.loc["norm-sub", 90.0])   # systematic bias grows with rho


def test_random_subsets_are_uniform_and_of_the_right_size():
    Q = tw.random_subsets(np.random.default_rng(0), 10, 3, 20000)
    assert np.all(Q.sum(axis=1) == 3)
    # each value is in a subset with probability 3/10 (5-sigma: sd = sqrt(.21/20000) = 0.0032)
    assert np.all(np.abs(Q.mean(axis=0) - 0.3) < 5 * np.sqrt(0.21 / 20000))


def test_benefit_matches_analytic_for_base(quick):
    _, tables = quick
    t = tables["wang_ndss_fig5_benefit"]
    r = t[(t.metric == "ratio")].groupby("method").value.mean()
    # Base's empirical MSE matches Eq. 2 (ratio 1 within the spread of 2 reps x 2 n's), Norm-Sub gains
    assert 0.8 < r["base"] < 1.25
    assert r["norm-sub"] > 2.0
    n_prime = t[(t.metric == "n_prime") & (t.method == "norm-sub")]
    ratio = t[(t.metric == "ratio") & (t.method == "norm-sub")]
    np.testing.assert_allclose(n_prime.value.to_numpy(), ratio.value.to_numpy() * n_prime.n_users.to_numpy())


def test_fixed_sets_and_choose_method(quick):
    _, tables = quick
    t = tables["wang_arxiv_fig4_fixed_sets"]  # quick: emoji groups (10) and subgroups (94)
    assert set(t.query_set) == {"group", "subgroup"}
    rho = t.groupby("query_set").rho.first()
    assert rho["group"] == pytest.approx(10.0) and rho["subgroup"] == pytest.approx(100 / 94)
    c = tables["wang_ndss_fig9_choose_method"]
    assert set(c.fit) == {"real", "norm-sub"}
    chosen = tw.chosen_methods(c)
    assert set(chosen.chosen) <= set(load_config("wang_ndss_fig9_choose_method", quick=True).methods)


def test_errors_name_the_argument(quick):
    from ldpopt.experiments.runner import Task

    task = Task("x", "fixed-sets", "emoji", "olh", 1.0, 0, 1, ("base",), (("partitions", ("nope",)),))
    with pytest.raises(ValueError, match="params.partitions"):
        tw.fixed_sets(task)


def test_every_kind_works_for_every_oracle():
    from ldpopt.experiments.runner import Task

    z = (("d", 32), ("n", 5000), ("name", "zipf"), ("rng", 3))
    for oracle in ("grr", "oue", "sue", "olh", "blh", "hr", "ss"):
        t = Task("x", "set-value", z, oracle, 2.0, 0, 1, ("base", "post-pos", "norm-sub"), (("rho", (50,)),))
        df = pd.DataFrame(tw.set_value(t))
        assert len(df) == 6 and np.all(df.value >= 0), oracle


def test_figures_from_saved_results_only(quick, tmp_path, monkeypatch):
    from ldpopt.experiments.figures import draw as P
    from ldpopt.experiments.figures import style as S

    out, _ = quick
    folder = tmp_path / "copy"
    shutil.copytree(out / "wang_ndss_fig4_full_domain-quick", folder)
    # the plot must not rerun anything: make the runner and the oracles unusable
    monkeypatch.setattr("ldpopt.experiments.runner.execute", lambda *a, **k: pytest.fail("recomputed"))
    monkeypatch.setattr("ldpopt.oracles.get", lambda *a, **k: pytest.fail("recomputed"))
    paths = P.plot(folder, out=tmp_path / "figs")
    assert [p.name for p in paths] == ["wang_ndss_fig4_full_domain_mse.png", "wang_ndss_fig4_full_domain_mae.png"]
    from PIL import Image

    for p in paths:
        assert p.stat().st_size > 2_000 and p.read_bytes()[:4] == b"\x89PNG"
        with Image.open(p) as im:
            # two panels of figures.style.PANEL at figures.style.DPI; a blank or failed figure has only a few colours
            assert im.size[0] == round(2 * S.PANEL[0] * S.DPI) and im.size[1] > 200
            assert len(im.convert("RGB").getcolors(maxcolors=4096)) >= 8
    assert {"full-domain", "set-value", "fixed-sets", "top-k", "bias-variance", "benefit", "choose-method"} <= set(P.plot_kinds())
    with pytest.raises(ValueError, match="no saved results"):
        P.plot(tmp_path / "missing")


def test_large_domain_extension_quick(tmp_path):
    """ext_full_domain_large --quick (AOL prefixes, d = 120,978): the table covers every configured
    method but the slow ones, and Norm-Sub beats Base on this sparse domain by far (seeded run: 310×)."""
    cfg = load_config("ext_full_domain_large", quick=True)
    t = run("ext_full_domain_large", quick=True, out=tmp_path, progress=False)
    assert set(t.dataset) == {"aol"}
    assert set(t.method) == set(cfg.methods) - {"power", "power-ns"}
    mse = t[t.metric == "mse"].groupby("method").value.mean()
    assert mse["base"] / mse["norm-sub"] > 100
