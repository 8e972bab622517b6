"""A user's quadratic objective over linear rows, handed to a QP solver's own interface.

Notes: docs/notes/problems.md, "ldpopt.problems.solvers.direct_qp".
"""

from __future__ import annotations

import importlib
import time

import numpy as np
import scipy.sparse as sp

from ..check.certificate import KINK_DUALS
from ..check.verdict import check_solution, status_after_check, unverified_reason
from ..dual.multipliers import duals_dict
from ..dual.structure import Structure, compiled_for
from ..progress import CONIC_TIME_LIMIT, OWN_TIME_LIMIT, SolveContext
from ..solution import Solution
from .cvxpy_rows import AffineRows, compile_rows, named_duals
from .isolate import SolverTimedOut, runs_isolated, standing, user_code_raised
from .policy import builtin_quadratic, direct_qp_scale

__all__ = ["SUFFIX", "solve_direct_qp"]

#: ``Solution.solver`` of this route: the solver's name with this suffix (``"PIQP-DIRECT"``)
SUFFIX = "-DIRECT"

#: the statuses (Clarabel's words; PIQP's mapped to them) that carry a point worth checking
_ANSWERED = {"Solved": "optimal", "AlmostSolved": "optimal_inaccurate", "MaxIterations": "user_limit",
             "MaxTime": "time_limit", "InsufficientProgress": "user_limit", "AlmostPrimalInfeasible": "user_limit",
             "AlmostDualInfeasible": "user_limit"}


class _CvxpyRows:
    """The constraints' rows by cvxpy's compilation (:func:`.cvxpy_rows.compile_rows`), its multipliers named by
    cvxpy's inversion of it: any linear constraint a user writes."""

    def __init__(self, problem, compiled):
        A_E, b_E, A_I, b_I, self.prob, self.chain, self.inv = compiled
        self.problem = problem
        self.A_E, self.b_E, self.A_I, self.b_I = A_E, b_E, A_I, b_I

    def answer(self, x, z, s, m):
        """(f, named duals) from the solver's x, z and s on these rows (its KKT Px + q + Aᵀz = 0; the
        epigraph rows' cut off)."""
        m_e, m_i = self.A_E.shape[0], self.A_I.shape[0]
        duals = named_duals(self.prob, self.chain, self.inv, x, z[:m_e], z[m_e:m_e + m_i], s[m_e:m_e + m_i],
                            m, self.problem)
        return x * self.problem.scale, duals


class _StructureRows:
    """The rows of a compiled :class:`~.structured.structure.Structure` in x = f/s: Σ f = total (unless
    a tree carries the total: not taken here), its ``==`` and ``≤`` rows, fixed values as equalities,
    every finite lower bound and every upper bound that is a constraint's own (an upper bound implied
    by Σ f = total and the lower bounds is not a row)."""

    def __init__(self, st: Structure, s_f: float):
        d = st.d
        self.st, self.s_f = st, s_f
        lo, up = np.asarray(st.l, float), np.asarray(st.u, float)
        fixed = lo == up
        self.fixed = np.flatnonzero(fixed)
        self.lower = np.flatnonzero(~fixed)
        implied = np.zeros(d, bool) if st.implied_upper is None else np.asarray(st.implied_upper, bool)
        self.upper = np.flatnonzero(~fixed & np.isfinite(up) & ~implied)
        ineq = np.asarray(st.ineq, bool)
        self.eq_rows, self.in_rows = np.flatnonzero(~ineq), np.flatnonzero(ineq)
        # the rows as triplets, each matrix built in one conversion (sp.vstack of row slices of A and
        # of an identity built and converted one per block: ~0.6 ms at d = 100, measured)
        ar, ac, av = _triplets(st.A)
        av = av * s_f
        k = 0 if st.sum_free else 1

        def block(sel, first, *units):
            """A's rows ``sel`` from row ``first`` on, then each (values' indices, ±s) one row per value."""
            at = np.full(st.m, -1)
            at[sel] = np.arange(sel.size) + first
            keep = at[ar] >= 0
            r, c, v = [at[ar[keep]]], [ac[keep]], [av[keep]]
            first += sel.size
            for idx, sign in units:
                r.append(np.arange(idx.size) + first)
                c.append(idx)
                v.append(np.full(idx.size, sign * s_f))
                first += idx.size
            return r, c, v, first

        r, c, v, n_e = block(self.eq_rows, k, (self.fixed, 1.0))
        if k:
            r, c, v = [np.zeros(d, int), *r], [np.arange(d), *c], [np.full(d, s_f), *v]
        self.A_E = sp.coo_array((np.concatenate(v), (np.concatenate(r), np.concatenate(c))), shape=(n_e, d)).tocsr()
        self.b_E = np.concatenate([[st.total] if k else [], st.b[self.eq_rows], lo[self.fixed]])
        r, c, v, n_i = block(self.in_rows, 0, (self.lower, -1.0), (self.upper, 1.0))
        self.A_I = sp.coo_array((np.concatenate(v), (np.concatenate(r), np.concatenate(c))), shape=(n_i, d)).tocsr()
        self.b_I = np.concatenate([st.b[self.in_rows], -lo[self.lower], up[self.upper]])

    def answer(self, x, z, s, m):
        """(f, named duals) from the solver's x, z and s: λ and y scaled back by m; the bound multipliers
        are the solver's own on every value, as cvxpy's inversion reports them (nonzero but tiny where the
        bound is not active): :func:`~.structured.multipliers.duals_dict` names them, given the
        per-value residual r = m (z^lo − z^up) (its r − y^lo + y^up = 0) and each value placed on the
        side whose multiplier is the larger — for the naming only; f is the solver's point."""
        st, d = self.st, self.st.d
        f = x * self.s_f
        k = 0 if st.sum_free else 1
        lam = 0.0 if st.sum_free else m * float(z[0])
        n_eq, n_fix, n_in, n_lo = self.eq_rows.size, self.fixed.size, self.in_rows.size, self.lower.size
        y = np.zeros(st.m)
        y[self.eq_rows] = m * z[k:k + n_eq]
        e = self.A_E.shape[0]
        y[self.in_rows] = m * z[e:e + n_in]
        z_lo, z_up = np.zeros(d), np.zeros(d)
        z_lo[self.lower] = z[e + n_in:e + n_in + n_lo]
        z_up[self.upper] = z[e + n_in + n_lo:e + self.A_I.shape[0]]
        r = m * (z_lo - z_up)
        r[self.fixed] = -m * z[k + n_eq:k + n_eq + n_fix]
        side = np.where(z_up > z_lo, np.asarray(st.u, float), np.asarray(st.l, float))
        return f, duals_dict(st, side, lam, y, r)


def _rows(problem, s_f: float | None = None):
    """(the rows, "") from the structured compilation where it covers the constraints (no tree of
    sums), in x = f/s_f (``problem.scale`` when None), else from cvxpy's; (None, why) when they are
    not linear rows over f alone."""
    st = compiled_for(problem)
    if isinstance(st, Structure) and st.tree is None:
        return _StructureRows(st, problem.scale if s_f is None else s_f), ""
    own = AffineRows.read(problem)
    if own is not None:
        return own, ""
    compiled, why = compile_rows(problem)
    return (None, why) if compiled is None else (_CvxpyRows(problem, compiled), "")


def _triplets(M):
    """(row, column, value) of the entries of a sparse (or dense) matrix M, from its CSR form."""
    M = M if isinstance(M, sp.csr_array) else sp.csr_array(M)
    return np.repeat(np.arange(M.shape[0]), np.diff(M.indptr)), M.indices, M.data


def _csc(pieces, shape):
    """One CSC matrix from pieces (row, column, value, row offset): every block placed by its row
    offset (its columns are its own) in one conversion, where ``sp.hstack``/``vstack``/``block_diag`` built and
    converted a matrix per block (2 ms of the 10 ms route at d = 100, total variation; measured).
    Entries at one position are summed, as the block constructors' conversion to CSC does."""
    if not pieces:
        return sp.csc_array(shape)
    r = np.concatenate([p[0] + p[3] for p in pieces])
    c = np.concatenate([p[1] for p in pieces])
    v = np.concatenate([np.asarray(p[2], float) for p in pieces])
    return sp.coo_array((v, (r, c)), shape=shape).tocsc()


def _huber_parts(form):
    """(the form without its Huber terms, [(values, w, a, b, M)] one per Huber term, over the values
    where it is not 0). Each term w·huber_M(a f + b) enters the QP as w·(s² + 2M·t) with
    t ≥ |a f + b − s| (s, t two variables per value): huber_M(z) = min_s s² + 2M|z − s| (at
    s = clip(z, −M, M)), as cvxpy's canonicalisation writes it."""
    from ..objectives.recognise import Recognised

    d, hub, rest = form.d, [], []
    for t in form.terms:
        if t.kind != "huber":
            rest.append(t)
            continue
        w = np.broadcast_to(np.asarray(t.w, float), (d,))
        a, b = (np.broadcast_to(np.asarray(v, float), (d,)) for v in t.args[0])
        at = np.flatnonzero((w != 0) & (a != 0))
        hub.append((at, w[at], a[at], b[at], float(t.param)))
    if not hub:
        return form, []
    return Recognised(d, rest, form.linear, form.const, form.quads, form.kinks), hub


def _form(problem):
    """The objective's recognised form, or a built-in quadratic's (:func:`builtin_quadratic`)."""
    form = getattr(problem.objective, "form", None)
    return form if form is not None else builtin_quadratic(problem)


#: a term's rows K (a polyhedral term's or a 2-norm's argument) are written through auxiliary variables
#: y = K x + b, one equality per row reading the row before (:func:`_differenced`), where those rows'
#: entries and the two per row that chain them are at most this fraction of K's: a running sum
#: (``cumsum``) read in all its rows is a triangle of m(m+1)/2 entries, its differences m
RUNNING_ROWS = 0.5


def _differenced(K):
    """K's rows differenced, D₀ = K₀ and Dᵢ = Kᵢ − Kᵢ₋₁ (CSR), where that is exact in floating point
    (Dᵢ + Kᵢ₋₁ = Kᵢ entry by entry, as for the 0/±1 rows of a running sum) and D with the two chaining
    entries per row holds at most :data:`RUNNING_ROWS` of K's entries; else None. Then
    yᵢ = yᵢ₋₁ + Dᵢ x + (bᵢ − bᵢ₋₁) gives y = K x + b row by row, with O(d) entries where a running sum
    over d values writes d²/2 (measured, grammar family ``sum_squares(f - ft) +
    0.001*pnorm_inf(cumsum(f - ft))`` at d = 100: K with 10,500 entries, Clarabel 15 ms for 12
    iterations; cvxpy's canonicalisation writes a running sum the same way)."""
    K = sp.csr_array(K)
    k = K.shape[0]
    if k < 2 or K.nnz < 4 * k:
        return None
    before = sp.vstack([sp.csr_array((1, K.shape[1])), K[:-1]], format="csr")
    D = (K - before).tocsr()
    D.eliminate_zeros()
    if D.nnz + 2 * k > RUNNING_ROWS * K.nnz:
        return None
    back = (D + before - K).tocsr()
    back.eliminate_zeros()
    return D if back.nnz == 0 else None


def _term_rows(K, b, s_f: float, width: int):
    """A term's argument K f + b in x = f/s_f as (triplets of its rows, their right-hand side, the
    auxiliary columns' count, the auxiliary equalities): the rows K s_f x + b themselves, or — where
    :func:`_differenced` applies — the identity on k new columns y at ``width`` (right-hand side 0)
    with the k equalities yᵢ − yᵢ₋₁ − Dᵢ s_f x = bᵢ − bᵢ₋₁ (triplets, rows, right-hand side) that make
    y = K s_f x + b."""
    b = np.asarray(b, float)
    D = _differenced(K)
    if D is None:
        kr, kc, kv = _triplets(K)
        return (kr, kc, kv * s_f), b, 0, None
    k = K.shape[0]
    r = np.arange(k)
    y = width + r
    dr, dc, dv = _triplets(D)
    eq = (np.concatenate([r, r[1:], dr]), np.concatenate([y, y[:-1], dc]),
          np.concatenate([np.ones(k), -np.ones(k - 1), -dv * s_f]))
    return (r, y, np.ones(k)), np.zeros(k), k, (eq, k, np.diff(b, prepend=0.0))


def _assemble(problem, rows):
    """(P, q, A, b, rows with an equality: m_e, m, soc, aux): the QP of the module docstring in x = f/s
    (s the rows' own, :func:`_rows`; then the epigraph variables, then each Huber term's s and t:
    :func:`_huber_parts`, then one t per 2-norm, each term's auxiliary running-sum variables after its
    own: :func:`_term_rows`), P its full symmetric Hessian, A x (=, ≤, ∈ second-order cones) b with the
    m_e equalities first — the constraints' own, then the auxiliary ones, whose row indices are ``aux``
    (an index array; dropped from the solver's z and s before they are read) — and the cones' rows
    last, ``soc`` their sizes (each 2-norm w‖K f + c‖₂ of a :class:`~.user_forms.NormUserObjective`:
    cost w·t, b − A x = (t, K s x + c) in the cone)."""
    conic = getattr(problem.objective, "conic_form", None)
    form, norms = conic if conic is not None else (_form(problem), [])
    form, hubers = _huber_parts(form)
    s_f, d = getattr(rows, "s_f", problem.scale), problem.estimate.d
    zero = np.zeros(d)
    H = sp.csr_array(form.hessian(zero))
    dg = H.diagonal() * (s_f * s_f)
    m = float(np.mean(dg[dg > 0])) if np.any(dg > 0) else 1.0
    q_parts = [np.asarray(form.gradient(zero), float) * (s_f / m)]
    epi, rhs, width = [], [], d  # epi: (K's triplets in x, the epigraph columns' triplets, rows)
    chained = []  # the auxiliary equalities: (triplets, rows, right-hand side)

    def term(K, b):
        nonlocal width
        Kt, b, extra, eq = _term_rows(K, b, s_f, width)
        width += extra
        q_parts.append(np.zeros(extra))
        if eq is not None:
            chained.append(eq)
        return Kt, b

    for kind, W, K, b in form.kinks:
        k = K.shape[0]
        if kind == "abs":  # K x + b ≤ t and −(K x + b) ≤ t
            t = (np.arange(k), np.arange(width, width + k), -np.ones(k))
            q_parts.append(np.asarray(W, float) / m)
            width += k
            (kr, kc, kv), b = term(K, b)
            epi += [((kr, kc, kv), t, k), ((kr, kc, -kv), t, k)]
            rhs += [-b, b]
        else:  # "max": K x + b ≤ u
            u = (np.arange(k), np.full(k, width), -np.ones(k))
            q_parts.append(np.asarray(W, float)[:1] / m)
            width += 1
            Kt, b = term(K, b)
            epi.append((Kt, u, k))
            rhs.append(-b)
    hr, hc, hv = _triplets(H)
    p_pieces = [(hr, hc, hv * (s_f * s_f) * (1.0 / m), 0)]  # as scipy divides: times 1/m
    for at_v, w, a, b, M in hubers:  # s at width.., t after it: ±(a s_f x + b − s) ≤ t
        k = at_v.size
        s_col, t_col, r = np.arange(width, width + k), np.arange(width + k, width + 2 * k), np.arange(k)
        p_pieces.append((s_col, s_col, 2.0 * w / m, 0))
        q_parts += [np.zeros(k), 2.0 * M * w / m]
        rr, cc, vv = np.concatenate([r, r, r]), np.concatenate([at_v, s_col, t_col]), np.concatenate([a * s_f, -np.ones(k), -np.ones(k)])
        epi += [((rr, cc, vv), (r[:0], r[:0], r[:0]), k), ((rr, cc, np.concatenate([-a * s_f, np.ones(k), -np.ones(k)])), (r[:0], r[:0], r[:0]), k)]
        rhs += [-b, b]
        width += 2 * k
    soc = []
    for w, K, c in norms:  # (t, K s_f x + c) ∈ SOC: rows −t and −K s_f x, right-hand sides 0 and c
        k = K.shape[0]
        t = (np.zeros(1, int), np.full(1, width), -np.ones(1))
        q_parts.append(np.array([w / m]))
        width += 1
        (kr, kc, kv), c = term(K, c)
        epi.append(((kr + 1, kc, -kv), t, k + 1))
        rhs.append(np.concatenate([[0.0], c]))
        soc.append(k + 1)
    n = width
    P = _csc(p_pieces, (n, n))
    pieces, at = [(*_triplets(rows.A_E), 0)], rows.A_E.shape[0]
    aux_b = []
    for (er, ec, ev), k, eb in chained:  # the auxiliary equalities after the constraints' own
        pieces.append((er, ec, ev, at))
        aux_b.append(eb)
        at += k
    aux = np.arange(rows.A_E.shape[0], at)
    pieces.append((*_triplets(rows.A_I), at))
    at += rows.A_I.shape[0]
    for Kt, Tt, k in epi:  # the epigraph rows: [K, 0…, T at its own columns, 0…]
        pieces += [(*Kt, at), (*Tt, at)]
        at += k
    A = _csc(pieces, (at, n))
    b = np.concatenate([rows.b_E, *aux_b, rows.b_I, *rhs])
    return P, np.concatenate(q_parts), A, b, rows.A_E.shape[0] + aux.size, m, soc, aux


def _triu(P):
    """The upper triangle of a CSC matrix, CSC (what Clarabel reads), without ``sp.triu``'s conversions."""
    cols = np.repeat(np.arange(P.shape[1]), np.diff(P.indptr))
    keep = P.indices <= cols
    indptr = np.concatenate([[0], np.cumsum(np.bincount(cols[keep], minlength=P.shape[1]))])
    return sp.csc_array((P.data[keep], P.indices[keep], indptr), shape=P.shape)


def _clarabel(P, q, A, b, m_e, options, soc=()):
    """Clarabel on the QP: (status word, x, z, s, iterations) — z and s per row (equalities first), its
    KKT Px + q + Aᵀz = 0 — or None when an option is not one of its settings. ``soc``: the sizes of
    the second-order cones of the last rows."""
    import clarabel

    settings = clarabel.DefaultSettings()
    settings.verbose = False
    for key, value in options.items():
        if not hasattr(settings, key):
            return None
        setattr(settings, key, value)
    n_soc = int(sum(soc))
    cones = [clarabel.ZeroConeT(m_e), clarabel.NonnegativeConeT(A.shape[0] - m_e - n_soc),
             *(clarabel.SecondOrderConeT(int(k)) for k in soc)]
    out = clarabel.DefaultSolver(_triu(P), q, A, b, cones, settings).solve()
    return str(out.status), np.asarray(out.x, float), np.asarray(out.z, float), np.asarray(out.s, float), \
        int(out.iterations)


def _piqp(P, q, A, b, m_e, options, soc=()):
    """PIQP on the QP (its sparse interface): as :func:`_clarabel`. Its KKT
    Px + q + A_Eᵀy + A_Iᵀz_u = 0 is Clarabel's with z = (y, z_u); the slacks are b_I − A_I x. No
    second-order cones (:func:`.policy.direct_qp_solver` never hands it one)."""
    import piqp

    if soc:
        raise ValueError("PIQP has no second-order cones")

    solver = piqp.SparseSolver()
    solver.settings.verbose = False
    for key, value in options.items():
        if not hasattr(solver.settings, key):
            return None
        setattr(solver.settings, key, value)
    A_E, A_I, b_E, b_I = A[:m_e], A[m_e:], b[:m_e], b[m_e:]
    solver.setup(P=P, c=q, A=sp.csc_matrix(A_E), b=b_E, G=sp.csc_matrix(A_I), h_u=b_I)
    status = solver.solve()
    r = solver.result
    x = np.asarray(r.x, float)
    word = {piqp.PIQP_SOLVED: "Solved", piqp.PIQP_MAX_ITER_REACHED: "MaxIterations"}.get(status, str(status))
    return word, x, np.concatenate([np.asarray(r.y, float), np.asarray(r.z_u, float)]), \
        np.concatenate([np.zeros(m_e), b_I - A_I @ x]), int(r.info.iter)


def _kink_multipliers(form, rows, z, m):
    """The polyhedral terms' multipliers in f's units from the solver's z on their epigraph rows (after
    the constraints' rows, in :func:`_assemble`'s order), one array (``certificate.KINK_DUALS``): an
    ``abs`` entry's q = m·(z₊ − z₋) — its rows ±(K x + b) ≤ t, so ∇S + Kᵀq + … = 0 in f, the QP's
    J/m undone — a ``max`` row's m·z. None without polyhedral terms."""
    if not form.kinks:
        return None
    at = rows.A_E.shape[0] + rows.A_I.shape[0]
    out = []
    for kind, _, K, _ in form.kinks:
        k = K.shape[0]
        if kind == "abs":
            out.append(m * (z[at:at + k] - z[at + k:at + 2 * k]))
            at += 2 * k
        else:
            out.append(m * z[at:at + k])
            at += k
    return np.concatenate(out)


#: the backends, by the name :func:`.policy.direct_qp_solver` gives
_BACKENDS = {"CLARABEL": _clarabel, "PIQP": _piqp}


def solve_direct_qp(problem, solver: str, options: dict, ctx: SolveContext | None = None):
    """Solve ``problem``, whose objective carries its recognised ``form`` (a quadratic smooth part plus
    polyhedral terms: :func:`.policy.direct_qp_solver`), by ``solver``'s own interface on the compiled
    rows. (a checked ``Solution``, "") — ``"optimal"`` only when ldpopt's check passed — or (None,
    why) when the constraints are not linear rows over f alone or an option is not one of the
    solver's settings.

    Each polyhedral term gets its epigraph variables, as cvxpy's canonicalisation would: W·|A f + b|
    a t ≥ ±(A f + b) per row with cost W_k t_k, w·max_k (A f + b)_k one u ≥ (A f + b)_k with cost w.

    Parameters
    ----------
    problem : Problem
        The problem (its scale, estimate, named constraints, and its objective's ``form``, the
        :class:`~ldpopt.problems.objectives.recognise.Recognised` whose ``quadratic`` holds).
    solver : {"CLARABEL", "PIQP"}
        The solver; ``Solution.solver`` is its name with ``-DIRECT``.
    options : dict
        The solver's settings (attribute names of ``clarabel.DefaultSettings`` / PIQP's settings, as
        cvxpy passes them): :func:`.attempts.options_for` ``(problem, solver, ...)``.
    ctx : SolveContext or None, default None
        The solve's context: the solver runs in a child process (:func:`.isolate.runs_isolated`),
        killed at the time limit, and ldpopt's check stops there too. A crash, a time-out or an exception of the solver is a ``"solver_error"``
        (``"user_limit"`` at the limit) Solution without a point.

    Returns
    -------
    tuple of (Solution or None, str)
    """
    start = time.perf_counter()
    rows, why = _rows(problem, direct_qp_scale(problem, solver))
    if rows is None:
        return None, why
    d = problem.estimate.d
    ctx = ctx or SolveContext()
    P, q, A, b, m_e, m, soc, aux = _assemble(problem, rows)
    compiled_s = time.perf_counter() - start
    name = f"{solver}-DIRECT"
    backend = _BACKENDS[solver]
    try:
        if runs_isolated(solver, solver in OWN_TIME_LIMIT, ctx.limited):
            # imported here, once, not in every child (an import there is lost with it: ~25 ms of
            # the 30 ms a child cost at d = 100 before)
            importlib.import_module(solver.lower())
            left = ctx.left()
            got = standing(backend, (P, q, A, b, m_e, options, soc),
                           CONIC_TIME_LIMIT if left is None else max(left, 1e-3), name)
        else:
            got = backend(P, q, A, b, m_e, options, soc)
    except Exception as exc:  # a crash, a time-out or an error: one attempt, the chain goes on
        if user_code_raised(exc):
            raise
        status = "user_limit" if isinstance(exc, SolverTimedOut) else "solver_error"
        return Solution(np.full(d, np.nan), status, False, np.nan, {}, solver=name, iterations=None,
                        compile_time=compiled_s, solve_time=time.perf_counter() - start - compiled_s,
                        wall_time=time.perf_counter() - start, message=f"{solver} (direct): {type(exc).__name__}: {exc}",
                        objective=problem.objective.name), ""
    if got is None:
        return None, f"an option is not one of {solver}'s settings: {sorted(options)}"
    raw, x, z, s, iterations = got
    z, s = np.delete(z, aux), np.delete(s, aux)  # the auxiliary running sums' rows: not the problem's
    solve_s = time.perf_counter() - start - compiled_s
    if raw not in _ANSWERED:  # infeasible or an error: no point to check, the chain follows
        return Solution(np.full(d, np.nan), "solver_error", False, np.nan, {}, solver=name,
                        iterations=iterations, compile_time=compiled_s, solve_time=solve_s,
                        wall_time=time.perf_counter() - start, message=f"{solver} (direct) ended {raw}",
                        objective=problem.objective.name), ""
    f, duals = rows.answer(x[:d], z, s, m)
    conic = getattr(problem.objective, "conic_form", None)  # the form _assemble wrote (its kinks first)
    kinks = _kink_multipliers(_form(problem) if conic is None else conic[0], rows, z, m)
    if kinks is not None:
        duals[KINK_DUALS] = kinks
    ch = check_solution(problem, f, duals, deadline=ctx.deadline)
    status = status_after_check(_ANSWERED[raw], ch)
    what = f"quadratic + {len(soc)} 2-norm(s)" if soc else "quadratic"
    route = (f"{what} user objective handed to {solver}'s own interface ({iterations} iterations; its data "
             f"from the recognised form, no cvxpy compilation of the objective)")
    message = (f"{route}: {solver} said {raw}; {unverified_reason(ch)}" if status == "optimal_unverified"
               else f"{route}; ldpopt's check: {ch.summary()}")
    return Solution(f, status, status == "optimal", problem.objective.value(f, problem.estimate), duals,
                    solver=name, iterations=iterations, compile_time=compiled_s, solve_time=solve_s,
                    wall_time=time.perf_counter() - start, message=message, objective=problem.objective.name,
                    checks=ch), ""
