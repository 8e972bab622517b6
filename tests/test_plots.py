"""Every figure kind is readable as saved (ldpopt/experiments/plot*.py, drawn as experiments/figures.toml says).

Each figure is checked at the moment it is saved (``Figure.savefig`` is wrapped, so the check sees the
figure exactly as written, at the dpi it is written with):

* shown at 100 % on a 96-dpi screen, the smallest text is ≥ 8 pt: every font ≥ 8 pt and dpi ≥ 96;
* no text is cut off by the figure's edge, and no two panel titles overlap;
* at most one legend per figure, a figure legend, outside every axes' data area;
* the suptitle lies above every axes (titles included) of the first row;
* a figure page holds at most ``figures.style.ROWS_PER_PAGE`` rows of panels;
* panel titles name ε as ``ε = …`` wherever ε is a row key, and axis labels say what they measure.

Wang kinds are drawn from small synthetic tables (tests/_plot_tables.py, the layout of the saved
tables); bias-variance, choose-method (quick) and the Jia kinds from their real ``--quick`` runs.
"""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.text import Text  # noqa: E402

import _plot_tables as T  # noqa: E402
from ldpopt import oracles  # noqa: E402
from ldpopt.experiments.figures import draw as P  # noqa: E402
from ldpopt.experiments.figures import style as S  # noqa: E402
from ldpopt.experiments.figures import wang as W  # noqa: E402
from ldpopt.experiments import run  # noqa: E402

WANG_KINDS = ["full-domain", "set-value", "top-k", "fixed-sets", "benefit", "choose-method"]
QUICK_CONFIGS = ["wang_ndss_fig1_3_bias_variance", "wang_ndss_fig9_choose_method", "wang_ndss_fig4_full_domain", "jia_fig4_noise",
                 "jia_fig5_6_hh_threshold", "jia_fig7_error_oracles", "jia_fig8_9_hh_epsilon_oracles"]


def _texts(fig):
    """The texts that are drawn: tick labels only of the ticks inside the view limits."""
    ticklabels = {id(t) for ax in fig.axes for axis in (ax.xaxis, ax.yaxis)
                  for tick in axis.get_major_ticks() + axis.get_minor_ticks() for t in (tick.label1, tick.label2)}
    drawn = [t for ax in fig.axes if ax.axison for axis in (ax.xaxis, ax.yaxis) for tick in axis._update_ticks()
             for t in (tick.label1, tick.label2) if t.get_visible()]
    other = [t for t in fig.findobj(Text) if id(t) not in ticklabels and t.get_visible()]
    return [t for t in other + drawn if t.get_text().strip()]


def readability_problems(fig: Figure, dpi) -> list[str]:
    """Why ``fig`` saved at ``dpi`` is hard to read (empty list: readable)."""
    dpi = fig.dpi if dpi in (None, "figure") else float(dpi)
    bad = []
    if dpi < 96:
        bad.append(f"saved at {dpi} dpi < 96: text shrinks below its point size at 100 %")
    r = fig.canvas.get_renderer()
    fig.draw_without_rendering()
    fbox = fig.bbox
    for t in _texts(fig):
        if t.get_fontsize() < S.MIN_PT:
            bad.append(f"text {t.get_text()[:40]!r} at {t.get_fontsize():.1f} pt < {S.MIN_PT}")
        b = t.get_window_extent(r)
        if b.x0 < fbox.x0 - 1 or b.x1 > fbox.x1 + 1 or b.y0 < fbox.y0 - 1 or b.y1 > fbox.y1 + 1:
            bad.append(f"text {t.get_text()[:40]!r} cut off by the figure edge")
    axes = [ax for ax in fig.axes if ax.axison]
    legends = [ax.get_legend() for ax in fig.axes if ax.get_legend() is not None] + list(fig.legends)
    if len(legends) > 1:
        bad.append(f"{len(legends)} legends: one shared legend per figure")
    for lg in legends:
        lb = lg.get_window_extent(r)
        for ax in axes:
            if lb.overlaps(ax.get_window_extent(r)):
                bad.append(f"legend overlaps the data area of axes {ax.get_title()!r}")
    st = fig._suptitle
    if st is not None and st.get_text():
        low = st.get_window_extent(r).y0
        top = max(ax.get_tightbbox(r).y1 for ax in axes)
        if low < top - 0.5:
            bad.append(f"suptitle (bottom {low:.0f} px) overlaps the first row (top {top:.0f} px)")
    titles = [(ax.title, ax.title.get_window_extent(r)) for ax in axes if ax.title.get_text().strip()]
    for i, (ta, ba) in enumerate(titles):
        for tb, bb in titles[i + 1:]:
            if ba.overlaps(bb):
                bad.append(f"titles {ta.get_text()[:30]!r} and {tb.get_text()[:30]!r} overlap")
    rows = {round(ax.get_position().y0, 3) for ax in axes}
    if len(rows) > S.ROWS_PER_PAGE:
        bad.append(f"{len(rows)} rows of panels on one page (> {S.ROWS_PER_PAGE})")
    return bad


@contextmanager
def recording():
    """Every figure saved inside the block: (figure, file name, readability problems at save time)."""
    out = []
    real = Figure.savefig

    def spy(self, fname, *a, **k):
        out.append((self, Path(fname).name, readability_problems(self, k.get("dpi"))))
        return real(self, fname, *a, **k)

    Figure.savefig = spy
    try:
        yield out
    finally:
        Figure.savefig = real


def small(kind):
    """2 datasets × 2 oracles (4 rows, one page): figures are slow to draw on a loaded machine."""
    t = T.table(kind, oracles=T.ORACLES[:2], reps=2)
    return t[t.metric != "mae"]


class _Drawn(dict):
    """kind or config -> (its table, the figures saved when drawing it); each drawn once per process, on
    first use, so that pytest-xdist workers share the drawing out instead of each drawing everything."""

    def __init__(self, out, runs):
        super().__init__()
        self.out, self.runs = out, runs

    def __missing__(self, what):
        if what in WANG_KINDS:
            t = small(what)
            (self.out / what).mkdir()
            with recording() as saved:
                paths = P.figure(what)(t, T.meta(what), self.out / what, "f")
            assert [p.name for p in paths] == [name for _, name, _ in saved] and all(p.is_file() for p in paths)
            self[what] = (t, saved)
        else:
            run(what, quick=True, out=self.runs, progress=False)
            with recording() as saved:
                paths = P.plot(self.runs / f"{what}-quick", out=self.out / what)
            assert len(paths) == len(saved) >= 1
            self[what] = (None, saved)
        return self[what]


@pytest.fixture(scope="module")
def drawn(tmp_path_factory):
    return _Drawn(tmp_path_factory.mktemp("figs"), tmp_path_factory.mktemp("quick"))


@pytest.mark.parametrize("what", WANG_KINDS + QUICK_CONFIGS)
def test_figures_are_readable(what, drawn):
    saved = drawn[what][1]
    problems = [f"{name}: {p}" for _, name, ps in saved for p in ps]
    assert not problems, "\n".join(problems[:20])


def test_many_rows_are_split_into_pages(tmp_path):
    """4 rows at 2 rows a page: 2 pages, the first under the name documents link to, none taller
    than a 2-row page; the default page holds ROWS_PER_PAGE rows."""
    t = small("full-domain")
    s = W.summarise(t, "epsilon")
    with recording() as saved:
        paths = W.grid_pages(s, "epsilon", ("dataset", "oracle"), "ε", "MSE", "t", tmp_path, "f_mse", per_page=2)
    assert [p.name for p in paths] == ["f_mse.png", "f_mse_p2.png"]
    assert all(len({round(ax.get_position().y0, 3) for ax in fig.axes}) == 2 for fig, _, _ in saved)
    assert "(page 1 of 2)" in saved[0][0]._suptitle.get_text()
    assert "page" not in W.grid_pages(s, "epsilon", ("dataset", "oracle"), "ε", "MSE", "t", tmp_path, "g")[0].name
    assert S.ROWS_PER_PAGE == 4


@pytest.mark.parametrize("kind", ["set-value", "top-k", "benefit", "choose-method"])
def test_panel_titles_name_epsilon(kind, drawn):
    fig = drawn[kind][1][0][0]
    titles = [ax.get_title().replace("\n", " ") for ax in fig.axes if ax.axison]
    assert titles and all("ε = " in t for t in titles), titles
    labels = [S.oracle_label(o) for o in oracles.available(sketches=True)]
    assert all(any(o in t for o in labels) for t in titles), titles  # GRR, not grr


@pytest.mark.parametrize("kind,xlabel,ylabel", [("full-domain", "ε (privacy budget)", "MSE (frequency scale)"),
                                                ("set-value", "ρ (query size, % of the domain d)", "MSE"),
                                                ("top-k", "k (number of most frequent values)", "MSE")])
def test_axis_labels_say_what_they_measure(kind, xlabel, ylabel, drawn):
    for ax in drawn[kind][1][0][0].axes:
        assert ax.get_xlabel() == xlabel and ax.get_ylabel().startswith(ylabel)


def _joins_categories(fig) -> list[str]:
    """Lines drawn between two different x categories (a drawn line that is neither horizontal
    nor vertical)."""
    bad = []
    for ax in fig.axes:
        for ln in ax.get_lines():
            if ln.get_linestyle() in ("None", "", " ") or len(ln.get_xdata()) < 2:
                continue
            x, y = np.asarray(ln.get_xdata(), float), np.asarray(ln.get_ydata(), float)
            if np.ptp(x) > 0 and np.ptp(y) > 0:
                bad.append(f"{ax.get_title()}: line through {len(x)} points")
    return bad


@pytest.mark.parametrize("what", ["choose-method", "wang_ndss_fig9_choose_method"])
def test_fig9_draws_no_line_across_oracles_or_methods(what, drawn):
    saved = drawn[what][1]
    assert saved[-1][1].endswith("_choice.png")
    for fig, name, _ in saved:
        assert not _joins_categories(fig), name
        assert any(len(ax.get_lines()) for ax in fig.axes)


def test_fig9_marks_the_real_best_and_each_fits_pick(drawn):
    t, saved = drawn["choose-method"]
    ax = saved[0][0].axes[0]  # first panel: first oracle, smallest ε
    o, e = t.oracle.iloc[0], t.epsilon.min()
    d = t[(t.oracle == o) & (t.epsilon == e)].groupby(["fit", "method"]).value.mean()
    labels = [tk.get_text() for tk in ax.get_xticklabels()]
    star = [ln for ln in ax.get_lines() if ln.get_marker() == "*"]
    assert len(star) == 1
    best = d["real"].idxmin()
    assert labels[round(star[0].get_xdata()[0])] == W.LABELS[best]
    assert np.isclose(star[0].get_ydata()[0], d["real"][best])
    rings = [ln for ln in ax.get_lines() if ln.get_label().startswith("picked by")]
    assert len(rings) == 2
    for ring, fit in zip(rings, ["norm-sub", "power-ns"]):
        assert labels[round(ring.get_xdata()[0])] == W.LABELS[d[fit].idxmin()]


def test_choice_regret_against_a_hand_count():
    """Per repetition: the synthetic argmin, the real argmin, and the ratio of their real MSEs."""
    from ldpopt.experiments.figures.choose import choice_regret

    rows = []
    real = {0: {"a": 1.0, "b": 2.0, "c": 4.0}, 1: {"a": 3.0, "b": 1.5, "c": 6.0}}
    syn = {0: {"a": 5.0, "b": 1.0, "c": 9.0}, 1: {"a": 0.5, "b": 2.0, "c": 3.0}}
    for rep in (0, 1):
        for fit, vals in (("real", real[rep]), ("norm-sub", syn[rep])):
            rows += [dict(dataset="x", oracle="oue", epsilon=1.0, rep=rep, method=m, metric="mse", value=v,
                          fit=fit) for m, v in vals.items()]
    r = choice_regret(pd.DataFrame(rows)).sort_values("rep")
    assert r.chosen.tolist() == ["b", "a"] and r.best.tolist() == ["a", "b"]
    assert np.allclose(r.ratio, [2.0 / 1.0, 3.0 / 1.5])
    with pytest.raises(ValueError, match="no synthetic rows"):
        choice_regret(pd.DataFrame(rows)[lambda d: d.fit == "real"])


def test_style_helpers():
    assert S.panel_title(dataset="zipf", oracle="blh", epsilon=1.0) == "zipf · BLH · ε = 1"
    assert S.panel_title(dataset="emoji", query_set="group", oracle="oue") == "emoji · queries: group · OUE"
    assert S.paged(list(range(9)), 4) == [[0, 1, 2, 3], [4, 5, 6, 7], [8]]
    with pytest.raises(ValueError, match="per_page"):
        S.paged([1], 0)
    assert S.page_path(Path("d"), "x_mse", 1, 3).name == "x_mse_p2.png"


@pytest.mark.parametrize("text", ["pos-bms-webview-2 · GRR — others vs Norm-Sub",
                                  "bms-webview-2 · OUE · ε = 4 — variance: Eq. 14 2.724e+04, fitted 2.711e+04; mean 3.9"])
def test_a_long_panel_title_is_wrapped_inside_its_panel(text):
    # the arXiv Fig. 7 title ran past its panel ("Norm-Su"), the Jia Fig. 4 titles into each other
    fig, axes = S.new_figure(1, 2)
    for ax in axes[0]:  # a panel as the Wang figures draw it: log y axis with its label
        ax.plot([0.2, 2], [1e-3, 1e-2])
        ax.set_yscale("log")
        ax.set_ylabel("MAE (frequency scale)")
        ax.set_xlabel("ε (privacy budget)")
        S.title(ax, text, S.PANEL[0])
    r = fig.canvas.get_renderer()
    fig.draw_without_rendering()
    for ax in axes[0]:  # within its own axes' width (so within the figure, clear of the neighbour)
        tb, ab = ax.title.get_window_extent(r), ax.get_window_extent(r)
        assert tb.x0 >= ab.x0 - 1 and tb.x1 <= ab.x1 + 1, (ax.get_title(), tb, ab)
    assert not axes[0][0].title.get_window_extent(r).overlaps(axes[0][1].title.get_window_extent(r))


def test_fig9_choice_panel_plots_the_per_repetition_cost(drawn):
    """The cost panel's points are the mean over repetitions of choice_regret's ratio, and the
    hit-rate panel's the share of repetitions whose pick is the real best, per oracle and ε."""
    from ldpopt.experiments.figures.choose import choice_regret

    t, saved = drawn["choose-method"]
    fig = saved[-1][0]
    top, bottom = fig.axes[0], fig.axes[2]  # fit Norm-Sub: cost, then hit rate (2 fits → 2 columns)
    r = choice_regret(t)
    r = r[r.fit == "norm-sub"]
    oracles = list(dict.fromkeys(t.oracle))
    for k, eps in enumerate(sorted(t.epsilon.unique())):
        e = r[r.epsilon == eps]
        want_cost = e.groupby("oracle").ratio.mean().reindex(oracles).to_numpy()
        want_hit = 100 * (e.chosen == e.best).groupby(e.oracle).mean().reindex(oracles).to_numpy()
        assert np.allclose(top.containers[k].lines[0].get_ydata(), want_cost)
        assert np.allclose(bottom.containers[k].lines[0].get_ydata(), want_hit)
        assert (want_cost >= 1 - 1e-12).all()


def _reference_and_others(ax):
    """(reference errorbar containers, the other containers) of a two-panel axes, by legend label."""
    conts = [c for c in ax.containers if c.get_label() and not c.get_label().startswith("_")]
    refs = [c for c in conts if "(reference" in c.get_label()]
    return refs, [c for c in conts if c not in refs]


@pytest.mark.parametrize("kind", ["full-domain", "set-value", "benefit"])
def test_references_are_drawn_on_top_distinguishable_and_rows_share_y(kind, drawn):
    """Each panel's reference (Base left, Norm-Sub right) lies above every other line, dashed and
    hollow, so neither hides under a method on the same values (Norm-Sub under MLE-Apx, Base under
    Norm); the two panels of a row share one y axis (same limits, the same scale)."""
    for fig, name, _ in drawn[kind][1]:
        axes = [ax for ax in fig.axes if ax.axison]
        assert len(axes) % 2 == 0
        for left, right in zip(axes[0::2], axes[1::2]):
            assert left.get_shared_y_axes().joined(left, right), name
            assert left.get_ylim() == right.get_ylim(), name
            for ax, ref in ((left, "Base (reference, left)"), (right, "Norm-Sub (reference, right)")):
                refs, others = _reference_and_others(ax)
                assert ref in [c.get_label() for c in refs], (name, ax.get_title())
                top = max(ln.get_zorder() for c in others for ln in [c.lines[0]])
                for c in refs:
                    line = c.lines[0]
                    assert line.get_zorder() > top, (name, c.get_label())
                    assert line.get_linestyle() == "--" and line.get_markerfacecolor() == "none"
                # drawn after every other line as well (ties in z-order are drawn in insertion order)
                order = ax.get_children()
                assert min(order.index(c.lines[0]) for c in refs) > max(order.index(c.lines[0]) for c in others)


def test_a_panel_title_names_its_reference_only_where_it_is_drawn(drawn, tmp_path):
    """A right panel titled "… vs Norm-Sub" draws Norm-Sub; a table without Norm-Sub gives right
    panels titled "… — others", none claiming a reference it does not draw."""
    def panels(saved):
        return [(ax.get_title().replace("\n", " "), [c.get_label() for c in ax.containers])
                for fig, _, _ in saved for ax in fig.axes if ax.axison]

    kind = "benefit"  # NDSS Fig. 5: its own drawing function, the right panel titled vs Norm-Sub
    drawn_titles = panels(drawn[kind][1])
    assert sum("vs Norm-Sub" in t for t, _ in drawn_titles) == len(drawn_titles) // 2
    for title, labels in drawn_titles:
        if "vs Norm-Sub" in title:
            assert "Norm-Sub (reference, right)" in labels, title
    t = T.table(kind, oracles=T.ORACLES[:1], reps=2)
    with recording() as saved:
        P.figure(kind)(t[t.method != "norm-sub"], T.meta(kind), tmp_path, "f")
    titles = panels(saved)
    assert titles and not any("Norm-Sub" in t or "Norm-Sub" in " ".join(lab) for t, lab in titles)
    assert sum(t.endswith("— others") for t, _ in titles) == len(titles) // 2


# kinds whose figures put ε on the x axis (heavy-hitters: when the full sweep has more than one ε)
VS_EPSILON = {"full-domain", "fixed-sets", "channels", "numeric", "pooling", "range-queries", "noise-distribution",
              "estimation-error", "heavy-hitters", "longitudinal"}


def test_every_quick_vs_epsilon_config_sweeps_at_least_three_epsilons():
    """A one-ε quick run draws a "vs ε" figure as a vertical stack of markers: every quick config
    whose figures are drawn against ε (and whose full sweep has ≥ 3 ε) sweeps ≥ 3 of the full sweep's ε."""
    from ldpopt.experiments.config import config_paths, load_config

    checked = []
    for path in config_paths():
        full, quick = load_config(path), load_config(path, quick=True)
        if full.kind in VS_EPSILON and len(full.epsilons) >= 3:
            assert len(set(quick.epsilons)) >= 3 and set(quick.epsilons) <= set(full.epsilons), (path.stem, quick.epsilons)
            checked.append(path.stem)
    assert len(checked) >= 15, checked


@pytest.mark.parametrize("config", ["wang_ndss_fig4_full_domain", "jia_fig7_error_oracles",
                                    "jia_fig8_9_hh_epsilon_oracles", "jia_fig4_noise"])
def test_quick_vs_epsilon_figures_have_three_epsilons(config, drawn):
    """From the figure objects: every panel drawn against ε has points at ≥ 3 distinct ε."""
    panels = 0
    for fig, name, _ in drawn[config][1]:
        for ax in fig.axes:
            if not ax.get_xlabel().startswith("ε"):
                continue
            xs = {round(float(x), 9) for ln in ax.get_lines() if ln.get_linestyle() != "None" or ln.get_marker()
                  for x in np.atleast_1d(ln.get_xdata()) if ln.get_label() and not ln.get_label().startswith("_")}
            xs |= {round(float(x), 9) for c in ax.containers if hasattr(c, "lines") and c.lines[0] is not None
                   for x in np.atleast_1d(c.lines[0].get_xdata())}
            assert len(xs) >= 3, (config, name, ax.get_title(), sorted(xs))
            panels += 1
    assert panels >= 1, config


def test_every_task_kind_has_a_figure_spec():
    """experiments/figures.toml names a drawing function for every task kind, and each resolves."""
    import importlib

    from ldpopt.experiments import kinds

    assert set(P.plot_kinds()) == set(kinds())
    for kind, spec in P._specs().items():
        module, name = spec["draw"].split(":")
        assert callable(getattr(importlib.import_module(f"ldpopt.experiments.figures.{module}"), name)), kind
    with pytest.raises(ValueError, match="no figure for kind 'nope'"):
        P.figure("nope")
