"""A user's own cvxpy objective: recognised per-value derivatives against finite differences, the route
chosen from what it is, the solved point against a tight cvxpy referee, and solve(time_limit=,
progress=) with an honest status."""

from __future__ import annotations

import warnings

import cvxpy as cp
import numpy as np
import pytest
from _cli import ldpopt as run_cli
from _count_estimates import oue_counts
from conftest import examples
from hypothesis import given, settings
from hypothesis import strategies as st

from ldpopt.problems import Problem
from ldpopt.problems import progress as progress_module
from ldpopt.problems.constraints.base import Simplex, SubsetSum
from ldpopt.problems.constraints.order import Monotone
from ldpopt.problems.check.certificate import LinearKinkObjective
from ldpopt.problems.check.verdict import accuracy_tol
from ldpopt.problems.objectives.builtins import UserObjective
from ldpopt.problems.objectives.recognise import NotRecognised, recognise
from ldpopt.problems.solvers.user_forms import RecognisedSeparable, SmoothUserObjective

D = 120
EST = oue_counts(D, 20_000, seed=3)
PRIOR = np.full(D, 1.0 / D)
W = np.linspace(0.5, 2.0, D)

SEPARABLE = {
    "kl": lambda f, e: cp.sum_squares(f - e.f_tilde) + 1e-3 * cp.sum(cp.kl_div(f, PRIOR)),
    "entropy": lambda f, e: cp.sum_squares(f - e.f_tilde) - 1e-3 * cp.sum(cp.entr(f)),
    "rel_entr_both": lambda f, e: cp.sum(cp.rel_entr(PRIOR, f + 0.01)) + W @ cp.rel_entr(2 * f + 0.1, PRIOR),
    "powers": lambda f, e: 1.5 * cp.sum(cp.power(f + 1, 3)) - cp.sum(cp.power(f + 0.2, 0.5)) + cp.sum(cp.inv_pos(f + 1)),
    "exp_log_logistic": lambda f, e: W @ cp.exp(f) - cp.sum(cp.log(2 * f + 0.1)) + cp.sum(cp.logistic(3 * f - 1)) + 2 * cp.sum(f),
    "weighted_squares": lambda f, e: cp.sum(cp.multiply(W, cp.square(f - e.f_tilde))) + cp.quad_over_lin(f - PRIOR, 4.0) / 2,
    "huber": lambda f, e: cp.sum(cp.huber((f - e.f_tilde) / 0.01, 1.0)),
}
SMOOTH = {
    "smoothness": lambda f, e: cp.sum_squares(f - e.f_tilde) + 0.5 * cp.sum_squares(f[1:] - f[:-1]),
    "kl_plus_smoothness": lambda f, e: cp.sum(cp.kl_div(f, PRIOR)) + cp.sum_squares(f[1:] - 2 * f[:-1] + 0.01),
}


def _fd_check(form, f0, h=1e-7):
    """Central differences of the total value (→ gradient) and of the gradient (→ Hessian)."""
    eye = np.eye(f0.shape[0])
    g_num = np.array([(form.total(f0 + h * e) - form.total(f0 - h * e)) / (2 * h) for e in eye])
    h_num = np.array([(form.gradient(f0 + h * e) - form.gradient(f0 - h * e)) / (2 * h) for e in eye])
    return g_num, h_num


@pytest.mark.parametrize("name", sorted(SEPARABLE) + sorted(SMOOTH))
def test_recognised_value_and_derivatives_match_cvxpy_and_finite_differences(name):
    func = {**SEPARABLE, **SMOOTH}[name]
    form = recognise(func, EST)
    assert form.separable == (name in SEPARABLE)
    rng = np.random.default_rng(0)
    f0 = rng.dirichlet(np.ones(D)) * 0.5 + 0.5 / D  # inside every atom's domain, away from huber's kinks
    x = cp.Variable(D)
    x.value = f0
    assert form.total(f0) == pytest.approx(float(func(x, EST).value), rel=1e-12, abs=1e-12)
    g_num, h_num = _fd_check(form, f0)
    g, H = form.gradient(f0), form.hessian(f0).toarray()
    assert np.max(np.abs(g - g_num)) <= 1e-6 * max(1.0, np.max(np.abs(g)))
    assert np.max(np.abs(H - h_num)) <= 1e-4 * max(1.0, np.max(np.abs(H)))
    if form.separable:  # per-value d2 is the Hessian's diagonal; the curvature bound is below it
        assert np.allclose(np.diag(H), form.d2(f0)) and np.count_nonzero(H - np.diag(np.diag(H))) == 0
        assert np.all(form.curvature(f0, f0 + 1e-3) <= np.minimum(form.d2(f0), form.d2(f0 + 1e-3)) + 1e-12)


@pytest.mark.parametrize("func, kind", [
    (lambda f, e: cp.norm1(f - e.f_tilde), "abs"),
    (lambda f, e: cp.max(f), "max"),
    (lambda f, e: cp.sum(cp.abs(f - e.f_tilde)), "abs"),
])
def test_polyhedral_terms_alone_are_a_linear_program_on_the_cvxpy_chain_certified_by_its_dual(func, kind):
    """No strictly convex separable part (the kink certificate has no modulus): a linear program,
    solved on the cvxpy chain as written and certified by its dual's bound on J(f) − J*, the value
    against Clarabel's on the expression as written."""
    form = recognise(func, EST)
    assert [k[0] for k in form.kinks] == [kind] and not form.terms
    pr = Problem(EST, func)
    assert type(pr.objective) is LinearKinkObjective and pr.objective_route.startswith("linear plus polyhedral")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sol = pr.solve()
    assert sol.status == "optimal" and not sol.solver.endswith("-DIRECT"), (sol.status, sol.solver)
    assert "linear program" in sol.checks.not_unique
    ref = _referee(EST, func, [Simplex()])
    value = lambda f: float(func(cp.Constant(f), EST).value)  # noqa: E731
    assert abs(value(sol.f) - value(ref)) <= 1e-7 * max(1.0, abs(value(ref)))


@pytest.mark.parametrize("func, why", [
    (lambda f, e: cp.sum(cp.exp(f[:-1])), "size"),
    (lambda f, e: cp.sum(cp.kl_div(f[::-1], PRIOR)), "not affine per value"),
    (lambda f, e: cp.sum_squares(f) * cp.sum(f), "product"),
])
def test_outside_the_class_is_not_recognised_and_stays_on_the_cvxpy_chain(func, why):
    with pytest.raises(NotRecognised, match=why):
        recognise(func, EST)
    pr = Problem(EST, func) if why not in ("product",) else None
    if pr is not None:
        assert type(pr.objective) is UserObjective and pr.objective_route.startswith("cvxpy chain")


def _referee(est, func, cons):
    """Clarabel at tight tolerances on the user's own expression (no ldpopt route)."""
    f = cp.Variable(est.d)
    built = []
    for c in cons:
        built += [con for _, con in c.build(f, est)]
    with warnings.catch_warnings():  # Clarabel's "may be inaccurate" at 1e-10 on exponential cones
        warnings.simplefilter("ignore")
        cp.Problem(cp.Minimize(func(f, est)), built).solve(solver="CLARABEL", tol_gap_abs=1e-10, tol_gap_rel=1e-10,
                                                          tol_feas=1e-10, max_iter=500)
    return np.asarray(f.value)


CONSTRAINTS = {
    "simplex": lambda: [Simplex()],
    "subset": lambda: [Simplex(), SubsetSum(np.arange(0, D, 3), 0.3)],
    "monotone": lambda: [Simplex(), Monotone(order=np.argsort(-EST.f_tilde)[:20])],
}


@pytest.mark.parametrize("cons", sorted(CONSTRAINTS))
@pytest.mark.parametrize("name, kind, solver", [
    ("kl", RecognisedSeparable, "LDPOPT-STRUCTURED"),
    ("entropy", RecognisedSeparable, "LDPOPT-STRUCTURED"),
    ("huber", SmoothUserObjective, "NEWTON"),
    ("smoothness", SmoothUserObjective, "NEWTON"),
])
def test_route_and_solved_point_against_a_tight_referee(name, kind, solver, cons):
    func = {**SEPARABLE, **SMOOTH}[name]
    pr = Problem(EST, func, CONSTRAINTS[cons]())
    assert type(pr.objective) is kind
    # NEWTON: ldpopt's Newton route, its interior point or (when that does not certify) sequential QP,
    # asked for by name: the smoothness penalty is a QP, which at d = 120 solve() sends to Clarabel
    # first (policy.QP_SMALL_D; test_small_user_qps_go_to_the_cvxpy_chain_first_by_structure)
    sol = pr.solve(solver="SQP") if solver == "NEWTON" else pr.solve()
    assert sol.status == "optimal" and (sol.solver in ("LDPOPT-IPM", "SQP(CLARABEL)") if solver == "NEWTON"
                                        else sol.solver == solver)
    assert sol.checks.certified and sol.checks.stationarity is not None and sol.checks.gap is not None
    ref = _referee(EST, func, CONSTRAINTS[cons]())
    if name == "huber":  # linear past ±M: the minimiser need not be unique, the minimum is
        assert pr.objective.value(sol.f, EST) <= pr.objective.value(ref, EST) * (1 + 1e-9) + 1e-12
    else:
        assert np.max(np.abs(sol.f - ref)) <= 1e-7
    # the value J(f) ldpopt reports against the referee's point (its ~1e-12 negatives clipped into the domain)
    assert sol.optimal_value == pytest.approx(pr.objective.value(np.maximum(ref, 0.0), EST), rel=1e-8, abs=1e-12)


def test_structured_route_is_certified_with_a_distance_bound():
    sol = Problem(EST, SEPARABLE["kl"]).solve()
    assert sol.checks.certificate is not None and 0 < sol.checks.error_bound <= 1e-10


def test_time_limit_is_honest():
    func = lambda f, e: cp.norm1(f - e.f_tilde) + cp.sum(cp.exp(f))
    with pytest.warns(Warning):
        sol = Problem(EST, func).solve(time_limit=1e-9)
    assert sol.status == "time_limit" and not sol.success and "time limit" in sol.message
    assert all(a["status"] == "time_limit" for a in sol.attempts)
    ok = Problem(EST, SEPARABLE["kl"]).solve(time_limit=60)  # ample: the checked optimum, status optimal
    assert ok.status == "optimal" and ok.checks.passed


def test_time_limit_and_progress_arguments_are_checked():
    pr = Problem(EST, SEPARABLE["kl"])
    with pytest.raises(ValueError, match="time_limit"):
        pr.solve(time_limit=0)
    with pytest.raises(TypeError, match="progress"):
        pr.solve(progress="yes")


def test_small_user_qps_go_to_the_cvxpy_chain_first_by_structure(monkeypatch):
    """A user QP up to policy.QP_SMALL_D values: CLARABEL → PIQP → OSQP before the Newton route; a
    smooth one (the Newton route takes it) then the QP chain, PIQP first, up to
    policy.SMOOTH_QP_SMALL_D, and past that the Newton route; one with polyhedral terms (total
    variation) the QP chain past QP_SMALL_D. A built-in QP keeps its chain at any d."""
    from ldpopt.problems.solvers import policy

    pr = Problem(EST, SMOOTH["smoothness"], CONSTRAINTS["subset"]())
    tv = Problem(EST, lambda f, e: cp.sum_squares(f - e.f_tilde) + 1e-3 * cp.norm1(f[1:] - f[:-1]))
    for p in (pr, tv):  # d = 120: both Clarabel first
        assert policy.small_user_qp(p) and not policy.uses_sqp(p) and policy.default_chain(p) == policy.QP_CHAIN_SMALL
    for p in (pr, tv):  # both recognised quadratics (plus polyhedral terms): a solver's own interface first,
        # PIQP's in the worker's child, with or without a time limit (killed at it)
        assert policy.direct_qp_solver(p) == "PIQP" and policy.direct_qp_solver(p, time_limited=True) == "PIQP"
        sol = p.solve()
        assert sol.status == "optimal" and sol.solver == "PIQP-DIRECT" and sol.checks.passed
    forks = policy.fork_available
    monkeypatch.setattr(policy, "fork_available", lambda: False)  # no child process: Clarabel in this process
    for p in (pr, tv):  # d = 120 <= DIRECT_CLARABEL_MAX_D
        assert policy.direct_qp_solver(p) == "CLARABEL" and policy.direct_qp_solver(p, time_limited=True) == "CLARABEL"
    monkeypatch.setattr(policy, "DIRECT_CLARABEL_MAX_D", D - 1)  # past it: PIQP's
    for p in (pr, tv):
        assert policy.direct_qp_solver(p) == "PIQP" and policy.direct_qp_solver(p, time_limited=True) == "CLARABEL"
    monkeypatch.setattr(policy, "QP_SMALL_D", D - 1)  # without a child, under a limit: Clarabel up to it only
    assert policy.direct_qp_solver(pr, time_limited=True) == "CLARABEL"  # smooth
    assert policy.direct_qp_solver(tv) == "PIQP" and policy.direct_qp_solver(tv, time_limited=True) is None
    monkeypatch.setattr(policy, "fork_available", forks)
    assert policy.direct_qp_solver(tv, time_limited=True) == "PIQP"  # in a child: a limit changes nothing
    assert policy.default_chain(Problem(EST, "cls", CONSTRAINTS["subset"]())) == policy.QP_CHAIN
    # past QP_SMALL_D: the smooth QP to PIQP first, still before Newton
    assert policy.small_user_qp(pr) and not policy.uses_sqp(pr) and policy.default_chain(pr) == policy.QP_CHAIN
    assert not policy.small_user_qp(tv) and policy.default_chain(tv) == policy.QP_CHAIN
    monkeypatch.setattr(policy, "SMOOTH_QP_SMALL_D", D - 1)  # past that: the Newton route
    assert not policy.small_user_qp(pr) and policy.uses_sqp(pr) and policy.default_chain(pr) == policy.QP_CHAIN
    assert policy.direct_qp_solver(pr) is None
    kl = Problem(EST, SEPARABLE["kl"])  # not a QP: its routes are unchanged
    assert not policy.small_user_qp(kl) and policy.direct_qp_solver(kl) is None


def test_progress_lines_only_past_the_threshold(monkeypatch, capsys):
    pr = Problem(EST, SMOOTH["smoothness"], CONSTRAINTS["subset"]())
    pr.solve(solver="SQP")
    assert "ldpopt:" not in capsys.readouterr().err  # a short solve is silent
    monkeypatch.setattr(progress_module, "PROGRESS_AFTER", 0.0)
    pr.solve(solver="SQP")
    err = capsys.readouterr().err
    assert "ldpopt: IPM" in err and "iteration" in err and "violation" in err
    pr.solve(progress=False)
    assert "ldpopt:" not in capsys.readouterr().err


def test_cli_time_limit(tmp_path):
    counts = tmp_path / "c.csv"
    counts.write_text("value,count\n" + "".join(f"v{i},{c}\n" for i, c in enumerate([340, 300, 285, 275, 265])))
    prob = tmp_path / "p.toml"
    prob.write_text('objective = "l1"\n')
    args = ("solve", "--counts", counts, "--oracle", "oue", "--epsilon", "1", "--n", 1000, "--problem", prob, "--json")
    bad = run_cli(*args, "--time-limit", "0")
    assert bad.returncode == 2 and "--time-limit" in bad.stderr
    out = run_cli(*args, "--time-limit", "1e-9")
    assert out.returncode == 1 and "time_limit" in out.stdout + out.stderr


def _recognised_as_one_kink_with_cvxpys_value(func, seed: int) -> None:
    """``func`` is recognised with one ``abs`` term, and its value is cvxpy's at three random points."""
    form = recognise(func, EST)
    assert [k[0] for k in form.kinks] == ["abs"]
    rng = np.random.default_rng(seed)
    x = cp.Variable(D)
    for _ in range(3):
        x.value = rng.standard_normal(D) / D
        assert form.total(x.value) + form.kink_value(x.value) == pytest.approx(float(func(x, EST).value), rel=1e-12,
                                                                              abs=1e-14)


@settings(max_examples=examples(8), deadline=None)
@given(tau=st.floats(0.05, 0.95), w=st.floats(1e-4, 1.0), seed=st.integers(0, 2**31 - 1))
def test_an_elementwise_maximum_of_two_affine_arguments_is_an_abs_kink(tau, w, seed):
    """max(s, t) = (s + t)/2 + |s − t|/2: the pinball loss is recognised (a linear part and an abs
    kink), its value is cvxpy's at random points, and its problem goes to the direct QP route and
    agrees with Clarabel on the expression as written."""
    func = lambda f, e: cp.sum_squares(f - e.f_tilde) + w * cp.sum(
        cp.maximum(tau * (f - e.f_tilde), (tau - 1) * (f[::-1] - e.f_tilde)))
    _recognised_as_one_kink_with_cvxpys_value(func, seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sol = Problem(EST, func).solve()
    assert sol.status == "optimal" and sol.solver.endswith("-DIRECT"), (sol.status, sol.solver)
    assert np.max(np.abs(sol.f - _referee(EST, func, [Simplex()]))) <= 1e-6


_VECTOR_ARGS = {  # affine arguments of f of the size of f
    "f - ft": lambda f, e: f - e.f_tilde,
    "cumsum(f)": lambda f, e: cp.cumsum(f),
    "2 * f[::-1]": lambda f, e: 2 * f[::-1],
    "cumsum(f - ft)[::-1]": lambda f, e: cp.cumsum(f - e.f_tilde)[::-1],
}


@settings(max_examples=examples(8), deadline=None, derandomize=True)
@given(arg=st.sampled_from(sorted(_VECTOR_ARGS)), form=st.sampled_from(["pos", "max(x, t)", "max(t, x)"]),
       t=st.floats(-0.5, 0.5), w=st.floats(1e-3, 1.0), seed=st.integers(0, 2**31 - 1))
def test_a_maximum_with_a_constant_scalar_is_recognised_as_a_kink(arg, form, t, w, seed):
    """``pos(x)`` is cvxpy's ``maximum(x, 0)``: a scalar beside a vector argument stands for itself in
    every entry. Recognised (a linear part and an abs kink), its value is cvxpy's at random points,
    and the problem's answer is certified and within ``accuracy_tol`` of Clarabel's on the expression
    as written (not 1e-6: Clarabel at 1e-10 was measured 1.6e-6 from its own answer at 1e-13, where
    ldpopt's was 1.1e-7 from it; nor its objective value, which a reference 1e-11 outside the
    simplex can put below the optimum)."""
    x_of = _VECTOR_ARGS[arg]
    atom = {"pos": lambda x: cp.pos(x - t), "max(x, t)": lambda x: cp.maximum(x, t),
            "max(t, x)": lambda x: cp.maximum(t, x)}[form]
    func = lambda f, e: cp.sum_squares(f - e.f_tilde) + w * cp.sum(atom(x_of(f, e)))
    _recognised_as_one_kink_with_cvxpys_value(func, seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sol = Problem(EST, func).solve()
    assert sol.status == "optimal", (sol.status, sol.message)
    assert np.max(np.abs(sol.f - _referee(EST, func, [Simplex()]))) <= accuracy_tol(D)


def test_a_maximum_with_a_negative_weight_is_not_recognised():
    with pytest.raises(NotRecognised, match="negative weight"):
        recognise(lambda f, e: -cp.sum(cp.maximum(f, 1 - f)), EST)


def test_one_progress_thread_beats_for_overlapping_blocks_and_stops(monkeypatch):
    """Clock.running: every running block gets its lines from the process's one progress thread (no
    thread per block), each with its own route name, and none once the block has ended."""
    import io
    import threading
    import time

    monkeypatch.setattr(progress_module, "PROGRESS_AFTER", 0.02)
    out_a, out_b = io.StringIO(), io.StringIO()
    a = progress_module.Clock(progress=True, stream=out_a)
    b = progress_module.Clock(progress=True, stream=out_b)
    time.sleep(0.03)  # both solves past the threshold
    before = threading.active_count()
    with a.running("ROUTE-A"), b.running("ROUTE-B"):
        assert threading.active_count() <= max(before, 1) + 1  # at most the one progress thread started
        time.sleep(0.2)
    time.sleep(0.05)
    n_a, n_b = out_a.getvalue().count("ldpopt: ROUTE-A"), out_b.getvalue().count("ldpopt: ROUTE-B")
    assert n_a >= 2 and n_b >= 2 and "ROUTE-B" not in out_a.getvalue()
    time.sleep(0.1)  # ended: no more lines
    assert out_a.getvalue().count("ldpopt: ROUTE-A") == n_a and out_b.getvalue().count("ldpopt: ROUTE-B") == n_b
    with a.running("ROUTE-C"):  # the thread serves a later block too
        time.sleep(0.1)
    assert "ldpopt: ROUTE-C" in out_a.getvalue()


@settings(max_examples=examples(30), deadline=None)
@given(seed=st.integers(0, 2**31 - 1), kind=st.sampled_from(["cls-kl", "smooth", "smooth-kl", "pinball", "tv",
                                                              "huber", "lowrank"]),
       scale=st.sampled_from([None, 0.01, 2.0]), w=st.floats(1e-4, 10.0))
def test_auto_multiplier_from_the_form_is_cvxpys(seed, kind, scale, w):
    """The automatic multiplier K of a recognised callable, read from its form in numpy (J's smooth part
    plus its polyhedral terms), equals K from cvxpy's evaluation of the user's own expression at the same
    points (the reference: ``_auto_multiplier`` without the form) to rounding: the problem built is J·K
    with the same K, whichever objective route the callable took."""
    from ldpopt.problems.objectives.base import _auto_multiplier

    rng = np.random.default_rng(seed)
    d = int(rng.integers(5, 60))
    est = oue_counts(d, 20_000, seed=seed % 1000)
    prior = np.full(d, 1.0 / d)
    U, c = rng.standard_normal((d, 2)), rng.random() * 1e-3
    exprs = {"cls-kl": lambda f, e: cp.sum_squares(f - e.f_tilde) + w * 1e-3 * cp.sum(cp.kl_div(f, prior)),
             "smooth": lambda f, e: cp.sum_squares(f - e.f_tilde) + w * cp.sum_squares(cp.diff(f)),
             "smooth-kl": lambda f, e: (cp.sum_squares(f - e.f_tilde) + w * cp.sum_squares(cp.diff(f))
                                        + 1e-3 * cp.sum(cp.kl_div(f, prior))),
             "pinball": lambda f, e: cp.sum_squares(f - e.f_tilde) + w * cp.sum(cp.maximum(0.3 * (f - e.f_tilde),
                                                                                           -0.7 * (f - e.f_tilde))),
             "tv": lambda f, e: cp.sum_squares(f - e.f_tilde) + w * cp.norm1(f[1:] - f[:-1] + c),
             "huber": lambda f, e: cp.sum(cp.huber(f - e.f_tilde, w / d)),
             "lowrank": lambda f, e: cp.sum_squares(f - e.f_tilde) + w * cp.sum_squares(U.T @ (f - prior))}
    func = exprs[kind]
    pr = Problem(est, func, [Simplex()], scale=scale)
    assert getattr(pr.objective, "form", None) is not None  # recognised: the form's K was used
    ref = _auto_multiplier(func(pr.f, est), pr.x, pr.scale, d)
    assert pr.multiplier == pytest.approx(ref, rel=1e-9)


@settings(max_examples=examples(12), deadline=None)
@given(seed=st.integers(0, 2**31 - 1), w=st.sampled_from([1e-9, 1e-7, 1e-5, 1e-3]),
       scale=st.sampled_from([None, 0.01, 3.0]))
def test_auto_multiplier_of_a_nearly_linear_objective_caps_its_slopes(seed, w, scale):
    """A linear term plus a faint curvature (``c @ f + w * ‖f − p‖²``, w down to 1e-9): the curvature
    alone gives K = 2/(κ s²) = 1/(w s²), slopes of 10⁸ and more per coordinate of x. Where
    K s² > 10³, the automatic K brings the root-mean-square slope of K·J per coordinate of x at the
    centre 1/d (its gradient written here in numpy: s·(c + 2w(1/d − p))) to 100 within a factor 3
    (unless the curvature's K is already below that); elsewhere it is the curvature's. The solve
    returns the reference optimum either way (cvxpy + Clarabel at 1e-10 on the problem as written)."""
    from ldpopt.problems.objectives.base import MAX_SLOPE, NEARLY_LINEAR

    rng = np.random.default_rng(seed)
    d = int(rng.integers(5, 40))
    est = oue_counts(d, 20_000, seed=seed % 1000)
    c, p = rng.standard_normal(d), rng.dirichlet(np.ones(d))
    func = lambda f, e: c @ f + w * cp.sum_squares(f - p)  # noqa: E731
    pr = Problem(est, func, [Simplex()], scale=scale)
    rms = pr.scale * float(np.sqrt(np.mean((c + 2 * w * (1.0 / d - p)) ** 2)))
    curvature_k = 1.0 / (w * pr.scale ** 2)  # 2/(κ s²) with κ = 2w
    if curvature_k * pr.scale ** 2 > NEARLY_LINEAR * (1 + 1e-6):
        assert pr.multiplier <= curvature_k * (1 + 1e-6)
        assert pr.multiplier * rms <= 3 * MAX_SLOPE
        assert pr.multiplier * rms >= MAX_SLOPE / 3 or pr.multiplier == pytest.approx(curvature_k, rel=1e-6)
    elif curvature_k * pr.scale ** 2 < NEARLY_LINEAR * (1 - 1e-6):
        assert pr.multiplier == pytest.approx(curvature_k, rel=1e-5)
    sol = pr.solve()
    g = cp.Variable(d)
    cp.Problem(cp.Minimize(c @ g + w * cp.sum_squares(g - p)), [g >= 0, cp.sum(g) == 1]).solve(
        solver="CLARABEL", tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10)
    ref = c @ g.value + w * np.sum((g.value - p) ** 2)
    assert sol.status in ("optimal", "optimal_unverified")
    assert c @ sol.f + w * np.sum((sol.f - p) ** 2) == pytest.approx(ref, abs=1e-7)


@settings(max_examples=examples(6), deadline=None)
@given(seed=st.integers(0, 2**31 - 1), outer=st.sampled_from(["norm1", "abs", "max", "squares"]))
def test_a_dense_running_sum_is_left_to_the_cvxpy_chain(seed, outer):
    """A polyhedral or quadratic term of ``cumsum`` over m values reads a triangle of m(m + 1)/2
    Jacobian entries (50 million at m = 10⁴, seconds of cvxpy's sparse algebra at construction and
    again in the check). Past the budget (lowered here so that d = 30 crosses it), recognition declines
    with the reason, the problem goes to the cvxpy chain, and its answer is the reference (cvxpy +
    Clarabel at 1e-10 on the problem as written)."""
    import ldpopt.problems.objectives.recognise as rec

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(rec, "RUNNING_SUM_ENTRIES", 3)  # 90 entries at d = 30; the triangle holds 465
        _dense_running_sum_case(seed, outer)


@pytest.mark.parametrize(("d", "recognised"), [(100, True), (200, False)])
def test_the_running_sum_budget_grows_with_d_not_with_its_square(d, recognised):
    """At the default budget (:data:`~ldpopt.problems.objectives.recognise.RUNNING_SUM_ENTRIES` dense
    entries per value of f) a full ``cumsum`` in a polyhedral term is recognised at d = 100 (its
    adjoint 100 × 100, 100 per value) and left to the cvxpy chain at d = 200 (200 per value): what
    recognition writes stays O(d). Either way the answer is the reference's."""
    _dense_running_sum_case(7, "norm1", d, recognised)


def _dense_running_sum_case(seed, outer, d=30, recognised=False):
    rng = np.random.default_rng(seed)
    est = oue_counts(d, 20_000, seed=seed % 1000)
    w = float(rng.choice([1e-3, 1e-2, 1e-1]))
    q = np.cumsum(rng.dirichlet(np.ones(d)))
    atom = {"norm1": lambda u: cp.norm1(u), "abs": lambda u: cp.sum(cp.abs(u)), "max": lambda u: cp.max(u),
            "squares": lambda u: cp.sum_squares(u)}[outer]
    func = lambda f, e: cp.sum_squares(f - e.f_tilde) + w * atom(cp.cumsum(f) - q)  # noqa: E731
    pr = Problem(est, func, [Simplex()])
    if recognised:  # the kink holds the whole triangle
        assert "running sum" not in pr.objective_route
        assert recognise(func, est).kinks[0][2].nnz == d * (d + 1) // 2
    else:
        with pytest.raises(NotRecognised, match=f"running sum over {d} values"):
            recognise(func, est)
        assert f"running sum over {d} values" in pr.objective_route
    sol = pr.solve()
    g = cp.Variable(d)
    ft = np.asarray(est.f_tilde, float)
    objective = cp.sum_squares(g - ft) + w * atom(cp.cumsum(g) - q)
    cp.Problem(cp.Minimize(objective), [g >= 0, cp.sum(g) == 1]).solve(
        solver="CLARABEL", tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10)
    ref, ref_value = g.value.copy(), float(objective.value)
    g.value = sol.f
    assert sol.f.min() >= -1e-9 and abs(sol.f.sum() - 1) < 1e-9
    # J is 2-strongly convex (its sum of squares), so J(f) - J* >= ||f - f*||²: the objective within
    # 1e-10 of the reference's puts f within ~1e-5 of it, whichever of the two is nearer f* (the
    # reference's point alone can be 2e-6 off where its gap is 8e-12: a max of running sums, seed 1726)
    assert float(objective.value) <= ref_value + 1e-10
    assert np.max(np.abs(sol.f - ref)) < 1e-5
