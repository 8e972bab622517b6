"""The constraint side of ldpopt's check (:mod:`.verdict`), per named constraint of a
:class:`~ldpopt.problems.Problem` at a point f: its max violation, Σ_k ∇g_k(f)ᵀ y_k and Σ_k y_k·g_k(f).

Built-in constraints are evaluated in numpy (their ``residuals``, :mod:`.jacobians`' Jᵀy and g(f)),
so a check of those never builds or touches the cvxpy problem (built lazily for the simplex family:
:class:`~ldpopt.problems.Problem`); user callables go through cvxpy's expression values and ``grad``
at f, with cvxpy's variable set to f for the duration (:func:`_at`).
"""

from __future__ import annotations

from contextlib import contextmanager

import cvxpy as cp
import numpy as np

__all__ = ["aggregate_violation", "constraint_violations", "set_feasibility"]


@contextmanager
def _at(problem, f: np.ndarray):
    """cvxpy's variable set to the point f for the duration (for constraints without numpy forms)."""
    x = problem.x
    saved = x.value
    x.value = f / problem.scale
    try:
        yield
    finally:
        x.value = saved


def constraint_violations(problem, f: np.ndarray) -> dict:
    """Constraint name → max violation at f (frequency units for constraints written on f): the
    constraint's numpy ``residuals`` (computed once per constraint), cvxpy's expression evaluation at
    f for the others (user callables)."""
    out, res_of, rest = {}, {}, []
    for name, (owner, k) in problem._owners.items():
        if id(owner) not in res_of:
            res_of[id(owner)] = owner.residuals(f, problem.estimate) if hasattr(owner, "residuals") else None
        res = res_of[id(owner)]
        out[name] = None if res is None else float(res[k])
        if res is None:
            rest.append(name)
    if rest:
        with _at(problem, f):
            for name in rest:
                con = problem._named[name]
                v = np.asarray(con.expr.value, dtype=np.float64)  # its max violation at f
                eq = isinstance(con, (cp.constraints.Zero, cp.constraints.Equality))
                out[name] = float(np.max(np.abs(v) if eq else np.maximum(v, 0.0))) if v.size else 0.0
    return out


def aggregate_violation(problem, f: np.ndarray) -> float | None:
    """The ℓ1 (aggregate) violation of the built-in constraints at f, frequency units: Σ over every
    built-in constraint of Σ_i |g_i(f)| for its equalities and Σ_i max(g_i(f), 0) for its
    inequalities — for f ≥ 0 the total negative mass, for a sum |Σ f − total|. None when there is no
    built-in constraint.

    Why this norm: a violation spread thinly over many values passes any per-value (max-norm) test,
    but for linear constraints with ±1/0 coefficients the violations of an infeasible set add up. For
    example Σ f = 1, f ≥ 0, Σ_{v∈S} f = 1 + δ gives, for *every* f,
    (Σ_S f − 1 − δ) − (Σ f − 1) + Σ_{v∉S} f = −δ, so the aggregate is ≥ δ: a tolerance on it rejects
    such a set whenever δ exceeds the tolerance (a per-constraint max norm lets δ·3/(2d) through).
    User constraints are in their own units and keep the per-constraint test only."""
    from ..constraints.base import UserConstraint
    from ..constraints.jacobians import builtin_g

    d = f.shape[0]
    total, seen, rest = 0.0, False, []
    for name, (owner, k) in problem._owners.items():
        if isinstance(owner, UserConstraint):
            continue
        seen = True
        got = builtin_g(owner, k, f, d)
        if got is None:
            rest.append(name)
            continue
        g, equality = got
        total += _l1(g, equality)
    if rest:
        with _at(problem, f):
            for name in rest:
                con = problem._named[name]
                total += _l1(con.expr.value, isinstance(con, (cp.constraints.Zero, cp.constraints.Equality)))
    return total if seen else None


def set_feasibility(problem) -> tuple[bool | None, str]:
    """Whether the built-in constraints admit a point at all, decided from their data alone:
    (True, ""), (False, why) or (None, why not decided). Cached on the problem.

    Decided where the compiled structure (:func:`.structured.structure.compile_constraints`) is a
    product of blocks — per-value bounds, Σ f = total and pairwise disjoint equality ±1 subset sums
    (:func:`.certificate.block_rows`): the set is non-empty iff every block's mass lies in
    [Σ l, Σ u] over its values (u without the implied f_v ≤ total), the pool's mass being total −
    Σ_k b_k. Sums in float64 with a slack of 8ε·(Σ|l| + Σ|u| + |mass|) per block, and 8ε·(|total| +
    Σ|b_k|) more for the pool (whose mass is a difference): "False" means empty by more than the
    rounding of the data's own sums (totals of a partition that add to 1 ± 1 ulp are not refused),
    "True" non-empty or within that rounding.
    ``compile_constraints`` rejecting the data (a value fixed outside its bounds, Σ f = total
    outside [Σ l, Σ u]) is False with its message. Anything else (user constraints, inequality or
    overlapping rows, a Monotone chain, a tree) is not decided here: None."""
    cached = getattr(problem, "_set_feasibility", None)
    if cached is not None:
        return cached
    from ..constraints.base import UserConstraint
    from ..objectives.separable import NotApplicable
    from ..solvers.structured.structure import compile_constraints, compiled_for
    from .certificate import block_rows

    out: tuple[bool | None, str] = (None, "")
    if not any(isinstance(o, UserConstraint) for o, _ in problem._owners.values()):
        try:
            st = compile_constraints(compiled_for(problem), problem.estimate.d)
        except NotApplicable as exc:
            out = (None, str(exc))
        except ValueError as exc:
            out = (False, str(exc))
        else:
            out = _blocks_feasible(st, block_rows(st) if st.m else None)
    try:
        problem._set_feasibility = out
    except AttributeError:
        pass
    return out


def _blocks_feasible(st, blocks) -> tuple[bool | None, str]:
    if st.m and (blocks is None or st.tree is not None or st.chain is not None):
        return None, "rows other than disjoint equality subset sums"
    if st.sum_free:
        return None, "no sum constraint"
    d = st.d
    gid, value = (np.zeros(d, np.intp), np.zeros(0)) if not st.m else (blocks[0], blocks[2])
    G = st.m + 1
    mass = np.append(value, st.total - float(np.sum(value)))
    u = st.u if st.implied_upper is None else np.where(st.implied_upper, np.inf, st.u)
    lo = np.bincount(gid, weights=st.l, minlength=G)
    with np.errstate(invalid="ignore"):
        hi = np.bincount(gid, weights=u, minlength=G)
        slack = 8 * np.finfo(float).eps * (np.bincount(gid, weights=np.abs(st.l), minlength=G)
                                           + np.where(np.isfinite(hi), np.abs(hi), 0.0) + np.abs(mass))
    # the pool's mass total − Σ b_k cancels: a partition whose float totals sum to 1 ± 1 ulp is feasible
    slack[-1] += 8 * np.finfo(float).eps * (abs(st.total) + float(np.sum(np.abs(value))))
    bad = np.flatnonzero((mass < lo - slack) | (mass > hi + slack))
    if bad.size:
        k = int(bad[0])
        what = "the values in no subset sum" if k == st.m else f"subset-sum row {k}"
        return False, (f"{what} must carry mass {mass[k]!r}, outside [sum of lower bounds, sum of upper bounds] = "
                       f"[{lo[k]!r}, {hi[k]!r}]")
    return True, ""


def _l1(g, equality: bool) -> float:
    g = np.asarray(g, dtype=np.float64).ravel()
    return float(np.sum(np.abs(g) if equality else np.maximum(g, 0.0)))


def _jacobian_t_y(problem, f: np.ndarray, duals: dict):
    """Σ_k ∇_f g_k(f)ᵀ y_k for the named constraints, or (None, why): numpy for the built-ins
    (:mod:`.jacobians`), cvxpy's ``grad`` for the others."""
    from ..constraints.jacobians import builtin_jacobian_t

    total = np.zeros(f.shape[0])
    rest = []
    for name, (owner, k) in problem._owners.items():
        y = duals.get(name)
        if y is None:
            return None, f"no dual for constraint {name!r}"
        if builtin_jacobian_t(owner, k, y, f.shape[0], out=total) is None:
            rest.append((name, y))
    if not rest:
        return total, ""
    x = problem.x
    with _at(problem, f):
        for name, y in rest:
            expr = problem._named[name].expr
            if not expr.is_affine():
                return None, f"constraint {name!r} is not affine (no Jacobian taken)"
            g = expr.grad.get(x) if expr.grad is not None else None
            if g is None:
                if not expr.variables():
                    continue
                return None, f"cvxpy gives no gradient for constraint {name!r}"
            y = np.atleast_1d(np.asarray(y, dtype=np.float64)).ravel(order="F")
            # cvxpy's grad is (size of x) × (size of expr); ∂g/∂f = ∂g/∂x / s
            total += np.asarray(g @ y).ravel() / problem.scale
    return total, ""


def _gap_terms(problem, f: np.ndarray, duals: dict) -> tuple[float, float]:
    """(Σ_k y_k·g_k(f), worst negative inequality multiplier, as ≥ 0): g in numpy for the built-ins
    (:func:`.jacobians.builtin_g`), cvxpy's expression values for the others. The products are
    summed by ``np.sum``, not a BLAS dot (whose idle threads spin and bill the caller CPU time)."""
    from ..constraints.jacobians import builtin_g

    lag, dual_inf = 0.0, 0.0
    rest = []

    def add(y, g, equality):
        nonlocal lag, dual_inf
        y = np.atleast_1d(np.asarray(y, dtype=np.float64)).ravel(order="F")
        lag += float(np.sum(y * np.atleast_1d(np.asarray(g, dtype=np.float64)).ravel(order="F")))
        if not equality and y.size:
            dual_inf = max(dual_inf, float(-y.min()))

    for name, (owner, k) in problem._owners.items():
        got = builtin_g(owner, k, f, f.shape[0])
        if got is None:
            rest.append(name)
        else:
            add(duals[name], *got)
    if rest:
        with _at(problem, f):
            for name in rest:
                con = problem._named[name]
                add(duals[name], con.expr.value, isinstance(con, (cp.constraints.Zero, cp.constraints.Equality)))
    return lag, dual_inf
