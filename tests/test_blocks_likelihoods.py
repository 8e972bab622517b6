"""The block path for the exact likelihoods (binomial, multinomial): each block by the plain simplex's
grouped fast path (dual/blocks.py + grouped.py), certified by the block-wise argmin bound
(certificate.py) that ldpopt's check reuses. Referees: the general dual method (the block
path switched off), the SQP route (cvxpy), and the true distance of a perturbed point."""

import importlib
import warnings

import numpy as np
import pytest

from ldpopt import Estimate
from ldpopt.problems import PartitionTotals, Problem, Simplex, SubsetSum
from ldpopt.problems.check.certificate import _certify_full, certify, certify_on_support
from ldpopt.problems.objectives.builtins import make_objective
from ldpopt.problems.solvers.structured import compile_constraints, separable_for, solve_structured
from ldpopt.problems.solvers.structured import solver as solver_mod

cert_mod = importlib.import_module("ldpopt.problems.check.certificate")  # the package exports a function of that name


def _oue(d, n, seed, eps=1.0):
    rng = np.random.default_rng(seed)
    p, q = 0.5, 1.0 / (1.0 + np.exp(eps))
    true = rng.dirichlet(np.full(d, 0.3))
    c = rng.binomial(n, q + (p - q) * true).astype(float)
    return Estimate.from_counts(c, n, eps, p, q, oracle="oue"), true


def _grr(d, n, seed, eps=1.0):
    rng = np.random.default_rng(seed)
    p, q = np.exp(eps) / (np.exp(eps) + d - 1), 1.0 / (np.exp(eps) + d - 1)
    true = rng.dirichlet(np.full(d, 0.3))
    c = rng.multinomial(n, q + (p - q) * true).astype(float)
    return Estimate.from_counts(c, n, eps, p, q, oracle="grr"), true


def _data(objective, d, seed=3):
    # few distinct counts (the grouped path's condition: K <= |block|/4)
    return _oue(d, 10**4, seed) if objective == "binomial" else _grr(d, 10**5, seed)


def _cases(d, true):
    perm = np.random.default_rng(1).permutation(d)
    S = perm[: d // 2]
    mass = float(true[S].sum())
    groups = {f"g{i}": g for i, g in enumerate(np.array_split(perm[: int(0.8 * d)], 3))}
    return {
        "eq": [Simplex(), SubsetSum(S, mass)],
        "le_active": [Simplex(), SubsetSum(S, 0.5 * mass, "<=")],
        "ge_inactive": [Simplex(), SubsetSum(S, 0.2 * mass, ">=")],
        "partition": [Simplex(), PartitionTotals(groups, {k: float(true[g].sum()) for k, g in groups.items()})],
    }


def _general(monkeypatch, est, objective, cons):
    """The same call with the block path switched off: the general dual method answers."""
    monkeypatch.setattr(solver_mod, "blocks_fast", lambda sep, st: None)
    r = solve_structured(est, objective, cons)
    monkeypatch.undo()
    assert "blocks" not in r.iterations and r.status == "optimal", r.message
    return r


@pytest.mark.parametrize("objective", ["binomial", "multinomial"])
@pytest.mark.parametrize("case", ["eq", "le_active", "ge_inactive", "partition"])
def test_grouped_blocks_match_the_general_method_and_sqp(monkeypatch, objective, case):
    d = 4000
    est, true = _data(objective, d)
    cons = _cases(d, true)[case]
    r = solve_structured(est, objective, cons)
    assert "blocks" in r.iterations and r.iterations.get("distinct_counts", 0) > 0, r.iterations
    assert r.status == "optimal" and r.kkt_residual <= 1e-12, r.message
    g = _general(monkeypatch, est, objective, cons)
    assert np.max(np.abs(r.f - g.f)) <= 1e-12
    for name in r.duals:
        if name != "nonnegative":
            assert np.allclose(r.duals[name], g.duals[name], rtol=1e-7, atol=1e-9 * abs(r.duals["sum"])), name
    S = cons[1].indices if isinstance(cons[1], SubsetSum) else None
    if case == "le_active":
        assert r.duals["subset_sum"] > 0 and abs(np.sum(r.f[S]) - cons[1].value) <= 1e-15
    if case == "ge_inactive":
        assert r.duals["subset_sum"] == 0.0 and np.sum(r.f[S]) > cons[1].value
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sol = Problem(est, objective, cons).solve(solver="SQP")
    assert sol.status == "optimal"
    assert np.max(np.abs(r.f - sol.f)) <= 1e-6  # the SQP route's own accuracy; 1/(10d) = 2.5e-5 would fail


@pytest.mark.parametrize("objective", ["binomial", "multinomial"])
def test_user_call_reuses_the_solvers_certificate(monkeypatch, objective):
    """With == rows the solver's certificate resolves f* to rounding (the block-wise argmin bound),
    so ldpopt's check takes it as is: recomputing it would call certificate(), made to fail here."""
    d = 4000
    est, true = _data(objective, d)
    for case in ("eq", "partition"):
        cons = _cases(d, true)[case]
        r = solve_structured(est, objective, cons)
        c = r.certificate
        assert np.isfinite(c.distance_argmin) and c.distance_linf <= max(c.distance_rounding, 1e-13)

        def fail(*a, **k):
            raise AssertionError("the check recomputed the certificate")

        monkeypatch.setattr(cert_mod, "certificate", fail)
        sol = Problem(est, objective, cons).solve()
        monkeypatch.undo()
        assert sol.solver == "LDPOPT-STRUCTURED" and sol.status == "optimal"
        assert sol.checks.passed and sol.checks.error_bound <= 1e-11


@pytest.mark.parametrize("objective", ["binomial", "multinomial", "cls"])
def test_block_argmin_bound_covers_the_true_distance_and_is_linear(objective):
    """Move δ of mass inside one block (f stays feasible): the bound is ≥ the true ‖f − f*‖∞ and
    within a small factor of it, where the √(2 gap/μ) bound is of order √δ."""
    d = 4000
    est, true = _data(objective, d)
    cons = _cases(d, true)["partition"]
    r = solve_structured(est, objective, cons)
    sep = separable_for(make_objective(objective), est)
    st = compile_constraints(cons, d)
    blk = cons[1].groups["g1"] if hasattr(cons[1], "groups") else None
    idx = np.asarray(blk if blk is not None else np.array_split(
        np.random.default_rng(1).permutation(d)[: int(0.8 * d)], 3)[1])
    sup = idx[np.argsort(r.f[idx])[-2:]]  # the two largest values of the block: both stay > 0
    for delta in (1e-6, 1e-9):
        f = r.f.copy()
        f[sup[0]] += delta
        f[sup[1]] -= delta
        lam, y = r.duals["sum"], np.atleast_1d(r.duals["partition"])
        c = _certify_full(sep, st, f, lam, y)
        true_dist = float(np.max(np.abs(f - r.f)))  # r.f is f* to ~1e-16
        assert np.isfinite(c.distance_argmin)
        assert true_dist - 1e-13 <= c.distance_argmin <= 4 * true_dist + 1e-13
        assert c.distance_linf <= c.distance_argmin + 1e-300
        # the support certificate (values at 0 summarised) gives the same bound
        c2 = certify(sep, st, f, lam, y)
        assert abs(c2.distance_argmin - c.distance_argmin) <= 1e-13


def test_inequality_and_overlapping_rows_keep_the_sqrt_gap_bound():
    d = 4000
    est, true = _data("binomial", d)
    sep = separable_for(make_objective("binomial"), est)
    perm = np.random.default_rng(1).permutation(d)
    for cons in (_cases(d, true)["le_active"],
                 [Simplex(), SubsetSum(perm[:100], 0.3), SubsetSum(perm[50:150], 0.3)]):
        r = solve_structured(est, "binomial", cons)
        st = compile_constraints(cons, d)
        y = np.concatenate([np.atleast_1d(r.duals[k]) for k in r.duals if k not in ("sum", "nonnegative")])
        c = _certify_full(sep, st, r.f, r.duals["sum"], y if st.m else np.zeros(0))
        assert np.isnan(c.distance_argmin)  # whether a ≤ row binds at f* is not known from f


@pytest.mark.parametrize("objective", ["binomial", "multinomial"])
def test_at_d_42178_against_the_general_method_and_sqp(monkeypatch, objective):
    """The benchmark's size and data shape (Zipf(1.5), n = 10⁶, one block of d/2 values at its true total)."""
    d, n = 42178, 10**6
    rng = np.random.default_rng(11)
    true = 1.0 / np.arange(1, d + 1) ** 1.5
    true = rng.permutation(true / true.sum())
    eps = 1.0
    if objective == "binomial":
        p, q = 0.5, 1.0 / (1.0 + np.exp(eps))
        c = rng.binomial(n, q + (p - q) * true).astype(float)
        est = Estimate.from_counts(c, n, eps, p, q, oracle="oue")
    else:
        p, q = np.exp(eps) / (np.exp(eps) + d - 1), 1.0 / (np.exp(eps) + d - 1)
        c = rng.multinomial(n, q + (p - q) * true).astype(float)
        est = Estimate.from_counts(c, n, eps, p, q, oracle="grr")
    S = rng.permutation(d)[: d // 2]
    cons = [Simplex(), SubsetSum(S, float(true[S].sum()))]
    r = solve_structured(est, objective, cons)
    assert r.iterations.get("distinct_counts", 0) > 0 and r.status == "optimal" and r.kkt_residual <= 1e-12
    assert r.certificate.distance_linf <= max(r.certificate.distance_rounding, 1e-13)
    g = _general(monkeypatch, est, objective, cons)
    assert np.max(np.abs(r.f - g.f)) <= 1e-12
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sol = Problem(est, objective, cons).solve(solver="SQP")
    assert sol.status == "optimal" and np.max(np.abs(r.f - sol.f)) <= 1e-7  # 1/(10d) = 2.4e-6 would fail


def test_a_block_the_grouped_path_cannot_take_falls_back_to_the_segmented_newton(monkeypatch):
    """A block of 5 values (too few for per-count groups): the whole solve takes the segmented
    Newton, still on the block path, and agrees with the general method."""
    d = 4000
    est, true = _data("binomial", d)
    S = np.random.default_rng(2).permutation(d)[:5]
    cons = [Simplex(), SubsetSum(S, float(true[S].sum()))]
    r = solve_structured(est, "binomial", cons)
    assert "blocks" in r.iterations and "distinct_counts" not in r.iterations
    assert r.iterations["block_newton_iterations"] > 0 and r.status == "optimal" and r.kkt_residual <= 1e-12
    g = _general(monkeypatch, est, "binomial", cons)
    assert np.max(np.abs(r.f - g.f)) <= 1e-12


@pytest.mark.parametrize("objective", ["binomial", "cls"])
def test_zero_mass_block_support_certificate_equals_the_full_one(objective):
    """A block at total 0 lies wholly among the values the support certificate leaves out (its row
    has no kept entry): the block-wise bound there equals the full computation's."""
    d = 5000
    est, true = _data(objective, d)
    S = np.random.default_rng(5).permutation(d)[:300]
    cons = [Simplex(), SubsetSum(S, 0.0)]
    r = solve_structured(est, objective, cons)
    assert r.status == "optimal" and np.all(r.f[S] == 0.0)
    sep = separable_for(make_objective(objective), est)
    st = compile_constraints(cons, d)
    y = np.atleast_1d(r.duals["subset_sum"])
    full = _certify_full(sep, st, r.f, r.duals["sum"], y)
    sup = certify_on_support(sep, st, r.f, r.duals["sum"], y, None, None)
    assert sup is not None  # the support path itself answered
    assert np.isfinite(full.distance_argmin) and full.distance_argmin <= 1e-13
    assert abs(sup.distance_argmin - full.distance_argmin) <= 1e-13
