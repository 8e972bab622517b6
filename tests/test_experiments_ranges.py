"""The range-query experiment (kind "range-queries", configs/ext_range_queries.toml) runs --quick;
its simulated MSE agrees with the exact variances; the figure's lines are the table's means."""

import numpy as np
import pytest

from ldpopt.experiments.figures.draw import figure
from ldpopt.experiments.runner import run
from ldpopt.experiments.task_kinds.ranges import parse_method


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    return run("ext_range_queries", quick=True, out=tmp_path_factory.mktemp("rq"), progress=False)


def test_quick_table_has_every_method_and_length(table):
    mse = table[table.metric == "mse"]
    assert set(mse.method) == {"flat", "hh2", "hh2-c", "hh4", "hh4-c", "hh4-nn", "hh16", "hh16-c", "haar"}
    assert sorted(set(mse.length)) == [1, 4, 16, 48]
    assert (mse.value >= 0).all() and np.isfinite(mse.value).all()
    ex = table[table.metric == "mse-exact"]
    assert "hh4-nn" not in set(ex.method) and set(ex.method) == set(mse.method) - {"hh4-nn"}


def test_quick_mse_is_near_the_exact_variance(table):
    """Pooled over repetitions, lengths and methods (2 × 4 × 8 means of 20 squared errors each), the
    simulated MSE / exact variance ratio is 1 within its sampling error."""
    t = table[table.method != "hh4-nn"].pivot_table(index=["method", "length", "rep"], columns="metric", values="value")
    ratio = t["mse"].sum() / t["mse-exact"].sum()
    assert 0.85 <= ratio <= 1.15


def test_consistency_lowers_the_exact_variance_of_long_ranges(table):
    ex = table[(table.metric == "mse-exact") & (table.length == 16)].groupby("method").value.mean()
    for B in (2, 4, 16):
        assert ex[f"hh{B}-c"] < ex[f"hh{B}"]


def test_parse_method():
    assert parse_method("hh4-c") == ("hh", 4, "c") and parse_method("hh16") == ("hh", 16, "raw")
    assert parse_method("haar") == ("haar", None, "raw")
    for bad in ("hh1", "hh", "hh4-x", "tree"):
        with pytest.raises(ValueError, match="range-queries method"):
            parse_method(bad)


def test_figures_plot_the_table_means(table, tmp_path, monkeypatch):
    import matplotlib.pyplot as plt

    import ldpopt.experiments.figures.style as S

    figs = []
    monkeypatch.setattr(plt, "close", lambda *a, **k: None)
    real_save = S.save
    monkeypatch.setattr(S, "save", lambda fig, path, dpi=S.DPI: (figs.append(fig), real_save(fig, path, dpi))[1])
    paths = figure("range-queries")(table, {}, tmp_path, "rq")
    assert [p.name for p in paths] == ["rq_length.png", "rq_epsilon.png"]
    ax = figs[0].axes[1]  # consistent panel of the length figure
    at = table.epsilon == 1.0  # the length figure is drawn at params.plot_epsilon (default 1)
    want = table[at & (table.metric == "mse") & (table.method == "hh4-c")].groupby("length").value.mean()
    bars = [c for c in ax.containers if c.get_label() == "HH B=4 consistent"][0]
    np.testing.assert_allclose(np.asarray(bars.lines[0].get_ydata(), float), want.sort_index().to_numpy(float))
