"""Conformance checks of objectives and constraints (:func:`ldpopt.testing.check_objective`,
:func:`ldpopt.testing.check_constraint`): what every item of the kind must satisfy, each property
checked against a reference that does not share the item's code — cvxpy's own evaluation of what
the item ``build``\\ s, finite differences, a bracketed root search, Clarabel's solve.
Notes: docs/notes/problems.md, "ldpopt.conformance.problems".
"""

from __future__ import annotations

import warnings

import cvxpy as cp
import numpy as np

__all__ = ["CONSTRAINT_CHECKS", "OBJECTIVE_CHECKS"]   # the runners are called through ldpopt.testing

OBJECTIVE_CHECKS = ("value", "gradient", "per_value", "argmin", "curvature", "structured", "certificate")
CONSTRAINT_CHECKS = ("rows", "jacobian", "structured", "feasibility")
_FD = 1e-6        # finite-difference step in f
_FD_TOL = 1e-4    # relative tolerance of a finite difference
_SOLVE_TOL = 1e-4  # max |Δf| between two solvers (Clarabel on the likelihoods' cones: up to 1.7e-5, measured)


def _where(est) -> str:
    return f"{est.oracle} eps={est.epsilon:g} d={est.d} n={est.n}"


def _selected(checks, known) -> tuple:
    if checks is None:
        return known
    bad = [c for c in checks if c not in known]
    if bad:
        raise ValueError(f"checks must name some of {list(known)}, got {bad[0]!r}")
    return tuple(checks)


def _points(est, k: int, seed: int) -> np.ndarray:
    """k interior points of the simplex (Dirichlet(2)), so every built-in J is finite and smooth there."""
    return np.random.default_rng(seed + est.d).dirichlet(np.full(est.d, 2.0), size=k)


def _clarabel(problem: cp.Problem) -> str:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            problem.solve(solver="CLARABEL")
        except cp.SolverError:
            return "solver_error"
    return problem.status


# -- objectives ---------------------------------------------------------------------------------------

def check_objective(objective, estimates, *, checks=None, error=AssertionError) -> dict[str, int]:
    """Run the conformance checks of an objective (module docstring): a name, an Objective or a
    callable (as ``Problem`` takes it) or an Objective class (its ``example(estimate)`` per estimate:
    so is a registered name), on ``estimates``; ``checks``: a subset of :data:`OBJECTIVE_CHECKS`; a
    failure is raised as ``error``."""
    from ..problems.objectives.base import Objective
    from ..problems.objectives.builtins import make_objective
    from ..problems.registry import objective_factory

    item = objective_factory(objective.lower()) if isinstance(objective, str) else objective
    per_estimate = isinstance(item, type) and issubclass(item, Objective)  # a class: its example per estimate
    obj = item.example(estimates[0]) if per_estimate and len(estimates) else make_objective(objective)
    run = _selected(checks, OBJECTIVE_CHECKS)
    ests = list(estimates)
    done = dict.fromkeys(run, 0)
    used = 0
    for est in ests:
        if per_estimate:
            obj = item.example(est)
        try:
            obj.check(est)
        except ValueError:
            continue
        used += 1

        def fail(check, text, est=est, obj=obj):
            raise error(f"check_objective({obj.name!r}): {check} [{_where(est)}]: {text}")

        for name in run:
            done[name] += _OBJECTIVE[name](obj, est, fail)
    if ests and not used:
        raise error(f"check_objective({obj.name!r}): the objective accepts none of the estimates")
    return done


def _built_value(obj, est, points):
    """cvxpy's value of the built expression at each point and J from ``value`` mapped the same
    way (K·J + offset), with the expression's scale; None if ``value`` is not implemented."""
    from ..problems.objectives.base import default_scale

    scale = default_scale(est, obj.frequency_floor) if obj.scaled else 1.0
    x = cp.Variable(est.d)
    f = x if scale == 1.0 else scale * x
    built = obj.build(f, x, scale, est)
    got, want = [], []
    for p in points:
        try:
            j = obj.value(p, est)
        except NotImplementedError:
            return None
        want.append(built.multiplier * j + built.offset)
        if {v.id for v in built.expr.variables()} <= {x.id} and not built.constraints:
            x.value = p / scale
            got.append(float(built.expr.value))
        else:  # auxiliary (epigraph) variables: minimised out with x fixed
            prob = cp.Problem(cp.Minimize(built.expr), [*built.constraints, x == p / scale])
            _clarabel(prob)
            got.append(float(prob.value) if prob.value is not None else np.nan)
    return np.array(got), np.array(want)


def _obj_value(obj, est, fail) -> int:
    pts = _points(est, 3, 1)
    vals = _built_value(obj, est, pts)
    if vals is None:
        return 0
    got, want = vals
    exact = 1e-9 * np.maximum(1.0, np.abs(want))
    tol = np.maximum(exact, 1e-6 * np.maximum(1.0, np.abs(want)))
    bad = np.flatnonzero(~(np.abs(got - want) <= tol))
    if bad.size:
        i = int(bad[0])
        fail("value", f"value() maps to {want[i]!r} in the built expression's units, cvxpy's value of build() "
                      f"is {got[i]!r}")
    return pts.shape[0]


def _fd_gradient(fun, f):
    """Central differences of a scalar function, one coordinate at a time."""
    g = np.empty_like(f)
    for j in range(f.size):
        e = np.zeros_like(f)
        e[j] = _FD
        g[j] = (fun(f + e) - fun(f - e)) / (2 * _FD)
    return g


def _close(a, b, tol=_FD_TOL) -> bool:
    a, b = np.asarray(a, float), np.asarray(b, float)
    scale = max(1.0, float(np.max(np.abs(b))) if b.size else 1.0)
    return bool(np.all(np.abs(a - b) <= tol * scale))


def _obj_gradient(obj, est, fail) -> int:
    n = 0
    for p in _points(est, 2, 2):
        try:
            g = np.asarray(obj.gradient(p, est), float)
            ref = _fd_gradient(lambda f: obj.value(f, est), p)
        except NotImplementedError:
            return 0
        if not _close(g, ref):
            fail("gradient", f"gradient() differs from central differences of value() by "
                             f"{np.max(np.abs(g - ref)):.3g}")
        n += 1
    return n


def _sep(obj, est):
    per_value = getattr(obj, "per_value", None)
    return per_value(est) if callable(per_value) else None


def _obj_per_value(obj, est, fail) -> int:
    sep = _sep(obj, est)
    if sep is None:
        return 0
    a, b = _points(est, 2, 3)
    try:
        dj = obj.value(a, est) - obj.value(b, est)
    except NotImplementedError:
        dj = None
    if dj is not None:
        dh = float(np.sum(sep.value(a)) - np.sum(sep.value(b)))
        if not _close(dh, dj, 1e-9):
            fail("per_value", f"Σ h_v changes by {dh!r} between two points, value() by {dj!r}")
    e = np.full(est.d, _FD)
    d1, d2 = sep.d1(a), sep.d2(a)
    if not _close(d1, (sep.value(a + e) - sep.value(a - e)) / (2 * _FD)):
        fail("per_value", "h' differs from central differences of h")
    if not _close(d2, (sep.d1(a + e) - sep.d1(a - e)) / (2 * _FD)):
        fail("per_value", "h'' differs from central differences of h'")
    try:
        g = np.asarray(obj.gradient(a, est), float)
    except NotImplementedError:
        g = None
    if g is not None and not _close(d1, g, 1e-9):
        fail("per_value", f"h' differs from gradient() by {np.max(np.abs(d1 - g)):.3g}")
    return 1


def _bisect_argmin(sep, t, l, u):
    """argmin_{[l, u]} h(f) + t f by bisection of h'(f) + t (the reference of ``argmin``)."""
    with np.errstate(all="ignore"):
        at_l = sep.d1(l) + t >= 0
        at_u = sep.d1(u) + t <= 0
    lo, hi = l.copy(), u.copy()
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        with np.errstate(all="ignore"):
            neg = sep.d1(mid) + t < 0
        lo, hi = np.where(neg, mid, lo), np.where(neg, hi, mid)
    return np.where(at_l, l, np.where(at_u, u, 0.5 * (lo + hi)))


def _obj_argmin(obj, est, fail) -> int:
    sep = _sep(obj, est)
    if sep is None:
        return 0
    d = est.d
    l, u = np.zeros(d), np.ones(d)
    target = _points(est, 1, 4)[0]
    t = -sep.d1(target)                       # interior roots at target
    t_out = t + np.where(np.arange(d) % 2 == 0, 1e3, -1e3) * (np.abs(t) + 1.0)  # pushed to the bounds
    n = 0
    for tt in (t, t_out):
        got = sep.argmin(tt, l, u)
        ref = _bisect_argmin(sep, tt, l, u)
        if not np.allclose(got, ref, rtol=0.0, atol=1e-9):
            i = int(np.argmax(np.abs(got - ref)))
            fail("argmin", f"value {i}: argmin {got[i]!r}, the bracketed reference {ref[i]!r}")
        n += 1
    return n


def _obj_curvature(obj, est, fail) -> int:
    sep = _sep(obj, est)
    if sep is None:
        return 0
    d = est.d
    l, u = np.zeros(d), np.full(d, 0.5)
    mu = np.asarray(sep.mu(l, u), float)
    grid = np.linspace(0.0, 0.5, 11)
    low = np.min([sep.d2(np.full(d, s)) for s in grid], axis=0)
    if np.any(mu > low * (1 + 1e-9) + 1e-300):
        i = int(np.argmax(mu - low))
        fail("curvature", f"value {i}: mu = {mu[i]!r} exceeds h'' = {low[i]!r} at a point of [l, u]")
    return 1


def _cases(est):
    """The problems of the ``structured`` and ``certificate`` checks: the simplex, and the simplex with
    the first two values summing to at most 0.3."""
    from ..problems.constraints.base import Simplex, SubsetSum

    return [None, [Simplex(), SubsetSum([0, 1], 0.3, "<=")]]


def _clarabel_solution(obj, est, cons):
    """Clarabel's Solution of the built cvxpy problem, None unless ``optimal``."""
    from ..problems.problem import Problem

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sol = Problem(est, obj, cons).solve(solver="CLARABEL")
    return sol if sol.status == "optimal" else None


def _clarabel_answer(obj, est, cons):
    sol = _clarabel_solution(obj, est, cons)
    return None if sol is None else sol.f


def _obj_structured(obj, est, fail) -> int:
    from ..problems.solvers.structured import NotApplicable, solve_structured

    if _sep(obj, est) is None:
        return 0
    n = 0
    for cons in _cases(est):
        try:
            got = solve_structured(est, obj, cons).f
        except NotApplicable:
            continue
        ref = _clarabel_answer(obj, est, cons)
        if ref is None:
            continue
        if not np.max(np.abs(got - ref)) <= _SOLVE_TOL:
            fail("structured", f"the structured solver's answer differs from Clarabel's by "
                               f"{np.max(np.abs(got - ref)):.3g} ({'simplex' if cons is None else 'subset sum'})")
        n += 1
    return n


def _obj_certificate(obj, est, fail) -> int:
    from ..problems.check.certificate import certificate
    from ..problems.solvers.structured import NotApplicable

    if _sep(obj, est) is None:
        return 0
    n = 0
    for cons in _cases(est):
        sol = _clarabel_solution(obj, est, cons)
        if sol is None:
            continue
        ref, tol = sol.f, 1e-3  # Clarabel's answer and multipliers: within ~1e-4 of the optimum (measured)
        try:
            cert = certificate(obj, cons, est, ref, sol.duals, feas_tol=1e-6)
        except NotApplicable:
            continue
        if not cert.passes(tol):
            fail("certificate", f"the certificate refuses Clarabel's answer (distance bound "
                                f"{cert.distance_linf:.3g} > {tol:.3g})")
        # the planted point: half the largest of values 2.. moved onto the smallest (feasible for both
        # cases: the subset-sum row is over values 0 and 1)
        wrong = ref.copy()
        i, j = 2 + int(np.argmax(wrong[2:])), 2 + int(np.argmin(wrong[2:]))
        delta = 0.5 * wrong[i]
        wrong[i] -= delta
        wrong[j] += delta
        bad = certificate(obj, cons, est, wrong, feas_tol=1e-6)
        if bad.passes(0.5 * delta):
            fail("certificate", f"the certificate accepts a point {delta:.3g} of mass away from the optimum "
                                f"(distance bound {bad.distance_linf:.3g})")
        n += 1
    return n


_OBJECTIVE = {"value": _obj_value, "gradient": _obj_gradient, "per_value": _obj_per_value,
              "argmin": _obj_argmin, "curvature": _obj_curvature, "structured": _obj_structured,
              "certificate": _obj_certificate}


# -- constraints --------------------------------------------------------------------------------------

def check_constraint(constraint, estimates, *, checks=None, error=AssertionError) -> dict[str, int]:
    """Run the conformance checks of a constraint (module docstring): a Constraint or a callable (as
    ``Problem`` takes it), on ``estimates``; ``checks``: a subset of
    :data:`CONSTRAINT_CHECKS`; a failure is raised as ``error``."""
    from ..problems.constraints.base import as_constraint

    con = as_constraint(constraint)
    run = _selected(checks, CONSTRAINT_CHECKS)
    done = dict.fromkeys(run, 0)
    for est in estimates:
        def fail(check, text, est=est):
            raise error(f"check_constraint({con!r}): {check} [{_where(est)}]: {text}")

        for name in run:
            done[name] += _CONSTRAINT[name](con, est, fail)
    return done


def _built(con, est):
    f = cp.Variable(est.d)
    return f, con.build(f, est)


def _probe_points(est, k: int, seed: int) -> np.ndarray:
    """Points in and around the simplex: Dirichlet points and the same points perturbed by N(0, 1/d)
    (negative entries, totals off 1)."""
    gen = np.random.default_rng(seed + 17 * est.d)
    base = gen.dirichlet(np.ones(est.d), size=k)
    return np.vstack([base, base + gen.normal(0.0, 1.0 / est.d, size=base.shape)])


def _con_rows(con, est, fail) -> int:
    f, built = _built(con, est)
    n = 0
    for p in _probe_points(est, 2, 5):
        f.value = p
        res = con.residuals(p, est)
        if res is not None and len(res) != len(built):
            fail("rows", f"residuals() has {len(res)} entries for {len(built)} built constraints")
        for k, (name, c) in enumerate(built):
            viol = float(np.max(np.atleast_1d(c.violation()))) if c.expr.size else 0.0
            if res is not None and not abs(res[k] - viol) <= 1e-9 * max(1.0, abs(viol)):
                fail("rows", f"{name!r}: residuals() says {res[k]!r}, cvxpy's violation is {viol!r}")
            got = con.g(k, p, est.d)
            if got is not None:
                g, eq = got
                ref = np.asarray(c.expr.value, float).ravel()
                if not np.allclose(np.asarray(g, float).ravel(), ref, rtol=1e-12, atol=1e-12):
                    fail("rows", f"{name!r}: g() differs from cvxpy's expression by "
                                 f"{np.max(np.abs(np.asarray(g, float).ravel() - ref)):.3g}")
                if bool(eq) != isinstance(c, cp.constraints.Equality):
                    fail("rows", f"{name!r}: g() says is_equality={eq}, cvxpy built a {type(c).__name__}")
            n += 1
    return n


def _con_jacobian(con, est, fail) -> int:
    f, built = _built(con, est)
    p = _probe_points(est, 1, 6)[0]
    gen = np.random.default_rng(7 + est.d)
    n = 0
    for k, (name, c) in enumerate(built):
        y = gen.normal(size=c.expr.size)
        got = con.jacobian_t(k, y if y.size > 1 else y.reshape(1), est.d)
        if got is None:
            continue

        def yg(x, c=c, y=y):
            f.value = x
            return float(np.dot(y, np.asarray(c.expr.value, float).ravel()))

        ref = _fd_gradient(yg, p)
        if not _close(got, ref):
            fail("jacobian", f"{name!r}: jacobian_t() differs from central differences of y·g by "
                             f"{np.max(np.abs(np.asarray(got) - ref)):.3g}")
        out = np.arange(est.d, dtype=np.float64)
        added = con.add_jacobian_t(k, y.reshape(-1), est.d, out.copy())
        if added is None or not np.allclose(added, np.arange(est.d) + got, rtol=0, atol=1e-12):
            fail("jacobian", f"{name!r}: add_jacobian_t() does not add jacobian_t() into its array")
        n += 1
    return n


def _completed(con, est):
    """[con] with f ≥ 0 and Σ f = 1 added where it does not state them (the CLS problem of the
    ``structured`` check); None when no completion compiles."""
    from ..problems.constraints.base import NonNegative, SumTo
    from ..problems.dual.structure import compile_constraints
    from ..problems.objectives.separable import NotApplicable

    for cons in ([con], [NonNegative(), con], [NonNegative(), SumTo(1.0), con], [SumTo(1.0), con]):
        try:
            compile_constraints(cons, est.d, fast=False)
        except NotApplicable:
            continue
        except ValueError:
            return None
        return cons
    return None


def _con_structured(con, est, fail) -> int:
    from ..problems.solvers.structured import solve_structured

    cons = _completed(con, est)
    if cons is None:
        return 0
    got = solve_structured(est, "cls", cons).f
    ref = _clarabel_answer(_cls(), est, cons)
    if ref is None:
        fail("structured", "Clarabel finds no optimum of the CLS problem the structured solver solved")
    if not np.max(np.abs(got - ref)) <= _SOLVE_TOL:
        fail("structured", f"the structured solver's CLS answer with its compiled rows differs from Clarabel's by "
                           f"{np.max(np.abs(got - ref)):.3g}")
    return 1


def _cls():
    from ..problems.objectives.builtins import LeastSquares

    return LeastSquares()


def _violation(c_list) -> float:
    return max((float(np.max(np.atleast_1d(c.violation()))) for _, c in c_list if c.expr.size), default=0.0)


def _con_feasibility(con, est, fail) -> int:
    from ..problems.constraints.base import Box
    from ..problems.constraints.feasibility import find_infeasibility
    from ..problems.problem import Problem

    f, built = _built(con, est)
    # a point of the set: Clarabel's projection of a random point onto it
    target = _points(est, 1, 8)[0]
    proj = cp.Problem(cp.Minimize(cp.sum_squares(f - target)), [c for _, c in built])
    if _clarabel(proj) not in ("optimal", "optimal_inaccurate"):
        return 0
    inside = np.asarray(f.value, float).copy()
    outside = None
    for p in _probe_points(est, 8, 9):
        f.value = p
        if _violation(built) >= 0.01:
            outside = p
            break
    n = 0
    for point, feasible in ((inside, True), (outside, False)):
        if point is None:
            continue
        box = Box(point - 1e-6, point + 1e-6, name="box_around")
        f2, built2 = _built(con, est)
        verdict = _clarabel(cp.Problem(cp.Minimize(0), [c for _, c in built2] + [f2 >= point - 1e-6,
                                                                                 f2 <= point + 1e-6]))
        solver_feasible = verdict in ("optimal", "optimal_inaccurate")
        if solver_feasible != feasible:
            if feasible:
                continue  # Clarabel's own answer not accepted back: no verdict to compare
            fail("feasibility", "Clarabel finds a point within 1e-6 of one its violation says is >= 0.01 away")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            found = find_infeasibility(Problem(est, "cls", [con, box]))
        if found is not None and feasible:
            fail("feasibility", f"the pre-check calls a feasible instance infeasible ({found})")
        if found is None and not feasible:
            fail("feasibility", "the pre-check misses the conflict of a point it violates by >= 0.01 and a box "
                                "of width 2e-6 around that point (Clarabel: infeasible)")
        n += 1
    return n


_CONSTRAINT = {"rows": _con_rows, "jacobian": _con_jacobian, "structured": _con_structured,
               "feasibility": _con_feasibility}
