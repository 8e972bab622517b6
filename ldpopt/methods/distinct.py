"""Distinct values of a long array in O(d) when they are functions of small integers (counts).

Notes: docs/notes/python.md, "ldpopt.methods.distinct"."""

from __future__ import annotations

import numpy as np


def integer_groups(keys: np.ndarray, max_span: int | None = None):
    """``(present, inv)`` for float ``keys`` holding integers ≥ 0 only: ``present`` the sorted
    distinct keys (int64) and ``inv`` (intp, ``keys.shape``) with ``keys == present[inv]``; ``None``
    when some key is not an integer ≥ 0 (or NaN/inf, or −0.0) or the keys span more than
    ``max_span`` (default ``keys.size``, so the bincount never outgrows the array)."""
    keys = np.asarray(keys)
    if keys.ndim != 1 or keys.size == 0:
        return None
    span_max = keys.size if max_span is None else int(max_span)
    lo, hi = float(np.min(keys)), float(np.max(keys))
    if not (np.isfinite(lo) and np.isfinite(hi)) or lo < 0 or hi - lo + 1 > span_max:
        return None
    k = keys.astype(np.int64)
    if not np.array_equal(k, keys) or np.signbit(keys).any():  # fractional, or a −0.0
        return None
    base = int(k.min())
    k -= base
    present = np.bincount(k) > 0
    rank = np.cumsum(present, dtype=np.intp) - 1
    return np.flatnonzero(present) + base, rank[k]


def unique_inverse(x: np.ndarray, keys: np.ndarray | None = None):
    """Exactly ``np.unique(x, return_inverse=True)`` for 1-D float ``x`` (values and inverse), found
    in O(d) when ``x`` is a strictly increasing function of integer ``keys`` (default: ``x`` itself)
    as :func:`integer_groups` accepts them; otherwise by ``np.unique``. The function is checked, not
    assumed: every ``x`` must equal its group's representative (sign of zero included) and the
    representatives must increase strictly, else the sort is used."""
    x = np.asarray(x, dtype=np.float64)
    grp = integer_groups(x if keys is None else keys)
    if grp is not None and x.ndim == 1 and np.shape(keys if keys is not None else x) == x.shape:
        _, inv = grp
        first = np.empty(int(inv.max()) + 1 if inv.size else 0, dtype=np.intp)
        first[inv] = np.arange(x.size, dtype=np.intp)  # any member: all are checked equal below
        ux = x[first]
        if (np.all(ux[1:] > ux[:-1]) and np.array_equal(ux[inv], x)
                and not _mixed_zero_signs(x, ux, inv)):
            return ux, inv
    return np.unique(x, return_inverse=True)


def _mixed_zero_signs(x, ux, inv) -> bool:
    """True when a group equal to 0 holds both +0.0 and −0.0 (``array_equal`` cannot tell them)."""
    zero = np.flatnonzero(ux == 0)
    if not zero.size:
        return False
    members = x[inv == zero[0]]
    return bool(np.any(np.signbit(members) != np.signbit(ux[zero[0]])))


__all__ = ["integer_groups", "unique_inverse"]
