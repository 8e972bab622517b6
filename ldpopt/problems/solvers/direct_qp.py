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

from ..check.verdict import check_solution, status_after_check
from ..solution import Solution
from .ipm import _duals, compile_rows

__all__ = ["SOLVER", "solve_direct_qp"]

#: ``Solution.solver`` of this route: Clarabel, called directly
SOLVER = "CLARABEL-DIRECT"

#: Clarabel's statuses that carry a point worth checking
_ANSWERED = {"Solved": "optimal", "AlmostSolved": "optimal_inaccurate", "MaxIterations": "user_limit",
             "MaxTime": "time_limit", "InsufficientProgress": "user_limit", "AlmostPrimalInfeasible": "user_limit",
             "AlmostDualInfeasible": "user_limit"}


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
    compiled, why = compile_rows(problem)
    if compiled is None:
        return None, why
    A_E, b_E, A_I, b_I, prob, chain, inv = compiled
    s_f, d = problem.scale, problem.estimate.d
    zero = np.zeros(d)
    H = sp.csc_array(form.hessian(zero)) * (s_f * s_f)
    dg = H.diagonal()
    m = float(np.mean(dg[dg > 0])) if np.any(dg > 0) else 1.0
    q_parts = [np.asarray(form.gradient(zero), float) * (s_f / m)]
    rows, rhs, width = [], [], d
    for kind, W, K, b in form.kinks:
        K = sp.csr_array(K) * s_f
        k = K.shape[0]
        if kind == "abs":  # K x + b ≤ t and −(K x + b) ≤ t
            eye = sp.eye_array(k, format="csr")
            rows += [(K, -eye, width), (-K, -eye, width)]
            rhs += [-b, b]
            q_parts.append(np.asarray(W, float) / m)
            width += k
        else:  # "max": K x + b ≤ u
            rows.append((K, -sp.csr_array(np.ones((k, 1))), width))
            rhs.append(-b)
            q_parts.append(np.asarray(W, float)[:1] / m)
            width += 1
    n = width
    P = sp.block_diag([sp.triu(H / m), sp.csc_array((n - d, n - d))], format="csc")
    pad = lambda M: sp.hstack([M, sp.csr_array((M.shape[0], n - d))]) if n > d else M
    blocks = [pad(A_E), pad(A_I)]
    for K, T, at in rows:  # the epigraph rows: [K, 0…, T at its own columns, 0…]
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
    x = np.asarray(out.x, float)[:d]
    z = np.asarray(out.z, float)
    s = np.asarray(out.s, float)
    m_i = A_I.shape[0]
    duals = _duals(prob, chain, inv, x, z[:m_e], z[m_e:m_e + m_i], s[m_e:m_e + m_i], m, problem)
    f = x * s_f
    ch = check_solution(problem, f, duals)
    status = status_after_check(_ANSWERED[raw], ch)
    message = (f"quadratic user objective handed to Clarabel's own interface ({iterations} iterations; its QP "
               f"data from the recognised form, no cvxpy compilation of the objective); ldpopt's check: "
               f"{ch.summary()}")
    return Solution(f, status, status == "optimal", problem.objective.value(f, problem.estimate), duals,
                    solver=SOLVER, iterations=iterations, compile_time=compiled_s, solve_time=solve_s,
                    wall_time=time.perf_counter() - start, message=message, objective=problem.objective.name,
                    checks=ch), ""
