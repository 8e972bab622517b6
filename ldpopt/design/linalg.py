"""The strategy's information matrix QᵀD⁻¹Q and the unbiased least-squares reconstruction.

Notes: docs/notes/design.md, "ldpopt.design.linalg"."""

from __future__ import annotations

import numpy as np

__all__ = ["reconstruction"]


def _inverse_information(Q: np.ndarray) -> np.ndarray | None:
    """(QᵀD⁻¹Q)⁻¹, or None when QᵀD⁻¹Q is singular (the strategy cannot answer every value)."""
    s = Q.sum(axis=1)
    M = (Q / s[:, None]).T @ Q
    M = (M + M.T) / 2
    try:
        L = np.linalg.cholesky(M)
    except np.linalg.LinAlgError:
        return None
    Li = np.linalg.inv(L)
    X = Li.T @ Li
    return (X + X.T) / 2


def reconstruction(Q) -> np.ndarray:
    """:math:`V = (Q^T D^{-1} Q)^{-1} Q^T D^{-1}` (d × m), the unbiased least-squares reconstruction: VQ = I, and
    x̂ = V y / n estimates the frequencies from the output counts y.

    Parameters
    ----------
    Q : array_like (m, d)
        A strategy of full column rank.

    Returns
    -------
    ndarray (d, m)

    Raises
    ------
    ValueError
        If :math:`Q^T D^{-1} Q` is singular.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt.design import reconstruction
    >>> Q = np.array([[0.7, 0.3], [0.3, 0.7]])
    >>> bool(np.allclose(reconstruction(Q) @ Q, np.eye(2)))
    True
    """
    Q = np.asarray(Q, dtype=np.float64)
    X = _inverse_information(Q)
    if X is None:
        raise ValueError("strategy: QᵀD⁻¹Q is singular (some value cannot be estimated)")
    return X @ (Q / Q.sum(axis=1)[:, None]).T


