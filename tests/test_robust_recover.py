"""Recovery from poisoned estimates (ldpopt.robust.recover): LDPRecover and RSN closed forms against
their problem statements solved by ldpopt and by an independent cvxpy program; the mixture recovery
through Problem with ldpopt's check; the RSN threshold against its defining equation."""

from __future__ import annotations

import math

import cvxpy as cp
import numpy as np
import pytest

from ldpopt.robust.recover import ldprecover_target, rsn_threshold
from ldpopt import oracles, robust
from ldpopt.robust.recover import mixture_offset

D, N, BETA = 128, 50000, 0.05
TARGETS = [30, 60, 90, 120]


def _zipf_counts(d=D, n=N, seed=0):
    w = np.arange(1, d + 1) ** -1.5
    return np.random.default_rng(seed).multinomial(n, w / w.sum())


def _poisoned(name, attack="mga", seed=1):
    return robust.poisoned_estimate(oracles.get(name, epsilon=1.0, d=D), _zipf_counts(), attack, TARGETS, BETA, seed)


def _cvxpy_projection(t, fixed=None):
    """argmin ‖f − t‖² on the simplex (with f[idx] == vals), written independently in cvxpy."""
    f = cp.Variable(t.size)
    cons = [f >= 0, cp.sum(f) == 1]
    if fixed is not None and fixed[0].size:
        cons.append(f[fixed[0]] == fixed[1])
    cp.Problem(cp.Minimize(t.size ** 2 * cp.sum_squares(f - t)), cons).solve(
        solver="CLARABEL", tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12)
    return f.value


@pytest.mark.parametrize("name,attack", [("grr", "mga"), ("oue", "mga"), ("olh", "input"), ("sue", "mga")])
def test_ldprecover_closed_form_is_its_problem(name, attack):
    est = _poisoned(name, attack)
    closed = robust.ldprecover(est, BETA)
    sol = robust.recover(est, "ldprecover", beta=BETA)
    assert sol.status == "optimal" and sol.checks is not None
    np.testing.assert_allclose(closed, sol.f, atol=1e-8)
    np.testing.assert_allclose(closed, _cvxpy_projection(ldprecover_target(est, BETA)), atol=1e-5)


def test_ldprecover_target_removes_the_modelled_attack_exactly():
    # f̃ = (1 − β) f_X + β f_Y with f_Y the learned malicious estimate: the target returns f_X
    est = _poisoned("grr")
    t = ldprecover_target(est, BETA)
    pos = est.f_tilde > 0
    f_y = np.where(pos, (1 - D * est.q) / ((est.p - est.q) * pos.sum()), 0.0)
    np.testing.assert_allclose((1 - BETA) * t + BETA * f_y, est.f_tilde, atol=1e-12)


@pytest.mark.parametrize("name,attack", [("grr", "mga"), ("oue", "mga"), ("oue", "input"), ("olh", "mga")])
def test_rsn_closed_form_is_its_problem(name, attack):
    est = _poisoned(name, attack)
    closed = robust.rsn(est)
    sol = robust.recover(est, "rsn")
    assert sol.status == "optimal"
    np.testing.assert_allclose(closed, sol.f, atol=1e-8)
    t = est.f_tilde + (1 - est.f_tilde.sum()) / D
    high = np.flatnonzero(t >= rsn_threshold(est))
    if t[high].sum() < 1:
        np.testing.assert_allclose(closed, _cvxpy_projection(t, (high, t[high])), atol=1e-5)
        np.testing.assert_allclose(closed[high], t[high], atol=1e-12)  # the high segment is untouched
    else:
        np.testing.assert_allclose(closed, np.where(np.isin(np.arange(D), high), t / t[high].sum(), 0), atol=1e-12)


def test_rsn_threshold_solves_its_equation():
    est = _poisoned("oue")
    x = rsn_threshold(est) / 2
    p, q, n = est.p, est.q, est.n
    lhs = 2 * math.sqrt(n * (x * p * (1 - p) + (1 - x) * q * (1 - q)))
    assert lhs == pytest.approx(n * (p - q) * x, rel=1e-12)


@pytest.mark.parametrize("name", ["grr", "oue", "olh"])
def test_mixture_recovery_is_checked_and_beats_norm_sub_under_mga(name):
    from ldpopt.methods.normalize import project_simplex

    est = _poisoned(name)
    f = _zipf_counts() / N
    sol = robust.recover(est, "mixture", beta=BETA, suspects=TARGETS)
    assert sol.status == "optimal" and sol.checks.max_violation <= 1e-9
    ref = robust.recover(est, "mixture", beta=BETA, suspects=TARGETS, solver="CLARABEL")
    np.testing.assert_allclose(sol.f, ref.f, atol=1e-5)
    ns = project_simplex(est.f_tilde)
    assert ((sol.f - f) ** 2).sum() < ((ns - f) ** 2).sum()
    assert abs(sol.f[TARGETS].sum() - f[TARGETS].sum()) < abs(ns[TARGETS].sum() - f[TARGETS].sum())


def test_recovery_arguments_are_named():
    est = _poisoned("grr")
    with pytest.raises(ValueError, match="method"):
        robust.recover(est, "nope")
    with pytest.raises(ValueError, match="beta"):
        robust.recover(est, "ldprecover")
    with pytest.raises(ValueError, match="suspects"):
        robust.recover(est, "mixture", beta=0.1)
    with pytest.raises(ValueError, match="beta"):
        robust.ldprecover(est, 1.0)
    with pytest.raises(ValueError, match="suspects"):
        robust.recover(est, "mixture", beta=0.1, suspects=[D + 3])


@pytest.mark.parametrize("name,attack", [("grr", "mga"), ("oue", "mga"), ("olh", "mga"), ("ss", "mga")])
def test_mixture_offset_recovers_the_fake_reports_non_suspect_support(name, attack):
    # the offset is (s0 − q)/(p − q), s0 the fake reports' support rate off the suspects; MGA's is known
    o = oracles.get(name, epsilon=1.0, d=D)
    est = robust.poisoned_estimate(o, _zipf_counts(n=400000), attack, TARGETS, 0.2, 3)
    r = len(TARGETS)
    s0 = {"grr": lambda: 0.0, "oue": lambda: robust.attacks.padding_ones(o, r) / (D - r), "olh": lambda: 1 / o.g,
          "ss": lambda: (o.k - r) / (D - r)}[name]()
    want = (s0 - est.q) / (est.p - est.q)
    sd = math.sqrt(est.q * (1 - est.q) / est.n) * D / (0.2 * (D - r) * (est.p - est.q))  # of Σc/N, propagated
    assert abs(mixture_offset(est, 0.2, TARGETS) - want) <= 5 * sd + 1e-12
