"""The block path of the structured solver (dual/blocks.py): disjoint subset sums and
partition totals, refereed by cvxpy (Clarabel) and by the general dual method."""

import warnings

import numpy as np
import pytest

from ldpopt import Estimate
from ldpopt.problems import PartitionTotals, Problem, Simplex, SubsetSum
from ldpopt.problems.objectives.builtins import make_objective
from ldpopt.problems.dual import blocks as blocks_mod
from ldpopt.problems.solvers.structured import compile_constraints, separable_for, solve_structured
from ldpopt.problems.dual.dual import solve_multipliers


def _unary(d, n, seed, eps=1.0):
    rng = np.random.default_rng(seed)
    p, q = 0.5, 1.0 / (1.0 + np.exp(eps))
    true = rng.dirichlet(np.full(d, 0.3))
    c = rng.binomial(n, q + (p - q) * true).astype(float)
    return Estimate.from_counts(c, n, eps, p, q), true


def _partition(d, k, true, seed=0, cover=0.8):
    """k disjoint groups over the first `cover` share of a random permutation, at their true totals."""
    perm = np.random.default_rng(seed).permutation(d)
    parts = np.array_split(perm[: int(cover * d)], k)
    groups = {f"g{i}": g for i, g in enumerate(parts)}
    totals = {k_: float(true[g].sum()) for k_, g in groups.items()}
    if cover == 1.0:  # totals of the whole mass that sum to 1 exactly (float sums need not: infeasible)
        keys = list(totals)
        totals = {k_: np.round(totals[k_] * 2.0**40) / 2.0**40 for k_ in keys[:-1]}
        totals[keys[-1]] = 1.0 - sum(totals.values())
    return PartitionTotals(groups, totals)


def _cases(d, true):
    perm = np.random.default_rng(1).permutation(d)
    S, T = perm[:30], perm[30:70]
    mass = float(true[S].sum())
    return {
        "eq": [Simplex(), SubsetSum(S, mass)],
        "le_active": [Simplex(), SubsetSum(S, 0.5 * mass, "<=")],
        "le_inactive": [Simplex(), SubsetSum(S, min(1.0, 3 * mass + 0.1), "<=")],
        "ge_active": [Simplex(), SubsetSum(S, min(0.9, 2 * mass + 0.05), ">=")],
        "ge_inactive": [Simplex(), SubsetSum(S, 0.2 * mass, ">=")],
        "two_ineq": [Simplex(), SubsetSum(S, 0.5 * mass, "<="), SubsetSum(T, float(true[T].sum()) + 0.05, ">=")],
        "zero_mass": [Simplex(), SubsetSum(S, 0.0)],
        "partition2": [Simplex(), _partition(d, 2, true)],
        "partition3": [Simplex(), _partition(d, 3, true)],
        "partition50": [Simplex(), _partition(d, 50, true)],
        "partition_cover": [Simplex(), _partition(d, 3, true, cover=1.0)],
    }


def _kw(objective, est, d):
    if objective == "posterior":  # per-value variances: no closed form, the segmented Newton
        return dict(mean=np.clip(est.f_tilde, 0, None) + 1e-3, variance=np.linspace(1, 2, d) * 1e-4)
    return {}


CASES = sorted(_cases(200, np.full(200, 1 / 200)))


@pytest.mark.parametrize("objective", ["cls", "weighted-mle", "posterior"])
@pytest.mark.parametrize("case", CASES)
def test_blocks_match_cvxpy_and_the_dual_method(objective, case):
    d = 200
    est, true = _unary(d, 10**5, 4)
    cons = _cases(d, true)[case]
    kw = _kw(objective, est, d)
    r = solve_structured(est, objective, cons, **kw)
    assert "blocks" in r.iterations, r.iterations  # the block path answered (not the fallback)
    assert r.status == "optimal" and r.kkt_residual <= 1e-12, r.message
    assert r.certificate.feasible and r.certificate.relative_gap <= 1e-12 or r.certificate.gap <= 4 * r.certificate.gap_floor
    # the slow, obviously general path: Newton on all multipliers
    sep = separable_for(make_objective(objective, **kw), est)
    f2, lam2, y2, _ = solve_multipliers(sep, compile_constraints(cons, d))
    assert np.max(np.abs(r.f - f2)) <= 1e-12
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sol = Problem(est, objective, cons, **kw).solve(solver="CLARABEL")
    assert sol.status == "optimal"
    # the referee's accuracy (Clarabel stops at ~1e-8 relative gap); 1/(10d) = 5e-4 would fail
    assert np.max(np.abs(r.f - sol.f)) <= (1e-8 if objective == "cls" else 1e-6)
    assert r.optimal_value <= sol.optimal_value + 1e-9 * abs(sol.optimal_value)
    if case in ("eq", "le_active", "ge_active", "two_ineq", "partition2", "partition3", "partition50"):
        # unique row multipliers here (every block has interior values): cvxpy's duals, same signs
        for name, v in sol.duals.items():
            if name == "nonnegative":
                continue
            scale = max(abs(r.duals["sum"]), 1e-12)
            assert np.max(np.abs(np.asarray(r.duals[name]) - np.asarray(v))) <= 1e-4 * scale, name


def test_inequality_rows_active_and_inactive():
    d = 200
    est, true = _unary(d, 10**5, 4)
    cs = _cases(d, true)
    S = cs["eq"][1].indices
    r = solve_structured(est, "cls", cs["le_inactive"])
    assert r.duals["subset_sum"] == 0.0 and np.sum(r.f[S]) < cs["le_inactive"][1].value
    r = solve_structured(est, "cls", cs["le_active"])
    assert r.duals["subset_sum"] > 0 and abs(np.sum(r.f[S]) - cs["le_active"][1].value) <= 1e-15
    r = solve_structured(est, "cls", cs["ge_active"])
    assert r.duals["subset_sum"] > 0 and abs(np.sum(r.f[S]) - cs["ge_active"][1].value) <= 1e-15


def test_zero_mass_block_is_all_zero():
    d = 200
    est, true = _unary(d, 10**5, 4)
    cons = _cases(d, true)["zero_mass"]
    for obj in ("cls", "weighted-mle", "binomial"):
        r = solve_structured(est, obj, cons)
        assert r.status == "optimal" and np.all(r.f[cons[1].indices] == 0.0)
        assert abs(np.sum(r.f) - 1.0) <= 1e-14


def test_many_blocks_segmented_newton_equals_per_block_closed_forms(monkeypatch):
    d = 3000
    est, true = _unary(d, 10**6, 7)
    cons = [Simplex(), _partition(d, 200, true, seed=3)]  # 201 blocks: above _LOOP_MAX, the segmented path
    for obj in ("cls", "weighted-mle", "binomial"):
        r = solve_structured(est, obj, cons)
        assert r.status == "optimal" and r.iterations["blocks"] == 201 and r.iterations["block_newton_iterations"] > 0
        monkeypatch.setattr(blocks_mod, "_LOOP_MAX", 10**6)
        r2 = solve_structured(est, obj, cons)
        monkeypatch.undo()
        assert r2.status == "optimal"
        assert np.max(np.abs(r.f - r2.f)) <= 1e-12
        sep = separable_for(make_objective(obj), est)
        f3, *_ = solve_multipliers(sep, compile_constraints(cons, d))
        assert np.max(np.abs(r.f - f3)) <= 1e-12


def test_infeasible_totals_raise_and_problem_is_not_optimal():
    d = 50
    est, true = _unary(d, 10**4, 2)
    bad = [
        [Simplex(), SubsetSum(np.arange(10), 1.2)],          # more than the whole mass
        [Simplex(), SubsetSum(np.arange(10), -0.1)],         # negative total of values ≥ 0
        [Simplex(), PartitionTotals({"a": np.arange(25), "b": np.arange(25, 50)}, {"a": 0.3, "b": 0.3})],
    ]
    for cons in bad:
        with pytest.raises(ValueError, match="infeasible"):
            solve_structured(est, "cls", cons)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            sol = Problem(est, "cls", cons).solve()
        assert sol.status != "optimal" and not sol.success


def test_problem_solve_routes_partition_totals_to_the_structured_solver():
    d = 300
    est, true = _unary(d, 10**5, 5)
    cons = [Simplex(), _partition(d, 5, true)]
    sol = Problem(est, "cls", cons).solve()
    assert sol.status == "optimal" and sol.solver == "LDPOPT-STRUCTURED"
    assert set(sol.duals) >= {"partition", "sum", "nonnegative"} and np.shape(sol.duals["partition"]) == (5,)


def test_overlapping_subsets_take_the_general_path():
    d = 100
    est, true = _unary(d, 10**5, 6)
    cons = [Simplex(), SubsetSum(np.arange(20), 0.3), SubsetSum(np.arange(10, 30), 0.3)]
    r = solve_structured(est, "cls", cons)
    assert "blocks" not in r.iterations and r.status == "optimal"


def test_repeated_subset_index_is_an_error_naming_the_argument():
    est, _ = _unary(20, 10**3, 1)
    with pytest.raises(ValueError, match="indices must not repeat"):
        Problem(est, "cls", [Simplex(), SubsetSum([1, 2, 1], 0.2)]).solve()
