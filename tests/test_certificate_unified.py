"""One certificate (issue 11 item 4): ``ldpopt.problems.check.certificate`` behind ldpopt's check of every
Solution and behind ``ldpopt verify``. The former implementations (check/verdict.py's own error bound, kept
for user constraints only; verify's argmin bound, merged into the certificate) agree where they
overlap, and the merged one catches what each caught.

References: closed forms (Norm-Sub and its KKT multipliers, Wang et al. App. B), points planted at a
known distance from the optimum, and a degenerate instance built by hand.
"""

from __future__ import annotations

import warnings

import cvxpy as cp
import numpy as np
import pytest

from ldpopt import oracles, verify
from ldpopt.methods.normalize import project_simplex
from ldpopt.problems import NonNegative, Problem, SolverWarning
from ldpopt.problems.check.certificate import certificate
from ldpopt.problems.check.verdict import accuracy_tol, check_solution


def _est(d=2000, n=10**6, seed=0, oracle="oue", eps=1.0):
    rng = np.random.default_rng(seed)
    w = 1.0 / np.arange(1, d + 1) ** 1.1
    return oracles.get(oracle, epsilon=eps, d=d).simulate(rng.multinomial(n, w / w.sum()), rng)


def _degenerate_plant(d, k=3.0, seed=0):
    """Posterior projection min ‖f − m‖² on the simplex with a degenerate zero value v0 (m_v0 = τ, the
    projection's shift: f*_v0 = 0 with a zero multiplier), and a planted point: f_v0 = k·accuracy_tol,
    the support shifted to keep Σ f = 1, with multipliers that zero every stationarity residual. Its
    KKT residuals are at rounding level and its Lagrangian gap ~k²·tol², yet ‖f − f*‖∞ = k·tol (the
    pattern of an interior-point QP leaving degenerate zero values at ~√gap, seen in the SQP route)."""
    rng = np.random.default_rng(seed)
    m = rng.normal(1.0 / d, 3.0 / d, d)
    fstar = project_simplex(m)
    on = fstar > 0
    tau = float(np.mean(m[on] - fstar[on]))
    v0 = int(np.flatnonzero(~on)[0])
    m[v0] = tau
    delta = k * accuracy_tol(d)
    tau2 = tau + delta / on.sum()
    f = np.where(on, m - tau2, 0.0)
    f[v0] = delta
    y = np.where(on, 0.0, 2.0 * (f - m) + 2.0 * tau2)
    assert y.min() >= 0
    return m, fstar, f, {"nonnegative": y, "sum": 2.0 * tau2}


def test_a_point_3x_outside_the_accuracy_tolerance_fails_the_check():
    """The looseness the SQP route met (binomial, d = 42,178: stationarity and gap small, bound 7e-7 >
    2.4e-7 passed): small relative KKT residuals no longer rescue a point the certificate places
    outside accuracy_tol. Before the swap check_solution passed this point."""
    d = 2000
    m, fstar, f, duals = _degenerate_plant(d)
    est = _est(d)
    P = Problem(est, "posterior", mean=m)
    ch = check_solution(P, f, duals)
    assert np.max(np.abs(f - fstar)) == pytest.approx(3 * accuracy_tol(d))
    assert ch.stationarity <= 1e-5 and ch.gap <= 1e-6  # the old acceptance rule was met ...
    assert not ch.passed and ch.error_bound >= 3 * accuracy_tol(d) * (1 - 1e-9)  # ... and no longer decides
    assert ch.certificate is not None and "KKT not certified" in ch.failed[0]
    # the optimum itself passes, with its own multipliers and with none (recovered)
    on = fstar > 0
    tau = float(np.mean(m[on] - fstar[on]))
    ok = check_solution(P, fstar, {"nonnegative": np.where(on, 0.0, 2 * (tau - m)), "sum": 2 * tau})
    assert ok.passed and ok.error_bound <= 1e-12


def test_checks_and_verify_use_the_same_certificate():
    est = _est(3000, seed=1)
    f = project_simplex(est.f_tilde)
    on = f > 0
    tau = float(np.mean(est.f_tilde[on] - f[on]))
    duals = {"nonnegative": 2.0 * np.maximum(tau - est.f_tilde, 0.0) * ~on, "sum": 2.0 * tau}
    ch = check_solution(Problem(est, "cls"), f, duals)
    c = certificate("cls", None, est, f)
    row = verify.check_equivalence(est, f, "cls")
    assert ch.error_bound == pytest.approx(c.distance_linf + c.distance_rounding, abs=1e-16)
    assert row.value == c.distance_linf and row.tolerance == c.distance_rounding
    assert row.verdict == "holds" and c.distance_linf <= 1e-15


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_former_implementations_agree_where_they_overlap(seed):
    """check/verdict.py's own bound (still used with user constraints) and the certificate (built-in
    constraints) judge Clarabel's point the same way, and both bound its distance to Norm-Sub."""
    est = _est(300, n=10**5, seed=seed)
    ref = project_simplex(est.f_tilde)
    user_sum = [NonNegative(), lambda f, e: cp.sum(f) == 1]  # the simplex, as a user constraint
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SolverWarning)
        a = Problem(est, "cls").solve(solver="CLARABEL")
        b = Problem(est, "cls", user_sum).solve(solver="CLARABEL")
    assert a.checks.certificate is not None and b.checks.certificate is None  # two code paths
    assert a.checks.passed == b.checks.passed == True  # noqa: E712
    for sol in (a, b):
        assert np.max(np.abs(sol.f - ref)) <= sol.checks.error_bound <= accuracy_tol(est.d)


def test_merged_certificate_catches_what_each_caught():
    d = 42_178
    est = verify.instance("oue", 1.0, 10**6, d, 0)
    f = project_simplex(est.f_tilde)
    # verify's: a closed form off by 1/(10d) on two values (mass kept)
    wrong = f.copy()
    top = np.argsort(f)[-2:]
    wrong[top[0]] += 1 / (10 * d)
    wrong[top[1]] -= 1 / (10 * d)
    c = certificate("cls", None, est, wrong)
    assert c.distance_linf >= 1 / (10 * d) * (1 - 1e-9) and c.distance_rounding < 1e-4 / d
    # the structured helper's: a 1e-6 mass error (infeasible, and far from f* in the argmin bound)
    c = certificate("cls", None, est, f * (1 + 1e-6))
    assert not c.feasible and c.distance_linf >= np.max(np.abs(f * 1e-6))
    # check/verdict.py's: a point below zero that a solver called optimal (SCS's wrong "optimal", min f < 0)
    bad = f.copy()
    bad[np.argmax(f)] += 7e-4
    bad[np.argmin(np.where(f > 0, np.inf, 0.0))] = -7e-4
    ch = check_solution(Problem(est, "cls"), bad, None)
    assert not ch.passed and ch.max_violation >= 7e-4 * (1 - 1e-12)
    assert certificate("cls", None, est, bad).primal_violation >= 7e-4 * (1 - 1e-12)
