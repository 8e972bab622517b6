"""ldpopt's check of a simplex-type closed form on the array namespace (ldpopt.xp.check)
gives the numbers of ldpopt.problems.check.verdict.check_solution within 1e-12 and the same verdict, on the
closed forms' own points (certified) and on points moved off the optimum or off the simplex (failed)."""

from __future__ import annotations

import numpy as np
import pytest

from ldpopt import oracles
from ldpopt.problems import Problem
from ldpopt.problems.check.verdict import check_solution
from ldpopt.xp import check as xp_check
from ldpopt.xp import forms as xp


def _estimates():
    out = []
    for seed, (name, eps, d, n, conc) in enumerate([("grr", 1.0, 50, 10**4, 0.3), ("oue", 0.5, 1000, 10**5, 0.3),
                                                    ("olh", 2.0, 20000, 10**6, 0.1), ("hr", 4.0, 3, 100, 5.0)]):
        gen = np.random.default_rng(200 + seed)
        out.append(oracles.get(name, eps, d).simulate(gen.multinomial(n, gen.dirichlet(np.full(d, conc))), gen))
    return out


def _points(est, objective):
    """The closed form's point, one with 0.1/d of mass moved between two support values (off the
    optimum by 10× accuracy_tol), one shifted off Σ f = 1 and one off it by 1e-13, within the
    certificate's tolerance (its √ bound is then taken at a feasible point made from f)."""
    f = xp.norm_sub(est.f_tilde) if objective == "cls" else xp.mle_apx(est.counts.astype(float), est.n, est.p, est.q)
    sup = np.flatnonzero(f > 0.2 / est.d)
    moved = f.copy()
    if sup.size >= 2:
        moved[sup[0]] += 0.1 / est.d
        moved[sup[1]] -= 0.1 / est.d
    return {"closed form": (f, True), "moved": (moved, sup.size < 2), "off the simplex": (f + 1e-4 / est.d, False),
            "slightly off": (np.where(f > 0, f * (1 + 1e-13), 0.0), True)}


def _terms(est, objective):
    return xp_check.Cls(est.f_tilde) if objective == "cls" else xp_check.WeightedMLE(est.counts, est.n, est.p, est.q)


@pytest.mark.parametrize("objective", ["cls", "weighted-mle"])
@pytest.mark.parametrize("est", _estimates(), ids=lambda e: f"{e.meta.get('oracle')}-{e.d}")
def test_device_check_equals_the_cpu_check(est, objective):
    problem = Problem(est, objective)
    for label, (f, ok) in _points(est, objective).items():
        got = xp_check.check_simplex(f, _terms(est, objective))
        want = check_solution(problem, f, {"nonnegative": np.asarray(got.duals["nonnegative"]),
                                           "sum": float(got.duals["sum"])})
        assert got.passed == want.passed == ok, (label, got.failed, want.failed)
        for key in ("aggregate_violation", "stationarity", "dual_infeasibility", "gap", "error_bound"):
            assert abs(getattr(got, key) - getattr(want, key)) <= 1e-12, (label, key, getattr(got, key), getattr(want, key))
        for key, v in want.violations.items():
            assert abs(got.violations[key] - v) <= 1e-12, (label, key)
        # the recovered multiplier is the one the CPU certificate recovers from f
        assert abs(got.duals["sum"] - want.certificate.multipliers["sum"]) <= 1e-12 * max(1.0, abs(got.duals["sum"]))


def test_device_check_of_a_point_with_a_non_finite_entry_fails():
    f = np.array([0.5, np.nan, 0.5])
    got = xp_check.check_simplex(f, xp_check.Cls(np.array([0.5, 0.2, 0.3])))
    assert not got.passed and got.failed == ["no finite point returned"]


@pytest.mark.gpu
def test_device_check_on_cupy_equals_numpy():
    cupy = pytest.importorskip("cupy", reason="needs CuPy and a CUDA GPU (the 'gpu' extra)")
    est = _estimates()[2]
    for objective in ("cls", "weighted-mle"):
        for f, _ in _points(est, objective).values():
            terms_dev = (xp_check.Cls(cupy.asarray(est.f_tilde)) if objective == "cls" else
                         xp_check.WeightedMLE(cupy.asarray(est.counts), est.n, est.p, est.q))
            got, want = xp_check.check_simplex(cupy.asarray(f), terms_dev), xp_check.check_simplex(f, _terms(est, objective))
            assert got.passed == want.passed
            assert all(abs(getattr(got, k) - getattr(want, k)) <= 1e-12 for k in ("stationarity", "gap", "error_bound"))
