"""Jᵀy of the built-in constraints in numpy, for ldpopt's stationarity check (:mod:`.verdict`).

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

Each constraint carries its own (``Constraint.jacobian_t``, ``add_jacobian_t`` and ``g``); anything
that does not know them returns None and the caller uses cvxpy's ``grad``.
``tests/test_problems_checks.py`` compares both on every built-in.

:func:`builtin_g` gives the values g(f) themselves (the duality-gap term Σ y·g of the check) for the
per-value and single-row built-ins, so a check of those never needs cvxpy's expression evaluation
(nor the cvxpy problem at all: :class:`~ldpopt.problems.Problem` builds it lazily).
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
