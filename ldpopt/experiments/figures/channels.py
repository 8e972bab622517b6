"""Figure of the ``channels`` kind (``ext_channels``): MSE of one report under the
memoised two-round channels and under the one-round oracle, against the total (memo) ε, one panel
per (dataset, family). Colour = design (one-round, or the report's ε split r), line style =
estimator (inversion dotted, + Norm-Sub dashed, channel MLE solid); the inversion's analytic MSE as
black crosses on its line. Mean ± 95 % CI over repetitions, log-log axes.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from . import style as S
from .wang import summarise

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


def plot_channels(table: pd.DataFrame, meta: dict, out_dir: Path, stem: str) -> list[Path]:
    s = curves(table)
    an = curves(table, "analytic-mse")
    designs = list(dict.fromkeys(s.design))
    colour = {d: _COLOURS[i % len(_COLOURS)] for i, d in enumerate(designs)}

    def draw(ax, sel, ds, orc):
        for m in dict.fromkeys(sel.method):
            d = sel[sel.method == m]
            des, est = d.design.iloc[0], d.estimator.iloc[0]
            ls, mk, name = _EST[est]
            S.errorbar_mean(ax, d, color=colour[des], marker=mk, ms=4, lw=1.3, ls=ls,
                            label=f"{_design_label(des)}: {name}")
        a = an[(an.dataset == ds) & (an.oracle == orc)].sort_values("epsilon")
        if len(a):
            ax.plot(a.epsilon, a["mean"], ls="none", marker="x", ms=7, color="k",
                    label="inversion: analytic MSE (exact variance at the truth)")
        ax.set_xlabel("total ε (the memo's: what all reports reveal)")
        ax.set_ylabel("MSE of one report's estimate")
        S.title(ax, S.panel_title(dataset=ds, oracle=f"memoised {orc}"), S.PANEL[0])

    return S.pair_panels(s, out_dir, f"{stem}_mse", f"{stem}: two-round memoised channels vs one round", draw)
