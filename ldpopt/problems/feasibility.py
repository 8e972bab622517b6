"""Infeasible built-in linear constraints, decided exactly before any solver runs, and explained.

The built-in constraints (:mod:`.constraints`, :class:`~.order.Monotone`,
:class:`~.partition.PartitionTotals`) are linear: per-value bounds l ≤ f ≤ u (NonNegative, the
simplex's f ≥ 0, Box, Fixed as l = u) and rows A f = b or A f ≤ b (Σ f = total, SubsetSum ==/<=/>=,
PartitionTotals, Hierarchy, Monotone). By Farkas' lemma (Schrijver, *Theory of Linear and Integer
Programming*, §7.3, Corollary 7.1e in the form with bounds) they have no common point if and only if
there are row multipliers y (y_k ≥ 0 on the ≤ rows, free on the = rows) with

    min_{l ≤ f ≤ u} (Aᵀy)ᵀ f  >  yᵀ b,

the minimum taken per value (c = Aᵀy: c_v·l_v where c_v > 0, c_v·u_v where c_v < 0; a needed infinite
bound makes y no certificate). Any feasible f would give yᵀAf ≤ yᵀb (y ≥ 0 on ≤ rows) and
yᵀAf ≥ the minimum, a contradiction. The constraints with a non-zero multiplier — rows with y_k ≠ 0,
bounds where c_v ≠ 0 — are the ones that conflict, and those are what :class:`Infeasibility` names.

*Finding* y is a float computation; *deciding* is exact. y comes from the phase-one LP (minimise the
total violation Σ s of A f + s = b / A f − s ≤ b over the box) solved by HiGHS (scipy's ``linprog``):
its row duals, negated, are a certificate when the minimum is > 0 (LP duality). Values whose columns
of A agree (e.g. every value outside a SubsetSum) enter that LP as one variable with bounds
[Σ l, Σ u] — exact for feasibility, since a sum of intervals is the interval of the sums — so the LP
has a handful of variables at any d for subset sums, partitions and a Monotone chain on a few values.
Then y is checked exactly: float64 numbers are dyadic rationals m·2^e, so y becomes integers Y
(scaled by a power of two), the built-ins' A has integer entries, c = AᵀY is an integer vector, and
Σ c_v·l_v and Yᵀb are summed exactly as Python integers over the non-zero terms (numpy object
arrays: one pass, no loop over the domain in Python). A y that fails the exact test (a float dual off
by rounding) is retried rounded to 2⁻²⁰; if that fails too, nothing is claimed and the solvers run as
before. Choices where the literature is silent: user callables are left out (infeasibility of the
built-ins alone already makes the problem infeasible); an aggregated LP with more than
:data:`MAX_LP` variables or rows (a full-domain Monotone chain, a large explicit tree) is not solved
here — only conflicting bounds (l_v > u_v) are decided then — and the solver chain answers.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np
import scipy.sparse as sp

__all__ = ["MAX_LP", "Infeasibility", "find_infeasibility", "infeasible_solution"]

#: largest aggregated LP (variables or rows) the pre-check solves; beyond it, bound conflicts only
MAX_LP = 5000


@dataclass
class Infeasibility:
    """A verified Farkas certificate: the conflicting constraints (``names``, in the problem's
    order), the row multipliers y per constraint name (``rows``), for each bound constraint the
    number of values whose bound enters (``bounds``), and ``margin`` = min_box (Aᵀy)ᵀf − yᵀb > 0
    (rounded to float from the exact value), ``source`` ``"ldpopt"`` or the solver's name."""

    names: list
    rows: dict = field(default_factory=dict)
    bounds: dict = field(default_factory=dict)
    margin: float = float("nan")
    source: str = "ldpopt"

    def summary(self) -> str:
        return (f"the constraints {self.names} conflict (Farkas certificate, margin {self.margin:.3g}"
                f"{', verified in exact arithmetic' if self.source == 'ldpopt' else ' from ' + self.source})")

    def to_dict(self) -> dict:
        return {"conflicting": list(self.names), "row_multipliers": self.rows, "bound_values": self.bounds,
                "margin": self.margin, "source": self.source}


def _system(problem):
    """(lo, up, lo_owner, up_owner, A (csr, rows ≤ or =), b, ineq, row_owner, names): the built-in
    linear constraints of ``problem`` (owners index ``names``, -1 where no bound); None if none."""
    from .constraints import Box, Fixed, Hierarchy, NonNegative, Simplex, SubsetSum, SumTo, _indices
    from .order import Monotone
    from .partition import PartitionTotals

    d = problem.estimate.d
    names = problem.constraint_names
    key = {(id(c), j): i for i, (c, j) in enumerate(problem._owners[n] for n in names)}
    lo, up = np.full(d, -np.inf), np.full(d, np.inf)
    lo_own, up_own = np.full(d, -1), np.full(d, -1)
    rows, b, ineq, own = [], [], [], []
    ones = sp.csr_matrix(np.ones((1, d)))

    def bound(which, vals, idx, i):
        arr, who = (lo, lo_own) if which == "lower" else (up, up_own)
        vals = np.broadcast_to(np.asarray(vals, float), idx.shape) if idx is not None else np.broadcast_to(
            np.asarray(vals, float), (d,))
        sel = np.arange(d) if idx is None else idx
        tighter = vals > arr[sel] if which == "lower" else vals < arr[sel]
        arr[sel[tighter]] = vals[tighter]
        who[sel[tighter]] = i

    def row(M, rhs, le, i):
        rows.append(sp.csr_matrix(M))
        b.extend(np.broadcast_to(np.asarray(rhs, float), (M.shape[0],)).tolist())
        ineq.extend([le] * M.shape[0])
        own.extend([i] * M.shape[0])

    for c in problem.constraints:
        i0 = key.get((id(c), 0))
        if i0 is None:
            continue
        if isinstance(c, (Simplex, NonNegative)):
            bound("lower", 0.0, None, i0)
            if isinstance(c, Simplex):
                row(ones, 1.0, False, key[(id(c), 1)])
        elif isinstance(c, SumTo):
            row(ones, c.total, False, i0)
        elif isinstance(c, Box):
            j = 0
            for which in ("lower", "upper"):
                if getattr(c, which) is not None:
                    bound(which, getattr(c, which), None, key[(id(c), j)])
                    j += 1
        elif isinstance(c, Fixed):
            idx = _indices(c.indices, d, "indices")
            vals = np.broadcast_to(c.values, idx.shape) if c.values.shape[0] == 1 else c.values
            for which in ("lower", "upper"):
                bound(which, vals, idx, i0)
        elif isinstance(c, SubsetSum):
            idx = _indices(c.indices, d, "indices")
            sign = -1.0 if c.sense == ">=" else 1.0
            row(sp.csr_matrix((np.full(idx.size, sign), (np.zeros(idx.size, int), idx)), shape=(1, d)),
                sign * c.value, c.sense != "==", i0)
        elif isinstance(c, PartitionTotals):
            row(c.matrix(d), c.totals, False, i0)
        elif isinstance(c, Hierarchy):  # also a range tree's
            M = c.matrix(d)
            row(M, 0.0, False, i0)
        elif isinstance(c, Monotone):
            M = c.matrix(d)
            row(M, 0.0, True, i0)
    A = sp.vstack(rows, format="csr") if rows else sp.csr_matrix((0, d))
    return lo, up, lo_own, up_own, A, np.asarray(b, float), np.asarray(ineq, bool), np.asarray(own, int), names


def _exact_dot(c, x) -> Fraction:
    """Σ c_v x_v exactly: c integers (int64 or Python ints in an object array), x finite float64."""
    nz = (c != 0) & (x != 0)
    if not np.any(nz):
        return Fraction(0)
    mant, ex = np.frexp(x[nz])
    m = (mant * 2.0**53).astype(np.int64)  # exact: |mant| in [0.5, 1)
    e = ex.astype(np.int64) - 53
    e0 = int(e.min())
    terms = c[nz].astype(object) * m.astype(object)
    total = int(np.sum(np.left_shift(terms, (e - e0).astype(object))))
    return Fraction(total) * (Fraction(2) ** e0)


def _verify(y, A, b, ineq, lo, up):
    """(margin, c) when the row multipliers y are an exact Farkas certificate, else None."""
    y = np.where(ineq & (y < 0), 0.0, y)
    if not np.any(y) or not np.all(np.isfinite(y)):
        return None
    data = A.data
    if not np.all(data == np.round(data)) or np.any(np.abs(data) > 2**20):
        return None  # not the built-ins' integer rows
    mant, ex = np.frexp(y)
    m = (mant * 2.0**53).astype(np.int64)
    e = ex.astype(np.int64) - 53
    e0 = int(e[y != 0].min())
    Y = np.left_shift(m.astype(object), np.where(y != 0, e - e0, 0).astype(object))  # y·2^-e0, integers
    At = A.T.tocsr().astype(np.int64)
    coo = At.tocoo()
    c = np.zeros(A.shape[1], dtype=object)
    np.add.at(c, coo.row, coo.data.astype(object) * Y[coo.col])
    pos, neg = c > 0, c < 0
    if np.any(pos & ~np.isfinite(lo)) or np.any(neg & ~np.isfinite(up)):
        return None
    left = _exact_dot(np.where(pos, c, 0), np.where(pos, lo, 0.0)) + _exact_dot(np.where(neg, c, 0),
                                                                                  np.where(neg, up, 0.0))
    right = _exact_dot(Y, b)
    if left <= right:
        return None
    return float((left - right) * Fraction(2) ** e0), c, y


def _aggregate(A, lo, up):
    """Group the values whose columns of A agree (two random projections of the columns; a rare
    collision only weakens the float search, the decision stays exact): (A_g, lo_g, up_g)."""
    d = A.shape[1]
    part = A[np.flatnonzero(np.diff(A.indptr) < d)]  # rows over every value (Σ f) split no group
    inv = np.zeros(d, dtype=np.int64)
    touched = np.bincount(part.indices, minlength=d) > 0
    if np.any(touched):
        h = part.T @ np.random.default_rng(0).standard_normal((part.shape[0], 2))
        _, sub = np.unique(h[touched, 0] + 1j * h[touched, 1], return_inverse=True)
        inv[touched] = sub.ravel() + 1
        inv = np.unique(inv, return_inverse=True)[1].ravel()  # 0..G-1 also when every value is touched
    G = int(inv.max()) + 1
    rep = np.zeros(G, dtype=np.int64)
    rep[inv[::-1]] = np.arange(A.shape[1])[::-1]
    with np.errstate(invalid="ignore"):
        lo_g = np.bincount(inv, weights=lo, minlength=G)
        up_g = np.bincount(inv, weights=up, minlength=G)
    return A[:, rep], lo_g, up_g


def _phase_one(Ag, b, ineq, lo_g, up_g):
    """Row duals of min Σ slack s.t. A_g g ± s (=, ≤) b over the box, negated (a candidate y); None
    when the minimum is 0 (feasible) or HiGHS fails."""
    from scipy.optimize import linprog

    eq, le = np.flatnonzero(~ineq), np.flatnonzero(ineq)
    G, me, mi = Ag.shape[1], eq.size, le.size
    cost = np.concatenate([np.zeros(G), np.ones(2 * me + mi)])
    Ae = sp.hstack([Ag[eq], sp.eye(me), -sp.eye(me), sp.csr_matrix((me, mi))], format="csr") if me else None
    Ai = sp.hstack([Ag[le], sp.csr_matrix((mi, 2 * me)), -sp.eye(mi)], format="csr") if mi else None
    bounds = np.column_stack([np.concatenate([lo_g, np.zeros(2 * me + mi)]),
                              np.concatenate([up_g, np.full(2 * me + mi, np.inf)])])
    res = linprog(cost, A_ub=Ai, b_ub=b[le] if mi else None, A_eq=Ae, b_eq=b[eq] if me else None,
                  bounds=bounds, method="highs")
    if res.status != 0 or not res.fun > 0:
        return None
    y = np.zeros(b.shape[0])
    if me:
        y[eq] = -res.eqlin.marginals
    if mi:
        y[le] = -res.ineqlin.marginals
    return y


def find_infeasibility(problem) -> Infeasibility | None:
    """A verified certificate that the built-in linear constraints of ``problem`` have no common
    point, or None (feasible, or not decided here: module docstring)."""
    lo, up, lo_own, up_own, A, b, ineq, own, names = _system(problem)
    clash = np.flatnonzero(lo > up)  # exact: two bounds on one value disagree
    if clash.size:
        i = clash[0]
        who = sorted({int(lo_own[i]), int(up_own[i])})
        return Infeasibility([names[k] for k in who], {}, {names[k]: 1 for k in who}, float(lo[i] - up[i]))
    if A.shape[0] == 0 or A.shape[0] > MAX_LP:
        return None
    if A.shape[0] == 1 and A.indptr[1] == A.shape[1] and np.all(A.data == 1.0):
        # the simplex family: one Σ f = t; clearly inside [Σ l, Σ u] (rounding bound d·eps·Σ|.|) → feasible
        t, slack = b[0], 4 * A.shape[1] * np.finfo(float).eps
        sl, su = float(np.sum(lo)), float(np.sum(up))
        above = sl + slack * float(np.sum(np.abs(lo))) < t  # nan (an infinite l) compares False
        below = su == np.inf or t < su - slack * float(np.sum(np.abs(up)))
        if above and below:
            return None
    Ag, lo_g, up_g = _aggregate(A, lo, up)
    if Ag.shape[1] > MAX_LP:
        return None
    y = _phase_one(Ag, b, ineq, lo_g, up_g)
    if y is None:
        return None
    scale = float(np.max(np.abs(y)))
    for cand in (y, np.round(y / scale * 2.0**20) / 2.0**20):
        got = _verify(cand, A, b, ineq, lo, up)
        if got is not None:
            break
    else:
        return None
    margin, c, y = got
    rows = {}
    for k in np.flatnonzero(y):
        rows.setdefault(names[own[k]], []).append(float(y[k]))
    bounds = {}
    for sel, who in ((c > 0, lo_own), (c < 0, up_own)):
        ks, counts = np.unique(who[sel.astype(bool)], return_counts=True)
        for k, n in zip(ks, counts):
            bounds[names[int(k)]] = bounds.get(names[int(k)], 0) + int(n)
    used = set(rows) | set(bounds)
    return Infeasibility([n for n in names if n in used], {k: v[0] if len(v) == 1 else v for k, v in rows.items()},
                         bounds, margin)


def infeasible_solution(problem):
    """The ``"infeasible"`` :class:`~ldpopt.problems.Solution` of ``problem`` when
    :func:`find_infeasibility` proves its constraints conflict; else None (solve as usual)."""
    import time

    from .solution import Solution

    start = time.perf_counter()
    try:
        cert = find_infeasibility(problem)
    except ValueError:  # malformed data (bad indices, ...): the solver route raises it as before
        return None
    if cert is None:
        return None
    sol = Solution(np.full(problem.estimate.d, np.nan), "infeasible", False, np.inf, solver="LDPOPT-FEASIBILITY",
                   objective=problem.objective.name, message=cert.summary(), infeasibility=cert)
    sol.wall_time = time.perf_counter() - start
    sol.attempts = [{"solver": sol.solver, "status": sol.status, "checks": "", "seconds": sol.wall_time}]
    return sol
