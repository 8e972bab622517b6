"""Every released cell with its uncertainty: estimate, SE, CI, and the post-processing correction in σ.

Notes: docs/hierarchies.md, "Every cell with its error bar" and "Corrections in units of σ"."""

from __future__ import annotations

import numpy as np
from scipy.stats import norm as _normal

from .._validation import as_generator
from .bootstrap import _check_level, _check_resamples, interval_from

__all__ = ["COLUMNS", "FLAG_FLOOR", "FLAG_SIGMAS", "bootstrap_cells", "cell_frame", "correction_sigma",
           "flag_corrections", "histogram_cells"]

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


def flag_corrections(estimate, raw, sigma, sigmas: float = FLAG_SIGMAS, floor: float = FLAG_FLOOR) -> np.ndarray:
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
    floor : float, default 1
        The smallest flagged correction, in the cells' units (one count; pass 1/n for frequencies).

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
    if not float(floor) >= 0:
        raise ValueError(f"floor must be >= 0, got {floor!r}")
    x, y, s = _same(estimate, raw, sigma)
    return np.isfinite(s) & (np.abs(x - y) > np.maximum(float(sigmas) * s, float(floor)))


def _same(*arrays):
    out = [np.asarray(a, dtype=np.float64) for a in arrays]
    if len({a.shape for a in out}) != 1:
        raise ValueError(f"estimate, raw and sigma must have one shape, got {[a.shape for a in out]}")
    if np.any(np.isnan(out[2])) or np.any(out[2] < 0):
        raise ValueError("sigma must be >= 0 everywhere, without NaN")
    return out


def cell_frame(estimate, se, raw, sigma, *, level: float = 0.95, ci_low=None, ci_high=None, labels=None,
               sigmas: float = FLAG_SIGMAS, floor: float = FLAG_FLOOR):
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
    sigmas, floor : float
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

    lv = _check_level(level)
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
    idx = list(labels) if labels is not None else np.arange(x.size)
    return pd.DataFrame({"estimate": x, "se": e, "ci_low": lo, "ci_high": hi,
                         "correction_sigma": correction_sigma(x, y, s),
                         "flagged": flag_corrections(x, y, s, sigmas, floor)}, index=idx)


def bootstrap_cells(post, raw, sigma, *, sampler=None, level: float = 0.95, n_resamples: int = 200,
                    interval: str = "basic", rng=0, labels=None, sigmas: float = FLAG_SIGMAS,
                    floor: float = FLAG_FLOOR, bounds=None, hull=None):
    """The cell table of a non-linear post-processing by the parametric bootstrap through the noise
    source's sampler: the world is the released point T = post(raw); B measurements T + noise are
    drawn, post-processed, and the intervals built from the re-drawn releases (:func:`.bootstrap.interval_from`,
    the construction :func:`ldpopt.uncertainty.intervals` uses).

    Parameters
    ----------
    post : callable
        ``post(Y)`` for Y of shape (m, B) → the released values, shape (m, B) (vectorised over the
        columns; each column one measurement vector).
    raw : array_like, shape (m,)
        The measurements.
    sigma : array_like, shape (m,)
        Their noise σ (inf: not measured; such a cell's raw value is never used).
    sampler : callable or None
        ``sampler(B, rng)`` → noise of shape (m, B) from the noise source (a central mechanism's
        sampler, an oracle's re-draw); None: Gaussian with standard deviation ``sigma``.
    level : float, default 0.95
    n_resamples : int, default 200
        B (≥ 10).
    interval : "basic", "percentile" or "normal"
        As in :func:`ldpopt.uncertainty.intervals`.
    rng : int, Generator or "secure"
    labels, sigmas, floor
        As in :func:`cell_frame`.
    bounds : (float, float) or None
        Clip the intervals to these (e.g. (0, inf) for counts); None: not clipped.
    hull : (array_like, array_like) or None
        Intervals (low, high) to join with the bootstrap's, cell by cell (the hull, as
        :func:`ldpopt.uncertainty.intervals` joins Base's interval where a method clips): e.g. the
        exact interval of the linear fit a clipped release starts from. None: the bootstrap's alone.

    Returns
    -------
    pandas.DataFrame
        Columns :data:`COLUMNS`.

    Raises
    ------
    ValueError
        ``level`` outside (0, 1), B < 10, an unknown ``interval``, or what :func:`cell_frame` refuses.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt.uncertainty.cells import bootstrap_cells
    >>> clip = lambda Y: np.maximum(Y, 0.0)
    >>> t = bootstrap_cells(clip, [5.0, -1.0, 40.0], [2.0, 2.0, 2.0], n_resamples=400, rng=1)
    >>> t["estimate"].tolist(), bool(t["se"][0] > t["se"][1])
    ([5.0, 0.0, 40.0], True)
    """
    lv = _check_level(level)
    B = _check_resamples(n_resamples)
    gen = as_generator(rng)
    y = np.asarray(raw, dtype=np.float64)
    s = np.asarray(sigma, dtype=np.float64)
    _same(y, y, s)
    yy = np.where(np.isinf(s), 0.0, y)
    point = np.asarray(post(yy[:, None]), dtype=np.float64)[:, 0]
    noise = (np.where(np.isinf(s), 0.0, s)[:, None] * gen.standard_normal((y.size, B)) if sampler is None
             else np.asarray(sampler(B, gen), dtype=np.float64))
    if noise.shape != (y.size, B):
        raise ValueError(f"sampler must return noise of shape ({y.size}, {B}), got {noise.shape}")
    boot = np.asarray(post(point[:, None] + noise), dtype=np.float64).T
    se, _bias, lo, hi = interval_from(point, point, boot, lv, interval, bounds=bounds)
    if hull is not None:
        hl, hh = (np.asarray(h, dtype=np.float64) for h in hull)
        if hl.shape != lo.shape or hh.shape != hi.shape:
            raise ValueError(f"hull must be two arrays of shape {lo.shape}, got {hl.shape} and {hh.shape}")
        lo, hi = np.minimum(lo, hl), np.maximum(hi, hh)
    return cell_frame(point, se, yy, s, level=lv, ci_low=lo, ci_high=hi, labels=labels, sigmas=sigmas, floor=floor)


def histogram_cells(estimate, method: str = "norm-sub", level: float = 0.95, *, n_resamples: int = 200,
                    rng=0, sigmas: float = FLAG_SIGMAS, labels=None):
    """The cell table of a flat post-processed histogram (frequencies): the method's SE and CI from
    :func:`ldpopt.uncertainty.intervals` (analytic for Base and Norm, the parametric bootstrap
    through the oracle's or the central mechanism's sampler otherwise) and its corrections against
    the raw f̃ in units of each value's :math:`σ_v` (the plug-in of Eq. 2; the mechanism's σ/n for central
    noise), the flag floor one count (1/n).

    Parameters
    ----------
    estimate : Estimate
    method : str, MethodInfo or callable
        As in :func:`ldpopt.uncertainty.intervals`.
    level : float, default 0.95
    n_resamples : int, default 200
    rng : int, Generator or "secure"
    sigmas : float, default 7
        The flag rule's multiple of σ.
    labels : sequence or None
        Cell names; None: 0..d−1.

    Returns
    -------
    pandas.DataFrame
        Columns :data:`COLUMNS`.

    Raises
    ------
    ValueError
        What :func:`ldpopt.uncertainty.intervals` refuses.

    Examples
    --------
    >>> import numpy as np
    >>> import ldpopt
    >>> from ldpopt.uncertainty.cells import histogram_cells
    >>> est = ldpopt.oracles.get("oue", 1.0, 4).simulate(np.array([500, 300, 150, 50]) * 20, rng=0)
    >>> histogram_cells(est, "norm-sub", n_resamples=50).columns.tolist()
    ['estimate', 'se', 'ci_low', 'ci_high', 'correction_sigma', 'flagged']
    """
    from .. import methods as _methods
    from .analytic import analytic, supports_analytic
    from .bootstrap import bootstrap

    info = _methods.resolve(method)
    # the full-domain branch of ldpopt.uncertainty.intervals (analytic where it applies)
    if info.analytic and supports_analytic(estimate, info.name, None):
        res = analytic(estimate, info.name, level)
    else:
        res = bootstrap(estimate, info, level, n_resamples=n_resamples, rng=as_generator(rng))
    sig = np.sqrt(np.broadcast_to(estimate.sigma2_v, res.values.shape))
    return cell_frame(res.values, res.se, estimate.f_tilde, sig, level=level, ci_low=res.lo, ci_high=res.hi,
                      labels=labels if labels is not None else res.labels, sigmas=sigmas, floor=1.0 / estimate.n)
