"""The values of a separable objective grouped by one integer key (its support count), where every
per-value term is the same function on a group: the fact about an objective that lets the dual
method (:mod:`..dual.grouped`), the certificate and a user's declared separable objective
(:mod:`.user_separable`) compute once per distinct count and gather, bit-identically (the module
docstring of :mod:`..dual.grouped` says when groups are used and why).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ...methods.distinct import integer_groups

if TYPE_CHECKING:
    from .separable import Separable

__all__ = ["Groups", "count_groups", "groups_of", "per_group", "restricted", "uniform"]


@dataclass
class Groups:
    rep: Separable         # the separable on one representative per distinct count
    inv: np.ndarray        # value → its group (intp, length d)
    first: np.ndarray      # group → one of its values
    weights: np.ndarray    # group → number of values (float)

    @property
    def k(self) -> int:
        return self.first.shape[0]


def count_groups(sep) -> Groups | None:
    """The distinct-count groups the solver uses: :func:`groups_of` for the binomial and the
    multinomial (module docstring), None for any other separable."""
    return groups_of(sep) if sep.count_grouped else None


def groups_of(sep) -> Groups | None:
    """The groups of values with one integer key (``sep.group_keys()``: the support counts of the
    binomial, the multinomial and the weighted MLE), cached on ``sep``; None where there are no keys,
    they span more than max(4d, 65,536) (an O(d) ``bincount``), d < 8, more than d/4 distinct keys
    (the gathers would cost about what they save), or some per-value array of ``sep`` is not the
    same float at every member of a group (checked, not assumed: then a term is not a function of
    the key and the elementwise path is the one that is right)."""
    cached = sep.__dict__.get("_groups", False)
    if cached is not False:
        return cached
    out = None
    keys = sep.group_keys() if hasattr(sep, "group_keys") else None
    c = None if keys is None else np.asarray(keys)
    d = c.shape[0] if c is not None and c.ndim == 1 else 0
    grp = integer_groups(c, max_span=max(4 * d, 1 << 16)) if c is not None and d >= 8 else None
    if grp is not None and grp[0].size <= d // 4:
        inv = grp[1]
        k = grp[0].size
        first = np.empty(k, dtype=np.intp)
        first[inv] = np.arange(d, dtype=np.intp)  # any member: all are checked equal below
        rep = sep.restrict(first)
        mine, theirs = _per_value_arrays(sep, keys), _per_value_arrays(rep, keys)
        if all(name in theirs and np.array_equal(theirs[name][inv], v) for name, v in mine.items() if v.shape[0] == d):
            out = Groups(rep, inv, first, np.bincount(inv, minlength=k).astype(float))
    sep._groups = out
    return out


def _per_value_arrays(sep, keys) -> dict:
    """The per-value arrays that must be constant on a group, by name: ``sep.per_value_arrays()``
    (numbered) where the separable holds them elsewhere (a recognised form's terms), else its own
    1-D array attributes."""
    own = getattr(sep, "per_value_arrays", None)
    if callable(own):
        return {i: np.asarray(v) for i, v in enumerate(own())}
    return {name: v for name, v in vars(sep).items() if isinstance(v, np.ndarray) and v.ndim == 1 and v is not keys}


def restricted(sep, idx):
    """``sep.restrict(idx)`` with its distinct-count groups taken from ``sep``'s (cached on it; O(|idx| + K),
    no second ``bincount`` over the counts' span, which for a block can exceed 4·|idx|); None groups
    when ``sep`` has none or the block has more than |idx|/4 distinct counts (the rule of
    :func:`count_groups`)."""
    sub = sep.restrict(idx)
    g = count_groups(sep)
    out = None
    if g is not None and idx.size >= 8:
        inv = g.inv[idx]
        present = np.bincount(inv, minlength=g.k)
        keep = np.flatnonzero(present)
        if keep.size <= idx.size // 4:
            rank = np.cumsum(present > 0, dtype=np.intp) - 1
            inv_sub = rank[inv]
            first = np.empty(keep.size, dtype=np.intp)
            first[inv_sub] = np.arange(idx.size, dtype=np.intp)
            out = Groups(g.rep.restrict(keep), inv_sub, first, present[keep].astype(float))
    sub._groups = out
    return sub


def uniform(x: np.ndarray):
    """The common value of ``x`` when every entry is the same float (sign of zero included), else None."""
    x = np.asarray(x)
    if x.ndim != 1 or x.size == 0:
        return None
    v = x[0]
    if not (np.all(x == v) and not np.any(np.signbit(x) != np.signbit(v))):
        return None
    return float(v)


def per_group(g: Groups, x: np.ndarray):
    """x's value per group when x is constant on every group (checked, sign of zero included), else
    None: then ``fn(g.rep)(table)[g.inv]`` is bit-identical to ``fn(sep)(x)``."""
    x = np.asarray(x, float)
    if x.shape != g.inv.shape:
        return None
    if x.strides == (0,):  # one float broadcast to every value (the plain simplex's bounds)
        return np.broadcast_to(x[:1], (g.k,))
    table = x[g.first]
    # a strided sample first: a point that is not constant per count (with rows, t = λ + Aᵀy varies
    # inside a count) is refused after ~2 % of the full check's passes (then the full check decides)
    step = 64
    if x.shape[0] >= 16 * step and not np.array_equal(table[g.inv[::step]].view(np.int64), x[::step].view(np.int64)):
        return None
    # bitwise (int64 views): the sign of zero and NaN payloads count as differences
    if not np.array_equal(table[g.inv].view(np.int64), x.view(np.int64)):
        return None
    return table
