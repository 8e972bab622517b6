"""Figure of the ``pooling`` kind (``ext_pooling``, issue 15 item 2): MSE of each group alone and of
the pooled estimators against the swept group's ε, one panel per (dataset, swept oracle), mean ±
95 % CI over repetitions on a log axis, with inverse-variance theory's predicted MSE dashed.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from . import plot_style as S
from .plot import register_plot, summarise

__all__ = ["plot_pooling"]

_STYLE = {"pool-mle": ("tab:red", "o", "-"), "pool-ivw-simplex": ("tab:blue", "s", "-"),
          "pool-ivw": ("tab:cyan", "D", ":"), "pool-naive": ("tab:gray", "v", "-")}
_ALONE = ("tab:olive", "tab:brown", "tab:pink", "tab:purple")
_LABEL = {"pool-mle": "pooled: joint likelihood", "pool-ivw-simplex": "pooled: inverse-variance, on simplex",
          "pool-ivw": "pooled: inverse-variance, raw", "pool-naive": "pooled: users-weighted average"}


def _group_names(table: pd.DataFrame) -> dict[str, str]:
    """alone:<i> → its label; the swept group (its label changes with ε) is named by its oracle."""
    t = table[table.method.str.startswith("alone:")]
    out = {}
    for m, sel in t.groupby("method"):
        labels = sel["group"].unique()
        share = float(sel["share"].iloc[0])
        name = labels[0] if len(labels) == 1 else "swept group"
        out[m] = f"alone: {name} ({share:.0%} of users)"
    return out


@register_plot("pooling")
def plot_pooling(table: pd.DataFrame, meta: dict, out_dir: Path, stem: str) -> list[Path]:
    s = summarise(table, "epsilon")
    pred = summarise(table, "epsilon", metric="predicted-mse")
    names = _group_names(table)
    keys = list(dict.fromkeys(zip(s["dataset"], s["oracle"])))
    pages = S.paged(keys, S.ROWS_PER_PAGE * 2)
    plt = S.pyplot()
    paths = []
    for page, ks in enumerate(pages):
        ncols = 2 if len(ks) > 1 else 1
        fig, axes = S.new_figure(int(np.ceil(len(ks) / ncols)), ncols)
        with S.style():
            for ax, (ds, orc) in zip(axes.ravel(), ks):
                sel = s[(s.dataset == ds) & (s.oracle == orc)]
                for i, m in enumerate(sorted(names)):
                    d = sel[sel.method == m].sort_values("epsilon")
                    ax.errorbar(d.epsilon, d["mean"], yerr=np.minimum(d["ci"], 0.999 * d["mean"]),
                                color=_ALONE[i % len(_ALONE)], marker="x", ms=4, lw=1, ls="--", capsize=2,
                                label=names[m])
                for m, (c, mk, ls) in _STYLE.items():
                    d = sel[sel.method == m].sort_values("epsilon")
                    if len(d):
                        ax.errorbar(d.epsilon, d["mean"], yerr=np.minimum(d["ci"], 0.999 * d["mean"]),
                                    color=c, marker=mk, ms=4, lw=1.4, ls=ls, capsize=2, label=_LABEL[m])
                p = pred[(pred.dataset == ds) & (pred.oracle == orc)].sort_values("epsilon")
                if len(p):
                    ax.plot(p.epsilon, p["mean"], color="k", lw=1, ls="-.",
                            label="inverse-variance theory: Σ 1/Var (at the truth)")
                ax.set_xscale("log")
                ax.set_yscale("log")
                S.data_ticks(ax, sel.epsilon)
                ax.set_xlabel("ε of the swept group (60 % of users)")
                ax.set_ylabel("MSE (frequency scale)")
                ax.grid(True, which="both", alpha=0.3)
                S.title(ax, S.panel_title(dataset=ds, oracle=orc), fig.get_size_inches()[0] / axes.shape[1])
            for ax in axes.ravel()[len(ks):]:
                ax.set_visible(False)
        S.shared_legend(fig, axes)
        S.suptitle(fig, f"{stem}: one estimate from groups at different ε{S.page_suffix(page, len(pages))}")
        paths.append(S.save(fig, S.page_path(out_dir, f"{stem}_mse", page, len(pages))))
    plt.close("all")
    return paths
