"""A weighted geometric mean in a user's cvxpy objective, CLS − c·geo_mean(a f + b, p): recognised as a
smooth non-separable term (a diagonal Hessian minus one rank-1 part), solved by LDPOPT-IPM with that
part in its Schur complement, and certified by ldpopt's check. Generated problems (d 5…60, equal,
random and partly zero weights, ties and zeros in f̃, c from 1e-4 to 1); the references are
independent of the route: cvxpy's own value and gradient, central differences, Clarabel at 1e-12 on
the user's cvxpy form where it says optimal, and a reference from the KKT conditions alone (a
bisection on the geometric mean's value, closed forms per value)."""

from __future__ import annotations

import warnings

import cvxpy as cp
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from problem_strategies import estimate, plant

from conftest import examples
import ldpopt.problems.solvers.routes as routes_module
from ldpopt.problems import Problem, Simplex
from ldpopt.problems.check.verdict import accuracy_tol
from ldpopt.problems.objectives.recognise import NotRecognised, cvxpy_grad, numpy_grad, recognise

#: the references' own agreement (Clarabel at 1e-12 through cvxpy's second-order-cone tree of the
#: geometric mean against the KKT bisection): far below every tolerance here (accuracy_tol ≥ 1e-6)
REF_ALLOW = 1e-7
SETTINGS = settings(max_examples=examples(30), deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@st.composite
def geo_cases(draw):
    """(estimate, c, weights or None, shifted): CLS − c·geo_mean(f or 2f + 1e-3, weights)."""
    d = draw(st.integers(5, 60))
    seed = draw(st.integers(0, 2**31 - 1))
    shape = draw(st.sampled_from(("plain", "ties", "zeros", "flat-head")))
    c = draw(st.sampled_from((1e-4, 1e-3, 1e-2, 1e-1, 1.0)))
    kind = draw(st.sampled_from(("equal", "random", "some-zero")))
    shifted = draw(st.booleans())
    rng = np.random.default_rng(seed)
    est = estimate(shape, d, rng)
    if kind == "equal":
        p = None
    elif kind == "random":
        p = rng.integers(1, 5, d)
    else:
        p = rng.integers(0, 3, d)
        p[0] = max(p[0], 1)
    return est, c, p, shifted


def objective(c, p, shifted):
    def J(f, e):
        arg = 2.0 * f + 1e-3 if shifted else f
        return cp.sum_squares(f - e.f_tilde) - c * (cp.geo_mean(arg) if p is None else cp.geo_mean(arg, p))
    return J


def _weights(expr):
    """The geo_mean atom's own weights (cvxpy's rational approximation), zero where dropped."""
    node = next(n for n in _walk(expr) if type(n).__name__ == "GeoMeanApprox")
    w = np.zeros(node.args[0].size)
    w[np.asarray(node._keep, bool)] = [float(t) for t in node.w]
    return w


def _walk(e):
    yield e
    for a in getattr(e, "args", []):
        yield from _walk(a)


def _root(ft, p, t, nu, a, b):
    """Each f_v ≥ 0 minimising (f − f̃_v)² − t·p_v·log(a f + b) + ν f (p_v = 0: the square alone):
    the larger root of 2a f² + (2b − 2a f̃ + νa) f + b(ν − 2f̃) − t p a = 0 (where a f + b > 0 the
    stationarity 2(f − f̃) − t p a/(a f + b) + ν = 0 is increasing in f), clipped at 0."""
    A, B, C = 2.0 * a, 2.0 * b - 2.0 * a * ft + nu * a, b * (nu - 2.0 * ft) - t * p * a
    disc = np.sqrt(np.maximum(B * B - 4.0 * A * C, 0.0))
    with np.errstate(divide="ignore", invalid="ignore"):
        big = np.where(B <= 0, (-B + disc) / (2.0 * A), 2.0 * C / (-B - disc))
    plain = ft - nu / 2.0  # p_v = 0
    return np.maximum(np.where(p > 0, big, plain), 0.0)


def _bisect(fun, lo, hi):
    """The root of a decreasing ``fun`` in [lo, hi], to adjacent floats."""
    for _ in range(400):
        mid = 0.5 * (lo + hi)
        if mid in (lo, hi):
            break
        if fun(mid) > 0:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def kkt_reference(est, c, w, shifted):
    """The optimum of ‖f − f̃‖² − c·G(a f + b) on the simplex from its KKT conditions alone, written
    without ldpopt: at f*, ∇J = 2(f − f̃) − t·p a/z with t = c·G(z*), which is the gradient of the
    separable (f − f̃)² − t·p log z; so f* = f(t*) where f(t) minimises that separable function on the
    simplex (closed form per value for a multiplier ν, bisection on ν for Σ f = 1) and t* solves
    t = c·G(f(t)) (bisection: c·G(f(0)) ≥ 0 and c·G ≤ c·max z ≤ c(a + b) on the simplex; a root is
    a KKT point of the strictly convex J, so unique)."""
    ft = np.asarray(est.f_tilde, float)
    a, b = (2.0, 1e-3) if shifted else (1.0, 0.0)
    on = w > 0

    def f_of(t):
        lo, hi = 2.0 * (float(np.min(ft)) - 2.0), 2.0 * float(np.max(ft)) + 2.0
        while np.sum(_root(ft, w, t, hi, a, b)) > 1.0:
            hi = 2.0 * hi + 1.0
        return _root(ft, w, t, _bisect(lambda nu: np.sum(_root(ft, w, t, nu, a, b)) - 1.0, lo, hi), a, b)

    def G(f):
        return float(np.exp(w[on] @ np.log(a * f[on] + b)))

    t = _bisect(lambda t: c * G(f_of(t)) - t, 0.0, c * (a + b))
    return f_of(t)


def clarabel(est, c, p, shifted):
    """Clarabel at 1e-12 on the user's cvxpy form (plain cvxpy), or None where it does not say optimal."""
    f = cp.Variable(est.d)
    prob = cp.Problem(cp.Minimize(objective(c, p, shifted)(f, est)), [f >= 0, cp.sum(f) == 1])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            prob.solve(solver="CLARABEL", tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12)
        except cp.SolverError:
            return None
    return np.asarray(f.value, float) if prob.status == "optimal" and f.value is not None else None


def reference(est, c, p, shifted):
    """The KKT reference (:func:`kkt_reference`), itself held against Clarabel where Clarabel says optimal."""
    x = cp.Variable(est.d)
    ref = kkt_reference(est, c, _weights(objective(c, p, shifted)(x, est)), shifted)
    other = clarabel(est, c, p, shifted)
    if other is not None:
        assert float(np.max(np.abs(other - ref))) <= REF_ALLOW
    return ref


@SETTINGS
@given(geo_cases())
def test_the_interior_point_answer_is_within_its_bound_of_a_tight_reference(case):
    est, c, p, shifted = case
    J = objective(c, p, shifted)
    form = recognise(J, est)
    assert len(form.geo) == 1 and not form.separable and not form.quadratic
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sol = Problem(est, J, [Simplex()]).solve(progress=False)
    assert sol.status == "optimal", (sol.status, sol.solver, sol.message)
    assert sol.solver == "LDPOPT-IPM", sol.message
    ref = reference(est, c, p, shifted)
    dist = float(np.max(np.abs(sol.f - ref)))
    ch = sol.checks
    assert ch.passed and ch.error_bound is not None
    assert dist <= ch.error_bound + REF_ALLOW, (dist, ch.error_bound)
    assert dist <= accuracy_tol(est.d) + REF_ALLOW


@SETTINGS
@given(geo_cases(), st.integers(0, 2**31 - 1))
def test_value_gradient_and_hessian_parts_match_cvxpy_and_differences(case, seed):
    est, c, p, shifted = case
    J = objective(c, p, shifted)
    form = recognise(J, est)
    rng = np.random.default_rng(seed)
    f0 = rng.dirichlet(np.ones(est.d)) + 1e-3  # inside every argument's domain
    x = cp.Variable(est.d)
    expr = J(x, est)
    x.value = f0
    assert abs(form.total(f0) - float(expr.value)) <= 1e-12 * max(1.0, abs(float(expr.value)))
    g_cvx = np.asarray(cvxpy_grad(expr, {})[x].toarray(), float).ravel()
    scale = float(np.max(np.abs(g_cvx)))
    assert np.max(np.abs(form.gradient(f0) - g_cvx)) <= 1e-12 * scale
    assert np.max(np.abs(numpy_grad(expr, x, f0) - g_cvx)) <= 1e-12 * scale
    S, L = form.hessian_parts(f0)
    N = form.hessian_negative(f0)
    assert L is None and N.shape == (1, est.d)
    v = rng.standard_normal(est.d)
    Hv = S @ v - N.T @ (N @ v)
    h = 1e-6 * float(np.min(f0))
    fd = (form.gradient(f0 + h * v) - form.gradient(f0 - h * v)) / (2 * h)
    assert np.max(np.abs(Hv - fd)) <= 1e-5 * max(float(np.max(np.abs(Hv))), 1.0)
    # w·G with w < 0 is convex: ∇²J = S − NᵀN stays positive semidefinite (here ≥ the squares' 2I)
    H = S.toarray() - N.T @ N
    assert np.linalg.eigvalsh(H).min() >= 2.0 - 1e-8 * float(np.abs(H).max())


def test_a_concave_or_misshapen_geometric_mean_is_not_recognised():
    est = estimate("plain", 8, np.random.default_rng(0))
    for J in (lambda f, e: cp.sum_squares(f - e.f_tilde) + 1e-3 * cp.geo_mean(f),   # concave term, +
              lambda f, e: cp.sum_squares(f - e.f_tilde) - 1e-3 * cp.geo_mean(f[:4]),  # not length d
              lambda f, e: cp.sum_squares(f - e.f_tilde) - 1e-3 * cp.geo_mean(cp.cumsum(f))):  # not per value
        with pytest.raises(NotRecognised):
            recognise(J, est)


@SETTINGS
@given(geo_cases(), st.sampled_from([10.0, 100.0]))
def test_a_planted_interior_point_answer_is_never_optimal(case, k):
    """The interior point's Solution moved by k·accuracy_tol(d) (Σ f kept, its checks and status
    left as the route made them): never returned as ``optimal`` unless the returned point is within
    the tolerance of the reference."""
    est, c, p, shifted = case
    J = objective(c, p, shifted)
    delta = k * accuracy_tol(est.d)
    hits = [0]
    orig = routes_module.solve_ipm

    def planted(*a, **kw):
        sol, why = orig(*a, **kw)
        if sol is not None and np.all(np.isfinite(sol.f)):
            sol.f = plant(sol.f, delta)
            hits[0] += 1
        return sol, why

    with pytest.MonkeyPatch.context() as mp, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mp.setattr(routes_module, "solve_ipm", planted)
        sol = Problem(est, J, [Simplex()]).solve(progress=False)
    assert hits[0] >= 1
    if sol.status == "optimal":  # another route's answer: then the optimum to the tolerance
        ref = reference(est, c, p, shifted)
        assert float(np.max(np.abs(sol.f - ref))) <= accuracy_tol(est.d) + REF_ALLOW
        assert sol.solver != "LDPOPT-IPM"


def test_the_problem_expression_is_the_recognised_one_copied_and_the_chain_solves_it():
    """The cvxpy side of the problem is recognition's expression copied onto x (the callable runs
    once): the same value as the callable's own expression at a point, and cvxpy's Clarabel on it
    (asked by name) ends at the KKT reference."""
    est = estimate("ties", 12, np.random.default_rng(3))
    calls = [0]

    def J(f, e):
        calls[0] += 1
        return cp.sum_squares(f - e.f_tilde) - 1e-2 * cp.geo_mean(f, np.arange(1, 13))

    prob = Problem(est, J, [Simplex()])
    expr = prob.cvxpy_problem.objective.expr
    assert calls[0] == 1
    f0 = np.random.default_rng(4).dirichlet(np.ones(12))
    x = cp.Variable(12)
    own = J(x, est)
    x.value = f0
    prob.x.value = f0 / prob.scale
    assert abs(float(expr.value) - prob.multiplier * float(own.value)) <= 1e-12 * abs(float(expr.value))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sol = prob.solve(solver="CLARABEL", progress=False)
    w = _weights(own)
    ref = kkt_reference(est, 1e-2, w, False)
    assert float(np.max(np.abs(sol.f - ref))) <= 1e-5


@SETTINGS
@given(geo_cases(), st.integers(0, 2**31 - 1))
def test_the_interior_points_fixed_pattern_hessian_is_hessian_parts(case, seed):
    """The interior point's fixed-pattern S(f) (diag(h'') + the geometric mean's diagonal part + Q)
    has the entries of ``hessian_parts``' S at every point, not only at the start it was checked at."""
    import scipy.sparse as sp

    from ldpopt.problems.objectives.smooth import smooth_terms
    from ldpopt.problems.solvers.ipm import _DiagPlusConst
    from ldpopt.problems.solvers.user_forms import route_objective

    est, c, p, shifted = case
    obj, _ = route_objective(Problem(est, objective(c, p, shifted), [Simplex()]).objective, est)
    terms = smooth_terms(obj, est)
    rng = np.random.default_rng(seed)
    f0, f1 = (rng.dirichlet(np.ones(est.d)) + 1e-3 for _ in range(2))
    fixed = _DiagPlusConst.make(terms, f0, terms.hessian_parts(f0)[0])
    assert fixed is not None
    S1 = sp.csr_array(terms.hessian_parts(f1)[0])
    assert (fixed(f1, 1.0) != S1).nnz == 0
