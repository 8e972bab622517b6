"""Figure of the ``longitudinal`` kind (``ext_longitudinal``): one row per dataset and oracle; columns:
the MSE overall, in the high band (f_v ≥ 1/d) and in the low band (f_v < 1/d), each the mean over
rounds, ×10⁴; mean ± 95 % CI over repetitions against ε∞, log axes. Per-round methods in their usual
colours, solid; the across-rounds Problem dashed and hollow."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from . import style as S
from .wang import style_of, summarise

__all__ = ["plot_longitudinal"]

_PANELS = (("mse", "MSE, whole domain"), ("mse_high", "high band (f ≥ 1/d)"), ("mse_low", "low band (f < 1/d)"))
_ACROSS = {"rounds:shared": ("magenta", "Problem across rounds, shared memo"),
           "rounds:independent": ("darkgoldenrod", "Problem across rounds, independent rounds"),
           "rounds:shared+smooth": ("tab:green", "Problem across rounds, shared memo + change penalty")}


def _style(method: str) -> dict:
    if method in _ACROSS:
        colour, label = _ACROSS[method]
        return {"color": colour, "ls": "--", "marker": "s", "mfc": "none", "ms": 7, "label": label}
    colour, marker = style_of(method)
    return {"color": colour, "ls": "-", "marker": marker, "ms": 4, "label": f"{method} (each round alone)"}


def plot_longitudinal(table: pd.DataFrame, meta: dict, out_dir: Path, stem: str) -> list[Path]:
    t = table.assign(value=table.value * 1e4)
    keys = list(dict.fromkeys(zip(t.dataset, t.oracle)))
    fig, axes = S.new_figure(len(keys), len(_PANELS))
    with S.style():
        for row, (ds, oracle) in zip(axes, keys):
            part = t[(t.dataset == ds) & (t.oracle == oracle)]
            for ax, (metric, what) in zip(row, _PANELS):
                s = summarise(part, "epsilon", ("dataset", "oracle"), metric)
                for m in s.method.unique():
                    S.errorbar_mean(ax, s[s.method == m], lw=1.2, **_style(m))
                ax.set_xscale("log")
                ax.set_yscale("log")
                S.data_ticks(ax, s.epsilon)
                ax.grid(True, which="both", alpha=0.3)
                ax.set_xlabel("ε∞")
                ax.set_ylabel("MSE ×10⁴ (mean over rounds)")
                S.title(ax, f"{ds} · {S.oracle_label(oracle)} · {what}", S.PANEL[0])
    S.shared_legend(fig, axes)
    S.suptitle(fig, f"{stem}: data collected over time, each round alone vs one Problem across rounds")
    path = S.save(fig, out_dir / f"{stem}.png")
    S.pyplot().close("all")
    return [path]
