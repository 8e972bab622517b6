"""Figure of the ``multi-regimes`` kind (``ext_multi_regimes``): one figure per oracle, two panels
against ε. Left: the 3-way error of reconstruction from consistent 2-way marginals divided by that of
collecting the 3-way marginals directly, one line per dataset (above 1: reconstruction loses), and
the maximum-entropy model error divided by the same (dotted: the floor's share). Right: the 2-way
error of CALM's steps and of the other estimators divided by the certified weighted optimum's, per
task, mean ± 95 % CI over the tasks where non-negativity binds (solid) and where it does not
(dashed); below 1: more accurate than the optimum."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from . import style as S

__all__ = ["plot_regimes"]

_ALT = {"2way:calm": ("tab:blue", "CALM's steps"), "2way:cls": ("tab:green", "unweighted optimum (CLS)"),
        "2way:pgm": ("tab:cyan", "table fitted to raw f̃"), "2way:likelihood": ("tab:purple", "constrained MLE")}


def _ratio(t: pd.DataFrame, num: str, den: str, metric: str) -> pd.DataFrame:
    """Per task (dataset, ε, rep): value of ``num`` ÷ value of ``den`` on ``metric``, with ``binds``."""
    key = ["dataset", "epsilon", "rep"]
    a = t[(t.method == num) & (t.metric == metric)].set_index(key)
    b = t[(t.method == den) & (t.metric == metric)].set_index(key)
    r = (a.value / b.value).dropna().rename("value").to_frame()
    r["binds"] = a.binds.reindex(r.index)
    return r.reset_index()


def _mean_ci(r: pd.DataFrame, by) -> pd.DataFrame:
    s = r.groupby(by, sort=False).value.agg(["mean", "std", "count"]).reset_index()
    s["ci"] = 1.96 * s["std"].fillna(0.0) / s["count"] ** 0.5
    return s


def plot_regimes(table: pd.DataFrame, meta: dict, out_dir: Path, stem: str) -> list[Path]:
    paths = []
    for oracle, t in table.groupby("oracle", sort=False):
        fig, axes = S.new_figure(1, 2)
        left, right = axes[0]
        with S.style():
            for ds in dict.fromkeys(t.dataset):
                td = t[t.dataset == ds]
                s = _mean_ci(_ratio(td, "2way:weighted", "3way:weighted", "tv3"), ["epsilon"])
                bars = S.errorbar_mean(left, s, lw=1.2, marker="o", ms=4, label=ds)
                floor = _mean_ci(_ratio(td, "maxent-of-truth", "3way:weighted", "tv3"), ["epsilon"]).sort_values("epsilon")
                left.plot(floor.epsilon, floor["mean"], ls=":", color=bars.lines[0].get_color(), lw=1, label="_floor")
            left.axhline(1.0, color="k", lw=0.8)
            left.set_ylabel("3-way TV ÷ collected")
            left.set_yscale("log")
            S.title(left, "3-way from consistent 2-way vs collected (dotted: model error)", S.PANEL[0])
            for m, (colour, label) in _ALT.items():
                r = _ratio(t, m, "2way:weighted", "tv2")
                if r.empty:
                    continue
                for binds, ls in ((True, "-"), (False, "--")):
                    s = _mean_ci(r[r.binds == binds], ["epsilon"])
                    if not s.empty:
                        S.errorbar_mean(right, s, lw=1.2, ls=ls, marker="o", ms=4, color=colour,
                                        label=f"{label}, bound {'binds' if binds else 'slack'}")
            right.axhline(1.0, color="k", lw=0.8)
            right.set_ylabel("2-way TV ÷ optimum")
            S.title(right, "CALM's steps and other estimators vs the certified optimum", S.PANEL[0])
            for ax in (left, right):
                ax.set_xscale("log")
                S.data_ticks(ax, t.epsilon.unique())
                ax.grid(True, which="both", alpha=0.3)
                ax.set_xlabel("ε")
        S.shared_legend(fig, axes)
        S.suptitle(fig, f"{stem}: where the many-attribute claims hold, {oracle.upper()} inside every protocol")
        paths.append(S.save(fig, out_dir / f"{stem}_{oracle}.png"))
    S.pyplot().close("all")
    return paths
