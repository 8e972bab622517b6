"""The cell table itself: estimate, SE, CI, and the post-processing correction in units of σ.

Notes: docs/hierarchies.md, "Every cell with its error bar" and "Corrections in units of σ"."""

from __future__ import annotations

import numpy as np
from scipy.stats import norm as _normal

__all__ = ["COLUMNS", "FLAG_FLOOR", "FLAG_SIGMAS", "cell_frame", "correction_sigma", "flag_corrections"]


#: the columns of every cell table, in order
COLUMNS = ("estimate", "se", "ci_low", "ci_high", "correction_sigma", "flagged")
#: a correction is flagged when |released − raw| > max(FLAG_SIGMAS · σ, FLAG_FLOOR) (the cell's units)
FLAG_SIGMAS = 7.0
FLAG_FLOOR = 1.0


def correction_sigma(estimate, raw, sigma) -> np.ndarray:
    """(released − raw) / σ per cell: how far post-processing moved each cell, in units of its noise σ.

    An unmeasured cell (σ = inf) gets NaN; an exactly measured one (σ = 0) 0 when unmoved, ±inf
    when moved.

    Parameters
    ----------
    estimate, raw, sigma : array_like, one shape
        The released values, the noisy measurements they were computed from, and each measurement's
        noise standard deviation (≥ 0).

    Returns
    -------
    ndarray

    Raises
    ------
    ValueError
        Shapes that differ, or a negative or NaN σ.

    Examples
    --------
    >>> from ldpopt.uncertainty.cells import correction_sigma
    >>> correction_sigma([10.0, 3.0], [12.0, 3.0], [1.0, 2.0]).tolist()
    [-2.0, 0.0]
    """
    x, y, s = _same(estimate, raw, sigma)
    diff = x - y
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.where(s > 0, diff / np.where(s > 0, s, 1.0), np.where(diff == 0, 0.0, np.sign(diff) * np.inf))
    return np.where(np.isinf(s), np.nan, out)


def flag_corrections(estimate, raw, sigma, sigmas: float = FLAG_SIGMAS,
                     floor: float | np.ndarray = FLAG_FLOOR) -> np.ndarray:
    """The cells whose post-processing correction is implausible under the stated noise:
    |released − raw| > max(``sigmas`` · σ, ``floor``).

    The rule of measurement practice (a correction beyond 7σ of the cell's noise, and beyond one
    unit so that integer rounding alone never flags; as in the WFA cross-media measurement
    system's post-processing diagnostics): a Gaussian noise exceeds 7σ with probability 2.6e-12, so a
    flagged cell is one the constraints pulled far from what was measured — the noise model, the
    measurement or the constraints are wrong there. Unmeasured cells (σ = inf) are never flagged.

    Parameters
    ----------
    estimate, raw, sigma : array_like, one shape
        As in :func:`correction_sigma`.
    sigmas : float, default 7
        The multiple of σ (> 0).
    floor : float or array_like, default 1
        The smallest flagged correction, in the cells' units (one count; pass 1/n for frequencies),
        one for all cells or one per cell.

    Returns
    -------
    ndarray of bool

    Raises
    ------
    ValueError
        As :func:`correction_sigma`; ``sigmas`` ≤ 0 or ``floor`` < 0.

    Examples
    --------
    >>> from ldpopt.uncertainty.cells import flag_corrections
    >>> flag_corrections([10.0, 30.0, 5.5], [12.0, 12.0, 5.0], [1.0, 2.0, 0.01]).tolist()
    [False, True, False]
    """
    if not float(sigmas) > 0:
        raise ValueError(f"sigmas must be > 0, got {sigmas!r}")
    fl = np.asarray(floor, dtype=np.float64)
    if fl.ndim > 1 or not np.all(fl >= 0):
        raise ValueError(f"floor must be >= 0 (one number, or one per cell), got {floor!r}")
    x, y, s = _same(estimate, raw, sigma)
    if fl.ndim == 1 and fl.shape != x.shape:
        raise ValueError(f"floor must be one number or one per cell ({x.size}), got shape {fl.shape}")
    return np.isfinite(s) & (np.abs(x - y) > np.maximum(float(sigmas) * s, fl))


def _same(*arrays):
    out = [np.asarray(a, dtype=np.float64) for a in arrays]
    if len({a.shape for a in out}) != 1:
        raise ValueError(f"estimate, raw and sigma must have one shape, got {[a.shape for a in out]}")
    if np.any(np.isnan(out[2])) or np.any(out[2] < 0):
        raise ValueError("sigma must be >= 0 everywhere, without NaN")
    return out


def cell_frame(estimate, se, raw, sigma, *, level: float = 0.95, ci_low=None, ci_high=None, labels=None,
               sigmas: float = FLAG_SIGMAS, floor: float | np.ndarray = FLAG_FLOOR):
    """One row per released cell: estimate, se, ci_low, ci_high, correction_sigma, flagged.

    Parameters
    ----------
    estimate, se, raw, sigma : array_like, shape (m,)
        The released values, their standard errors, the raw measurements and their noise σ.
    level : float, default 0.95
        The interval's nominal coverage (used when ``ci_low``/``ci_high`` are not given: the normal
        interval estimate ± z·se, exact for a linear estimator of Gaussian noise).
    ci_low, ci_high : array_like or None
        Intervals computed elsewhere (a bootstrap's), kept as given.
    labels : sequence or None
        The index (cell names); None: 0..m−1.
    sigmas : float
        The flag rule of :func:`flag_corrections`.
    floor : float or array_like
        The flag rule of :func:`flag_corrections`.

    Returns
    -------
    pandas.DataFrame
        Columns :data:`COLUMNS`.

    Raises
    ------
    ValueError
        Arrays of different shapes, a negative or NaN se or σ, ``level`` outside (0, 1), or only one
        of ``ci_low``/``ci_high``.

    Examples
    --------
    >>> from ldpopt.uncertainty.cells import cell_frame
    >>> cell_frame([10.0, 30.0], [1.0, 1.5], [12.0, 12.0], [1.0, 2.0], labels=["a", "b"]).round(2)
       estimate   se  ci_low  ci_high  correction_sigma  flagged
    a      10.0  1.0    8.04    11.96              -2.0    False
    b      30.0  1.5   27.06    32.94               9.0     True
    """
    import pandas as pd

    lv = float(level)
    if not 0.0 < lv < 1.0:
        raise ValueError(f"level must lie strictly between 0 and 1, got {level!r}")
    x, y, s = _same(estimate, raw, sigma)
    e = np.asarray(se, dtype=np.float64)
    if e.shape != x.shape or np.any(np.isnan(e)) or np.any(e < 0):
        raise ValueError(f"se must be >= 0, without NaN, of the estimate's shape {x.shape}, got shape {e.shape}")
    if (ci_low is None) != (ci_high is None):
        raise ValueError("ci_low and ci_high must be given together")
    if ci_low is None:
        z = _normal.ppf(0.5 + lv / 2)
        lo, hi = x - z * e, x + z * e
    else:
        lo, hi = np.asarray(ci_low, dtype=np.float64), np.asarray(ci_high, dtype=np.float64)
    idx = (labels if isinstance(labels, pd.Index) else list(labels)) if labels is not None else np.arange(x.size)
    return pd.DataFrame({"estimate": x, "se": e, "ci_low": lo, "ci_high": hi,
                         "correction_sigma": correction_sigma(x, y, s),
                         "flagged": flag_corrections(x, y, s, sigmas, floor)}, index=idx)
