"""Figures of Jia & Gong, *Calibrate* (INFOCOM 2019), from saved results only.

Details: docs/experiments.md, section `ldpopt.experiments.figures.jia`.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from . import style as S

__all__ = ["PLOTS", "load_results", "plot_estimation_error", "plot_heavy_hitters", "plot_noise"]

_LABEL = {"base": "{O}", "zero": "{O}-Zero", "calibrate": "{O}-Calibrate", "calibrate-mv": "{O}-Calibrate (mean-var fit)",
          "calibrate-zero": "{O}-Calibrate + cut", "calibrate-gauss": "{O}-Calibrate (Gaussian prior)"}
_STYLE = {"base": dict(color="0.4", marker="o", ls=":"), "zero": dict(color="tab:blue", marker="s"),
          "calibrate": dict(color="tab:red", marker="^"), "calibrate-mv": dict(color="tab:orange", marker="v", ls="--"),
          "calibrate-zero": dict(color="tab:purple", marker="x", ls="-."),
          "calibrate-gauss": dict(color="tab:green", marker="d", ls="--")}


def load_results(folder) -> pd.DataFrame:
    """``folder/results.parquet``; if a sweep is unfinished, the finished parts (``partial`` column
    set to True) so an interrupted run can still be looked at."""
    folder = Path(folder)
    res = folder / "results.parquet"
    if res.is_file():
        t = pd.read_parquet(res)
        t["partial"] = False
        return t
    parts = sorted((folder / "parts").glob("*.parquet"))
    if not parts:
        raise FileNotFoundError(f"no results.parquet and no parts in {folder}")
    t = pd.concat([pd.read_parquet(p) for p in parts], ignore_index=True)
    t["partial"] = True
    return t


def _name(method: str, oracle: str) -> str:
    return _LABEL.get(method, method).format(O=S.oracle_label(oracle))


def summarise(table: pd.DataFrame, by: list[str]) -> pd.DataFrame:
    """Mean, standard error and number of repetitions of ``value`` per group ``by`` (NaN values
    skipped; the standard error is 0 with one repetition and NaN with none)."""
    s = table.groupby(by, dropna=False, sort=True)["value"].agg(["mean", "std", "count"]).reset_index()
    one = np.where(s["count"] == 1, 0.0, np.nan)
    s["se"] = (s["std"] / np.sqrt(s["count"])).where(s["count"] > 1, one)
    return s.rename(columns={"count": "reps"})[[*by, "mean", "se", "reps"]]


# -- Fig. 4 -----------------------------------------------------------------------------------------
def plot_noise(table: pd.DataFrame, out, oracle: str = "oue", epsilon: float | None = None) -> list[Path]:
    """Fig. 4: the standardised noise histogram of repetition 0 (one trial, as the paper plots) for
    ``oracle`` at ``epsilon`` (default: 4 if present, else the largest) per dataset, over the
    N(0, 1) density the Eq. 14 variance predicts; plus var(fitted)/var(Eq. 14) vs ε per oracle."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    sub = table[table.oracle == oracle]
    if epsilon is None:
        eps_all = sorted(sub.epsilon.unique())
        epsilon = 4.0 if 4.0 in eps_all else eps_all[-1]
    dsets = sorted(sub.dataset.unique())
    fig, axes = S.new_figure(1, len(dsets), panel=(4.6, 3.4))
    for ax, ds in zip(axes[0], dsets):
        t = sub[(sub.dataset == ds) & (sub.epsilon == epsilon)]
        rep0 = t[t.rep == t.rep.min()]
        h = rep0[(rep0.metric == "z_hist") & np.isfinite(rep0.bin_lo) & np.isfinite(rep0.bin_hi)]
        ax.bar(h.bin_lo, h.value, width=h.bin_hi - h.bin_lo, align="edge", color="tab:blue", alpha=0.6,
               label="empirical noise (one trial)")
        x = np.linspace(-6, 6, 400)
        ax.plot(x, np.exp(-x * x / 2) / np.sqrt(2 * np.pi), "k-", lw=1.2, label="N(0, 1): Gaussian of Eq. 14")
        sc = rep0.set_index("metric").value
        S.title(ax, f"{S.panel_title(dataset=ds, oracle=oracle, epsilon=epsilon)} — variance: Eq. 14 "
                    f"{sc['predicted_var']:.4g}, fitted {sc['fitted_var']:.4g}; mean {sc['fitted_mean']:.3g}", 4.6)
        ax.set_xlabel("noise / √(Eq. 14 variance) (standardised)")
        ax.set_ylabel("density")
    S.shared_legend(fig, axes)
    S.suptitle(fig, f"Jia & Gong Fig. 4: noise of {S.oracle_label(oracle)} vs the Gaussian "
                    f"of Eq. 13–14")
    paths.append(S.save(fig, out / f"jia_fig4_noise_{oracle}.png"))

    vr = summarise(table[table.metric == "var_ratio"], ["dataset", "oracle", "epsilon"])
    fig, axes = S.new_figure(1, len(dsets), panel=(4.6, 3.4))
    for ax, ds in zip(axes[0], dsets):
        for orc, g in vr[vr.dataset == ds].groupby("oracle"):
            ax.errorbar(g.epsilon, g["mean"], yerr=g["se"], marker="o", ms=4, capsize=2,
                        label=S.oracle_label(orc))
        ax.axhline(1.0, color="k", lw=0.8)
        ax.set_xscale("log")
        ticks = sorted(vr.epsilon.unique())
        ax.set_xticks(ticks, [f"{e:g}" for e in ticks])
        ax.minorticks_off()
        ax.set_xlabel("ε (privacy budget)")
        ax.set_ylabel("fitted variance / Eq. 14 variance")
        ax.set_title(ds)
    S.shared_legend(fig, axes, title="frequency oracle (mean ± 1 SE over repetitions)")
    S.suptitle(fig, "Jia & Gong Fig. 4 (extension): fitted noise variance over the Eq. 14 prediction (1 = exact)")
    paths.append(S.save(fig, out / "jia_fig4_noise_var_ratio.png"))
    return paths


# -- Fig. 7 -----------------------------------------------------------------------------------------
def plot_estimation_error(table: pd.DataFrame, out, metric: str = "mse") -> list[Path]:
    """Fig. 7: estimation error (Eq. 5, count scale) vs ε, log y, one panel per (dataset, oracle);
    with several oracles the legend names the methods generically (X = the panel's oracle)."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    s = summarise(table[table.metric == metric], ["dataset", "oracle", "method", "epsilon"])
    panels = sorted(s.groupby(["dataset", "oracle"]).groups)
    one_oracle = s.oracle.nunique() == 1
    ncol = min(4, len(panels))
    name = str(table.experiment.iloc[0]) if "experiment" in table else "jia_fig7"
    pages = S.paged([panels[i:i + ncol] for i in range(0, len(panels), ncol)])
    paths = []
    for i, page in enumerate(pages):
        fig, axes = S.new_figure(len(page), ncol, panel=(3.6, 3.0))
        for row, cells in zip(axes, page):
            for ax, (ds, orc) in zip(row, cells):
                g = s[(s.dataset == ds) & (s.oracle == orc)]
                for m, gm in g.groupby("method", sort=False):
                    ax.errorbar(gm.epsilon, gm["mean"], yerr=gm["se"], capsize=2, ms=4,
                                label=_name(m, orc if one_oracle else "X"), **_STYLE.get(m, {}))
                ax.set_yscale("log")
                S.data_ticks(ax, g.epsilon)
                ax.set_xlabel("ε (privacy budget)")
                ax.set_ylabel("estimation error, Eq. 5 (counts²)")
                S.title(ax, S.panel_title(dataset=ds, oracle=orc), 3.6)
            for ax in row[len(cells):]:
                ax.axis("off")
        S.shared_legend(fig, axes, title=None if one_oracle else "X = the panel's frequency oracle")
        S.suptitle(fig, f"{name}: Jia & Gong Fig. 7, estimation error vs ε (mean ± 1 SE){S.page_suffix(i, len(pages))}")
        paths.append(S.save(fig, S.page_path(out, name, i, len(pages))))
    return paths


# -- Fig. 5, 6, 8, 9 --------------------------------------------------------------------------------
def plot_heavy_hitters(table: pd.DataFrame, out) -> list[Path]:
    """Fig. 5/6 (vs threshold ratio, per dataset/oracle/ε with several ratios) and Fig. 8/9 (vs ε at
    ratio 1, per dataset/oracle with several ε): precision, recall, F-score; one row per group,
    at most :data:`ldpopt.experiments.figures.style.ROWS_PER_PAGE` rows a page."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    name = str(table.experiment.iloc[0]) if "experiment" in table else "jia_hh"
    t = table[table.metric.isin(["precision", "recall", "f_score"])]
    nratio = t.threshold_ratio.nunique()
    groups = []
    if nratio > 1:
        for (ds, orc, eps), g in t.groupby(["dataset", "oracle", "epsilon"]):
            groups.append((S.panel_title(dataset=ds, oracle=orc, epsilon=eps), orc, g, "threshold_ratio",
                           "threshold / significance threshold (Eq. 22)"))
    if t.epsilon.nunique() > 1 or not groups:  # one ε and one ratio: still a (one-point) vs-ε figure
        for (ds, orc), g in t[np.isclose(t.threshold_ratio, 1.0)].groupby(["dataset", "oracle"]):
            groups.append((S.panel_title(dataset=ds, oracle=orc) + " · significance threshold", orc, g, "epsilon",
                           "ε (privacy budget)"))
    if not groups:
        return []
    one_oracle = len({g[1] for g in groups}) == 1
    pages = S.paged(groups)
    paths = []
    for i, page in enumerate(pages):
        fig, axes = S.new_figure(len(page), 3, panel=(3.8, 2.8))
        for row, (title, orc, g, xcol, xlabel) in zip(axes, page):
            s = summarise(g, ["metric", "method", xcol])
            for ax, met in zip(row, ["precision", "recall", "f_score"]):
                for m, gm in s[s.metric == met].groupby("method", sort=False):
                    ax.errorbar(gm[xcol], gm["mean"], yerr=gm["se"], capsize=2, ms=4,
                                label=_name(m, orc if one_oracle else "X"), **_STYLE.get(m, {}))
                if xcol == "threshold_ratio":
                    ax.axvline(1.0, color="k", lw=0.8)
                else:
                    S.data_ticks(ax, g[xcol])
                ax.set_ylim(-0.02, 1.02)
                ax.set_xlabel(xlabel)
                label = {"f_score": "F-score"}.get(met, met.capitalize())
                ax.set_ylabel(f"{label} (0–1)")
                S.title(ax, f"{title}: {label}", 3.8)
        S.shared_legend(fig, axes, title=None if one_oracle else "X = the row's frequency oracle")
        S.suptitle(fig, f"{name}: heavy hitters, precision / recall / F-score (mean ± 1 SE)"
                        f"{S.page_suffix(i, len(pages))}")
        paths.append(S.save(fig, S.page_path(out, name, i, len(pages))))
    return paths


PLOTS = {"noise-distribution": plot_noise, "estimation-error": plot_estimation_error,
         "heavy-hitters": plot_heavy_hitters}
