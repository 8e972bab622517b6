"""The interior-point route of smooth non-separable objectives (ldpopt.problems.solvers.ipm): against a tight
Clarabel referee with every linear constraint type (equalities, dense and sparse inequalities, active
Monotone rows, optimum values at 0), against a separable optimum from a 1-D dual bisection, status
``optimal`` from ldpopt's full check, the time limit, and the hand-over to the sequential-QP loop."""

from __future__ import annotations

import time
import warnings

import cvxpy as cp
import numpy as np
import pytest
import scipy.sparse as sp
from _count_estimates import oue_counts
from _referee import clarabel_referee
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import examples
from ldpopt.problems import Box, Fixed, Monotone, Problem, Simplex, SmoothObjective, SubsetSum
from ldpopt.problems.constraints.partition import PartitionTotals
from ldpopt.problems.objectives.smooth import smooth_terms
from ldpopt.problems.solvers.ipm import DENSE_ROW, SOLVER, compile_rows, solve_ipm
from ldpopt.problems.solvers.sqp import solve_sqp

D = 200
EST = oue_counts(D, 200_000, seed=7)
PRIOR = np.full(D, 1.0 / D)
HALF = np.arange(0, D, 2)  # 100 values: a dense row (> DENSE_ROW entries)
TOP = np.argsort(-EST.f_tilde, kind="stable")[:20]


def kl_smooth(f, e):
    return cp.sum_squares(f - e.f_tilde) + 1e-3 * cp.sum(cp.kl_div(f, PRIOR)) + cp.sum_squares(f[1:] - f[:-1])


def quartic_smooth(f, e):
    """No log term: the values with f̃ well below 0 have their optimum at 0 (f ≥ 0 active)."""
    return cp.sum_squares(f - e.f_tilde) + cp.sum(cp.power(f, 4)) + 0.1 * cp.sum_squares(f[1:] - f[:-1])


CONSTRAINTS = {
    "simplex": lambda: [Simplex()],
    "subset ==": lambda: [Simplex(), SubsetSum(HALF, 0.45)],
    "subset <=": lambda: [Simplex(), SubsetSum(HALF, 0.3, sense="<=")],
    "subset >=": lambda: [Simplex(), SubsetSum(HALF, 0.7, sense=">=")],
    "box": lambda: [Simplex(), Box(upper=np.full(D, 0.008))],
    "monotone chain": lambda: [Simplex(), Monotone(order=np.arange(30))],
    "ranking pairs": lambda: [Simplex(), Monotone(pairs=np.column_stack([TOP[1:], TOP[:-1]]))],
    "partition": lambda: [Simplex(), PartitionTotals({"a": np.arange(50), "b": np.arange(50, 120)},
                                                     {"a": 0.2, "b": 0.35})],
    "fixed": lambda: [Simplex(), Fixed([3, 9], [0.02, 0.001])],
}


def _referee(func, cons):
    return clarabel_referee(func, EST, cons)


@pytest.mark.parametrize("cname", list(CONSTRAINTS))
@pytest.mark.parametrize("func", [kl_smooth, quartic_smooth], ids=["kl_smooth", "quartic_smooth"])
def test_interior_point_against_clarabel_with_each_constraint_type(func, cname):
    pr = Problem(EST, func, CONSTRAINTS[cname]())
    sol = pr.solve(progress=False)
    assert sol.solver == SOLVER and sol.status == "optimal"
    assert sol.checks.certified and not {"stationarity", "gap"} & set(sol.checks.not_run)
    assert set(sol.duals) == set(pr.constraint_names)
    ref = _referee(func, CONSTRAINTS[cname]())
    assert np.max(np.abs(sol.f - ref)) < 1e-7
    # never worse than the referee's point on the true J (to rounding)
    assert pr.objective.value(sol.f, EST) <= pr.objective.value(np.maximum(ref, 1e-300), EST) + 1e-12
    if func is quartic_smooth:  # values at 0: the nonnegativity rows are active
        assert np.sum(ref < 1e-9) >= 10 and np.max(sol.f[ref < 1e-9]) < 1e-8


def test_constraints_exercise_dense_and_active_rows():
    """The cases above reach both sides of the Newton system: dense rows (kept out of M) and active
    Monotone rows (values pooled at the optimum)."""
    pr = Problem(EST, kl_smooth, CONSTRAINTS["subset <="]())
    (A_E, _, A_I, _, *_), why = compile_rows(pr)
    assert why == "" and np.sum(np.diff(A_I.indptr) > DENSE_ROW) == 1 and A_E.shape[0] == 1
    f = Problem(EST, kl_smooth, CONSTRAINTS["monotone chain"]()).solve(progress=False).f
    assert np.sum(np.abs(np.diff(f[:30])) < 1e-12) >= 3  # ties: active rows


def _bisection(ft, dh, lo_log=-745.0):
    """Minimiser of Σ h_v(f_v) over the simplex from h_v' (increasing): f_v(t) = root of h_v'(f) = −t,
    0 when h_v'(0) + t ≥ 0, by 200 bisections in log f; t by 200 bisections for Σ f = 1."""
    def f_of(t):
        lo, hi = np.full(ft.size, lo_log), np.zeros(ft.size)
        for _ in range(200):
            mid = 0.5 * (lo + hi)
            pos = dh(np.exp(mid)) + t > 0
            hi, lo = np.where(pos, mid, hi), np.where(pos, lo, mid)
        return np.where(dh(0.0 * ft) + t >= 0, 0.0, np.exp(0.5 * (lo + hi)))

    tlo, thi = -10.0, 10.0
    for _ in range(200):
        t = 0.5 * (tlo + thi)
        tlo, thi = (t, thi) if f_of(t).sum() > 1.0 else (tlo, t)
    return f_of(0.5 * (tlo + thi))


@pytest.mark.parametrize("kind", ["quartic", "kl"])
def test_separable_declared_objective_against_dual_bisection(kind):
    """J = Σ (f − f̃)² + f⁴ (values at 0) or Σ (f − f̃)² + λ f log(f d) with λ = 1e-4 (values down to
    ~e^-60/d, far below any iterate: the multipliers' re-estimate carries them), declared with
    derivatives, so the route is the interior-point method; the exact optimum from the dual bisection."""
    ft = EST.f_tilde
    lam = 1e-4
    if kind == "quartic":
        h = (lambda f: np.sum((f - ft) ** 2 + f**4), lambda f: 2 * (f - ft) + 4 * f**3, lambda f: 2 + 12 * f**2)
        lower = None
    else:
        h = (lambda f: np.sum((f - ft) ** 2 + lam * f * np.log(f * D)), lambda f: 2 * (f - ft) + lam * (np.log(f * D) + 1),
             lambda f: 2 + lam / f)
        lower = 0.0
    obj = SmoothObjective(lambda f, e: float(h[0](f)), lambda f, e: h[1](f), lambda f, e: sp.diags(h[2](f)),
                          name=kind, lower=lower)
    sol = Problem(EST, obj).solve(progress=False)
    ref = _bisection(ft, h[1])
    assert sol.solver == SOLVER and sol.status == "optimal" and sol.checks.certified
    assert np.max(np.abs(sol.f - ref)) < 1e-9
    if kind == "quartic":
        assert np.sum(ref == 0) >= 10
    else:
        assert np.min(ref) < 1e-25 / D  # the regime where the sequential-QP loop needed ~10 QPs


def test_time_limit_stops_after_one_iteration_with_a_checked_point():
    pr = Problem(EST, kl_smooth, CONSTRAINTS["subset <="]())
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sol = pr.solve(time_limit=1e-3, progress=False)
    assert time.perf_counter() - t0 < 5.0
    assert sol.status == "time_limit" and sol.solver == SOLVER and sol.iterations == 1
    assert sol.checks is not None and np.all(np.isfinite(sol.f)) and "time limit" in sol.message


def test_a_constraint_that_is_not_linear_hands_over_to_the_qp_loop():
    """A second-order-cone constraint: the method declines (says why) and records no attempt; asked by
    name, the sequential-QP loop over the cone chain takes the problem, and by default the cvxpy chain
    does (its Clarabel takes the cone natively: ``policy.uses_sqp``)."""
    cons = [Simplex(), lambda f, e: [cp.norm(f[:10], 2) <= 0.01]]
    pr = Problem(EST, kl_smooth, cons)
    got, why = solve_ipm(pr, smooth_terms(pr.objective, EST), lambda ch: False)
    assert got is None and "not linear" in why
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        named = pr.solve(solver="SQP", progress=False)
        sol = pr.solve(progress=False)
    assert named.solver.startswith("SQP(") and not any(a.get("solver") == SOLVER for a in named.attempts)
    assert sol.solver == "CLARABEL" and not any(str(a.get("solver")).startswith(("SQP", SOLVER)) for a in sol.attempts)
    assert np.max(np.abs(sol.f - named.f)) < 1e-5 and np.all(np.isfinite(sol.f))


def test_the_qp_loop_alone_agrees_with_the_interior_point_route():
    pr = Problem(EST, kl_smooth, CONSTRAINTS["monotone chain"]())
    a = pr.solve(progress=False)
    b = solve_sqp(pr)
    assert a.solver == SOLVER and b.solver.startswith("SQP(") and a.status == b.status == "optimal"
    assert np.max(np.abs(a.f - b.f)) < 1e-8


def test_an_infeasible_user_constraint_stalls_and_is_decided_before_the_solve():
    """A user constraint no point of the simplex meets: the method, run on it directly, stops on its
    stall rule, well before its iteration limit; ``solve()`` never gets there — the user's affine row
    is in the exact pre-check, which names it."""
    pr = Problem(EST, kl_smooth, [Simplex(), lambda f, e: [f[0] + f[1] >= 1.5]])
    got, _ = solve_ipm(pr, smooth_terms(pr.objective, EST), lambda ch: False)
    assert got.status == "user_limit" and "stalled" in got.message and got.iterations < 40
    assert not got.checks.passed
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sol = pr.solve(progress=False)
    assert sol.status == "infeasible" and not sol.success
    assert [a["solver"] for a in sol.attempts] == ["LDPOPT-FEASIBILITY"] and "user[0]" in sol.infeasibility.names


def test_reduced_matrix_assembly_against_its_definition():
    """The reduced matrix written into its fixed pattern equals ∇²φ + A_Sᵀ diag(D) A_S + reg·I formed
    by scipy (its definition), its factor solves M u = r to rounding, and a Hessian with another
    pattern is laid out again (rows of 1–5 entries, a symmetric H with off-diagonal couplings)."""
    from ldpopt.problems.solvers.ipm import _Reduced

    rng = np.random.default_rng(5)
    n, rows = 300, []
    for k in range(400):
        cols = rng.choice(n, size=1 + k % 5, replace=False)
        rows.append((np.full(cols.size, k), cols, rng.uniform(-2.0, 2.0, cols.size)))
    r, c, v = (np.concatenate(t) for t in zip(*rows))
    A_S = sp.csr_array((v, (r, c)), shape=(400, n))
    red = _Reduced(A_S)
    for density in (0.01, 0.03):  # two Hessian patterns, one _Reduced
        B = sp.random(n, n, density=density, random_state=np.random.RandomState(int(density * 100)))
        H = sp.csr_array(B @ B.T + sp.eye(n))
        H.sum_duplicates()
        D, reg = rng.uniform(1e-3, 1e3, 400), 1e-9
        M = (H + A_S.T @ sp.diags(D) @ A_S + reg * sp.eye(n)).toarray()
        red.factor(H, D, reg)
        b = rng.standard_normal(n)
        assert np.allclose(red.matvec(b), M @ b, rtol=1e-13, atol=1e-10)
        assert np.max(np.abs(M @ red.solve(b) - b)) < 1e-8 * np.max(np.abs(M)) * np.max(np.abs(red.solve(b)))
        assert np.allclose(red.solve(np.column_stack([b, 2 * b])), np.linalg.solve(M, np.column_stack([b, 2 * b])))


def test_smoothness_penalty_at_larger_d_certified_by_the_interior_point_alone():
    """CLS + Σ (f_{v+1} − f_v)² on the simplex at d = 30,000, on a Zipf(1.5) histogram of 300,000 users
    through OUE at ε = 1 (seed 2): the case where the interior point stalled after 16 iterations
    (multipliers started off the central path; then sequential QP answered) certifies by itself within
    25 iterations, and agrees with the tight Clarabel referee as closely as that referee is accurate
    (f unscaled, values ~1/d: ~1e-7), never worse on J."""
    from ldpopt.oracles.unary import OUE

    d, n = 30_000, 300_000
    p = np.arange(1, d + 1, dtype=float) ** -1.5
    counts = np.random.default_rng(20240601).multinomial(n, p / p.sum())
    oracle = OUE(1.0, d)
    est = oracle.estimate(oracle.sample_counts(counts, np.random.default_rng(2)), n)

    def smooth(f, e):
        return cp.sum_squares(f - e.f_tilde) + cp.sum_squares(f[1:] - f[:-1])

    pr = Problem(est, smooth, [Simplex()])
    sol, _ = solve_ipm(pr, smooth_terms(pr.objective, est), lambda ch: False)
    assert sol.status == "optimal" and sol.checks.certified and sol.iterations <= 25
    ref = clarabel_referee(smooth, est, [Simplex()])
    assert np.max(np.abs(sol.f - ref)) < 2e-7

    def J(f):
        return float(np.sum((f - est.f_tilde) ** 2) + np.sum(np.diff(f) ** 2))

    assert J(sol.f) <= J(np.maximum(ref, 0.0)) + 1e-13


@settings(max_examples=examples(30), deadline=None)
@given(seed=st.integers(0, 2**31 - 1), kind=st.sampled_from(["kl", "smooth", "smooth-kl", "lowrank", "huber", "mixed"]),
       w=st.floats(1e-4, 10.0))
def test_fixed_pattern_hessian_is_hessian_parts(seed, kind, w):
    """The interior point's fixed-pattern S(f) (``_DiagPlusConst``) has exactly the entries of the
    recognised form's ``hessian_parts`` (the reference, rebuilt by scipy at each f) at random points,
    times any factor, for drawn smooth callables: per-value terms, sparse and low-rank quadratic forms."""
    from ldpopt.problems.solvers.ipm import _DiagPlusConst

    rng = np.random.default_rng(seed)
    d = int(rng.integers(4, 50))
    est = oue_counts(d, 20_000, seed=seed % 997)
    prior, U = np.full(d, 1.0 / d), rng.standard_normal((d, 2))
    exprs = {"kl": lambda f, e: cp.sum_squares(f - e.f_tilde) + w * cp.sum(cp.kl_div(f, prior)) + 0 * cp.sum(U.T @ f),
             "smooth": lambda f, e: cp.sum_squares(f - e.f_tilde) + w * cp.sum_squares(cp.diff(f)),
             "smooth-kl": lambda f, e: (cp.sum_squares(f - e.f_tilde) + w * cp.sum_squares(cp.diff(f))
                                        + 1e-3 * cp.sum(cp.kl_div(f, prior))),
             "lowrank": lambda f, e: (cp.sum_squares(f - e.f_tilde) + 1e-3 * cp.sum(cp.kl_div(f, prior))
                                      + w * cp.sum_squares(U.T @ (f - prior))),
             "huber": lambda f, e: cp.sum(cp.huber(f - e.f_tilde, w / d)) + cp.sum_squares(cp.diff(f)),
             "mixed": lambda f, e: (cp.sum_squares(f - e.f_tilde) + w * cp.sum_squares(cp.diff(f))
                                    + cp.sum_squares(U.T @ f) + 1e-3 * cp.sum(cp.kl_div(f, prior)))}
    pr = Problem(est, exprs[kind], [Simplex()])
    terms = smooth_terms(pr.objective, est)
    if terms is None or not hasattr(terms, "hessian_parts"):
        return  # recognised as separable and strictly convex here: the structured route, no interior point
    f0 = rng.dirichlet(np.ones(d))
    fast = _DiagPlusConst.make(terms, f0, terms.hessian_parts(f0)[0])
    if type(terms.obj).__name__ == "SmoothUserObjective":
        assert fast is not None
    if fast is None:
        return
    for _ in range(3):
        f, factor = rng.dirichlet(np.ones(d)) * rng.uniform(0.5, 2.0), rng.uniform(0.1, 10.0)
        got, ref = fast(f, factor), sp.csr_array(terms.hessian_parts(f)[0]) * factor
        assert got.shape == ref.shape and (got != ref).nnz == 0
        assert np.array_equal(got.toarray(), ref.toarray())


def _checked(sol) -> list:
    return [r for r in sol.attempts if r.get("status") == "checked"]


@pytest.mark.parametrize("cname", ["simplex", "subset ==", "box", "fixed"])
def test_the_check_waits_for_an_iterate_that_stops_moving(cname):
    """Before the first passing check, an iterate still moving (more than CHECK_MOVE/d) is checked
    only at the third gated iterate: the point returned is the last iterate, checked, and no check
    before the last is wasted on a point still moving (three checks a solve before, at most two now)."""
    sol = Problem(EST, kl_smooth, CONSTRAINTS[cname]()).solve(progress=False)
    assert sol.solver == SOLVER and sol.status == "optimal" and sol.checks.certified
    checked = _checked(sol)
    assert checked and checked[-1]["iteration"] == sol.iterations == sol.attempts[-1]["iteration"]
    assert len(checked) <= 2
    ref = _referee(kl_smooth, CONSTRAINTS[cname]())
    assert np.max(np.abs(sol.f - ref)) < 1e-6


def test_an_iterate_that_no_longer_moves_is_checked_whatever_mu(monkeypatch):
    """μ held above the gate (the centring floor raised to 1e-8·μ₀, so μ ≤ 1e-10·μ₀ is never met):
    once a step moves nothing the point is checked and, certified, returned — before the stall rule,
    which alone ended such a run before."""
    from ldpopt.problems.solvers import ipm

    monkeypatch.setattr(ipm, "MU_FLOOR", 1e-8)
    sol = Problem(EST, kl_smooth, CONSTRAINTS["subset <="]()).solve(progress=False)
    checked = _checked(sol)
    assert sol.solver == SOLVER and checked, sol.message
    assert checked[0]["mu"] > 1e-10 * sol.attempts[0]["mu"]  # checked above the μ gate
    assert sol.iterations < ipm.STALL


def test_a_point_already_there_is_not_checked_before_mu_reaches_the_gate():
    """A grammar family (KL to the prior with a user's subset total, d = 100) whose f stops moving at
    the second iteration while μ falls ~100× an iteration: f not moving is not "stuck" there
    (STUCK_FALL), so ldpopt's check runs only at iterates past the μ gate — it ran at the third
    iteration, μ = 3e-2·μ₀, and failed, before — and the answer is certified as before."""
    import warnings

    from problem_strategies import draw_family

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sol = draw_family(1032, 100).ldpopt_problem().solve(progress=False)
    assert sol.solver == SOLVER and sol.status == "optimal", sol.message
    checked = _checked(sol)
    mu0 = sol.attempts[0]["mu"]
    assert checked and all(r["mu"] <= 1e-10 * mu0 for r in checked), [(r["iteration"], r["mu"] / mu0) for r in checked]
    assert len(checked) == 1


# ---- the active-set step at the end of the central path (ipm._polish)

def _random_qp(seed: int, low_rank: bool):
    """A random strictly convex QP in the IPM's own terms: φ(x) = ½xᵀSx + ½‖Lx‖² + cᵀx (S sparse
    positive definite, L two dense rows or none), A_E x = b_E (the total and a sparse row), A_I x ≤ b_I
    (x ≥ 0, x ≤ u on a third of the values, three sparse rows); its optimum (x*, z*) by cvxpy +
    Clarabel at 1e-12, the inequality rows' multipliers from cvxpy's duals."""
    rng = np.random.default_rng(seed)
    n = 60
    B = sp.random(n, n, density=0.05, random_state=np.random.RandomState(seed))
    S = sp.csr_array(B @ B.T + sp.diags(rng.uniform(0.1, 2.0, n)))
    S.sum_duplicates()
    L = rng.standard_normal((2, n)) if low_rank else None
    c = rng.standard_normal(n) * 2.0
    cap = rng.choice(n, n // 3, replace=False)
    A_E = sp.csr_array(np.vstack([np.ones(n), np.where(rng.random(n) < 0.2, rng.uniform(0.5, 1.5, n), 0.0)]))
    x_in = rng.dirichlet(np.ones(n))  # a point inside every row below
    b_E = A_E @ x_in
    G = sp.random(3, n, density=0.3, random_state=np.random.RandomState(seed + 1)).toarray()
    A_I = sp.csr_array(np.vstack([-np.eye(n), np.eye(n)[cap], G]))
    b_I = np.concatenate([np.zeros(n), x_in[cap] * rng.uniform(1.0, 1.3, cap.size), G @ x_in + rng.uniform(0.0, 0.05, 3)])
    x = cp.Variable(n)
    obj = 0.5 * cp.quad_form(x, cp.psd_wrap(S.toarray())) + c @ x + (0.5 * cp.sum_squares(L @ x) if low_rank else 0)
    cons = [A_E @ x == b_E, A_I @ x <= b_I]
    cp.Problem(cp.Minimize(obj), cons).solve(solver="CLARABEL", tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12)
    return S, L, c, A_E, b_E, A_I, b_I, np.asarray(x.value), np.asarray(cons[1].dual_value)


def _polished(qp, s, z, x0, rounds: int | None = None):
    from ldpopt.problems.solvers.ipm import POLISH_ROUNDS, _polish

    S, L, c, A_E, b_E, A_I, b_I, _, _ = qp
    return _polish(x0, s, z, lambda x: S, L, lambda x: None,
                   lambda x: S @ x + c + (L.T @ (L @ x) if L is not None else 0.0), A_E, b_E, A_I, b_I, True,
                   POLISH_ROUNDS if rounds is None else rounds)


def _kkt_residuals(qp, got):
    """(stationarity, most negative multiplier, worst violation, largest z·slack) of (x, y, z)."""
    S, L, c, A_E, b_E, A_I, b_I, _, _ = qp
    x, y, z, _ = got
    g = S @ x + c + (L.T @ (L @ x) if L is not None else 0.0)
    slack = b_I - A_I @ x
    return (float(np.max(np.abs(g + A_E.T @ y + A_I.T @ z))), float(np.min(z)),
            max(float(np.max(np.abs(A_E @ x - b_E))), float(np.max(-slack))), float(np.max(z * np.maximum(slack, 0))))


@pytest.mark.parametrize("low_rank", [False, True], ids=["sparse", "low-rank"])
@pytest.mark.parametrize("seed", range(6))
def test_the_active_set_step_reaches_the_optimum_of_random_qps(seed, low_rank):
    """From a point 1e-8 off the optimum, with slacks and multipliers as an interior point leaves them
    near the end of its path (each ~1e-10 above the optimum's), the step returns the optimum of
    cvxpy + Clarabel at 1e-12 and multipliers meeting the KKT conditions to rounding. With the guess
    wrong on two rows (an active bound marked inactive, an inactive row marked active: far worse than
    the near-ties an interior point leaves at its floor), the corrections of the set give the
    optimum or nothing within POLISH_ROUNDS, never another point, and the optimum given rounds
    enough (these QPs have 55–58 of their 60 values on a bound; 3–25 rounds, measured)."""
    from ldpopt.problems.solvers.ipm import POLISH_ROUNDS

    qp = _random_qp(seed, low_rank)
    A_I, b_I, x_star, z_star = qp[5], qp[6], qp[7], qp[8]
    rng = np.random.default_rng(100 + seed)
    x0 = x_star + 1e-8 * rng.standard_normal(x_star.size)
    s = np.maximum(b_I - A_I @ x_star, 0.0) + 1e-10
    z = np.maximum(z_star, 0.0) + 1e-10
    active = np.flatnonzero(z > s)
    assert active.size >= 5  # bounds at the optimum: the step has a set to find
    wrong_s, wrong_z = s.copy(), z.copy()
    a, b = active[0], np.flatnonzero(z <= s)[0]
    wrong_s[a], wrong_z[a], wrong_s[b], wrong_z[b] = z[a], s[a], z[b], s[b]  # each row's guess swapped
    for guess, rounds in (((s, z), POLISH_ROUNDS), ((wrong_s, wrong_z), POLISH_ROUNDS), ((wrong_s, wrong_z), 40)):
        got = _polished(qp, *guess, x0, rounds)
        if got is None:
            assert guess[0] is wrong_s and rounds == POLISH_ROUNDS
            continue
        stat, zmin, viol, comp = _kkt_residuals(qp, got)
        assert np.max(np.abs(got[0] - x_star)) < 1e-8
        assert stat < 1e-10 and zmin >= 0.0 and viol < 1e-12 and comp < 1e-12


def test_the_active_set_step_with_dependent_rows_and_off_the_domain():
    """G not of full row rank (an active row written twice): the regularised solve still returns the
    optimum, the multiplier shared between the copies. A gradient not finite at the step's point (a
    log's edge): no point (None), nothing for the check to certify."""
    from ldpopt.problems.solvers.ipm import _polish

    qp = list(_random_qp(3, False))
    S, L, c, A_E, b_E, A_I, b_I, x_star, z_star = qp
    s = np.maximum(b_I - A_I @ x_star, 0.0) + 1e-10
    z = np.maximum(z_star, 0.0) + 1e-10
    general = [k for k in np.flatnonzero(z > s) if np.diff(A_I.indptr)[k] > 1]
    k = general[0] if general else int(np.flatnonzero(z > s)[0])
    A2 = sp.csr_array(sp.vstack([A_I, A_I[[k]]]))
    qp2 = (S, L, c, A_E, b_E, A2, np.append(b_I, b_I[k]), x_star, np.append(z_star, 0.0))
    got = _polished(qp2, np.append(s, s[k]), np.append(z, z[k]), x_star)
    assert got is not None and np.max(np.abs(got[0] - x_star)) < 1e-8
    stat, zmin, viol, _ = _kkt_residuals(qp2, got)
    assert stat < 1e-9 and zmin >= 0.0 and viol < 1e-12
    off = _polish(x_star, s, z, lambda x: S, None, lambda x: None, lambda x: np.full(x.size, np.inf),
                  A_E, b_E, A_I, b_I, True)
    assert off is None


def _active_set_records(sol):
    return [r for r in sol.attempts if r.get("solver") == SOLVER and r.get("step") == "active set"]


@pytest.mark.parametrize("cname", [c for c in CONSTRAINTS if c != "simplex"])
def test_a_floor_reached_early_is_ended_by_the_active_set_step(monkeypatch, cname):
    """The centring floor raised to 3e-6·μ₀: the central point there misses the gap (each run, without
    the step, went on to sequential QP through Clarabel). The active-set step from it, Newton on the
    quartic objective, is certified and returned by the interior point itself, within 1e-9 of the
    referee — with every constraint type, values at 0 and pooled Monotone rows (G of deficient
    rank) among them."""
    from ldpopt.problems.solvers import ipm

    monkeypatch.setattr(ipm, "MU_FLOOR", 3e-6)
    sol = Problem(EST, quartic_smooth, CONSTRAINTS[cname]()).solve(progress=False)
    assert sol.solver == SOLVER and sol.status == "optimal" and sol.checks.certified, sol.message
    steps = _active_set_records(sol)
    assert len(steps) == 1 and "(passed)" in steps[0]["checks"] and "active set" in sol.message
    assert np.max(np.abs(sol.f - _referee(quartic_smooth, CONSTRAINTS[cname]()))) < 1e-9


def test_at_the_floor_without_a_step_the_loop_stops_at_once(monkeypatch):
    """The same raised floor with the active-set step giving nothing: the interior point stops after
    FLOOR_ITERATIONS iterations at the floor (its iterate no longer moves), at its first failed check, not after the stall rule's
    30 iterations, and sequential QP answers."""
    from ldpopt.problems.solvers import ipm

    monkeypatch.setattr(ipm, "MU_FLOOR", 3e-6)
    monkeypatch.setattr(ipm, "_polish", lambda *a, **k: None)
    pr = Problem(EST, quartic_smooth, CONSTRAINTS["subset =="]())
    got, _ = solve_ipm(pr, smooth_terms(pr.objective, EST), lambda ch: False)
    assert got.status == "user_limit" and "mu at its floor" in got.message, got.message
    assert got.iterations < ipm.STALL
    sol = pr.solve(progress=False)
    assert sol.solver.startswith("SQP(") and sol.status == "optimal"


def test_the_floor_at_d_100000_is_left_by_the_active_set_step():
    """A grammar family at d = 10⁵ (CLS, a subset total over 18,585 values, an ∞-norm ball of radius
    0.01 around a point of the simplex: 3·10⁵ inequality rows): the interior point reached its floor
    at iteration 17 with the gap at 1.8e-6, checked it 30 times and handed over to sequential QP
    through Clarabel (6.9 s in all, plain cvxpy + PIQP 1.8 s). The active-set step at the first
    failed check there is certified; the point is within 1e-7 of plain cvxpy + PIQP's at 1e-10."""
    import warnings

    from problem_strategies import draw_family

    fam = draw_family(6016, 100_000)
    assert "norm(f - f0, 'inf') <= 0.01" in fam.text  # the family this test is about
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sol = fam.ldpopt_problem().solve(progress=False)
        prob, f, _ = fam.cvxpy_problem()
        prob.solve(solver="PIQP", eps_abs=1e-10, eps_rel=1e-10)
    assert sol.solver == SOLVER and sol.status == "optimal", sol.message
    assert len(_active_set_records(sol)) == 1 and sol.iterations < 25
    assert np.max(np.abs(sol.f - f.value)) < 1e-7


def test_the_active_set_step_on_grammar_families_meets_the_referee(monkeypatch):
    """Families drawn from cvxpy's grammar (``problem_strategies.draw_family``, seeds 20000–20399 at
    d = 60) that the Newton route takes, the first 25, with the floor raised to 3e-6·μ₀ so the step
    runs where it may: every ``optimal`` answer — the step's or not — lies within its own certified
    distance bound (1e-7 where none is given) of cvxpy + Clarabel at 1e-12, plus the referee's 1e-8;
    and the step certified some of them (7 of 25, measured)."""
    import warnings

    from problem_strategies import draw_family

    from ldpopt.problems.solvers import ipm
    from ldpopt.problems.solvers.policy import uses_sqp

    monkeypatch.setattr(ipm, "MU_FLOOR", 3e-6)
    stepped, seen = 0, 0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for seed in range(20000, 20400):
            fam = draw_family(seed, 60)
            if not uses_sqp(fam.ldpopt_problem()):
                continue
            seen += 1
            sol = fam.ldpopt_problem().solve(progress=False)
            prob, f, _ = fam.cvxpy_problem()
            prob.solve(solver="CLARABEL", tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12)
            if sol.status == "optimal":
                bound = sol.checks.error_bound if sol.checks.error_bound is not None else 1e-7
                assert np.max(np.abs(sol.f - f.value)) <= bound + 1e-8, (seed, fam.text)
            stepped += bool(_active_set_records(sol)) and sol.status == "optimal"
            if seen == 25:
                break
    assert seen == 25 and stepped >= 3
