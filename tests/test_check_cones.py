"""A user's constraint of any cvxpy cone in ldpopt's check: its violation in numpy against cvxpy's own
``violation()`` on generated points, and PSD / second-order cone constraints solved end to end
against plain cvxpy + Clarabel (they ended ``inaccurate`` and ``solver_error`` before)."""

from __future__ import annotations

import warnings

import cvxpy as cp
import numpy as np
import pytest
from problem_strategies import estimate

from ldpopt.problems import Problem, Simplex
from ldpopt.problems.check.cones import cone_violation, dual_array, save_dual_array


def _points(seed: int, n: int = 12):
    rng = np.random.default_rng(seed)
    for _ in range(n):
        scale = float(rng.choice([1e-3, 1.0, 10.0]))
        yield rng, scale


@pytest.mark.parametrize("seed", range(3))
def test_rows_and_psd_match_cvxpy_exactly(seed):
    for rng, scale in _points(seed):
        x = cp.Variable(5)
        x.value = scale * rng.standard_normal(5)
        X = cp.Variable((3, 3))
        X.value = scale * rng.standard_normal((3, 3))
        b = scale * rng.standard_normal(5)
        for con in (x == b, x <= b, x >= b, cp.constraints.NonNeg(x - b), cp.constraints.NonPos(x - b),
                    cp.constraints.Zero(x - b), X >> 0, X + 0.5 * scale * np.eye(3) >> 0, (X + X.T) / 2 << 0):
            ref = float(np.max(con.residual))  # elementwise (violation() of NonNeg is a 2-norm)
            assert cone_violation(con) == pytest.approx(ref, rel=1e-9, abs=1e-12 * scale), con


@pytest.mark.parametrize("seed", range(2))
def test_curved_cones_bound_cvxpy_distance(seed):
    """SOC: max(0, ‖x‖ − t) lies in [dist, √2·dist]; exponential and power cones: the distance to a point
    of the cone, so ≥ cvxpy's distance to the cone, and zero on the cone."""
    for rng, scale in _points(seed, 8):
        t = cp.Variable(2)
        X = cp.Variable((3, 2))
        t.value = scale * rng.standard_normal(2)
        X.value = scale * rng.standard_normal((3, 2))
        soc = cp.constraints.SOC(t, X, axis=0)
        dist = float(np.max(soc.violation()))
        mine = cone_violation(soc)
        assert dist - 1e-9 * scale <= mine <= np.sqrt(2) * dist + 1e-9 * scale
        u = cp.Variable(3)
        u.value = rng.standard_normal(3)
        for con in (cp.constraints.ExpCone(u[0], u[1], u[2]), cp.constraints.PowCone3D(u[0], u[1], u[2], 0.3)):
            dist = float(np.max(con.residual))
            mine = cone_violation(con)
            assert mine >= dist - 1e-6, con
            assert (mine == 0) == (dist <= 1e-9) or min(mine, dist) < 1e-7, con
    # points on the cones: zero
    u = cp.Variable(3)
    u.value = np.array([0.3, 2.0, 2.0 * np.exp(0.15) + 1e-12])
    assert cone_violation(cp.constraints.ExpCone(u[0], u[1], u[2])) == 0.0
    u.value = np.array([0.5, 2.0, -(0.5**0.3 * 2.0**0.7) + 1e-12])
    assert cone_violation(cp.constraints.PowCone3D(u[0], u[1], u[2], 0.3)) == 0.0


def test_cone_duals_round_trip():
    x = cp.Variable(3)
    rng = np.random.default_rng(5)
    for con in (cp.constraints.SOC(x[0], x[1:]), cp.constraints.ExpCone(x[0], x[1], x[2]),
                cp.constraints.PowCone3D(x[0], x[1], x[2], 0.4)):
        v = rng.standard_normal(3)
        save_dual_array(con, v)
        assert np.array_equal(dual_array(con), v)


def _user_cone(kind: str, f0: np.ndarray, r: float):
    if kind == "psd":  # lambda_max(sym(M(f))) <= lam + r written as a PSD cone
        M0 = f0[:9].reshape(3, 3, order="F")
        lam = float(np.linalg.eigvalsh((M0 + M0.T) / 2).max()) + r

        def cons(f):
            M = cp.reshape(f[:9], (3, 3), order="F")
            return [lam * np.eye(3) - (M + M.T) / 2 >> 0]
        return cons
    return lambda f: [cp.constraints.SOC(cp.Constant(r), f - f0)]


@pytest.mark.parametrize("kind", ["psd", "soc"])
@pytest.mark.parametrize("seed", range(2))
def test_user_cone_constraint_solved_like_cvxpy(kind, seed):
    rng = np.random.default_rng(100 + seed)
    d = 20
    est = estimate("plain", d, rng)
    f0 = rng.dirichlet(np.ones(d))
    cons = _user_cone(kind, f0, float(rng.choice([1e-2, 0.1])))
    ft = np.asarray(est.f_tilde, float)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sol = Problem(est, lambda f, e: cp.sum_squares(f - e.f_tilde),
                      [Simplex(), lambda f, e: {"c": cons(f)[0]}]).solve()
        f = cp.Variable(d)
        ref = cp.Problem(cp.Minimize(cp.sum_squares(f - ft)), [f >= 0, cp.sum(f) == 1, *cons(f)])
        ref.solve(solver="CLARABEL", tol_gap_abs=1e-10, tol_gap_rel=1e-10, tol_feas=1e-10)
    assert ref.status == "optimal"
    assert sol.status in ("optimal", "optimal_unverified"), sol.message
    assert sol.checks.violations["c"] <= sol.checks.tolerance["violation"]
    assert np.max(np.abs(sol.f - f.value)) < 1e-5


@pytest.mark.parametrize("seed", range(2))
def test_an_empty_cone_constraint_is_reported_not_raised(seed):
    """A PSD or SOC constraint the simplex cannot meet (λ_min ≥ 1/2 with trace ≤ 1; a ball of radius
    10⁻² around a point off the simplex): a solver's infeasibility, unverified, named in the answer
    (the SOC's two-part multiplier escaped ``solve()`` as a ValueError before)."""
    rng = np.random.default_rng(300 + seed)
    d = 12
    est = estimate("plain", d, rng)
    c = rng.uniform(0.3, 0.6, d)

    def psd(f):
        M = cp.reshape(f[:9], (3, 3), order="F")
        return (M + M.T) / 2 >> 0.5 * np.eye(3)

    for build in (psd, lambda f: cp.constraints.SOC(cp.Constant(1e-2), f - c)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            sol = Problem(est, "cls", [Simplex(), lambda f, e, b=build: {"c": b(f)}]).solve()
        assert sol.status.startswith("infeasible"), sol.message
