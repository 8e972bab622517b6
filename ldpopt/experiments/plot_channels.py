"""Figure of the ``channels`` kind (``ext_channels``, issue 15 item 1): MSE of one report under the
memoised two-round channels and under the one-round oracle, against the total (memo) ε, one panel
per (dataset, family). Colour = design (one-round, or the report's ε split r), line style =
estimator (inversion dotted, + Norm-Sub dashed, channel MLE solid); the inversion's analytic MSE as
black crosses on its line. Mean ± 95 % CI over repetitions, log-log axes.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from . import plot_style as S
from .plot import register_plot, summarise

__all__ = ["curves", "plot_channels"]

_EST = {"inverse": (":", "v", "unbiased inversion"), "inverse-normsub": ("--", "s", "inversion + Norm-Sub"),
        "mle": ("-", "o", "channel MLE")}
_COLOURS = ("k", "tab:blue", "tab:orange", "tab:red", "tab:purple", "tab:green")


def curves(table: pd.DataFrame, metric: str = "mse") -> pd.DataFrame:
    """What the figure draws: per (dataset, oracle, method, ε) the mean and CI of ``metric`` over
    repetitions, with the design and estimator of each method (``summarise`` + the labels)."""
    s = summarise(table, "epsilon", metric=metric)
    lab = table.drop_duplicates("method").set_index("method")[["design", "estimator"]]
    return s.join(lab, on="method")


def _design_label(design: str) -> str:
    if design == "one-round":
        return "one round at total ε"
    return f"memoised, ε_report = {design.split('=')[1]}·ε"


@register_plot("channels")
def plot_channels(table: pd.DataFrame, meta: dict, out_dir: Path, stem: str) -> list[Path]:
    s = curves(table)
    an = curves(table, "analytic-mse")
    designs = list(dict.fromkeys(s.design))
    colour = {d: _COLOURS[i % len(_COLOURS)] for i, d in enumerate(designs)}
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
                for m in dict.fromkeys(sel.method):
                    d = sel[sel.method == m].sort_values("epsilon")
                    des, est = d.design.iloc[0], d.estimator.iloc[0]
                    ls, mk, name = _EST[est]
                    ax.errorbar(d.epsilon, d["mean"], yerr=np.minimum(d["ci"], 0.999 * d["mean"]),
                                color=colour[des], marker=mk, ms=4, lw=1.3, ls=ls, capsize=2,
                                label=f"{_design_label(des)}: {name}")
                a = an[(an.dataset == ds) & (an.oracle == orc)].sort_values("epsilon")
                if len(a):
                    ax.plot(a.epsilon, a["mean"], ls="none", marker="x", ms=7, color="k",
                            label="inversion: analytic MSE (exact variance at the truth)")
                ax.set_xscale("log")
                ax.set_yscale("log")
                S.data_ticks(ax, sel.epsilon)
                ax.set_xlabel("total ε (the memo's: what all reports reveal)")
                ax.set_ylabel("MSE of one report's estimate")
                ax.grid(True, which="both", alpha=0.3)
                S.title(ax, S.panel_title(dataset=ds, oracle=f"memoised {orc}"), fig.get_size_inches()[0] / axes.shape[1])
            for ax in axes.ravel()[len(ks):]:
                ax.set_visible(False)
        S.shared_legend(fig, axes)
        S.suptitle(fig, f"{stem}: two-round memoised channels vs one round{S.page_suffix(page, len(pages))}")
        paths.append(S.save(fig, S.page_path(out_dir, f"{stem}_mse", page, len(pages))))
    plt.close("all")
    return paths
