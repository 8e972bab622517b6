"""An exact feasible point of l ≤ x ≤ u, A x (= or ≤) b at any size, from a float LP point: the
"verified LP" step of the feasibility decision (:mod:`.feasibility`) for systems too large for the
rational simplex of :mod:`.exact_lp`.

Notes: docs/notes/problems.md, "ldpopt.problems.constraints.exact_point".
"""

from __future__ import annotations

import math
from fractions import Fraction
from math import lcm

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

from .exact_lp import solve_exact
from .nested_sums import NestedSums

__all__ = ["MAX_BASIS", "MAX_VERIFIED_ROWS", "exact_point", "exact_residual", "point_ok", "verified_point"]

#: most tight rows (after contraction and substitution) solved in rational arithmetic for one point
MAX_BASIS = 60


def _dyadic(x):
    """(m, e) int64 arrays with x = m·2^e exactly, m odd (x finite float64; m = 0, e = 0 for x = 0):
    e as large as it goes, so that an integer x has e ≥ 0 and a common scale 2^E of several numbers
    (:func:`_min_exp`) leaves them as few bits as their values need."""
    mant, ex = np.frexp(np.asarray(x, dtype=np.float64))
    m = (mant * 2.0**53).astype(np.int64)
    tz = np.where(m != 0, np.log2(np.maximum(m & -m, 1).astype(np.float64)), 53.0).astype(np.int64)  # trailing 0s
    return m >> tz, np.where(m != 0, ex.astype(np.int64) - 53 + tz, 0)


def _as_int(x, E: int):
    """x·2^−E as exact Python integers (object array); every finite x must be a multiple of 2^E."""
    m, e = _dyadic(np.where(np.isfinite(x), x, 0.0))
    return np.left_shift(m.astype(object), np.maximum(e - E, 0).astype(object)) * (m != 0)


def _scaled(x, E: int, L: int = 1):
    """x·2^−E·L as exact integers (every finite x a multiple of 2^E, L a positive integer): int64
    where every value is below 2⁶¹ in magnitude (a float bound with room), else Python ints in an
    object array (:func:`_as_int`) — the same numbers, the int64 ones without an object per value."""
    x = np.where(np.isfinite(x), np.asarray(x, dtype=np.float64), 0.0)
    top = float(np.max(np.abs(x), initial=0.0))
    if -E < 900 and L < 2**61 and top * 2.0**-E * L < 2.0**61:
        m, e = _dyadic(x)
        return np.left_shift(m, np.where(m != 0, e - E, 0)) * np.int64(L)
    return _as_int(x, E) * L


def _min_exp(*arrays) -> int:
    """The smallest binary exponent of the non-zero finite entries (0 when none), capped at 0."""
    low = 0
    for x in arrays:
        x = np.asarray(x, dtype=np.float64)
        x = x[np.isfinite(x) & (x != 0)]
        if x.size:
            low = min(low, int(_dyadic(x)[1].min()))
    return low


def exact_residual(A, b, x) -> np.ndarray:
    """b − A x for float x, computed exactly (integers) and rounded to float once per row."""
    A = sp.csr_matrix(A)
    x = np.asarray(x, dtype=np.float64)
    E2 = min(_min_exp(A.data) + _min_exp(x), _min_exp(b))
    ma, ea = _dyadic(A.data)
    mx, ex = _dyadic(x[A.indices])
    nz = (ma != 0) & (mx != 0)
    prod = ma.astype(object) * mx.astype(object)
    terms = np.left_shift(prod, np.where(nz, ea + ex - E2, 0).astype(object)) * nz
    rows = np.repeat(np.arange(A.shape[0]), np.diff(A.indptr))
    acc = np.zeros(A.shape[0], dtype=object)
    np.add.at(acc, rows, terms)
    res = _as_int(b, E2) - acc
    return np.array([_to_float(int(v), E2) for v in res.tolist()])


def _to_float(n: int, E: int) -> float:
    """n·2^E rounded to float64 (correctly up to a subnormal result)."""
    if n == 0:
        return 0.0
    shift = max(n.bit_length() - 60, 0)
    return float(np.ldexp(float(n >> shift) if n > 0 else -float((-n) >> shift), E + shift))


def point_ok(A, b, ineq, lo, up, x_float, comp=None, fracs: dict | None = None, nested=None) -> bool:
    """Whether the point x meets every bound and row exactly: x_v = ``fracs[comp[v]]`` (a Fraction
    per block) where the value's block has one, else ``x_float[v]``; with ``nested`` (an active
    :class:`.nested_sums.NestedSums`), each value it defines is its exact sum of the others instead."""
    x_float = np.asarray(x_float, dtype=np.float64)
    fracs = fracs or {}
    comp = np.zeros(x_float.size, dtype=np.int64) if comp is None else comp
    defined = nested.defined if nested is not None and nested.active else np.zeros(x_float.size, bool)
    x_float = np.where(defined, 0.0, x_float)
    if not np.all(np.isfinite(x_float)):
        return False
    blocks = np.fromiter(fracs, dtype=np.int64, count=len(fracs))
    plain = ~np.isin(comp, blocks) & ~defined
    if np.any(plain & (x_float < lo)) or np.any(plain & (x_float > up)):
        return False
    for g, z in fracs.items():  # one comparison per solved block against its members' tightest bounds
        members = comp == g
        lo_g, up_g = float(np.max(lo[members])), float(np.min(up[members]))
        if (np.isfinite(lo_g) and z < Fraction(lo_g)) or (np.isfinite(up_g) and z > Fraction(up_g)):
            return False
    A = sp.csr_matrix(A)
    L = lcm(*(z.denominator for z in fracs.values())) if fracs else 1
    # A_kv = M_kv·2^Ea; x_v = X_v·2^Ex / L; b_k = B_k·2^(Ea+Ex) / L, every M, X, B an integer
    Ea = _min_exp(A.data)
    bd_lo, bd_up = np.where(defined, lo, 0.0), np.where(defined, up, 0.0)  # the defined values' bounds
    Ex = min(_min_exp(np.where(plain, x_float, 0.0)), _min_exp(b) - Ea, _min_exp(bd_lo, bd_up), 0)
    X = _scaled(np.where(plain, x_float, 0.0), Ex, L)
    if fracs:
        Zs = {g: int(z * L * Fraction(2) ** -Ex) for g, z in fracs.items()}
        if X.dtype != object and max(abs(v) for v in Zs.values()) >= 2**61:
            X = X.astype(object)
        Z = np.zeros(int(comp.max()) + 1, dtype=X.dtype)
        for g, zg in Zs.items():
            Z[g] = zg
        X = np.where(plain | defined, X, Z[comp])
    if np.any(defined):
        X = nested.propagate(X)
        fin_lo, fin_up = defined & np.isfinite(lo), defined & np.isfinite(up)
        if np.any(X[fin_lo] < _scaled(lo[fin_lo], Ex, L)) or np.any(X[fin_up] > _scaled(up[fin_up], Ex, L)):
            return False
    common = x_float[plain]
    X0 = 0
    if common.size:
        vals, counts = np.unique(common, return_counts=True)
        X0 = int(_as_int(vals[np.argmax(counts)][None], Ex)[0]) * L
    lhs = _row_dot(A, Ea, X, X0)
    rhs = _scaled(b, Ea + Ex, L)
    le = np.asarray(ineq, bool)
    return bool(np.all(lhs[le] <= rhs[le]) and np.all(lhs[~le] == rhs[~le]))


def _row_dot(A, Ea: int, X, X0: int):
    """Σ_v M_kv·X_v per row k of the csr matrix A, exactly, with A_kv = M_kv·2^Ea (M integers) and X
    one integer per value: in int64 where X is and a float bound keeps every row below 2⁶¹, else with
    Python integers (object arrays), X0·Σ_v M_kv + Σ_{v: X_v ≠ X0} M_kv·(X_v − X0). A point
    that is mostly one value (zeros at a vertex, the centre of an interior point) pays the exact row
    sums of A (:func:`_row_sums`, int64 limbs) and a Python-integer product only where it differs."""
    if X.dtype == np.int64:  # int64 throughout where a float bound on every row's terms allows
        M = _scaled(A.data, Ea)
        if M.dtype == np.int64:
            bound = sp.csr_matrix((np.abs(M).astype(np.float64), A.indices, A.indptr), shape=A.shape) @ np.abs(
                X.astype(np.float64))
            if np.all(bound < 2.0**61):
                return sp.csr_matrix((M, A.indices, A.indptr), shape=A.shape) @ X
        X = X.astype(object)
    rows = np.repeat(np.arange(A.shape[0]), np.diff(A.indptr))
    out = _row_sums(A, Ea) * X0 if X0 else np.zeros(A.shape[0], dtype=object)
    dev = np.flatnonzero((X != X0)[A.indices])
    if dev.size:
        np.add.at(out, rows[dev], _as_int(A.data[dev], Ea) * (X[A.indices[dev]] - X0))
    return out


def _row_sums(A, E: int):
    """Σ_v A_kv·2^−E per row, exactly, as Python integers (object array); every entry a multiple of
    2^E. Each entry m·2^(e−E) (|m| < 2^53) is cut into 24-bit limbs at their positions, the limbs
    are summed per row and position in float64 (each < 2^24, so any sum of fewer than 2^29 of them
    is exact), and the few sums per row are joined as integers."""
    m, e = _dyadic(A.data)
    s = e - E
    q, r = s // 24, s % 24
    sign = np.sign(m)
    m = np.abs(m)
    rows = np.repeat(np.arange(A.shape[0]), np.diff(A.indptr))
    n_pos = int(q.max(initial=0)) + 4
    acc = np.zeros(A.shape[0] * n_pos)
    for j in range(3):  # m = Σ_j limb_j·2^(24 j); limb_j·2^r < 2^48 spans two positions
        part = ((m >> (24 * j)) & 0xFFFFFF) << r
        for k, piece in enumerate((part & 0xFFFFFF, part >> 24)):
            acc += np.bincount(rows * n_pos + q + j + k, weights=sign * piece, minlength=acc.size)
    acc = acc.reshape(A.shape[0], n_pos).astype(np.int64).astype(object)
    return np.sum(acc * np.array([1 << (24 * p) for p in range(n_pos)], dtype=object), axis=1)


def _blocks(A, b, tight, x):
    """Component of each value under the tight two-value rows a·f_i − a·f_j (= or ≤) 0."""
    A = sp.csr_matrix(A)
    d = A.shape[1]
    nnz = np.diff(A.indptr)
    two = np.flatnonzero(tight & (nnz == 2) & (np.asarray(b) == 0))
    if two.size:
        start = A.indptr[two]
        a0, a1 = A.data[start], A.data[start + 1]
        two = two[a0 == -a1]
    if not two.size:
        return np.arange(d), np.zeros(A.shape[0], bool)
    start = A.indptr[two]
    i, j = A.indices[start], A.indices[start + 1]
    G = sp.csr_matrix((np.ones(two.size), (i, j)), shape=(d, d))
    _, comp = connected_components(G, directed=False)
    merged = np.zeros(A.shape[0], bool)
    merged[two] = True
    return comp, merged


def _tight(A, b, ineq, x0, tol: float, absA):
    """The rows taken as equalities at ``x0``: every = row, and the ≤ rows within ``tol`` (relative to
    max(1, |b|, |A| |x0|)) of holding with equality."""
    scale = np.maximum(1.0, np.maximum(np.abs(b), absA @ np.abs(x0)))
    return ~ineq | (np.abs(A @ x0 - b) <= tol * scale)


def _block_values(comp, lo, up, x0, tol: float):
    """(blo, bup, val, fixed, size) of the blocks ``comp`` (:func:`_blocks`): each block's bounds, the
    tightest of its members'; its value, the mean of its members' in ``x0`` put on a finite bound
    within ``tol`` of it (``fixed``) or clipped into its bounds; its member count. None where a
    block's bounds cross."""
    nb = int(comp.max()) + 1 if comp.size else 0
    blo, bup = np.full(nb, -np.inf), np.full(nb, np.inf)
    np.maximum.at(blo, comp, lo)
    np.minimum.at(bup, comp, up)
    if np.any(blo > bup):
        return None
    size = np.bincount(comp, minlength=nb)
    val = np.bincount(comp, weights=x0, minlength=nb) / size
    fin_lo, fin_up = np.isfinite(blo), np.isfinite(bup)
    lo0, up0 = np.where(fin_lo, blo, 0.0), np.where(fin_up, bup, 0.0)
    on_lo = fin_lo & (np.abs(val - lo0) <= tol * np.maximum(1.0, np.abs(lo0)))
    on_up = fin_up & (np.abs(val - up0) <= tol * np.maximum(1.0, np.abs(up0)))
    val = np.where(on_lo, blo, np.where(on_up, bup, np.clip(val, blo, bup)))
    return blo, bup, val, on_lo | on_up, size


def exact_point(A, b, ineq, lo, up, x0, tol: float) -> tuple | None:
    """A point (x_float, comp, fracs) of the system built from the float point ``x0`` (module
    docstring, ``tol`` the relative tolerance for "on a bound" and "tight"), checked exactly by
    :func:`point_ok`; None when the construction or the check fails (nothing is claimed). Nested
    sums (a Hierarchy's rows) are substituted out first (:mod:`.nested_sums`): the point is built
    over the free values and its defined values are their exact sums."""
    A = sp.csr_matrix(A)
    nested = NestedSums(A, b, ineq)
    if nested.active:
        As, bs, ins, los, ups = nested.system(A, b, ineq, lo, up)
        got = _exact_point(As, bs, ins, los, ups, x0, tol)
        if got is None or not point_ok(A, b, ineq, lo, up, got[0], got[1], got[2], nested=nested):
            return None
        return got
    return _exact_point(A, b, ineq, lo, up, x0, tol)


def _exact_point(A, b, ineq, lo, up, x0, tol: float) -> tuple | None:
    """:func:`exact_point` on a system without nested sums."""
    A = sp.csr_matrix(A)
    b = np.asarray(b, dtype=np.float64)
    ineq = np.asarray(ineq, bool)
    x0 = np.asarray(x0, dtype=np.float64)
    tight = _tight(A, b, ineq, x0, tol, abs(A))
    comp, merged = _blocks(A, b, tight, x0)
    got = _block_values(comp, lo, up, x0, tol)
    if got is None:
        return None
    blo, bup, val, fixed, _ = got
    rows = np.flatnonzero(tight & ~merged)
    # the tight rows as equalities, the = rows first, then the ≤ rows from the tightest: a ≤ row
    # that contradicts those before it in exact arithmetic (met with room thinner than the
    # tolerance) is left out of the solve and to the check; failing that, the = rows alone
    order = rows[np.lexsort((np.abs(A @ x0 - b)[rows], ineq[rows]))]
    for use, skip in ((order, True), (rows[~ineq[rows]], False)) if np.any(ineq[rows]) else ((rows, False),):
        got = _solve_blocks(A, b, use, comp, val, blo, bup, fixed, skip)
        if got is None:
            continue
        x_try, fracs = got
        if point_ok(A, b, ineq, lo, up, x_try, comp, fracs):
            return x_try, comp, fracs
    return None


def _solve_blocks(A, b, rows, comp, val, blo, bup, fixed, skip=False):
    """(x, fracs): the block values ``val`` with the blocks that the rows ``rows`` (as equalities,
    in this order; ``skip``: a row contradicting the earlier ones left out) determine solved
    exactly; None when those rows are inconsistent or too many."""
    x = val[comp]
    if not rows.size:
        return x, {}
    if rows.size > MAX_BASIS:
        return None
    d, nb = comp.size, val.size
    P = sp.csr_matrix((np.ones(d), (np.arange(d), comp)), shape=(d, nb))
    W = (A[rows] @ P).tocsc()  # float sums of a row's entries per block: only to choose the pivots
    free = np.flatnonzero(~fixed & (np.diff(W.indptr) > 0))
    room = np.full(nb, -np.inf)
    room[free] = np.minimum(val[free] - blo[free], bup[free] - val[free])
    # the columns: each row's two with the most room (so a row on a few values of its own keeps a
    # pivot), then the most room overall, rows + 8 in all (a wider set costs Gauss–Jordan work)
    Wr = sp.coo_matrix(W[:, free])
    by_row = np.lexsort((-room[free][Wr.col], Wr.row))
    rank_in_row = np.arange(by_row.size) - np.searchsorted(Wr.row[by_row], Wr.row[by_row])
    own = np.unique(free[Wr.col[by_row][rank_in_row < 2]])
    top = free[np.argsort(-room[free], kind="stable")]
    free = np.r_[own, top[~np.isin(top, own)][: max(rows.size + 8 - own.size, 0)]]
    free = free[np.argsort(-room[free], kind="stable")]
    if not free.size:
        return x, {}
    Wf = _exact_block_matrix(A[rows], comp, free)
    keep = ~np.isin(comp, free)  # right-hand side: b_k − Σ over the values not in a solved block, exactly
    rhs = _exact_rows(A[rows], b[rows], np.where(keep, x, 0.0))
    z = solve_exact(Wf, rhs, [Fraction(float(v)) for v in val[free]], skip)
    if z is None:
        return None
    return np.where(keep, x, 0.0), {int(g): zg for g, zg in zip(free.tolist(), z)}


def _exact_block_matrix(A, comp, free) -> list:
    """Dense list-of-lists of Fractions: entry (k, j) = Σ_{v in block free[j]} A_kv exactly
    (integer sums per (row, block) pair, one Fraction per pair)."""
    A = sp.coo_matrix(A)
    pos = -np.ones(int(comp.max()) + 1, dtype=np.int64)
    pos[free] = np.arange(free.size)
    col = pos[comp[A.col]]
    keep = col >= 0
    out = [[Fraction(0)] * free.size for _ in range(A.shape[0])]
    if not np.any(keep):
        return out
    key = A.row[keep].astype(np.int64) * free.size + col[keep]
    order = np.argsort(key, kind="stable")
    key = key[order]
    E = _min_exp(A.data)
    ints = _as_int(A.data[keep][order], E)
    starts = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
    sums = np.add.reduceat(ints, starts)
    unit = Fraction(2) ** E
    for k, sv in zip(key[starts].tolist(), sums.tolist()):
        out[k // free.size][k % free.size] = Fraction(int(sv)) * unit
    return out


def _exact_rows(A, b, x) -> list:
    """[b_k − Σ_v A_kv x_v] as Fractions (x float)."""
    A = sp.csr_matrix(A)
    x = np.asarray(x, dtype=np.float64)
    Ea = _min_exp(A.data)
    Ex = min(_min_exp(x), _min_exp(b) - Ea, 0)
    X = _as_int(x, Ex)
    vals, counts = np.unique(x, return_counts=True)
    X0 = int(_as_int(vals[np.argmax(counts)][None], Ex)[0])
    res = _as_int(b, Ea + Ex) - _row_dot(A, Ea, X, X0)
    return [Fraction(int(v)) * Fraction(2) ** (Ea + Ex) for v in res.tolist()]


#: most tight rows (after contraction) of :func:`verified_point`'s dense m × m correction system
MAX_VERIFIED_ROWS = 400
#: most entries of its dense tight rows over the free blocks (32 MB of float64)
MAX_VERIFIED_ENTRIES = 4_000_000
_U = 2.0**-53  # the unit roundoff of float64, round to nearest
#: an absolute term added to every error bound: covers underflow (at most 2⁻¹⁰⁷⁴ per operation, Higham
#: §2.1) for any count of operations below 2¹⁰⁰
_TINY = 2.0**-960


def _gamma(k: int) -> float:
    """γ_k = k·u/(1 − k·u) (Higham, *Accuracy and Stability of Numerical Algorithms*, 2nd ed., §3.1):
    |fl(Σ_{i≤k} x_i y_i) − Σ x_i y_i| ≤ γ_k·Σ|x_i y_i| in any order of summation (Eq. 3.5), the bound
    every step of :func:`verified_point` is built on; doubled here, and rounded up to a power of two."""
    mant, ex = math.frexp(2.0 * k * _U / (1.0 - k * _U))
    return math.ldexp(1.0, ex if mant > 0.5 else ex - 1)


def verified_point(A, b, ineq, lo, up, x0, tol: float) -> bool:
    """Whether the float point ``x0`` proves l ≤ x ≤ u, A x (= or ≤) b non-empty, by a floating-point
    argument with rigorous error bounds (no rational arithmetic): a True is a proof, a False claims
    nothing (the caller then tries :func:`exact_point`).

    The point is put on its bounds and contracted into blocks as in :func:`exact_point` (values within
    ``tol`` of a finite bound on it; tight two-value steps a·f_i − a·f_j ≤ 0 merged, so they hold
    exactly), giving the float point x̂ (exact dyadic numbers). The other tight rows S (every = row,
    the ≤ rows within ``tol``) are met exactly by x = x̂ + P D Ŵᵀ z, where P maps blocks to values,
    Ŵ is the float matrix of A_S P on the free blocks, D = diag(w) the half of each block's room to its
    bounds, and z solves G z = r, G = (A_S P) D Ŵᵀ, r = b_S − A_S x̂ (exact real numbers). That z
    exists and is small by the basic verification lemma for linear systems (S. M. Rump, "Verification
    methods: rigorous results using floating-point arithmetic", *Acta Numerica* 19, 2010, the
    linear-systems section): with R a float inverse of fl(G), ‖I − R G‖∞ ≤ α < 1 makes R G = I − E
    invertible by the Neumann series, ‖(R G)⁻¹‖∞ ≤ 1/(1 − α), so G is non-singular with
    ‖G⁻¹‖∞ = ‖(R G)⁻¹ R‖∞ ≤ ‖R‖∞/(1 − α), and ‖z‖∞ ≤ ‖R‖∞·‖r‖∞/(1 − α) =: ζ. Every quantity is bounded from floats with the error bound of
    a dot product, |fl(xᵀy) − xᵀy| ≤ γ_n·|x|ᵀ|y| (:func:`_gamma`, each γ doubled, plus an absolute
    term for underflow), so that the bounds hold for the exact G, r and z. Then x meets: the S rows
    exactly (A_S x = A_S x̂ + G z = b_S); every block's bounds, where |Δ_g| ≤ w_g·(|Ŵ|ᵀ)_g·ζ ≤ w_g
    (half its room); every other ≤ row, where its float slack less its error bound exceeds the
    largest change |A_k P| |Δ|; the merged steps exactly (one value per block). Inconclusive (False):
    more than :data:`MAX_VERIFIED_ROWS` tight rows, dependent tight rows (a degenerate vertex), a
    slack or a room thinner than the bounds, a repeated entry in A. A tight row whose blocks are all
    at their bounds does not move and is checked as it is, exactly (:func:`point_ok`). The dense
    products are numpy's einsum loops (one thread: OpenBLAS's threads spin after a 21 × 10⁴ product),
    any order of summation being covered by γ_n."""
    A = sp.csr_matrix(A)
    b = np.asarray(b, dtype=np.float64)
    ineq = np.asarray(ineq, bool)
    x0 = np.asarray(x0, dtype=np.float64)
    d = A.shape[1]
    if not A.has_canonical_format:  # a repeated entry is a sum the dense rows below would round
        return False
    if x0.shape != (d,) or not np.all(np.isfinite(x0)) or not np.all(np.isfinite(b)) or not np.all(np.isfinite(A.data)):
        return False
    absA = abs(A)
    tight = _tight(A, b, ineq, x0, tol, absA)
    nnz = np.diff(A.indptr)
    if np.count_nonzero(tight & ~((nnz == 2) & (b == 0))) > MAX_VERIFIED_ROWS:  # too many to merge away
        return False
    comp, merged = _blocks(A, b, tight, x0)
    got = _block_values(comp, lo, up, x0, tol)
    if got is None:
        return False
    blo, bup, val, fixed, size = got  # each value within its block's bounds
    nb = val.size
    x = val[comp]  # the float point x̂: exact numbers; the merged steps hold there exactly
    with np.errstate(invalid="ignore", over="ignore"):
        room = np.minimum(val - blo, bup - val)  # fl(room) ≤ (1 + u)·room: w = room/2 keeps |Δ| < room
    cap = max(1.0, float(np.max(np.abs(x), initial=0.0)))
    w = np.where(fixed, 0.0, 0.5 * np.minimum(room, cap))
    if not np.all(np.isfinite(w)):
        return False
    # residuals of every row at x̂, with a bound on their error: |r_k − r̂_k| ≤ e_k
    n_row = int(np.max(nnz, initial=0))
    r_hat = b - A @ x
    e = _gamma(n_row + 2) * (absA @ np.abs(x) + np.abs(b)) + _TINY
    S = np.flatnonzero(tight & ~merged)
    free = np.flatnonzero(w > 0)
    single = bool(nb == d and np.all(comp == np.arange(d)))  # no merged steps: each block one value, P = I
    s_max = 1 if single else int(size.max(initial=1))
    if S.size:
        if S.size > MAX_VERIFIED_ROWS or S.size * nb > MAX_VERIFIED_ENTRIES:
            return False
        AS = A[S]
        if single:  # A_S P = A_S, |A_S| P = |A_S|: no sums, Ŵ exact
            W = AS.toarray()[:, free]
            Wabs = np.abs(W)
        else:
            P = sp.csr_matrix((np.ones(d), (np.arange(d), comp)), shape=(d, nb))
            W = (AS @ P).toarray()[:, free]  # float sums of a row's entries per block
            Wabs = (abs(AS) @ P).toarray()[:, free]
        # a tight row with no free block: it must hold exactly as it is (checked exactly, a few rows)
        dead = ~np.any(Wabs > 0, axis=1)
        if np.any(dead):
            rows = S[dead]
            if not point_ok(A[rows], b[rows], ineq[rows], lo, up, x):
                return False
            S, W, Wabs = S[~dead], W[~dead], Wabs[~dead]
    if S.size:
        k = S.size
        wf = w[free]
        # the k × n products by numpy's own loops, not BLAS: OpenBLAS runs a 21 × 10⁴ product on its
        # threads, which then spin (14 times the CPU of one thread, and more after it returns)
        G = np.einsum("ik,jk->ij", W * wf, W)
        H = np.einsum("ik,jk->ij", Wabs * wf, Wabs)  # ≥ |A_S P| D |Ŵ|ᵀ up to rounding
        dG = 4.0 * _gamma(free.size + s_max + 4) * H + _TINY  # ≥ |G_exact − fl(G)| (the derivation above)
        try:
            R = np.linalg.inv(G)
        except np.linalg.LinAlgError:
            return False
        if not np.all(np.isfinite(R)):
            return False
        absR = np.abs(R)
        Q = np.abs(R @ G - np.eye(k)) + 2.0 * _gamma(k + 2) * (absR @ np.abs(G)) + absR @ dG
        alpha = float(np.max(Q.sum(axis=1))) * (1.0 + 8.0 * _gamma(k + 4)) + _TINY
        if not alpha < 0.5:
            return False
        norm_R = float(np.max(absR.sum(axis=1))) * (1.0 + 2.0 * _gamma(k + 2))
        rho = float(np.max(np.abs(r_hat[S]) + e[S])) * (1.0 + 4.0 * _U)
        zeta = norm_R * rho / (1.0 - alpha) * (1.0 + 8.0 * _U)
        if not np.isfinite(zeta):
            return False
        col = np.abs(W).sum(axis=0) * (1.0 + 2.0 * _gamma(k + 2))
        beta = col * zeta * (1.0 + 4.0 * _U)  # |Δ_g| ≤ w_g·β_g: within the block's room when β_g ≤ 1
        if not np.all(beta <= 1.0):
            return False
        delta = np.zeros(nb)
        delta[free] = wf * beta * (1.0 + 4.0 * _U)  # ≥ |Δ_g|
    else:
        delta = np.zeros(nb)
    # every other ≤ row (the tight ones are merged, in S, or held exactly with no free block): its
    # slack r_k − e_k above its largest change Σ_v |A_kv|·|Δ_comp(v)|
    other = np.flatnonzero(ineq & ~tight)
    if other.size:
        change = (absA[other] @ delta[comp]) * (1.0 + 4.0 * _gamma(n_row + 4)) + _TINY
        # r̂ ≥ (e + change)·(1 + 4u) in float proves r̂ − e − change ≥ 0 exactly (a comparison is exact;
        # the sum and the product lose at most u each)
        if not np.all(r_hat[other] >= (e[other] + change) * (1.0 + 4.0 * _U)):
            return False
    return True
