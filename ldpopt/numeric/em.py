"""EM and EMS (EM with smoothing) for a distribution behind a known channel (Li et al. SIGMOD 2020 §5).

Notes: docs/notes/python.md, "ldpopt.numeric.em"."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._validation import check_counts

__all__ = ["EMResult", "em", "ems", "smooth"]


@dataclass
class EMResult:
    """``f`` (distribution on the d value bins), ``nit``, ``converged`` (stopped by the tolerance, not
    the cap), ``loglik`` (L after each iteration, length nit).

    Returned by :func:`em` and :func:`ems`.

    Parameters
    ----------
    f : ndarray, shape (d,)
        The distribution on the value bins.
    nit : int
        Iterations run.
    converged : bool
        Whether the tolerance stopped it.
    loglik : ndarray, shape (nit,)
        The log-likelihood after each iteration.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt import numeric
    >>> sw = numeric.SquareWave(1.0)
    >>> values = np.random.default_rng(0).beta(5, 2, size=5000)
    >>> counts = sw.bin_reports(sw.perturb(values, rng=1), 16)
    >>> K = sw.channel(8, 16)
    >>> res = numeric.em(counts, K)
    >>> res.converged, res.loglik.shape == (res.nit,)
    (True, True)
    """

    f: np.ndarray
    nit: int
    converged: bool
    loglik: np.ndarray


def smooth(f: np.ndarray) -> np.ndarray:
    """The binomial [1, 2, 1]/4 filter with in-range renormalisation at the edges, then Σ = 1."""
    g = np.empty_like(f)
    g[1:-1] = (f[:-2] + 2.0 * f[1:-1] + f[2:]) / 4.0
    g[0] = (2.0 * f[0] + f[1]) / 3.0
    g[-1] = (2.0 * f[-1] + f[-2]) / 3.0
    return g / g.sum()


def _check(counts, channel):
    K = np.asarray(channel, dtype=np.float64)
    if K.ndim != 2 or K.shape[1] < 2 or not np.all(np.isfinite(K)) or K.min() < 0:
        raise ValueError(f"channel must be a finite non-negative (d_out, d) matrix with d >= 2, got shape {K.shape}")
    if not np.allclose(K.sum(axis=0), 1.0, atol=1e-9):
        raise ValueError("channel columns must sum to 1 (K[j, i] = P(report bin j | value bin i))")
    c = check_counts(counts, "counts", d=K.shape[0], integral=False)
    if c.sum() <= 0:
        raise ValueError("counts must have a positive total")
    return c, K


def _run(counts, channel, smoothing: bool, tol: float, max_iter: int) -> EMResult:
    c, K = _check(counts, channel)
    if not (np.isfinite(tol) and tol > 0):
        raise ValueError(f"tol must be finite and > 0, got {tol!r}")
    if int(max_iter) < 1:
        raise ValueError(f"max_iter must be >= 1, got {max_iter!r}")
    n = c.sum()
    pos = c > 0
    Kp, cp_ = K[pos], c[pos]
    f = np.full(K.shape[1], 1.0 / K.shape[1])
    hist = []
    old = -np.inf
    converged = False
    for _ in range(int(max_iter)):
        f = f * (Kp.T @ (cp_ / (Kp @ f))) / n
        if smoothing:
            f = smooth(f)
        ll = float(cp_ @ np.log(Kp @ f))
        hist.append(ll)
        if abs(ll - old) < tol:
            converged = True
            break
        old = ll
    return EMResult(f=f, nit=len(hist), converged=converged, loglik=np.asarray(hist))


def em(counts, channel, *, tol: float = 1e-3, max_iter: int = 10_000) -> EMResult:
    """Maximum-likelihood distribution by EM (Li et al. SIGMOD 2020 §5.1); see the module notes.

    Starts uniform; every step keeps f on the simplex and never decreases the log-likelihood.

    Parameters
    ----------
    counts : array_like, shape (``d_out``,)
        Binned report counts (:meth:`SquareWave.bin_reports`), non-negative, positive total.
    channel : array_like, shape (``d_out``, d)
        K[j, i] = P(report bin j | value bin i), columns summing to 1 (:meth:`SquareWave.channel`).
    tol : float, default 1e-3
        Stop when the log-likelihood (in counts) changes by less than ``tol`` (keyword-only).
    max_iter : int, default 10000
        Iteration cap.

    Returns
    -------
    EMResult

    Raises
    ------
    ValueError
        A channel that is not a column-stochastic (``d_out``, d) matrix with d >= 2, counts of the wrong
        length, negative or summing to 0, ``tol <= 0`` or ``max_iter < 1``.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt import numeric
    >>> sw = numeric.SquareWave(1.0)
    >>> values = np.random.default_rng(0).beta(5, 2, size=5000)
    >>> counts = sw.bin_reports(sw.perturb(values, rng=1), 16)
    >>> K = sw.channel(8, 16)
    >>> numeric.em(counts, K).f.round(3)
    array([0.   , 0.   , 0.005, 0.036, 0.32 , 0.187, 0.212, 0.24 ])
    """
    return _run(counts, channel, False, tol, max_iter)


def ems(counts, channel, *, tol: float = 1e-3, max_iter: int = 10_000) -> EMResult:
    """EM with the binomial smoothing step (EMS, Li et al. SIGMOD 2020 §5.2); see the module notes.

    The [1, 2, 1]/4 filter of Silverman et al. (1990) after each M step; the likelihood may decrease.

    Parameters
    ----------
    counts : array_like, shape (``d_out``,)
        Binned report counts (:meth:`SquareWave.bin_reports`), non-negative, positive total.
    channel : array_like, shape (``d_out``, d)
        K[j, i] = P(report bin j | value bin i), columns summing to 1 (:meth:`SquareWave.channel`).
    tol : float, default 1e-3
        Stop when the log-likelihood (in counts) changes by less than ``tol`` (keyword-only).
    max_iter : int, default 10000
        Iteration cap.

    Returns
    -------
    EMResult

    Raises
    ------
    ValueError
        A channel that is not a column-stochastic (``d_out``, d) matrix with d >= 2, counts of the wrong
        length, negative or summing to 0, ``tol <= 0`` or ``max_iter < 1``.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt import numeric
    >>> sw = numeric.SquareWave(1.0)
    >>> values = np.random.default_rng(0).beta(5, 2, size=5000)
    >>> counts = sw.bin_reports(sw.perturb(values, rng=1), 16)
    >>> K = sw.channel(8, 16)
    >>> numeric.ems(counts, K).f.round(3)
    array([0.038, 0.047, 0.069, 0.104, 0.144, 0.18 , 0.204, 0.214])
    """
    return _run(counts, channel, True, tol, max_iter)
