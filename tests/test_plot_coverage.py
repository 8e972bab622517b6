"""The coverage figure (issue 13): one panel per (oracle, ε, level), each band's marker at the pooled
coverage Σ value·count / Σ count of a planted table, the nominal level drawn, no line joining methods."""

import numpy as np
import pandas as pd

from ldpopt.experiments.figures.draw import figure


def _table():
    rows = []
    for rep, (v_base, v_norm) in enumerate([(0.8, 1.0), (1.0, 0.6)]):
        for method, v in (("base", v_base), ("norm", v_norm)):
            for level in (0.9, 0.95):
                rows.append(dict(experiment="x", dataset="zipf", oracle="oue", epsilon=1.0, rep=rep, method=method,
                                 metric="coverage", level=level, band="2-5sigma", value=v, count=10 * (rep + 1),
                                 width=0.1, interval="normal"))
    return pd.DataFrame(rows)


def test_coverage_markers_are_the_pooled_coverage(tmp_path, monkeypatch):
    import matplotlib.pyplot as plt

    figs = []
    monkeypatch.setattr(plt, "close", lambda *a, **k: None)  # keep the figure to inspect it
    import ldpopt.experiments.figures.style as S
    real_save = S.save
    monkeypatch.setattr(S, "save", lambda fig, path, dpi=S.DPI: (figs.append(fig), real_save(fig, path, dpi))[1])
    paths = figure("coverage")(_table(), {}, tmp_path, "cov")
    assert [p.name for p in paths] == ["cov_coverage.png"] and paths[0].stat().st_size > 0
    axes = [ax for ax in figs[0].axes if ax.get_visible()]
    titles = [" ".join(ax.get_title(loc="left").split()) for ax in axes]  # left titles, wrapped to the panel
    assert len(axes) == 2 and "nominal 90%" in titles[0] and "ε = 1" in titles[0] and "nominal 95%" in titles[1]
    for ax, level in zip(axes, (0.9, 0.95)):
        hlines = [ln for ln in ax.get_lines() if ln.get_linestyle() == "--"]
        assert len(hlines) == 1 and np.allclose(hlines[0].get_ydata(), level)
        tail = [ln for ln in ax.get_lines() if ln.get_label() == "2σ ≤ f < 5σ"][0]
        assert tail.get_linestyle() == "None"  # categories: markers only
        # pooled: base (0.8·10 + 1.0·20)/30, norm (1.0·10 + 0.6·20)/30
        assert np.allclose(tail.get_ydata(), [28 / 30, 22 / 30])


def test_full_grid_is_one_page_per_oracle(tmp_path, monkeypatch):
    """2 oracles × 2 ε × 2 levels: two pages, each one oracle, rows ε and columns the levels."""
    import matplotlib.pyplot as plt

    import ldpopt.experiments.figures.style as S

    figs = []
    monkeypatch.setattr(plt, "close", lambda *a, **k: None)
    real_save = S.save
    monkeypatch.setattr(S, "save", lambda fig, path, dpi=S.DPI: (figs.append(fig), real_save(fig, path, dpi))[1])
    t = _table()
    big = pd.concat([t.assign(oracle=o, epsilon=e) for o in ("grr", "olh") for e in (0.5, 4.0)])
    paths = figure("coverage")(big, {}, tmp_path, "cov")
    assert [p.name for p in paths] == ["cov_coverage.png", "cov_coverage_p2.png"]
    for fig, oracle in zip(figs, ("GRR", "OLH")):
        axes = [ax for ax in fig.axes if ax.get_visible() and ax.get_title(loc="left")]
        titles = [" ".join(ax.get_title(loc="left").split()) for ax in axes]
        assert len(titles) == 4 and all(ti.startswith(oracle) for ti in titles), titles
        assert ["ε = 0.5" in ti for ti in titles] == [True, True, False, False]  # rows: ε
        assert ["nominal 90%" in ti for ti in titles] == [True, False, True, False]  # columns: level
