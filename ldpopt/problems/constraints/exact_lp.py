"""Exact rational feasibility of a small linear system with bounds: l ≤ x ≤ u, A x = b / A x ≤ b,
every number a ``fractions.Fraction`` (float data converted exactly). This is the last step of the
exact pre-check (:mod:`.feasibility`), run on the system after values with equal columns are
aggregated (a handful of variables at any d for subset sums and partitions), so rational arithmetic
is affordable here where it is not over the domain.

Notes: docs/notes/problems.md, "ldpopt.problems.constraints.exact_lp".
"""

from __future__ import annotations

from fractions import Fraction
from math import gcd, lcm

import numpy as np

__all__ = ["MAX_SIMPLEX", "ExactSystem", "exact_group_sums", "solve_exact"]

#: largest standard-form tableau side (rows or columns) the rational simplex is run on
MAX_SIMPLEX = 80


def exact_group_sums(x: np.ndarray, inv: np.ndarray, G: int) -> list:
    """Σ_{v: inv_v = g} x_v exactly, one Fraction per group (None where an infinite entry is in the
    group: that bound is infinite). x float64; each finite x_v = m_v·2^(e_v) with integer m_v, so
    the sums are integer sums scaled by 2^(min e) — numpy object arrays, no Python loop over values."""
    x = np.asarray(x, dtype=np.float64)
    inf = np.bincount(inv, weights=~np.isfinite(x), minlength=G) > 0
    fin = np.isfinite(x) & (x != 0)
    out: list = [Fraction(0)] * G
    if np.any(fin):
        mant, ex = np.frexp(x[fin])
        m = (mant * 2.0**53).astype(np.int64)
        e = ex.astype(np.int64) - 53
        e0 = int(e.min())
        ints = np.left_shift(m.astype(object), (e - e0).astype(object))
        g = inv[fin]
        order = np.argsort(g, kind="stable")
        gs = g[order]
        starts = np.flatnonzero(np.r_[True, gs[1:] != gs[:-1]])
        sums = np.add.reduceat(ints[order], starts)
        scale = Fraction(2) ** e0
        for k, s in zip(gs[starts].tolist(), sums.tolist()):
            out[k] = Fraction(s) * scale
    return [None if inf[k] else out[k] for k in range(G)]


class ExactSystem:
    """l ≤ x ≤ u, rows A x (= or ≤) b in Fractions. ``A`` dense (m × n) float64 or Fraction entries,
    ``b`` length m, ``ineq`` booleans (True: ≤), ``lo``/``up`` lists of Fraction or None (infinite)."""

    def __init__(self, A, b, ineq, lo: list, up: list):
        A = np.asarray(A)
        self.m, self.n = A.shape
        zero = Fraction(0)  # one shared 0: an aggregated system is mostly zeros
        self.A = [[Fraction(v) if v else zero for v in row] for row in A.tolist()]
        self.b = [Fraction(v) for v in np.asarray(b).tolist()]
        self.ineq = [bool(v) for v in np.asarray(ineq).tolist()]
        self.lo, self.up = list(lo), list(up)

    def point_ok(self, x: list) -> bool:
        """Whether x (Fractions) meets every bound and row exactly."""
        for j, v in enumerate(x):
            if (self.lo[j] is not None and v < self.lo[j]) or (self.up[j] is not None and v > self.up[j]):
                return False
        for row, bk, le in zip(self.A, self.b, self.ineq):
            s = sum((a * v for a, v in zip(row, x) if a and v), Fraction(0))
            if (s > bk) if le else (s != bk):
                return False
        return True

    def farkas_margin(self, y: list) -> Fraction | None:
        """min_{l ≤ x ≤ u} (Aᵀy)ᵀx − yᵀb exactly, or None when y is no certificate (a negative
        multiplier on a ≤ row, a needed bound infinite, or margin ≤ 0)."""
        if any(le and v < 0 for v, le in zip(y, self.ineq)):
            return None
        c = [sum((y[k] * self.A[k][j] for k in range(self.m) if y[k] and self.A[k][j]), Fraction(0))
             for j in range(self.n)]
        low = Fraction(0)
        for j, cj in enumerate(c):
            if cj == 0:
                continue
            bound = self.lo[j] if cj > 0 else self.up[j]
            if bound is None:
                return None
            low += cj * bound
        margin = low - sum((v * bk for v, bk in zip(y, self.b) if v), Fraction(0))
        return margin if margin > 0 else None

    def coefficients(self, y: list) -> list:
        """Aᵀy (Fractions), per variable."""
        return [sum((y[k] * self.A[k][j] for k in range(self.m) if y[k] and self.A[k][j]), Fraction(0))
                for j in range(self.n)]

    def repair(self, x0: np.ndarray, tol: float) -> list | None:
        """A candidate exact point from a float one: a value within ``tol`` (relative to its bound's
        size) of a finite bound is put on it, ≤ rows within ``tol`` of equality and every = row are
        solved exactly for the other values (Gaussian elimination over the rationals; a value whose
        column has no pivot keeps its float value). None when the active rows are inconsistent."""
        x: list = [Fraction(float(v)) for v in np.asarray(x0, dtype=np.float64)]
        free = []
        for j, v in enumerate(x0.tolist()):
            for bd in (self.lo[j], self.up[j]):
                if bd is not None and abs(v - float(bd)) <= tol * max(1.0, abs(float(bd))):
                    x[j] = bd
                    break
            else:
                free.append(j)
        active = []
        for k in range(self.m):
            if not self.ineq[k]:
                active.append(k)
                continue
            s = sum(float(a) * float(v) for a, v in zip(self.A[k], x0.tolist()))
            scale = max(1.0, abs(float(self.b[k])), sum(abs(float(a) * float(v)) for a, v in zip(self.A[k], x0.tolist())))
            if abs(s - float(self.b[k])) <= tol * scale:
                active.append(k)
        if not active:
            return x
        is_free = set(free)
        fixed = [j for j in range(self.n) if j not in is_free and x[j]]  # the values off 0 (a vertex: few)
        M = [[self.A[k][j] for j in free] for k in active]
        r = [self.b[k] - sum((self.A[k][j] * x[j] for j in fixed if self.A[k][j]), Fraction(0)) for k in active]
        sol = solve_exact(M, r, [x[j] for j in free])
        if sol is None:
            return None
        for j, v in zip(free, sol):
            x[j] = v
        return x

    def simplex(self) -> tuple[str, list] | None:
        """("feasible", x) or ("infeasible", y) by the rational phase-one simplex (module docstring);
        None when the standard form exceeds :data:`MAX_SIMPLEX`."""
        # x_j = lo_j + p_j, = up_j − p_j, or p_j − q_j (free); one more row p_j ≤ up_j − lo_j
        cols: list[tuple[int, int]] = []  # (variable, sign) of each standard-form column
        shift = []
        for j in range(self.n):
            if self.lo[j] is not None:
                cols.append((j, 1))
                shift.append(self.lo[j])
            elif self.up[j] is not None:
                cols.append((j, -1))
                shift.append(self.up[j])
            else:
                cols += [(j, 1), (j, -1)]
                shift.append(Fraction(0))
        rows, rhs, slack_of = [], [], []  # slack_of: +1 for a ≤ row (slack column), 0 for =
        for k in range(self.m):
            row = [self.A[k][j] * s for j, s in cols]
            rows.append(row)
            rhs.append(self.b[k] - sum((self.A[k][j] * shift[j] for j in range(self.n) if self.A[k][j]), Fraction(0)))
            slack_of.append(1 if self.ineq[k] else 0)
        for j in range(self.n):
            if self.lo[j] is not None and self.up[j] is not None:
                rows.append([Fraction(1) if (jj, s) == (j, 1) else Fraction(0) for jj, s in cols])
                rhs.append(self.up[j] - self.lo[j])
                slack_of.append(1)
        m, nc = len(rows), len(cols)
        slacks = [i for i in range(m) if slack_of[i]]
        width = nc + len(slacks) + m
        if m > MAX_SIMPLEX or width > 2 * MAX_SIMPLEX:
            return None
        T = []
        for i in range(m):
            line = rows[i] + [Fraction(1) if s == i else Fraction(0) for s in slacks]
            sign = -1 if rhs[i] < 0 else 1
            line = [sign * v for v in line] + [Fraction(int(a == i)) for a in range(m)] + [sign * rhs[i]]
            T.append(line)
        basis = [nc + len(slacks) + i for i in range(m)]
        art = set(basis)
        cost = [Fraction(0)] * (nc + len(slacks)) + [Fraction(1)] * m
        while True:  # reduced costs from the current basis; Bland: smallest entering, smallest leaving
            z = [sum((cost[basis[i]] * T[i][j] for i in range(m) if T[i][j]), Fraction(0)) for j in range(width)]
            enter = next((j for j in range(width) if j not in art and cost[j] - z[j] < 0), None)
            if enter is None:
                break
            ratios = [(T[i][-1] / T[i][enter], basis[i], i) for i in range(m) if T[i][enter] > 0]
            if not ratios:  # unbounded: cannot happen with a bounded-below phase-one objective
                return None
            _, _, r = min(ratios)
            piv = T[r][enter]
            T[r] = [v / piv for v in T[r]]
            for i in range(m):
                if i != r and T[i][enter]:
                    f = T[i][enter]
                    T[i] = [a - f * c for a, c in zip(T[i], T[r])]
            basis[r] = enter
        value = sum((cost[basis[i]] * T[i][-1] for i in range(m)), Fraction(0))
        if value == 0:
            p = [Fraction(0)] * (width)
            for i in range(m):
                p[basis[i]] = T[i][-1]
            x = list(shift)
            for c_idx, (j, s) in enumerate(cols):
                x[j] += s * p[c_idx]
            return "feasible", x
        # π_i = c_Bᵀ B⁻¹ e_i: the artificial column i of the tableau is B⁻¹ e_i (times the row's sign)
        y = []
        for k in range(self.m):
            col = nc + len(slacks) + k
            pi = sum((cost[basis[i]] * T[i][col] for i in range(m) if T[i][col]), Fraction(0))
            sign = -1 if rhs[k] < 0 else 1
            y.append(-sign * pi)  # the phase-one's dual is a certificate with the opposite sign
        return "infeasible", y


def solve_exact(M: list, r: list, guess: list, skip_inconsistent: bool = False) -> list | None:
    """A solution of M z = r over the rationals (a column without a pivot keeps ``guess``), or None
    when the system is inconsistent. The rows are taken in order (Gaussian elimination, one row at
    a time: a row is reduced by the pivots so far, then its first non-zero column becomes a pivot);
    ``skip_inconsistent``: a row that contradicts the rows before it is left out instead (the
    earlier rows have priority), so the answer solves a maximal consistent prefix-greedy subset.
    Fraction-free: each row is scaled to integers once (the least common denominator of its
    entries) and every update is an integer combination divided by the gcd of the row (Python
    integers in lists, ``math.gcd`` over the row), so no Fraction is formed until the back
    substitution, last pivot first (a pivot row holds zeros in the columns of the pivots before it:
    the echelon form, without the Gauss–Jordan updates of the earlier rows, which cost twice as much:
    d = 1,000, 16 dense user rows, 17 → 8 ms)."""
    n = len(guess)
    piv: list[tuple[int, list]] = []  # (pivot column, integer row with 0 in the earlier pivots' columns)
    for row, rv in zip(M, r):
        fr = [Fraction(v) for v in row]
        fr.append(Fraction(rv))
        den = lcm(*(v.denominator for v in fr))
        R = [v.numerator * (den // v.denominator) for v in fr]
        for c, P in piv:
            rc = R[c]
            if rc:
                pc = P[c]
                R = _reduced([a * pc - p * rc for a, p in zip(R, P)])
        first = next((j for j in range(n) if R[j]), None)
        if first is None:
            if R[n] and not skip_inconsistent:
                return None
            continue
        piv.append((first, R))
    z = [Fraction(v) for v in guess]
    for c, P in reversed(piv):  # the later pivots' columns are solved already, the earlier ones' are 0 here
        num = Fraction(P[n])
        for j in range(n):
            if j != c and P[j]:
                num -= P[j] * z[j]
        z[c] = num / P[c]
    return z


def _reduced(R: list) -> list:
    """The integer row R divided by the gcd of its entries."""
    g = gcd(*R)
    return [v // g for v in R] if g > 1 else R
