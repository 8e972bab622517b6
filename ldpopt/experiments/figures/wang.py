"""The Wang et al. figures and the drawing helpers the other figure modules share.

Details: docs/experiments.md, section `ldpopt.experiments.figures.wang`.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from types import MappingProxyType

import numpy as np
import pandas as pd

from . import style as S

__all__ = ["LABELS", "LEFT", "REFERENCES", "RIGHT", "grid_pages", "panels", "style_of", "summarise", "two_panel"]

LEFT = ("base", "base-pos", "post-pos", "norm", "norm-mul", "norm-sub")
RIGHT = ("norm-sub", "mle-apx", "base-cut", "norm-cut", "norm-hyb", "power", "power-ns")


class _Labels(Mapping):
    """Display labels, asked of the method registry (a method's ``label``; ``post-pos``, the
    query-level method of arXiv §3.1, is not a registered method): a live view, so a method the user
    registers is labelled as they declared."""

    _QUERY_LEVEL = MappingProxyType({"post-pos": "Post-Pos"})

    def __getitem__(self, method):
        if method in self._QUERY_LEVEL:
            return self._QUERY_LEVEL[method]
        from ... import methods as _methods

        if isinstance(method, str) and method.lower() in _methods.names():
            return _methods.get(method).label
        raise KeyError(method)

    def __iter__(self):
        from ... import methods as _methods

        return iter([*self._QUERY_LEVEL, *_methods.names()])

    def __len__(self):
        return sum(1 for _ in self)


LABELS = _Labels()
REFERENCES = {"base": "left", "norm-sub": "right"}  # each reference and the panel it is the reference of
_REFERENCE_STYLE = dict(ls="--", lw=1.8, ms=7, mfc="none", mew=1.4, zorder=4)  # on top, hollow: what lies under shows
# colour and marker per method, the same in every figure (the papers' methods in the papers' panel
# order; any other method draws in black circles)
_STYLE = {m: (c, mk) for m, c, mk in zip(
    ("base", "base-pos", "post-pos", "norm", "norm-mul", "norm-sub", "mle-apx", "base-cut", "norm-cut",
     "norm-hyb", "power", "power-ns", "calibrate", "em", "mle-apx-paper"),
    ["k", "tab:orange", "tab:olive", "tab:blue", "tab:purple", "tab:red", "tab:green",
     "tab:brown", "tab:pink", "tab:cyan", "tab:gray", "navy", "gold", "teal", "lime"],
    "o^v<s*Dxd+PhH>p")}


# -- drawing helpers ----------------------------------------------------------------------------

def summarise(table: pd.DataFrame, x: str, by=("dataset", "oracle"), metric="mse") -> pd.DataFrame:
    """Mean, std, count and 95 % CI half-width over repetitions per (by…, method, x)."""
    t = table[table.metric == metric]
    g = t.groupby(list(by) + ["method", x], sort=False).value  # rows in the config's order
    s = g.agg(["mean", "std", "count"]).reset_index()
    s["ci"] = 1.96 * s["std"].fillna(0.0) / np.sqrt(s["count"])
    return s


# colours unlike the papers' methods' (a crimson line beside Norm-Sub's red was hard to tell apart), and
# filled markers none of the papers' twelve methods draws
_OTHER_COLOURS = ("magenta", "darkgoldenrod", "deepskyblue", "indigo", "springgreen", "darkslategray")
_OTHER_MARKERS = "X8>Hp"


def style_of(method: str) -> tuple[str, str]:
    """(colour, marker) of a method, the same in every figure; a method of the user's own gets one
    of a few colours and filled markers unused by Wang et al.'s twelve methods, fixed by its name."""
    if method in _STYLE:
        return _STYLE[method]
    import zlib

    h = zlib.crc32(str(method).encode())
    return _OTHER_COLOURS[h % len(_OTHER_COLOURS)], _OTHER_MARKERS[(h // len(_OTHER_COLOURS)) % len(_OTHER_MARKERS)]


def panels(present, left=LEFT, right=RIGHT) -> tuple[list, list]:
    """The methods of the two panels among ``present``: the paper's left group, and its right group
    followed by every other method in the table (a method of the user's own is drawn beside
    Norm-Sub, the right panel's reference, never left out)."""
    present = set(present)
    others = sorted(present - set(left) - set(right))
    return [m for m in left if m in present], [m for m in right if m in present] + others


def label_of(method: str) -> str:
    """The legend label: the paper's name, for a reference also its panel ("Base (reference, left)")."""
    return LABELS.get(method, method) + (f" (reference, {REFERENCES[method]})" if method in REFERENCES else "")


def drawing_order(methods) -> list[str]:
    """``methods`` with the references last, so they are drawn on top."""
    return sorted(methods, key=lambda m: m in REFERENCES)


def errorbar(ax, x, mean, ci, method: str, **kw):
    """One method's mean ± 95 % CI line (the lower bar clipped above 0 for the log axis); a reference
    (:data:`REFERENCES`) dashed, hollow and above the other lines."""
    c, mk = style_of(method)
    style = {"color": c, "marker": mk, "ms": 4, "lw": 1.2, "capsize": 2, **(_REFERENCE_STYLE if method in REFERENCES else {})}
    return ax.errorbar(x, mean, yerr=np.minimum(ci, 0.999 * np.asarray(mean)), label=label_of(method), **{**style, **kw})


def two_panel(ax_pair, s: pd.DataFrame, x: str, xlabel: str, ylabel: str, logx=False, left=LEFT, right=RIGHT):
    """Draw the paper's two panels from a summary (one x per row) on two axes (no per-axes legend:
    the figure gets one shared legend, :func:`ldpopt.experiments.figures.style.shared_legend`)."""
    for ax, group in zip(ax_pair, panels(s.method, left, right)):
        for m in drawing_order(group):
            d = s[s.method == m].sort_values(x)
            errorbar(ax, d[x], d["mean"], d["ci"], m)
        ax.set_yscale("log")
        if logx:
            ax.set_xscale("log")
        else:
            S.data_ticks(ax, s[x])
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.grid(True, which="both", alpha=0.3)


#: the two panels of a row: what the title calls their methods, and their reference (REFERENCES)
_PANELS = (("Norm family", "base"), ("others", "norm-sub"))


def panel_note(panel: int, present) -> str:
    """The end of panel ``panel``'s (0 left, 1 right) title: what it shows and, when the reference
    is among the methods ``present`` (so drawn), "vs" the reference — never a reference not drawn."""
    what, ref = _PANELS[panel]
    return f" — {what} vs {LABELS[ref]}" if ref in set(present) else f" — {what}"


_MSE = "MSE (frequency scale)"
_MAE = "MAE (frequency scale)"
_EPS = "ε (privacy budget)"


def _row_keys(s: pd.DataFrame, rows_by) -> list[tuple]:
    keys = list(dict.fromkeys(zip(*(s[c] for c in rows_by)))) if rows_by else [()]  # first-seen order
    return [k if isinstance(k, tuple) else (k,) for k in keys]


def _row_mask(s: pd.DataFrame, rows_by, key) -> np.ndarray:
    mask = np.ones(len(s), bool)
    for col, val in zip(rows_by, key):
        mask &= (s[col] == val).to_numpy()
    return mask


def grid_pages(s: pd.DataFrame, x: str, rows_by, xlabel, ylabel, title, out_dir: Path, base: str,
               logx=False, draw=None, per_page: int = S.ROWS_PER_PAGE) -> list[Path]:
    """Two panels (left/right method groups) per row key of ``rows_by``, at most ``per_page`` rows a
    page; the row key is the panel title (``zipf · OLH · ε = 1``); one shared legend per page; the
    two panels of a row share their y axis. ``draw(ax_pair, rows)`` replaces :func:`two_panel` (for
    kinds that are not mean-vs-x lines)."""
    keys = _row_keys(s, rows_by)
    pages = S.paged(keys, per_page)
    paths = []
    for i, page in enumerate(pages):
        fig, axes = S.new_figure(len(page), 2)
        for row, key in zip(axes, page):
            row[1].sharey(row[0])
            rows = s[_row_mask(s, rows_by, key)]
            if draw is None:
                two_panel(row, rows, x, xlabel, ylabel, logx=logx)
            else:
                draw(row, rows)
            name = S.panel_title(**dict(zip(rows_by, key)))
            for side, ax in enumerate(row):
                S.title(ax, name + panel_note(side, rows.method), S.PANEL[0])
        S.shared_legend(fig, axes)
        S.suptitle(fig, title + S.page_suffix(i, len(pages)))
        paths.append(S.save(fig, S.page_path(out_dir, base, i, len(pages))))
    return paths


def _title(meta) -> str:
    c = meta["config"]
    return f"{c['name']}{' (quick)' if meta.get('quick') else ''}"


# -- the Wang et al. kinds ------------------------------------------------------------------------

def plot_full_domain(table, meta, out_dir: Path, stem: str) -> list[Path]:
    """arXiv Fig. 1 / Fig. 7, NDSS Fig. 4: MSE and MAE vs ε."""
    paths = []
    for metric, ylabel in (("mse", _MSE), ("mae", _MAE)):
        if not (table.metric == metric).any():
            continue
        s = summarise(table, "epsilon", metric=metric)
        paths += grid_pages(s, "epsilon", ("dataset", "oracle"), _EPS, ylabel,
                            f"{_title(meta)}: full-domain {metric.upper()} vs ε", out_dir, f"{stem}_{metric}")
    return paths


def plot_set_value(table, meta, out_dir, stem):
    """arXiv Fig. 2–3, NDSS Fig. 6–7: MSE vs ρ at fixed ε."""
    s = summarise(table, "rho", by=("dataset", "oracle", "epsilon"))
    return grid_pages(s, "rho", ("dataset", "oracle", "epsilon"), "ρ (query size, % of the domain d)", _MSE,
                      f"{_title(meta)}: random set-value queries, MSE vs ρ", out_dir, f"{stem}_mse")


def plot_fixed_sets(table, meta, out_dir, stem):
    """arXiv Fig. 4, NDSS Fig. 8: MSE vs ε per query set."""
    s = summarise(table, "epsilon", by=("dataset", "oracle", "query_set"))
    return grid_pages(s, "epsilon", ("dataset", "query_set", "oracle"), _EPS, _MSE,
                      f"{_title(meta)}: fixed set queries, MSE vs ε", out_dir, f"{stem}_mse")


def plot_top_k(table, meta, out_dir, stem):
    """arXiv Fig. 5, NDSS Fig. 10: MSE vs k."""
    s = summarise(table, "k", by=("dataset", "oracle", "epsilon"))
    return grid_pages(s, "k", ("dataset", "oracle", "epsilon"), "k (number of most frequent values)", _MSE,
                      f"{_title(meta)}: top-k values, MSE vs k", out_dir, f"{stem}_mse")


def plot_benefit(table, meta, out_dir, stem):
    """NDSS Fig. 5: n′ vs n (log y; higher is better; the dotted y = x is Base's analytic line)."""
    s = summarise(table[table.method != "base-analytic"], "n_users", by=("dataset", "oracle", "epsilon"),
                  metric="n_prime")

    def draw(row, d):
        for ax, group in zip(row, panels(d.method)):
            for m in drawing_order(group):
                e = d[d.method == m].sort_values("n_users")
                errorbar(ax, e.n_users / 1e6, e["mean"] / 1e6, e["ci"] / 1e6, m)
            xs = np.linspace(d.n_users.min(), d.n_users.max(), 50) / 1e6  # y = x is curved on log y
            ax.plot(xs, xs, "k:", lw=1, label="n′ = n (Base, analytic)")
            ax.set_yscale("log")
            S.data_ticks(ax, d.n_users / 1e6)
            ax.set_xlabel("n (users, millions)")
            ax.set_ylabel("n′ (users Base needs, millions)")
            ax.grid(True, which="both", alpha=0.3)

    return grid_pages(s, "n_users", ("dataset", "oracle", "epsilon"), None, None,
                      f"{_title(meta)}: users Base would need for the same MSE (n′)", out_dir, f"{stem}_nprime",
                      draw=draw)


def plot_bias_variance(table, meta, out_dir, stem):
    """NDSS Fig. 1–3: mean count estimate vs truth, bias and variance per value (count scale;
    variance divided by n as in the paper's Fig. 3), one panel per method, x = value rank."""
    from ..task_kinds.wang_runs import combine_bias_variance

    cb = combine_bias_variance(table)
    paths = []
    whats = (("mean", "mean count estimate"), ("bias", "bias (counts)"), ("variance", "variance / n (counts²/user)"))
    for (ds, orc, eps), g in cb.groupby(["dataset", "oracle", "epsilon"]):
        left, right = panels(g.method)
        methods = list(dict.fromkeys(left + right))
        nn = float(g.n_users.iloc[0])
        for what, ylab in whats:
            ncol = 4
            nrow = int(np.ceil(len(methods) / ncol))
            fig, axes = S.new_figure(nrow, ncol, panel=(3.3, 2.6))
            for ax, m in zip(axes.ravel(), methods):
                e = g[g.method == m].sort_values("f", ascending=False)
                rank = np.arange(1, len(e) + 1)
                title = f"{LABELS.get(m, m)} ({int(e.runs.iloc[0])} runs)"
                if what == "mean":
                    ax.plot(rank, e.f * nn, "b-", lw=1, label="true count")
                    ax.plot(rank, (e.f + e.bias) * nn, "g.", ms=3, label="mean of the estimates")
                    ax.set_yscale("symlog", linthresh=10)
                elif what == "bias":
                    ax.plot(rank, e.bias * nn, "g.", ms=3, label="bias of one value")
                    ax.axhline(0, color="k", lw=0.6)
                    total = e.bias.sum() * nn
                    title += f", Σ bias {0.0 if abs(total) < 0.5 else total:.0f}"  # no "-0"
                else:
                    ax.plot(rank, e.variance * nn, "g.", ms=3, label="variance of one value / n")  # Var(count)/n
                ax.set_xscale("log")
                S.title(ax, title, 3.3)
                ax.set_xlabel("value rank (1 = most frequent)")
                ax.set_ylabel(ylab)
            for ax in axes.ravel()[len(methods):]:
                ax.axis("off")
            S.shared_legend(fig, axes)
            S.suptitle(fig, f"{_title(meta)}: {what} per value · {S.panel_title(dataset=ds, oracle=orc, epsilon=eps)}")
            paths.append(S.save(fig, out_dir / f"{stem}_{ds}_{orc}_eps{eps:g}_{what}.png"))
    return paths
