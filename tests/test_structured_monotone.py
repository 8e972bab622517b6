"""Monotone chains in the structured solver (:mod:`ldpopt.problems.dual.chain`): refereed by
cvxpy (Clarabel), by active-set enumeration at tiny d, by the independent closed form of
:func:`project_monotone_simplex`, and by KKT conditions recomputed here from f and the duals."""

import itertools
import warnings

import cvxpy as cp
import numpy as np
import pytest

from ldpopt import Estimate
from ldpopt.problems import Box, Monotone, NonNegative, Problem, Simplex, SubsetSum, SumTo
from ldpopt.problems.constraints.order import project_monotone_simplex
from ldpopt.problems.check.certificate import certificate
from ldpopt.problems.solvers.structured import NotApplicable, SeparableObjective, solve_structured


def _unary(d, n, seed, eps=1.0, shuffle=False):
    rng = np.random.default_rng(seed)
    p, q = 0.5, 1.0 / (1.0 + np.exp(eps))
    true = 1.0 / np.arange(1, d + 1) ** 1.1
    true /= true.sum()
    if shuffle:
        true = rng.permutation(true)
    c = rng.binomial(n, q + (p - q) * true).astype(float)
    return Estimate.from_counts(c, n, eps, p, q)


def _grr(d, n, seed, eps=1.0):
    rng = np.random.default_rng(seed)
    p, q = np.exp(eps) / (np.exp(eps) + d - 1), 1.0 / (np.exp(eps) + d - 1)
    true = 1.0 / np.arange(1, d + 1) ** 1.1
    true /= true.sum()
    c = rng.multinomial(n, q + (p - q) * true).astype(float)
    return Estimate.from_counts(c, n, eps, p, q)


def _quartic():
    return SeparableObjective(
        lambda f, e: (f - e.f_tilde) ** 4 + (f - e.f_tilde) ** 2,
        lambda f, e: 4 * (f - e.f_tilde) ** 3 + 2 * (f - e.f_tilde),
        lambda f, e: 12 * (f - e.f_tilde) ** 2 + 2.0,
        name="quartic",
        cvxpy_expr=lambda f, e: cp.sum(cp.power(f - e.f_tilde, 4) + cp.square(f - e.f_tilde)))


D = 80
CSETS = {
    "natural": lambda: [Simplex(), Monotone()],
    "chain-up": lambda: [Simplex(), Monotone("nondecreasing", order=list(range(60, 10, -1)))],
    "box": lambda: [Simplex(), Box(upper=0.05), Monotone()],
    "sumto": lambda: [NonNegative(), SumTo(0.7), Monotone()],
}
OBJECTIVES = {
    "cls": lambda est: ("cls", {}),
    "weighted-mle": lambda est: ("weighted-mle", {}),
    "binomial": lambda est: ("binomial", {}),
    "multinomial": lambda est: ("multinomial", {}),
    "posterior": lambda est: ("posterior", {"mean": np.abs(est.f_tilde),
                                            "variance": np.linspace(0.5, 2.0, est.d) * 1e-3}),
    "user": lambda est: (_quartic(), {}),
}


@pytest.mark.parametrize("obj_name", sorted(OBJECTIVES))
@pytest.mark.parametrize("cset", sorted(CSETS))
def test_against_clarabel(obj_name, cset):
    if obj_name == "weighted-mle" and cset == "sumto":
        pytest.skip("the weighted MLE is defined on the simplex (total 1)")
    est = _grr(D, 10**5, 1) if obj_name == "multinomial" else _unary(D, 10**5, 0, shuffle=cset == "chain-up")
    obj, kw = OBJECTIVES[obj_name](est)
    cons = CSETS[cset]()
    r = solve_structured(est, obj, cons, **kw)
    assert r.status == "optimal" and r.kkt_residual <= 1e-12, r.message
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = Problem(est, obj, cons, **kw).solve(solver="CLARABEL")
        if ref.status != "optimal" and obj_name in ("binomial", "multinomial"):
            # Clarabel fails ldpopt's check on some likelihood instances: cvxpy's sequential-QP route
            ref = Problem(est, obj, cons, **kw).solve(solver="SQP")
    assert ref.status == "optimal", ref.message
    # the referee's own accuracy (~1e-7 for the likelihoods' cones): the certified answer agrees to it
    assert np.max(np.abs(r.f - ref.f)) <= 2e-6 * max(1.0, float(np.max(r.f)))
    assert r.optimal_value <= ref.optimal_value + 1e-9 * max(1.0, abs(ref.optimal_value))


def _kkt_by_hand(grad, f, lam, y, D_rows, lo=0.0, tol=1e-12):
    """h'(f) + λ + Dᵀy − y^lo = 0 with y ≥ 0, y·(D f) = 0, y^lo ≥ 0 only where f = lo (no upper
    bound binds in these instances)."""
    assert np.all(y >= 0)
    Df = D_rows @ f
    assert np.max(Df) <= 1e-15
    assert np.max(np.abs(y * Df)) <= tol
    ylo = grad + lam + D_rows.T @ y
    at0 = f <= lo
    assert np.max(np.abs(ylo[~at0])) <= tol * max(1.0, float(np.max(np.abs(grad))))
    assert np.min(ylo[at0], initial=0.0) >= -tol * max(1.0, float(np.max(np.abs(grad))))


@pytest.mark.parametrize("direction", ["nonincreasing", "nondecreasing"])
def test_multipliers_satisfy_kkt(direction):
    est = _unary(300, 10**5, 4, shuffle=True)
    order = np.random.default_rng(5).permutation(300)[:200]
    mono = Monotone(direction, order=order, name="mono")
    r = solve_structured(est, "cls", [Simplex(), mono])
    y = r.duals["mono"]
    assert y.shape == (199,) and np.any(y > 0)
    _kkt_by_hand(2 * (r.f - est.f_tilde), r.f, r.duals["sum"] if "sum" in r.duals else r.duals["simplex.sum"],
                 y, mono.matrix(300))


def test_dual_names_match_problem():
    est = _unary(40, 10**5, 0)
    cons = [Simplex(), Monotone(name="mono")]
    r = solve_structured(est, "weighted-mle", cons)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = Problem(est, "weighted-mle", cons).solve(solver="CLARABEL")
    assert set(r.duals) >= set(ref.duals)


def _enumerate_cls(ft, total=1.0):
    """min ‖f − f̃‖² s.t. f ≥ 0, Σ f = total, f nonincreasing: every active set (tight adjacent pairs
    × values at 0) gives an equality-constrained QP (a KKT linear system); the best feasible
    candidate is the optimum."""
    d = ft.size
    Dm = np.zeros((d - 1, d))
    Dm[np.arange(d - 1), np.arange(1, d)] = 1.0
    Dm[np.arange(d - 1), np.arange(d - 1)] = -1.0
    best, best_val = None, np.inf
    for tight in itertools.product([0, 1], repeat=d - 1):
        for zero in itertools.product([0, 1], repeat=d):
            E = [np.ones(d)] + [Dm[k] for k in range(d - 1) if tight[k]] + [np.eye(d)[v] for v in range(d) if zero[v]]
            E = np.array(E)
            rhs = np.zeros(E.shape[0])
            rhs[0] = total
            K = np.block([[2 * np.eye(d), E.T], [E, np.zeros((E.shape[0], E.shape[0]))]])
            sol = np.linalg.lstsq(K, np.concatenate([2 * ft, rhs]), rcond=None)[0]
            f = sol[:d]
            if np.max(np.abs(E @ f - rhs)) > 1e-12 or np.min(f) < -1e-12 or np.max(Dm @ f) > 1e-12:
                continue
            val = float(np.sum((f - ft) ** 2))
            if val < best_val:
                best, best_val = f, val
    return best


@pytest.mark.parametrize("seed", range(4))
def test_cls_by_enumeration(seed):
    rng = np.random.default_rng(seed)
    ft = rng.normal(0.2, 0.3, 4).clip(-0.9, 1.9)
    est = Estimate.from_frequencies(ft, 100, 1.0, 0.5, 0.25)
    r = solve_structured(est, "cls", [Simplex(), Monotone()])
    assert r.status == "optimal"
    np.testing.assert_allclose(r.f, _enumerate_cls(ft), atol=1e-12)
    # the general (model + λ root find) path, forced by an explicit upper bound that never binds
    r2 = solve_structured(est, "cls", [Simplex(), Box(upper=10.0), Monotone()])
    np.testing.assert_allclose(r2.f, _enumerate_cls(ft), atol=1e-12)


@pytest.mark.parametrize("d", [42_178])
def test_general_path_matches_closed_form_at_scale(d):
    est = _unary(d, 10**6, 7)
    closed = project_monotone_simplex(est.f_tilde)
    r = solve_structured(est, "cls", [Simplex(), Box(upper=1.0), Monotone()])  # model path
    assert r.status == "optimal" and r.kkt_residual <= 1e-12
    assert "closed_form" not in r.iterations
    assert np.max(np.abs(r.f - closed)) <= 1e-14
    r = solve_structured(est, "weighted-mle", [Simplex(), Monotone()])
    assert r.status == "optimal" and r.kkt_residual <= 1e-12
    assert np.all(np.diff(r.f) <= 0)


def test_certificate_catches_a_planted_error():
    d = 5000
    est = _unary(d, 10**6, 3)
    cons = [Simplex(), Monotone()]
    r = solve_structured(est, "weighted-mle", cons)
    good = certificate("weighted-mle", cons, est, r.f, r.duals)
    # with rows the distance bound is √(2·gap/μ) (its rounding level ~1e-8 here): the gap itself is
    # what resolves a 1/(10d) error
    assert good.feasible and good.gap <= 4 * good.gap_floor and good.distance_linf <= 2 * good.distance_rounding
    # move 1/(10d) of mass between the top two values (order and simplex kept)
    bad = r.f.copy()
    bad[0] += 0.1 / d
    bad[1] -= 0.1 / d
    cert = certificate("weighted-mle", cons, est, bad, r.duals)
    assert cert.feasible and cert.gap > 4 * cert.gap_floor


def test_default_route_and_fallbacks():
    est = _unary(60, 10**5, 0)
    sol = Problem(est, "binomial", [Simplex(), Monotone()]).solve()
    assert sol.solver == "LDPOPT-STRUCTURED" and sol.status == "optimal"
    with pytest.raises(NotApplicable, match="partial order"):
        solve_structured(est, "cls", [Simplex(), Monotone(pairs=[(0, 1), (2, 1)])])
    with pytest.raises(NotApplicable, match="other linear rows"):
        solve_structured(est, "cls", [Simplex(), Monotone(), SubsetSum(range(5), 0.5)])
    with pytest.raises(NotApplicable, match="same lower and upper bound"):
        solve_structured(est, "cls", [Simplex(), Box(upper=np.linspace(0.5, 1.0, 60)), Monotone()])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sol = Problem(est, "cls", [Simplex(), Monotone(), SubsetSum(range(5), 0.5)]).solve()
    assert sol.solver != "LDPOPT-STRUCTURED" and sol.status == "optimal"


def test_certificate_recovers_order_multipliers():
    """certificate() with no multipliers: λ and the order's y recovered from f alone (at d = 42,178,
    where the generic normal equations would be (d − 1)² dense)."""
    d = 42_178
    est = _unary(d, 10**6, 8)
    f = project_monotone_simplex(est.f_tilde)  # the closed form of ldpopt.problems.constraints.order
    cert = certificate("cls", [Simplex(), Monotone(name="mono")], est, f)
    assert cert.feasible and cert.gap <= 4 * cert.gap_floor and cert.stationarity <= 1e-13
    assert cert.multipliers["mono"].shape == (d - 1,) and np.all(cert.multipliers["mono"] >= 0)
    f2 = f.copy()
    f2[0] += 0.1 / d  # still monotone and on the simplex, 1/(10d) away from the optimum
    f2[1] -= 0.1 / d
    bad = certificate("cls", [Simplex(), Monotone()], est, f2)
    assert bad.feasible and bad.gap > 4 * bad.gap_floor


@pytest.mark.parametrize("reverse", [False, True])
def test_order_duals_equal_clarabels(reverse):
    """With every value inside its bounds the multipliers are unique: the structured solver's order
    duals (name, sign, row order) are cvxpy's, for either direction of the same chain."""
    rng = np.random.default_rng(0)
    d = 40
    ft = np.linspace(0.05, 0.001, d) + rng.normal(0, 0.004, d)
    est = Estimate.from_frequencies(ft / ft.sum(), 10**6, 1.0, 0.5, 0.25)
    mono = (Monotone("nondecreasing", order=list(range(d - 1, -1, -1)), name="mono") if reverse
            else Monotone(name="mono"))
    ours = Problem(est, "cls", [Simplex(), mono]).solve()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = Problem(est, "cls", [Simplex(), mono]).solve(solver="CLARABEL")
    assert ours.solver == "LDPOPT-STRUCTURED" and np.min(ours.f) > 0 and np.max(ref.duals["mono"]) > 1e-3
    np.testing.assert_allclose(ours.duals["mono"], ref.duals["mono"], atol=1e-9)
    assert abs(ours.duals["sum"] - ref.duals["sum"]) <= 1e-9


def test_certificate_of_a_cvxpy_point_with_monotone_and_rows():
    """Monotone + SubsetSum (the cvxpy route) compiles for the certificate now; recovering ~d row
    multipliers from f alone is refused with a clear error (ldpopt's check then uses the solver's
    duals only) instead of a (d − 1)² dense solve."""
    d = 6000
    est = _unary(d, 10**6, 2)
    cons = [Simplex(), Monotone(), SubsetSum(range(10), 0.5)]
    f = np.full(d, 1.0 / d)
    with pytest.raises(ValueError, match="pass the solver's multipliers"):
        certificate("cls", cons, est, f)
