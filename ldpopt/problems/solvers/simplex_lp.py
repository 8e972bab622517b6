"""A linear objective over the simplex and per-value bounds, answered without a solver: min c·f + k
over l ≤ f ≤ u, Σ f = t (t > 0) is the continuous knapsack — every value at its lower bound, then the
rest of the mass t − Σ l poured into the cheapest values first, each up to its upper bound. Over the
simplex alone that is t·e_j at the smallest cost. ldpopt's check judges the point and its closed-form
multipliers as any answer.

Notes: docs/problems.md, "A linear objective over the simplex".
"""

from __future__ import annotations

import math
import time

import numpy as np

from ..check.verdict import check_solution, status_after_check, unverified_reason
from ..constraints.feasibility import MAX_LP, affine_rows, bound_sides, one_value_rows
from ..progress import SolveContext
from ..solution import Solution

__all__ = ["SOLVER", "simplex_lp", "solve_simplex_lp"]

#: the route's name in ``Solution.solver`` and ``attempts``
SOLVER = "LDPOPT-SIMPLEX-LP"


def simplex_lp(problem) -> tuple | None:
    """(c, t, parts) where ``problem`` is min c·f + k over Σ f = t (t > 0) and per-value bounds only,
    its objective recognised as linear with no cvxpy Parameter; else None. ``parts``: constraint name →
    ``("sum",)`` or ``("rows", i, a, v, equality, shape, beyond)``, the constraint's rows a_k·f_{i_k} (≤ or =)
    a_k·v_k, each one value times a power of two (:func:`~..constraints.feasibility.one_value_rows`),
    ``shape`` its cvxpy constraint's. The bounds are what each constraint states: the simplex's
    f ≥ 0 (``simplex_parts``), a built-in's per-value bounds (``linear_pieces``), a user's affine rows
    as cvxpy builds them. Every value needs a finite lower bound (else the LP may be unbounded), and
    Σ l ≤ t ≤ Σ u (else the exact pre-check's certificate speaks).

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
    >>> c.tolist(), t, sorted(parts)
    ([2.0, -1.0, 0.5], 1.0, ['nonnegative', 'sum'])
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
    user: dict = {}  # a user constraint's affine rows, read once for all its names
    for name, (owner, k) in problem.owners.items():
        got = _part(problem, name, owner, k, d, user)
        if got is None:
            return None
        if got[0] == "sum":
            if total is not None:
                return None  # a total stated twice
            total = float(got[1])
            parts[name] = ("sum",)
        else:
            parts[name] = got
    if total is None or not (np.isfinite(total) and total > 0):
        return None
    lo, up = _bounds(parts, d)
    if not np.all(np.isfinite(lo)) or np.any(lo > up):
        return None
    if not math.fsum(lo) <= total <= math.fsum(up):
        return None
    return np.array(c), total, parts


def _part(problem, name, owner, k, d, user):
    """("sum", t), ("rows", i, a, v, equality, shape, beyond) or None for the k-th constraint ``owner``
    builds (``beyond``: bounds other than the simplex's f ≥ 0)."""
    simplex = next((p for p in (owner.simplex_parts() or ()) if p[1] == k), None)
    if simplex is not None:
        if simplex[0] == "sum":
            return "sum", simplex[2]
        return "rows", np.arange(d), np.full(d, -1.0), np.zeros(d), False, (d,), False
    given = owner.linear_pieces(d, MAX_LP)
    if given is not None:  # a built-in: one bound piece over every value (a Box side), else not taken
        pieces = [p for p in given[0] if p[-1] == k]
        if not given[1] or len(pieces) != 1 or pieces[0][0] != "bound" or pieces[0][3] is not None:
            return None
        _, which, vals, _, _ = pieces[0]
        sign = -1.0 if which == "lower" else 1.0
        return ("rows", np.arange(d), np.full(d, sign), np.broadcast_to(np.asarray(vals, float), (d,)).copy(),
                False, (d,), True)
    if id(owner) not in user:
        user[id(owner)] = {j: rows for j, rows in affine_rows(problem, owner)}
    rows = user[id(owner)].get(k)
    if rows is None:
        return None  # not affine, or not read
    M, rhs, le = rows
    got = one_value_rows(M, rhs)
    if got is None:
        return None
    i, a, v = got
    return "rows", i, a, v, not le, tuple(problem.named_constraints[name].shape), True


def _bounds(parts: dict, d: int) -> tuple[np.ndarray, np.ndarray]:
    """(l, u): the tightest lower and upper bound of every value over the parts' rows."""
    lo, up = np.full(d, -np.inf), np.full(d, np.inf)
    for part in parts.values():
        if part[0] != "rows":
            continue
        _, i, a, v, eq, _, _ = part
        upper, lower = bound_sides(a, eq)
        np.minimum.at(up, i[upper], v[upper])
        np.maximum.at(lo, i[lower], v[lower])
    return lo, up


def solve_simplex_lp(problem, ctx: SolveContext, plan) -> Solution:
    """The answer of :func:`simplex_lp`'s ``plan`` = (c, t, parts): f = l, then the mass t − Σ l given
    to the values in increasing c (ties by index), each up to u; λ = c of the value where the mass
    ran out. Multipliers: ν = −λ for Σ f = t (g = Σ f − t); on each value's binding lower bound
    (g = l − f) μ = c − λ where c > λ, on its binding upper bound (g = f − u) λ − c where c < λ, 0
    otherwise, so that c + ν·1 − μ_l + μ_u = 0 with complementary slackness. A bound stated by several
    rows is the first tight one's; a row a·f_i ≤ r carries μ/|a|, an equality row (μ_u − μ_l)/a. Then
    ldpopt's check. Where λ is shared by a value strictly between its bounds and another value, f is
    one optimum of many: the message says so.

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
    d = c.size
    lo, up = _bounds(parts, d)
    order = np.argsort(c, kind="stable")
    rest = total - math.fsum(lo)
    filled = np.cumsum((up - lo)[order])
    k = min(int(np.searchsorted(filled, rest)), d - 1)  # the first value whose bound holds the rest
    f = lo.copy()
    f[order[:k]] = up[order[:k]]
    j = int(order[k])
    f[j] = min(max(lo[j] + (rest - (float(filled[k - 1]) if k else 0.0)), lo[j]), up[j])
    lam = float(c[j])
    duals = _multipliers(parts, lo, up, np.maximum(c - lam, 0.0), np.maximum(lam - c, 0.0), lam)
    ch = check_solution(problem, f, duals, deadline=ctx.deadline)
    status = status_after_check("optimal", ch)
    tied = c == lam  # mass can move between two of them: another optimum
    take, give = np.flatnonzero(tied & (f < up)), np.flatnonzero(tied & (f > lo))
    many = take.size > 0 and give.size > 0 and not (take.size == give.size == 1 and take[0] == give[0])
    boxed = any(part[0] == "rows" and part[6] for part in parts.values())
    what = (f"a linear objective over the simplex{' and per-value bounds' if boxed else ' alone'}: every value at "
            "its lower bound, the rest of the mass to the cheapest first (no solver)"
            + (f"; {int(tied.sum())} values share the cost where the mass ran out: f is one optimum of many"
               if many else ""))
    message = (f"{what}; {unverified_reason(ch)}" if status == "optimal_unverified"
               else f"{what}; ldpopt's check: {ch.summary()}")
    return Solution(f, status, status == "optimal", problem.objective.value(f, problem.estimate), duals,
                    solver=SOLVER, iterations=0, compile_time=0.0, solve_time=time.perf_counter() - start,
                    wall_time=time.perf_counter() - start, message=message, objective=problem.objective.name,
                    checks=ch)


def _multipliers(parts: dict, lo, up, mu_lo, mu_up, lam: float) -> dict:
    """Constraint name → its multipliers (:func:`solve_simplex_lp`), in its cvxpy shape: each value's
    lower and upper multiplier on one row only, the first tight row in the problem's order."""
    d = lo.size
    out: dict = {}
    taken = {"lower": np.zeros(d, bool), "upper": np.zeros(d, bool)}
    for name, part in parts.items():
        if part[0] == "sum":
            out[name] = -lam
            continue
        _, i, a, v, eq, shape, _ = part
        y = np.zeros(a.size)
        upper, lower = bound_sides(a, eq)
        for side, states, bound, mu in (("lower", lower, lo, mu_lo), ("upper", upper, up, mu_up)):
            on = np.flatnonzero(states & (v == bound[i]) & (mu[i] > 0))
            _, first = np.unique(i[on], return_index=True)  # this constraint's first row of each value
            rows = on[first]
            rows = rows[~taken[side][i[rows]]]  # not stated by an earlier constraint
            taken[side][i[rows]] = True
            y[rows] += (-mu[i[rows]] if side == "lower" else mu[i[rows]]) / a[rows]
        out[name] = _shaped(y, shape)
    return out


def _shaped(y: np.ndarray, shape: tuple):
    """A constraint's multipliers in its cvxpy shape (rows in column-major order, as cvxpy's)."""
    if shape == ():
        return float(y[0])
    return y.reshape(shape, order="F")
