"""How the claims (:mod:`ldpopt.experiments.claims`) print numbers: 3 significant digits, ranges
per (dataset, oracle), repetition counts."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..figures.wang import LABELS

__all__ = ["by_groups", "fmt", "lab", "num", "reps_text", "rng"]


def fmt(x) -> str:
    """3 significant digits; thousands separators for large numbers; 'n/a' for NaN."""
    if isinstance(x, str):
        return x
    x = float(x)
    if not math.isfinite(x):
        return "n/a"
    if x == 0:
        return "0"
    e = math.floor(math.log10(abs(x)))
    if 3 <= e < 9:
        return f"{round(x, 2 - e):,.0f}"
    if e < -3 or e >= 9:
        return f"{x:.2e}".replace("e-0", "e-").replace("e+0", "e")
    return f"{x:.{max(0, 2 - e)}f}"


def lab(x) -> str:
    """A method's paper name, or a number at 3 digits."""
    return LABELS.get(x, x) if isinstance(x, str) else fmt(x)


def num(v):
    return v if isinstance(v, (str, list)) else float(v)


def rng(values) -> str:
    """'lo–hi' of the finite values (one number when they print alike)."""
    v = np.asarray([x for x in np.ravel(np.asarray(values, dtype=object)) if not isinstance(x, str)], dtype=float)
    v = v[np.isfinite(v)]
    if v.size == 0:
        return "n/a"
    lo, hi = fmt(v.min()), fmt(v.max())
    return lo if lo == hi else f"{lo}–{hi}"


def by_groups(s: pd.Series, levels=("dataset", "oracle")) -> str:
    """'zipf OLH 0.5–0.6; zipf OUE …': the range of ``s`` per group of ``levels`` (methods by name)."""
    levels = [lv for lv in levels if lv in s.index.names]
    if not levels:
        return rng(s) if s.dtype != object else ", ".join(map(lab, s))
    parts = []
    for key, sub in s.groupby(level=levels, observed=True, sort=False):
        key = key if isinstance(key, tuple) else (key,)
        name = " ".join(str(k).upper() if lv == "oracle" else str(k) for lv, k in zip(levels, key))
        parts.append(f"{name} {', '.join(map(lab, sub)) if sub.dtype == object else rng(sub)}")
    return "; ".join(parts)


def reps_text(reps: dict) -> str:
    """'`config` (30 reps; Power 10)': the repetitions per config, the odd methods named."""
    parts = []
    for cfg, r in reps.items():
        vals = {m: (v if isinstance(v, int) else v[0] if v[0] == v[1] else f"{v[0]}–{v[1]}") for m, v in r.items()}
        common = max(set(vals.values()), key=list(vals.values()).count) if vals else ""
        odd = [f"{lab(m)} {v}" for m, v in vals.items() if v != common]
        unit = "runs" if "bias_variance" in cfg else "reps"
        parts.append(f"`{cfg}` ({common} {unit}" + (f"; {', '.join(odd)}" if odd else "") + ")")
    return ", ".join(parts)
