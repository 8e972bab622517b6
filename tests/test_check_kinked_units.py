"""The check's units on a cvxpy objective it reads only through cvxpy's gradient: kinks crossed when
f moves by 1/d are not a curvature. Generated objectives — CLS or the linear f̃·f, plus
Σ_k W_k·Σ pos(A_k f − b_k) with A_k an index, a running sum, a running sum of one, or a dense row,
W_k up to 1e5, each kink placed within 1/d of a point of the simplex — and points moved 30–100
accuracy_tol (then put back on the simplex) from a tightly solved reference (Clarabel on the
user's own expression, no ldpopt route): ldpopt's check never calls a planted point ``optimal``
(for the linear objective, whose optimum need not be unique, one whose objective is above the
reference's). Before the units were first order, a gradient change of 2e7 where ∇J was 2.5 (kinks
of a running sum of one crossed by the move) let 14 of 40 such plants pass
(``benchmarks/bench_kinked_units.py``)."""

from __future__ import annotations

import warnings

import cvxpy as cp
import numpy as np
from conftest import examples
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ldpopt
from ldpopt.problems.check.verdict import accuracy_tol, check_solution, status_after_check


def _kinked(seed: int):
    """(est, J, linear, rng): CLS or a linear objective plus one to three weighted sums of kinks of an
    affine map of f."""
    rng = np.random.default_rng(seed)
    d = int(rng.integers(8, 48))
    counts = rng.multinomial(5_000, rng.dirichlet(np.ones(d)))
    est = ldpopt.oracles.get("grr", 1.0, d).estimate(counts, 5_000)
    near = rng.dirichlet(np.full(d, 2.0))  # the kinks sit within 1/d of this point of the simplex
    lower = np.tril(np.ones((d, d)))
    terms = []
    for _ in range(int(rng.integers(1, 4))):
        kind = int(rng.integers(4))
        if kind == 0:
            i = int(rng.integers(d))
            a, A = (lambda f, i=i: f[i]), np.eye(d)[[i]]
        elif kind == 1:
            a, A = (lambda f: cp.cumsum(f)), lower
        elif kind == 2:
            a, A = (lambda f: cp.cumsum(cp.cumsum(f))), lower @ lower
        else:
            row = rng.standard_normal(d)
            a, A = (lambda f, row=row: row @ f), row[None, :]
        b = A @ near + rng.uniform(0.05, 0.95, A.shape[0]) * A.sum(axis=1) / d
        terms.append((a, b if A.shape[0] > 1 else float(b[0]), 10.0 ** rng.uniform(2, 5)))

    linear = bool(rng.random() < 0.5)

    def J(f, e):
        base = e.f_tilde @ f if linear else cp.sum_squares(f - e.f_tilde)
        return base + sum(w * cp.sum(cp.pos(a(f) - b)) for a, b, w in terms)

    return est, J, linear, rng


def _reference(est, J) -> np.ndarray:
    x = cp.Variable(est.d)
    prob = cp.Problem(cp.Minimize(J(x, est)), [x >= 0, cp.sum(x) == 1])
    prob.solve(solver="CLARABEL", tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12)
    assert prob.status == "optimal", prob.status
    return np.asarray(x.value, dtype=np.float64)


def _plant(est, J, linear: bool, ref: np.ndarray, rng):
    """(plant, J(plant) − J(ref), judged): ref moved by 30–100 accuracy_tol along a zero-sum direction
    and put back on the simplex; ``judged`` False for the linear objective where the plant's value is
    not above the reference's (another optimum, or within the reference's accuracy)."""
    d = est.d
    step = rng.standard_normal(d)
    step -= step.mean()
    plant = np.clip(ref + step * rng.uniform(30, 100) * accuracy_tol(d) / np.abs(step).max(), 0.0, None)
    plant /= plant.sum()
    above = float(J(cp.Constant(plant), est).value) - float(J(cp.Constant(ref), est).value)
    return plant, above, not linear or above > 1e-6 * float(np.max(np.abs(est.f_tilde)))


@settings(max_examples=examples(12), deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1))
def test_a_point_off_the_optimum_of_a_kinked_objective_is_never_optimal(seed):
    est, J, linear, rng = _kinked(seed)
    d = est.d
    ref = _reference(est, J)
    problem = ldpopt.Problem(est, J)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        duals = problem.solve(progress=False).duals  # the solver's multipliers, as a route hands them on
    plant, above, judged = _plant(est, J, linear, ref, rng)
    off = float(np.max(np.abs(plant - ref)))
    assert off > 10 * accuracy_tol(d)  # far beyond the check's accuracy and the reference's own
    if not judged:
        return  # another optimum of the linear objective, or one within the reference's accuracy
    checks = check_solution(problem, plant, duals)
    assert status_after_check("optimal", checks) != "optimal", (d, off / accuracy_tol(d), above, checks.summary())
