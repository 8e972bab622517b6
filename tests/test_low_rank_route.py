"""A low-rank quadratic form in a user objective (w‖Uᵀ(f − p)‖², U dense d × k, k small): the interior
point keeps it as a factor beside the sparse Hessian — O(d·k) memory, no d × d matrix — and its answer
agrees with an independent Clarabel referee."""

from __future__ import annotations

import tracemalloc

import cvxpy as cp
import numpy as np
import pytest
from _count_estimates import oue_counts
from _referee import clarabel_referee

from ldpopt.problems import Problem, Simplex, SubsetSum
from ldpopt.problems.objectives.recognise import LOW_RANK_FILL, recognise
from ldpopt.problems.solvers.ipm import SOLVER


def low_rank_objective(d: int, k: int = 3, seed: int = 5, w: float = 10.0):
    U = np.random.default_rng(seed).standard_normal((d, k))
    p = np.full(d, 1.0 / d)

    def func(f, e):
        return (cp.sum_squares(f - e.f_tilde) + 1e-3 * cp.sum(cp.kl_div(f, p))
                + w * cp.sum_squares(U.T @ (f - p)))
    return func, U, p


def test_low_rank_form_is_kept_as_a_factor_and_banded_forms_are_not():
    d = 300
    est = oue_counts(d, 100_000, seed=2)
    func, _, _ = low_rank_objective(d)

    def both(f, e):
        return func(f, e) + cp.sum_squares(f[1:] - f[:-1])

    form = recognise(both, est)
    assert len(form.quads) == 2 and len(form.low_rank) == 1  # UᵀU's fill is d², the differences' ~3d
    A = form.low_rank[0][1]
    assert A.shape == (3, d)
    f = np.random.default_rng(0).random(d) / d
    S, L = form.hessian_parts(f)
    assert L.shape == (3, d) and S.nnz <= 3 * d + LOW_RANK_FILL  # diagonal + the tridiagonal differences
    # the parts add up to the full Hessian (formed here only to check, at small d)
    assert np.allclose((S + L.T @ L).toarray(), form.hessian(f).toarray(), rtol=1e-12, atol=1e-9)


@pytest.mark.parametrize("cons", [lambda d, t: [Simplex()],
                                  lambda d, t: [Simplex(), SubsetSum(np.arange(0, d, 2), float(t[::2].sum()))]],
                         ids=["simplex", "subset"])
def test_low_rank_route_agrees_with_clarabel(cons):
    d = 400
    est = oue_counts(d, 200_000, seed=3)
    func, _, _ = low_rank_objective(d)
    truth = np.clip(est.f_tilde, 0, None)
    truth = truth / truth.sum()
    sol = Problem(est, func, cons(d, truth)).solve(progress=False)
    assert sol.status == "optimal" and sol.solver == SOLVER
    ref = clarabel_referee(func, est, cons(d, truth))
    assert np.max(np.abs(sol.f - ref)) < 1e-7
    eb = sol.checks.error_bound
    assert eb is not None and eb >= np.max(np.abs(sol.f - ref)) - 1e-9


def test_low_rank_route_memory_is_linear_in_d():
    """d = 2·10⁴: a d × d Hessian would be 3.2 GB dense (and AᵀA as a sparse matrix twice that); the
    whole call's Python allocations stay under 64 MB (measured ~22 MB) and it is certified."""
    d = 20_000
    est = oue_counts(d, 400_000, seed=4)
    func, U, p = low_rank_objective(d)
    tracemalloc.start()
    try:
        sol = Problem(est, func, [Simplex()]).solve(progress=False)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert sol.status == "optimal" and sol.solver == SOLVER
    assert peak < 64 * 2**20, f"peak {peak / 2**20:.0f} MB"
    # stationarity of the returned point, independently: ∇J(f) + ν·1 − λ = 0 with λ ≥ 0 on the zeros
    f = sol.f
    g = 2 * (f - est.f_tilde) + 1e-3 * np.log(np.maximum(f, 1e-300) / p) + 20.0 * U @ (U.T @ (f - p))
    free = f > 1e-9
    nu = -np.median(g[free])
    assert np.max(np.abs(g[free] + nu)) < 1e-6 and np.min(g[~free] + nu, initial=0.0) > -1e-6


def test_a_quadratic_with_a_low_rank_form_skips_the_dense_qp_routes():
    """CLS + 10‖Uᵀ(f − p)‖² is a QP: the direct QP route and the cvxpy chain would hold UUᵀ (d² entries);
    it goes to the interior point instead, O(d·k), and agrees with an independent Clarabel solve."""
    from ldpopt.problems.solvers import policy

    d = 3000
    est = oue_counts(d, 300_000, seed=6)
    U = np.random.default_rng(1).standard_normal((d, 3))
    p = np.full(d, 1.0 / d)

    def func(f, e):
        return cp.sum_squares(f - e.f_tilde) + 10 * cp.sum_squares(U.T @ (f - p))

    pr = Problem(est, func, [Simplex()])
    assert policy.direct_qp_solver(pr) is None and not policy.small_user_qp(pr) and policy.uses_sqp(pr)
    tracemalloc.start()
    try:
        sol = pr.solve(progress=False)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert sol.status == "optimal" and sol.solver == SOLVER
    assert peak < 32 * 2**20, f"peak {peak / 2**20:.0f} MB"  # UUᵀ alone would be 72 MB dense
    ref = clarabel_referee(func, est, [Simplex()])
    # the referee is looser here (1.5e-7 from PIQP at 1e-12, where ldpopt's point is 1.5e-8 from it):
    # close to it, and never worse on the true J
    assert np.max(np.abs(sol.f - ref)) < 1e-6
    assert pr.objective.value(sol.f, est) <= pr.objective.value(np.maximum(ref, 0.0), est) + 1e-12
