"""Figure of the ``multi`` kind (``ext_multi``): one figure per oracle, one row per dataset; columns:
the mean total-variation error of the 2-way marginals, of the 3-way marginals (collected directly,
or reconstructed by maximum entropy from consistent 2-way ones) and of the one-way marginals of SPL /
SMP / RS+FD (multi-freq-ldpy's clip-and-renormalise beside ldpopt's Norm-Sub); mean ± 95 % CI over
repetitions against ε, log axes."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from . import style as S
from .wang import summarise

__all__ = ["plot_multi"]

# colour by post-processing, line by collection (2-way solid, 3-way dashed, 1-way protocols dotted)
_COLOUR = {"raw": "tab:gray", "norm-sub": "tab:olive", "calm": "tab:blue", "weighted": "tab:red",
           "peer-mi": "tab:purple", "pgm": "tab:cyan", "flat": "k"}
_LINE = {"2way": "-", "3way": "--", "flat": "-.", "spl": ":", "smp": "-", "rsfd": "--"}
_MARK = {"2way": "o", "3way": "s", "flat": "^", "spl": "v", "smp": "D", "rsfd": "P"}
_LABEL = {"raw": "raw f̃", "norm-sub": "Norm-Sub per marginal", "calm": "CALM consistency",
          "weighted": "ldpopt weighted optimum", "peer-mi": "multi-freq-ldpy (clip, renormalise)",
          "pgm": "table fitted to raw f̃ (Private-PGM)"}
_COLL = {"2way": "2-way collected", "3way": "3-way collected", "spl": "SPL", "smp": "SMP", "rsfd": "RS+FD"}
_PANELS = (("tv2", "2-way marginals", ("2way", "3way", "flat")),
           ("tv3", "3-way marginals (2-way: max-ent)", ("2way", "3way", "flat")),
           ("tv1", "1-way marginals", ("spl", "smp", "rsfd")))


def _style(method: str) -> dict:
    coll, _, post = method.partition(":")
    post = post or "flat"
    label = "flat (whole table, Norm-Sub)" if coll == "flat" else f"{_COLL[coll]} · {_LABEL[post]}"
    hollow = {"mfc": "none", "ms": 8} if post == "calm" else {"ms": 4}  # CALM often lies under the optimum
    return {"color": _COLOUR[post], "ls": _LINE[coll], "marker": _MARK[coll], "label": label, **hollow}


def plot_multi(table: pd.DataFrame, meta: dict, out_dir: Path, stem: str) -> list[Path]:
    paths = []
    for oracle, t in table.groupby("oracle", sort=False):
        datasets = list(dict.fromkeys(t["dataset"]))
        panels = [p for p in _PANELS if (t.metric == p[0]).any()]
        fig, axes = S.new_figure(len(datasets), len(panels))
        with S.style():
            for row, ds in zip(axes, datasets):
                for ax, (metric, what, colls) in zip(row, panels):
                    s = summarise(t[t.dataset == ds], "epsilon", ("dataset",), metric)
                    for m in s.method.unique():
                        if m.partition(":")[0] in colls:
                            S.errorbar_mean(ax, s[s.method == m], lw=1.2, **_style(m))
                    ax.set_xscale("log")
                    ax.set_yscale("log")
                    S.data_ticks(ax, s.epsilon)
                    ax.grid(True, which="both", alpha=0.3)
                    ax.set_xlabel("ε")
                    ax.set_ylabel("mean TV distance")
                    S.title(ax, f"{ds} · {what}", S.PANEL[0])
        S.shared_legend(fig, axes)
        S.suptitle(fig, f"{stem}: marginals of many attributes, {oracle.upper()} inside every protocol")
        paths.append(S.save(fig, out_dir / f"{stem}_{oracle}.png"))
    S.pyplot().close("all")
    return paths
