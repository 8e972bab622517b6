"""Figures of the ``sketches`` kind (``ext_sketches``): one row per dataset × sketch, two panels.

Details: docs/experiments.md, section `ldpopt.experiments.figures.sketches`.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from . import style as S
from .wang import _EPS, _title, label_of, style_of, summarise

__all__ = ["plot_sketches"]

_RATIO_METHODS = ("base-pos", "norm", "norm-sub", "mle-apx", "base-cut", "power")


def _paired_ratio(t: pd.DataFrame, metric: str) -> pd.DataFrame:
    """Per (method, ε): mean and 95 % CI half-width of err(method)/err(base) over repetitions."""
    mse = t[t.metric == metric].pivot_table(index=["epsilon", "rep"], columns="method", values="value")
    rows = []
    for m in [m for m in _RATIO_METHODS if m in mse.columns]:
        r = (mse[m] / mse["base"]).groupby(level="epsilon")
        s = r.agg(["mean", "std", "count"]).reset_index()
        s["ci"] = 1.96 * s["std"].fillna(0.0) / np.sqrt(s["count"])
        s["method"] = m
        rows.append(s)
    return pd.concat(rows, ignore_index=True)


def _left(ax, t: pd.DataFrame, metric: str) -> None:
    ax.set_yscale("log")
    s = summarise(t, "epsilon", by=("dataset",), metric=metric)
    for m, kw in (("base", dict(ls="--", lw=1.6, ms=8, mfc="none", mew=1.4)), ("norm-sub", dict(lw=1.4, ms=6))):
        c, mk = style_of(m)
        S.errorbar_mean(ax, s[s.method == m], color=c, marker=mk, label=label_of(m).split(" (")[0], **kw)
    if metric == "mse":
        p = t[t.metric == "predicted-mse"].groupby("epsilon").value.mean().sort_index()
        ax.plot(p.index, p.values, color="k", ls=":", lw=1.2, marker="x", ms=7, zorder=5,
                label="Base, predicted (exact variance over the family)")
    ax.set_ylabel(f"{metric.upper()} (frequency scale)")


def _right(ax, t: pd.DataFrame, metric: str) -> None:
    ax.set_yscale("log")
    r = _paired_ratio(t, metric)
    methods = list(dict.fromkeys(r.method))
    for i, m in enumerate(methods):
        d = r[r.method == m].sort_values("epsilon")
        shift = 1.06 ** (i - (len(methods) - 1) / 2)  # side by side on the log ε axis
        c, mk = style_of(m)
        ax.errorbar(d.epsilon * shift, d["mean"], yerr=np.minimum(d["ci"], 0.999 * d["mean"]), color=c, marker=mk,
                    ms=5, lw=1.1, capsize=2, label=label_of(m).split(" (")[0])
    ax.axhline(1.0, color="0.5", lw=0.9, zorder=0)
    ax.set_ylabel(f"{metric.upper()} ÷ Base's {metric.upper()} (same repetition)")
    from matplotlib.ticker import FuncFormatter

    plain = FuncFormatter(lambda v, _: f"{v:g}")  # 0.2, 0.4, 1 rather than 2×10⁻¹
    ax.yaxis.set_major_formatter(plain)
    ax.yaxis.set_minor_formatter(plain)


def _figure(table: pd.DataFrame, meta: dict, out_dir: Path, stem: str, metric: str) -> Path:
    keys = list(dict.fromkeys(zip(table.dataset, table.oracle)))
    fig, axes = S.new_figure(len(keys), 2)
    with S.style():
        for row, (ds, orc) in zip(axes, keys):
            t = table[(table.dataset == ds) & (table.oracle == orc)]
            _left(row[0], t, metric)
            _right(row[1], t, metric)
            name = S.panel_title(dataset=ds, oracle=orc)
            for ax, note in zip(row, (" — the raw estimate", " — what consistency buys")):
                ax.set_xscale("log", base=2)
                S.data_ticks(ax, t.epsilon)
                ax.set_xlabel(_EPS)
                ax.grid(True, which="both", alpha=0.3)
                S.title(ax, name + note, S.PANEL[0])
    p = meta["config"].get("params", {})
    S.shared_legend(fig, axes)
    S.suptitle(fig, f"{_title(meta)}: full-domain {metric.upper()} of sketch estimates (k = {p.get('k', '?')}, "
                    f"m = {p.get('m', '?')}, a fresh hash family per repetition)")
    return S.save(fig, out_dir / f"{stem}_{metric}.png")


def plot_sketches(table: pd.DataFrame, meta: dict, out_dir: Path, stem: str) -> list[Path]:
    paths = [_figure(table, meta, out_dir, stem, m) for m in ("mse", "mae") if (table.metric == m).any()]
    S.pyplot().close("all")
    return paths
