"""A recognised user quadratic (plus polyhedral terms) handed to PIQP's (under a time limit Clarabel's)
own interface: its answer and multipliers against cvxpy's own compilation solved tight, under every
constraint kind the route compiles, both row sources, a swept cvxpy Parameter, a time limit, and the
chain after it when it does not pass."""

from __future__ import annotations

import warnings

import cvxpy as cp
import numpy as np
import pytest
from _count_estimates import oue_counts
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import examples
import ldpopt.problems.solvers.routes as routes_module
from ldpopt.problems import Problem, Solution
from ldpopt.problems.progress import SolveContext
from ldpopt.problems.constraints.base import Box, Fixed, NonNegative, Simplex, SubsetSum, SumTo, UserConstraint
from ldpopt.problems.constraints.order import Monotone
from ldpopt.problems.constraints.partition import LinearEquality

D = 150
EST = oue_counts(D, 30_000, seed=5)

OBJECTIVES = {
    "smoothness": lambda f, e: cp.sum_squares(f - e.f_tilde) + 0.5 * cp.sum_squares(f[1:] - f[:-1]),
    "total variation": lambda f, e: cp.sum_squares(f - e.f_tilde) + 2e-3 * cp.norm1(f[1:] - f[:-1]),
    "max": lambda f, e: cp.sum_squares(f - e.f_tilde) + 0.05 * cp.max(f[:10] - f[10:20]),
    # a Huber loss: each value's s and t in the QP (huber_M(z) = min_s s² + 2M|z − s|)
    "huber": lambda f, e: (cp.sum_squares(f - e.f_tilde) + 0.5 * cp.sum(cp.huber(f - 1.0 / D, 2.0 / D))
                           + 2e-3 * cp.norm1(f[1:] - f[:-1])),
}
CONSTRAINTS = {
    "simplex": lambda: [Simplex()],
    "subset": lambda: [Simplex(), SubsetSum(np.arange(0, D, 3), 0.3)],
    "box": lambda: [Simplex(), Box(upper=0.05)],
    "monotone": lambda: [Simplex(), Monotone(order=np.argsort(-EST.f_tilde)[:20])],
    "linear": lambda: [Simplex(), LinearEquality(np.eye(D)[[1, 4]] - np.eye(D)[[2, 7]], np.zeros(2))],
    "fixed": lambda: [Simplex(), Fixed([0, 5, 9], [0.02, 0.0, 0.01])],
    # rows cvxpy compiles (the structured compilation does not take a user's callable)
    "user": lambda: [Simplex(), UserConstraint(lambda f, e: {"pair": f[3] + f[8] <= 0.01})],
}


def _referee(func, cons):
    """cvxpy's own compilation of the same problem, Clarabel at 1e-12: the point and the named duals."""
    x = cp.Variable(D)
    built = [(k, c) for con in cons for k, c in con.build(x, EST)]
    cp.Problem(cp.Minimize(func(x, EST)), [c for _, c in built]).solve(
        solver="CLARABEL", tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12)
    return x.value, {k: c.dual_value for k, c in built}


@pytest.fixture(autouse=True)
def _piqp_backend(monkeypatch):
    """These tests are about the direct route's PIQP backend (in a child process), which small d
    hands to Clarabel where there is no ``fork`` (``policy.DIRECT_CLARABEL_MAX_D``)."""
    from ldpopt.problems.solvers import policy

    monkeypatch.setattr(policy, "DIRECT_CLARABEL_MAX_D", 0)


@pytest.mark.parametrize("cons", sorted(CONSTRAINTS))
@pytest.mark.parametrize("name", sorted(OBJECTIVES))
def test_direct_answer_and_duals_match_cvxpys_compilation(name, cons):
    pr = Problem(EST, OBJECTIVES[name], CONSTRAINTS[cons]())
    sol = pr.solve()
    assert sol.attempts[0]["solver"] == "PIQP-DIRECT" and sol.checks.passed
    # the kinks' certificate does not cover every constraint (a user's, some fixed values): unverified
    # then on every route, so the direct answer ends the solve as the chain's would; the direct route
    # hands the check its kink terms' own multipliers as well, which may certify where the chain's
    # fitted ones do not (never the other way round: the chain asked by name is the referee here)
    ref = pr.solve(solver="CLARABEL").status
    assert sol.status == ref or (sol.status, ref) == ("optimal", "optimal_unverified")
    assert sol.solver == "PIQP-DIRECT" and len(sol.attempts) == 1
    if sol.status != "optimal":
        assert name != "smoothness" and cons in ("user", "fixed") and sol.status == "optimal_unverified"
    f_ref, duals_ref = _referee(OBJECTIVES[name], CONSTRAINTS[cons]())
    assert np.max(np.abs(sol.f - f_ref)) <= 1e-6
    assert abs(sol.optimal_value - float(OBJECTIVES[name](cp.Constant(f_ref), EST).value)) <= 1e-9
    if name == "smoothness":  # strictly convex with unique multipliers where the rows are independent
        for key, ref in duals_ref.items():
            if ref is not None and key in sol.duals and sol.duals[key] is not None and np.ndim(ref) == 0:
                assert float(sol.duals[key]) == pytest.approx(float(ref), rel=1e-5, abs=1e-7)


def test_the_two_row_sources_agree_on_the_same_rows():
    """A SubsetSum (structured compilation) and the same row as a user's cvxpy constraint (cvxpy's):
    the same point, and the same multiplier under each one's name."""
    idx = np.arange(0, D, 3)
    func = OBJECTIVES["smoothness"]
    a = Problem(EST, func, [Simplex(), SubsetSum(idx, 0.3, name="third")]).solve()
    b = Problem(EST, func, [Simplex(), UserConstraint(lambda f, e: {"third": cp.sum(f[idx]) == 0.3})]).solve()
    assert a.solver == b.solver == "PIQP-DIRECT" and a.success and b.success
    assert np.max(np.abs(a.f - b.f)) <= 1e-8
    # the same sign convention on both (the multiplier cvxpy reports for the ``==`` row), and cvxpy's own
    ref = Problem(EST, func, [Simplex(), SubsetSum(idx, 0.3, name="third")]).solve(solver="CLARABEL")
    for sol in (a, b):
        assert float(sol.duals["third"]) == pytest.approx(float(ref.duals["third"]), rel=1e-6)


def test_swept_parameter_is_read_at_each_solve():
    lam = cp.Parameter(nonneg=True)
    func = lambda f, e: cp.sum_squares(f - e.f_tilde) + lam * cp.sum_squares(f[1:] - f[:-1])
    pr = Problem(EST, func, [Simplex()])
    for value in (0.1, 5.0):
        lam.value = value
        sol = pr.solve()
        assert sol.solver == "PIQP-DIRECT" and sol.status == "optimal"
        f_ref, _ = _referee(func, [Simplex()])
        assert np.max(np.abs(sol.f - f_ref)) <= 1e-6


def test_a_time_limit_keeps_the_solver_and_options_reach_it():
    pr = Problem(EST, OBJECTIVES["smoothness"], [Simplex()])
    sol = pr.solve(time_limit=30)  # PIQP in a child, killed at the limit: no limit of its own needed
    assert sol.solver == "PIQP-DIRECT" and sol.status == "optimal"
    tv = Problem(EST, OBJECTIVES["total variation"], [Simplex()])
    assert tv.solve(time_limit=30).solver == tv.solve().solver == "PIQP-DIRECT"
    sol = pr.solve(max_iter=1)  # PIQP stops after one iteration; so does the chain after it
    assert not sol.success and sol.attempts[0]["solver"] == "PIQP-DIRECT"
    assert sol.attempts[0]["status"] != "optimal"


def test_on_grammar_families_a_direct_answer_is_never_below_the_chains():
    """Families drawn from the grammar (``draw_family``, seeds 0-399 at d = 30; the route takes about
    one in thirty): wherever the direct route answers first, its status is at least the chain's asked
    by name (the referee, solving the same problem again), and an ``optimal_unverified`` one ends the
    solve with one attempt."""
    import warnings

    from problem_strategies import draw_family

    from ldpopt.problems.solvers.policy import direct_qp_solver

    rank = {"optimal": 0, "optimal_unverified": 1}
    unverified = taken = 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for seed in range(400):
            prob = draw_family(seed, 30).ldpopt_problem()
            if direct_qp_solver(prob) is None:
                continue
            sol = prob.solve()
            if not sol.attempts[0]["solver"].endswith("-DIRECT") or sol.status not in rank:
                continue
            taken += 1
            chain = prob.solve(solver=["CLARABEL", "PIQP", "SCS"])
            assert rank[sol.status] <= rank.get(chain.status, 2), (seed, sol.message, chain.message)
            if sol.status == "optimal_unverified":
                unverified += 1
                assert len(sol.attempts) == 1 and sol.solver.endswith("-DIRECT")
    assert taken >= 5 and unverified >= 1, (taken, unverified)  # the property was exercised


def test_the_chain_follows_when_the_direct_answer_does_not_pass(monkeypatch):
    def failing(problem, solver, options, ctx=None):
        return Solution(np.full(D, 1.0 / D), "inaccurate", False, np.nan, {}, solver=solver + "-DIRECT",
                        message="made to fail"), ""

    monkeypatch.setattr(routes_module, "solve_direct_qp", failing)
    sol = Problem(EST, OBJECTIVES["smoothness"], [Simplex()]).solve()
    assert sol.status == "optimal" and sol.solver != "PIQP-DIRECT"
    assert sol.attempts[0]["solver"] == "PIQP-DIRECT"


def test_not_taken_where_it_does_not_apply():
    kl = Problem(EST, lambda f, e: cp.sum_squares(f - e.f_tilde) + 1e-3 * cp.sum(cp.kl_div(f, np.full(D, 1 / D))),
                 [Simplex(), SubsetSum(np.arange(0, D, 3), 0.3)])
    assert not kl.solve().solver.endswith("-DIRECT")  # not a quadratic
    assert not Problem(EST, "cls", [Simplex()]).solve().solver.endswith("-DIRECT")  # a built-in


@settings(max_examples=examples(25), deadline=None)
@given(seed=st.integers(0, 2**31 - 1), n_le=st.integers(0, 4), n_eq=st.integers(0, 3), flip=st.booleans(),
       matrix=st.booleans(), simplex=st.sampled_from(["simplex", "split", "named"]),
       scale=st.sampled_from([None, 0.01, 3.0]))
def test_own_rows_and_multipliers_are_cvxpys_compilation_and_inversion(seed, n_le, n_eq, flip, matrix, simplex,
                                                                       scale):
    """The direct QP's rows read without cvxpy's compilation (``AffineRows``), inside a solve (the
    pre-check's cached rows) and outside it: the same rows as cvxpy's compilation, and the same named
    multipliers as cvxpy's inversion for any z (the reference: ``_CvxpyRows``, cvxpy's own) — the
    simplex family's rows, written without cvxpy's Jacobian, included, in any unit s."""
    from ldpopt.problems.solvers import direct_qp as dq
    from ldpopt.problems.solvers.cvxpy_rows import AffineRows, compile_rows

    rng = np.random.default_rng(seed)
    A, b = rng.random((n_le + n_eq, D)), rng.random(n_le + n_eq)

    def rows(f, e):
        out = []
        if n_le:
            out.append(A[:n_le] @ f >= -b[:n_le] if flip else A[:n_le] @ f <= b[:n_le] + 1)
        if n_eq:
            out.append(A[n_le:] @ f == b[n_le:] * 0.5)
        if matrix:
            out.append(cp.reshape(f[:6], (2, 3), order="F") <= 0.9)
        return out

    family = {"simplex": [Simplex()], "split": [SumTo(0.8), NonNegative(name="nn")],
              "named": [Simplex(name="s")]}[simplex]
    pr = Problem(EST, lambda f, e: cp.sum_squares(f - e.f_tilde), [*family, rows], scale=scale)
    for cached in (False, True):
        with SolveContext.make(problem=pr if cached else None).active():  # a solve's cache, or none
            own = AffineRows.read(pr)
        ref = dq._CvxpyRows(pr, compile_rows(pr)[0])
        assert own is not None
        for a, r in ((own.A_E, ref.A_E), (own.A_I, ref.A_I)):
            assert a.shape == r.shape and np.allclose(a.toarray(), r.toarray(), rtol=1e-15, atol=0)
        assert np.allclose(own.b_E, ref.b_E, rtol=1e-15) and np.allclose(own.b_I, ref.b_I, rtol=1e-15)
        m_rows = own.A_E.shape[0] + own.A_I.shape[0]
        z, x = rng.standard_normal(m_rows), rng.random(D)
        f1, d1 = own.answer(x, z, np.zeros(m_rows), 0.37)
        f2, d2 = ref.answer(x, z, np.zeros(m_rows), 0.37)
        assert np.array_equal(f1, f2) and d1.keys() == d2.keys()
        for name in d1:
            assert np.shape(d1[name]) == np.shape(d2[name]) and np.allclose(d1[name], d2[name], rtol=1e-14, atol=0)


@settings(max_examples=examples(12), deadline=None)
@given(d=st.integers(5, 60), m=st.floats(1e-4, 0.5), w=st.floats(0.1, 10.0), shift=st.floats(-0.2, 0.2),
       subset=st.booleans(), seed=st.integers(0, 2**31))
def test_a_huber_loss_takes_the_direct_route_at_cvxpys_optimal_value(d, m, w, shift, subset, seed):
    """Σ w·huber_M(f − f̃ − shift), alone (its minimisers need not be unique: the objective's value is
    compared) with the simplex and maybe a subset total: the direct route's value equals cvxpy's own
    compilation solved by Clarabel at 1e-12, and ldpopt's check passes it."""
    est = oue_counts(d, 5_000, seed=seed % 1000)
    func = lambda f, e: w * cp.sum(cp.huber(f - e.f_tilde - shift, m))  # noqa: E731
    cons = [Simplex()] + ([SubsetSum(np.arange(0, d, 2), 0.5)] if subset else [])
    sol = Problem(est, func, cons).solve()
    assert sol.attempts[0]["solver"] == "PIQP-DIRECT"
    assert sol.checks.passed and sol.status in ("optimal", "optimal_unverified")
    x = cp.Variable(d)
    built = [c for con in cons for _, c in con.build(x, est)]
    ref = cp.Problem(cp.Minimize(func(x, est)), built)
    ref.solve(solver="CLARABEL", tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12)
    got = float(func(cp.Constant(sol.f), est).value)
    assert got == pytest.approx(ref.value, rel=1e-7, abs=1e-10)


@settings(max_examples=examples(10), deadline=None)
@given(d=st.integers(30, 400), seed=st.integers(0, 10_000), low=st.sampled_from([1e2, 1e4, 1e5]),
       term=st.sampled_from(["smoothness", "max"]), limited=st.booleans())
def test_a_unit_far_above_the_mean_frequency_is_the_mean_frequency_for_piqp(d, seed, low, term, limited):
    """Estimates with a tenth of the values far below 0 (σ ≫ 1/d, as the grammar's huge-negative
    data): PIQP's direct route solves in x = f·d, not f/σ, with or without a time limit; the point
    returned has an objective no worse than that of cvxpy + Clarabel at 1e-12 on the same objective
    with its constant dropped (so that its value is not 10⁵ times the gap's scale) and lies within
    1e-6 of it. Its status is `optimal`, or `user_limit` where PIQP stopped at its iteration limit
    and the chain after it did no better (rare: PIQP stopped so on two draws this test met, d = 171
    with estimates at −10⁵; one ended `optimal` on the chain, the other `user_limit` with the direct
    route's point, which passed ldpopt's check with a bound of 4e-9). 80 other draws with each term
    at d = 30–1,000 were all `optimal` in x = f·d; in x = f/σ, 12 of the 80 with the smoothness term
    ended `inaccurate`, and 74 of the 80 with the max short of `optimal`."""
    from problem_strategies import estimate

    from ldpopt import Estimate
    from ldpopt.problems.solvers.policy import direct_qp_scale

    rng = np.random.default_rng(seed)
    plain = estimate("plain", d, rng)
    ft = np.array(plain.f_tilde, dtype=float)
    ft[rng.permutation(d)[: max(1, d // 10)]] = -low
    eps = 1e-5
    est = Estimate.from_frequencies(ft, plain.n, eps, 0.5, 1.0 / (np.exp(eps) + 1.0), oracle="oue")
    extra = {"smoothness": lambda f: 0.01 * cp.sum_squares(f[1:] - f[:-1]), "max": lambda f: 0.1 * cp.max(f)}[term]
    pr = Problem(est, lambda f, e: cp.sum_squares(f - e.f_tilde) + extra(f), [Simplex()])
    assert pr.scale > 1.0 / d and direct_qp_scale(pr, "PIQP") == pytest.approx(1.0 / d)
    sol = pr.solve(**({"time_limit": 60.0} if limited else {}))
    assert sol.attempts[0]["solver"] == "PIQP-DIRECT" and sol.status in ("optimal", "user_limit"), sol.message
    assert sol.status == "user_limit" or (sol.solver == "PIQP-DIRECT" and len(sol.attempts) == 1)
    x = cp.Variable(d)
    referee = cp.Problem(cp.Minimize(cp.sum_squares(x) - 2 * ft @ x + extra(x)), [cp.sum(x) == 1, x >= 0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # 1e-12 is past Clarabel's reach at times: "optimal_inaccurate"
        referee.solve(solver="CLARABEL", tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12, max_iter=500)
    assert referee.status in ("optimal", "optimal_inaccurate")
    value = float(np.sum(sol.f * sol.f) - 2 * ft @ sol.f + extra(cp.Constant(sol.f)).value)
    assert value <= referee.value + 1e-10
    assert np.max(np.abs(sol.f - x.value)) <= 1e-6
