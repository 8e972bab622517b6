"""Calibrated level of the top-k hull: one level of prepivoting in the bootstrap world.

Notes: docs/notes/uncertainty.md, "ldpopt.uncertainty.calibrate"."""

from __future__ import annotations

import numpy as np
from scipy.stats import norm as _normal

__all__ = ["calibrated_level", "calibrated_topk", "hull_world_coverage"]


def hull_world_coverage(dev: np.ndarray, Sb: np.ndarray, levels, *, se=None, dev_fixed=None) -> np.ndarray:
    """World coverage (len(levels),) of the hull at each trial level (module notes).

    ``dev`` (B, k): the rank pivots D; ``Sb`` (B, k): each resample's selected values; the fixed
    part is either the analytic normal interval with per-value ``se`` (d,) or the basic interval
    whose per-value pivots are ``dev_fixed`` (B, d) = T* − f̂ (exactly one of the two)."""
    if (se is None) == (dev_fixed is None):
        raise ValueError("give exactly one of se (analytic fixed part) and dev_fixed (bootstrap fixed part)")
    dev = np.asarray(dev, dtype=np.float64)
    Sb = np.asarray(Sb)
    lv = np.atleast_1d(np.asarray(levels, dtype=np.float64))
    if np.any((lv <= 0) | (lv >= 1)):
        raise ValueError(f"levels must lie strictly between 0 and 1, got {levels!r}")
    a = 1.0 - lv
    L = lv.shape[0]
    rq = np.quantile(dev, np.concatenate([a / 2, 1 - a / 2]), axis=0)  # (2L, k)
    d3 = dev[None]
    cover = (d3 >= rq[:L, None, :]) & (d3 <= rq[L:, None, :])
    if se is not None:
        z = _normal.ppf(1 - a / 2)
        cover |= np.abs(d3) <= z[:, None, None] * np.asarray(se, dtype=np.float64)[Sb][None]
    else:
        used, pos = np.unique(Sb, return_inverse=True)
        pos = pos.reshape(Sb.shape)
        fq = np.quantile(np.asarray(dev_fixed, dtype=np.float64)[:, used], np.concatenate([a / 2, 1 - a / 2]),
                         axis=0)  # (2L, |used|)
        cover |= (d3 >= fq[:L][:, pos]) & (d3 <= fq[L:][:, pos])
    return cover.mean(axis=(1, 2))


def calibrated_level(dev, Sb, level: float, *, se=None, dev_fixed=None, grid: int = 41) -> tuple[float, float]:
    """(calibrated level, the world's hull coverage at it) for nominal ``level`` (module notes)."""
    level = float(level)
    if not 0.5 < level < 1:
        raise ValueError(f"level must lie in (0.5, 1) for the calibrated hull, got {level!r}")
    if isinstance(grid, bool) or int(grid) != grid or int(grid) < 2:
        raise ValueError(f"grid must be an integer >= 2, got {grid!r}")
    trial = np.linspace(2 * level - 1, level, int(grid))
    cov = hull_world_coverage(dev, Sb, trial, se=se, dev_fixed=dev_fixed)
    ok = np.flatnonzero(cov >= level - 1e-12)
    i = int(ok[0]) if ok.size else trial.shape[0] - 1
    return float(trial[i]), float(cov[i])


def calibrated_topk(world, boot, Sb, level: float, *, se=None) -> tuple[float, float]:
    """:func:`calibrated_level` of the top-k hull from the bootstrap world's truth ``world`` (d,), the
    method on the re-drawn estimates ``boot`` (B, d; Norm-Mul's on its rescaled output) and their
    top-k sets ``Sb`` (B, k): the selected deviations boot − world at Sb, the fixed-set part from the
    analytic ``se`` where given, else from every deviation boot − world."""
    dev = np.take_along_axis(boot, Sb, axis=1) - world[Sb]
    fixed = {"se": se} if se is not None else {"dev_fixed": boot - world}
    return calibrated_level(dev, Sb, level, **fixed)
