"""Figure of the ``poisoning-stress`` kind (``ext_poisoning_stress``): one heat map per oracle, recovery
(β mode) × attack, each cell the worst MSE ratio to the best recovery of that (dataset, ε, β, attack)
cell of the cell means (log colour scale; 1 = the best somewhere in every setting). The rule of
docs/poisoning.md reads the row maximum."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from . import style as S

__all__ = ["plot_poisoning_stress"]


def plot_poisoning_stress(table: pd.DataFrame, meta: dict, out_dir: Path, stem: str) -> list[Path]:
    t = table[table.metric == "mse"]
    key = ["dataset", "oracle", "epsilon", "beta", "attack"]
    cell = t.groupby(key + ["method"], observed=True)["value"].mean().reset_index()
    cell["ratio"] = cell["value"] / cell.groupby(key, observed=True)["value"].transform("min")
    oracles = list(dict.fromkeys(cell["oracle"]))
    fig, axes = S.new_figure(len(oracles), 1)
    with S.style():
        for ax, orc in zip(np.ravel(axes), oracles):
            w = cell[cell.oracle == orc].pivot_table(index="method", columns="attack", values="ratio", aggfunc="max")
            im = ax.imshow(np.log10(w.to_numpy()), aspect="auto", cmap="viridis")
            ax.set_xticks(range(w.shape[1]), list(w.columns), rotation=60, ha="right", fontsize=7)
            ax.set_yticks(range(w.shape[0]), list(w.index), fontsize=7)
            for (i, j), v in np.ndenumerate(w.to_numpy()):
                ax.text(j, i, f"{v:.2g}", ha="center", va="center", fontsize=5, color="w")
            fig.colorbar(im, ax=ax, label="log10 worst MSE / best")
            S.title(ax, S.panel_title(oracle=orc), S.PANEL[0])
    reps = int(t.groupby(key, observed=True)["rep"].nunique().min()) if "rep" in t else 0
    S.suptitle(fig, f"{stem}: worst MSE ratio to the best recovery, per attack ({reps} repetitions)")
    path = S.save(fig, out_dir / f"{stem}_worst.png")
    S.pyplot().close("all")
    return [path]
