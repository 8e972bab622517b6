"""A primal–dual interior-point method for smooth convex objectives over linear constraints.
Notes: docs/notes/problems.md, "ldpopt.problems.solvers.ipm".
"""

from __future__ import annotations

import time
import warnings

import numpy as np
import qdldl
import scipy.linalg as sla
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from ..._blas import one_thread
from ..check.verdict import check_outcome, check_solution, status_after_check
from ..progress import SolveContext
from ..solution import Solution
from .cvxpy_rows import AffineRows, compile_rows, named_duals
from .isolate import user_code_raised

__all__ = ["DENSE_ROW", "MAX_ITER", "SOLVER", "solve_ipm"]

#: ``Solution.solver`` of this route
SOLVER = "LDPOPT-IPM"
MAX_ITER = 80
#: inequality rows with more entries than this stay out of M (Schur complement): a choice
DENSE_ROW = 64
#: give up (the sequential-QP loop follows) when max(primal residual, μ/μ₀) has not fallen 10× in
#: this many iterations: a Fixed value at the domain's edge, which the fraction to the boundary
#: never reaches, or an infeasible user constraint (a choice). 30, not 15: past d ~ 10⁵ the first
#: iterations raise μ 40–60× above μ₀ while the dual residual falls slowly (CLS + smoothness on the
#: simplex: certified after 30 iterations at d = 3·10⁵ and 32 at 10⁶, where 15 stopped it at
#: iteration 16 and sequential QP through Clarabel took 40 s at 3·10⁵, measured)
STALL = 30
#: the centring target σμ is kept ≥ this × μ₀ (μ₀ the start's): below it the reduced matrix's
#: entries z/s span > 30 decades and its solve loses the dual residual (kl_smooth + Box at d = 200:
#: relative residual 2e-7 at μ = 1e-20·μ₀, 9e-7 at 1e-28·μ₀, measured); 4 decades below the check's gate
MU_FLOOR = 1e-14
#: stop once certified and the last step moved no value by more than this / d (frequency units)
STEP_TOL = 1e-9
#: the active-set step (:func:`_polish`) runs at the first failed check with μ within this factor of
#: the floor (MU_FLOOR · μ₀): there the rows' multipliers and slacks are ~μ apart and the active set
#: is read from them. At the floor the iterates stop moving and the duality gap stays at about
#: (number of inequality rows) × μ: CLS + a subset total + an ∞-norm ball at d = 10⁵ (3·10⁵ rows)
#: sat at the floor from iteration 17 with gap 1.8e-6 and |f − f*| ≤ 5.9e-6, checked 30 times without
#: a pass until the stall rule stopped it at 47 (3.1 s), then sequential QP through Clarabel (3.1 s)
#: (measured)
POLISH_NEAR_FLOOR = 10.0
#: the active-set step's corrections of its set, at most (:func:`_polish`)
POLISH_ROUNDS = 4
#: steps of iterative refinement of the active-set step's regularised solve, at most (:func:`_kkt_solve`)
REFINE = 10
#: Newton steps on the active set, at most, where φ is not quadratic (:func:`_polish`)
POLISH_NEWTON = 4
#: iterations at the floor (μ within 1 % of MU_FLOOR · μ₀) after which a failed check stops the loop,
#: the active-set step tried: the iterate is then the floor's central point, whose duality gap no
#: later iteration lowers
FLOOR_ITERATIONS = 2
#: ``converged`` (the route's target: relative stationarity and gap) stops the loop only once the last
#: step moved no value by more than this / d: at a degenerate bound (optimum on it, multiplier 0) the
#: central path reaches f* as √μ while the relative gap is already ~1e-10 (quartic + Box at d = 200:
#: stopped 1.6e-7 from Clarabel's tight optimum with stationarity 9e-13, gap 8e-11, measured)
CONVERGED_MOVE = 1e-7
#: past the checking gate and until a check has passed, ldpopt's check runs at an iterate only once
#: the last step moved no value by more than this / d, or after ``CHECK_WAIT`` gated iterations
#: without a check: a check at a point still moving cannot end the loop by (a) or (b) of the stopping
#: rule, and the loop stopped, in every case measured, at or just after the first iterate that moved
#: less than ~1e-8/d (CLS + 1e-3·KL + a rank-3 form, CLS + 1e-4·KL + a subset row, d = 10²–10⁴,
#: CLS − 1e-3·geo_mean at d = 100: steps of 2e-6 … 5e-6, then 1e-7 … 3e-7, then 7e-11 … 9e-9 (× 1/d),
#: three checks a solve, each 0.9 ms at d = 100, the first of them never returned, measured). Once a
#: check has passed, every gated iterate is checked (the rule's (c) counts checks running: Huber at
#: d = 10⁵, whose checks alternate pass and fail, took 6 more iterations when every third was checked)
CHECK_MOVE = 1e-8
#: gated iterations without a check, at most, before one runs regardless (a degenerate optimum, where
#: f moves as √μ, is first checked at the third gated iterate)
CHECK_WAIT = 2
#: f no longer moving counts as stuck (a check before μ reaches the gate) only while μ falls less than
#: this factor an iteration: the stuck case is μ held where it is — a slack at its rounding level
#: cutting every step (to ~1e-8 of the last; CLS + 20 dense rows at d = 10⁵, μ sat at 1.1e-10·μ₀),
#: or the centring floor. Where f stops moving because it is already there, the duals still move and
#: μ falls ~100× an iteration to the gate in a few (KL + a subset total at d = 100: f fixed from
#: iteration 2, checked at 3 at μ = 3e-2·μ₀ — gap 4e-3, failed — then certified at 6, measured)
STUCK_FALL = 0.1
_TAU_MIN, _TAU_MAX = 0.99, 1.0 - 1e-8  # τ = 1 − μ/μ₀ rounds to 1 (a slack of exactly 0) once μ/μ₀ < 1e-16
_REG = 1e-14


_POTRF, _POTRS = sla.lapack.get_lapack_funcs(("potrf", "potrs"), (np.zeros(1),))


def _chol(M):
    """Cholesky factor (upper) of a dense symmetric M by LAPACK's potrf, or None where M is not
    numerically positive definite. LAPACK called directly: ``scipy.linalg.cho_factor`` / ``cho_solve``
    checked and converted their arguments at ~20 µs a call, ~40 calls an iteration (measured)."""
    c, info = _POTRF(np.array(M, dtype=np.float64, order="F"), lower=0, clean=0, overwrite_a=1)
    return c if info == 0 else None


def _chol_solve(c, r):
    """M⁻¹ r from :func:`_chol`'s factor, r a vector or an (n, k) array."""
    x, info = _POTRS(c, r, lower=0)
    if info != 0:
        raise np.linalg.LinAlgError(f"potrs: argument {-info} is invalid")
    return x


def _to_boundary(v, dv, tau):
    """Largest α ≤ 1 with v + α dv ≥ (1 − τ) v (v > 0)."""
    neg = dv < 0
    if not np.any(neg):
        return 1.0
    return float(min(1.0, tau * np.min(-v[neg] / dv[neg])))


class _Reduced:
    """The reduced Newton matrix M = ∇²φ + A_Sᵀ diag(D) A_S + reg·I (notes: docs/problems.md) assembled
    straight into a fixed pattern — its upper triangle, CSC — and factored by QDLDL (sparse LDLᵀ,
    approximate-minimum-degree ordering, no pivoting: M is symmetric positive definite).

    The pattern (∇²φ's entries, each sparse row's pairs a_ki a_kj, the diagonal) and where each term
    lands in it are laid out once and again only when ∇²φ's pattern changes; each iteration then
    writes the values (∇²φ's upper entries, T·D for the rows, reg on the diagonal) and refactors
    numerically only (qdldl's ``update``, the ordering and symbolic factorisation kept). At d = 10⁵
    with a tridiagonal ∇²J: 7 ms a factorisation against 38–62 ms for SuperLU with COLAMD, which it
    replaced, and no sparse sums, conversions or triangle extraction per iteration (measured)."""

    def __init__(self, A_S):
        self.A_S = sp.csr_array(A_S)
        self.A_ST = self.A_S.T.tocsr()  # once: a transpose is a new sparse object, ~20 µs at every use
        self.key = self.solver = None

    def _layout(self, H):
        n, A = H.shape[0], self.A_S
        nnz = np.diff(A.indptr)
        row = np.repeat(np.arange(A.shape[0]), nnz)  # the row of each entry of A_S
        cnt = nnz[row]  # each entry pairs with every entry of its row
        e1 = np.repeat(np.arange(A.nnz), cnt)
        e2 = A.indptr[row[e1]] + (np.arange(e1.size) - np.repeat(np.cumsum(cnt) - cnt, cnt))
        i, j = A.indices[e1], A.indices[e2]
        keep = i <= j
        e1, e2, i, j = e1[keep], e2[keep], i[keep], j[keep]
        hr = np.repeat(np.arange(n), np.diff(H.indptr))
        self.h_upper = hr <= H.indices
        r = np.concatenate([hr[self.h_upper], i, np.arange(n)])
        c = np.concatenate([H.indices[self.h_upper], j, np.arange(n)])
        keys, pos = np.unique(c.astype(np.int64) * n + r, return_inverse=True)  # column-major: CSC order
        nh, npair = int(self.h_upper.sum()), i.size
        self.pos_h, self.pos_diag = pos[:nh], pos[nh + npair:]
        self.T = sp.csr_array((A.data[e1] * A.data[e2], (pos[nh:nh + npair], row[e1])), shape=(keys.size, A.shape[0]))
        self.indices = (keys % n).astype(np.int32)
        self.indptr = np.concatenate([[0], np.cumsum(np.bincount(keys // n, minlength=n))]).astype(np.int32)
        self.key, self.solver = (H.indptr.tobytes(), H.indices.tobytes()), None

    def factor(self, H, D, reg):
        """Assemble M for ∇²φ = H (canonical CSR), multipliers' ratios D (one per sparse row) and the
        proximal term reg, and factor it; keeps (H, D, reg) for :meth:`matvec`."""
        if self.key != (H.indptr.tobytes(), H.indices.tobytes()):
            self._layout(H)
        data = self.T @ D
        data[self.pos_h] += H.data[self.h_upper]
        data[self.pos_diag] += reg
        if self.solver is None:
            # the matrix object is kept and only its values replaced at each update (a new sparse
            # object's checks cost more than QDLDL's refactorisation at d = 100)
            self.U = sp.csc_array((data, self.indices, self.indptr), shape=H.shape)
            self.solver = qdldl.Solver(self.U, upper=True)
        else:
            self.U.data = data
            self.solver.update(self.U, upper=True)
        self.H, self.D, self.reg = H, D, reg
        return self

    def matvec(self, v):
        """M v, from its terms (no M is formed)."""
        return self.H @ v + self.A_ST @ (self.D * (self.A_S @ v)) + self.reg * v

    def solve(self, r):
        """M⁻¹ r for a vector r, or column by column for a (n, k) array (k: a few dense rows)."""
        r = np.asarray(r, dtype=np.float64)
        if r.ndim == 1:
            return self.solver.solve(r)
        return np.column_stack([self.solver.solve(np.ascontiguousarray(c)) for c in r.T])


class _DiagPlusConst:
    """S(f) = diag(h''(f)) + Q of a recognised smooth callable (:class:`.user_forms.SmoothUserObjective`:
    its form's per-value second derivatives and Q = Σ 2w AᵀA over its quadratic forms that are not
    low-rank, constant), written into one fixed CSR pattern each iteration: the same entries as the
    form's ``hessian_parts`` (d2_i + Q_ii, Q_ij; then times the scale), without its per-call
    ``sp.diags``, sparse sum, conversions and the low-rank factor's ``vstack`` (~0.15–0.3 ms an
    iteration at d = 100, measured). Used only where, at the start, it gives exactly the entries
    ``hessian_parts`` gives (:meth:`make`): otherwise that is read each iteration as before."""

    def __init__(self, form, Q):
        d = form.d
        self.form = form
        P = sp.csr_array((np.ones(d), np.arange(d), np.arange(d + 1)), shape=(d, d))  # the diagonal
        if Q.nnz:  # (no sparse sum for a form whose quadratic forms are all low-rank: Q = 0)
            P = (P + Q).tocsr()
            P.sum_duplicates()
        self.indptr, self.indices = P.indptr, P.indices
        rows = np.repeat(np.arange(d), np.diff(P.indptr))
        self.diag = np.flatnonzero(rows == P.indices)  # one position per value: the pattern holds the diagonal
        Qp = Q.tocsr()
        Qp.sum_duplicates()
        keys = rows.astype(np.int64) * d + P.indices  # row-major, sorted: the canonical CSR order
        q_keys = np.repeat(np.arange(d, dtype=np.int64), np.diff(Qp.indptr)) * d + Qp.indices
        self.base = np.zeros(P.nnz)
        self.base[np.searchsorted(keys, q_keys)] = Qp.data
        self.shape = (d, d)
        self.H = None

    @classmethod
    def make(cls, terms, f0, S0):
        """The fixed-pattern S for ``terms`` when its objective is a recognised smooth callable and the
        entries at f0 equal ``S0`` (what ``hessian_parts`` gave there) exactly; else None."""
        obj = getattr(terms, "obj", None)
        form = getattr(obj, "form", None)
        # the objective says so itself (a recognised smooth callable's ``hessian_from_form``): its
        # Hessian is its form's, entry for entry
        if not getattr(obj, "hessian_from_form", False) or form is None:
            return None
        try:
            low = {id(A) for _, A, _ in form.low_rank}
            Q = sum(2.0 * w * (A.T @ A) for w, A, _ in form.quads if id(A) not in low)
            d = form.d
            Q = sp.csr_array(Q) if sp.issparse(Q) else sp.csr_array((d, d))
            out = cls(form, Q)
            got, ref = out(f0, 1.0), sp.csr_array(S0)
            if got.shape != ref.shape:
                return None
            # the same stored arrays are the same matrix (no sparse comparison formed); else the
            # entries compared as before (a pattern may differ by explicit zeros)
            same = (np.array_equal(got.indptr, ref.indptr) and np.array_equal(got.indices, ref.indices)
                    and np.array_equal(got.data, ref.data))
            if not same and (got != ref).nnz:
                return None
        except Exception:  # noqa: BLE001 - hessian_parts each iteration, as before
            return None
        return out

    def __call__(self, f, factor):
        """S(f) · factor, canonical CSR: one matrix object, its values replaced at each call (the
        previous call's S is no longer read: each Newton step reads its own iteration's)."""
        data = self.base.copy()
        dd = np.asarray(self.form.d2(f), float)
        for t in getattr(self.form, "geo", ()):  # a geometric mean's diagonal part (as hessian_parts adds it)
            dd = dd + t.diagonal(f)
        data[self.diag] = dd + data[self.diag]
        if self.H is None:
            self.H = sp.csr_array((data * factor, self.indices, self.indptr), shape=self.shape)
        else:
            self.H.data = data * factor
        return self.H


class _Newton:
    """One factorisation of the reduced Newton matrix (notes: docs/problems.md) and its solves."""

    def __init__(self, H, D_S, C, E, reduced, CT, CT_dense):
        # a proximal term relative to ∇²φ's scale (O(1) by φ = J/m), not to M's: M's largest diagonal
        # entry is z/s at an active bound (~1e17 and up as μ → 0), and a term of that size on the free
        # values' diagonal (H_vv ~ 1) bends their Newton step (before: the dual residual rose from
        # 1e-10 to 1e-4 in the last iterations at d = 10⁵, CLS + smoothness on the simplex, measured)
        reg = _REG * max(float(np.max(np.abs(H.diagonal()), initial=0.0)), 1.0)
        self.lu = reduced.factor(H, D_S, reg)
        self.C, self.E, self.CT = C, E, CT  # CT, CT_dense: Cᵀ (CSR, dense), formed once per solve
        # the products with a vector through the dense Cᵀ already held (k × d: no more than the
        # MinvCt @ w each solve makes; a sparse product's fixed cost, ~4 µs, was most of these at d = 100)
        self.Cd = None if CT_dense is None else CT_dense.T
        self.CTd = CT_dense
        if C.shape[0]:
            self.MinvCt = self.lu.solve(CT_dense)
            S = C @ self.MinvCt + np.diag(E)
            if np.any(E < 0):  # a negative rank-1 Hessian part (E = −1): S indefinite, nonsingular
                self.schur_lu = sla.lu_factor(S)
            else:
                self.schur = _chol(S + np.eye(S.shape[0]) * (1e-15 * max(float(np.max(np.abs(np.diag(S)))), 1e-300)))
                if self.schur is None:
                    raise np.linalg.LinAlgError("the Schur complement is not positive definite")

    def _once(self, rho, t):
        u = self.lu.solve(rho)
        if not self.C.shape[0]:
            return u, np.zeros(0)
        lu = getattr(self, "schur_lu", None)
        Cu = self.Cd @ u
        w = _chol_solve(self.schur, Cu - t) if lu is None else sla.lu_solve(lu, Cu - t)
        return u - self.MinvCt @ w, w

    def solve(self, rho, t):
        """(Δx, w) with M Δx + Cᵀ w = ρ, C Δx − E w = t (E ≥ 0: the dense rows' S/Z), with one step of
        iterative refinement on that system (M's entries span ~30 decades as μ → 0)."""
        dx, w = self._once(rho, t)
        if not self.C.shape[0]:
            ex, ew = self._once(rho - self.lu.matvec(dx), t)
        else:
            ex, ew = self._once(rho - self.lu.matvec(dx) - self.CTd @ w, t - self.Cd @ dx + self.E * w)
        return dx + ex, w + ew


def solve_ipm(problem, terms, converged, max_iter: int = MAX_ITER, ctx=None):
    """The interior-point route (notes: docs/problems.md) for ``problem`` with the smooth objective's
    :class:`.smooth.SmoothTerms` ``terms``; ``converged(checks)``: the target accuracy. (a checked
    ``Solution``, "") — ``"optimal"`` only when ldpopt's check passed with its KKT certificate,
    ``"time_limit"`` at the solve's time limit, else ``"user_limit"`` with the best point checked —
    or (None, why) when the constraints are not linear rows over f alone. ``ctx``: the solve's
    :class:`~ldpopt.problems.progress.SolveContext` (time limit, progress lines; None: neither). An
    exception inside it that is not the user's own code's (:func:`.isolate.user_code_raised`: a
    factorisation's) is a ``"solver_error"`` Solution without a point.

    Runs on one BLAS thread while its dense systems are small (:func:`ldpopt._blas.one_thread`: the
    Schur complement over the equality and dense rows, k × k): the d × k products gain nothing from
    threads, and idle BLAS threads spinning between calls doubled the CPU time of the call at d = 10⁵
    (1.6 s CPU for 0.9 s wall, measured)."""
    start = time.perf_counter()
    ctx = ctx or SolveContext()
    own = AffineRows.read(problem)  # the rows without a cvxpy compilation (.cvxpy_rows), else cvxpy's
    compiled, why = ((own.A_E, own.b_E, own.A_I, own.b_I, own, None, None), "") if own is not None \
        else compile_rows(problem)
    if compiled is None:
        return None, why
    A_E, _, A_I, _, *_ = compiled
    try:
        with one_thread(A_E.shape[0] + int(np.sum(np.diff(A_I.indptr) > DENSE_ROW))):
            return _solve(problem, terms, converged, max_iter, compiled, start, ctx), ""
    except Exception as exc:  # the method failed: one attempt, the route goes on
        if user_code_raised(exc):
            raise
        return Solution.failed(problem.estimate.d, "solver_error", SOLVER, problem.objective.name,
                               f"{SOLVER} raised {type(exc).__name__}: {exc}",
                               wall_time=time.perf_counter() - start), ""


def _named(prob, chain, inv, x, y, z, s, m, problem) -> dict:
    """The named multipliers: from the rows' own reading where the rows were read so (``prob`` the
    :class:`.cvxpy_rows.AffineRows`), else by cvxpy's inversion of its compilation."""
    if isinstance(prob, AffineRows):
        return prob.answer(x, np.concatenate([y, z]), s, m)[1]
    return named_duals(prob, chain, inv, x, y, z, s, m, problem)


def _solve(problem, terms, converged, max_iter, compiled, start, ctx):
    """:func:`solve_ipm`'s iterations on the compiled rows; the checked Solution."""
    A_E, b_E, A_I, b_I, prob, chain, inv = compiled
    s_f, d = problem.scale, problem.estimate.d
    clock = ctx.clock  # Problem.solve's time limit and progress (.progress)
    m_e, m_i = A_E.shape[0], A_I.shape[0]
    nnz = np.diff(A_I.indptr)
    dense = nnz > DENSE_ROW
    # no dense row (the usual case): A_I itself, not a row selection's copy (a sparse indexing is ~0.1 ms
    # at d = 100)
    A_S, A_D = (A_I[~dense], A_I[dense]) if dense.any() else (A_I, sp.csr_array((0, d)))
    reduced = _Reduced(A_S)  # M's pattern and symbolic factorisation, kept across iterations
    C = A_D if m_e == 0 else sp.vstack([A_E, A_D]).tocsr()
    one = np.flatnonzero(nnz == 1)
    # a single-entry row's column and coefficient read at its one position (no sparse row selection)
    cols, first = np.unique(A_I.indices[A_I.indptr[one]], return_index=True)
    bounds = (one[first], cols, A_I.data[A_I.indptr[one[first]]])  # one single-entry row per value: its bound
    lo, hi = terms.lo / s_f, terms.hi / s_f
    # the domain's finite sides, once: (bound's finite values, their positions, sign) per side that has any
    sides = [(b[fin], fin, sign) for b, sign in ((lo, 1.0), (hi, -1.0)) if np.any(fin := np.isfinite(b))]
    x = x_prev = terms.start() / s_f
    # ∇²J = S + LᵀL: a low-rank part L (k rows, a dense A of a quadratic form) joins the dense rows in
    # the Schur complement (rows L Δx − w = 0, E = 1), so M keeps S's sparsity: O(d·k) a step, where
    # forming LᵀL cost d² (7.5 GB and 7 minutes at d = 10⁴, k = 3, measured)
    parts = getattr(terms, "hessian_parts", None)
    H0, L0 = parts(x * s_f) if parts is not None else (sp.csr_array(terms.hessian(x * s_f)), None)
    dg = sp.csr_array(H0).diagonal() * s_f * s_f
    if L0 is not None:  # LᵀL's diagonal: each column's sum of squares (no sparse product formed)
        L0c = sp.csr_array(L0)
        dg = dg + np.bincount(L0c.indices, weights=L0c.data * L0c.data, minlength=d) * s_f * s_f
    # ∇²J = S + LᵀL − NᵀN: a negative part N (k rows, a geometric mean's rank-1 term, which moves with
    # f) joins the Schur complement as rows N Δx + w = 0 (E = −1), formed again at each iterate
    negative = getattr(terms, "hessian_negative", None)
    N0 = negative(x * s_f) if negative is not None else None
    k_neg = 0 if N0 is None else N0.shape[0]
    if k_neg:
        dg = dg - np.sum(np.asarray(N0) ** 2, axis=0) * s_f * s_f
    m = float(np.mean(dg[dg > 0])) if np.any(dg > 0) else 1.0  # φ = J/m: O(1) coefficients
    diag_plus = _DiagPlusConst.make(terms, x * s_f, H0)  # S(f) in a fixed pattern, where it applies

    def grad(x):
        return terms.gradient(x * s_f) * (s_f / m)

    def neg_rows(x):
        """N at x, scaled as L (∇²φ = S + LᵀL − NᵀN), or None without a negative part."""
        return None if not k_neg else np.asarray(negative(x * s_f), float) * (s_f / np.sqrt(m))

    def hessian(x):
        """∇²φ's sparse part S at x (∇²φ = S + LᵀL − NᵀN), canonical CSR."""
        if diag_plus is not None:
            return diag_plus(x * s_f, s_f * s_f / m)
        out = (parts(x * s_f)[0] if parts is not None else sp.csr_array(terms.hessian(x * s_f))) * (s_f * s_f / m)
        out.sum_duplicates()  # canonical: sorted indices, the pattern _Reduced lays out
        return out

    k_low = 0 if L0 is None else L0.shape[0]
    # φ = J/m over x = f/s_f: L's rows scaled alike, constant (a quadratic form's A)
    L_s = None if L0 is None else sp.csr_array(L0) * (s_f / np.sqrt(m))
    if k_low:
        C = sp.vstack([C, L_s]).tocsr()
    if k_neg:  # N's rows, dense: their d entries each placed once, the values written at each iterate
        C = sp.vstack([C, sp.csr_array(np.ones((k_neg, d)))]).tocsr()
        neg_data = slice(C.nnz - k_neg * d, C.nnz)

    # start (a choice): slacks b − A x₀ where positive, else 1e-2 of the row's mean |term|; multipliers
    # on the central path, z = μ₀/s (every s_k z_k = μ₀), with μ₀ = mean |∇φ(x₀)| × the median slack
    # of the rows scaled to ‖A_k‖₂ = 1: a multiplier of a typical gradient's size at a typical slack.
    # Before, z_k = ‖∇φ(x₀)‖∞/‖A_k‖₂ itself: s∘z spread over the slacks' range (250× at d = 10⁵, CLS
    # + smoothness on the simplex, x₀ ~ 3e-3 where f̃ < 0 and ~1 where not), μ₀ was 100× larger and the
    # iterates never recentred: steps of 0.05–0.5, stalled after 16 iterations (measured)
    g = grad(x)
    slack = b_I - A_I @ x
    floor = np.maximum(1e-2 * np.asarray(abs(A_I) @ np.abs(x), float) / np.maximum(nnz, 1), 1e-12)
    s = np.where(slack > floor, slack, floor)
    row_norm = np.sqrt(np.bincount(np.repeat(np.arange(m_i), nnz), weights=A_I.data * A_I.data, minlength=m_i))
    mu0 = max(float(np.mean(np.abs(g))), 1e-8) * (float(np.median(s / np.maximum(row_norm, 1e-300))) if m_i else 1.0)
    z = mu0 / s
    y = np.zeros(m_e)
    bscale = max(float(np.max(np.abs(b_I), initial=0.0)), float(np.max(np.abs(b_E), initial=0.0)), 1.0)
    best, records, progress, status, last, flat = None, [], [], "user_limit", np.inf, 0
    # the constant matrices' transposes once (each .T is a new sparse object: 160 a call at d = 100)
    # (A_S's is _Reduced's, and A_I's the same where no row is dense)
    A_ST = reduced.A_ST
    A_ET, A_IT, CT = A_E.T.tocsr(), A_ST if A_S is A_I else A_I.T.tocsr(), C.T.tocsr()
    CT_dense = CT.toarray() if C.shape[0] else None
    # a recognised quadratic J (its form says so): ∇²J is the same at every f, evaluated once
    quadratic, H = bool(getattr(getattr(problem.objective, "form", None), "quadratic", False)), None
    message = f"no KKT certificate after {max_iter} iterations"
    k, waited, stuck_tried = 0, 0, False  # waited: gated iterations since the last check (CHECK_WAIT)
    polished, at_floor, stepped = False, 0, False  # the active-set step tried / gave the point; iterations at the floor
    mu_prev = np.inf  # μ at the iteration before (STUCK_FALL)
    g_next = None  # ∇φ at the accepted trial point, which is the next x: evaluated once, not twice
    for k in range(1, max_iter + 1):
        g = grad(x) if g_next is None else g_next
        r_d = g + A_ET @ y + A_IT @ z
        r_e, r_i = A_E @ x - b_E, A_I @ x + s - b_I
        mu = float(s @ z) / max(m_i, 1)
        rel_d = float(np.max(np.abs(r_d))) / max(float(np.max(np.abs(g))), 1.0)
        rel_p = max(float(np.max(np.abs(r_e), initial=0.0)), float(np.max(np.abs(r_i), initial=0.0))) / bscale
        # an attempt record as Solution.attempts documents it (solver, status, checks, seconds), one per iteration
        rec = {"solver": "LDPOPT-IPM", "status": "iterate", "checks": "", "seconds": time.perf_counter() - start,
               "iteration": k, "dual": rel_d, "primal": rel_p, "mu": mu}
        records.append(rec)
        progress.append(max(rel_p, mu / mu0))
        at_floor += mu <= 1.01 * MU_FLOOR * mu0
        if k > STALL and status != "optimal" and not progress[-1] <= 0.1 * progress[-1 - STALL]:
            message = f"stalled at iteration {k} (primal residual and mu not 10x smaller in {STALL} iterations)"
            break
        moved = float(np.max(np.abs(x - x_prev))) * s_f
        # f no longer moves (STEP_TOL), μ short of the gate: checked now, once per such run, where the
        # loop would stop by (b) if it passes. Seen at d = 10⁵, CLS + 20 dense rows (10 of them ≤, tight):
        # such a row's slack at 3e-18, below its row's rounding, cut every step to ~1e-8 of the last one
        # while μ sat at 2.2e-13 = 1.1e-10·μ₀: 30 iterations (2.2 s) to the stall rule, then the same
        # point checked and certified (measured)
        stuck = k > 1 and rel_p <= 1e-11 and moved <= STEP_TOL / d and mu > STUCK_FALL * mu_prev
        if not stuck:
            stuck_tried = False
        gated = rel_p <= 1e-11 and (mu <= 1e-10 * mu0 or (stuck and not stuck_tried))
        stuck_tried = stuck_tried or (gated and stuck)
        if gated and status != "optimal" and moved > CHECK_MOVE / d and waited < CHECK_WAIT:  # (CHECK_MOVE)
            waited += 1
            clock.note("IPM", k, dual=rel_d, primal=rel_p, mu=mu)
        elif gated:
            waited = 0
            duals = _named(prob, chain, inv, x, y, _reestimate(x, s, z, r_d, bounds), s, m, problem)
            ch = check_solution(problem, x * s_f, duals, deadline=ctx.deadline)
            rec["checks"], rec["status"] = ch.summary(), "checked"
            if best is None or ch.passed or not best[2].passed:  # the latest point, unless it fails and one passed
                best = (x * s_f, duals, ch)
            clock.note("IPM", k, stationarity=ch.stationarity, gap=ch.gap, violation=ch.max_violation)
            near_floor = mu <= POLISH_NEAR_FLOOR * MU_FLOOR * mu0
            if status != "optimal" and near_floor and status_after_check("optimal", ch) != "optimal":
                if not polished:  # (POLISH_NEAR_FLOOR): the active set's own optimum, checked
                    polished = True
                    step = _polish(x, s, z, hessian, L_s, neg_rows, grad, A_E, b_E, A_I, b_I, quadratic)
                    if step is not None:
                        xp, yp, zp, sp_ = step
                        dp = _named(prob, chain, inv, xp, yp, zp, sp_, m, problem)
                        chp = check_solution(problem, xp * s_f, dp, deadline=ctx.deadline)
                        records.append({"solver": "LDPOPT-IPM", "status": "checked", "checks": chp.summary(),
                                        "seconds": time.perf_counter() - start, "iteration": k,
                                        "dual": rel_d, "primal": rel_p, "mu": mu, "step": "active set"})
                        if status_after_check("optimal", chp) == "optimal":
                            best, status, stepped = (xp * s_f, dp, chp), "optimal", True
                            break
                        if chp.passed and not best[2].passed:
                            best = (xp * s_f, dp, chp)
                if at_floor >= FLOOR_ITERATIONS:
                    message = (f"stopped at iteration {k}: mu at its floor ({MU_FLOOR:g} x mu0), the iterate "
                               "no longer moves")
                    break
            if status_after_check("optimal", ch) == "optimal":  # the one status rule
                assert ch.stationarity is not None and ch.gap is not None  # certified: both ran
                measure = max(ch.stationarity, ch.gap)
                flat = flat + 1 if status == "optimal" and not measure <= 0.5 * last else 0
                status, last = "optimal", min(measure, last)
                # at the target, or f no longer moves, or two checks running without halving the measure
                if (converged(ch) and moved <= CONVERGED_MOVE / d) or moved <= STEP_TOL / d or flat >= 2:
                    break
        else:
            clock.note("IPM", k, dual=rel_d, primal=rel_p, mu=mu)
        if clock.expired():
            if status != "optimal":
                status, message = "time_limit", f"time limit reached after iteration {k}; f is the best point checked"
            break
        if H is None or not quadratic:
            H = hessian(x)
        D = z / s
        if k_neg:  # N at this iterate, scaled as L (φ = J/m over x = f/s_f), into C and Cᵀ (dense)
            N = neg_rows(x)
            C.data[neg_data] = N.ravel()
            CT_dense[:, C.shape[0] - k_neg:] = N.T
            CT = CT_dense
        newton = _Newton(H, D[~dense], C, np.concatenate([np.zeros(m_e), s[dense] / z[dense], np.ones(k_low),
                                                          -np.ones(k_neg)]), reduced, CT, CT_dense)

        # the closures are called in this iteration only; their defaults bind its values
        def direction(r_c, z=z, s=s, r_i=r_i, r_d=r_d, r_e=r_e, D=D, newton=newton):
            # Δz = (−r_c + z∘r_i + z∘A_I Δx)/s; sparse rows eliminated into M, dense rows kept in C
            q = (-r_c + z * r_i) / s
            dx, w = newton.solve(-r_d - A_ST @ q[~dense], np.concatenate([-r_e, -q[dense] / D[dense],
                                                                          np.zeros(k_low + k_neg)]))
            dz = np.empty(m_i)
            dz[~dense] = q[~dense] + D[~dense] * (A_S @ dx)
            dz[dense] = w[m_e:w.size - k_low - k_neg]
            return dx, -r_i - A_I @ dx, w[:m_e], dz

        def lengths(dx, ds, dz, tau, x=x, s=s, z=z):
            ap = _to_boundary(s, ds, tau)
            for bound, fin, sign in sides:
                ap = min(ap, _to_boundary(sign * (x[fin] - bound), sign * dx[fin], tau))
            return ap, _to_boundary(z, dz, tau)

        dx, ds, dy, dz = direction(s * z)  # predictor
        ap, ad = lengths(dx, ds, dz, 1.0)
        mu_aff = float((s + ap * ds) @ (z + ad * dz)) / max(m_i, 1)
        sigma = min((mu_aff / mu) ** 3, 1.0) if mu > 0 else 0.0
        target = max(sigma * mu, MU_FLOOR * mu0)  # centring target, never below the floor
        dx, ds, dy, dz = direction(s * z + ds * dz - target)  # corrector
        ap, ad = lengths(dx, ds, dz, min(max(_TAU_MIN, 1.0 - mu / mu0), _TAU_MAX))
        # one step length for x, s, y and z (N&W §16.6): ∇φ(x) couples the dual residual to x, so a
        # dual step longer than the primal one does not shrink it (separate lengths, N&W eq. 19.9:
        # 1–2 more iterations at d = 10⁴–10⁵, CLS + smoothness; with the old start, steps of 0.05)
        ap = ad = min(ap, ad)
        g_next = None
        for _ in range(30):  # a trial point where ∇J is not finite: a shorter primal step
            with np.errstate(all="ignore"):
                g_try = grad(x + ap * dx)
            if np.all(np.isfinite(g_try)):
                g_next = g_try
                break
            ap *= 0.5
        ad = ap
        x_prev, mu_prev = x, mu
        x, s, y, z = x + ap * dx, s + ap * ds, y + ad * dy, z + ad * dz
        rec.update(step_primal=ap, step_dual=ad, sigma=sigma)
    if best is None:  # never reached the checking stage: check where it stopped
        r_d = grad(x) + A_ET @ y + A_IT @ z
        duals = _named(prob, chain, inv, x, y, _reestimate(x, s, z, r_d, bounds), s, m, problem)
        best = (x * s_f, duals, check_solution(problem, x * s_f, duals, deadline=ctx.deadline))
    f, duals, ch = best
    if status_after_check("optimal", ch) == "optimal":
        status = "optimal"
        message = (f"smooth objective (exact gradient and sparse Hessian) solved by a primal-dual interior-point "
                   f"method ({k} iterations over the constraints{', then a step onto the active set' if stepped else ''}, "
                   f"no conic solver); ldpopt's check: {ch.summary()}")
    elif status != "time_limit":
        message += f"; {check_outcome(ch)}"
    wall = time.perf_counter() - start
    return Solution(f, status, status == "optimal", problem.objective.value(f, problem.estimate), duals,
                    solver=SOLVER, iterations=k, compile_time=0.0, solve_time=wall, wall_time=wall,
                    message=message, objective=problem.objective.name, checks=ch, attempts=records)


def _polish(x, s, z, hess, L, neg, grad, A_E, b_E, A_I, b_I, quadratic: bool, rounds: int = POLISH_ROUNDS):
    """The active set's own optimum, by Newton steps from x: the inequality rows whose multiplier
    exceeds their slack (z_k > s_k) taken as equalities with the equality rows, and the step
    (Δx, λ) of

        [∇²φ  Gᵀ] [Δx]   [−∇φ(x)  ]
        [G    0 ] [λ ] = [b_G − G x],   ∇²φ = S + LᵀL − NᵀN,  G = [A_E; A_I,act],

    solved as one sparse system with L Δx and N Δx as variables of their own (no LᵀL formed) — the
    exact optimum for a quadratic φ (``quadratic``) once the active set is right; otherwise Newton
    steps on that set, at most :data:`POLISH_NEWTON` (``hess``, ``neg``, ``grad``: S, N and ∇φ at a
    point; L constant). Where the guess was wrong, the set is corrected and the system solved again
    from x, at most ``rounds`` times (a primal–dual active-set update: rows with a negative
    multiplier leave it, violated rows join it). An active row with one entry (a bound) is kept once per value (the
    largest multiplier), so a value on two bounds at once (f ≥ 0 and a ball's lower side at 0)
    leaves G of full row rank, and a value on its bound is set to it exactly (the solve leaves it
    ~1e-12 off, and that times its multiplier, over 10⁵ bounds, is the duality gap the check
    reads). Returns (x, y, z, s) on the IPM's rows — y the equality rows' multipliers, z the
    inequality rows' (zero off the active set), s their slacks — or None where the system is
    singular, off the objective's domain (∇φ not finite there) or where no set within ``rounds``
    gave nonnegative multipliers and no violated row.
    ldpopt's check decides the point, as any. A choice: the IPM's own books (Nocedal & Wright,
    §16.6) stop at the central path; an active-set step at its end is the crossover
    interior-point codes use."""
    n, m_e, m_i = x.size, A_E.shape[0], A_I.shape[0]
    nnz_all = np.diff(A_I.indptr)
    kl = 0 if L is None else L.shape[0]
    scale = max(float(np.max(np.abs(b_I), initial=0.0)), 1.0)

    def step(x0, act):
        """(x0 + Δx, λ) of the system above at x0 on the rows ``act``, or None (singular)."""
        N = neg(x0)
        kn = 0 if N is None else N.shape[0]
        keep = [0] + ([1] if kl else []) + ([2] if kn else [])
        top = [hess(x0), None if not kl else sp.csr_array(L).T, None if not kn else -sp.csr_array(N).T]
        extra = ([[sp.csr_array(L), -sp.eye_array(kl), None]] if kl else []) + \
            ([[sp.csr_array(N), None, -sp.eye_array(kn)]] if kn else [])
        G = sp.vstack([A_E, A_I[act]]).tocsr() if act.size else sp.csr_array(A_E)
        r = np.concatenate([b_E - A_E @ x0, b_I[act] - A_I[act] @ x0])
        rows = [[*[top[j] for j in keep], G.T]] + [[*[e[j] for j in keep], None] for e in extra] + \
            [[G, *[None] * (len(keep) - 1), None]]
        K = sp.block_array(rows, format="csc")
        rhs = np.concatenate([-grad(x0), np.zeros(kl + kn), r])
        sol = _kkt_solve(K, rhs, G.shape[0])
        return None if sol is None else (x0 + sol[:n], sol[n + kl + kn:])

    e_nnz = np.diff(A_E.indptr)
    fixed = A_E.indices[A_E.indptr[:-1][e_nnz == 1]]  # values an equality row of one entry fixes
    want = z > s
    for _ in range(rounds):
        act = np.flatnonzero(want)
        nnz = nnz_all[act]
        single = act[nnz == 1]
        if single.size:  # one active bound per value (the largest multiplier), none on a value an equality fixes
            col = A_I.indices[A_I.indptr[single]]
            order = np.lexsort((-z[single], col))
            _, first = np.unique(col[order], return_index=True)
            single = single[order[first]]
            single = single[~np.isin(A_I.indices[A_I.indptr[single]], fixed)]
        act = np.sort(np.concatenate([act[nnz != 1], single]))
        got = step(x, act)
        for _ in range(0 if quadratic else POLISH_NEWTON - 1):  # Newton on the set: from its last point
            if got is None or float(np.max(np.abs(got[0] - x), initial=0.0)) == 0.0:
                break
            nxt = step(got[0], act)
            if nxt is None:
                break
            moved = float(np.max(np.abs(nxt[0] - got[0]), initial=0.0))
            got = nxt
            if moved <= 1e-15 * max(float(np.max(np.abs(got[0]))), 1.0):
                break
        if got is None:
            return None
        xp, lam = got
        if not np.all(np.isfinite(grad(xp))):  # off the objective's domain (a log's 0): nothing to certify
            return None
        y, z_act = lam[:m_e], lam[m_e:]
        if single.size:  # a value on its bound exactly
            xp[A_I.indices[A_I.indptr[single]]] = b_I[single] / A_I.data[A_I.indptr[single]]
        slack = b_I - A_I @ xp
        inactive = np.ones(m_i, bool)
        inactive[act] = False
        leave, join = act[z_act < 0], np.flatnonzero(inactive & (slack < -1e-12 * scale))
        if not leave.size and not join.size:
            zp = np.zeros(m_i)
            zp[act] = z_act
            return xp, y, zp, np.maximum(slack, 0.0)
        want = np.zeros(m_i, bool)
        want[act] = True
        want[leave] = False
        want[join] = True
    return None


def _kkt_solve(K, rhs, m: int):
    """K⁻¹ rhs for the active-set step's system K (its last ``m`` rows and columns G's), or None.
    K itself by sparse LU with one step of iterative refinement; where K is singular (G not of full
    row rank: a Monotone chain pooled at 0 with f ≥ 0 on each value), K with −δI on G's block
    (quasi-definite, δ = 1e-10 of ∇²φ's largest diagonal entry) and up to :data:`REFINE` steps of
    refinement against K itself, which move x to a solution of K and λ along G's null space only."""
    n = K.shape[0] - m
    with warnings.catch_warnings():
        warnings.simplefilter("error", spla.MatrixRankWarning)
        for delta in (0.0, 1e-10 * max(float(np.max(np.abs(K.diagonal()[:n]), initial=0.0)), 1e-300)):
            try:
                lu = spla.splu(K if not delta else K + sp.diags_array(
                    np.concatenate([np.zeros(n), np.full(m, -delta)]), format="csc"))
            except (spla.MatrixRankWarning, RuntimeError, ValueError):  # singular: the regularised system next
                continue
            sol = lu.solve(rhs)
            for _ in range(1 if not delta else REFINE):
                sol = sol + lu.solve(rhs - K @ sol)
            return sol if np.all(np.isfinite(sol)) else None
    return None


def _reestimate(x, s, z, r_d, bounds):
    """The bound rows' multipliers, each re-chosen as z'_k = max(z_k − r_v/a_k, 0) (row k: a_k·x_v ≤
    b_k; zero dual residual at x_v wherever that is ≥ 0) where that costs less in the first-order
    KKT measure |r_v|·mean|x| + z_k·s_k (residual times a typical step, plus complementarity) — so
    at values near their bound, not at interior ones, whose z'·s would move the residual into the
    gap. A value whose optimum is ~e^-40/d follows the central path x_v ≈ μ/z_v and its log term's
    residual, ~λ from Newton's linear model of log over a 30× step, stays until μ reaches that
    optimum (~60 iterations at d = 16,470, measured) although the point is there to 1e-19. Any
    z' ≥ 0 is as valid a multiplier for ldpopt's check as the iterate's (the check re-chooses the
    nonnegativity multipliers the same way, :func:`.objective_check.absorb_at_zero`). A choice: the
    books keep the iterate's z."""
    rows, cols, a = bounds
    scale = float(np.mean(np.abs(x)))
    new = np.maximum(z[rows] - r_d[cols] / a, 0.0)
    r_new = r_d[cols] + a * (new - z[rows])
    take = np.abs(r_new) * scale + new * s[rows] < np.abs(r_d[cols]) * scale + z[rows] * s[rows]
    z = z.copy()
    z[rows[take]] = new[take]
    return z


