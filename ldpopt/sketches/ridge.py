r"""Non-negative ridge regression, the decoder of pure-ldp 1.2.0's RAPPOR server (scikit-learn's
``ElasticNet(positive=True, l1_ratio=0, fit_intercept=False)``), solved to its unique minimiser with
a certificate of how close the answer is:

    minimise P(w) = ½‖y − X w‖² + (β/2)‖w‖²  over w ≥ 0     (β > 0).

scikit-learn states the same problem as (1/(2r))‖y − X w‖² + (α/2)‖w‖² over r rows: β = α·r.

Two solvers (``device``):

* ``"numpy"`` — :func:`scipy.optimize.nnls` on the stacked system [X; √β I] w ≈ [y; 0] (an exact
  active-set method; the readable reference);
* ``"cpu"`` — cyclic coordinate descent on X's sparse columns (:mod:`ldpopt.kernels.ridge`), until a
  sweep moves no coordinate by more than 1e-15·max|w|; ``None``/``"auto"`` picks it when Numba is
  installed.

The certificate (:func:`distance_bound`): P is β-strongly convex with an L-Lipschitz gradient,
L = β + λ_max(XᵀX) ≤ β + ‖X‖₁‖X‖_∞, so for any w ≥ 0 the natural residual r(w) = w − max(0, w − ∇P(w))
bounds the distance to the minimiser: ‖w − w*‖₂ ≤ (1 + L)/β · ‖r(w)‖₂ (Facchinei & Pang,
*Finite-Dimensional Variational Inequalities*, 2003, §6.3; the two-line proof: the projection's
variational inequality at w*, plus strong monotonicity). The same bound applied to another
solver's answer (pure-ldp's, scikit-learn's coordinate descent stopped after its ``max_iter``) says how
far that answer is from the minimiser, without trusting either solver.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.optimize import nnls

from .. import kernels

__all__ = ["RidgeFit", "distance_bound", "nonneg_ridge"]


@dataclass(frozen=True)
class RidgeFit:
    """The minimiser ``w``, the certified bound on ‖w − w*‖₂ (``bound``), the solver's ``device``
    and its coordinate-descent ``sweeps`` (0 on numpy)."""

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
    """Certified ‖w − w*‖₂ for the minimiser w* of the problem (module docstring), for any w ≥ 0."""
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
    """argmin_{w ≥ 0} ½‖y − X w‖² + (β/2)‖w‖² with its certified distance bound (module docstring).
    ``X``: a dense array or scipy sparse matrix (rows × d); ``device``: "numpy", "cpu" or None/"auto"."""
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
