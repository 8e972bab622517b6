"""Figure of the ``heavy-discovery`` kind (``ext_heavy_hitters``): one row per dataset; F1 against ε at
the largest k, F1 against k at the largest ε, and the found items' frequency MSE against ε (log axis);
mean ± 95 % CI over repetitions, one line per method."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from . import style as S
from .wang import summarise

__all__ = ["plot_heavy"]

_STYLE = {"pem": ("tab:blue", "o", "-"), "pem-consistent": ("tab:red", "s", "--"),
          "treehist": ("tab:green", "D", "-"), "sfp": ("tab:purple", "^", "-")}
_LABEL = {"pem": "PEM", "pem-consistent": "PEM + tree consistency", "treehist": "TreeHist", "sfp": "SFP"}


def _lines(ax, s, x):
    for m in s.method.unique():
        c, mk, ls = _STYLE.get(m, ("k", "x", ":"))
        d = s[s.method == m].sort_values(x)
        ax.errorbar(d[x], d["mean"], yerr=d["ci"], color=c, marker=mk, ls=ls, ms=4, lw=1.3, capsize=2,
                    label=_LABEL.get(m, m))
    ax.set_xscale("log", base=2)
    S.data_ticks(ax, s[x])
    ax.grid(True, which="both", alpha=0.3)


def plot_heavy(table: pd.DataFrame, meta: dict, out_dir: Path, stem: str) -> list[Path]:
    kmax, emax = int(table.k.max()), float(table.epsilon.max())
    datasets = list(dict.fromkeys(table.dataset))
    fig, axes = S.new_figure(len(datasets), 3)
    with S.style():
        for row, ds in zip(axes, datasets):
            t = table[table.dataset == ds]
            f_eps = summarise(t[t.k == kmax], "epsilon", ("dataset",), "f1")
            f_k = summarise(t[t.epsilon == emax], "k", ("dataset",), "f1")
            err = summarise(t[t.k == kmax], "epsilon", ("dataset",), "mse")
            err["ci"] = np.minimum(err["ci"], 0.999 * err["mean"])  # the log axis
            _lines(row[0], f_eps, "epsilon")
            _lines(row[1], f_k, "k")
            _lines(row[2], err, "epsilon")
            row[2].set_yscale("log")
            for ax, xl, yl, what in ((row[0], "ε", "F1", f"k = {kmax}"), (row[1], "k", "F1", f"ε = {emax:g}"),
                                     (row[2], "ε", "MSE of found items' frequencies", f"k = {kmax}")):
                ax.set_xlabel(xl)
                ax.set_ylabel(yl)
                if yl == "F1":
                    ax.set_ylim(-0.02, 1.02)
                S.title(ax, f"{S.panel_title(dataset=ds)}, {what}", S.PANEL[0])
    S.shared_legend(fig, axes)
    S.suptitle(fig, f"{stem}: heavy-hitter discovery over 48-bit strings (OLH rounds)")
    path = S.save(fig, out_dir / f"{stem}.png")
    S.pyplot().close("all")
    return [path]
