"""The dual method with constraint rows, once per group of values alike.

Notes: docs/notes/problems.md, "ldpopt.problems.dual.row_groups".
"""

from __future__ import annotations

import numpy as np

from ..._blas import one_thread
from .dual import solve_multipliers
from .grouped import count_groups

__all__ = ["MIN_D", "solve_row_groups"]

#: below this many values the grouping costs about what it saves (a choice; as the evaluations' groups)
MIN_D = 4096

_MIX = np.uint64(0x9E3779B97F4A7C15)  # the golden-ratio multiplier of Fibonacci hashing


def _hash(g_inv, Ac, l, u):
    """A 64-bit hash per value of its count group, bounds and column of A (two random projections of
    the column, fixed seed): equal for values alike, rarely equal otherwise (:func:`_alike` checks)."""
    proj = Ac.T @ np.random.default_rng(0x5EED).standard_normal((Ac.shape[0], 2))  # (d, 2)
    h = g_inv.astype(np.uint64)
    with np.errstate(over="ignore"):
        for x in (proj[:, 0], proj[:, 1], l, u):
            h = (h ^ np.ascontiguousarray(x, float).view(np.uint64)) * _MIX
    return h


def _alike(g_inv, st):
    """(first, inv) of the groups of values alike in count group, bounds and column of A, checked
    exactly; None when some differ from their representative (a hash collision) or there are more
    than d/4 groups."""
    d = st.d
    Ac = st.A.tocsc()
    Ac.sort_indices()
    _, first, inv = np.unique(_hash(g_inv, Ac, st.l, st.u), return_index=True, return_inverse=True)
    if first.size > d // 4:
        return None
    inv = inv.reshape(-1)
    at = first[inv]
    if not (np.array_equal(g_inv[at], g_inv) and np.array_equal(st.l[at], st.l) and np.array_equal(st.u[at], st.u)):
        return None
    B = Ac[:, at]
    B.sort_indices()
    if not (np.array_equal(B.indptr, Ac.indptr) and np.array_equal(B.indices, Ac.indices)
            and np.array_equal(B.data, Ac.data)):
        return None
    return first, inv


def solve_row_groups(sep, st, max_iter: int = 50):
    """(f, λ, y, info) of the dual method on the groups of values alike (module docstring), or None
    where it does not apply: no rows, a separable that does not ask for it, fewer than :data:`MIN_D`
    values, no count groups or too many groups. ``info["row_groups"]``: the number of groups."""
    if not st.m or not getattr(sep, "group_rows", False) or st.d < MIN_D or st.sum_free:
        return None
    g = count_groups(sep)
    if g is None:
        return None
    got = _alike(g.inv, st)
    if got is None:
        return None
    first, inv = got
    rep = sep.restrict(first)
    if rep is None:
        return None
    weights = np.bincount(inv, minlength=first.size).astype(float)
    implied = None if st.implied_upper is None else st.implied_upper[first]
    sub = type(st)(first.size, st.l[first], st.u[first], st.total, st.A[:, first].tocsr(), st.b, st.ineq,
                   st.sum_name, {}, implied)
    # one BLAS thread (the rows are few): the weighted sums are dot products over the groups, which
    # threads slowed ~30× on a loaded machine (measured, d = 10⁶, 64k groups), and one thread keeps
    # their rounding the same whatever the machine
    with one_thread(sub.m):
        f, lam, y, info = solve_multipliers(rep, sub, max_iter=max_iter, weights=weights)
    info["row_groups"] = int(first.size)
    return f[inv], lam, y, info
