"""Every released cell with its uncertainty: the flat histogram's table, and any post-processing's by
the parametric bootstrap through the noise source's sampler (the table itself: :mod:`.celltable`).

Notes: docs/hierarchies.md, "Every cell with its error bar" and "Corrections in units of σ"."""

from __future__ import annotations

import numpy as np

from .._validation import as_generator
from .bootstrap import check_level, check_resamples, interval_from
from .celltable import COLUMNS, FLAG_FLOOR, FLAG_SIGMAS, _same, cell_frame, correction_sigma, flag_corrections

__all__ = ["COLUMNS", "FLAG_FLOOR", "FLAG_SIGMAS", "bootstrap_cells", "cell_frame", "correction_sigma",
           "flag_corrections", "histogram_cells", "with_cells"]


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
    lv = check_level(level)
    B = check_resamples(n_resamples)
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
    return with_cells(res, estimate).cells(sigmas=sigmas, labels=labels)


def with_cells(result, estimate):
    """``result`` (a full-domain :class:`~.result.Uncertainty` of ``estimate``) with what its cell
    table needs besides its own numbers: the raw f̃ the method started from, each value's noise :math:`σ_v`
    (the plug-in of Eq. 2; the mechanism's σ/n for central noise) and the flag floor of one count
    (1/n), in ``extra`` (``raw``, ``sigma``, ``floor``), so that :meth:`~.result.Uncertainty.cells`
    answers. :func:`ldpopt.uncertainty.intervals` calls it on every full-domain result.

    Parameters
    ----------
    result : Uncertainty
        One value per domain value (d of them).
    estimate : Estimate
        The estimate it describes.

    Returns
    -------
    Uncertainty
        A new result; ``result`` is left as it was.

    Raises
    ------
    ValueError
        A result that is not one value per domain value.

    Examples
    --------
    >>> import numpy as np
    >>> import ldpopt
    >>> from ldpopt.uncertainty import analytic
    >>> from ldpopt.uncertainty.cells import with_cells
    >>> est = ldpopt.oracles.get("grr", 2.0, 3).simulate(np.array([600, 300, 100]), rng=0)
    >>> with_cells(analytic(est, "base"), est).cells().columns.tolist()
    ['estimate', 'se', 'ci_low', 'ci_high', 'correction_sigma', 'flagged']
    """
    import dataclasses

    if np.shape(result.values) != (estimate.d,):
        raise ValueError(f"result must hold one value per domain value ({estimate.d}), got shape "
                         f"{np.shape(result.values)}")
    sig = np.sqrt(np.broadcast_to(estimate.sigma2_v, (estimate.d,)))
    return dataclasses.replace(result, extra={**result.extra, "raw": np.asarray(estimate.f_tilde, dtype=np.float64),
                                              "sigma": sig, "floor": 1.0 / estimate.n})
