"""The Square Wave experiment (kind "numeric", configs/ext_numeric.toml) runs --quick; its figure draws
the per-ε mean of a planted table; the numeric columns come from the shipped transaction files."""

import numpy as np
import pandas as pd
import pytest

from ldpopt import datasets
from ldpopt.experiments.runner import run
from ldpopt.numeric.columns import unit_values


def test_numeric_quick_table(tmp_path):
    t = run("ext_numeric", quick=True, out=tmp_path, progress=False)
    assert set(t["method"]) == {"sw-ems", "sw-em", "sw-penalized"}
    assert set(t["metric"]) == {"w1", "range-0.1", "range-0.4", "quantile", "converged"}
    conv = t[t.metric == "converged"].set_index("method")["value"]
    assert conv.min() == 1.0  # every method met its own stopping rule / certificate
    assert sorted(set(t["epsilon"])) == [0.5, 1.0, 2.0]
    w1 = t[(t.metric == "w1") & (t.epsilon == 1.0)].set_index("method")["value"]
    # Beta(5, 2), n = 20,000, ε = 1, d = 64: every estimate within 0.05 of the truth in W1 (the
    # uniform distribution is 0.17 away), and the smoothed estimators no worse than 1.5x plain EM
    assert w1.max() < 0.05
    assert w1["sw-ems"] < 1.5 * w1["sw-em"] and w1["sw-penalized"] < 1.5 * w1["sw-em"]
    assert t.loc[t.method == "sw-penalized", "lam"].notna().all()


def test_numeric_plot_draws_the_mean(tmp_path, monkeypatch):
    import matplotlib.pyplot as plt

    import ldpopt.experiments.figures.style as S
    from ldpopt.experiments.figures.draw import figure

    rows = [dict(dataset="beta", oracle="sw", epsilon=e, rep=r, method=m, metric="w1", value=v * (r + 1))
            for e in (1.0, 2.0) for r in range(2) for m, v in (("sw-ems", 0.01), ("sw-em", 0.02))]
    figs = []
    monkeypatch.setattr(plt, "close", lambda *a, **k: None)
    real_save = S.save
    monkeypatch.setattr(S, "save", lambda fig, path, dpi=S.DPI: (figs.append(fig), real_save(fig, path, dpi))[1])
    paths = figure("numeric")(pd.DataFrame(rows), {}, tmp_path, "num")
    assert [p.name for p in paths] == ["num_numeric.png"]
    ax = figs[0].axes[0]
    lines = {c.get_label(): c.lines[0] for c in ax.containers}  # errorbar containers carry the labels
    assert np.allclose(lines["SW + EMS (Li et al.)"].get_ydata(), [0.015, 0.015])  # mean of 0.01 and 0.02
    assert np.allclose(lines["SW + EM"].get_ydata(), [0.03, 0.03])
    assert np.allclose(lines["SW + EM"].get_xdata(), [1.0, 2.0])


@pytest.mark.parametrize("name, n, mean, top", [("retail-basket-size", 88_162, 908_576 / 88_162, 76),
                                                ("bms-webview-1-session-length", 59_602, 149_639 / 59_602, 267),
                                                ("bms-webview-2-session-length", 77_512, 358_278 / 77_512, 161)])
def test_length_columns_match_the_shipped_files_statistics(name, n, mean, top):
    ds = datasets.load(name)
    # n transactions and Σ lengths = the item occurrences recorded in the folders' SOURCE.md
    assert ds.n == n and ds.labels[-1] == top
    assert (ds.labels * ds.counts).sum() / ds.n == pytest.approx(mean, rel=1e-12)
    v = unit_values(ds, rng=1)
    assert v.size == n and v.min() >= 0 and v.max() < 1
    # log-scaling is monotone: the values' order is the lengths' order
    lengths = np.repeat(ds.labels, ds.counts)
    assert np.all(np.diff(v[np.argsort(lengths, kind="stable")]) > -np.log((lengths.max() + 1)) ** -1)
