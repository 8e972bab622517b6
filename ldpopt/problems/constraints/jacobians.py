"""Jᵀy of the built-in constraints in numpy, for ldpopt's stationarity check (:mod:`.verdict`).
Notes: docs/notes/problems.md, "ldpopt.problems.constraints.jacobians".
"""

from __future__ import annotations

import numpy as np

__all__ = ["builtin_g", "builtin_jacobian_t"]


def builtin_jacobian_t(owner, k: int, y, d: int, out: np.ndarray | None = None) -> np.ndarray | None:
    """∇_f g(f)ᵀ y for the k-th cvxpy constraint that ``owner`` builds (``owner.jacobian_t``), or None
    when ``owner`` does not know its Jacobian. ``out``: add it into this array instead (returned; the
    per-value and sum constraints then write no array of their own)."""
    y = np.asarray(y, dtype=np.float64)
    if out is not None:
        return owner.add_jacobian_t(k, y, d, out)
    return owner.jacobian_t(k, y, d)


def builtin_g(owner, k: int, f: np.ndarray, d: int):
    """(g(f), is_equality) of the k-th cvxpy constraint ``owner`` builds, in the form cvxpy writes it
    (module docstring; ``owner.g``), or None when ``owner`` does not know it (the caller then
    evaluates cvxpy's expression)."""
    return owner.g(k, f, d)
