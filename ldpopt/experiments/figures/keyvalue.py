"""Figure of the ``keyvalue`` kind (``ext_keyvalue``): one figure per dataset; top row the MSE of the
key frequencies, bottom row the MSE of the per-key means (over the keys someone holds); columns all
keys, the head (10 % most frequent) and the tail; the file named by the first word of the dataset's label; colour by protocol, solid the protocol's own
estimator, dashed ldpopt's consistent one; mean ± 95 % CI over repetitions against ε, log axes."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from . import style as S
from .wang import summarise

__all__ = ["plot_keyvalue"]

_COLOUR = {"pckv-ue": "tab:blue", "pckv-grr": "tab:orange", "privkv": "tab:green"}
_NAME = {"pckv-ue": "PCKV-UE", "pckv-grr": "PCKV-GRR", "privkv": "PrivKV"}
_METHOD = {"paper": ("-", "o", "paper's estimator"), "consistent": ("--", "s", "ldpopt consistent")}
_BANDS = (("all", "all keys"), ("head", "head (top 10 %)"), ("tail", "tail keys"))
_ROWS = (("freq", "frequency MSE"), ("mean", "mean MSE (held keys)"))


def plot_keyvalue(table: pd.DataFrame, meta: dict, out_dir: Path, stem: str) -> list[Path]:
    paths = []
    names = [str(ds).split()[0] for ds in dict.fromkeys(table["dataset"])]
    for k, (ds, t) in enumerate(table.groupby("dataset", sort=False)):
        name = names[k] if names.count(names[k]) == 1 else f"{names[k]}{k + 1}"
        fig, axes = S.new_figure(len(_ROWS), len(_BANDS))
        with S.style():
            for row, (what, ylabel) in zip(axes, _ROWS):
                for ax, (band, where) in zip(row, _BANDS):
                    s = summarise(t, "epsilon", ("dataset", "oracle"), f"{what}-{band}")
                    for (proto, method), d in s.groupby(["oracle", "method"], sort=False):
                        ls, mk, label = _METHOD[method]
                        S.errorbar_mean(ax, d, color=_COLOUR[proto], ls=ls, marker=mk, ms=4, lw=1.2,
                                        label=f"{_NAME[proto]} · {label}")
                    ax.set_xscale("log")
                    ax.set_yscale("log")
                    S.data_ticks(ax, s.epsilon)
                    ax.grid(True, which="both", alpha=0.3)
                    ax.set_xlabel("ε")
                    ax.set_ylabel(ylabel)
                    S.title(ax, f"{ds} · {where}", S.PANEL[0])
        S.shared_legend(fig, axes)
        S.suptitle(fig, f"{stem}: key–value estimation, the papers' estimators vs the consistent Problem")
        paths.append(S.save(fig, out_dir / f"{stem}_{name}.png"))
    S.pyplot().close("all")
    return paths
