r"""Non-negative ridge regression, the decoder of pure-ldp 1.2.0's RAPPOR server (scikit-learn's
``ElasticNet(positive=True, l1_ratio=0, fit_intercept=False)``), solved to its unique minimiser with
a certificate of how close the answer is.

Notes: docs/notes/sketches.md, "ldpopt.sketches.ridge"."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.optimize import nnls

from .. import kernels

__all__ = ["RidgeFit", "distance_bound", "nonneg_ridge"]


@dataclass(frozen=True)
class RidgeFit:
    r"""The minimiser ``w``, the certified bound on :math:`\lVert w - w^* \rVert_2` (``bound``), the solver's ``device``
    and its coordinate-descent ``sweeps`` (0 on numpy).

    Returned by :func:`nonneg_ridge`.

    Parameters
    ----------
    w : ndarray, shape (d,)
        The non-negative minimiser found.
    bound : float
        Certified bound on its distance to the exact minimiser (:func:`distance_bound`).
    device : str
        ``"numpy"`` or ``"cpu"``.
    sweeps : int
        Coordinate-descent sweeps (0 on numpy).

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt.sketches import nonneg_ridge
    >>> fit = nonneg_ridge(np.array([[1.0, 0.0], [1.0, 1.0], [0.0, 1.0]]), np.array([1.0, 2.0, 1.0]), 0.1,
    ...                    device="numpy")
    >>> fit.device, fit.sweeps, bool(fit.bound < 1e-9)
    ('numpy', 0, True)
    """

    w: np.ndarray
    bound: float
    device: str
    sweeps: int


def _check(X, y, beta) -> tuple[sp.csc_matrix, np.ndarray, float]:
    X = sp.csc_matrix(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if y.ndim != 1 or y.shape[0] != X.shape[0] or not np.all(np.isfinite(y)):
        raise ValueError(f"y must be {X.shape[0]} finite numbers (one per row of X), got shape {y.shape}")
    if not np.all(np.isfinite(X.data)):
        raise ValueError("X must be finite")
    beta = float(beta)
    if not (np.isfinite(beta) and beta > 0):
        raise ValueError(f"beta must be finite and > 0 (the ridge weight), got {beta!r}")
    return X, y, beta


def distance_bound(X, y, beta: float, w) -> float:
    r"""Certified :math:`\lVert w - w^* \rVert_2` for the minimiser :math:`w^*` of the problem (module notes), for any :math:`w ≥ 0`.

    :math:`\lVert w - w^* \rVert_2 ≤ (1 + L)/β \cdot \lVert w - \max(0, w - ∇P(w)) \rVert_2` with :math:`L = β + \lVert X \rVert_1 \lVert X \rVert_∞` (Facchinei & Pang
    2003, §6.3); it trusts no solver.

    Parameters
    ----------
    X : array_like or scipy.sparse matrix, shape (rows, d)
        The design, finite.
    y : array_like, shape (rows,)
        The targets, finite.
    beta : float
        The ridge weight β, finite and ``> 0``.
    w : array_like, shape (d,)
        Any finite non-negative point.

    Returns
    -------
    float
        The bound.

    Raises
    ------
    ValueError
        Shapes that do not match, non-finite entries, ``beta <= 0`` or a negative ``w``.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt.sketches import distance_bound
    >>> X, y = np.array([[1.0, 0.0], [1.0, 1.0], [0.0, 1.0]]), np.array([1.0, 2.0, 1.0])
    >>> w_star = np.full(2, 3 / 3.1)  # the minimiser: (X^T X + 0.1 I) w = X^T y
    >>> bool(distance_bound(X, y, 0.1, w_star) < 1e-9), bool(distance_bound(X, y, 0.1, [0.0, 0.0]) >= np.sqrt(2) * 3 / 3.1)
    (True, True)
    """
    X, y, beta = _check(X, y, beta)
    w = np.asarray(w, dtype=np.float64)
    if w.shape != (X.shape[1],) or np.any(w < 0) or not np.all(np.isfinite(w)):
        raise ValueError(f"w must be {X.shape[1]} finite non-negative numbers, got shape {w.shape}")
    grad = X.T @ (X @ w - y) + beta * w
    r = w - np.maximum(w - grad, 0.0)
    A = abs(X)
    L = beta + float(A.sum(axis=0).max()) * float(A.sum(axis=1).max())
    return (1.0 + L) / beta * float(np.linalg.norm(r))


def nonneg_ridge(X, y, beta: float, device=None) -> RidgeFit:
    r""":math:`\mathrm{argmin}_{w ≥ 0} \frac12 \lVert y - X w \rVert^2 + (β/2) \lVert w \rVert^2` with its certified distance bound (module notes).
    ``X``: a dense array or scipy sparse matrix (rows × d); ``device``: "numpy", "cpu" or None/"auto".

    The decoder of pure-ldp 1.2.0's RAPPOR server (scikit-learn's ``ElasticNet(positive=True,
    l1_ratio=0)`` with β = α·rows), solved exactly.

    Parameters
    ----------
    X : array_like or scipy.sparse matrix, shape (rows, d)
        The design, finite.
    y : array_like, shape (rows,)
        The targets, finite.
    beta : float
        The ridge weight β, finite and ``> 0``.
    device : {None, "auto", "numpy", "cpu"}, optional
        ``"numpy"``: scipy's NNLS on the stacked system; ``"cpu"``: coordinate descent (Numba);
        None/``"auto"``: ``"cpu"`` when Numba is installed.

    Returns
    -------
    RidgeFit

    Raises
    ------
    ValueError
        Bad ``X``, ``y`` or ``beta`` (see :func:`distance_bound`), or ``device="cuda"``.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt.sketches import nonneg_ridge
    >>> X, y = np.array([[1.0, 0.0], [1.0, 1.0], [0.0, 1.0]]), np.array([1.0, 2.0, 1.0])
    >>> nonneg_ridge(X, y, 0.1, device="numpy").w.round(4)
    array([0.9677, 0.9677])
    """
    X, y, beta = _check(X, y, beta)
    dev = "cpu" if device in (None, "auto") and kernels.numba_available() else kernels.resolve(device)
    if dev == "cuda":
        raise ValueError("device: the ridge decoder runs on 'numpy' or 'cpu', not 'cuda'")
    if dev == "cpu":
        from ..kernels.ridge import coordinate_descent

        X.sort_indices()
        w, sweeps, _ = coordinate_descent(X.indptr, X.indices, X.data, y, beta)
    else:
        d = X.shape[1]
        A = np.vstack([X.toarray(), np.sqrt(beta) * np.eye(d)])
        w, sweeps = nnls(A, np.concatenate([y, np.zeros(d)]), maxiter=50 * d)[0], 0
    return RidgeFit(w=w, bound=distance_bound(X, y, beta, w), device=dev, sweeps=int(sweeps))
