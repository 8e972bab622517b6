"""A quadratic plus weighted 2-norms of affine arguments (:func:`ldpopt.problems.objectives.recognise.recognise_norms`,
:class:`ldpopt.problems.solvers.user_forms.NormUserObjective`) written into Clarabel's own interface, one
second-order cone per 2-norm (:mod:`ldpopt.problems.solvers.direct_qp`), against cvxpy + Clarabel at 1e-12 on
the same problem written by hand: generated weights, arguments (c·(f − a), a slice of f, a dense M f − q),
extra terms and constraints."""

from __future__ import annotations

import warnings

import cvxpy as cp
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import examples
import ldpopt
from ldpopt.problems import Problem, Simplex, SubsetSum
from ldpopt.problems.check.verdict import accuracy_tol
from ldpopt.problems.objectives.recognise import recognise_norms

#: the reference's own accuracy (Clarabel at 1e-12 through cvxpy; as tests/test_referee_plants.py)
REF_ALLOW = 1e-7


def _estimate(d, seed):
    rng = np.random.default_rng(seed)
    counts = rng.multinomial(20_000, rng.dirichlet(np.full(d, 0.5)))
    return ldpopt.oracles.get("oue", 1.0, d).simulate(counts, rng=rng)


@st.composite
def norm_objectives(draw):
    """(d, seed, objective(f, ft) builder, extra-constraint kind)."""
    d = draw(st.integers(5, 40))
    seed = draw(st.integers(0, 10_000))
    rng = np.random.default_rng(seed + 7)
    norms = []
    for _ in range(draw(st.integers(1, 2))):
        w = float(10.0 ** rng.uniform(-3, 0))
        kind = draw(st.sampled_from(("scaled", "slice", "dense")))
        c = float(rng.uniform(0.5, 3.0) * rng.choice([-1.0, 1.0]))
        a = rng.dirichlet(np.ones(d))
        S = np.sort(rng.permutation(d)[: max(2, d // 3)])
        M, q = rng.normal(size=(3, d)), rng.normal(size=3) * 0.1
        norms.append((w, kind, c, a, S, M, q))
    extra = draw(st.sampled_from(("none", "tv", "huber", "square-diff")))

    def objective(f, ft):
        J = cp.sum_squares(f - ft)
        for w, kind, c, a, S, M, q in norms:
            arg = c * (f - a) if kind == "scaled" else (c * (f[S] - a[S]) if kind == "slice" else M @ f - q)
            J = J + w * cp.norm(arg, 2)
        if extra == "tv":
            J = J + 1e-3 * cp.norm1(f[1:] - f[:-1])
        elif extra == "huber":
            J = J + 1e-2 * cp.sum(cp.huber(f - ft, 1.0 / d))
        elif extra == "square-diff":
            J = J + 0.5 * cp.sum_squares(cp.diff(f))
        return J

    return d, seed, objective, draw(st.sampled_from(("simplex", "subset==")))


def _reference(est, objective, subset):
    d = est.d
    f = cp.Variable(d)
    cons = [f >= 0, cp.sum(f) == 1]
    if subset is not None:
        cons.append(cp.sum(f[subset[0]]) == subset[1])
    prob = cp.Problem(cp.Minimize(objective(f, np.asarray(est.f_tilde, float))), cons)
    for tol, allow in ((1e-12, REF_ALLOW), (1e-10, 10 * REF_ALLOW), (1e-8, 100 * REF_ALLOW)):  # AlmostSolved on some
        prob.solve(solver="CLARABEL", tol_gap_abs=tol, tol_gap_rel=tol, tol_feas=tol)
        if prob.status == "optimal":
            return np.asarray(f.value, float), float(prob.value), allow
    raise AssertionError(f"the reference ended {prob.status}")


@settings(max_examples=examples(25), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(norm_objectives())
def test_the_cone_route_agrees_with_cvxpy_and_its_check(case):
    d, seed, objective, cons_kind = case
    est = _estimate(d, seed)
    subset = None
    cons = [Simplex()]
    if cons_kind == "subset==":
        S = np.arange(d // 2)
        subset = (S, 0.4)
        cons.append(SubsetSum(S, 0.4, "=="))
    problem = Problem(est, lambda f, e: objective(f, e.f_tilde), cons)
    assert type(problem.objective).__name__ == "NormUserObjective", problem.objective_route
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sol = problem.solve(progress=False)
    ref, ref_value, allow = _reference(est, objective, subset)
    assert sol.attempts[0]["solver"] == "CLARABEL-DIRECT"
    if sol.status != "optimal":  # a kink at the optimum (total variation) leaves the check undecided: the
        with warnings.catch_warnings():  # chain's Clarabel, by name, certifies no more than the route did
            warnings.simplefilter("ignore")
            chain = Problem(est, lambda f, e: objective(f, e.f_tilde), cons).solve(solver="CLARABEL", progress=False)
        assert chain.status != "optimal", (sol.message, chain.message)
        return
    assert np.max(np.abs(sol.f - ref)) <= accuracy_tol(d) + allow
    # the numpy value of the recognised form is the expression's
    assert problem.objective.value(ref, est) == pytest.approx(ref_value, rel=1e-9, abs=1e-12)


@given(norm_objectives(), st.sampled_from(("cumsum", "dense", "none")))
@settings(max_examples=examples(30), deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_the_second_walk_reads_the_first_walks_jacobians(case, square):
    """recognise() stops at the 2-norm and hands its Jacobians on: recognise_norms() of the same
    expression then computes each affine argument's once over both walks, and its form holds the same
    bits as a walk that computes them all afresh."""
    from ldpopt.problems.objectives import recognise as R

    d, seed, objective, _ = case
    est = _estimate(d, seed)
    M = np.random.default_rng(seed).normal(size=(4, d))

    def func(f, e):  # the square first: the first walk reads it before it stops at a 2-norm
        if square == "cumsum":  # a quadratic form of a running sum: cvxpy's Jacobian, not per value
            return 0.1 * cp.sum_squares(cp.cumsum(f - e.f_tilde)) + objective(f, e.f_tilde)
        if square == "dense":
            return 0.1 * cp.sum_squares(M @ f) + objective(f, e.f_tilde)
        return objective(f, e.f_tilde)

    with pytest.raises(R.NotRecognised) as info:
        R.recognise(func, est)
    expr, f = info.value.source
    fresh = recognise_norms(expr, f, d)
    computed: list = []
    real = R._jacobian

    def counted(arg, x, n, memo=None):
        if memo is None:
            computed.append(id(arg))
        return real(arg, x, n, memo)

    kept = dict(info.value.jacobians)
    assert bool(kept) == (square != "none")
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(R, "_jacobian", counted)
        walked = recognise_norms(expr, f, d, info.value.jacobians)
    assert not set(computed) & set(kept)  # nothing the first walk read is computed again
    assert fresh is not None and walked is not None and walked[0].jacobians == {}
    for (wa, Aa, ba), (wb, Ab, bb) in zip(fresh[1] + [(w, A, b) for w, A, b in fresh[0].quads],
                                          walked[1] + [(w, A, b) for w, A, b in walked[0].quads], strict=True):
        assert wa == wb and np.array_equal(ba, bb) and (Aa != Ab).nnz == 0 and Aa.shape == Ab.shape


def test_what_is_not_recognised_stays_on_the_chain():
    d = 12
    est = _estimate(d, 1)
    x = cp.Variable(d)
    p = np.full(d, 1.0 / d)
    assert recognise_norms(cp.sum_squares(x) - cp.norm(x - p, 2), x, d) is None          # concave
    assert recognise_norms(cp.sum_squares(x) + cp.norm(cp.square(x), 2), x, d) is None   # not affine inside
    assert recognise_norms(cp.sum_squares(x) + cp.sum(cp.kl_div(x, p)), x, d) is None    # no 2-norm
    for obj in (lambda f, e: cp.sum_squares(f - e.f_tilde) + 1e-2 * cp.norm(f - p, 3),      # a 3-norm
                lambda f, e: cp.sum(cp.kl_div(f, p)) + 1e-2 * cp.norm(f - p, 2),            # not a QP besides
                lambda f, e: cp.sum_squares(f - e.f_tilde) + 1e-2 * cp.norm(cp.vstack([f, f]), 2)):  # a matrix
        problem = Problem(est, obj, [Simplex()])
        assert type(problem.objective).__name__ != "NormUserObjective", problem.objective_route


def test_the_cone_route_under_a_time_limit_runs_in_its_child():
    d = 30
    est = _estimate(d, 3)
    p = np.full(d, 1.0 / d)
    obj = lambda f, e: cp.sum_squares(f - e.f_tilde) + 1e-2 * cp.norm(f - p, 2)
    sol = Problem(est, obj, [Simplex()]).solve(time_limit=60, progress=False)
    assert sol.status == "optimal" and sol.solver == "CLARABEL-DIRECT", sol.message
    free = Problem(est, obj, [Simplex()]).solve(progress=False)
    assert np.max(np.abs(sol.f - free.f)) <= 1e-12
