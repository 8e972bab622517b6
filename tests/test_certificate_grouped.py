"""The certificate once per distinct-count group (certificate.certify_grouped) against the elementwise
certificate of the same point (the referee: every value taken on its own), and its distance bound
against an exact reference optimum (tests/_kl_reference.py, bisection, not the package's code)."""

from __future__ import annotations

from types import SimpleNamespace

import cvxpy as cp
import numpy as np
import pytest
from _kl_reference import cls_kl_simplex

import ldpopt
from ldpopt.problems import Box, Problem, Simplex, SubsetSum
from ldpopt.problems.check.certificate import _certify_full, certify, certify_grouped
from ldpopt.problems.objectives.builtins import make_objective
from ldpopt.problems.objectives.separable import separable_for
from ldpopt.problems.dual.grouped import count_groups, simplex_grouped
from ldpopt.problems.dual.structure import compile_constraints

W = 1e-4
D = 6000


def _estimate(d, seed=1):
    counts = np.random.default_rng(seed).multinomial(50 * d, np.arange(1, d + 1) ** -1.2 / np.sum(np.arange(1, d + 1) ** -1.2))
    oracle = ldpopt.oracles.get("oue", 1.0, d)
    return oracle.estimate(oracle.sample_counts(counts, np.random.default_rng(seed)), int(counts.sum()))


def _kl(d):
    prior = np.full(d, 1.0 / d)
    return lambda f, e: cp.sum_squares(f - e.f_tilde) + W * cp.sum(cp.kl_div(f, prior))


def _declared_kl(d):
    """The same J declared value by value (numpy h, h', h''; elementwise: the prior a float)."""
    from ldpopt.problems import SeparableObjective

    p = 1.0 / d
    with np.errstate(divide="ignore", invalid="ignore"):
        return SeparableObjective(
            lambda f, e: (f - e.f_tilde) ** 2 + W * (np.where(f > 0, f * np.log(f / p), 0.0) - f + p),
            lambda f, e: 2.0 * (f - e.f_tilde) + W * np.log(f / p), lambda f, e: 2.0 + W / f, name="cls+kl",
            curvature=lambda l, u, e: 2.0 + W / np.maximum(u, 1e-300))


@pytest.fixture(scope="module", params=["recognised", "declared"])
def case(request):
    est = _estimate(D)
    obj = _kl(D) if request.param == "recognised" else _declared_kl(D)
    pr = Problem(est, obj, [Simplex()])
    sep = pr.objective.per_value(est)
    st = compile_constraints(pr.constraints, D)
    f, lam, y, _ = simplex_grouped(sep, st)
    ref = cls_kl_simplex(est.f_tilde, np.full(D, 1.0 / D), W)
    return SimpleNamespace(est=est, obj=obj, sep=sep, st=st, f=f, lam=lam, y=y, ref=ref)


MAXIMA = ("dual_violation", "complementarity", "stationarity", "flat_values", "feas_tol")
SUMS = ("primal_value", "dual_value")


@pytest.mark.parametrize("point", ["optimum", "mixed with uniform"])
def test_grouped_certificate_is_the_elementwise_one_to_rounding(case, point):
    sep, st, f, lam, y, ref = case.sep, case.st, case.f, case.lam, case.y, case.ref
    assert count_groups(sep).k < D // 4
    if point == "mixed with uniform":  # constant per count still; off the optimum: a gap to weigh
        f = 0.9 * f + 0.1 / D
    got = certify_grouped(sep, st, f, lam, y, None, None)
    full = _certify_full(sep, st, f, lam, y, None, None)
    assert got is not None
    for k in MAXIMA:
        assert getattr(got, k) == pytest.approx(getattr(full, k), rel=1e-9, abs=1e-300), k
    for k in SUMS:
        assert getattr(got, k) == pytest.approx(getattr(full, k), rel=1e-12), k
    # the gap and the bounds: the same to the rounding of their sums (the floors, and λ times the
    # rounding of Σ f: the elementwise Σ f is 1 − 2⁻⁵² at the optimum, the weighted one exactly 1)
    sum_rounding = abs(lam) * 2 * D * np.finfo(float).eps
    assert abs(got.gap - full.gap) <= 4 * max(got.gap_floor, full.gap_floor) + sum_rounding + 1e-12 * abs(full.gap)
    for a, b in ((got.distance_linf, full.distance_linf), (got.distance_l2, full.distance_l2)):
        assert abs(a - b) <= 1e-6 * b + 4 * max(got.distance_rounding, full.distance_rounding, 1e-16)
    assert sorted(got.multipliers) == sorted(full.multipliers)
    for k, v in full.multipliers.items():
        assert np.array_equal(np.asarray(got.multipliers[k]), np.asarray(v)), k
    # the bound holds against the exact optimum (not rounding: the mixed point is ~1e-5 away)
    err = float(np.max(np.abs(f - ref)))
    assert err <= got.distance_linf + got.distance_rounding + 1e-15
    if point == "mixed with uniform":
        assert got.gap > 100 * got.gap_floor and err > 1e-7


def test_certify_takes_the_grouped_path_for_a_user_objective_and_the_solution_passes(case):
    est, sep, st, f, lam, y, ref = case.est, case.sep, case.st, case.f, case.lam, case.y, case.ref
    cert = certify(sep, st, f, lam, y, None, None)
    assert cert.feasible and cert.distance_linf + cert.distance_rounding <= 1e-12
    sol = Problem(est, case.obj, [Simplex()]).solve(progress=False)
    assert sol.solver == "LDPOPT-STRUCTURED" and sol.status == "optimal" and sol.checks.passed
    assert np.max(np.abs(sol.f - ref)) <= sol.checks.error_bound + 1e-15


def test_grouped_certificate_refused_where_it_does_not_apply(case):
    est, sep, st, f, lam, y = case.est, case.sep, case.st, case.f, case.lam, case.y
    g = count_groups(sep)
    # a point not constant on a count: one value of a group of several moved
    big = int(np.flatnonzero(g.weights >= 2)[0])
    v = int(np.flatnonzero(g.inv == big)[0])
    f2 = f.copy()
    f2[v] = np.nextafter(f2[v], 1.0)
    assert certify_grouped(sep, st, f2, lam, y, None, None) is None
    # rows: the elementwise certificate
    st_rows = compile_constraints([Simplex(), SubsetSum(np.arange(D // 2), 0.5)], D)
    assert certify_grouped(sep, st_rows, f, lam, np.zeros(1), None, None) is None
    # a built-in's separable keeps its certificate bitwise (group_certificate is False)
    bsep = separable_for(make_objective("binomial"), est)
    assert count_groups(bsep) is not None and not bsep.group_certificate
    assert certify_grouped(bsep, st, f, lam, y, None, None) is None


def test_grouped_certificate_with_a_box_and_its_multipliers(case):
    est = case.est
    pr = Problem(est, _kl(D), [Simplex(), Box(upper=0.05)])
    sep = pr.objective.per_value(est)
    st = compile_constraints(pr.constraints, D)
    f, lam, y, _ = simplex_grouped(sep, st)
    assert np.any(f == 0.05)  # the box binds
    from ldpopt.problems.dual.multipliers import duals_dict

    duals = duals_dict(st, f, lam, y, sep.d1(f) + lam)
    got = certify_grouped(sep, st, f, lam, y, duals, None)
    full = _certify_full(sep, st, f, lam, y, duals, None)
    assert got is not None and got.multipliers is duals
    for k in MAXIMA:
        assert getattr(got, k) == pytest.approx(getattr(full, k), rel=1e-9, abs=1e-300), k
    assert got.primal_value == pytest.approx(full.primal_value, rel=1e-12)
    assert got.distance_linf + got.distance_rounding <= 1e-12
