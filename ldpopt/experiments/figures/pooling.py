"""Figure of the ``pooling`` kind (``ext_pooling``): MSE of each group alone and of
the pooled estimators against the swept group's ε, one panel per (dataset, swept oracle), mean ±
95 % CI over repetitions on a log axis, with inverse-variance theory's predicted MSE dashed.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from . import style as S
from .wang import summarise

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


def plot_pooling(table: pd.DataFrame, meta: dict, out_dir: Path, stem: str) -> list[Path]:
    s = summarise(table, "epsilon")
    pred = summarise(table, "epsilon", metric="predicted-mse")
    names = _group_names(table)

    def draw(ax, sel, ds, orc):
        for i, m in enumerate(sorted(names)):
            S.errorbar_mean(ax, sel[sel.method == m], color=_ALONE[i % len(_ALONE)], marker="x", ms=4, lw=1,
                            ls="--", label=names[m])
        for m, (c, mk, ls) in _STYLE.items():
            d = sel[sel.method == m]
            if len(d):
                S.errorbar_mean(ax, d, color=c, marker=mk, ms=4, lw=1.4, ls=ls, label=_LABEL[m])
        p = pred[(pred.dataset == ds) & (pred.oracle == orc)].sort_values("epsilon")
        if len(p):
            ax.plot(p.epsilon, p["mean"], color="k", lw=1, ls="-.",
                    label="inverse-variance theory: Σ 1/Var (at the truth)")
        ax.set_xlabel("ε of the swept group (60 % of users)")
        ax.set_ylabel("MSE (frequency scale)")
        S.title(ax, S.panel_title(dataset=ds, oracle=orc), S.PANEL[0])

    return S.pair_panels(s, out_dir, f"{stem}_mse", f"{stem}: one estimate from groups at different ε", draw)
