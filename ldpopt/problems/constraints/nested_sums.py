"""Nested-sum equality rows substituted out of the exact point of the feasibility decision: a
:class:`~.base.Hierarchy` or a range tree (:mod:`.ranges`) states f_p = Σ f_children for every
internal node, thousands of equalities that are all tight at every point, far more than the basis
system of :mod:`.exact_point` solves in rationals (:data:`.exact_point.MAX_BASIS`).

Notes: docs/notes/problems.md, "ldpopt.problems.constraints.nested_sums"."""

from __future__ import annotations

from functools import cached_property

import numpy as np
import scipy.sparse as sp

__all__ = ["MAX_LEVELS", "NestedSums"]

#: deepest nesting resolved (a range tree over 10⁷ leaves with branching 2 has 24 levels)
MAX_LEVELS = 64


class NestedSums:
    """The substitution of the module docstring for the rows A f (= or ≤) b; ``active`` False when
    no row defines a value (then :meth:`system` is the system as given). ``two_value``: a row
    f_p − f_c = 0 defines its + value too (a range tree's node with one child; the candidate point
    of :mod:`.feasibility` takes them, the exact point contracts them into blocks instead)."""

    def __init__(self, A, b, ineq, two_value: bool = False):
        A = sp.csr_matrix(A)
        m, d = A.shape
        self.d = d
        self.active = False
        nnz = np.diff(A.indptr)
        rows = np.repeat(np.arange(m), nnz)
        unit = np.abs(A.data) == 1.0
        pos = np.bincount(rows, weights=A.data > 0, minlength=m).astype(np.int64)
        cand = (~np.asarray(ineq, bool) & (np.asarray(b, float) == 0) & (nnz >= (2 if two_value else 3))
                & (np.bincount(rows, weights=~unit, minlength=m) == 0) & ((pos == 1) | (nnz - pos == 1)))
        if not np.any(cand):
            return
        piv_sign = np.where(pos == 1, 1.0, -1.0)  # the pivot's coefficient: the sign seen once
        at_piv = cand[rows] & (A.data == piv_sign[rows])
        pivot = np.full(m, -1)
        pivot[rows[at_piv]] = A.indices[at_piv]
        first = np.full(d, -1)
        k = np.flatnonzero(cand)[::-1]
        first[pivot[k]] = k  # the first row per pivot (the last assignment wins)
        cand &= (pivot >= 0) & (first[np.maximum(pivot, 0)] == np.arange(m))
        defined = np.zeros(d, bool)
        defined[pivot[cand]] = True
        other = cand[rows] & ~at_piv  # the entries a row sums over
        wait = other & defined[A.indices]  # those that may block their row: a defined value
        r_w, c_w = rows[wait], A.indices[wait]
        level = np.full(m, -1)
        resolved = np.zeros(d, bool)
        for lev in range(MAX_LEVELS):
            blocked = np.zeros(m, bool)
            blocked[r_w] = True
            ready = np.flatnonzero(cand & (level < 0) & ~blocked)
            if not ready.size:
                break
            level[ready] = lev
            resolved[pivot[ready]] = True
            left = ~resolved[c_w]
            r_w, c_w = r_w[left], c_w[left]
        use = level >= 0
        if not np.any(use):
            return
        self.active = True
        self.rows, self.pivot, self.level = np.flatnonzero(use), pivot[use], level[use]
        self.defined = np.zeros(d, bool)
        self.defined[self.pivot] = True
        self.sign = piv_sign[use]
        sub = sp.csr_matrix(A[self.rows], copy=True)
        keep = ~(sub.indices == np.repeat(self.pivot, np.diff(sub.indptr)))
        sub.data = np.where(keep, -sub.data * np.repeat(self.sign, np.diff(sub.indptr)), 0.0)
        sub.eliminate_zeros()
        self.sums = sub  # row i: f_pivot[i] = sums[i] · f
        self.others = np.flatnonzero(~use)

    @cached_property
    def T(self):
        """T (d × d, integer entries): identity on the free values, each defined value's row its sum
        of free values (built on first use: :meth:`propagate` does not need it)."""
        d = self.d
        T = sp.diags((~self.defined).astype(float), format="csr")
        for lev in range(int(self.level.max()) + 1):
            at = np.flatnonzero(self.level == lev)
            R = self.sums[at] @ T
            T = T + sp.csr_matrix(sp.csr_matrix((np.ones(at.size), (self.pivot[at], np.arange(at.size))),
                                                shape=(d, at.size)) @ R)
        return T.tocsr()

    def system(self, A, b, ineq, lo, up):
        """(A', b', ineq', lo', up') over the free values (module docstring); the defined values'
        columns are 0 and their bounds infinite there."""
        if not self.active:
            return A, b, ineq, lo, up
        A = sp.csr_matrix(A)
        R = sp.csr_matrix(A[self.others] @ self.T)
        lo_f, up_f = np.where(self.defined, -np.inf, lo), np.where(self.defined, np.inf, up)
        Tp = self.T[self.pivot]
        # the range of T_p g over the free values' box, in float (±inf where a needed bound is)
        P, N = Tp.maximum(0), Tp.minimum(0)
        lo0, up0 = np.where(np.isfinite(lo_f), lo_f, 0.0), np.where(np.isfinite(up_f), up_f, 0.0)
        no_lo, no_up = (~np.isfinite(lo_f)).astype(float), (~np.isfinite(up_f)).astype(float)
        mins = np.where((P @ no_lo - N @ no_up) > 0, -np.inf, P @ lo0 + N @ up0)
        maxs = np.where((P @ no_up - N @ no_lo) > 0, np.inf, P @ up0 + N @ lo0)
        need_lo = np.isfinite(lo[self.pivot]) & ~(mins >= lo[self.pivot])
        need_up = np.isfinite(up[self.pivot]) & ~(maxs <= up[self.pivot])
        rows = sp.vstack([R, -Tp[need_lo], Tp[need_up]], format="csr")
        rhs = np.r_[np.asarray(b, float)[self.others], -lo[self.pivot][need_lo], up[self.pivot][need_up]]
        le = np.r_[np.asarray(ineq, bool)[self.others], np.ones(int(need_lo.sum() + need_up.sum()), bool)]
        return rows, rhs, le, lo_f, up_f

    def propagate(self, X):
        """X (one number per value: exact integers, int64 or Python ints in an object array, on a
        common scale; or floats, rounded) with every defined value set to its sum of the others,
        level by level. An int64 X stays int64 only while every sum provably fits (a float bound
        below 2⁶¹); else the exact integers are Python ints."""
        if not self.active:
            return X
        X = X.copy()
        for lev in range(int(self.level.max()) + 1):
            at = np.flatnonzero(self.level == lev)
            S = self.sums[at]
            if X.dtype == np.int64:
                bound = abs(S) @ np.abs(X.astype(np.float64))
                if np.all(bound < 2.0**61):
                    X[self.pivot[at]] = sp.csr_matrix((np.round(S.data).astype(np.int64), S.indices, S.indptr),
                                                      shape=S.shape) @ X
                    continue
                X = X.astype(object)
            if X.dtype != object:
                X[self.pivot[at]] = S @ X
                continue
            Sc = sp.coo_matrix(S)
            acc = np.zeros(at.size, dtype=object)
            np.add.at(acc, Sc.row, np.round(Sc.data).astype(np.int64).astype(object) * X[Sc.col])
            X[self.pivot[at]] = acc
        return X
