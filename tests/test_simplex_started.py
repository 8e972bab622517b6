"""The dual method's Newton on λ started at a separable's own first λ (dual.grouped.simplex_started,
Separable.lambda_start): the same optimum as the exact reference (tests/_kl_reference.py, bisection,
not the package's code) in fewer passes of the per-value argmin than the default start; no start,
and so no change, for the built-ins."""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest
from _kl_reference import cls_kl_simplex

import ldpopt
from ldpopt.problems import Box, Problem, Simplex
from ldpopt.problems.objectives.builtins import make_objective
from ldpopt.problems.objectives.separable import separable_for
from ldpopt.problems.solvers.structured import solve_structured
from ldpopt.problems.dual.dual import solve_multipliers
from ldpopt.problems.dual.grouped import simplex_started
from ldpopt.problems.dual.structure import compile_constraints

W = 1e-4


def _estimate(d, seed=1):
    counts = np.random.default_rng(seed).multinomial(20 * d, np.arange(1, d + 1) ** -1.3 / np.sum(np.arange(1, d + 1) ** -1.3))
    oracle = ldpopt.oracles.get("oue", 1.0, d)
    return oracle.estimate(oracle.sample_counts(counts, np.random.default_rng(seed)), int(counts.sum()))


@pytest.mark.parametrize("d", [300, 1000])
def test_started_newton_reaches_the_reference_in_fewer_argmin_passes(d):
    est = _estimate(d)
    prior = np.full(d, 1.0 / d)
    pr = Problem(est, lambda f, e: cp.sum_squares(f - e.f_tilde) + W * cp.sum(cp.kl_div(f, prior)), [Simplex()])
    sep = pr.objective.per_value(est)
    st = compile_constraints(pr.constraints, d)
    ref = cls_kl_simplex(est.f_tilde, prior, W)
    calls = {"n": 0}
    argmin = type(sep).argmin

    def counted(self, *a, **k):
        calls["n"] += 1
        return argmin(self, *a, **k)

    type(sep).argmin = counted
    try:
        f, lam, _, info = simplex_started(sep, st)
        started = calls["n"]
        calls["n"] = 0
        f0, lam0, _, _ = solve_multipliers(sep, st)
        default = calls["n"]
    finally:
        type(sep).argmin = argmin
    assert np.max(np.abs(f - ref)) <= 1e-13 and np.max(np.abs(f0 - ref)) <= 1e-13
    assert lam == pytest.approx(lam0, rel=1e-12)
    assert abs(info["lambda_start"] - lam) <= 0.1 * abs(lam)  # the quadratic model is close
    assert started < default


def test_the_route_takes_the_started_path_and_the_answer_is_certified():
    d = 1000
    est = _estimate(d, seed=2)
    prior = np.full(d, 1.0 / d)
    for cons in ([Simplex()], [Simplex(), Box(upper=0.02)]):
        pr = Problem(est, lambda f, e: cp.sum_squares(f - e.f_tilde) + W * cp.sum(cp.kl_div(f, prior)), cons)
        assert "lambda_start" in solve_structured(est, pr.objective, pr.constraints).iterations
        sol = pr.solve(progress=False)
        assert sol.solver == "LDPOPT-STRUCTURED" and sol.status == "optimal" and sol.checks.passed
    ref = cls_kl_simplex(est.f_tilde, prior, W)
    sol = Problem(est, lambda f, e: cp.sum_squares(f - e.f_tilde) + W * cp.sum(cp.kl_div(f, prior)), [Simplex()]).solve(progress=False)
    assert np.max(np.abs(sol.f - ref)) <= sol.checks.error_bound + 1e-15


@pytest.mark.parametrize("objective", ["cls", "weighted-mle", "binomial"])
def test_builtins_have_no_start(objective):
    est = _estimate(200)
    sep = separable_for(make_objective(objective), est)
    assert sep.lambda_start(1.0) is None
    assert simplex_started(sep, compile_constraints(None, 200)) is None


def test_partition_blocks_without_count_groups_take_the_started_solve():
    """PartitionTotals at d = 10⁴: the blocks have too many distinct counts for groups of their own,
    so each block is solved from its quadratic-model start (before: the general dual method's line
    search failed, 1e-2 off the totals, and the interior point answered in 2.2 s). Reference per block
    of mass m: f = m·g with g the exact CLS + (W/m)·KL(g ‖ p/m) optimum on the simplex."""
    d = 10_000
    est = _estimate(d, seed=3)
    truth = est.f_tilde.clip(0) / est.f_tilde.clip(0).sum()
    parts = np.array_split(np.arange(d), 10)
    groups = {f"g{k}": g for k, g in enumerate(parts[:9])}
    totals = {f"g{k}": float(truth[g].sum()) for k, g in enumerate(parts[:9])}
    prior = np.full(d, 1.0 / d)
    from ldpopt.problems import PartitionTotals

    pr = Problem(est, lambda f, e: cp.sum_squares(f - e.f_tilde) + W * cp.sum(cp.kl_div(f, prior)),
                 [Simplex(), PartitionTotals(groups, totals)])
    r = solve_structured(est, pr.objective, pr.constraints)
    assert r.status == "optimal" and r.iterations.get("blocks") == 10
    sol = pr.solve(progress=False)
    assert sol.solver == "LDPOPT-STRUCTURED" and sol.status == "optimal" and sol.checks.passed
    masses = [totals[f"g{k}"] for k in range(9)] + [1.0 - sum(totals.values())]
    for k in (0, 9):  # a group and the pool (the reference takes ~1 s per block)
        g, m = parts[k], masses[k]
        ref = m * cls_kl_simplex(est.f_tilde[g] / m, prior[g] / m, W / m)
        assert np.max(np.abs(sol.f[g] - ref)) <= sol.checks.error_bound + 1e-13
