"""The per-distinct-count evaluations of the exact likelihoods (dual.grouped) against the
elementwise ones, the grouped simplex solve against the ungrouped dual method, and against cvxpy's
sequential-QP route."""

import warnings

import numpy as np
import pytest
from _count_estimates import grr_counts, oue_counts

from ldpopt.problems import Problem
from ldpopt.problems.dual import grouped
from ldpopt.problems.dual.dual import solve_lambda
from ldpopt.problems.dual.grouped import count_groups, evaluate, per_group, simplex_grouped
from ldpopt.problems.objectives.builtins import make_objective
from ldpopt.problems.solvers.structured import compile_constraints, separable_for, solve_structured


def _oue(d, n, seed, eps=1.0):
    return oue_counts(d, n, seed, eps, alpha=0.3)


def _grr(d, n, seed, eps=1.0):
    return grr_counts(d, n, seed, eps, alpha=0.3)


def _est(objective, d, n, seed):
    return _grr(d, n, seed) if objective == "multinomial" else _oue(d, n, seed)


def _bits(x, d):
    return np.ascontiguousarray(np.broadcast_to(np.asarray(x, float), (d,))).view(np.int64)


@pytest.mark.parametrize("objective", ["binomial", "multinomial"])
def test_grouped_evaluations_are_bit_identical(objective):
    d = 5000
    est = _est(objective, d, 10**5, 1)
    sep = separable_for(make_objective(objective), est)
    g = count_groups(sep)
    assert g is not None and g.k <= d // 4 and g.weights.sum() == d
    st = compile_constraints(None, d)
    r = solve_structured(est, objective)
    lam = r.duals["sum"]
    f = sep.argmin(np.full(d, lam), st.l, st.u)
    assert 0 < np.count_nonzero(f) < d  # a point with values at 0 and inside: both branches
    for x in (st.l, st.u, f):
        assert per_group(g, x) is not None  # the grouped branch is the one tested
    for method, xs in (("d1", (st.l,)), ("value", (st.l,)), ("d1_scale", (st.l,)), ("mu", (st.l, st.u)),
                       ("d1", (f,)), ("d2", (f,)), ("value", (f,)), ("d2", (st.u,))):
        with np.errstate(divide="ignore", invalid="ignore"):
            ref = getattr(sep, method)(*xs)
        assert np.array_equal(_bits(evaluate(sep, method, *xs), d), _bits(ref, d)), method
    # the argmin per distinct count, gathered, is the elementwise argmin at the same multiplier
    table = g.rep.argmin(np.full(g.k, lam), np.zeros(g.k), np.ones(g.k))
    assert np.array_equal(_bits(table[g.inv], d), _bits(f, d))


def test_per_group_rejects_a_point_not_constant_per_count():
    d = 5000
    est = _oue(d, 10**5, 2)
    sep = separable_for(make_objective("binomial"), est)
    g = count_groups(sep)
    sizes = np.bincount(g.inv)
    v = int(np.flatnonzero(sizes[g.inv] >= 2)[0])  # a value whose count another value shares
    x = np.linspace(0.0, 1.0, g.k)[g.inv]
    assert per_group(g, x) is not None
    y = x.copy()
    y[v] = np.nextafter(y[v], 2.0)
    assert per_group(g, y) is None
    z = np.zeros(d)
    z[v] = -0.0  # the sign of zero counts: h'(−0.0) is not required to equal h'(0.0) bitwise
    assert per_group(g, z) is None
    assert per_group(g, x[:-1]) is None


def test_groups_only_where_they_pay_and_never_leak_into_restrict():
    est = _oue(400, 10**9, 3)  # counts ~ 2.7e8 ± 1e4: nearly all distinct
    assert count_groups(separable_for(make_objective("binomial"), est)) is None
    assert count_groups(separable_for(make_objective("cls"), _oue(5000, 10**5, 3))) is None
    sep = separable_for(make_objective("binomial"), _oue(5000, 10**5, 3))
    assert count_groups(sep) is not None
    assert "_groups" not in sep.restrict(np.arange(10)).__dict__


def test_weighted_lambda_solve_equals_the_expanded_one():
    d = 5000
    est = _oue(d, 10**5, 4)
    sep = separable_for(make_objective("binomial"), est)
    g = count_groups(sep)
    l, u = np.zeros(d), np.ones(d)
    lam, f, _ = solve_lambda(sep, l, u, 1.0)
    lam_g, table, _ = solve_lambda(g.rep, np.zeros(g.k), np.ones(g.k), 1.0, weights=g.weights)
    assert abs(lam_g - lam) <= 1e-12 * abs(lam)
    assert np.max(np.abs(table[g.inv] - f)) <= 1e-15
    assert abs(table @ g.weights - 1.0) <= 16 * np.finfo(float).eps


@pytest.mark.parametrize("objective,d,n", [("binomial", 42_178, 10**6), ("multinomial", 42_178, 10**6),
                                           ("binomial", 3000, 10**4), ("multinomial", 3000, 300)])
def test_grouped_solve_equals_the_ungrouped_dual_method(objective, d, n, monkeypatch):
    est = _est(objective, d, n, 5)
    r = solve_structured(est, objective)
    assert r.status == "optimal" and r.kkt_residual <= 1e-12, r.message
    assert "distinct_counts" in r.iterations
    with monkeypatch.context() as m:
        m.setattr(grouped, "count_groups", lambda sep: None)
        r0 = solve_structured(est, objective)
    assert r0.status == "optimal" and "distinct_counts" not in r0.iterations
    assert np.max(np.abs(r.f - r0.f)) <= 1e-15
    assert abs(r.duals["sum"] - r0.duals["sum"]) <= 1e-12 * abs(r0.duals["sum"])
    assert abs(r.optimal_value - r0.optimal_value) <= 1e-14 * abs(r0.optimal_value)


def test_support_piece_brackets_the_root_by_brute_force():
    d = 20_000
    est = _oue(d, 10**5, 6)
    sep = separable_for(make_objective("binomial"), est)
    st = compile_constraints(None, d)
    g = count_groups(sep)
    lk, uk = np.zeros(g.k), np.ones(g.k)
    d1l = g.rep.d1(lk)
    (lo, hi, s_lo, s_hi), evals = grouped._support_piece(g.rep, 0.0, 1.0, d1l, g.rep.d1(uk), g.weights, 1.0)
    assert lo < hi and 0 < evals < 2 * np.log2(g.k) + 4
    for lam, s in ((lo, s_lo), (hi, s_hi)):  # the elementwise S(λ) over all d values
        assert abs(float(np.sum(sep.argmin(np.full(d, lam), st.l, st.u))) - s) <= 1e-12
    assert s_lo >= 1.0 > s_hi
    # at most 4 breakpoints −h'_k(0) inside the piece (the support is nearly fixed there)
    assert np.count_nonzero((-d1l > lo) & (-d1l < hi)) <= 4


def test_multinomial_with_unreported_values_matches_ungrouped(monkeypatch):
    """GRR with n ≪ d: most counts are 0, where h_v ≡ 0 (flat); the grouped solve either solves it
    or hands over to the general method, which spreads the mass; both must be certified optimal."""
    est = _grr(4000, 500, 7)
    assert np.count_nonzero(est.counts == 0) > 1000
    r = solve_structured(est, "multinomial")
    assert r.status == "optimal", r.message
    with monkeypatch.context() as m:
        m.setattr(grouped, "count_groups", lambda sep: None)
        r0 = solve_structured(est, "multinomial")
    assert abs(r.optimal_value - r0.optimal_value) <= 1e-14 * abs(r0.optimal_value)


@pytest.mark.parametrize("objective", ["binomial", "multinomial"])
def test_grouped_solve_matches_the_sqp_route(objective):
    """Referee: cvxpy's sequential-QP route (PIQP QPs over the user's own constraints), at a d where
    the counts take few distinct values."""
    d = 2000
    est = _est(objective, d, 10**3 if objective == "binomial" else 10**4, 8)
    r = solve_structured(est, objective)
    assert "distinct_counts" in r.iterations and r.status == "optimal"
    assert simplex_grouped(separable_for(make_objective(objective), est), compile_constraints(None, d)) is not None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sol = Problem(est, objective).solve(solver="SQP")
    assert sol.status == "optimal"
    assert np.max(np.abs(r.f - sol.f)) <= 1e-8
    assert r.optimal_value <= sol.optimal_value + 1e-12 * abs(sol.optimal_value)


@pytest.mark.parametrize("oracle", ["grr", "oue", "sue"])
def test_property_grid_grouped_equals_ungrouped(oracle, monkeypatch):
    """Over ε × d × n (tiny to huge n, ε up to 20): the grouped solve (where it applies) is 'optimal'
    exactly when the ungrouped one is, and equal to it to rounding."""
    import itertools

    from ldpopt import oracles
    rng = np.random.default_rng(11)
    objective = "multinomial" if oracle == "grr" else "binomial"
    used = 0
    for eps, d, n in itertools.product([0.05, 1.0, 20.0], [100, 3000], [10, 1000, 10**9]):
        est = oracles.get(oracle, eps, d).simulate(rng.multinomial(n, rng.dirichlet(np.full(d, 0.5))), rng)
        r = solve_structured(est, objective)
        used += "distinct_counts" in r.iterations
        with monkeypatch.context() as m:
            m.setattr(grouped, "count_groups", lambda sep: None)
            r0 = solve_structured(est, objective)
        assert r.status == r0.status == "optimal", (eps, d, n, r.message, r0.message)
        assert np.max(np.abs(r.f - r0.f)) <= 1e-12, (eps, d, n)
    assert used >= 4  # the grid reaches the grouped path (small n: few distinct counts)


@pytest.mark.parametrize("objective", ["binomial", "multinomial"])
def test_grouped_solve_with_a_common_box_and_another_total(objective, monkeypatch):
    """l and u the same for every value but not the plain simplex (a Box upper bound that binds,
    Σ f = 0.5): the grouped solve applies and equals the ungrouped one."""
    from ldpopt.problems import Box, NonNegative, SumTo
    d = 3000
    est = _est(objective, d, 10**5, 9)  # no zero counts (flat terms hand over to the general method)
    for cons in ([NonNegative(), SumTo(1.0), Box(upper=0.004)], [NonNegative(), SumTo(0.5)]):
        r = solve_structured(est, objective, cons)
        assert "distinct_counts" in r.iterations and r.status == "optimal", r.message
        with monkeypatch.context() as m:
            m.setattr(grouped, "count_groups", lambda sep: None)
            r0 = solve_structured(est, objective, cons)
        assert r0.status == "optimal"
        assert np.max(np.abs(r.f - r0.f)) <= 1e-15
        if len(cons) == 3:
            assert np.count_nonzero(r.f == 0.004) >= 2  # the box binds
    assert np.isclose(r.f.sum(), 0.5, rtol=0, atol=1e-15)
