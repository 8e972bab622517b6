"""Figure of the ``ordered`` kind (``ext_ordered``): MSE of the ordered-domain methods against ε, one
row per dataset, one panel per band (whole domain, head, mid, tail), mean ± 95 % CI over repetitions
on log-scaled axes."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from . import style as S
from .wang import summarise

__all__ = ["plot_ordered"]

#: method -> (colour, marker, line style, legend label); a method not listed is drawn in grey
STYLE = {"base": ("tab:gray", "x", ":", "Base"), "norm-sub": ("tab:red", "o", "-", "Norm-Sub"),
         "dw": ("tab:blue", "s", "--", "DW (Wiener)"), "iiw": ("tab:cyan", "D", "--", "IIW (iterated Wiener)"),
         "amrp": ("tab:purple", "v", "--", "AMRP (permuted Wiener)"),
         "dw-simplex": ("tab:green", "^", "-", "DW-simplex (DW, then Norm-Sub)"),
         "eb-shrink": ("tab:orange", "P", "-", "EB-Shrink"),
         "pen-cls": ("black", "*", "-", "smoothness-penalised CLS (SURE λ)"),
         "ems": ("tab:brown", "h", "-.", "EMS (GRR channel)")}
BANDS = {"mse": "whole domain", "mse-head": "head (top 10 %)", "mse-mid": "mid (next 40 %)", "mse-tail": "tail (rest)"}


def plot_ordered(table: pd.DataFrame, meta: dict, out_dir: Path, stem: str) -> list[Path]:
    metrics = [m for m in BANDS if m in set(table["metric"])]
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
                    for m in dict.fromkeys(s["method"]):
                        col, mk, ls, label = STYLE.get(m, ("tab:gray", ".", "-", m))
                        S.errorbar_mean(ax, s[s["method"] == m], color=col, marker=mk, ls=ls, ms=4, lw=1.2, label=label)
                    ax.set_xscale("log")
                    ax.set_yscale("log")
                    S.data_ticks(ax, sorted(set(s["epsilon"])))
                    ax.set_xlabel("ε")
                    ax.set_ylabel("MSE (frequency scale)")
                    S.title(ax, f"{ds} · {BANDS[metric]}", 4.0)
        S.shared_legend(fig, axes)
        S.suptitle(fig, f"{stem}: ordered-domain post-processing, MSE per band (GRR){S.page_suffix(page, len(pages))}")
        paths.append(S.save(fig, S.page_path(out_dir, f"{stem}_mse", page, len(pages))))
    plt.close("all")
    return paths
