"""Figure of the ``coverage`` kind (``ext_uncertainty_coverage``): how often ldpopt's
nominal 90 % / 95 % intervals cover the truth, per method and per value band.

Details: docs/experiments.md, section `ldpopt.experiments.figures.coverage`.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from . import style as S
from .wang import LABELS, _title

__all__ = ["plot_coverage"]

BANDS = {"zero": "f = 0", "lt1sigma": "0 < f < σ", "1-2sigma": "σ ≤ f < 2σ", "2-5sigma": "2σ ≤ f < 5σ",
         "ge5sigma": "f ≥ 5σ", "sub-head": "sums of 10 head values", "sub-tail": "sums of 10 tail values",
         "sub-mixed": "sums of 10 random values", "topk": "top-10 set, conditional (default)",
         "topk-hull": "top-10 set, selection-aware hull", "topk-cal": "top-10 set, calibrated hull"}
MARKERS = "osD^vPX*<>h"


def plot_coverage(table: pd.DataFrame, meta: dict, out_dir: Path, stem: str) -> list[Path]:
    from ..task_kinds.uncertainty import coverage_table

    heading = _title(meta) if meta.get("config") else stem  # the run's name (with "(quick)"), else the file stem
    t = table[table["metric"] == "coverage"]
    panels = sorted({(o, float(e), float(lv)) for o, e, lv in zip(t["oracle"], t["epsilon"], t["level"])})
    methods = list(dict.fromkeys(t["method"]))
    ncols = len({p[2] for p in panels})  # one column per level, the same levels on every page
    pages = [pg for o in dict.fromkeys(p[0] for p in panels)
             for pg in S.paged([p for p in panels if p[0] == o], S.ROWS_PER_PAGE * ncols)]
    plt = S.pyplot()
    paths = []
    for page, keys in enumerate(pages):
        cols = min(ncols, len(keys))
        nrows = int(np.ceil(len(keys) / cols))
        fig, axes = S.new_figure(nrows, cols, panel=(max(5.0, 0.6 * len(methods) + 1.5), 3.4))
        with S.style():
            for ax, (oracle, eps, level) in zip(axes.ravel(), keys):
                sel = t[(t["oracle"] == oracle) & (t["epsilon"] == eps) & (t["level"] == level)]
                cov = coverage_table(sel, by=("method",)).reindex(methods)
                x = np.arange(len(methods))
                ax.axhspan(level - 0.03, level, color="0.9", zorder=0, label="target: ≥ nominal − 3 points")
                ax.axhline(level, ls="--", color="0.3", lw=1, label="nominal level")
                for i, band in enumerate(BANDS):
                    col = (level, band)
                    if col in cov.columns:
                        dx = (i - (len(BANDS) - 1) / 2) * 0.08
                        ax.plot(x + dx, cov[col].to_numpy(float), ls="none", marker=MARKERS[i],
                                ms=5, label=BANDS[band])
                ax.set_xticks(x, [LABELS.get(m, m) for m in methods], rotation=45, ha="right")
                ax.set_ylim(-0.02, 1.02)
                ax.set_ylabel("empirical coverage")
                ax.set_xlabel("method")
                S.title(ax, S.panel_title(oracle=oracle, epsilon=eps) + f" · nominal {level:.0%}",
                        fig.get_size_inches()[0] / axes.shape[1])
            for ax in axes.ravel()[len(keys):]:
                ax.set_visible(False)
        S.shared_legend(fig, axes)
        S.suptitle(fig, f"{heading}: coverage of ldpopt's confidence intervals{S.page_suffix(page, len(pages))}")
        paths.append(S.save(fig, S.page_path(out_dir, f"{stem}_coverage", page, len(pages))))
    plt.close("all")
    return paths
