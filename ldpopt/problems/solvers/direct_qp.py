"""A user's quadratic objective over linear rows, handed to Clarabel's own interface.

A user objective recognised as a quadratic (:mod:`.user_forms`: per-value squares plus quadratic forms
‖A f − b‖²) has its QP data without cvxpy: the Hessian is the same at every f and the gradient at 0
is the linear term. Only the constraints go through cvxpy's compilation (:func:`.ipm.compile_rows`,
the rows the interior-point route reads, with a ½‖x‖² objective that compiles in a fraction of the
user's). The QP then goes to ``clarabel.DefaultSolver`` directly, and the multipliers back to the
problem's named constraints by cvxpy's own inversion of that compilation (:func:`.ipm._duals`), so
ldpopt's check reads the same (f, duals) as after any solver. What that skips is the cost of a cvxpy
solve that is not the solver's: the objective's canonicalisation (``quad_form`` coefficient
extraction), cvxpy's search for installed solvers on every solve, and its unpacking. Measured
against ``solve(solver="CLARABEL")`` and ``"PIQP"`` in ``benchmarks/bench_route_grid.py`` (the
``smooth`` classes); the rule that routes here is :func:`.policy.direct_qp_applies`.

Choices where nothing prescribes them: the QP is solved in the interior-point route's variable
x = f/s (``Problem.scale``) with J divided by m, the mean positive diagonal of s²∇²J (O(1)
coefficients, as there); Clarabel runs with the options a cvxpy call of it would get
(:func:`.attempts.options_for`: ldpopt's tolerances, the time limit, the caller's).
"""

from __future__ import annotations

import time

import numpy as np
import scipy.sparse as sp

from ..check.verdict import check_solution, status_after_check, unverified_reason
from ..solution import Solution
from .ipm import _duals, compile_rows
from .structured.multipliers import duals_dict
from .structured.structure import Structure, compiled_for

__all__ = ["SOLVER", "solve_direct_qp"]

#: ``Solution.solver`` of this route: Clarabel, called directly
SOLVER = "CLARABEL-DIRECT"

#: Clarabel's statuses that carry a point worth checking
_ANSWERED = {"Solved": "optimal", "AlmostSolved": "optimal_inaccurate", "MaxIterations": "user_limit",
             "MaxTime": "time_limit", "InsufficientProgress": "user_limit", "AlmostPrimalInfeasible": "user_limit",
             "AlmostDualInfeasible": "user_limit"}


class _CvxpyRows:
    """The constraints' rows by cvxpy's compilation (:func:`.ipm.compile_rows`), its multipliers named by
    cvxpy's inversion of it: any linear constraint a user writes."""

    def __init__(self, problem, compiled):
        A_E, b_E, A_I, b_I, self.prob, self.chain, self.inv = compiled
        self.problem = problem
        self.A_E, self.b_E, self.A_I, self.b_I = A_E, b_E, A_I, b_I

    def answer(self, x, z, s, m):
        """(f, named duals) from Clarabel's x, z and s on these rows (kink rows cut off)."""
        m_e, m_i = self.A_E.shape[0], self.A_I.shape[0]
        duals = _duals(self.prob, self.chain, self.inv, x, z[:m_e], z[m_e:m_e + m_i], s[m_e:m_e + m_i], m,
                       self.problem)
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
        A = sp.csr_array(st.A) * s_f
        ineq = np.asarray(st.ineq, bool)
        self.eq_rows, self.in_rows = np.flatnonzero(~ineq), np.flatnonzero(ineq)
        eye = sp.eye_array(d, format="csr") * s_f
        E = [A[self.eq_rows], eye[self.fixed]]
        b_E = [st.b[self.eq_rows], lo[self.fixed]]
        if not st.sum_free:
            E.insert(0, sp.csr_array(np.full((1, d), s_f)))
            b_E.insert(0, np.array([st.total]))
        self.A_E = sp.vstack(E, format="csr")
        self.b_E = np.concatenate(b_E)
        self.A_I = sp.vstack([A[self.in_rows], -eye[self.lower], eye[self.upper]], format="csr")
        self.b_I = np.concatenate([st.b[self.in_rows], -lo[self.lower], up[self.upper]])

    def answer(self, x, z, s, m):
        """(f, named duals) from Clarabel's x, z and s: λ and y scaled back by m; the bound multipliers
        are Clarabel's own on every value, as cvxpy's inversion reports them (nonzero but tiny where the
        bound is not active): :func:`~.structured.multipliers.duals_dict` names them, given the
        per-value residual r = m (z^lo − z^up) (its r − y^lo + y^up = 0) and each value placed on the
        side whose multiplier is the larger — for the naming only; f is Clarabel's point."""
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


def _rows(problem):
    """(the rows, "") from the structured compilation where it covers the constraints (no tree of
    sums), else from cvxpy's; (None, why) when they are not linear rows over f alone."""
    st = compiled_for(problem)
    if isinstance(st, Structure) and st.tree is None:
        return _StructureRows(st, problem.scale), ""
    compiled, why = compile_rows(problem)
    return (None, why) if compiled is None else (_CvxpyRows(problem, compiled), "")


def solve_direct_qp(problem, options: dict):
    """Solve ``problem``, whose objective carries its recognised ``form`` (a quadratic smooth part plus
    polyhedral terms: :func:`.policy.direct_qp_applies`), by Clarabel's own interface on the compiled rows. (a checked ``Solution``, "")
    — ``"optimal"`` only when ldpopt's check passed — or (None, why) when the constraints are not
    linear rows over f alone or an option is not one of Clarabel's settings.

    Each polyhedral term gets its epigraph variables, as cvxpy's canonicalisation would: W·|A f + b|
    a t ≥ ±(A f + b) per row with cost W_k t_k, w·max_k (A f + b)_k one u ≥ (A f + b)_k with cost w.

    Parameters
    ----------
    problem : Problem
        The problem (its scale, estimate, named constraints, and its objective's ``form``, the
        :class:`~ldpopt.problems.objectives.recognise.Recognised` whose ``quadratic`` holds).
    options : dict
        Clarabel's settings (``clarabel.DefaultSettings`` attribute names, as cvxpy passes them):
        :func:`.attempts.options_for` ``(problem, "CLARABEL", ...)``.

    Returns
    -------
    tuple of (Solution or None, str)
    """
    import clarabel

    start = time.perf_counter()
    form = problem.objective.form
    settings = clarabel.DefaultSettings()
    settings.verbose = False
    for key, value in options.items():
        if not hasattr(settings, key):
            return None, f"{key!r} is not a Clarabel setting"
        setattr(settings, key, value)
    rows, why = _rows(problem)
    if rows is None:
        return None, why
    A_E, b_E, A_I, b_I = rows.A_E, rows.b_E, rows.A_I, rows.b_I
    s_f, d = problem.scale, problem.estimate.d
    zero = np.zeros(d)
    H = sp.csc_array(form.hessian(zero)) * (s_f * s_f)
    dg = H.diagonal()
    m = float(np.mean(dg[dg > 0])) if np.any(dg > 0) else 1.0
    q_parts = [np.asarray(form.gradient(zero), float) * (s_f / m)]
    epi, rhs, width = [], [], d
    for kind, W, K, b in form.kinks:
        K = sp.csr_array(K) * s_f
        k = K.shape[0]
        if kind == "abs":  # K x + b ≤ t and −(K x + b) ≤ t
            eye = sp.eye_array(k, format="csr")
            epi += [(K, -eye, width), (-K, -eye, width)]
            rhs += [-b, b]
            q_parts.append(np.asarray(W, float) / m)
            width += k
        else:  # "max": K x + b ≤ u
            epi.append((K, -sp.csr_array(np.ones((k, 1))), width))
            rhs.append(-b)
            q_parts.append(np.asarray(W, float)[:1] / m)
            width += 1
    n = width
    P = sp.block_diag([sp.triu(H / m), sp.csc_array((n - d, n - d))], format="csc")
    pad = lambda M: sp.hstack([M, sp.csr_array((M.shape[0], n - d))]) if n > d else M
    blocks = [pad(A_E), pad(A_I)]
    for K, T, at in epi:  # the epigraph rows: [K, 0…, T at its own columns, 0…]
        blocks.append(sp.hstack([K, sp.csr_array((K.shape[0], at - d)), T,
                                 sp.csr_array((K.shape[0], n - at - T.shape[1]))]))
    A = sp.vstack(blocks, format="csc")
    b = np.concatenate([b_E, b_I, *rhs])
    m_e = A_E.shape[0]
    cones = [clarabel.ZeroConeT(m_e), clarabel.NonnegativeConeT(A.shape[0] - m_e)]
    compiled_s = time.perf_counter() - start
    out = clarabel.DefaultSolver(P, np.concatenate(q_parts), A, b, cones, settings).solve()
    solve_s = time.perf_counter() - start - compiled_s
    raw = str(out.status)
    iterations = int(out.iterations)
    if raw not in _ANSWERED:  # infeasible or an error: no point to check, the chain follows
        return Solution(np.full(d, np.nan), "solver_error", False, np.nan, {}, solver=SOLVER,
                        iterations=iterations, compile_time=compiled_s, solve_time=solve_s,
                        wall_time=time.perf_counter() - start, message=f"Clarabel (direct) ended {raw}",
                        objective=problem.objective.name), ""
    f, duals = rows.answer(np.asarray(out.x, float)[:d], np.asarray(out.z, float), np.asarray(out.s, float), m)
    ch = check_solution(problem, f, duals)
    status = status_after_check(_ANSWERED[raw], ch)
    route = (f"quadratic user objective handed to Clarabel's own interface ({iterations} iterations; its QP data "
             f"from the recognised form, no cvxpy compilation of the objective)")
    message = (f"{route}: Clarabel said {raw}; {unverified_reason(ch)}" if status == "optimal_unverified"
               else f"{route}; ldpopt's check: {ch.summary()}")
    return Solution(f, status, status == "optimal", problem.objective.value(f, problem.estimate), duals,
                    solver=SOLVER, iterations=iterations, compile_time=compiled_s, solve_time=solve_s,
                    wall_time=time.perf_counter() - start, message=message, objective=problem.objective.name,
                    checks=ch), ""
