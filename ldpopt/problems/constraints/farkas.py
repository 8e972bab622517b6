"""Farkas certificates for a box and linear rows, l ≤ f ≤ u with A f = b / A f ≤ b: found in float
(interval candidates, the phase-one LP by HiGHS on values aggregated by their columns) and verified in
exact integer arithmetic. The reasoning and the choices are in :mod:`.feasibility`, which applies
this to a :class:`~ldpopt.problems.Problem`'s built-in constraints and names what conflicts.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import scipy.sparse as sp

__all__ = ["MAX_DENSE", "aggregate", "dense_phase_one", "highs", "interval_candidates", "phase_one", "refined_phase_one",
           "same_columns", "verify"]


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


def verify(y, A, b, ineq, lo, up):
    """(margin, c, y, within_rounding) when the row multipliers y are an exact Farkas certificate
    (margin > 0 in exact arithmetic on the data as given), else None. ``within_rounding``: the margin
    is no larger than what rounding the data themselves could explain (below), e.g. decimal totals
    0.1 + 0.1 + 0.8 = 1 + 2⁻⁵⁴ in binary: still a conflict, said so in the message."""
    y = np.where(ineq & (y < 0), 0.0, y)
    if not np.any(y) or not np.all(np.isfinite(y)) or not np.all(np.isfinite(A.data)):
        return None
    n_values, y_given = A.shape[1], y
    rows, cols, data, b, y = _integer_rows(A, b, y)
    if rows is None:
        return None
    mant, ex = np.frexp(y)
    m = (mant * 2.0**53).astype(np.int64)
    e = ex.astype(np.int64) - 53
    e0 = int(e[y != 0].min())
    Y = np.left_shift(m.astype(object), np.where(y != 0, e - e0, 0).astype(object))  # y·2^-e0, integers
    c = np.zeros(n_values, dtype=object)  # c = AᵀY, exactly
    np.add.at(c, cols, data * Y[rows])
    pos, neg = c > 0, c < 0
    if np.any(pos & ~np.isfinite(lo)) or np.any(neg & ~np.isfinite(up)):
        c, Y = _repair(c, Y, rows, cols, data, ineq, lo, up)
        if c is None:
            return None
        pos, neg = c > 0, c < 0
        y_given = np.array([float(v) for v in Y.tolist()]) * 2.0**e0 * np.ldexp(1.0, -_row_shift(A))
    bound = np.where(pos, lo, np.where(neg, up, 0.0))
    left = _exact_dot(c, bound)
    right = _exact_dot(Y, b)
    if not left > right:
        return None
    # the data's own rounding (:mod:`.feasibility`): each number x given as x(1 + δ) with
    # |δ| ≤ γ_d ≈ d·2⁻⁵³ moves the margin by at most γ_d·(Σ|c_v·bound_v| + Σ|Y_k·b_k|)
    size = _exact_dot(np.abs(c), np.abs(bound)) + _exact_dot(np.abs(Y), np.abs(b))
    return float((left - right) * Fraction(2) ** e0), c, y_given, left - right <= size * Fraction(n_values, 2**53)


def _repair(c, Y, rows, cols, data, ineq, lo, up):
    """(c, Y) with the entries of c = AᵀY whose sign needs an infinite bound (a float multiplier's
    rounding leaves c_v = −1e-30 where only f_v ≥ 0 is stated) cancelled by adding an integer
    multiple of one row whose coefficients have one sign and cover them (Σ f = 1 does: it adds the
    same amount to every c_v), exactly in integers; (None, None) when no such row exists. The margin
    is recomputed on the result by the caller, so the repair claims nothing by itself."""
    bad_up = (c < 0) & ~np.isfinite(up)  # needs c_v raised
    bad_lo = (c > 0) & ~np.isfinite(lo)  # needs c_v lowered
    if np.any(bad_up) and np.any(bad_lo):
        return None, None
    need = np.flatnonzero(bad_up | bad_lo)
    up_side = bool(np.any(bad_up))
    m = Y.shape[0]
    count = np.bincount(rows, minlength=m)
    pos_row = np.bincount(rows, weights=(data > 0).astype(float), minlength=m) == count
    neg_row = np.bincount(rows, weights=(data < 0).astype(float), minlength=m) == count
    covers = np.bincount(rows[np.isin(cols, need)], minlength=m) == need.size
    for k in np.flatnonzero(covers & (pos_row | neg_row) & (count > 0)):
        sel = slice(*np.searchsorted(rows, [k, k + 1]))
        a = np.zeros(c.shape[0], dtype=object)
        a[cols[sel]] = data[sel]
        direction = 1 if (up_side == bool(pos_row[k])) else -1  # the sign of the multiple: c_v + t·a_v
        if ineq[k] and direction < 0:
            continue  # a ≤ row's multiplier may only grow
        t = max(-(-abs(int(cv)) // abs(int(av))) for cv, av in zip(c[need].tolist(), a[need].tolist()))
        c2 = c + direction * t * a
        if not (np.any((c2 > 0) & ~np.isfinite(lo)) or np.any((c2 < 0) & ~np.isfinite(up))):
            Y2 = Y.copy()
            Y2[k] = Y2[k] + direction * t
            return c2, Y2
    return None, None


def _row_shift(A):
    """The power of two s_k that :func:`_integer_rows` multiplies row k by."""
    A = sp.csr_matrix(A)
    mant, ex = np.frexp(A.data)
    m = (mant * 2.0**53).astype(np.int64)
    e = ex.astype(np.int64) - 53
    tz = np.where(m != 0, np.log2((m & -m).astype(np.float64)), 0).astype(np.int64)
    rows = np.repeat(np.arange(A.shape[0]), np.diff(A.indptr))
    low = np.full(A.shape[0], 0, dtype=np.int64)
    np.minimum.at(low, rows, np.where(m != 0, e + tz, 0))
    return low  # y_k in the scaled rows is y_k·2^low_k


def _integer_rows(A, b, y):
    """(row, column, entry, b, y) with each row k of A and b_k multiplied by 2^s_k so that the row's
    entries are integers (float64 entries are m·2^e, so this is exact) and y_k divided by 2^s_k (the
    same certificate); the entries as exact Python integers (object array). A user's row with any
    float coefficients is decided as exactly as the built-ins' ±1 rows. All None when a scaled number
    leaves float64's range."""
    A = sp.csr_matrix(A)
    mant, ex = np.frexp(A.data)
    m = (mant * 2.0**53).astype(np.int64)
    e = ex.astype(np.int64) - 53
    tz = np.where(m != 0, np.log2((m & -m).astype(np.float64)), 0).astype(np.int64)  # trailing zero bits
    m, e = m >> tz, e + tz  # odd m: entry = m·2^e with e as large as it goes
    rows = np.repeat(np.arange(A.shape[0]), np.diff(A.indptr))
    low = np.full(A.shape[0], 0, dtype=np.int64)
    np.minimum.at(low, rows, np.where(m != 0, e, 0))  # ≤ 0: integer rows stay as they are
    shift = -low
    with np.errstate(over="ignore", under="ignore"):
        b2 = np.ldexp(np.asarray(b, float), shift)
        y2 = np.ldexp(np.asarray(y, float), -shift)
    if not (np.all(np.isfinite(b2)) and np.all((y2 != 0) == (np.asarray(y) != 0))
            and np.all(np.ldexp(y2, shift) == y) and np.all(np.ldexp(b2, -shift) == b)):
        return None, None, None, None, None
    data = np.left_shift(m.astype(object), (e + shift[rows]).astype(object))
    return rows, A.indices, data, b2, y2


def aggregate(A, lo, up):
    """Group the values whose columns of A agree (two random projections of the columns; a rare
    collision only weakens the float search, the decision stays exact): (A_g, lo_g, up_g, inv),
    inv the group of each value. :func:`same_columns` says whether every group's columns agree
    exactly (what the exact step on the aggregated system needs)."""
    d = A.shape[1]
    nnz = np.diff(A.indptr)
    flat = np.zeros(A.shape[0], bool)  # rows with one number on every value (Σ f)
    if A.nnz:
        at = np.minimum(A.indptr[:-1], A.nnz - 1)  # an empty row's entry is not read (nnz ≠ d)
        flat = (nnz == d) & (np.maximum.reduceat(A.data, at) == np.minimum.reduceat(A.data, at))
    part = A[np.flatnonzero(~flat)]  # the rows that split values into groups
    inv = np.zeros(d, dtype=np.int64)
    touched = np.bincount(part.indices, minlength=d) > 0
    if np.any(touched) and part.shape[0] <= 12 and np.all(np.abs(part.data) == 1):
        # few ±1 rows (subset sums, partitions, short chains): a value's column as a base-3 code, O(d)
        code = (part.data < 0) + 1.0
        key = np.asarray(sp.csr_matrix((code, part.indices, part.indptr), shape=part.shape).T
                         @ (3.0 ** np.arange(part.shape[0])), dtype=np.int64)
        inv = np.cumsum(np.bincount(key) > 0)[key] - 1
    elif np.any(touched):
        h = part.T @ np.random.default_rng(0).standard_normal((part.shape[0], 2))
        _, sub = np.unique(h[touched, 0] + 1j * h[touched, 1], return_inverse=True)
        inv[touched] = sub.ravel() + 1
        inv = np.unique(inv, return_inverse=True)[1].ravel()  # 0..G-1 also when every value is touched
    G = int(inv.max()) + 1
    if G == d:  # no two columns agree: the system as it is, one group per value (no copy of A's columns)
        return A, np.array(lo, dtype=np.float64), np.array(up, dtype=np.float64), np.arange(d)
    rep = np.zeros(G, dtype=np.int64)
    rep[inv[::-1]] = np.arange(A.shape[1])[::-1]
    with np.errstate(invalid="ignore"):
        lo_g = np.bincount(inv, weights=lo, minlength=G)
        up_g = np.bincount(inv, weights=up, minlength=G)
    return A[:, rep], lo_g, up_g, inv


def same_columns(A, Ag, inv) -> bool:
    """Whether every value's column of A equals its group's column of A_g exactly: the stored
    (row, entry) pairs of each column compared in CSC order, O(nnz) (no column gather of A_g)."""
    C, Cg = sp.csc_matrix(A, copy=True), sp.csc_matrix(Ag, copy=True)
    for M in (C, Cg):
        M.eliminate_zeros()
        M.sort_indices()
    n = np.diff(C.indptr)
    if not np.array_equal(n, np.diff(Cg.indptr)[inv]):
        return False
    within = np.arange(C.nnz) - np.repeat(C.indptr[:-1], n)  # each entry's place in its column
    at = np.repeat(Cg.indptr[:-1][inv], n) + within
    return bool(np.array_equal(C.indices, Cg.indices[at]) and np.array_equal(C.data, Cg.data[at]))


def phase_one(Ag, b, ineq, lo_g, up_g, time_limit: float | None = None):
    """(y, x): the row duals of min Σ slack s.t. A_g g ± s (=, ≤) b over the box, negated (a
    candidate y; None when they are all 0), and HiGHS's point g (a candidate for the exact repair,
    :meth:`.exact_lp.ExactSystem.repair`); (None, None) when HiGHS fails. Taken also when HiGHS's minimum is 0: a conflict thinner than
    its tolerances (1e-7) reads as feasible there, while its duals can still be the certificate,
    which :func:`verify` decides exactly. ``time_limit`` (seconds; None: none): HiGHS's own limit —
    an LP stopped at it is a failure here, (None, None): nothing is claimed from it."""
    eq, le = np.flatnonzero(~ineq), np.flatnonzero(ineq)
    G, me, mi = Ag.shape[1], eq.size, le.size
    cost = np.concatenate([np.zeros(G), np.ones(2 * me + mi)])
    Ae = sp.hstack([Ag[eq], sp.eye(me), -sp.eye(me), sp.csr_matrix((me, mi))], format="csr") if me else None
    Ai = sp.hstack([Ag[le], sp.csr_matrix((mi, 2 * me)), -sp.eye(mi)], format="csr") if mi else None
    bounds = np.column_stack([np.concatenate([lo_g, np.zeros(2 * me + mi)]),
                              np.concatenate([up_g, np.full(2 * me + mi, np.inf)])])
    res = highs(cost, dict(A_ub=Ai, b_ub=b[le] if mi else None, A_eq=Ae, b_eq=b[eq] if me else None,
                            bounds=bounds), time_limit)
    if res is None or res.status != 0:
        return None, None
    y = np.zeros(b.shape[0])
    if me:
        y[eq] = -res.eqlin.marginals
    if mi:
        y[le] = -res.ineqlin.marginals
    return (y if np.any(y) and np.all(np.isfinite(y)) else None), res.x[:G]


#: seconds past HiGHS's own time limit after which its child process is killed
HIGHS_GRACE = 0.5
#: seconds after which an LP of a solve without a time limit is killed (HiGHS hung: a failed LP)
HIGHS_NO_LIMIT = 600.0


def _linprog(cost, **kwargs):
    """scipy's ``linprog`` (HiGHS): what :func:`highs` runs in the worker's child."""
    from scipy.optimize import linprog

    return linprog(cost, **kwargs)


def highs(cost, kwargs: dict, time_limit: float | None):
    """scipy's ``linprog(cost, method="highs", **kwargs)`` in a child of the clean worker process
    (:mod:`ldpopt.problems.worker`), so that HiGHS's exception, crash or hang is one failed LP (None),
    never this process's: killed at ``time_limit`` (HiGHS's own limit too) + :data:`HIGHS_GRACE`
    (:data:`HIGHS_NO_LIMIT` without one). Every HiGHS call of a solve goes through here (the exact
    feasibility decision's LPs, the check's active-set LP).
    In this process where the worker cannot run (no ``fork``). A call costs 1-3 ms more than in
    this process (the worker's child lent to this process; ``benchmarks/bench_worker.py``)."""
    import os

    from .. import worker

    opts = dict(kwargs, method="highs",
                options=None if time_limit is None else {"time_limit": max(float(time_limit), 1e-3)})
    if not hasattr(os, "fork"):
        try:
            return _linprog(cost, **opts)
        except Exception:  # noqa: BLE001 - HiGHS's failure: one failed LP, nothing claimed
            return None
    try:
        return worker.call(_linprog, (cost,), HIGHS_NO_LIMIT if time_limit is None else float(time_limit) + HIGHS_GRACE,
                           "HiGHS", kwargs=opts)
    except (worker.Crashed, worker.Raised, worker.TimedOut):
        return None


#: largest tableau side (rows, columns) :func:`dense_phase_one` takes: a search on a handful of
#: aggregated values, where HiGHS's set-up through scipy costs more than the pivots
MAX_DENSE = 400


def dense_phase_one(Ag, b, ineq, lo_g, up_g):
    """A float vertex x of l ≤ x ≤ u, A x (= or ≤) b found by a dense phase-one simplex (Dantzig's
    rule, the smallest index among ties; Chvátal, *Linear Programming*, 1983, ch. 3 and 8), or None
    when the system is not small (:data:`MAX_DENSE`), a lower bound is infinite, the minimum total
    violation is not 0 to 10⁻¹² of the data's scale, or the pivots do not end. A search only, like
    HiGHS's point in :func:`phase_one`: the caller repairs it and checks it exactly
    (:meth:`.exact_lp.ExactSystem.repair`), so a vertex off by rounding claims nothing. Standard form:
    x = l + p, p ≥ 0, a slack on each ≤ row and on p_j ≤ u_j − l_j for a finite u_j, every row's
    right-hand side made ≥ 0, an artificial per row."""
    A = np.asarray(Ag.toarray() if sp.issparse(Ag) else Ag, dtype=np.float64)
    m, n = A.shape
    lo_g, up_g = np.asarray(lo_g, float), np.asarray(up_g, float)
    if not np.all(np.isfinite(lo_g)) or not np.all(np.isfinite(A)) or not np.all(np.isfinite(b)):
        return None
    ub = np.flatnonzero(np.isfinite(up_g))
    le = np.flatnonzero(ineq)
    R = m + ub.size
    cols = n + le.size + ub.size
    if R > MAX_DENSE or cols + R > MAX_DENSE:
        return None
    T = np.zeros((R, cols + R + 1))
    T[:m, :n] = A
    T[le, n + np.arange(le.size)] = 1.0
    T[m + np.arange(ub.size), ub] = 1.0
    T[m + np.arange(ub.size), n + le.size + np.arange(ub.size)] = 1.0
    T[:m, -1] = b - A @ lo_g
    T[m:, -1] = up_g[ub] - lo_g[ub]
    T[T[:, -1] < 0] *= -1.0
    T[:, cols:cols + R] = np.eye(R)
    basis = cols + np.arange(R)
    scale = max(1.0, float(np.max(np.abs(T[:, -1]))))
    tol = 1e-12 * scale
    reduced = -T.sum(axis=0)  # phase-one reduced costs: Σ artificials, every artificial basic
    reduced[cols:cols + R] = 0.0
    for _ in range(3 * (R + cols)):  # a phase one takes about R pivots; a cycle ends here (None)
        enter = int(np.argmin(reduced[:cols]))
        if reduced[enter] >= -1e-12:
            break
        col = T[:, enter]
        pos = col > 1e-12
        if not np.any(pos):
            return None
        ratio = np.where(pos, T[:, -1] / np.where(pos, col, 1.0), np.inf)
        r = int(np.flatnonzero(ratio == ratio.min())[0])
        T[r] /= T[r, enter]
        T -= np.outer(T[:, enter], T[r]) * (np.arange(R) != r)[:, None]
        reduced -= reduced[enter] * T[r]
        basis[r] = enter
    else:
        return None
    if -reduced[-1] > tol:  # the total violation left
        return None
    p = np.zeros(cols + R)
    p[basis] = T[:, -1]
    return lo_g + p[:n]


def refined_phase_one(A, b, ineq, lo, up, x0, sub, time_limit: float | None = None):
    """(y, x1): one step of iterative refinement of the phase-one LP (Gleixner, Steffy & Wolter,
    "Iterative refinement for linear programming", *INFORMS J. Comput.* 28, 2016) around HiGHS's
    point x0. The exact residual r = b − A x0 (:func:`.exact_point.exact_residual`) and the bound
    gaps are scaled by S = 2^k ≈ 1 / (the largest violation of x0), and the phase-one LP is solved
    for the correction δ = S·(x − x0): a conflict of 1e-13 that HiGHS's tolerance (1e-7) hid is of
    size ~1 there. The rows A are the same, so the correction LP's duals y are a Farkas candidate
    for the system as given (checked exactly by :func:`verify`); x1 = x0 + δ/S is a point ~S times
    closer (a candidate for :func:`.exact_point.exact_point`). The LP is solved in the variables of
    ``sub`` (a :class:`.chain_substitution.ChainSubstitution`, the identity when inactive). (None,
    None) when x0 meets every row and bound in float already (nothing to refine) or HiGHS fails."""
    from .exact_point import exact_residual

    r = sub.rows_residual(exact_residual(A, b, x0), x0)
    As, _, ins, los, ups = sub.system()
    g0 = sub.to_g(x0)
    with np.errstate(invalid="ignore"):
        lo_gap, up_gap = los - g0, ups - g0
    viol = max(float(np.max(np.abs(r[~ins]), initial=0.0)), float(np.max(-r[ins], initial=0.0)),
               float(np.max(lo_gap, initial=0.0)), float(np.max(-up_gap, initial=0.0)))
    if not (np.isfinite(viol) and viol > 0):
        return None, None
    S = 2.0 ** -np.floor(np.log2(viol))
    y, delta = phase_one(As, S * r, ins, S * lo_gap, S * up_gap, time_limit)
    return sub.duals(y), (None if delta is None else x0 + sub.point(delta) / S)


def _box_range(A, lo, up):
    """(min, max) of each row A_k f over the box l ≤ f ≤ u in float (±inf where a needed bound is)."""
    A = sp.csr_matrix(A)  # the positive and negative parts on A's own pattern (no sort of its indices)
    P = sp.csr_matrix((np.maximum(A.data, 0.0), A.indices, A.indptr), shape=A.shape)
    N = sp.csr_matrix((np.minimum(A.data, 0.0), A.indices, A.indptr), shape=A.shape)
    fin_lo, fin_up = np.isfinite(lo), np.isfinite(up)
    lo0, up0 = np.where(fin_lo, lo, 0.0), np.where(fin_up, up, 0.0)
    X = np.column_stack([lo0, up0, ~fin_lo, ~fin_up]).astype(np.float64)  # one pass over A for the four
    return _range_from(P @ X, N @ X)


#: most entries (rows × values) of the interval screen's rows taken as a dense array when most are non-zero
MAX_DENSE_SCREEN = 4_000_000


def _range_from(PX, NX):
    """(min, max) per row from the products of the positive (P) and negative (N) parts of the rows with
    the columns (l, u, l infinite, u infinite) — l and u with 0 where infinite."""
    mins = PX[:, 0] + NX[:, 1]
    maxs = PX[:, 1] + NX[:, 0]
    mins[(PX[:, 2] - NX[:, 3]) > 0] = -np.inf
    maxs[(PX[:, 3] - NX[:, 2]) > 0] = np.inf
    return mins, maxs


def _row_extremes(M):
    """(max, min) of each row of the csr matrix M, its implicit zeros included (as ``M.max(axis=1)``),
    read from the stored entries in their order (no sort of the indices)."""
    m, n = M.shape
    nnz = np.diff(M.indptr)
    full = nnz > 0
    mx, mn = np.zeros(m), np.zeros(m)
    if np.any(full):
        data = M.data[:M.indptr[-1]]
        at = M.indptr[:-1][full]
        mx[full], mn[full] = np.maximum.reduceat(data, at), np.minimum.reduceat(data, at)
    part = nnz < n
    return np.where(part, np.maximum(mx, 0.0), mx), np.where(part, np.minimum(mn, 0.0), mn)


def interval_candidates(A, b, ineq, own, lo, up) -> list:
    """Exact interval reasoning for the listed families, screened in float: the multipliers y of one
    row alone (a subset total below 0, box bounds summing above the total, fixed values against a
    subset total), of one constraint's rows together (partition totals), and of either with a Σ f
    row (a subset total above the whole mass), best float margin first. Each is then checked
    exactly (:func:`verify`), so the float screen decides nothing by itself. The Σ f rows are taken
    in closed form (Σ l, Σ u), so the cost is O(d + nnz of the other rows)."""
    m, d = A.shape
    fin_lo, fin_up = np.isfinite(lo), np.isfinite(up)
    lo0, up0 = np.where(fin_lo, lo, 0.0), np.where(fin_up, up, 0.0)
    n_lo_inf, n_up_inf = int(np.sum(~fin_lo)), int(np.sum(~fin_up))
    sum_lo = -np.inf if n_lo_inf else float(np.sum(lo0))
    sum_up = np.inf if n_up_inf else float(np.sum(up0))
    nnz = np.diff(A.indptr)
    full = [k for k in np.flatnonzero((nnz == d) & ~ineq) if np.all(A.data[A.indptr[k]:A.indptr[k + 1]] == 1.0)]
    keep = np.ones(m, bool)
    keep[np.asarray(full, dtype=np.int64)] = False
    part = np.flatnonzero(keep)
    blocks = [r for r in (part[own[part] == k] for k in np.unique(own[part]))
              if r.size > 1 and (np.all(ineq[r]) or not np.any(ineq[r]))]
    # B: one pseudo-row per kept row (e_k), then one per block (the sum of its rows), as csr directly
    sizes = np.r_[np.ones(part.size, dtype=np.int64), np.array([r.size for r in blocks], dtype=np.int64)]
    cols = np.concatenate([part] + blocks).astype(np.int64)
    B = sp.csr_matrix((np.ones(cols.size), cols, np.r_[0, np.cumsum(sizes)]), shape=(sizes.size, m))
    AB, bB = B @ A, B @ b
    eqB = np.concatenate([~ineq[part], [not ineq[r[0]] for r in blocks]]).astype(bool)
    AB = sp.csr_matrix(AB)  # a product's indices are unsorted: its entries read as they are (no sort)
    Y = np.column_stack([np.abs(lo0) + np.abs(up0), lo0, up0, ~fin_lo, ~fin_up]).astype(np.float64)
    if AB.shape[0] * d <= MAX_DENSE_SCREEN and AB.nnz >= 0.25 * AB.shape[0] * d:  # dense rows: numpy's products
        D = AB.toarray()
        absD = np.abs(D)
        # numpy's own loops, not BLAS: OpenBLAS would run these few long rows on threads that then spin
        mins, maxs = _range_from(np.einsum("ik,kj->ij", np.maximum(D, 0.0), Y[:, 1:]),
                                 np.einsum("ik,kj->ij", np.minimum(D, 0.0), Y[:, 1:]))
        ab = np.einsum("ik,kj->ij", absD, Y)
        pos, neg, top = D.max(axis=1), D.min(axis=1), absD.max(axis=1)
    else:
        mins, maxs = _box_range(AB, lo, up)
        absB = sp.csr_matrix((np.abs(AB.data), AB.indices, AB.indptr), shape=AB.shape)
        ab = absB @ Y
        pos, neg = _row_extremes(AB)
        top = _row_extremes(absB)[0]
    tol = 1e-9 * (ab[:, 0] + np.abs(bB) + abs(sum_lo if n_lo_inf == 0 else 0)) + 1e-300
    # (float margin, {pseudo-row or ("full", s): coefficient})
    out: list[tuple[float, dict[np.integer | tuple[str, np.integer], float]]] = []
    for k in np.flatnonzero(mins - bB > -tol):
        out.append((mins[k] - bB[k], {k: 1.0}))
    for k in np.flatnonzero(eqB & (bB - maxs > -tol)):
        out.append((bB[k] - maxs[k], {k: -1.0}))
    sign = np.where(neg >= 0, 1.0, np.where(pos <= 0, -1.0, 0.0))
    one_sign = (sign != 0) & (top == 1)
    in_lo, in_up = ab[:, 1], ab[:, 2]
    lo_inf = n_lo_inf - ab[:, 3] > 0  # an infinite bound outside the row's values
    up_inf = n_up_inf - ab[:, 4] > 0
    for s_ in full:
        t = b[s_]
        for alpha, low, rhs in ((1.0, sum_lo, t), (-1.0, -sum_up, -t)):  # the Σ f row alone
            if low - rhs > -1e-9 * (abs(t) + abs(low)):
                out.append((low - rhs, {("full", s_): alpha}))
        out_lo = float(np.sum(lo0)) - in_lo
        out_up = float(np.sum(up0)) - in_up
        for alpha in (1.0, -1.0):
            beta = -sign * alpha  # y = α e_s + β e_k: c = α off the row's values, 0 on them
            low_k = np.where(lo_inf, -np.inf, out_lo) if alpha > 0 else np.where(up_inf, -np.inf, -out_up)
            margin = low_k - (alpha * t + beta * bB)
            for k in np.flatnonzero(one_sign & (eqB | (beta >= 0)) & (margin > -tol)):
                out.append((margin[k], {("full", s_): alpha, k: beta[k]}))
    out.sort(key=lambda e: -e[0])
    ys = []
    for _, coef in out[:6]:
        yB = np.zeros(B.shape[0])
        y = np.zeros(m)
        for key, v in coef.items():
            if isinstance(key, tuple):
                y[key[1]] += v
            else:
                yB[key] += v
        ys.append(y + np.asarray(B.T @ yB).ravel())
    return ys
