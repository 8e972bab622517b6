"""Figure of the ``distribution-error`` kind (``ldpcube_grid``, LDP³'s grid): one figure per dataset,
one panel per distance (L1, L2, KL, EMD), the win percentage of each method per oracle (pooled over
the ε of the run; :func:`.winrate_report.win_table`) as grouped bars with ± 1 SE."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from ..winrate_report import win_table
from . import style as S

__all__ = ["plot_ldpcube"]


def plot_ldpcube(table: pd.DataFrame, meta: dict, out_dir: Path, stem: str) -> list[Path]:
    paths = []
    methods = list(dict.fromkeys(table["method"]))
    for ds, t in table.groupby("dataset", sort=False):
        # contests pooled over ε: a contest is one (ε, repetition)
        pooled = t.assign(rep=t["epsilon"].astype(str) + "/" + t["rep"].astype(str)).drop(columns=["epsilon"])
        wt = win_table(pooled)
        metrics = list(dict.fromkeys(wt["metric"]))
        oracles = list(dict.fromkeys(t["oracle"]))
        fig, axes = S.new_figure(len(metrics), 1, (max(S.PANEL[0], 1.1 * len(oracles) + 1.5), S.PANEL[1]))
        width = 0.8 / len(methods)
        x = np.arange(len(oracles))
        with S.style():
            for ax, metric in zip(axes[:, 0], metrics):
                w = wt[wt["metric"] == metric]
                for i, m in enumerate(methods):
                    r = w[w["method"] == m].set_index("oracle").reindex(oracles)
                    ax.bar(x + (i - (len(methods) - 1) / 2) * width, r["win"], width, yerr=r["win_se"],
                           capsize=1.5, label=m, color=S.pyplot().get_cmap("tab10")(i % 10))
                ax.set_xticks(x, [S.oracle_label(o) for o in oracles])
                ax.set_ylim(0, 105)
                ax.set_ylabel("wins (%)")
                ax.grid(True, axis="y", alpha=0.3)
                S.title(ax, f"{ds} · {metric}: lowest error, % of (ε, repetition) contests", fig.get_size_inches()[0])
        S.shared_legend(fig, axes)
        S.suptitle(fig, f"{stem}: win percentages per oracle and distance (± 1 SE)")
        paths.append(S.save(fig, out_dir / f"{stem}_{ds}.png"))
    S.pyplot().close("all")
    return paths
