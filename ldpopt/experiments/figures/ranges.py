"""Figures of the ``range-queries`` kind (``ext_range_queries``).

Details: docs/experiments.md, section `ldpopt.experiments.figures.ranges`.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from . import style as S
from .wang import _title, summarise

__all__ = ["LABELS", "plot_range_queries"]

RAW = ("flat", "hh2", "hh4", "hh16", "haar")
CONS = ("flat", "hh2-c", "hh4-c", "hh16-c", "hh4-nn", "haar")
LABELS = {"flat": "flat (leaves)", "haar": "HaarHRR", "hh4-nn": "HH B=4 consistent + Norm-Sub (heuristic)"}
_COLOURS = {"flat": "0.2", "haar": "tab:purple", "2": "tab:blue", "4": "tab:orange", "8": "tab:brown",
            "16": "tab:green"}
_NOTES = (" — raw", " — consistent")


def label(m: str) -> str:
    if m in LABELS:
        return LABELS[m]
    b, _, post = m[2:].partition("-")
    return f"HH B={b}" + {"": " raw cover", "c": " consistent", "nn": " consistent + non-neg."}[post]


def style(m: str) -> tuple[str, str, str]:
    """(colour, marker, linestyle) of a method."""
    if m in ("flat", "haar"):
        return _COLOURS[m], "s" if m == "flat" else "D", "-"
    b, _, post = m[2:].partition("-")
    return _COLOURS.get(b, "k"), {"": "o", "c": "^", "nn": "v"}[post], "-" if post != "nn" else ":"


def _draw(ax_pair, s: pd.DataFrame, exact: pd.DataFrame, x: str, xlabel: str, logx: bool):
    for ax, group in zip(ax_pair, (RAW, CONS)):
        for m in [m for m in group if m in set(s.method)]:
            c, mk, ls = style(m)
            d = s[s.method == m].sort_values(x)
            ax.errorbar(d[x], d["mean"], yerr=np.minimum(d["ci"], 0.999 * d["mean"]), color=c, marker=mk, ls=ls,
                        ms=4, lw=1.2, capsize=2, label=label(m))
            e = exact[exact.method == m].sort_values(x)
            if len(e):
                ax.plot(e[x], e["mean"], color=c, ls="--", lw=0.9, label="exact variance (dashed, same colour)")
        ax.set_yscale("log")
        if logx:
            ax.set_xscale("log", base=2)
        S.data_ticks(ax, s[x])
        ax.set_xlabel(xlabel)
        ax.set_ylabel("range-answer MSE")
        ax.grid(True, which="both", alpha=0.3)


def _pages(s, exact, x, xlabel, logx, title, out_dir, base) -> list[Path]:
    keys = list(dict.fromkeys(zip(s["dataset"], s["oracle"])))
    pages = S.paged(keys, S.ROWS_PER_PAGE)
    paths = []
    for i, page in enumerate(pages):
        fig, axes = S.new_figure(len(page), 2)
        with S.style():
            for row, (ds, orc) in zip(axes, page):
                sel = (s.dataset == ds) & (s.oracle == orc)
                esel = (exact.dataset == ds) & (exact.oracle == orc)
                _draw(row, s[sel], exact[esel], x, xlabel, logx)
                for ax, note in zip(row, _NOTES):
                    S.title(ax, S.panel_title(dataset=ds, oracle=orc) + note, S.PANEL[0])
        S.shared_legend(fig, axes)
        S.suptitle(fig, title + S.page_suffix(i, len(pages)))
        paths.append(S.save(fig, S.page_path(out_dir, base, i, len(pages))))
    return paths


def plot_range_queries(table: pd.DataFrame, meta: dict, out_dir: Path, stem: str) -> list[Path]:
    eps_all = sorted(set(table["epsilon"].astype(float)))
    want = float(meta.get("config", {}).get("params", {}).get("plot_epsilon", 1.0))
    eps = min(eps_all, key=lambda e: abs(e - want))
    at = table[table["epsilon"].astype(float) == eps]
    s = summarise(at, "length", metric="mse")
    ex = summarise(at, "length", metric="mse-exact")
    name = _title(meta) if meta else stem
    paths = _pages(s, ex, "length", "range length (values)", True,
                   f"{name}: range-query MSE vs length at {S.eps_text(eps)}", out_dir, f"{stem}_length")
    per_task = (table.groupby(["dataset", "oracle", "epsilon", "rep", "method", "metric"], sort=False)["value"]
                .mean().reset_index())  # the mean over the lengths, one value per task and method
    s = summarise(per_task, "epsilon", metric="mse")
    ex = summarise(per_task, "epsilon", metric="mse-exact")
    lengths = sorted(set(table["length"].astype(int)))
    paths += _pages(s, ex, "epsilon", "ε (privacy budget)", False,
                    f"{name}: range-query MSE averaged over lengths {lengths} vs ε", out_dir, f"{stem}_epsilon")
    return paths
