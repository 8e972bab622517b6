"""Error metrics for distributions on d equal bins of [0, 1] (Li et al. SIGMOD 2020 §6.1).

Notes: docs/notes/python.md, "ldpopt.numeric.metrics"."""

from __future__ import annotations

import numpy as np

from .._validation import as_generator

__all__ = ["quantile", "quantile_error", "range_query_error", "wasserstein1"]

DECILES = np.arange(1, 10) / 10.0


def _pair(est, truth):
    a = np.asarray(est, dtype=np.float64)
    b = np.asarray(truth, dtype=np.float64)
    if a.ndim != 1 or a.shape != b.shape or a.size < 2:
        raise ValueError(f"est and truth must be 1-D of the same length >= 2, got {a.shape} and {b.shape}")
    if not (np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
        raise ValueError("est and truth must be finite")
    return a, b


def wasserstein1(est, truth) -> float:
    """Exact W1 between two distributions on d equal bins of [0, 1] (mass uniform within a bin).

    Li et al. SIGMOD 2020 §6.1's metric; :math:`∫|F - G|` computed exactly, bin by bin (module notes).

    Parameters
    ----------
    est, truth : array_like, shape (d,)
        Distributions on d >= 2 equal bins of [0, 1], finite.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        Shapes that differ, fewer than 2 bins, or non-finite entries.

    Examples
    --------
    >>> from ldpopt.numeric import wasserstein1
    >>> wasserstein1([1.0, 0.0], [0.0, 1.0])  # all mass moved by half the interval
    0.5
    """
    a, b = _pair(est, truth)
    d = a.size
    diff = np.concatenate([[0.0], np.cumsum(a - b)])  # F − G at the bin edges
    lo, hi = diff[:-1], diff[1:]
    same = lo * hi >= 0
    area = np.where(same, 0.5 * (np.abs(lo) + np.abs(hi)),
                    0.5 * (lo * lo + hi * hi) / np.maximum(np.abs(lo) + np.abs(hi), 1e-300))
    return float(area.sum() / d)


def range_query_error(est, truth, alpha: float, *, n_queries: int = 200, rng) -> float:
    """Mean absolute error of random range queries of width ``alpha`` (fraction of [0, 1]).

    Li et al. SIGMOD 2020 §6.1; a range is round(α·d) whole bins with a uniform start (a choice).

    Parameters
    ----------
    est, truth : array_like, shape (d,)
        Distributions on d >= 2 equal bins of [0, 1], finite.
    alpha : float
        Range width as a fraction of [0, 1], in (0, 1].
    n_queries : int, default 200
        Number of random ranges (keyword-only).
    rng : int or numpy.random.Generator
        Randomness of the starts.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        Bad ``est``/``truth`` or ``alpha`` outside (0, 1].

    Examples
    --------
    >>> from ldpopt.numeric import range_query_error
    >>> range_query_error([0.5, 0.5, 0.0, 0.0], [0.25, 0.25, 0.25, 0.25], 0.5, rng=0) > 0
    True
    >>> range_query_error([0.1, 0.9], [0.1, 0.9], 0.5, rng=0)
    0.0
    """
    a, b = _pair(est, truth)
    if not (0 < alpha <= 1):
        raise ValueError(f"alpha must be in (0, 1], got {alpha!r}")
    d = a.size
    w = max(1, round(alpha * d))
    gen = as_generator(rng)
    start = gen.integers(0, d - w + 1, size=int(n_queries))
    ca = np.concatenate([[0.0], np.cumsum(a)])
    cb = np.concatenate([[0.0], np.cumsum(b)])
    return float(np.mean(np.abs((ca[start + w] - ca[start]) - (cb[start + w] - cb[start]))))


def quantile(f, betas=DECILES) -> np.ndarray:
    """Quantiles of the piecewise-uniform density with bin masses ``f`` on [0, 1]."""
    f = np.asarray(f, dtype=np.float64)
    d = f.size
    cdf = np.concatenate([[0.0], np.cumsum(f)])
    cdf /= cdf[-1]
    betas = np.asarray(betas, dtype=np.float64)
    i = np.clip(np.searchsorted(cdf, betas, side="left") - 1, 0, d - 1)  # bin where the CDF reaches β
    mass = cdf[i + 1] - cdf[i]
    frac = np.where(mass > 0, (betas - cdf[i]) / np.where(mass > 0, mass, 1.0), 0.0)
    return (i + np.clip(frac, 0.0, 1.0)) / d


def quantile_error(est, truth, betas=DECILES) -> float:
    """Mean |Q̂(β) − Q(β)| over ``betas`` (default the deciles).

    Li et al. SIGMOD 2020 §6.1; Q the exact quantile of the piecewise-uniform density.

    Parameters
    ----------
    est, truth : array_like, shape (d,)
        Distributions on d >= 2 equal bins of [0, 1], finite.
    betas : array_like, default the deciles 0.1 … 0.9
        The quantile levels.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        Bad ``est``/``truth``, or one without positive mass.

    Examples
    --------
    >>> from ldpopt.numeric import quantile_error
    >>> round(quantile_error([1.0, 0.0], [0.0, 1.0]), 6)  # every quantile moves by 1/2
    0.5
    """
    a, b = _pair(est, truth)
    if a.sum() <= 0 or b.sum() <= 0:
        raise ValueError("est and truth must have positive mass")
    return float(np.mean(np.abs(quantile(a, betas) - quantile(b, betas))))
