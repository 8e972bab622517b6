"""The structured dual solver against closed forms, cvxpy and brute force."""

import itertools
import warnings

import numpy as np
import pytest

from ldpopt import Estimate
from ldpopt.methods.mle import mle_apx
from ldpopt.methods.normalize import project_simplex
from ldpopt.problems import Box, Fixed, Hierarchy, NonNegative, Problem, Simplex, SubsetSum, SumTo
from ldpopt.problems.solvers.structured import NotApplicable, SeparableObjective, solve_structured


def _unary(d, n, seed, eps=1.0):
    rng = np.random.default_rng(seed)
    p, q = 0.5, 1.0 / (1.0 + np.exp(eps))
    true = rng.dirichlet(np.full(d, 0.3))
    c = rng.binomial(n, q + (p - q) * true).astype(float)
    return Estimate.from_counts(c, n, eps, p, q)


def _grr(d, n, seed, eps=1.0):
    rng = np.random.default_rng(seed)
    p, q = np.exp(eps) / (np.exp(eps) + d - 1), 1.0 / (np.exp(eps) + d - 1)
    true = rng.dirichlet(np.full(d, 0.3))
    c = rng.multinomial(n, q + (p - q) * true).astype(float)
    return Estimate.from_counts(c, n, eps, p, q)


@pytest.mark.parametrize("d,seed", [(50, 0), (2000, 1), (42_178, 2)])
def test_matches_norm_sub_and_mle_apx(d, seed):
    est = _unary(d, 10**6, seed)
    r = solve_structured(est, "cls")
    assert r.status == "optimal" and r.kkt_residual <= 1e-12
    assert np.max(np.abs(r.f - project_simplex(est.f_tilde))) <= 1e-12 * max(1.0, np.max(r.f))
    r = solve_structured(est, "weighted-mle")
    assert r.status == "optimal" and r.kkt_residual <= 1e-12
    assert np.max(np.abs(r.f - mle_apx(est))) <= 1e-12


def test_posterior_euclidean_is_power_ns_projection():
    est = _unary(300, 10**5, 3)
    m = np.abs(est.f_tilde) + 1e-3
    r = solve_structured(est, "posterior", mean=m)
    assert np.max(np.abs(r.f - project_simplex(m))) <= 1e-14


CONSTRAINT_SETS = {
    "simplex": lambda d: None,
    "subset": lambda d: [Simplex(), SubsetSum(np.arange(10), 0.3)],
    "fixed": lambda d: [Simplex(), Fixed([3, 4], [0.02, 0.01])],
    "box": lambda d: [Simplex(), Box(upper=0.03)],
    "ineq": lambda d: [Simplex(), SubsetSum(np.arange(10), 0.1, "<="), SubsetSum(np.arange(10, 20), 0.3, ">=")],
}


@pytest.mark.parametrize("objective", ["cls", "weighted-mle", "binomial", "multinomial", "posterior"])
@pytest.mark.parametrize("cset", sorted(CONSTRAINT_SETS))
def test_matches_cvxpy(objective, cset):
    d = 60
    est = _grr(d, 10**4, 5) if objective == "multinomial" else _unary(d, 10**4, 5)
    kw = {}
    if objective == "posterior":
        kw = dict(mean=np.clip(est.f_tilde, 0, None) + 1e-3, variance=np.linspace(1, 2, d) * 1e-4)
    cons = CONSTRAINT_SETS[cset](d)
    r = solve_structured(est, objective, cons, **kw)
    assert r.status == "optimal" and r.kkt_residual <= 1e-12, r.message
    cone = objective in ("binomial", "multinomial")
    opts = dict(eps=1e-9, max_iters=100_000) if cone else {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sol = Problem(est, objective, cons, **kw).solve(solver="SCS" if cone else "CLARABEL", **opts)
    assert sol.status == "optimal"
    assert np.max(np.abs(r.f - sol.f)) <= (1e-6 if objective == "weighted-mle" else 1e-8)  # the referee's accuracy
    assert r.optimal_value <= sol.optimal_value + 1e-9 * abs(sol.optimal_value)  # never worse than the referee
    # the multipliers of the rows (unique here) agree with cvxpy's duals, relative to their scale
    for name in sol.duals:
        if name in ("nonnegative", "fixed"):
            continue  # split between the two is not unique where a fixed value sits at 0
        a, b = np.asarray(r.duals[name]), np.asarray(sol.duals[name])
        scale = max(abs(r.duals["sum"]), 1e-12)
        assert np.max(np.abs(a - b)) <= 1e-4 * scale, name


def _grid_min(objective, est, cons):
    """Brute force on the simplex (d = 3): a 0.01 grid, then a 2e-4 grid around its best point."""
    from ldpopt.problems.objectives.builtins import make_objective
    obj = make_objective(objective)

    def search(c0, c1, h, k):
        best, arg = np.inf, None
        for i, j in itertools.product(range(-k, k + 1), repeat=2):
            f = np.array([c0 + i * h, c1 + j * h, 0.0])
            f[2] = 1.0 - f[0] - f[1]
            if np.any(f < 0) or (cons is not None and not cons(f)):
                continue
            v = obj.value(f, est)
            if v < best:
                best, arg = v, f
        return best, arg

    _, a = search(0.5, 0.5, 0.01, 50)
    return search(a[0], a[1], 2e-4, 50)


@pytest.mark.parametrize("objective", ["cls", "weighted-mle", "binomial"])
def test_brute_force_d3(objective):
    est = Estimate.from_counts([300.0, 180.0, 20.0], 1000, 1.0, 0.5, 0.25)
    r = solve_structured(est, objective)
    best, arg = _grid_min(objective, est, None)
    assert r.optimal_value <= best + 1e-15
    assert np.max(np.abs(r.f - arg)) <= 4e-4
    r2 = solve_structured(est, objective, [Simplex(), SubsetSum([0], 0.4, "<=")])
    best2, arg2 = _grid_min(objective, est, lambda f: f[0] <= 0.4 + 1e-12)
    assert r2.f[0] <= 0.4 + 1e-15 and r2.optimal_value <= best2 + 1e-15
    assert np.max(np.abs(r2.f - arg2)) <= 4e-4


def test_d2_closed_form():
    # d = 2 cls: f = clip((1 + f̃0 − f̃1)/2, 0, 1)
    est = Estimate.from_frequencies([0.9, 0.3], 1000, 1.0, 0.5, 0.25)
    r = solve_structured(est, "cls")
    assert np.allclose(r.f, [0.8, 0.2], rtol=0, atol=1e-15)


def test_user_separable_objective_matches_cls():
    est = _unary(500, 10**5, 7)
    obj = SeparableObjective(lambda f, e: (f - e.f_tilde) ** 2, lambda f, e: 2 * (f - e.f_tilde),
                             lambda f, e: np.full_like(f, 2.0), name="mycls")
    r = solve_structured(est, obj, [Simplex(), SubsetSum(np.arange(20), 0.5)])
    ref = solve_structured(est, "cls", [Simplex(), SubsetSum(np.arange(20), 0.5)])
    assert r.status == "optimal"
    assert np.max(np.abs(r.f - ref.f)) <= 1e-13


def test_hierarchy_and_sumto():
    # leaves 0..3, internal 4 = 0+1, 5 = 2+3; leaves sum to one
    est = Estimate.from_frequencies([0.3, 0.2, 0.25, 0.1, 0.6, 0.3], 10**4, 1.0, 0.5, 0.25)
    cons = [NonNegative(), SumTo(2.0), Hierarchy({4: [0, 1], 5: [2, 3]})]
    r = solve_structured(est, "cls", cons)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sol = Problem(est, "cls", cons).solve(solver="CLARABEL")
    assert r.status == "optimal"
    assert np.max(np.abs(r.f - sol.f)) <= 1e-8
    assert np.max(np.abs(r.duals["hierarchy"] - sol.duals["hierarchy"])) <= 1e-7


def test_not_applicable_and_infeasible():
    est = _unary(20, 1000, 8)
    with pytest.raises(NotApplicable, match="l1"):
        solve_structured(est, "l1")
    with pytest.raises(NotApplicable, match="callable|not covered"):
        solve_structured(est, "cls", [Simplex(), lambda f, e: f[0] >= 0.1])
    with pytest.raises(NotApplicable, match="total"):
        solve_structured(est, "cls", [NonNegative()])
    with pytest.raises(ValueError, match="infeasible"):
        solve_structured(est, "cls", [Simplex(), Box(upper=0.01)])
    with pytest.raises(ValueError, match="infeasible"):
        solve_structured(est, "cls", [Simplex(), Fixed([0], [-0.1])])


def test_infeasible_rows_are_not_reported_optimal():
    est = _unary(20, 1000, 9)
    r = solve_structured(est, "cls", [Simplex(), SubsetSum([0, 1], 0.5), SubsetSum([0, 1], 0.6)], max_iter=30)
    assert r.status != "optimal" and r.certificate.primal_violation > 1e-3


def test_screened_solve_equals_full_solve():
    """Working-set screening (d ≥ 20,000) against the plain dual solve on the whole domain, on a row
    that pulls thousands of values off zero (several screening rounds)."""
    from ldpopt.problems.objectives.builtins import make_objective
    from ldpopt.problems.objectives.separable import separable_for
    from ldpopt.problems.dual.dual import solve_multipliers, solve_screened
    from ldpopt.problems.dual.structure import compile_constraints
    rng = np.random.default_rng(11)
    d, n = 50_000, 10**9  # little noise, a flat distribution: a support of ~10⁴ values
    p, q = 0.5, 1 / (1 + np.e)
    true = rng.dirichlet(np.ones(d))
    est = Estimate.from_counts(rng.binomial(n, q + (p - q) * true).astype(float), n, 1.0, p, q)
    cons = [Simplex(), SubsetSum(np.arange(10_000, 45_000), 0.9), SubsetSum(np.arange(100), 0.05, "<=")]
    st = compile_constraints(cons, d)
    for name in ("cls", "binomial"):
        sep = separable_for(make_objective(name), est)
        f1, lam1, y1, info = solve_screened(sep, st)
        f2, lam2, y2, _ = solve_multipliers(sep, st)
        assert info["rounds"] >= 2  # the check really added values
        assert np.max(np.abs(f1 - f2)) <= 1e-14
        assert abs(lam1 - lam2) <= 1e-10 * abs(lam2) and np.allclose(y1, y2, rtol=1e-9, atol=1e-15)


def test_vertex_solution_has_no_multiplier_on_the_implied_bound():
    # f̃ far outside the simplex near e_0: the optimum is the vertex (1, 0, 0)
    est = Estimate.from_frequencies([2.0, -0.5, -0.5], 10**4, 1.0, 0.5, 0.25)
    r = solve_structured(est, "cls")
    assert np.array_equal(r.f, [1.0, 0.0, 0.0]) and r.status == "optimal"
    assert "sum.implied" not in r.duals
    # cvxpy's Lagrangian: ∇J − y_nonneg + y_sum = 0 with y_nonneg ≥ 0, zero where f > 0
    g = 2 * (r.f - est.f_tilde)
    stat = g - r.duals["nonnegative"] + r.duals["sum"]
    assert np.max(np.abs(stat)) <= 1e-14 and np.all(r.duals["nonnegative"] >= 0) and r.duals["nonnegative"][0] == 0


@pytest.mark.parametrize("counts", [[10.0, 0.0], [0.0, 10.0], [3.0, 7.0], [10.0, 10.0]])
@pytest.mark.parametrize("pq", [(0.9975273768433653, 0.0024726231566347748), (0.5, 0.25), (0.88, 0.5)])
def test_binomial_argmin_is_the_root_in_range(counts, pq):
    """The per-value argmin against the definition: h'(f) + t = 0 inside, the right bound outside,
    over a sweep of t covering both signs of τ (c = 0 and c = n included: one log term)."""
    from ldpopt.problems.objectives.builtins import make_objective
    from ldpopt.problems.objectives.separable import separable_for
    est = Estimate.from_counts(counts, 10, 1.0, *pq)
    sep = separable_for(make_objective("binomial"), est)
    l, u = np.zeros(2), np.ones(2)
    lo, hi = -sep.d1(u).max() - 1, -sep.d1(l).min() + 1
    for t in np.linspace(lo, hi, 401):
        f = sep.argmin(np.full(2, t), l, u)
        g = sep.d1(f) + t
        inside = (f > 0) & (f < 1)
        assert np.all(np.abs(g[inside]) <= 1e-9 * (1 + abs(t)))
        assert np.all(g[f == 0] >= -1e-9) and np.all(g[f == 1] <= 1e-9)


@pytest.mark.parametrize("oracle", ["grr", "oue", "sue", "olh", "blh", "hr", "ss"])
def test_property_grid_matches_closed_forms(oracle):
    """Over ε × d × n (incl. tiny and huge n): 'optimal' always, and equal to Norm-Sub / MLE-Apx."""
    from ldpopt import oracles
    rng = np.random.default_rng(17)
    for eps, d, n in itertools.product([0.05, 1.0, 8.0], [2, 100], [100, 10**6]):
        o = oracles.get(oracle, eps, d)
        est = o.simulate(rng.multinomial(n, rng.dirichlet(np.full(d, 0.5))), rng)
        for obj, ref in (("cls", project_simplex(est.f_tilde)), ("weighted-mle", mle_apx(est))):
            r = solve_structured(est, obj)
            assert r.status == "optimal", (oracle, eps, d, n, obj, r.message)
            assert np.max(np.abs(r.f - ref)) <= 1e-12 * max(1.0, float(np.max(np.abs(est.f_tilde)))), (oracle, eps, d, n, obj)


def test_binomial_at_eps_20_lambda_solve_does_not_crawl():
    """SUE at ε = 20 (p = 1 − 4.5e-5): h'' varies by ~10⁹ over [0, 1] and safeguarded Newton alone
    crawled (100 iterations, Σf = 2,999); bisection on a slow bracket fixes it. Referee: the
    per-value KKT conditions (certificate) and the cvxpy-free closed form of S(λ) = 1."""
    rng = np.random.default_rng(5)
    p, q = 0.9999546021312976, 4.5397868702434395e-05
    n, d = 10_000, 3000
    true = rng.multinomial(n, rng.dirichlet(np.full(d, 0.5)))
    c = rng.binomial(true, p) + rng.binomial(n - true, q)
    est = Estimate.from_counts(c.astype(float), n, 20.0, p, q)
    r = solve_structured(est, "binomial")
    assert r.status == "optimal" and abs(r.f.sum() - 1) <= 1e-13
    assert r.certificate.distance_linf <= 1e-3 / d
