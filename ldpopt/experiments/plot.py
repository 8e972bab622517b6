"""Figures from saved experiment results (never recomputed): ``results/<name>[-quick]/results.parquet``
+ ``meta.json`` → PNG files next to them (or in ``out``).

Layout follows Wang et al. (arXiv §4.1 "Plotting Convention", NDSS §V-A): one row per
(dataset, oracle[, query set]); the left panel shows Base, Base-Pos, Post-Pos, Norm, Norm-Mul,
Norm-Sub; the right panel Norm-Sub with MLE-Apx, Base-Cut, Norm-Cut, Norm-Hyb, Power, PowerNS
(whichever the table has); log-scale y; the mean over repetitions with a 95 % normal confidence
interval (1.96 · std / √reps) as error bars.

A plot function is registered per task kind with :func:`register_plot`; :func:`plot` looks the
kind up in the saved ``meta.json``. Other modules (e.g. ``plots_jia``) register their own kinds.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Callable

import numpy as np
import pandas as pd

__all__ = ["LEFT", "RIGHT", "load_results", "plot", "plot_kinds", "register_plot", "two_panel"]

LEFT = ("base", "base-pos", "post-pos", "norm", "norm-mul", "norm-sub")
RIGHT = ("norm-sub", "mle-apx", "base-cut", "norm-cut", "norm-hyb", "power", "power-ns")
LABELS = {"base": "Base", "base-pos": "Base-Pos", "post-pos": "Post-Pos", "norm": "Norm",
          "norm-mul": "Norm-Mul", "norm-sub": "Norm-Sub", "mle-apx": "MLE-Apx", "base-cut": "Base-Cut",
          "norm-cut": "Norm-Cut", "norm-hyb": "Norm-Hyb", "power": "Power", "power-ns": "PowerNS",
          "calibrate": "Calibrate", "em": "EM", "mle-apx-paper": "MLE-Apx (paper)"}
_STYLE = {m: (c, mk) for m, c, mk in zip(
    LABELS, ["k", "tab:orange", "tab:olive", "tab:blue", "tab:purple", "tab:red", "tab:green",
             "tab:brown", "tab:pink", "tab:cyan", "tab:gray", "navy", "gold", "teal", "lime"],
    "o^v<s*Dxd+PhH>p")}

_PLOTS: dict[str, Callable] = {}


def register_plot(kind: str):
    """Decorator: ``fn(table, meta, out_dir, stem) -> list[Path]`` draws the figures of ``kind``."""
    def deco(fn):
        _PLOTS[kind] = fn
        return fn
    return deco


def plot_kinds() -> list[str]:
    return sorted(_PLOTS)


def _results_folder(name_or_folder, quick: bool = False, root=Path("results")) -> Path:
    p = Path(name_or_folder)
    if (p / "results.parquet").is_file():
        return p
    cand = Path(root) / (str(name_or_folder) + ("-quick" if quick else ""))
    if (cand / "results.parquet").is_file():
        return cand
    raise ValueError(f"no saved results for {name_or_folder!r}: expected a folder with results.parquet "
                     f"(tried {p} and {cand}); run `ldpopt experiment run` first")


def load_results(name_or_folder, quick: bool = False, root=Path("results")) -> tuple[pd.DataFrame, dict, Path]:
    """(table, meta, folder) of a saved run."""
    folder = _results_folder(name_or_folder, quick, root)
    meta = json.loads((folder / "meta.json").read_text())
    return pd.read_parquet(folder / "results.parquet"), meta, folder


def plot(name_or_results_folder, out=None, *, quick: bool = False, root="results") -> list[Path]:
    """Draw the figures of a saved run; returns the PNG paths (written to ``out`` or the results
    folder). ``name_or_results_folder`` is a results folder or an experiment name under ``root``."""
    _ensure_registered()
    table, meta, folder = load_results(name_or_results_folder, quick, Path(root))
    kind = meta["config"]["kind"]
    if kind not in _PLOTS:
        raise ValueError(f"no plot registered for kind {kind!r} (registered: {plot_kinds()})")
    out_dir = Path(out) if out is not None else folder
    out_dir.mkdir(parents=True, exist_ok=True)
    return _PLOTS[kind](table, meta, out_dir, meta["config"]["name"])


def _ensure_registered():
    import importlib

    importlib.import_module("ldpopt.experiments.plots_jia")  # registers the Jia & Gong figures


# -- drawing helpers ----------------------------------------------------------------------------

def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def summarise(table: pd.DataFrame, x: str, by=("dataset", "oracle"), metric="mse") -> pd.DataFrame:
    """Mean, std, count and 95 % CI half-width over repetitions per (by…, method, x)."""
    t = table[table.metric == metric]
    g = t.groupby(list(by) + ["method", x]).value
    s = g.agg(["mean", "std", "count"]).reset_index()
    s["ci"] = 1.96 * s["std"].fillna(0.0) / np.sqrt(s["count"])
    return s


def two_panel(ax_pair, s: pd.DataFrame, x: str, xlabel: str, ylabel: str, logx=False, left=LEFT, right=RIGHT):
    """Draw the paper's two panels from a summary (one x per row) on two axes."""
    present = list(dict.fromkeys(s.method))
    for ax, group in zip(ax_pair, (left, right)):
        for m in [m for m in group if m in present]:
            d = s[s.method == m].sort_values(x)
            c, mk = _STYLE.get(m, ("k", "o"))
            ax.errorbar(d[x], d["mean"], yerr=np.minimum(d["ci"], 0.999 * d["mean"]), label=LABELS.get(m, m),
                        color=c, marker=mk, ms=4, lw=1.2, capsize=2)
        ax.set_yscale("log")
        if logx:
            ax.set_xscale("log")
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)


def _save(fig, path: Path, dpi: int = 80) -> None:
    """PNG at ``dpi``, re-encoded with a 64-colour palette: line plots lose nothing visible and the
    file is ~4x smaller (figures are committed under docs/figures)."""
    fig.savefig(path, dpi=dpi)
    try:
        from PIL import Image

        with Image.open(path) as im:
            small = im.convert("RGB").quantize(colors=64, method=Image.Quantize.MEDIANCUT)
        small.save(path, optimize=True)
    except ImportError:  # Pillow is a matplotlib dependency; keep the plain PNG if it is missing
        pass


def _grid_figure(s: pd.DataFrame, x: str, rows_by, xlabel, ylabel, title, path: Path, logx=False) -> Path:
    plt = _plt()
    keys = list(s.groupby(list(rows_by)).groups) if rows_by else [()]
    fig, axes = plt.subplots(len(keys), 2, figsize=(10, 3.3 * len(keys)), squeeze=False)
    for row, key in zip(axes, keys):
        key = key if isinstance(key, tuple) else (key,)
        mask = np.ones(len(s), bool)
        for col, val in zip(rows_by, key):
            mask &= (s[col] == val).to_numpy()
        two_panel(row, s[mask], x, xlabel, ylabel, logx=logx)
        row[0].set_title(" · ".join(str(k) for k in key), fontsize=9, loc="left")
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    _save(fig, path)
    plt.close(fig)
    return path


def _title(meta) -> str:
    c = meta["config"]
    return f"{c['name']}{' (quick)' if meta.get('quick') else ''}"


# -- the Wang et al. kinds ------------------------------------------------------------------------

@register_plot("full-domain")
def plot_full_domain(table, meta, out_dir: Path, stem: str) -> list[Path]:
    """arXiv Fig. 1 / Fig. 7, NDSS Fig. 4: MSE and MAE vs ε."""
    paths = []
    for metric in ("mse", "mae"):
        if not (table.metric == metric).any():
            continue
        s = summarise(table, "epsilon", metric=metric)
        paths.append(_grid_figure(s, "epsilon", ("dataset", "oracle"), "ε", metric.upper(),
                                  f"{_title(meta)}: full-domain {metric.upper()}", out_dir / f"{stem}_{metric}.png"))
    return paths


@register_plot("set-value")
def plot_set_value(table, meta, out_dir, stem):
    """arXiv Fig. 2–3, NDSS Fig. 6–7: MSE vs ρ at fixed ε."""
    s = summarise(table, "rho", by=("dataset", "oracle", "epsilon"))
    return [_grid_figure(s, "rho", ("dataset", "oracle", "epsilon"), "ρ (% of d)", "MSE",
                         f"{_title(meta)}: random set-value queries", out_dir / f"{stem}_mse.png")]


@register_plot("fixed-sets")
def plot_fixed_sets(table, meta, out_dir, stem):
    """arXiv Fig. 4, NDSS Fig. 8: MSE vs ε per query set."""
    s = summarise(table, "epsilon", by=("dataset", "oracle", "query_set"))
    return [_grid_figure(s, "epsilon", ("dataset", "query_set", "oracle"), "ε", "MSE",
                         f"{_title(meta)}: fixed set queries", out_dir / f"{stem}_mse.png")]


@register_plot("top-k")
def plot_top_k(table, meta, out_dir, stem):
    """arXiv Fig. 5, NDSS Fig. 10: MSE vs k."""
    s = summarise(table, "k", by=("dataset", "oracle", "epsilon"))
    return [_grid_figure(s, "k", ("dataset", "oracle", "epsilon"), "k", "MSE",
                         f"{_title(meta)}: top-k values", out_dir / f"{stem}_mse.png")]


@register_plot("benefit")
def plot_benefit(table, meta, out_dir, stem):
    """NDSS Fig. 5: n′ vs n (linear axes; higher is better; y = x is Base's analytic line)."""
    plt = _plt()
    s = summarise(table[table.method != "base-analytic"], "n_users", by=("dataset", "oracle", "epsilon"),
                  metric="n_prime")
    keys = list(s.groupby(["dataset", "oracle", "epsilon"]).groups)
    fig, axes = plt.subplots(len(keys), 2, figsize=(10, 3.3 * len(keys)), squeeze=False)
    for row, key in zip(axes, keys):
        d = s[(s.dataset == key[0]) & (s.oracle == key[1]) & (s.epsilon == key[2])]
        for ax, group in zip(row, (LEFT, RIGHT)):
            for m in [m for m in group if m in set(d.method)]:
                e = d[d.method == m].sort_values("n_users")
                c, mk = _STYLE.get(m, ("k", "o"))
                ax.errorbar(e.n_users / 1e6, e["mean"] / 1e6, yerr=e["ci"] / 1e6, label=LABELS.get(m, m),
                            color=c, marker=mk, ms=4, capsize=2)
            xs = np.linspace(d.n_users.min(), d.n_users.max(), 50) / 1e6  # y = x is curved on log y
            ax.plot(xs, xs, "k:", lw=0.8, label="n′ = n")
            ax.set_yscale("log")
            ax.set_xlabel("n (10⁶)")
            ax.set_ylabel("n′ (10⁶)")
            ax.grid(True, which="both", alpha=0.3)
            ax.legend(fontsize=7)
        row[0].set_title(" · ".join(map(str, key)), fontsize=9, loc="left")
    fig.suptitle(f"{_title(meta)}: users Base would need (n′)", fontsize=10)
    fig.tight_layout()
    path = out_dir / f"{stem}_nprime.png"
    _save(fig, path)
    plt.close(fig)
    return [path]


@register_plot("bias-variance")
def plot_bias_variance(table, meta, out_dir, stem):
    """NDSS Fig. 1–3: mean count estimate vs truth, bias and variance per value (count scale;
    variance divided by n as in the paper's Fig. 3), one panel per method, x = value rank."""
    from .tasks_wang import combine_bias_variance

    plt = _plt()
    cb = combine_bias_variance(table)
    paths = []
    for (ds, orc, eps), g in cb.groupby(["dataset", "oracle", "epsilon"]):
        methods = [m for m in dict.fromkeys(LEFT + RIGHT) if m in set(g.method)]
        nn = float(g.n_users.iloc[0])
        for what, ylab in (("mean", "mean count estimate"), ("bias", "bias (counts)"), ("variance", "variance / n (counts²)")):
            ncol = 4
            nrow = int(np.ceil(len(methods) / ncol))
            fig, axes = plt.subplots(nrow, ncol, figsize=(12, 2.6 * nrow), squeeze=False)
            for ax, m in zip(axes.ravel(), methods):
                e = g[g.method == m].sort_values("f", ascending=False)
                rank = np.arange(1, len(e) + 1)
                if what == "mean":
                    ax.plot(rank, e.f * nn, "b-", lw=1, label="truth")
                    ax.plot(rank, (e.f + e.bias) * nn, "g.", ms=2, label="mean")
                    ax.set_yscale("symlog", linthresh=10)
                    ax.set_xscale("log")
                elif what == "bias":
                    ax.plot(rank, e.bias * nn, "g.", ms=2)
                    ax.axhline(0, color="k", lw=0.5)
                    ax.set_xscale("log")
                    ax.set_title(f"{LABELS.get(m, m)}, bias sum {e.bias.sum() * nn:.0f} (runs {int(e.runs.iloc[0])})",
                                 fontsize=8)
                else:
                    ax.plot(rank, e.variance * nn, "g.", ms=2)  # Var(count)/n = Var(f)·n
                    ax.set_xscale("log")
                if what != "bias":
                    ax.set_title(f"{LABELS.get(m, m)} (runs {int(e.runs.iloc[0])})", fontsize=8)
                ax.set_xlabel("value rank", fontsize=7)
                ax.set_ylabel(ylab, fontsize=7)
                ax.tick_params(labelsize=6)
            for ax in axes.ravel()[len(methods):]:
                ax.axis("off")
            fig.suptitle(f"{_title(meta)} · {ds} · {orc} · ε={eps:g}: {what}", fontsize=10)
            fig.tight_layout()
            path = out_dir / f"{stem}_{ds}_{orc}_eps{eps:g}_{what}.png"
            _save(fig, path)
            plt.close(fig)
            paths.append(path)
    return paths


@register_plot("choose-method")
def plot_choose_method(table, meta, out_dir, stem):
    """NDSS Fig. 9: MSE of each method on the real data and on the synthetic data of each fit, vs ε."""
    s = summarise(table, "epsilon", by=("dataset", "oracle", "fit"))
    plt = _plt()
    fits = list(dict.fromkeys(["real", *s.fit.unique()]))
    fig, axes = plt.subplots(1, len(fits), figsize=(4.2 * len(fits), 3.6), squeeze=False)
    for ax, fit in zip(axes[0], fits):
        d = s[s.fit == fit]
        for m in dict.fromkeys(LEFT + RIGHT):
            e = d[d.method == m].sort_values("epsilon")
            if e.empty:
                continue
            c, mk = _STYLE.get(m, ("k", "o"))
            ax.errorbar(e.epsilon, e["mean"], yerr=np.minimum(e["ci"], 0.999 * e["mean"]), label=LABELS.get(m, m),
                        color=c, marker=mk, ms=4, capsize=2)
        ax.set_yscale("log")
        ax.set_xlabel("ε")
        ax.set_ylabel("MSE")
        ax.set_title("real data" if fit == "real" else f"synthetic from {LABELS.get(fit, fit)}", fontsize=9)
        ax.grid(True, which="both", alpha=0.3)
    axes[0][-1].legend(fontsize=7)
    fig.suptitle(f"{_title(meta)}: choosing a method on a synthetic dataset", fontsize=10)
    fig.tight_layout()
    path = out_dir / f"{stem}_mse.png"
    _save(fig, path)
    plt.close(fig)
    return [path]
