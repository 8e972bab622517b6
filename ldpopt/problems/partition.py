"""Known totals of disjoint groups of values, given as dicts keyed by the group's name.

The NDSS 2020 Emoji experiment's category totals (Wang et al., arXiv §6 / NDSS §V) are one
:class:`~.constraints.SubsetSum` per category; :class:`PartitionTotals` states them all at once,
``A f = t`` with one row per group, and checks what a list of SubsetSums cannot: that no value is
in two groups (an error naming both keys and the value). :class:`LinearEquality` states general
equality rows A f = rhs given as data, the same kind of row block without the named groups.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from .constraints import Constraint, _fsum, _real

__all__ = ["LinearEquality", "PartitionTotals"]


class PartitionTotals(Constraint):
    """Σ_{v ∈ groups[k]} f_v == totals[k] for every key k; the groups must be disjoint (they need not
    cover the domain).

    ``groups``: dict key → integer indices (non-empty, no repeats); ``totals``: dict key → number,
    with the same keys. ``d`` (optional) checks the indices at once instead of when the problem is
    built. The dual ``"<name>"`` (default ``"partition"``) is a vector in the order of ``keys``;
    :meth:`by_key` turns it into a dict. Residual: max_k |Σ_{v ∈ groups[k]} f_v − totals[k]|.
    """

    default_name = "partition"
    states_total = True

    def __init__(self, groups: dict, totals: dict, d: int | None = None, name: str | None = None):
        super().__init__(name)
        if not isinstance(groups, dict) or not groups:
            raise ValueError(f"groups must be a non-empty dict key -> indices, got {type(groups).__name__}")
        if not isinstance(totals, dict):
            raise ValueError(f"totals must be a dict key -> total, got {type(totals).__name__}")
        missing = [k for k in groups if k not in totals]
        extra = [k for k in totals if k not in groups]
        if missing:
            raise ValueError(f"totals has no entry for group {missing[0]!r}")
        if extra:
            raise ValueError(f"totals[{extra[0]!r}] names no group (groups: {list(groups)})")
        self.keys = list(groups)
        self.totals = np.array([_real(totals[k], f"totals[{k!r}]") for k in self.keys])
        self.groups = {}
        for k in self.keys:
            arr = np.atleast_1d(np.asarray(groups[k]))
            if arr.ndim != 1 or arr.size == 0 or arr.dtype.kind not in "iu":
                raise ValueError(f"groups[{k!r}] must be a non-empty list of integer indices, got {groups[k]!r}")
            if np.any(arr < 0):
                raise ValueError(f"groups[{k!r}]: index {int(arr[arr < 0][0])} is negative")
            u, c = np.unique(arr, return_counts=True)
            if np.any(c > 1):
                raise ValueError(f"groups[{k!r}] lists value {int(u[c > 1][0])} twice")
            self.groups[k] = arr.astype(np.int64)
        allidx = np.concatenate(list(self.groups.values()))
        owner = np.repeat(np.arange(len(self.keys)), [g.shape[0] for g in self.groups.values()])
        order = np.argsort(allidx, kind="stable")
        dup = np.flatnonzero(np.diff(allidx[order]) == 0)
        if dup.size:
            i, j = order[dup[0]], order[dup[0] + 1]
            raise ValueError(f"groups overlap: value {int(allidx[i])} is in groups[{self.keys[owner[i]]!r}] "
                             f"and groups[{self.keys[owner[j]]!r}] (partition totals need disjoint groups)")
        if d is not None:
            self._check_range(int(d))

    def _check_range(self, d: int) -> None:
        for k, g in self.groups.items():
            if np.any(g >= d):
                raise ValueError(f"groups[{k!r}]: index {int(g[g >= d][0])} is out of range [0, {d})")

    def matrix(self, d: int) -> sp.csr_matrix:
        """A (groups × d), one row of ones per group, in the order of ``keys``."""
        self._check_range(d)
        gs = list(self.groups.values())
        rows = np.repeat(np.arange(len(gs)), [g.shape[0] for g in gs])
        cols = np.concatenate(gs)
        return sp.csr_matrix((np.ones(cols.shape[0]), (rows, cols)), shape=(len(gs), d))

    def build(self, f, estimate):
        return [(self.name, self.matrix(estimate.d) @ f == self.totals)]

    def residuals(self, f, estimate):
        self._check_range(estimate.d)
        f = np.asarray(f, dtype=np.float64)
        return [max(abs(_fsum(f[g]) - t) for g, t in zip(self.groups.values(), self.totals))]

    def by_key(self, values) -> dict:
        """A vector in the order of ``keys`` (e.g. ``Solution.duals[name]``) as a dict key → value."""
        v = np.atleast_1d(np.asarray(values, dtype=np.float64))
        if v.shape != (len(self.keys),):
            raise ValueError(f"values must have one entry per group ({len(self.keys)}), got shape {v.shape}")
        return dict(zip(self.keys, v.tolist()))

    def __repr__(self) -> str:
        return f"PartitionTotals({len(self.keys)} groups: {self.keys[:3]}{'...' if len(self.keys) > 3 else ''})"


class LinearEquality(Constraint):
    """A f == rhs for a sparse matrix A (rows × d) given as data: general equality rows that no
    named constraint states, e.g. "two marginals agree on the attributes they share" over a vector
    that concatenates marginals (:mod:`ldpopt.multi`). ``matrix``: a scipy sparse matrix or a dense
    2-D array with d columns; ``rhs``: a scalar or one number per row (default 0). One dual vector,
    one entry per row, in row order. Residual: max_k |(A f)_k − rhs_k| (the structured solver, the
    certificate and the feasibility test read it as rows, like :class:`Hierarchy`'s H f = 0).
    """

    default_name = "linear"

    def __init__(self, matrix, rhs=0.0, name: str | None = None):
        super().__init__(name)
        if not sp.issparse(matrix):
            arr = np.asarray(matrix, dtype=np.float64)
            if arr.ndim != 2:
                raise ValueError(f"matrix must be 2-D (rows × d), got shape {arr.shape}")
            matrix = arr
        A = sp.csr_matrix(matrix, dtype=np.float64)
        if A.shape[0] < 1:
            raise ValueError("matrix must have at least one row")
        if not np.all(np.isfinite(A.data)):
            raise ValueError("matrix must be finite")
        b = np.broadcast_to(np.asarray(rhs, dtype=np.float64), (A.shape[0],)) if np.ndim(rhs) == 0 else \
            np.asarray(rhs, dtype=np.float64)
        if b.shape != (A.shape[0],) or not np.all(np.isfinite(b)):
            raise ValueError(f"rhs must be a finite scalar or one number per row ({A.shape[0]}), got shape {b.shape}")
        self._A, self.rhs = A, np.array(b)

    def matrix(self, d: int) -> sp.csr_matrix:
        """A, after checking it has d columns."""
        if self._A.shape[1] != d:
            raise ValueError(f"matrix must have d = {d} columns, got {self._A.shape[1]}")
        return self._A

    def build(self, f, estimate):
        return [(self.name, self.matrix(estimate.d) @ f == self.rhs)]

    def residuals(self, f, estimate):
        return [float(np.max(np.abs(self.matrix(estimate.d) @ np.asarray(f, float) - self.rhs)))]

    def __repr__(self) -> str:
        return f"LinearEquality({self._A.shape[0]} rows, name={self.name!r})"
