"""Readable figures: one size, font and legend policy for every module of ``figures/``.

Details: docs/experiments.md, section `ldpopt.experiments.figures.style`.
"""

from __future__ import annotations

import textwrap
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np

__all__ = [
    "DPI",
    "MIN_PT",
    "RC",
    "ROWS_PER_PAGE",
    "data_ticks",
    "eps_text",
    "new_figure",
    "oracle_label",
    "page_path",
    "page_suffix",
    "paged",
    "panel_title",
    "pyplot",
    "save",
    "shared_legend",
    "suptitle",
    "title",
]

DPI = 100
MIN_PT = 8.0
ROWS_PER_PAGE = 4
PANEL = (4.6, 2.9)  # default panel size (inches)
MIN_WIDTH_IN = 8.0  # room for a one-line legend and a suptitle of a typical length
# smallest font 8 pt; titles a little larger so the hierarchy reads at a glance
RC: dict[str, Any] = {  # matplotlib rc parameters (sizes in points, and a location name)
    "font.size": 9, "axes.titlesize": 9.5, "axes.labelsize": 9, "xtick.labelsize": 8, "ytick.labelsize": 8,
    "legend.fontsize": 8.5, "figure.titlesize": 11, "legend.title_fontsize": 9, "axes.titlelocation": "left"}


def oracle_label(name) -> str:
    """The display name of the oracle registered as ``name`` (its ``label``: GRR, OUE, …); a name not
    registered, upper-cased."""
    from ... import oracles

    try:
        return oracles.oracle_class(str(name)).label
    except ValueError:
        return str(name).upper()


def pyplot():
    """matplotlib.pyplot with the non-interactive Agg backend unless a backend was already chosen
    (so a notebook's inline backend is kept)."""
    import os
    import sys

    import matplotlib

    if "matplotlib.pyplot" not in sys.modules and not os.environ.get("MPLBACKEND"):
        matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


@contextmanager
def style():
    """The font sizes of :data:`RC` for figures drawn inside the block."""
    import matplotlib

    with matplotlib.rc_context(RC):
        yield


def new_figure(nrows: int, ncols: int, panel=PANEL, *, sharex=False):
    """(fig, axes[nrows, ncols]) with constrained layout; ``panel`` is one panel's size in inches
    (the figure grows with the grid, so text never shrinks)."""
    plt = pyplot()
    with style():
        fig, axes = plt.subplots(nrows, ncols, figsize=(max(panel[0] * ncols, MIN_WIDTH_IN), panel[1] * nrows + 0.9),
                                 squeeze=False, layout="constrained", sharex=sharex)
    fig.get_layout_engine().set(h_pad=0.06, w_pad=0.06, hspace=0.04, wspace=0.04)
    return fig, axes


def shared_legend(fig, axes=None, *, ncol: int | None = None, title: str | None = None):
    """One legend for the whole figure, below every axes (outside the data area), with each label
    once (the union over the panels, in first-seen order)."""
    handles: dict[str, object] = {}
    for ax in (fig.axes if axes is None else np.ravel(axes)):
        for h, lab in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(lab, h)
        if ax.get_legend() is not None:
            ax.get_legend().remove()
    if not handles:
        return None
    # as many columns as fit the figure's width (≈ 0.55 em per character, plus the marker)
    width_in = fig.get_size_inches()[0]
    entry_in = max(len(k) for k in handles) * 0.55 * RC["legend.fontsize"] / 72 + 0.7
    fit = max(1, int(width_in / entry_in))
    ncol = min(ncol or len(handles), fit, len(handles))
    if title:
        title = textwrap.fill(title, int(width_in * 72 / (0.55 * RC["legend.title_fontsize"])), break_on_hyphens=False)
    with style():
        return fig.legend(list(handles.values()), list(handles), loc="outside lower center", ncol=ncol,
                          frameon=False, title=title)


def title(ax, text: str, width_in: float):
    """Panel title wrapped to the width of the panel's axes (``width_in`` inches of panel less ~0.9 in
    of y-axis labels; ≈ 0.7 em per character: 0.62 let "pos-bms-webview-2 · GRR — others vs Norm-Sub" run
    past its panel), so a long title never runs past its panel."""
    chars = max(12, int((width_in - 0.9) * 72 / (0.7 * RC["axes.titlesize"])))
    return ax.set_title(textwrap.fill(text, chars, break_on_hyphens=False))


def suptitle(fig, text: str):
    """The figure title, wrapped to the figure's width (constrained layout keeps it above the axes)."""
    chars = int(fig.get_size_inches()[0] * 72 / (0.55 * RC["figure.titlesize"]))
    with style():
        return fig.suptitle(textwrap.fill(text, chars, break_on_hyphens=False))


def save(fig, path: Path, dpi: int = DPI) -> Path:
    """PNG at ``dpi``, re-encoded with a 64-colour palette (line plots lose nothing visible; the file
    is ~4x smaller, which matters for figures committed under docs/figures); closes ``fig``."""
    fig.savefig(path, dpi=dpi)
    pyplot().close(fig)
    try:
        from PIL import Image

        with Image.open(path) as im:
            small = im.convert("RGB").quantize(colors=64, method=Image.Quantize.MEDIANCUT)
        small.save(path, optimize=True)
    except ImportError:  # Pillow is a matplotlib dependency; keep the plain PNG if it is missing
        pass
    return Path(path)


def data_ticks(ax, values, max_ticks: int = 10) -> None:
    """x ticks at the swept values (ε = 0.5, 1, 2, 4 …) when there are few of them, so a reader
    reads the grid off the axis (and a one-value quick run does not get 3.8, 3.9, 4.0 …)."""
    from matplotlib.ticker import NullLocator

    v = sorted({float(x) for x in values})
    if 0 < len(v) <= max_ticks:
        ax.set_xticks(v, [f"{x:g}" for x in v])
        ax.xaxis.set_minor_locator(NullLocator())


def paged(keys: list, per_page: int = ROWS_PER_PAGE) -> list[list]:
    """``keys`` in pages of at most ``per_page`` rows."""
    if per_page < 1:
        raise ValueError(f"per_page must be >= 1, got {per_page}")
    return [keys[i:i + per_page] for i in range(0, len(keys), per_page)] or [[]]


def page_path(out_dir: Path, base: str, page: int, pages: int) -> Path:
    """``base.png`` for the first page (the name documents link to), ``base_p2.png`` … after it."""
    return Path(out_dir) / (f"{base}.png" if page == 0 else f"{base}_p{page + 1}.png")


def page_suffix(page: int, pages: int) -> str:
    return f" (page {page + 1} of {pages})" if pages > 1 else ""


def pair_panels(s, out_dir: Path, base: str, heading: str, draw) -> list[Path]:
    """One log-log panel per (dataset, oracle) of the summary table ``s``, two per row, paged at
    ``ROWS_PER_PAGE`` rows: ``draw(ax, rows, dataset, oracle)`` draws a panel (``rows``: its part of
    ``s``); the axes' scales, ε ticks and grid, the shared legend, the suptitle ``heading`` and the file names
    (``base.png``, ``base_p2.png`` …) are set here. Returns the files written."""
    keys = list(dict.fromkeys(zip(s["dataset"], s["oracle"])))
    pages = paged(keys, ROWS_PER_PAGE * 2)
    plt = pyplot()
    paths = []
    for page, ks in enumerate(pages):
        ncols = 2 if len(ks) > 1 else 1
        fig, axes = new_figure(int(np.ceil(len(ks) / ncols)), ncols)
        with style():
            for ax, (ds, orc) in zip(axes.ravel(), ks):
                rows = s[(s.dataset == ds) & (s.oracle == orc)]
                draw(ax, rows, ds, orc)
                ax.set_xscale("log")
                ax.set_yscale("log")
                data_ticks(ax, rows.epsilon)
                ax.grid(True, which="both", alpha=0.3)
            for ax in axes.ravel()[len(ks):]:
                ax.set_visible(False)
        shared_legend(fig, axes)
        suptitle(fig, heading + page_suffix(page, len(pages)))
        paths.append(save(fig, page_path(out_dir, base, page, len(pages))))
    plt.close("all")
    return paths


def errorbar_mean(ax, rows, **kw):
    """Mean ± 95 % CI of ``rows`` (columns epsilon, mean, ci) against ε, the bar clipped above 0 so a
    log axis can show it."""
    d = rows.sort_values("epsilon")
    return ax.errorbar(d.epsilon, d["mean"], yerr=np.minimum(d["ci"], 0.999 * d["mean"]), capsize=2, **kw)


def eps_text(eps) -> str:
    return f"ε = {float(eps):g}"


def panel_title(**parts) -> str:
    """``zipf · BLH · ε = 1`` from dataset=…, oracle=…, epsilon=…, and other named parts
    (query_set=…) in the order given; oracle names upper-cased, ε named."""
    out = []
    for k, v in parts.items():
        if v is None:
            continue
        if k == "oracle":
            out.append(oracle_label(v))
        elif k == "epsilon":
            out.append(eps_text(v))
        elif k == "query_set":
            out.append(f"queries: {v}")
        else:
            out.append(str(v))
    return " · ".join(out)
