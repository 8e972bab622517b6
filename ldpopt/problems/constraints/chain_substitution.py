"""Monotone chains substituted out of the feasibility LP, so that HiGHS solves a few dense rows over
d values instead of d − 1 chain rows (:mod:`.feasibility`'s pre-check).

Notes: docs/notes/problems.md, "ldpopt.problems.constraints.chain_substitution".
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

__all__ = ["ChainSubstitution"]

#: most entries of the dense substituted rows (rows × values) built
MAX_DENSE = 50_000_000


class ChainSubstitution:
    """The substitution of the module docstring for l ≤ f ≤ u, A f (= or ≤) b; ``active`` False
    when no chain is substituted (then every method is the identity)."""

    def __init__(self, A, b, ineq, lo, up):
        A = sp.csr_matrix(A)
        self.A, self.b, self.ineq, self.lo, self.up = A, np.asarray(b, float), np.asarray(ineq, bool), lo, up
        m, d = A.shape
        self.active = False
        nnz = np.diff(A.indptr)
        step = np.flatnonzero(self.ineq & (nnz == 2) & (self.b == 0))
        if step.size:
            s0 = A.indptr[step]
            a0, a1 = A.data[s0], A.data[s0 + 1]
            step = step[a0 == -a1]
        if not step.size:
            return
        s0 = A.indptr[step]
        c0, c1, a0 = A.indices[s0], A.indices[s0 + 1], A.data[s0]
        lo_i, hi_i = np.where(a0 > 0, c0, c1), np.where(a0 > 0, c1, c0)  # f[lo_i] ≤ f[hi_i]
        succ = np.full(d, -1)
        indeg, outdeg = np.bincount(hi_i, minlength=d), np.bincount(lo_i, minlength=d)
        if np.any(indeg > 1) or np.any(outdeg > 1):
            return
        succ[lo_i] = hi_i
        # distance to the path's end and the end itself, by pointer jumping (log d numpy steps):
        # dist[v] is the number of steps from v to jump[v] (to its end once jump[v] = −1)
        dist = (succ >= 0).astype(np.int64)
        end = np.where(succ >= 0, succ, np.arange(d))
        jump = succ.copy()
        for _ in range(int(np.ceil(np.log2(max(d, 2)))) + 1):
            has = jump >= 0
            j = np.where(has, jump, 0)
            dist = dist + np.where(has, dist[j], 0)
            end = np.where(has, end[j], end)
            jump = np.where(has, jump[j], -1)
        if np.any(jump >= 0):  # a cycle (f_i ≤ f_j ≤ f_i): not a path
            return
        # each path contiguous, from its smallest value v_0 (the farthest from the end) to its end
        order = np.lexsort((-dist, end))
        on_path = np.zeros(d, bool)
        on_path[lo_i], on_path[hi_i] = True, True
        order = order[on_path[order]]
        ends = end[order]
        first = np.r_[True, ends[1:] != ends[:-1]]
        last = np.r_[ends[1:] != ends[:-1], True]
        if not np.all(succ[order[~last]] == order[1:][~last[:-1]]):
            return  # the walk does not follow the steps: claim nothing, keep the rows
        path = np.cumsum(first) - 1
        head = order[first][path]  # v_0 of each node's path
        tail = order[last][path]  # v_L
        lo_ok = np.all(lo[order] <= lo[head])
        up_ok = np.all(up[order] >= up[tail])
        keep = np.ones(m, bool)
        keep[step] = False
        others = np.flatnonzero(keep)
        if not (lo_ok and up_ok) or others.size * d > MAX_DENSE:
            return
        self.active = True
        self.order, self.first, self.last, self.path, self.step, self.others = order, first, last, path, step, others
        self.step_a = np.abs(a0)
        self.step_lo = lo_i
        self.tails = order[last]
        self.up_rows = np.flatnonzero(np.isfinite(up[self.tails]))

    def system(self):
        """(A', b', ineq', lo', up') of the substituted LP over g (same length d as f)."""
        if not self.active:
            return self.A, self.b, self.ineq, self.lo, self.up
        d = self.A.shape[1]
        R = self.A[self.others].toarray()
        R[:, self.order] = self._suffix(R[:, self.order])
        rows = [sp.csr_matrix(R)]
        P = sp.csr_matrix((np.ones(self.order.size), (self.path, self.order)), shape=(int(self.path.max()) + 1, d))
        rows.append(P[self.up_rows])
        b = np.r_[self.b[self.others], self.up[self.tails][self.up_rows]]
        ineq = np.r_[self.ineq[self.others], np.ones(self.up_rows.size, bool)]
        lo, up = self.lo.copy(), self.up.copy()
        inner = self.order[~self.first]
        lo[inner], up[inner] = 0.0, np.inf
        up[self.order[self.first]] = np.inf
        return sp.vstack(rows, format="csr"), b, ineq, lo, up

    def _suffix(self, X):
        """Suffix sums of the columns of X (in path order) within each path."""
        cs = np.cumsum(X[:, ::-1], axis=1)[:, ::-1]
        nxt = np.r_[np.flatnonzero(self.first)[1:], self.order.size]  # start of the next path
        after = nxt[self.path]  # the column index just past each node's path
        tail = np.concatenate([cs, np.zeros((X.shape[0], 1))], axis=1)[:, after]
        return cs - tail

    def rows_residual(self, r, x):
        """The residuals of the substituted LP's rows at x, from the exact residuals r of the rows
        as given (a chain row's residual is its step's bound gap, taken by :meth:`to_g`)."""
        if not self.active:
            return r
        tails = self.tails[self.up_rows]
        return np.r_[r[self.others], self.up[tails] - x[tails]]

    def point(self, g):
        """f = T g."""
        if not self.active or g is None:
            return g
        f = np.asarray(g, float).copy()
        gs = f[self.order]
        cs = np.cumsum(gs)
        start = np.flatnonzero(self.first)
        base = np.r_[0.0, cs][start][self.path]
        f[self.order] = cs - base
        return f

    def to_g(self, f):
        """g = T⁻¹ f (steps along each path, in float)."""
        if not self.active:
            return f
        g = np.asarray(f, float).copy()
        fs = g[self.order]
        diff = np.r_[fs[0], np.diff(fs)]
        g[self.order] = np.where(self.first, fs, diff)
        return g

    def duals(self, y_sub):
        """Row multipliers of the system as given from the substituted LP's duals (module docstring)."""
        if not self.active or y_sub is None:
            return y_sub
        m = self.A.shape[0]
        y = np.zeros(m)
        k = self.others.size
        y[self.others] = y_sub[:k]
        w = np.asarray(self.A[self.others].T @ y_sub[:k]).ravel()
        lam = np.zeros(w.size)
        lam[self.tails[self.up_rows]] = y_sub[k:]  # the upper bound of a path's end, as a bound multiplier
        S = self._suffix((w + lam)[self.order][None, :])[0]  # suffix sums along each path
        # the step v_{i} ≤ v_{i+1} carries the suffix sum from v_{i+1}
        nxt_S = np.r_[S[1:], 0.0]
        mu_of = np.zeros(w.size)
        mu_of[self.order[~self.last]] = np.maximum(nxt_S[~self.last], 0.0)
        y[self.step] = mu_of[self.step_lo] / self.step_a
        return y
