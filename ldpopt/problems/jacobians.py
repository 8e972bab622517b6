"""Jᵀy of the built-in constraints in numpy, for ldpopt's stationarity check (:mod:`.checks`).

The check needs Σ_k ∇_f g_k(f)ᵀ y_k. cvxpy's ``grad`` of the affine constraint expressions gives it
for any constraint, but builds a sparse matrix per constraint through its canonicaliser: ~0.2 s per
check at d = 42,178, 20× the structured solve itself. For the built-ins the Jacobians are known
(g as cvxpy builds it, :mod:`.constraints`: ``a >= b`` is ``b − a ≤ 0``, ``a <= b`` and ``a == b``
are ``a − b``), so Jᵀy is one vectorised line each:

* NonNegative, Simplex's nonnegativity, Box lower (f ≥ b): g = b − f, Jᵀy = −y;
* Box upper (f ≤ b): g = f − b, Jᵀy = y;
* SumTo, Simplex's sum: g = Σ f − total, Jᵀy = y·1;
* SubsetSum ==, <=: g = Σ_S f − value, Jᵀy = y on S; >=: −y on S;
* Fixed: g = f[S] − values, Jᵀy scatters y onto S;
* Hierarchy, Monotone (H f = 0, D f ≤ 0), PartitionTotals (M f = totals), LinearEquality (A f = rhs): Jᵀy = Mᵀy.

Anything else returns None and the caller uses cvxpy's ``grad``. ``tests/test_problems_checks.py``
compares both on every built-in.

:func:`builtin_g` gives the values g(f) themselves (the duality-gap term Σ y·g of the check) for the
per-value and single-row built-ins, so a check of those never needs cvxpy's expression evaluation
(nor the cvxpy problem at all: :class:`~ldpopt.problems.Problem` builds it lazily).
"""

from __future__ import annotations

import numpy as np

__all__ = ["builtin_g", "builtin_jacobian_t"]


def builtin_jacobian_t(owner, k: int, y, d: int, out: np.ndarray | None = None) -> np.ndarray | None:
    """∇_f g(f)ᵀ y for the k-th cvxpy constraint that ``owner`` (a built-in constraint) builds, or
    None when ``owner`` is not a built-in with a known Jacobian. ``out``: add it into this array
    instead (returned; the per-value and sum constraints then write no array of their own)."""
    from .constraints import Box, Fixed, Hierarchy, NonNegative, Simplex, SubsetSum, SumTo, _indices
    from .order import Monotone
    from .partition import LinearEquality, PartitionTotals

    y = np.asarray(y, dtype=np.float64)
    kind = type(owner)
    if out is not None:
        if kind is NonNegative or (kind is Simplex and k == 0):
            return np.subtract(out, y.ravel(), out=out)
        if kind is SumTo or (kind is Simplex and k == 1):
            out += float(y.reshape(-1)[0])
            return out
        got = builtin_jacobian_t(owner, k, y, d)
        if got is None:
            return None
        out += got
        return out
    if kind is NonNegative or (kind is Simplex and k == 0):
        return -np.broadcast_to(y.ravel(), (d,)).astype(np.float64)
    if kind is SumTo or (kind is Simplex and k == 1):
        return np.full(d, float(y.reshape(-1)[0]))
    if kind is Box:
        sign = -1.0 if owner.sides[k] == "lower" else 1.0
        return sign * np.broadcast_to(y.ravel(), (d,)).astype(np.float64)
    if kind is SubsetSum:
        out = np.zeros(d)
        idx = _indices(owner.indices, d, "indices")
        np.add.at(out, idx, (-1.0 if owner.sense == ">=" else 1.0) * float(y.reshape(-1)[0]))
        return out
    if kind is Fixed:
        out = np.zeros(d)
        np.add.at(out, _indices(owner.indices, d, "indices"), y.ravel())
        return out
    if issubclass(kind, (Hierarchy, LinearEquality, Monotone, PartitionTotals)):  # also a range tree's Hierarchy
        return np.asarray(owner.matrix(d).T @ y.ravel(), dtype=np.float64).ravel()
    return None


def builtin_g(owner, k: int, f: np.ndarray, d: int):
    """(g(f), is_equality) of the k-th cvxpy constraint ``owner`` builds, in the form cvxpy writes it
    (module docstring), or None when ``owner`` is not NonNegative / SumTo / Simplex / Box / SubsetSum
    / Fixed (the caller then evaluates cvxpy's expression)."""
    from .constraints import Box, Fixed, NonNegative, Simplex, SubsetSum, SumTo, _indices

    kind = type(owner)
    if kind is NonNegative or (kind is Simplex and k == 0):
        return -f, False
    if kind is SumTo or (kind is Simplex and k == 1):
        return np.array([float(np.sum(f)) - (1.0 if kind is Simplex else owner.total)]), True
    if kind is Box:
        return ((owner.lower - f) if owner.sides[k] == "lower" else (f - owner.upper)), False
    if kind is SubsetSum:
        r = float(np.sum(f[_indices(owner.indices, d, "indices")])) - owner.value
        return np.array([-r if owner.sense == ">=" else r]), owner.sense == "=="
    if kind is Fixed:
        idx, vals = owner.at(d)
        return f[idx] - vals, True
    return None
