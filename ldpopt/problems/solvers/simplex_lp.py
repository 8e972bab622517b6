"""A linear objective over the simplex alone, answered without a solver: min c·f + k over f ≥ 0,
Σ f = t (t > 0) is t·min c + k, attained at t·e_j for any j with c_j = min c; ldpopt's check judges
that point and its closed-form multipliers as any answer.

Notes: docs/problems.md, "A linear objective over the simplex".
"""

from __future__ import annotations

import time

import numpy as np

from ..check.verdict import check_solution, status_after_check, unverified_reason
from ..progress import SolveContext
from ..solution import Solution

__all__ = ["SOLVER", "simplex_lp", "solve_simplex_lp"]

#: the route's name in ``Solution.solver`` and ``attempts``
SOLVER = "LDPOPT-SIMPLEX-LP"


def simplex_lp(problem) -> tuple[np.ndarray, float, dict] | None:
    """(c, t, {constraint name: "nonnegative" or "sum"}) where ``problem`` is min c·f + k over f ≥ 0
    and Σ f = t only (t > 0; the built-in constraints stating those parts, ``simplex_parts``), its
    objective recognised as linear with no cvxpy Parameter; else None.

    Parameters
    ----------
    problem : Problem

    Returns
    -------
    tuple or None

    Examples
    --------
    >>> import cvxpy as cp
    >>> import numpy as np
    >>> import ldpopt
    >>> from ldpopt.problems import Problem, Simplex
    >>> from ldpopt.problems.solvers.simplex_lp import simplex_lp
    >>> est = ldpopt.oracles.get("grr", 1.0, 3).estimate(np.array([50, 30, 20]), 100)
    >>> c, t, parts = simplex_lp(Problem(est, lambda f, e: np.array([2.0, -1.0, 0.5]) @ f, [Simplex()]))
    >>> c.tolist(), t, parts
    ([2.0, -1.0, 0.5], 1.0, {'nonnegative': 'nonnegative', 'sum': 'sum'})
    >>> simplex_lp(Problem(est, lambda f, e: cp.sum_squares(f), [Simplex()])) is None
    True
    """
    obj = problem.objective
    form = getattr(obj, "form", None)
    if form is None or getattr(obj, "conic_form", None) is not None or form.parameters:
        return None
    if form.terms or form.quads or form.geo or form.kinks:
        return None
    d = problem.estimate.d
    c = np.broadcast_to(np.asarray(0.0 if form.linear is None else form.linear, dtype=np.float64), (d,))
    if not np.all(np.isfinite(c)):
        return None
    parts: dict = {}
    total = None
    for name, (owner, k) in problem.owners.items():
        got = next((p for p in (getattr(owner, "simplex_parts", lambda: None)() or ()) if p[1] == k), None)
        if got is None or got[0] in parts.values():
            return None  # another constraint, or a part stated twice
        parts[name] = got[0]
        if got[0] == "sum":
            total = float(got[2])
    if sorted(parts.values()) != ["nonnegative", "sum"] or total is None or not (np.isfinite(total) and total > 0):
        return None
    return np.array(c), total, parts


def solve_simplex_lp(problem, ctx: SolveContext, plan) -> Solution:
    """The answer of :func:`simplex_lp`'s ``plan`` = (c, t, parts): f = t·e_j, j the first index of
    min c; multipliers μ = c − min c ≥ 0 of f ≥ 0 (g = −f ≤ 0) and ν = −min c of Σ f = t (g = Σ f − t),
    so that c − μ + ν·1 = 0 and μ·f = 0; then ldpopt's check. Where min c is attained at several
    values every point of t times their simplex is optimal: the message says how many.

    Parameters
    ----------
    problem : Problem
    ctx : SolveContext
        The solve's context (its deadline bounds the check).
    plan : tuple
        :func:`simplex_lp`'s answer.

    Returns
    -------
    Solution
    """
    start = time.perf_counter()
    c, total, parts = plan
    j = int(np.argmin(c))
    low = float(c[j])
    f = np.zeros(c.size)
    f[j] = total
    duals: dict = {name: (c - low if part == "nonnegative" else -low) for name, part in parts.items()}
    ch = check_solution(problem, f, duals, deadline=ctx.deadline)
    status = status_after_check("optimal", ch)
    ties = int(np.count_nonzero(c == low))
    what = (f"a linear objective over the simplex alone: f = {total:g}·e_{j}, the smallest cost (no solver)"
            + (f"; {ties} values share it: every point of {total:g} times their simplex is optimal, f is one"
               if ties > 1 else ""))
    message = (f"{what}; {unverified_reason(ch)}" if status == "optimal_unverified"
               else f"{what}; ldpopt's check: {ch.summary()}")
    return Solution(f, status, status == "optimal", problem.objective.value(f, problem.estimate), duals,
                    solver=SOLVER, iterations=0, compile_time=0.0, solve_time=time.perf_counter() - start,
                    wall_time=time.perf_counter() - start, message=message, objective=problem.objective.name,
                    checks=ch)
