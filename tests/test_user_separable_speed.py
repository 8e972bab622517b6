"""The structured route's per-value Newton for user separable objectives: a warm start (the previous
root) and the rounding-level stop give the same roots as a cold start and as an independent
bisection; the dense small systems run on one BLAS thread and the setting is restored."""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest
from _kl_reference import _inner, cls_kl_simplex

import ldpopt
from ldpopt import _blas
from ldpopt.problems import Problem, SeparableObjective, Simplex

W = 1e-3


def _estimate(d, seed=1):
    counts = np.random.default_rng(seed).multinomial(50 * d, np.arange(1, d + 1) ** -1.2 / np.sum(np.arange(1, d + 1) ** -1.2))
    oracle = ldpopt.oracles.get("oue", 1.0, d)
    return oracle.estimate(oracle.sample_counts(counts, np.random.default_rng(seed)), int(counts.sum()))


def _declared(d):
    p = 1.0 / d
    return SeparableObjective(lambda f, e: (f - e.f_tilde) ** 2 + W * (f * np.log(f / p) - f + p),
                              lambda f, e: 2.0 * (f - e.f_tilde) + W * np.log(f / p),
                              lambda f, e: 2.0 + W / f, name="cls+kl")


@pytest.mark.parametrize("form", ["declared", "recognised"])
def test_warm_and_cold_roots_agree_with_bisection(form):
    d = 400
    est = _estimate(d)
    if form == "declared":
        sep = _declared(d).per_value(est)
    else:
        prior = np.full(d, 1.0 / d)
        pr = Problem(est, lambda f, e: cp.sum_squares(f - e.f_tilde) + W * cp.sum(cp.kl_div(f, prior)), [Simplex()])
        sep = pr.objective.per_value(est)
    l, u = np.zeros(d), np.ones(d)
    t1, t2 = np.full(d, 0.01), np.full(d, 0.0100001)
    sep.argmin(t1, l, u)                       # leaves its root behind: the next call starts there
    warm = sep.argmin(t2, l, u)
    cold = (_declared(d).per_value(est) if form == "declared" else sep.restrict(np.arange(d))).argmin(t2, l, u)
    # root of 2(f − f̃) + W log(f/p) + t = 0: 2f + W log f = 2f̃ − t + W log p (bisection in log f)
    ref = _inner(2.0 * est.f_tilde - t2 + W * np.log(1.0 / d), W)
    # h' + t is known to its rounding, 64 ulps of the terms it is summed from; the root to that over h''
    terms = np.abs(t2) + 2.0 * np.abs(ref - est.f_tilde) + W * np.abs(np.log(ref * d))
    tol = 64 * np.finfo(float).eps * terms / (2.0 + W / ref) + 4 * np.finfo(float).eps * ref
    assert np.all(np.abs(warm - ref) <= tol)
    assert np.all(np.abs(cold - ref) <= tol)


def test_cls_kl_past_the_screening_size_matches_the_reference():
    """d = 25,000 (≥ the screening threshold): h'(0) = −∞ everywhere, screening is skipped, and the
    answer is the exact reference's, certified."""
    d = 25_000
    est = _estimate(d, seed=2)
    prior = np.full(d, 1.0 / d)
    sol = Problem(est, lambda f, e: cp.sum_squares(f - e.f_tilde) + W * cp.sum(cp.kl_div(f, prior)),
                  [Simplex()]).solve(progress=False)
    assert sol.solver == "LDPOPT-STRUCTURED" and sol.status == "optimal"
    ref = cls_kl_simplex(est.f_tilde, prior, W)
    assert np.max(np.abs(sol.f - ref)) <= max(sol.checks.error_bound, 1e-14) + 1e-15


def _blas_counts() -> list:
    """The BLAS libraries' thread counts, as threadpoolctl reads them (the test skipped without it)."""
    threadpoolctl = pytest.importorskip("threadpoolctl")
    return [i["num_threads"] for i in threadpoolctl.threadpool_info() if i["user_api"] == "blas"]


def test_one_thread_limits_blas_and_restores():
    before = _blas_counts()
    if not before:
        pytest.skip("no BLAS library found by threadpoolctl")
    with _blas.one_thread(100):
        inside = _blas_counts()
    assert inside == [1] * len(before) and _blas_counts() == before
    with _blas.one_thread(_blas.SMALL + 1):     # large systems keep the library's threading
        big = _blas_counts()
    assert big == before
    with _blas.one_thread():                    # no size: ldpopt's own work, one thread at any size
        own = _blas_counts()
    assert own == [1] * len(before)


def test_a_large_dense_system_takes_the_libraries_threads_inside_a_one_thread_block():
    """Inside ldpopt's one-thread block a dense system past SMALL rows runs with the libraries' own
    thread counts, the limit back when it ends, nested or overlapping with another thread's block."""
    import threading

    before = _blas_counts()
    if not before:
        pytest.skip("no BLAS library found by threadpoolctl")
    one = [1] * len(before)
    with _blas.one_thread():
        assert _blas_counts() == one
        with _blas.one_thread(_blas.SMALL + 1):
            assert _blas_counts() == before
            with _blas.one_thread(10):             # a small system inside the large one: still lifted
                assert _blas_counts() == before
        assert _blas_counts() == one
    assert _blas_counts() == before
    # A holds one thread; B's large system lifts it while it runs; A leaves first: B's block ends
    # with the libraries' counts, not A's 1
    a_in, b_in, a_out = (threading.Event() for _ in range(3))
    seen: dict = {}

    def a():
        with _blas.one_thread():
            a_in.set()
            b_in.wait(10)
            seen["a while b lifts"] = _blas_counts()
        a_out.set()

    def b():
        a_in.wait(10)
        with _blas.one_thread(_blas.SMALL + 1):
            b_in.set()
            a_out.wait(10)
            seen["b after a left"] = _blas_counts()

    ta, tb = threading.Thread(target=a), threading.Thread(target=b)
    ta.start()
    tb.start()
    ta.join(10)
    tb.join(10)
    assert seen == {"a while b lifts": before, "b after a left": before}
    assert _blas_counts() == before


def test_one_thread_blocks_overlapping_in_two_threads_restore_the_libraries_once():
    """Thread A enters, thread B enters, A leaves (B still inside: one thread), B leaves: the
    libraries' own counts come back. A limit per block would leave the process at one thread (B
    read A's 1 as the count to restore)."""
    import threading

    before = _blas_counts()
    if not before:
        pytest.skip("no BLAS library found by threadpoolctl")
    a_in, b_in, a_out, b_may_leave = (threading.Event() for _ in range(4))
    seen: dict = {}

    def a():
        with _blas.one_thread(10):
            a_in.set()
            b_in.wait(10)
        a_out.set()

    def b():
        a_in.wait(10)
        with _blas.one_thread(10):
            b_in.set()
            a_out.wait(10)
            seen["b after a left"] = _blas_counts()
            b_may_leave.wait(10)

    ta, tb = threading.Thread(target=a), threading.Thread(target=b)
    ta.start()
    tb.start()
    ta.join(10)
    b_may_leave.set()
    tb.join(10)
    assert seen["b after a left"] == [1] * len(before)
    assert _blas_counts() == before
    with _blas.one_thread(10), _blas.one_thread(10):  # nested in one thread
        assert _blas_counts() == [1] * len(before)
    assert _blas_counts() == before


def test_construction_and_solve_run_on_one_blas_thread_at_every_d(monkeypatch):
    """Problem(...) and Problem.solve run with one BLAS thread at any d (read inside the user's
    callable, which recognition calls during construction, and inside the solve, where the exact
    pre-check starts), and leave the libraries' counts as they were. Past SMALL too: one threaded dot
    product of two 10⁵-vectors leaves OpenBLAS's threads spinning for ~0.1 s of CPU."""
    import cvxpy as cp

    from ldpopt.problems import Problem, Simplex
    from ldpopt.problems.solvers import routes

    before = _blas_counts()
    if not before or max(before) == 1:
        pytest.skip("no multi-threaded BLAS library to limit here")
    seen: list = []
    built: list = []
    pre = routes.pre_checked

    def watched(problem, ctx):
        seen.append(_blas_counts())
        return pre(problem, ctx)

    def objective(f, e):
        built.append(_blas_counts())
        return cp.sum_squares(f - e.f_tilde) + cp.norm1(f - 1.0 / e.d)

    monkeypatch.setattr(routes, "pre_checked", watched)
    for d in (40, _blas.SMALL + 1):
        p = Problem(_estimate(d, seed=3), objective, [Simplex()])
        assert _blas_counts() == before
        p.solve(progress=False)
        assert _blas_counts() == before
    one = [1] * len(before)
    assert seen == [one, one]
    assert built and all(c == one for c in built)


@pytest.mark.parametrize("prior_kind", ["uniform", "per value"])
def test_recognised_form_works_per_distinct_count_only_when_its_coefficients_allow(prior_kind):
    """CLS + KL to a uniform prior is a function of the support count: the solver and the certificate
    evaluate it once per distinct count, with the same floats as elementwise; a prior that differs
    between values of one count makes the groups refused (checked, not assumed). Both solve to the
    exact reference."""
    from ldpopt.problems.dual.grouped import count_groups

    d = 6000
    est = _estimate(d, seed=3)
    rng = np.random.default_rng(4)
    prior = np.full(d, 1.0 / d) if prior_kind == "uniform" else rng.dirichlet(np.ones(d))
    pr = Problem(est, lambda f, e: cp.sum_squares(f - e.f_tilde) + W * cp.sum(cp.kl_div(f, prior)), [Simplex()])
    sep = pr.objective.per_value(est)
    g = count_groups(sep)
    if prior_kind == "uniform":
        assert g is not None and g.k < d // 4
        f = np.where(est.counts > np.median(est.counts), 2.0, 0.5) / d  # constant on each count
        for method in ("value", "d1", "d2", "d1_scale"):
            assert np.array_equal(getattr(sep, method)(f), getattr(sep.form, method)(f)
                                  + (sep.form.const / d if method == "value" else 0.0))
    else:
        assert g is None
    sol = pr.solve(progress=False)
    assert sol.solver == "LDPOPT-STRUCTURED" and sol.status == "optimal"
    ref = cls_kl_simplex(est.f_tilde, prior, W)
    assert np.max(np.abs(sol.f - ref)) <= max(sol.checks.error_bound, 1e-14) + 1e-15


@pytest.mark.parametrize("atom", ["kl_div", "rel_entr", "neg_entr"])
def test_closed_form_roots_of_log_linear_forms_agree_with_bisection(atom):
    """h'(f) = 2(f − f̃) + W·(log f + c): the Wright-omega root (Recognised.log_linear) against an
    independent bisection in log f, to the root's rounding; values whose root underflows sit at the
    smallest normal float. A term outside the form (a shifted kl_div argument) has no closed form."""
    from ldpopt.problems.objectives.recognise import recognise

    d = 400
    est = _estimate(d)
    p = np.full(d, 1.0 / d)
    expr = {"kl_div": lambda f, e: cp.sum_squares(f - e.f_tilde) + W * cp.sum(cp.kl_div(f, p)),
            "rel_entr": lambda f, e: cp.sum_squares(f - e.f_tilde) + W * cp.sum(cp.rel_entr(f, p)),
            "neg_entr": lambda f, e: cp.sum_squares(f - e.f_tilde) - W * cp.sum(cp.entr(f))}[atom]
    sep = Problem(est, expr, [Simplex()]).objective.per_value(est)
    assert sep.form.log_linear is not None
    t = np.linspace(-0.05, 1.0, d)  # from t ≈ 0.75 on the roots (e^{−t/W}-ish) underflow
    got = sep.argmin(t, np.zeros(d), np.ones(d))
    shift = {"kl_div": W * np.log(p), "rel_entr": W * (np.log(p) - 1.0), "neg_entr": -W}[atom]
    ref = _inner(2.0 * est.f_tilde - t + shift, W)  # 2f + W log f = c
    terms = np.abs(t) + 2.0 * np.abs(ref - est.f_tilde) + W * np.abs(np.log(np.maximum(ref, 1e-300) * d))
    tol = 64 * np.finfo(float).eps * terms / (2.0 + W / np.maximum(ref, 1e-300)) + 4 * np.finfo(float).eps * ref
    ok = ref >= np.finfo(float).tiny
    assert np.any(~ok) and np.all(np.abs(got[ok] - ref[ok]) <= tol[ok])
    assert np.all(got[~ok] == np.finfo(float).tiny)
    shifted = recognise(lambda f, e: cp.sum_squares(f - e.f_tilde) + W * cp.sum(cp.kl_div(f + 1e-3, p)), est)
    assert shifted.log_linear is None


def _log_bisection(t, w, c, lo=np.log(np.finfo(float).tiny), hi=0.0, rounds=200):
    """The root of w·(log f + c) + t = 0 in log f by bisection on [lo, hi] (independent of exp)."""
    lo, hi = np.full(np.shape(t), lo), np.full(np.shape(t), hi)
    for _ in range(rounds):
        mid = 0.5 * (lo + hi)
        below = w * (mid + c) + t < 0
        lo, hi = np.where(below, mid, lo), np.where(below, hi, mid)
    return np.exp(0.5 * (lo + hi))


@pytest.mark.parametrize("weights", ["one", "per value"])
@pytest.mark.parametrize("atom", ["kl_div", "rel_entr", "neg_entr"])
def test_closed_form_roots_of_pure_log_forms_agree_with_bisection(atom, weights):
    """A KL to a prior, relative entropy or −entropy alone (no square: A = 0 in Recognised.log_linear),
    with one weight or one per value: the root exp(−(C + t)/L) against a bisection in log f, to a few
    ulps; with one weight the solve on the simplex is the prior normalised (the uniform vector for
    −entropy), certified. A square on some values only (A positive on some, zero on others) has no
    closed form."""
    from ldpopt.problems.objectives.recognise import recognise

    d = 300
    est = _estimate(d)
    rng = np.random.default_rng(5)
    p = rng.uniform(0.5, 2.0, d)
    w = 0.7 if weights == "one" else rng.uniform(0.1, 3.0, d)
    expr = {"kl_div": lambda f, e: cp.sum(cp.multiply(w, cp.kl_div(f, p))),
            "rel_entr": lambda f, e: cp.sum(cp.multiply(w, cp.rel_entr(f, p))),
            "neg_entr": lambda f, e: -cp.sum(cp.multiply(w, cp.entr(f)))}[atom]
    pr = Problem(est, expr, [Simplex()])
    sep = pr.objective.per_value(est)
    A, L, C = sep.form.log_linear
    assert A == 0.0 and np.allclose(L, w, rtol=1e-15)
    t = np.linspace(-3.0, 3.0, d)
    got = sep.argmin(t, np.zeros(d), np.full(d, 50.0))
    c = {"kl_div": -np.log(p), "rel_entr": 1.0 - np.log(p), "neg_entr": 1.0}[atom]
    ref = _log_bisection(t, w, c, hi=np.log(50.0))
    # the root's rounding: log f to an ulp of |log f| + |c| (the bisection's and exp's), times f
    tol = 8 * np.finfo(float).eps * (1.0 + np.abs(np.log(ref)) + np.abs(c)) * ref
    assert np.all(np.abs(got - ref) <= tol)
    sol = pr.solve(progress=False)
    assert sol.solver == "LDPOPT-STRUCTURED" and sol.status == "optimal"
    # the optimum independently: f_v = exp(−c_v − λ/w_v) with Σ f = 1, λ by Brent's method (with one
    # weight: the prior normalised, the uniform vector for −entropy)
    from scipy.optimize import brentq

    cv, wv = np.broadcast_to(c, (d,)), np.broadcast_to(w, (d,))
    lam = brentq(lambda v: np.sum(np.exp(-cv - v / wv)) - 1.0, -50.0, 50.0, xtol=1e-15, rtol=1e-15)
    exact = np.exp(-cv - lam / wv)
    assert np.max(np.abs(sol.f - exact)) <= max(sol.checks.error_bound, 1e-14)
    mask = (np.arange(d) < d // 2).astype(float)
    half = recognise(lambda f, e: cp.sum_squares(cp.multiply(mask, f - e.f_tilde)) + cp.sum(cp.kl_div(f, p)), est)
    assert half.separable and half.log_linear is None


def _exact_multiplier(est, d):
    """ν of the exact CLS + W·KL optimum (tests/_kl_reference.py): stationarity at its largest value."""
    p = np.full(d, 1.0 / d)
    ref = cls_kl_simplex(est.f_tilde, p, W)
    v = int(np.argmax(ref))
    return -(2.0 * (ref[v] - est.f_tilde[v]) + W * np.log(ref[v] * d)), ref


def test_first_multiplier_is_refined_close_to_the_exact_one():
    """lambda_start's model λ refined by Newton on (f, λ): within 1e-6 of the exact multiplier (the
    quadratic model alone is ~4 % off), and the solve from it gives the exact answer, certified."""
    d = 400
    est = _estimate(d)
    nu, ref = _exact_multiplier(est, d)
    lam0 = _declared(d).per_value(est).lambda_start(1.0)
    assert abs(lam0 - nu) <= 1e-6 * abs(nu)
    sol = Problem(est, _declared(d), [Simplex()]).solve(progress=False)
    assert sol.solver == "LDPOPT-STRUCTURED" and sol.status == "optimal"
    assert np.max(np.abs(sol.f - ref)) <= max(sol.checks.error_bound, 1e-14) + 1e-15


def test_a_repeated_argmin_returns_its_answer_again_not_a_shared_array():
    d = 300
    est = _estimate(d)
    sep = _declared(d).per_value(est)
    l, u, t = np.zeros(d), np.ones(d), np.full(d, 0.01)
    first = sep.argmin(t, l, u)
    kept = first.copy()
    first[:] = -1.0                      # the caller owns what it got
    again = sep.argmin(t.copy(), l.copy(), u.copy())
    assert np.array_equal(again, kept)
    assert not np.array_equal(sep.argmin(np.full(d, 0.02), l, u), kept)  # another t: solved again


def test_cvxpy_expr_is_checked_once_per_estimate_and_the_cvxpy_problem_built_on_demand():
    d = 50
    est = _estimate(d)
    calls = []

    def expr(f, e):
        calls.append(1)
        return cp.sum_squares(f - e.f_tilde)

    def squares(**kw):
        return SeparableObjective(lambda f, e: (f - e.f_tilde) ** 2, lambda f, e: 2.0 * (f - e.f_tilde),
                                  lambda f, e: np.full(e.d, 2.0), **kw)

    obj = squares(name="squares", cvxpy_expr=expr)
    first, second = Problem(est, obj, [Simplex()]), Problem(est, obj, [Simplex()])
    assert len(calls) == 1 and first._cvx is None and second._cvx is None
    sol = first.solve(progress=False)
    assert sol.solver == "LDPOPT-STRUCTURED" and sol.status == "optimal" and first._cvx is None
    ref = second.solve(solver="CLARABEL", progress=False)   # built where a cvxpy solver needs it
    assert ref.status == "optimal" and np.max(np.abs(ref.f - sol.f)) < 1e-6
    Problem(_estimate(d, seed=2), obj, [Simplex()])          # another estimate: checked again
    assert len(calls) == 3  # (the CLARABEL build above was the second)
    with pytest.raises(ValueError, match=r"^objective: 'concave'.*not convex \(DCP\)"):
        Problem(est, squares(name="concave", cvxpy_expr=lambda f, e: -cp.sum_squares(f)), [Simplex()])
    with pytest.raises(ValueError, match=r"^objective: 'vector'.*not a scalar"):
        Problem(est, squares(name="vector", cvxpy_expr=lambda f, e: f - e.f_tilde), [Simplex()])
