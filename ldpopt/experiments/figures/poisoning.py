"""Figure of the ``poisoning`` kind (``ext_poisoning``): one figure per attack, one row per oracle;
columns: the target gain Σ_{t∈T} f̂_t − f_T of each recovery (0 = the attack undone; symmetric log
axis, linear within ±0.01, since the raw gain reaches tens where the recoveries' is near 0), its MSE
(log axis), and the detection AUC; mean ± 95 % CI over repetitions against ε."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from . import style as S
from .wang import summarise

__all__ = ["plot_poisoning"]

_STYLE = {"raw": ("tab:gray", "v", ":"), "norm-sub": ("tab:olive", "x", "--"), "ldprecover": ("tab:blue", "s", "-"),
          "rsn": ("tab:green", "D", "-"), "mixture": ("tab:red", "o", "-"), "lift": ("tab:purple", "P", "-")}
_LABEL = {"raw": "raw f̃", "norm-sub": "Norm-Sub", "ldprecover": "LDPRecover", "rsn": "RSN",
          "mixture": "mixture (attack as unknowns)", "lift": "lift (suspects at one level)"}


def plot_poisoning(table: pd.DataFrame, meta: dict, out_dir: Path, stem: str) -> list[Path]:
    paths = []
    for attack, t in table.groupby("attack", sort=False):
        by = ("dataset", "oracle")
        gain, err = summarise(t, "epsilon", by, "gain"), summarise(t, "epsilon", by, "mse")
        auc = summarise(t, "epsilon", by, "auc")
        keys = list(dict.fromkeys(zip(gain["dataset"], gain["oracle"])))
        order = list(meta.get("config", {}).get("oracles", []))  # rows in the config's oracle order
        keys.sort(key=lambda k: order.index(k[1]) if k[1] in order else len(order))
        fig, axes = S.new_figure(len(keys), 3)
        with S.style():
            for row, (ds, orc) in zip(axes, keys):
                for ax, s, ylab in ((row[0], gain, "target gain"), (row[1], err, "MSE (full domain)"),
                                    (row[2], auc, "detection AUC")):
                    sel = s[(s.dataset == ds) & (s.oracle == orc)]
                    for m in sel.method.unique():
                        c, mk, ls = _STYLE.get(m, ("k", "^", "-"))
                        d = sel[sel.method == m].sort_values("epsilon")
                        yerr = d["ci"] if ax is not row[1] else np.minimum(d["ci"], 0.999 * d["mean"])
                        ax.errorbar(d.epsilon, d["mean"], yerr=yerr, color=c, marker=mk, ls=ls, ms=4, lw=1.3,
                                    capsize=2, label=_LABEL.get(m, "suspect-support score"))
                    ax.set_xscale("log")
                    S.data_ticks(ax, sel.epsilon)
                    ax.grid(True, which="both", alpha=0.3)
                    ax.set_xlabel("ε")
                    ax.set_ylabel(ylab)
                    S.title(ax, S.panel_title(dataset=ds, oracle=orc), S.PANEL[0])
                row[0].axhline(0.0, color="k", lw=0.8)
                # the raw gain reaches tens (GRR MGA) while the recoveries' stays near 0, of either
                # sign: symmetric log, linear within ±0.01
                row[0].set_yscale("symlog", linthresh=0.01)
                row[1].set_yscale("log")
                row[2].axhline(0.5, color="k", lw=0.8, ls=":")
        S.shared_legend(fig, axes)
        beta = float(t["beta"].iloc[0])
        reps = int(t.groupby(["dataset", "oracle", "epsilon"]).rep.nunique().min())
        what = {"mga": "maximal gain attack", "input": "input poisoning", "apa": "adaptive attack"}.get(attack, attack)
        S.suptitle(fig, f"{stem}: {what}, β = {beta:g} fake users — recovery and detection "
                        f"(mean ± 95 % CI, {reps} repetitions)")
        paths.append(S.save(fig, out_dir / f"{stem}_{attack}.png"))
    S.pyplot().close("all")
    return paths
