"""Solver-free certificates: closed forms certify, planted errors are caught."""

import numpy as np
import pytest

from ldpopt import Estimate
from ldpopt.methods.bayes import power
from ldpopt.methods.mle import mle_apx
from ldpopt.methods.normalize import project_simplex
from ldpopt.problems import Problem, Simplex, SubsetSum
from ldpopt.problems.check.certificate import certificate
from ldpopt.problems.solvers.structured import solve_structured


def _oue(d, n, seed, eps=1.0):
    rng = np.random.default_rng(seed)
    p, q = 0.5, 1.0 / (1.0 + np.exp(eps))
    true = rng.zipf(1.5, size=d).astype(float)
    true /= true.sum()
    c = rng.binomial(n, q + (p - q) * true).astype(float)
    return Estimate.from_counts(c, n, eps, p, q)


D = 42_178


@pytest.fixture(scope="module")
def big():
    return _oue(D, 10**6, 0)


def test_norm_sub_certifies(big):
    f = project_simplex(big.f_tilde)
    c = certificate("cls", None, big, f)
    assert c.feasible and c.dual_violation == 0.0
    assert abs(c.relative_gap) <= 1e-12 and c.stationarity <= 1e-12
    assert c.passes(1 / (100 * D))
    # recovered multiplier: λ = 2τ with τ the Norm-Sub shift (f = max(f̃ − τ, 0))
    s = f > 0
    tau = float(np.mean(big.f_tilde[s] - f[s]))
    assert c.multipliers["sum"] == pytest.approx(2 * tau, rel=1e-12)


def test_mle_apx_certifies(big):
    c = certificate("weighted-mle", None, big, mle_apx(big))
    assert c.feasible and abs(c.relative_gap) <= 1e-12 and c.stationarity <= 1e-12
    assert c.passes(1 / (100 * D))


def test_power_ns_certifies():
    est = _oue(2000, 10**5, 1)
    m = power(est)
    c = certificate("posterior", None, est, project_simplex(m), mean=m)
    assert c.feasible and abs(c.relative_gap) <= 1e-12 and c.passes(1 / (100 * 2000))


def test_planted_off_by_a_tenth_of_the_frequency_scale_is_caught(big):
    f_star = project_simplex(big.f_tilde)
    # feasible but wrong: the projection of f̃ moved by ±1/(10d)
    delta = np.where(np.arange(D) % 2 == 0, 1.0, -1.0) / (10 * D)
    bad = project_simplex(big.f_tilde + delta)
    c = certificate("cls", None, big, bad)
    assert c.feasible
    assert c.gap > 1e6 * c.gap_floor and c.relative_gap > 1e3 * 1e-12
    assert not c.passes(1 / (100 * D))
    assert c.distance_linf >= np.max(np.abs(bad - f_star))  # the bound holds
    # Norm-Sub with its shift off by 1/(10d): mass error ≈ |support|/(10d)
    s = f_star > 0
    tau = float(np.mean(big.f_tilde[s] - f_star[s]))
    f2 = np.maximum(big.f_tilde - tau - 1 / (10 * D), 0.0)
    c2 = certificate("cls", None, big, f2)
    assert not c2.feasible and c2.violations["sum"] > 1e3 * c2.feas_tol and not c2.passes(1 / (100 * D))
    # no rows: the argmin bound needs no feasibility and still bounds the true distance
    assert np.max(np.abs(f2 - f_star)) <= c2.distance_linf < np.inf


def test_mass_error_1e6_is_caught():
    est = _oue(5000, 10**6, 2)
    f = project_simplex(est.f_tilde) * (1 + 1e-6)
    c = certificate("cls", None, est, f)
    assert not c.feasible and c.violations["sum"] == pytest.approx(1e-6, rel=1e-6)


def test_bound_holds_and_solver_duals_certify():
    est = _oue(300, 10**5, 3)
    cons = [Simplex(), SubsetSum(np.arange(5), 0.4)]
    r = solve_structured(est, "weighted-mle", cons)
    c = certificate("weighted-mle", cons, est, r.f, r.duals)
    assert c.feasible and abs(c.relative_gap) <= 1e-12
    # a feasible point away from the optimum: the bound must cover the true distance
    g = 0.9 * r.f + 0.1 * solve_structured(est, "cls", cons).f
    cg = certificate("weighted-mle", cons, est, g, r.duals)
    assert cg.feasible and cg.gap > 0
    assert cg.distance_linf >= np.max(np.abs(g - r.f))
    assert cg.distance_l2 >= np.linalg.norm(g - r.f)


def test_cvxpy_solution_certified_with_its_duals():
    est = _oue(200, 10**5, 4)
    sol = Problem(est, "cls").solve(solver="CLARABEL")
    c = certificate("cls", None, est, sol.f, sol.duals, feas_tol=1e-8)
    assert c.feasible and c.gap >= -1e-12 and c.distance_linf <= 1e-4
    # wrong-sign duals are reported
    bad = dict(sol.duals, nonnegative=-np.abs(sol.duals["nonnegative"]) - 1.0)
    assert certificate("cls", None, est, sol.f, bad).dual_violation >= 1.0


def test_multipliers_missing_is_an_error():
    est = _oue(50, 10**4, 5)
    with pytest.raises(ValueError, match="sum"):
        certificate("cls", None, est, project_simplex(est.f_tilde), {"nonnegative": np.zeros(50)})
