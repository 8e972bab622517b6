"""The dual (multiplier) method for separable objectives on the simplex plus linear constraints.

Notes: docs/notes/problems.md, "ldpopt.problems.dual.dual".
"""

from __future__ import annotations

import contextlib
import threading
from typing import TYPE_CHECKING, ClassVar

import numpy as np

from ..._blas import one_thread

if TYPE_CHECKING:
    from ..objectives.separable import Separable  # annotations only

__all__ = ["dual_value", "solve_lambda", "solve_multipliers", "solve_screened"]

_EPS = np.finfo(float).eps


def _d1(sep, x):
    with np.errstate(divide="ignore", invalid="ignore"):
        return sep.d1(x)


def illinois_step(lo: float, hi: float, r_lo: float, r_hi: float, side: int) -> float:
    """The next iterate in the bracket [lo, hi] of a decreasing residual (r_lo > 0 > r_hi) by
    Illinois false position: the stale end's weight is halved once per repeated step on the same
    side beyond the first (``side``: +k after k steps in a row that moved ``hi``, so ``lo`` is
    stale; −k after k that moved ``lo``); bisection when that degenerates. Used where Newton's step leaves the bracket (a value
    with a tiny curvature makes the residual steep on a tiny interval; bisection would take ~50
    halvings)."""
    wl, wh = r_lo, r_hi
    if side <= -2:
        wh *= 0.5 ** (-side - 1)
    elif side >= 2:
        wl *= 0.5 ** (side - 1)
    step = (lo * (-wh) + hi * wl) / (wl - wh) if wl > 0 > wh else np.nan
    return step if lo < step < hi else 0.5 * (lo + hi)


def solve_lambda(sep: Separable, l, u, total, t0=None, lam0=None, max_iter=100, d1l=None, d1u=None,
                 weights=None, bracket=None):
    """λ with Σ_v f_v(t0 + λ) = total. Returns (λ, f, iterations). ``d1l``, ``d1u``: h'(l), h'(u).
    ``weights``: each entry stands for that many values (:mod:`.grouped`: one entry per distinct
    count), so the mass is Σ_v w_v f_v and the slope Σ_v w_v/h_v''; the flat-term fill is then left
    to the caller. ``bracket``: (lo, hi, S(lo), S(hi)) with S(lo) ≥ total ≥ S(hi), known to the
    caller, instead of the whole range of λ."""
    def wsum(x, w):
        return float(np.sum(x)) if w is None else float(x @ w)

    d = l.shape[0]
    t0 = np.zeros(d) if t0 is None else np.broadcast_to(t0, (d,))
    d1l = _d1(sep, l) if d1l is None else d1l
    d1u = _d1(sep, u) if d1u is None else d1u
    with np.errstate(invalid="ignore"):
        # λ ≤ gu_v ⇒ f_v = u_v ;  λ ≥ gl_v ⇒ f_v = l_v
        gu = -(d1u + t0)
        gl = -(d1l + t0)
    gu = np.where(np.isnan(gu), -np.inf, gu)
    gl = np.where(np.isnan(gl), np.inf, gl)
    var = l < u  # fixed values (l = u) do not move with λ
    fin_u, fin_l = np.isfinite(gu[var]), np.isfinite(gl[var])
    lo = float(gu[var][fin_u].min()) if fin_u.any() else -1.0
    hi = float(gl[var][fin_l].max()) if fin_l.any() else 1.0
    exact_ends = bool(fin_u.all() and fin_l.all() and lo <= hi)
    if lo > hi:
        lo, hi = hi, lo

    cand = np.arange(d)
    base = 0.0                # mass of values dropped from the work set
    sub, lc, uc, tc, glc, guc, wc = sep, l, u, t0, gl, gu, weights
    if not var.all() and sep.restrict(np.flatnonzero(var)) is not None:
        base = wsum(l[~var], None if weights is None else weights[~var])
        kept = np.flatnonzero(var)
        cand, sub = kept, sep.restrict(kept)
        lc, uc, tc, glc, guc = l[kept], u[kept], t0[kept], gl[kept], gu[kept]
        wc = None if weights is None else weights[kept]

    def mass(lam):
        f = sub.argmin(tc + lam, lc, uc, -(glc + tc), -(guc + tc))
        return f, base + wsum(f, wc)

    if bracket is not None:
        lo, hi, s_lo, s_hi = (float(x) for x in bracket)
    elif exact_ends:
        # at λ = lo every value is at u, at λ = hi every value is at l (feasibility: Σl ≤ total ≤ Σu)
        s_lo, s_hi = base + wsum(uc, wc), base + wsum(lc, wc)
    else:  # infinite end derivatives: expand until the bracket brackets
        for _ in range(200):
            f, s_lo = mass(lo)
            if s_lo >= total:
                break
            lo -= 2.0 * (abs(lo) + 1.0)
        for _ in range(200):
            f, s_hi = mass(hi)
            if s_hi <= total:
                break
            hi += 2.0 * (abs(hi) + 1.0)
    lam = float(np.clip(lam0, lo, hi)) if lam0 is not None and np.isfinite(lam0) else 0.5 * (lo + hi)
    it, side, widths, resids = 0, 0, [], []
    tol = 16 * _EPS * max(abs(total), 1e-300)
    for it in range(1, max_iter + 1):
        f, s = mass(lam)
        r = s - total
        if r > 0:
            lo, s_lo = lam, s
            side = side - 1 if side <= 0 else -1
        elif r < 0:
            hi, s_hi = lam, s
            side = side + 1 if side >= 0 else 1
        if abs(r) <= tol or hi - lo <= 2 * _EPS * max(abs(lo), abs(hi)):
            break
        # drop values at a bound for every λ in [lo, hi] (only where the objective can be restricted)
        keep = (glc > lo) & (guc < hi)
        if keep.sum() < 0.7 * keep.size:
            sub2 = sub.restrict(np.flatnonzero(keep)) if hasattr(sub, "restrict") else None
            if sub2 is not None:
                gone = ~keep
                at_l = glc[gone] <= lo  # (else guc ≥ hi: at u)
                base += wsum(np.where(at_l, lc[gone], uc[gone]), None if wc is None else wc[gone])
                cand, sub = cand[keep], sub2
                lc, uc, tc, glc, guc = lc[keep], uc[keep], tc[keep], glc[keep], guc[keep]
                wc = None if wc is None else wc[keep]
                f = f[keep]
        inner = (f > lc) & (f < uc)
        with np.errstate(divide="ignore", invalid="ignore"):
            slope = (-wsum(1.0 / sub.d2(f)[inner], None if wc is None else wc[inner]) if inner.any()
                     else 0.0)
        step = lam - r / slope if slope < 0 and np.isfinite(slope) else np.nan
        widths.append(hi - lo)
        resids.append(abs(r))
        if len(widths) > 3 and widths[-1] > 0.5 * widths[-4] and resids[-1] > 0.1 * resids[-4]:
            # Newton (or false position) crawling — h'' varies by orders of magnitude, e.g. the
            # binomial at ε = 20: bisect. (Not when the residual falls fast: Newton on a convex S
            # approaches from one side, so the far end stays and only |r| shows the progress.)
            widths.clear()
            resids.clear()
            lam = 0.5 * (lo + hi)
            continue
        if not lo < step < hi:
            step = illinois_step(lo, hi, s_lo - total, s_hi - total, side)
        lam = step
    # the full vector
    full = sep.argmin(t0 + lam, l, u)
    resid = wsum(full, weights) - total
    if abs(resid) > tol and weights is None:
        full = _fill_flat(sep, full, l, u, gl, gu, lo, hi, resid)
    return lam, full, it


def _fill_flat(sep, f, l, u, gl, gu, lo, hi, resid):
    """S(λ) jumps where an h_v is linear on [l_v, u_v] (a multinomial value with no reports: h_v ≡ 0):
    at the jump any f_v in [l_v, u_v] minimises h_v + t_v f, so the missing mass is spread over those
    values in proportion to their room (the choice where the paper is silent: the problem then has
    many minimisers, all with the same J)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        flat = (l < u) & (sep.d2(l) == 0) & (sep.d2(u) == 0) & (gl >= lo) & (gl <= hi)
    if not flat.any():
        return f
    room = np.where(flat, (u - f) if resid < 0 else (f - l), 0.0)
    cap = float(np.sum(room))
    if cap <= 0:
        return f
    share = min(abs(resid) / cap, 1.0)
    return f + np.sign(-resid) * share * room


def _schur(A, D, AT=None):
    """A D Aᵀ − (A D 1)(A D 1)ᵀ/(1ᵀ D 1): the Hessian of −φ(y) (λ eliminated), dense. A in CSR: A D is A
    with each stored entry scaled by D of its column (no sparse product; 1.4 → 0.9 ms for the 3-way
    marginals' 179 × 367 rows, twice per Newton step). ``AT``: Aᵀ in CSR, made once by a caller that
    forms many (the product converts A.T to it otherwise: 0.22 → 0.17 ms a call there, same bits)."""
    if A.nnz and A.format == "csr":
        AD = A.copy()
        AD.data = A.data * D[A.indices]
    else:
        AD = A.multiply(D).tocsr() if A.nnz else A
    H = (AD @ (A.T if AT is None else AT)).toarray()
    s1 = float(D.sum())
    if s1 > 0:
        ad1 = np.asarray(AD.sum(axis=1)).ravel()
        H = H - np.outer(ad1, ad1) / s1
    return H


def _schur_kept(kept: list, A, D, AT):
    """:func:`_schur` (A, D, AT), or the one in ``kept`` ([D, H], then replaced) when D is the same
    array of numbers: a quadratic h's Levenberg curvature D_all at every Newton step, and the
    interior values' D once the active set has stopped changing (the last, polishing step)."""
    if not (kept and np.array_equal(kept[0], D)):
        kept[:] = [D, _schur(A, D, AT)]
    return kept[1]


#: the Newton system on the multipliers is kept sparse (:class:`_SparseNewton`) from this many rows
#: on, when A Aᵀ fills at most ``_SPARSE_FILL`` of it: the consistent 3-way marginals over 12 binary
#: attributes (1,760 cells, 1,461 rows, A Aᵀ 3 % full) spent 0.6 s of 0.93 s in ten dense solves
#: (now 0.08 s a call); at 343–355 rows (2-way over 16 binary attributes, 3-way over 8) the sparse
#: system is 20–40 % faster, at 124–179 rows a tie
_SPARSE_ROWS = 200
_SPARSE_FILL = 0.1


class _Augmented:
    """The quasi-definite augmented matrix [[−D'⁻¹, Aᵀ], [A, ρ I]] of one problem's rows, in the upper
    triangle QDLDL takes, on a pattern fixed for the whole solve: every value and every row keep their
    places, a row out of the Newton system has its entries set to 0 and its pivot to 1 (then its
    unknown is 0), a value with D' = 0 gets the pivot −1e300 (then its unknown is 0). QDLDL's symbolic
    factorisation (the minimum-degree ordering) is done once per row set (:meth:`of`), each Newton
    step only refactors."""

    #: the systems of the last :data:`KEEP` row sets solved, most recent last (:meth:`of`)
    _recent: ClassVar[list] = []
    _lock = threading.Lock()
    KEEP = 4
    #: only systems with at most this many stored entries are kept (a choice: their factors then hold
    #: a few tens of MB at most; the 1,760-cell marginals' has 12,000)
    KEEP_NNZ = 1_000_000

    @classmethod
    def of(cls, A):
        """The system of the rows ``A``: a recent solve's when its rows were the same (pattern and
        values, compared exactly), so that QDLDL's symbolic factorisation is done once per row set,
        not once per problem — 10 ms of a 25 ms solve for the 3-way marginals over 12 binary
        attributes (1,760 cells; measured), whose rows depend on the marginal set only. Taken out of
        the cache while in use (two threads never share one); :meth:`release` puts it back. QDLDL's
        refactorisation on the kept ordering gives the same bits as a fresh factorisation."""
        A = A.tocsr()
        with cls._lock:
            for i, aug in enumerate(cls._recent):
                if aug.same_rows(A):
                    return cls._recent.pop(i)
        return cls(A)

    def same_rows(self, A) -> bool:
        """Whether ``A`` (CSR) has exactly this system's rows."""
        B = self.A
        return (A.shape == B.shape and A.nnz == B.nnz and np.array_equal(A.indptr, B.indptr)
                and np.array_equal(A.indices, B.indices) and np.array_equal(A.data, B.data))

    def release(self) -> None:
        """Back into the cache of :meth:`of` (the oldest beyond :data:`KEEP` dropped; not at all
        above :data:`KEEP_NNZ` stored entries)."""
        if self.mat.nnz > self.KEEP_NNZ:
            return
        with self._lock:
            self._recent.append(self)
            del self._recent[:-self.KEEP]

    def __init__(self, A):
        import scipy.sparse as sp

        A = A.tocsr(copy=True)  # kept for :meth:`same_rows`: a copy nobody else writes
        d, m = A.shape[1], A.shape[0]
        self.d, self.m = d, m
        # column n + k of the upper triangle: row k's entries (at their values' places), then ρ
        counts = np.diff(A.indptr) + 1
        indptr = np.concatenate([np.arange(d + 1), d + np.cumsum(np.concatenate([[0], counts]))[1:]])
        pos = np.arange(A.nnz) + np.repeat(np.arange(m), counts - 1) + d  # A's entries in data
        diag = indptr[d + 1:] - 1  # ρ's places
        indices = np.empty(indptr[-1], dtype=np.int32)
        indices[:d] = np.arange(d)
        indices[pos] = A.indices
        indices[diag] = d + np.arange(m)
        self.A, self.pos, self.diag, self.row_of = A, pos, diag, np.repeat(np.arange(m), counts - 1)
        self.A2 = A.multiply(A).tocsr()  # the entries squared: diag(A D Aᵀ) = A2 D
        self.AT = A.T.tocsr()
        self.mat = sp.csc_matrix((np.zeros(indptr[-1]), indices, indptr), shape=(d + m, d + m))
        self.solver = None

    def factor(self, Dp, rows, reg: float):
        """Factor for D' = ``Dp`` and the Newton ``rows`` (a mask over A's rows), ρ = ``reg``."""
        data = self.mat.data
        with np.errstate(divide="ignore"):
            data[:self.d] = np.where(Dp > 0, -1.0 / Dp, -1e300)
        data[self.pos] = np.where(rows[self.row_of], self.A.data, 0.0)
        data[self.diag] = np.where(rows, reg, 1.0)
        # upper=True: the matrix is its upper triangle already (QDLDL's own triu pass skipped, the
        # same factors: 11.4 -> 8.6 ms a first factorisation, 1.41 -> 1.16 ms a refactorisation at
        # 1,760 cells)
        if self.solver is None:
            import qdldl

            self.solver = qdldl.Solver(self.mat, upper=True)
        else:
            self.solver.update(self.mat, upper=True)

    def solve_rows(self, rows, v):
        """K⁻¹ v on ``rows`` (v of their length) with the last factorisation."""
        rhs = np.zeros(self.d + self.m)
        rhs[self.d + np.flatnonzero(rows)] = v
        return self.solver.solve(rhs)[self.d:][rows]


class _SparseNewton:
    """The Newton system (H + μ H_all) δ = r of the multipliers, H = A Dn Aᵀ − a aᵀ/s and H_all alike,
    never formed: K = A D' Aᵀ (D' = Dn + μ D_all) is solved through the quasi-definite augmented system
    (:class:`_Augmented`; the marginals' rows share values, and A D Aᵀ fills where the augmented system
    does not — 1,760 cells: 2 ms a refactorisation against SuperLU's 22 ms on A D Aᵀ), the rank-two λ
    terms by the Woodbury identity, then iterative refinement against the whole operator (the
    augmented system's pivots −1/D' span many decades and cost digits; refinement restores them). ρ is
    the dense path's relative regularisation."""

    def __init__(self, aug: _Augmented, Dn, D_all, mu: float):
        A = aug.A
        self.aug, self.A, self.Dp = aug, A, Dn + mu * D_all
        a, s = A @ Dn, float(Dn.sum())
        a_all, s_all = A @ D_all, float(D_all.sum())
        cols = []
        if s > 0:
            cols.append(a / np.sqrt(s))
        if s_all > 0 and mu > 0:
            cols.append(np.sqrt(mu / s_all) * a_all)
        self.U = np.column_stack(cols) if cols else np.zeros((A.shape[0], 0))
        self.A2 = aug.A2
        self.H_diag = self.A2 @ Dn - (a * a / s if s > 0 else 0.0)

    def _K_times(self, rows, cols, x):
        """(A D' Aᵀ)[rows, cols] @ x without forming it."""
        return self.A[rows] @ (self.Dp * (self.A[cols].T @ x))

    def block_times(self, rows, cols, x):
        """(H + μ H_all)[rows, cols] @ x."""
        return self._K_times(rows, cols, x) - self.U[rows] @ (self.U[cols].T @ x)

    def solve(self, rows, r):
        """δ on ``rows`` (a mask) with (H + μ H_all)[rows, rows] δ = r."""
        U = self.U[rows]
        if rows.all():  # the usual case: no row sliced (a slice of A costs 30 matrix-vector products)
            Ar, ArT, A2r = self.A, self.aug.AT, self.A2
        else:
            Ar, A2r = self.A[rows], self.A2[rows]
            ArT = Ar.T.tocsr()
        trace = float((A2r @ self.Dp).sum() - np.sum(U * U))
        reg = 1e-300 + 1e-15 * max(trace, 0.0)
        try:
            self.aug.factor(self.Dp, rows, reg)
        except ValueError:  # a zero pivot: the dense path's least squares
            dense = (Ar.multiply(self.Dp) @ ArT).toarray() - U @ U.T + reg * np.eye(U.shape[0])
            return np.linalg.lstsq(dense, r, rcond=None)[0]

        def k_inv(v):
            return self.aug.solve_rows(rows, v)

        KiU = np.column_stack([k_inv(U[:, j]) for j in range(U.shape[1])]) if U.shape[1] else U
        cap = np.eye(U.shape[1]) - U.T @ KiU

        def apply(v):
            z = k_inv(v)
            if U.shape[1]:
                z = z + KiU @ np.linalg.solve(cap, U.T @ z)
            return z

        def operator(x):  # (H + μ H_all)[rows, rows] + ρ I, never formed
            return Ar @ (self.Dp * (ArT @ x)) - U @ (U.T @ x) + reg * x

        x = apply(r)
        size = float(np.max(np.abs(r), initial=0.0))
        best = np.inf
        for _ in range(8):  # refinement: to rounding of r, or while it still gains
            resid = r - operator(x)
            err = float(np.max(np.abs(resid), initial=0.0))
            if err <= 4 * _EPS * size or err >= 0.5 * best:
                break
            best = err
            x = x + apply(resid)
        return x


def dual_value(sep: Separable, f_t, lam, y, st, weights=None) -> float:
    """g(λ, y) at the per-value argmin f_t = f(t): Σ h(f_t) + λ(Σ f_t − total) + y·(A f_t − b),
    the same number as the definition, summed so that nothing large cancels. ``weights``: each
    entry stands for that many values (:func:`solve_row_groups`), every sum over values weighted."""
    if weights is None:
        val = float(np.sum(sep.value(f_t))) + lam * (float(np.sum(f_t)) - st.total)
        mass = f_t
    else:
        mass = weights * f_t
        val = float(weights @ sep.value(f_t)) + lam * (float(np.sum(mass)) - st.total)
    if st.m:
        val += float(y @ (st.A @ mass - st.b))
    return val


def inverse_curvature(sep: Separable, f):
    """1/h''(f) per value, where a value with h flat (1/h'' = ∞) gets 1e12 × the largest finite one:
    it absorbs any mass, and a large finite D keeps the Newton systems' Schur complement right (→ the
    other values' D) without infinities. The Newton steps here and in :mod:`.tree` use it."""
    with np.errstate(divide="ignore", invalid="ignore"):
        D = 1.0 / sep.d2(f)
    fin = np.isfinite(D)
    big = 1e12 * max(float(np.max(D[fin], initial=0.0)), 1e-300)
    return np.where(fin, D, big)


def _step_radius(sep: Separable, l, u, d1l, d1u) -> float:
    """The largest useful multiplier step: twice the largest range of h' over [l_v, u_v] (beyond it
    every value is pinned at a bound), inf when no range is finite and positive. Where h'(l) = −∞ at
    l = 0 (an entropy or KL term) the range starts at the smallest normal float, below which the
    argmin leaves no value (:class:`~ldpopt.problems.objectives.user_separable.UserSep`). Without
    that the radius was infinite, and rows whose values all sat in the term's exponential tail
    (h'' ~ 1e296: their curvature gone from the Newton system) got steps of ~1e11 that the line
    search could not shorten enough (CLS + 1e-4·KL with partition totals, d ≥ 3,000: the route
    stalled, its answer inaccurate)."""
    tiny = np.finfo(float).tiny
    tail = np.isinf(d1l) & (l >= 0) & (l < tiny) & (u > tiny)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if tail.any():
            d1l = np.where(tail, _d1(sep, np.where(tail, tiny, l)), d1l)
        span = np.abs(d1u - d1l)
    span = span[np.isfinite(span)]
    return 2.0 * float(span.max()) if span.size and span.max() > 0 else np.inf


def _tail_rows(H_diag, mass, grad, b, free, nonneg, radius: float):
    """The rows whose values all sit in an exponential tail (an entropy or KL term's argmin at a
    multiplier far above its value's: f ~ e^{−t/w}, h'' ~ w/f): free rows of nonnegative
    coefficients whose mass A_k f is positive and below b_k, and whose own Newton step |∇_k|/H_kk
    exceeds the radius (:func:`_step_radius`) — their curvature has left the Newton system (H_kk ~
    1e-21 against ~0.5 elsewhere) and a Newton step there is ~1e11. (At a bound h'' is finite or
    the value's mass is 0 exactly, and a quadratic or likelihood row never qualifies: its H_kk·radius
    exceeds any mass residual.)"""
    with np.errstate(invalid="ignore"):
        return free & nonneg & (mass > 0) & (mass < b) & (np.abs(grad) > radius * H_diag)


def _tail_steps(H_diag, mass, b, rows):
    """The multiplier step of each tail row (:func:`_tail_rows`) from its mass's logarithm, which an
    exponential tail makes linear in the multiplier: d log m/dy = −Σ D/m, so y moves by
    m·log(m/b)/H_kk (= w·log(m/b) for f = e^{−(t − c)/w}: the values come back to mass b in one step,
    where the mass's own tangent, slope −Σ D ≈ 0, points ~1e11 away). A choice where the papers are
    silent; the line search and the radius still bound the step."""
    m = mass[rows]
    return m * np.log(m / b[rows]) / H_diag[rows]


def backtrack(trial, tries: int):
    """(α, point): the first α of 1, 1/2, 1/4, … (``tries`` of them) at which ``trial(α)`` returns a
    point, the caller's sufficient-ascent test having passed; (α, None) when none did. The damped
    Newton steps on the multipliers here and in :mod:`.tree` (each with its own test)."""
    alpha = 1.0
    for _ in range(tries):
        got = trial(alpha)
        if got is not None:
            return alpha, got
        alpha *= 0.5
    return alpha, None


def _interpolated(trial, seen: list, slope: float, tries: int):
    """:func:`backtrack` with α from the quadratic through φ(0), φ'(0) = ``slope`` and the rejected
    φ(α) (``seen[0]`` = φ(α) − φ(0), left there by ``trial``), kept in [α/10, α/2] (the usual
    safeguards; a choice): for a step cut to the radius, which can be 2⁹ times too long where
    a row's values sit in an exponential tail, ~3 trials instead of ~10 halvings."""
    alpha = 1.0
    for _ in range(tries):
        got = trial(alpha)
        if got is not None:
            return alpha, got
        curv = seen[0] - slope * alpha if seen else np.nan
        with np.errstate(divide="ignore", invalid="ignore"):
            quad = -slope * alpha * alpha / (2.0 * curv) if curv < 0 else np.nan
        alpha = float(np.clip(quad, 0.1 * alpha, 0.5 * alpha)) if np.isfinite(quad) else 0.5 * alpha
    return alpha, None


def damping(mu: float, alpha: float, mu_max: float) -> float:
    """The Levenberg term after a step: /10 (not below 1e-10) after a full step, ×100 (not above
    ``mu_max``) after a shortened one."""
    return max(mu / 10.0, 1e-10) if alpha == 1.0 else min(mu * 100.0, mu_max)


#: from this many rows a quadratic h starts the dual method from the rows' projection
#: (:func:`_projection_start`) instead of y = 0: the consistent marginals (39–1,461 rows) took 2–11
#: Newton steps from y = 0 and 0–6 from it (measured, 2- and 3-way, cls and weighted); with 3–10 rows
#: (subset sums, partition totals, a few equalities over d = 10²–10⁴) the steps were the same
_PROJECTION_ROWS = 32


def _dense_solve(H, rhs):
    """H⁻¹ rhs for the dense Newton system on the multipliers, H regularised by 1e-15 of its trace
    (least squares when it is singular all the same); under the caller's ``one_thread`` (entered once
    per solve by :func:`solve_multipliers`: 0.06 ms an entry, a fifth of a 179-row solve)."""
    H = H + (1e-300 + 1e-15 * max(np.trace(H), 0.0)) * np.eye(H.shape[0])
    try:
        return np.linalg.solve(H, rhs)
    except np.linalg.LinAlgError:
        return np.linalg.lstsq(H, rhs, rcond=None)[0]


def _projection_start(sep, st, weights, augmented, schur_of: list, AT):
    """(λ, y): the multipliers of the projection onto the rows with the bounds dropped, for a quadratic
    h_v = w_v (f − m_v)² (``sep.quadratic``): f = m − D t, D = 1/(2w), t = λ1 + Aᵀy, with Σ f = total
    and A f = b — one Newton system of the dual with every value interior (λ eliminated:
    (A D Aᵀ − a aᵀ/s) y = A f₀ − b, a = A D 1, s = 1ᵀD1, f₀ = m − D λ₀ the point of Σ f = total alone).
    Clipping its f to the bounds gives the dual method's first point: the rows' multipliers are then
    near their final values, where from y = 0 (f ignoring every row) the active set moved a few values
    per Newton step. y ≥ 0 on the ≤ rows (projected). ``weights`` as in :func:`solve_multipliers`;
    ``schur_of`` gets [D, the dense Schur complement of D] where the dense system was formed (``AT``:
    Aᵀ in CSR)."""
    D = np.broadcast_to(1.0 / (2.0 * np.asarray(sep.w, float)), (st.d,))
    m = np.broadcast_to(np.asarray(sep.m, float), (st.d,))
    Dw = np.array(D if weights is None else weights * D, float)
    s = float(Dw.sum())
    lam0 = (float(np.sum(m if weights is None else weights * m)) - st.total) / s
    f0 = m - D * lam0
    grad = st.residual(f0 if weights is None else weights * f0)
    if augmented is not None:
        y = _SparseNewton(augmented, Dw, Dw, 0.0).solve(np.ones(st.m, bool), grad)
    else:
        H = _schur(st.A, Dw, AT)
        schur_of[:] = [Dw, H]
        y = _dense_solve(H, grad)
    y[st.ineq] = np.maximum(y[st.ineq], 0.0)
    return lam0 - float((st.A @ Dw) @ y) / s, y


def solve_multipliers(sep: Separable, st, max_iter=50, lam0=None, weights=None, stop=None):
    """(f, λ, y, info) for the compiled structure ``st``. ``weights``: entry v stands for that many
    values alike (:func:`solve_row_groups`): the problem is Σ_v w_v h_v(f_v) s.t. Σ w_v f_v = total,
    A (w∘f) = b, whose dual is the one above with every sum over values weighted (D → w∘D)."""
    l, u, w = st.l, st.u, weights
    y = np.zeros(st.m)
    d1l, d1u = _d1(sep, l), _d1(sep, u)
    info = {"lambda_iterations": 0, "newton_iterations": 0, "line_search_failures": 0}
    # (w > 0 finite: the projection's D = 1/(2w) is; the built-ins' w always is)
    wq = np.asarray(getattr(sep, "w", np.nan), float) if sep.quadratic else np.nan
    projected = st.m >= _PROJECTION_ROWS and bool(np.all(np.isfinite(wq)) and np.all(wq > 0))
    if not projected:
        lam, f, info["lambda_iterations"] = solve_lambda(sep, l, u, st.total, lam0=lam0, d1l=d1l, d1u=d1u, weights=w)
    if st.m == 0:
        return f, lam, y, info
    A, AT, b, ineq = st.A, st.A.T.tocsr(), st.b, st.ineq
    tol = 4 * _EPS * max(st.total, 1.0)

    def at(yv, lam_start):
        t0 = AT @ yv
        lam_v, f_v, k = solve_lambda(sep, l, u, st.total, t0=t0, lam0=lam_start, d1l=d1l, d1u=d1u, weights=w)
        info["lambda_iterations"] += k
        return lam_v, f_v, dual_value(sep, f_v, lam_v, yv, st, w)

    mu = 1e-10
    radius = _step_radius(sep, l, u, d1l, d1u)
    nonneg = np.ones(st.m, bool)  # rows with no negative coefficient (their A f is a mass)
    if A.nnz:
        nonneg[np.unique(A.tocoo().row[A.tocoo().data < 0])] = False
    # A D Aᵀ's pattern is that of A Aᵀ whatever D: decided once per solve
    sparse_newton = st.m >= _SPARSE_ROWS and (A @ A.T).nnz <= _SPARSE_FILL * st.m * st.m
    augmented = _Augmented.of(A) if sparse_newton else None
    # [D, its dense Schur complement] last formed for the interior values' D and for D_all (the
    # Levenberg term's curvature, the same at every step of a quadratic h: 1/h'' constant)
    schur_n: list = []
    schur_all: list = []
    with contextlib.ExitStack() as once:
        if augmented is None:  # the dense systems on one BLAS thread, set once per solve
            # (not around the sparse path, which has no dense system: limiting and restoring the BLAS
            # threads there cost 20–50 ms of CPU at 1,760 cells, in this call and the next ones —
            # the restored thread pool spinning; measured in the route grid)
            once.enter_context(one_thread(st.m))
        else:  # the sparse system back into its cache
            once.callback(augmented.release)
        if projected:  # the rows' projection, clipped: the first point (module docstring)
            lam, y = _projection_start(sep, st, w, augmented, schur_all, AT)
            lam, f, info["lambda_iterations"] = solve_lambda(sep, l, u, st.total, t0=AT @ y, lam0=lam, d1l=d1l,
                                                             d1u=d1u, weights=w)
            info["projection_start"] = True
        phi = dual_value(sep, f, lam, y, st, w)
        for it in range(1, max_iter + 1):
            grad = st.residual(f if w is None else w * f)  # A f − b, long rows summed pairwise (.structure.row_sums): the check sums exactly
            mass = grad + b  # A f, for the exponential-tail rows
            held = ineq & (y <= 0) & (grad < 0)  # at y = 0 and pushed outward: stays 0
            free = ~held
            pg = np.where(free, grad, np.maximum(grad, 0.0))
            if np.max(np.abs(pg)) <= tol or (stop is not None and stop()):  # solve(time_limit=...): the point so far
                break
            info["newton_iterations"] = it
            inner = (f > l) & (f < u)
            D_all = np.where(l < u, inverse_curvature(sep, f), 0.0)
            if w is not None:
                D_all = w * D_all
            Dn = np.where(inner, D_all, 0.0)
            ad1, s1 = A @ Dn, float(Dn.sum())  # λ's first-order response to a y step: −(A D 1)·Δy/(1ᵀD1)
            # Levenberg term from the curvature the bound values would have if free: keeps the step
            # finite (and of the right scale) when a row has no interior value, i.e. H is singular.
            delta = np.zeros(st.m)
            if augmented is not None:
                system = _SparseNewton(augmented, Dn, D_all, mu)
                tail = _tail_rows(system.H_diag, mass, grad, b, free, nonneg, radius)
                newton = free & ~tail
                rhs = grad[newton]
                if tail.any():
                    delta[tail] = _tail_steps(system.H_diag, mass, b, tail)
                    rhs = rhs - system.block_times(newton, tail, delta[tail])
                delta[newton] = system.solve(newton, rhs)
            else:
                H = _schur_kept(schur_n, A, Dn, AT)
                H_all = _schur_kept(schur_all, A, D_all, AT)
                tail = _tail_rows(np.diag(H), mass, grad, b, free, nonneg, radius)
                newton = free & ~tail
                rhs = grad[newton]
                if tail.any():
                    delta[tail] = _tail_steps(np.diag(H), mass, b, tail)
                    rhs = rhs - (H + mu * H_all)[np.ix_(newton, tail)] @ delta[tail]
                delta[newton] = _dense_solve((H + mu * H_all)[np.ix_(newton, newton)], rhs)
            if not np.all(np.isfinite(delta)):
                break
            big = float(np.max(np.abs(delta)))
            capped = big > radius
            if capped:  # beyond the range of h' every value is pinned at a bound: no use going further
                delta *= radius / big
            # projected on y ≥ 0 for the inequality rows; Armijo up to φ's rounding. Called by backtrack in
            # this iteration only; the defaults bind its values (``seen``: φ(α) − φ of the last trial;
            # ``err``: the rows' residual now, for steps whose ascent φ cannot resolve)
            seen: list = []
            err = float(np.max(np.abs(pg)))

            def trial(alpha, y=y, delta=delta, lam=lam, ad1=ad1, s1=s1, phi=phi, grad=grad, seen=seen, err=err):
                y_new = y + alpha * delta
                y_new[ineq] = np.maximum(y_new[ineq], 0.0)
                lam_pred = lam - float(ad1 @ (y_new - y)) / s1 if s1 > 0 else lam
                lam_new, f_new, phi_new = at(y_new, lam_pred)
                seen[:] = [phi_new - phi]
                ascent = float(grad @ (y_new - y))
                ok = phi_new >= phi + 1e-4 * ascent - 4 * _EPS * abs(phi)
                if not ok and ascent <= 64 * _EPS * abs(phi):
                    # the step's ascent is below φ's rounding (the last steps): φ cannot tell, so the
                    # rows' residual decides (a choice; it halves or the step is shortened as before)
                    r_new = st.residual(f_new if w is None else w * f_new)
                    r_new = np.where(ineq & (y_new <= 0) & (r_new < 0), 0.0, r_new)
                    ok = float(np.max(np.abs(r_new))) <= 0.5 * err
                return (y_new, lam_new, f_new, phi_new) if ok else None

            if capped:  # the step is the radius, not Newton's: shrink it by the model of φ along it
                alpha, got = _interpolated(trial, seen, float(grad @ delta), 30)
            else:
                alpha, got = backtrack(trial, 30)
            if got is None or np.array_equal(got[0], y):
                info["line_search_failures"] += int(got is None)
                break
            mu = damping(mu, alpha, 1.0)
            if capped:  # a trust region from then on: twice the step the line search took
                radius = 2.0 * alpha * radius
            y, lam, f, phi = got
    return f, lam, y, info


_SCREEN_MIN_D = 20_000  # below this the full solve is as fast


def _top(score, k):
    if k >= score.shape[0]:
        return np.arange(score.shape[0])
    return np.argpartition(-score, k - 1)[:k]


def solve_screened(sep, st, max_rounds: int = 30, max_iter: int = 50, stop=None):
    """:func:`solve_multipliers` (same contract: f, λ, y, info) with working-set screening for large
    domains: solve the dual on the values that can leave their lower bound, check the rest in one pass,
    grow the set until the check passes.

    Why: at d = 10⁶ the optimal support of a frequency vector is typically a few hundred to a few
    thousand values (the rest sit at 0), and every Newton step on the multipliers would otherwise touch
    all d values. With the rows' and the sum's multipliers (λ, y) the KKT conditions of a value v
    outside the working set W hold with f_v = l_v exactly when h_v'(l_v) + t_v ≥ 0, t = λ1 + Aᵀy
    (:mod:`.separable`); so after solving the problem restricted to W (the others fixed at l, their mass
    moved to the right-hand sides) one vectorised pass over the domain either certifies the full
    solution or names the values to add. It terminates: W grows strictly each round and is bounded by d.

    Initial W: the K values with the largest −h_v'(l_v) (those that leave l first as the multipliers
    fall) plus, for every row, its 64 such values (so that every row can reach its total), and every
    value whose upper bound is not the implied one (a Box/upper value may sit at u).
    """
    d = st.d
    probe = sep.restrict(np.arange(2)) if hasattr(sep, "restrict") else None
    if d < _SCREEN_MIN_D or probe is None:
        return solve_multipliers(sep, st, max_iter=max_iter, stop=stop)
    d1l = _d1(sep, st.l)
    var = st.l < st.u
    if np.count_nonzero(var & (d1l == -np.inf)) > d // 2:
        # h'(l) = −∞ (a KL or entropy term): such a value is never at l, so most of the domain is
        # in W anyway — screening would only add a round
        return solve_multipliers(sep, st, max_iter=max_iter, stop=stop)
    score = np.where(np.isnan(d1l), np.inf, -d1l)
    score = np.where(var, score, -np.inf)  # fixed values never need to be in W
    k = min(d, max(4096, 8 * st.m))
    inW = np.zeros(d, bool)
    inW[_top(score, k)] = True
    inW[~st.implied_upper & var & np.isfinite(st.u)] = True
    A = st.A.tocsc() if st.m else st.A  # (read only where there are rows)
    for r in range(st.m):
        cols = st.A.indices[st.A.indptr[r]:st.A.indptr[r + 1]]
        inW[cols[_top(score[cols], min(64, cols.size))]] = True
    inW &= var
    info = {"lambda_iterations": 0, "newton_iterations": 0, "line_search_failures": 0, "rounds": 0,
            "working_set": 0}
    lam = None
    AT = st.A.T.tocsr() if st.m else None
    for rnd in range(1, max_rounds + 1):
        W = np.flatnonzero(inW)
        out = ~inW
        f_out = st.l[out]
        # the problem on W, a Structure (made by type: structure imports tree, which imports this module)
        sub = type(st)(W.size, st.l[W], st.u[W], st.total - float(np.sum(f_out)),
                        A[:, W].tocsr() if st.m else st.A[:, :0],
                        st.b - (A[:, out] @ f_out if st.m else 0.0), st.ineq, st.sum_name, {},
                        st.implied_upper[W])
        fW, lam, y, inf = solve_multipliers(sep.restrict(W), sub, max_iter=max_iter, lam0=lam, stop=stop)
        for key in ("lambda_iterations", "newton_iterations", "line_search_failures"):
            info[key] += inf[key]
        info["rounds"], info["working_set"] = rnd, int(W.size)
        t = lam + (AT @ y if st.m else 0.0)
        with np.errstate(invalid="ignore"):
            viol = out & var & (d1l + t < 0)  # would leave l at these multipliers
        if not viol.any() or (stop is not None and stop()):  # (solve(time_limit=...): the point so far)
            f = st.l.copy()
            f[W] = fW
            return f, lam, y, info
        idx = np.flatnonzero(viol)
        # add the violators and as many again of the next candidates (by how far they are inside)
        inW[idx] = True
        slack = np.where(out & var & ~viol, d1l + t, np.inf)
        extra = min(idx.size + 1024, int(np.sum(np.isfinite(slack))))
        if extra:
            inW[_top(-slack, extra)] = True
    # no convergence of the screening: the full solve
    f, lam, y, inf = solve_multipliers(sep, st, max_iter=max_iter, lam0=lam, stop=stop)
    info.update({k: info[k] + inf[k] for k in ("lambda_iterations", "newton_iterations", "line_search_failures")})
    return f, lam, y, info
