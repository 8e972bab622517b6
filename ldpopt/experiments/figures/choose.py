"""NDSS Fig. 9 (Wang et al. 2020, §V-D "Choosing the method on synthetic dataset"), redrawn to answer
its question: *does the method ranking measured on a synthetic dataset fitted from the estimate pick
the method that is best on the real data?*

Details: docs/experiments.md, section `ldpopt.experiments.figures.choose`.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from . import style as S
from .wang import LABELS, LEFT, RIGHT, _title

__all__ = ["choice_regret", "plot_choose_method"]

_FIT_STYLE = {"norm-sub": ("tab:red", "s"), "power-ns": ("tab:blue", "D")}
_OTHER_FITS = [("tab:green", "^"), ("tab:purple", "v"), ("tab:brown", "P")]


def _fit_style(fits: list[str]) -> dict[str, tuple[str, str]]:
    extra = iter(_OTHER_FITS)
    return {f: _FIT_STYLE.get(f) or next(extra, ("tab:gray", "o")) for f in fits}


def choice_regret(table: pd.DataFrame) -> pd.DataFrame:
    """Per (oracle, ε, fit, rep): the method the synthetic data picks (``chosen``), the real best of
    that repetition (``best``) and ``ratio`` = real MSE(chosen) / real MSE(best) (≥ 1)."""
    t = table[table.metric == "mse"]
    keys = ["dataset", "oracle", "epsilon", "rep"]
    real = t[t.fit == "real"].set_index(keys + ["method"]).value
    syn = t[t.fit != "real"]
    if syn.empty:
        raise ValueError("choose-method table has no synthetic rows (fit != 'real'); nothing to compare")
    best_i = real.groupby(level=keys).idxmin()
    best = pd.DataFrame({"best": [i[-1] for i in best_i], "best_mse": real.loc[best_i.to_list()].to_numpy()},
                        index=best_i.index)
    ch_i = syn.groupby(keys + ["fit"]).value.idxmin()
    ch = syn.loc[ch_i.to_numpy(), keys + ["fit", "method"]].rename(columns={"method": "chosen"})
    ch = ch.join(best, on=keys)
    ch["chosen_mse"] = real.reindex(pd.MultiIndex.from_frame(ch[keys + ["chosen"]])).to_numpy()
    ch["ratio"] = ch.chosen_mse / ch.best_mse
    return ch.reset_index(drop=True)


def _methods(table) -> list[str]:
    present = set(table.method)
    return [m for m in dict.fromkeys(LEFT + RIGHT) if m in present] + sorted(present - set(LEFT + RIGHT))


def _panel(ax, d: pd.DataFrame, methods: list[str], fits: list[str], fstyle):
    """One (oracle, ε): categorical x = method; markers only."""
    x = np.arange(len(methods))
    pos = {m: i for i, m in enumerate(methods)}
    g = d.groupby(["fit", "method"]).value.agg(["mean", "std", "count"]).reset_index()
    g["ci"] = 1.96 * g["std"].fillna(0.0) / np.sqrt(g["count"])
    real = g[g.fit == "real"].set_index("method")
    off = np.linspace(-0.25, 0.25, len(fits) + 1)
    xr = [pos[m] + off[0] for m in real.index]
    ax.errorbar(xr, real["mean"], yerr=np.minimum(real["ci"], 0.999 * real["mean"]), fmt="o", color="k", ms=5,
                capsize=2, label="real data (mean ± 95 % CI)")
    best = real["mean"].idxmin()
    ax.plot([pos[best] + off[0]], [real.loc[best, "mean"]], "*", color="gold", mec="k", ms=15, zorder=5,
            label="best on the real data")
    for j, fit in enumerate(fits):
        c, mk = fstyle[fit]
        sy = g[g.fit == fit].set_index("method")
        xs = [pos[m] + off[j + 1] for m in sy.index]
        ax.errorbar(xs, sy["mean"], yerr=np.minimum(sy["ci"], 0.999 * sy["mean"]), fmt=mk, mfc="none", color=c,
                    ms=5, capsize=2, label=f"synthetic data fitted with {LABELS.get(fit, fit)}")
        pick = sy["mean"].idxmin()
        ax.plot([pos[pick] + off[0]], [real.loc[pick, "mean"]], "o", mfc="none", mec=c, mew=2, ms=13 + 4 * j,
                label=f"picked by the {LABELS.get(fit, fit)}-fitted data")
    ax.set_xticks(x, [LABELS.get(m, m) for m in methods], rotation=45, ha="right", rotation_mode="anchor")
    ax.set_xlim(-0.6, len(methods) - 0.4)
    ax.set_yscale("log")
    ax.grid(True, axis="y", which="both", alpha=0.3)
    for i in x[1::2]:  # banded columns: which markers belong to which method
        ax.axvspan(i - 0.5, i + 0.5, color="0.93", zorder=0)


def plot_choose_method(table, meta, out_dir: Path, stem: str) -> list[Path]:
    """NDSS Fig. 9: per (oracle, ε) the methods' real and synthetic MSE with the picks marked; and
    how much worse on the real data the synthetic pick is than the real best (see module doc)."""
    t = table[table.metric == "mse"]
    methods = _methods(t)
    fits = [f for f in dict.fromkeys(t.fit) if f != "real"]
    fstyle = _fit_style(fits)
    eps_all = sorted(t.epsilon.unique())
    keys = list(dict.fromkeys(zip(t.dataset, t.oracle)))  # the config's order
    panels = [(ds, orc, eps) for ds, orc in keys for eps in eps_all]
    # several ε: a row per oracle, a column per ε; one ε: the oracles wrap over the columns
    ncol = min(len(eps_all), 4) if len(eps_all) > 1 else min(len(panels), 3)
    grid = [panels[i:i + ncol] for i in range(0, len(panels), ncol)] if len(eps_all) == 1 else \
        [[(ds, orc, e) for e in eps_all[i:i + ncol]] for ds, orc in keys for i in range(0, len(eps_all), ncol)]
    pages = S.paged(grid, 3)
    paths = []
    for p, page in enumerate(pages):
        pw = 0.3 * len(methods) + 0.7
        fig, axes = S.new_figure(len(page), ncol, panel=(pw, 3.1))
        for row, cells in zip(axes, page):
            for ax, (ds, orc, eps) in zip(row, cells):
                d = t[(t.dataset == ds) & (t.oracle == orc) & (t.epsilon == eps)]
                _panel(ax, d, methods, fits, fstyle)
                S.title(ax, S.panel_title(dataset=ds, oracle=orc, epsilon=eps), pw)
            row[0].set_ylabel("MSE of the category answers")
            for ax in row[len(cells):]:
                ax.axis("off")
        S.shared_legend(fig, axes, ncol=3)
        S.suptitle(fig, f"{_title(meta)}: which method does the synthetic data pick, and is it the best "
                        f"on the real data?{S.page_suffix(p, len(pages))}")
        paths.append(S.save(fig, S.page_path(out_dir, f"{stem}_mse", p, len(pages))))
    paths.append(_plot_regret(t, meta, out_dir, stem, fits, fstyle))
    return paths


def _plot_regret(t, meta, out_dir, stem, fits, fstyle) -> Path:
    r = choice_regret(t)
    oracles = list(dict.fromkeys(t.oracle))
    datasets = list(dict.fromkeys(t.dataset))
    eps_all = sorted(t.epsilon.unique())
    pw = max(4.2, 0.75 * len(oracles) + 1.5)
    fig, axes = S.new_figure(2 * len(datasets), len(fits), panel=(pw, 2.6))
    markers = "os^Dvp<>h"
    colors = ["tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple", "tab:brown", "tab:pink"]
    off = np.linspace(-0.3, 0.3, len(eps_all)) if len(eps_all) > 1 else np.zeros(1)
    for i, ds in enumerate(datasets):
        for j, fit in enumerate(fits):
            top, bottom = axes[2 * i, j], axes[2 * i + 1, j]
            for k, eps in enumerate(eps_all):
                e = r[(r.dataset == ds) & (r.fit == fit) & (r.epsilon == eps)].copy()
                e["hit"] = (e.chosen == e.best).astype(float)
                g = e.groupby("oracle")
                s = pd.DataFrame({"mean": g.ratio.mean(), "sd": g.ratio.std().fillna(0.0), "n": g.ratio.size(),
                                  "hit": g.hit.mean()})
                s = s.reindex([o for o in oracles if o in s.index])
                xs = [oracles.index(o) + off[k] for o in s.index]
                style = dict(fmt=markers[k % len(markers)], color=colors[k % len(colors)], ms=6, capsize=2,
                             label=S.eps_text(eps))
                top.errorbar(xs, s["mean"], yerr=1.96 * s.sd / np.sqrt(s.n), **style)
                bottom.errorbar(xs, 100 * s.hit, **style)
            top.axhline(1.0, color="k", lw=0.8)
            top.set_ylim(bottom=0.95)
            top.set_ylabel("real MSE of the pick /\nbest real MSE")
            S.title(top, f"{ds} · synthetic data fitted with {LABELS.get(fit, fit)}: cost of the pick", pw)
            bottom.set_ylim(-5, 105)
            bottom.set_ylabel("repetitions where the\npick is the real best (%)")
            S.title(bottom, f"{ds} · fitted with {LABELS.get(fit, fit)}: how often it picks the real best", pw)
            bottom.set_xlabel("frequency oracle")
            for ax in (top, bottom):
                ax.set_xticks(range(len(oracles)), [S.oracle_label(o) for o in oracles])
                ax.set_xlim(-0.6, len(oracles) - 0.4)
                ax.grid(True, axis="y", alpha=0.3)
                for x in range(1, len(oracles), 2):  # banded columns: one band per oracle
                    ax.axvspan(x - 0.5, x + 0.5, color="0.93", zorder=0)
    S.shared_legend(fig, axes, title="privacy budget (mean ± 95 % CI over repetitions)")
    S.suptitle(fig, f"{_title(meta)}: does the method picked on synthetic data win on the real data? "
                    "(ratio 1 = it picked the real best)")
    return S.save(fig, out_dir / f"{stem}_choice.png")
