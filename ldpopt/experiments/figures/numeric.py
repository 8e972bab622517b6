"""Figure of the ``numeric`` kind (``ext_numeric``): Square Wave + EMS vs EM vs the
penalised exact likelihood, one row per dataset, one panel per metric (W1, range queries, deciles),
mean ± 95 % CI over repetitions against ε (log-scaled axes)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from . import style as S
from .wang import summarise

__all__ = ["plot_numeric"]

STYLE = {"sw-ems": ("tab:blue", "o", "SW + EMS (Li et al.)"), "sw-em": ("tab:orange", "s", "SW + EM"),
         "sw-penalized": ("tab:green", "D", "SW + penalised MLE (ldpopt)")}
YLABEL = {"w1": "Wasserstein-1", "quantile": "decile error (mean |ΔQ|)"}


def plot_numeric(table: pd.DataFrame, meta: dict, out_dir: Path, stem: str) -> list[Path]:
    metrics = [m for m in ("w1", "range-0.1", "range-0.4", "quantile") if m in set(table["metric"])]
    datasets = list(dict.fromkeys(table["dataset"]))
    pages = S.paged(datasets, S.ROWS_PER_PAGE)
    plt = S.pyplot()
    paths = []
    for page, keys in enumerate(pages):
        fig, axes = S.new_figure(len(keys), len(metrics), panel=(4.0, 3.0))
        axes = np.asarray(axes).reshape(len(keys), len(metrics))
        with S.style():
            for r, ds in enumerate(keys):
                for c, metric in enumerate(metrics):
                    ax = axes[r, c]
                    s = summarise(table[table["dataset"] == ds], x="epsilon", by=("dataset",), metric=metric)
                    for m in [m for m in STYLE if m in set(s["method"])]:
                        d = s[s["method"] == m].sort_values("epsilon")
                        col, mk, label = STYLE[m]
                        ax.errorbar(d["epsilon"], d["mean"], yerr=np.minimum(d["ci"], 0.999 * d["mean"]),
                                    color=col, marker=mk, ms=4, lw=1.2, capsize=2, label=label)
                    ax.set_xscale("log")
                    ax.set_yscale("log")
                    S.data_ticks(ax, sorted(set(s["epsilon"])))
                    ax.set_xlabel("ε")
                    ax.set_ylabel(YLABEL[metric] if metric in YLABEL else f"range-query MAE (α = {metric[6:]})")
                    S.title(ax, f"{ds} · {metric}", 4.0)
        S.shared_legend(fig, axes)
        S.suptitle(fig, f"{stem}: numeric distributions under Square Wave{S.page_suffix(page, len(pages))}")
        paths.append(S.save(fig, S.page_path(out_dir, f"{stem}_numeric", page, len(pages))))
    plt.close("all")
    return paths
