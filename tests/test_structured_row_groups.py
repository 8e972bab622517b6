"""The dual method with rows run once per group of values alike (count, bounds, column of A) against
the same method over every value, and its exact check of the groups."""

import cvxpy as cp
import numpy as np
import pytest

from ldpopt import oracles
from ldpopt.problems import Problem, SeparableObjective, Simplex, SubsetSum
from ldpopt.problems.objectives.builtins import make_objective
from ldpopt.problems.objectives.separable import separable_for
from ldpopt.problems.dual import dual, row_groups
from ldpopt.problems.dual.grouped import count_groups
from ldpopt.problems.dual.structure import compile_constraints

D = 6000
W = 0.05  # (at 1e-4 a zero-count value's optimum underflows: e^{-3200}; the check refuses the clamp)


def _problem(seed=1):
    rng = np.random.default_rng(seed)
    reported = rng.poisson(4.0, D)  # GRR reports: ~15 distinct counts
    est = oracles.get("grr", 2.0, D).estimate(reported, int(reported.sum()))
    truth = np.clip(est.f_tilde, 0, None) / np.clip(est.f_tilde, 0, None).sum()
    p = 1.0 / D
    with np.errstate(divide="ignore", invalid="ignore"):
        obj = SeparableObjective(
            lambda f, e: (f - e.f_tilde) ** 2 + W * (np.where(f > 0, f * np.log(f / p), 0.0) - f + p),
            lambda f, e: 2.0 * (f - e.f_tilde) + W * np.log(f / p),
            lambda f, e: 2.0 + W / f, name="cls+kl",
            cvxpy_expr=lambda f, e: cp.sum_squares(f - e.f_tilde) + W * cp.sum(cp.kl_div(f, p)))
    cons = [Simplex()]
    for i in range(3):  # three random halves at their true totals: 8 column patterns
        idx = np.flatnonzero(rng.random(D) < 0.5)
        cons.append(SubsetSum(idx, float(truth[idx].sum()), "==", name=f"half{i}"))
    return est, obj, cons


def test_grouped_rows_match_the_dual_over_every_value():
    est, obj, cons = _problem()
    sep = separable_for(obj, est)
    st = compile_constraints(cons, est.d)
    got = row_groups.solve_row_groups(sep, st)
    assert got is not None
    f, lam, y, info = got
    assert info["row_groups"] < D // 4
    f0, lam0, y0, _ = dual.solve_multipliers(sep, st)
    np.testing.assert_allclose(f, f0, rtol=1e-9, atol=1e-13)
    assert lam == pytest.approx(lam0, rel=1e-9, abs=1e-12)
    np.testing.assert_allclose(y, y0, rtol=1e-7, atol=1e-10)
    # members of a group are equal: same count, same column
    g = count_groups(sep)
    key = g.inv * 8 + (st.A.T @ np.array([1.0, 2.0, 4.0])).astype(int)
    for k in np.unique(key)[:50]:
        assert np.ptp(f[key == k]) == 0.0


def test_problem_solve_takes_the_grouped_rows_and_certifies(monkeypatch):
    est, obj, cons = _problem(2)
    seen = []
    original = row_groups.solve_multipliers

    def counted(sep, st, **kw):
        seen.append(st.d)
        return original(sep, st, **kw)

    monkeypatch.setattr(row_groups, "solve_multipliers", counted)
    sol = Problem(est, obj, cons).solve(progress=False)
    assert sol.solver == "LDPOPT-STRUCTURED" and sol.status == "optimal"
    assert seen and seen[0] < D // 4
    assert abs(float(np.sum(sol.f)) - 1.0) < 1e-12


def test_a_hash_collision_is_caught_by_the_exact_check(monkeypatch):
    """A hash that sees only the count groups (every column pattern collides): the exact check
    refuses the groups, and solve_row_groups leaves the problem to the general method."""
    est, obj, cons = _problem()
    sep = separable_for(obj, est)
    st = compile_constraints(cons, est.d)
    g = count_groups(sep)
    assert row_groups._alike(g.inv, st) is not None
    monkeypatch.setattr(row_groups, "_hash", lambda g_inv, Ac, l, u: g_inv.astype(np.uint64))
    assert row_groups._alike(g.inv, st) is None
    assert row_groups.solve_row_groups(sep, st) is None


def test_not_for_the_built_ins_nor_without_rows():
    est, _, cons = _problem()
    st = compile_constraints(cons, est.d)
    assert row_groups.solve_row_groups(separable_for(make_objective("weighted-mle"), est), st) is None
    _, obj, _ = _problem()
    assert row_groups.solve_row_groups(separable_for(obj, est), compile_constraints([Simplex()], est.d)) is None
