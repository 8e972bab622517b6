"""The structured solver's tree pass (ldpopt.problems.dual.tree) against independent referees:
cvxpy (PIQP / Clarabel) with the parent = Σ children equalities written out node by node, Hay et
al.'s two-pass closed form when nothing clamps, and a dense brute-force KKT check of the returned
multipliers; and the NotApplicable cases (a forest, two parents, a SubsetSum that is not the total)."""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pytest

from ldpopt import Estimate
from ldpopt.hierarchy.consistency import consistency
from ldpopt.problems import Box, Fixed, Hierarchy, NonNegative, Problem, SubsetSum, range_tree
from ldpopt.problems.solvers.structured import NotApplicable, SeparableObjective, solve_structured
from ldpopt.problems.dual.tree import tree_of

P, Q = 0.6, 0.1


def _est(t, noise, seed, n=10**5):
    """A noisy range-tree estimate: consistent node totals of a Dirichlet histogram plus N(0, noise²)."""
    rng = np.random.default_rng(seed)
    true = t.node_totals(rng.dirichlet(np.full(t.d, 0.5)))
    ft = true + rng.normal(scale=noise, size=t.size)
    counts = np.clip((ft * (P - Q) + Q) * n, 0, n)  # the binomial needs 0 ≤ c ≤ n
    return Estimate.from_counts(counts, n=n, epsilon=1.0, p=P, q=Q)


def _children(parent, size):
    return {p: [c for c in range(size) if parent[c] == p] for p in set(parent.tolist()) if p >= 0}


def _cvxpy_cls(est, parent, leaves, total, solver):
    """cls with every constraint written out one by one (independent of ldpopt's matrices)."""
    size = est.d
    f = cp.Variable(size)
    cons = [f >= 0, cp.sum(f[leaves]) == total]
    for p, ch in _children(parent, size).items():
        cons.append(f[p] == sum(f[c] for c in ch))
    opts = {"CLARABEL": dict(tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12),
            "PIQP": dict(eps_abs=1e-11, eps_rel=1e-11, eps_duality_gap_abs=1e-11, eps_duality_gap_rel=1e-11)}[solver]
    cp.Problem(cp.Minimize(cp.sum_squares(f - est.f_tilde)), cons).solve(solver=solver, **opts)
    return f.value


def _kkt_dense(est, obj_name, t, sol_f, duals, leaf_name="leaves"):
    """Brute force: dense H from the parent array, stationarity ∇J + Hᵀy + ν·1_leaves − y^lo = 0,
    y^lo ≥ 0, y^lo·f = 0, H f = 0, Σ leaves = 1 (max residual)."""
    from ldpopt.problems.objectives.builtins import make_objective

    size = t.size
    H = np.zeros((size - t.d, size))
    for k, p in enumerate(range(t.d, size)):
        H[k, p] = 1.0
        for c in range(size):
            if t.parent[c] == p:
                H[k, c] = -1.0
    g = make_objective(obj_name).gradient(sol_f, est)
    ylo = duals["nonnegative"]
    r = g + H.T @ duals["hierarchy"] + duals[leaf_name] * (np.arange(size) < t.d) - ylo
    scale = max(np.max(np.abs(g)), 1.0)
    return max(np.max(np.abs(r)) / scale, np.max(-ylo, initial=0) / scale, np.max(np.abs(ylo * sol_f)),
               np.max(np.abs(H @ sol_f)), abs(sol_f[:t.d].sum() - 1.0), np.max(-sol_f, initial=0))


@pytest.mark.parametrize("d,B,noise", [(16, 2, 0.15), (50, 3, 0.2), (300, 2, 0.01), (257, 4, 0.03)])
def test_tree_cls_matches_piqp_and_clarabel_with_many_clamped_nodes(d, B, noise):
    t = range_tree(d, B)
    est = _est(t, noise, seed=d + B)
    r = solve_structured(est, "cls", t.constraints())
    assert r.status == "optimal", r.message
    assert "tree_newton_iterations" in r.iterations
    assert np.count_nonzero(r.f == 0) >= 0.2 * t.size  # the noise clamps many nodes at 0
    for solver in ("PIQP", "CLARABEL"):
        ref = _cvxpy_cls(est, t.parent, np.arange(d), 1.0, solver)
        assert np.max(np.abs(r.f - ref)) <= 1e-7, solver
    assert _kkt_dense(est, "cls", t, r.f, r.duals) <= 1e-12


@pytest.mark.parametrize("obj,d,B", [("weighted-mle", 40, 2), ("weighted-mle", 81, 3), ("binomial", 30, 2),
                                     ("binomial", 27, 3)])
def test_tree_likelihoods_match_clarabel(obj, d, B):
    t = range_tree(d, B)
    est = _est(t, 0.05, seed=7 * d + B)
    r = solve_structured(est, obj, t.constraints())
    assert r.status == "optimal", r.message
    assert np.any(r.f == 0)
    ref = Problem(est, obj, t.constraints()).solve(solver="CLARABEL")
    assert ref.status == "optimal", ref.message
    assert np.max(np.abs(r.f - ref.f)) <= 2e-6
    assert _kkt_dense(est, obj, t, r.f, r.duals) <= 1e-10


@pytest.mark.parametrize("obj", ["weighted-mle", "binomial"])
def test_tree_likelihoods_without_active_bounds_and_with_a_positive_lower_box(obj):
    t = range_tree(33, 2)
    rng = np.random.default_rng(21)
    true = t.node_totals(rng.uniform(1.0, 2.0, t.d) / (1.5 * t.d))
    true /= true[-1]
    ft = true + rng.normal(scale=0.02 / t.d, size=t.size)
    est = Estimate.from_counts((ft * (P - Q) + Q) * 10**6, n=10**6, epsilon=1.0, p=P, q=Q)
    r = solve_structured(est, obj, t.constraints())
    assert r.status == "optimal" and np.all(r.f > 0)  # nothing at a bound
    # the binomial's exponential cones leave Clarabel 1e-5 off here (f_root = 1 − 1e-8): ldpopt's
    # sequential QP (PIQP/Clarabel QPs over the same constraints) referees it, and the dense KKT check
    referee = "CLARABEL" if obj == "weighted-mle" else "SQP"
    ref = Problem(est, obj, t.constraints()).solve(solver=referee)
    assert ref.status == "optimal", ref.message
    assert np.max(np.abs(r.f - ref.f)) <= 1e-7
    assert _kkt_dense(est, obj, t, r.f, r.duals) <= 1e-12
    # a lower box above some leaves' values (active) tightens the implied upper bounds of the others
    lo = np.where(np.arange(t.size) < t.d, 0.8 / t.d, 0.0)
    cons = [NonNegative(), Box(lower=lo), SubsetSum(np.arange(t.d), 1.0, name="leaves"), t.hierarchy()]
    r2 = solve_structured(est, obj, cons)
    ref2 = Problem(est, obj, cons).solve(solver=referee)
    assert r2.status == "optimal" and ref2.status == "optimal", (r2.message, ref2.message)
    assert np.any(np.isclose(r2.f[:t.d], 0.8 / t.d, rtol=0, atol=1e-15))
    assert np.max(np.abs(r2.f - ref2.f)) <= 1e-7


def test_tree_multinomial_matches_clarabel():
    t = range_tree(20, 2)
    rng = np.random.default_rng(3)
    probs = rng.dirichlet(np.full(t.size, 3.0))
    n = 5000
    counts = rng.multinomial(n, probs).astype(float)  # single-value reports over the nodes: GRR-like
    assert counts.min() > 0
    est = Estimate.from_counts(counts, n=n, epsilon=1.0, p=0.5, q=0.5 / (t.size - 1) * 0.5)
    r = solve_structured(est, "multinomial", t.constraints())
    assert r.status == "optimal", r.message
    # Clarabel's exponential cones stop at stationarity 1e-4 here: ldpopt's sequential QP (PIQP/Clarabel
    # QPs over the same constraints) is the referee, and the dense KKT check
    ref = Problem(est, "multinomial", t.constraints()).solve(solver="SQP")
    assert ref.status == "optimal", ref.message
    assert np.max(np.abs(r.f - ref.f)) <= 2e-6
    assert _kkt_dense(est, "multinomial", t, r.f, r.duals) <= 1e-10
    # a count of 0 makes that node's term flat (h ≡ 0): not for the tree pass, the cvxpy route instead
    counts[3] += counts[5]
    counts[5] = 0
    est0 = Estimate.from_counts(counts, n=n, epsilon=1.0, p=0.5, q=0.5 / (t.size - 1) * 0.5)
    with pytest.raises(NotApplicable, match="flat"):
        solve_structured(est0, "multinomial", t.constraints())
    sol = Problem(est0, "multinomial", t.constraints()).solve()
    assert sol.solver != "LDPOPT-STRUCTURED" and sol.status == "optimal", sol.message


def test_tree_posterior_and_user_separable_objective_match_clarabel():
    t = range_tree(30, 3)
    est = _est(t, 0.04, seed=11)
    rng = np.random.default_rng(12)
    mean = est.f_tilde + rng.normal(scale=0.01, size=t.size)
    var = rng.uniform(0.5, 2.0, size=t.size)
    r = solve_structured(est, "posterior", t.constraints(), mean=mean, variance=var)
    ref = Problem(est, "posterior", t.constraints(), mean=mean, variance=var).solve(solver="CLARABEL")
    assert r.status == "optimal" and ref.status == "optimal"
    assert np.max(np.abs(r.f - ref.f)) <= 1e-7
    # a non-quadratic user objective h = (f − f̃)² + (f − f̃)⁴, its argmin by the vectorised Newton
    m = est.f_tilde
    obj = SeparableObjective(lambda f, e: (f - m) ** 2 + (f - m) ** 4, lambda f, e: 2 * (f - m) + 4 * (f - m) ** 3,
                             lambda f, e: 2 + 12 * (f - m) ** 2, name="quartic",
                             cvxpy_expr=lambda f, e: cp.sum_squares(f - m) + cp.sum(cp.power(f - m, 4)))
    r = solve_structured(est, obj, t.constraints())
    ref = Problem(est, obj, t.constraints()).solve(solver="CLARABEL")
    assert r.status == "optimal", r.message
    assert ref.status == "optimal", ref.message
    assert np.max(np.abs(r.f - ref.f)) <= 1e-6


@pytest.mark.parametrize("d,B", [(64, 2), (81, 3), (100, 4), (37, 5)])
def test_tree_cls_equals_hays_closed_form_when_nothing_clamps(d, B):
    t = range_tree(d, B)
    rng = np.random.default_rng(d)
    true = t.node_totals(rng.uniform(1.0, 2.0, d) / d * 1.0)
    true /= true[-1]
    ft = true + rng.normal(scale=0.01 / d, size=t.size)
    est = Estimate.from_counts((ft * (P - Q) + Q) * 10**6, n=10**6, epsilon=1.0, p=P, q=Q)
    r = solve_structured(est, "cls", t.constraints())
    assert r.status == "optimal" and np.all(r.f > 0)
    y = est.f_tilde.copy()
    y[-1] = 1.0  # the root's total is known: variance 0 fixes it (consistency's documented choice)
    var = np.ones(t.size)
    var[-1] = 0.0
    hay = consistency(t, y, var)
    assert np.max(np.abs(r.f - hay)) <= 1e-13
    # nothing at a bound: the multipliers recovered from f alone (tree-structured least squares) are
    # the solver's, and certify the closed form with no solver
    from ldpopt.problems.check.certificate import certificate
    cert = certificate("cls", t.constraints(), est, hay)
    np.testing.assert_allclose(cert.multipliers["hierarchy"], r.duals["hierarchy"], rtol=1e-9, atol=1e-12)
    assert cert.multipliers["leaves"] == pytest.approx(r.duals["leaves"], rel=1e-9, abs=1e-12)
    assert cert.feasible and cert.gap <= 4 * cert.gap_floor + 1e-16


def test_problem_solve_returns_the_certified_tree_pass():
    t = range_tree(200, 2)
    est = _est(t, 0.02, seed=5)
    sol = Problem(est, "cls", t.constraints()).solve()
    assert sol.solver == "LDPOPT-STRUCTURED" and sol.status == "optimal", sol.message
    assert sol.checks.passed and sol.checks.certificate is not None
    cert = sol.checks.certificate
    assert cert.primal_violation <= 1e-15 and cert.gap <= 4 * cert.gap_floor + 1e-15
    assert set(sol.duals) >= {"nonnegative", "leaves", "hierarchy"}
    assert sol.duals["hierarchy"].shape == (t.size - t.d,)
    ref = _cvxpy_cls(est, t.parent, np.arange(t.d), 1.0, "CLARABEL")
    assert np.max(np.abs(sol.f - ref)) <= 1e-7


@pytest.mark.filterwarnings("ignore::ldpopt.problems.constraints.base.SimplexDroppedWarning")  # the root is the total
def test_fixed_root_box_and_fixed_node_and_a_ragged_hand_built_tree():
    # leaves 0..4 at different depths: 5 = 0+1, 6 = 5+2, 7 = 3+4, 8 = 6+7 (root). Root fixed at 1.
    groups = {5: [0, 1], 6: [5, 2], 7: [3, 4], 8: [6, 7]}
    parent = np.full(9, -1)
    for p, ch in groups.items():
        parent[ch] = p
    rng = np.random.default_rng(4)
    ft = np.array([0.3, -0.1, 0.25, 0.4, 0.05, 0.2, 0.5, 0.3, 0.9]) + rng.normal(scale=0.01, size=9)
    est = Estimate.from_counts((ft * (P - Q) + Q) * 10**5, n=10**5, epsilon=1.0, p=P, q=Q)
    with pytest.raises(ValueError, match="infeasible"):  # the root fixed at 1 above its box
        solve_structured(est, "cls", [NonNegative(), Box(upper=0.35), Fixed([8, 2], [1.0, 0.3]), Hierarchy(groups)])
    f = cp.Variable(9)
    c2 = [f >= 0, f <= 0.35, f[8] == 1.0, f[2] == 0.3] + [f[p] == sum(f[c] for c in ch) for p, ch in groups.items()]
    # the box on the leaves and node 5 only
    cons = [NonNegative(), Box(upper=np.where(np.arange(9) < 6, 0.35, 1.0)), Fixed([8, 2], [1.0, 0.3]),
            Hierarchy(groups)]
    r = solve_structured(est, "cls", cons)
    assert r.status == "optimal", r.message
    c2[1] = f <= np.where(np.arange(9) < 6, 0.35, 1.0)
    cp.Problem(cp.Minimize(cp.sum_squares(f - est.f_tilde)), c2).solve(solver="CLARABEL", tol_gap_abs=1e-12,
                                                                       tol_gap_rel=1e-12, tol_feas=1e-12)
    assert np.max(np.abs(r.f - f.value)) <= 1e-7
    assert np.isclose(r.f[2], 0.3) and np.max(r.f[:6]) <= 0.35 + 1e-15
    sol = Problem(est, "cls", cons).solve()
    assert sol.solver == "LDPOPT-STRUCTURED" and sol.status == "optimal", sol.message


def test_not_a_tree_or_not_its_total_is_not_applicable():
    est = Estimate.from_counts(np.full(7, 2e4), n=10**5, epsilon=1.0, p=P, q=Q)
    leaves = SubsetSum([0, 1, 2, 3], 1.0, name="leaves")
    with pytest.raises(NotApplicable, match="forest"):  # two trees: 4 = 0+1, 5 = 2+3; 6 alone
        solve_structured(est, "cls", [NonNegative(), leaves, Hierarchy({4: [0, 1], 5: [2, 3]})])
    with pytest.raises(NotApplicable, match="two parents"):
        solve_structured(est, "cls", [NonNegative(), leaves, Hierarchy({4: [0, 1], 5: [1, 2, 3], 6: [4, 5]})])
    with pytest.raises(NotApplicable, match="parent of two"):
        solve_structured(est, "cls", [NonNegative(), leaves, Hierarchy([(4, [0, 1]), (4, [2, 3]), (6, [4])])])
    tree = Hierarchy({4: [0, 1], 5: [2, 3], 6: [4, 5]})
    with pytest.raises(NotApplicable, match="not the tree's leaf total"):
        solve_structured(est, "cls", [NonNegative(), SubsetSum([0, 1, 2], 1.0), tree])
    with pytest.raises(NotApplicable, match="not the tree's leaf total"):
        solve_structured(est, "cls", [NonNegative(), SubsetSum([0, 1, 2, 3], 1.0, sense="<="), tree])
    with pytest.raises(NotApplicable, match="one total"):
        solve_structured(est, "cls", [NonNegative(), leaves, SubsetSum([0, 1], 0.5), tree])
    with pytest.raises(NotApplicable, match="needs its total"):
        solve_structured(est, "cls", [NonNegative(), tree])
    with pytest.raises(NotApplicable, match="cycle"):
        # root 6 = 4 + 5 over 0, 1, 2, and a loop 3 → 7 → 8 → 3 hanging off nothing
        tree_of(Hierarchy({6: [4, 5], 4: [0, 1], 5: [2], 3: [7], 7: [8], 8: [3]}).matrix(9), 9)
    # Problem.solve falls back to the cvxpy chain and says why in its attempts
    sol = Problem(est, "cls", [NonNegative(), SubsetSum([0, 1, 2], 1.0), tree]).solve()
    assert sol.solver != "LDPOPT-STRUCTURED" and sol.status == "optimal"


def test_infeasible_tree_totals_raise_value_error():
    est = Estimate.from_counts(np.full(7, 2e4), n=10**5, epsilon=1.0, p=P, q=Q)
    tree = Hierarchy({4: [0, 1], 5: [2, 3], 6: [4, 5]})
    with pytest.raises(ValueError, match="infeasible"):
        solve_structured(est, "cls", [NonNegative(), SubsetSum([0, 1, 2, 3], -0.5), tree])
    with pytest.raises(ValueError, match="root's bounds"):
        solve_structured(est, "cls", [NonNegative(), Box(upper=np.array([1, 1, 1, 1, 1, 1, 0.5])),
                                      SubsetSum([0, 1, 2, 3], 1.0), tree])


def test_range_tree_hierarchy_jacobian_is_taken_by_numpy_and_right():
    """ldpopt's check takes Hᵀy of a range tree's Hierarchy (a subclass) from numpy: against loops."""
    from ldpopt.problems.constraints.jacobians import builtin_jacobian_t

    t = range_tree(23, 3)
    y = np.random.default_rng(0).normal(size=t.size - t.d)
    got = builtin_jacobian_t(t.hierarchy(), 0, y, t.size)
    want = np.zeros(t.size)
    for k, p in enumerate(range(t.d, t.size)):  # row k: +1 at node p, −1 at each child
        want[p] += y[k]
        for c in range(t.size):
            if t.parent[c] == p:
                want[c] -= y[k]
    assert got is not None
    np.testing.assert_allclose(got, want, atol=1e-15)


def _prefix_tree(seed, first=512, fan=16, kept=16, sigmas=(0.1, 0.01, 0.03, 0.3, 0.01, 0.1)):
    """A prefix tree shaped like heavy-hitter discovery's levels: a root (fixed at 1) over ``first``
    first-level candidates; at each further level the ``kept`` largest noisy estimates of the level
    above get ``fan`` children each; the others are leaves (leaves at every depth). Node estimates are
    true masses plus N(0, σ²) with σ per level (three orders of magnitude in σ²): most clamp at 0.
    (mean, variance, groups, root)."""
    rng = np.random.default_rng(seed)
    true = [rng.dirichlet(np.full(first, 0.1))]
    noisy = [true[0] + sigmas[0] * rng.normal(size=first)]
    groups, off, size = [], 0, first
    for s in sigmas[1:]:
        par = off + np.argsort(noisy[-1])[-kept:]
        masses = np.concatenate([true[-1][p - off] * rng.dirichlet(np.full(fan, 0.1)) for p in par])
        groups += [(int(p), list(range(size + j * fan, size + (j + 1) * fan))) for j, p in enumerate(par)]
        off, size = size, size + kept * fan
        true.append(masses)
        noisy.append(masses + s * rng.normal(size=masses.size))
    groups.append((size, list(range(first))))
    var = np.concatenate([np.full(x.size, s ** 2) for x, s in zip(noisy, sigmas)] + [[min(sigmas) ** 2]])
    return np.concatenate(noisy + [[1.0]]), var, groups, size


@pytest.mark.filterwarnings("ignore::ldpopt.problems.constraints.base.SimplexDroppedWarning")  # the root is the total
def test_irregular_mixed_depth_prefix_tree_converges_and_matches_clarabel():
    """A root row over 512 candidates whose clipped noise sums far above 1 (top residual ~10), rows of
    16 children, leaves at six depths, weighted least squares with per-level variances 1e-4 … 9e-2.
    Counting every value at a bound within the largest row residual of its kink as free (also the
    values the step pushes further into their bound) made each step the one of the problem without
    f ≥ 0: 100 steps left a row residual of 0.1 here. Against Clarabel with the rows written out."""
    from ldpopt.problems.dual.tree import _newton

    mean, var, groups, root = _prefix_tree(0)
    big = 1.0 + float(np.max(np.abs(mean)))
    est = Estimate.from_frequencies(mean, 10**6, 1.0, 0.5 + 1 / (8 * big), 0.5 - 1 / (8 * big))
    cons = [NonNegative(), Fixed([root], [1.0]), Hierarchy(groups)]
    r = solve_structured(est, "posterior", cons, mean=mean, variance=var)
    assert r.status == "optimal", r.message
    assert np.mean(r.f == 0) > 0.8  # most values clamp
    x = cp.Variable(mean.size)
    rows = [x >= 0, x[root] == 1] + [x[p] == sum(x[c] for c in ch) for p, ch in groups]
    cp.Problem(cp.Minimize(cp.sum(cp.multiply(1 / var, cp.square(x - mean)))), rows).solve(
        solver="CLARABEL", tol_gap_abs=1e-12, tol_gap_rel=1e-12, tol_feas=1e-12)
    assert np.max(np.abs(r.f - x.value)) <= 1e-8
    sol = Problem(est, "posterior", cons, mean=mean, variance=var).solve()
    assert sol.solver == "LDPOPT-STRUCTURED" and sol.status == "optimal", sol.message
    # the step's leaves → root elimination on this mixed-depth tree against a dense solve of H D Hᵀ Δ = g
    from ldpopt.problems.dual.structure import compile_constraints

    tr = compile_constraints(cons, mean.size).tree
    rng = np.random.default_rng(1)
    D = rng.uniform(0.5, 2.0, mean.size) * (rng.uniform(size=mean.size) < 0.7)  # 30 % clamped (D = 0)
    D[tr.leaf] += 1e-3  # every row keeps a positive pivot, so the dense system is nonsingular
    H = np.zeros((tr.rows.size, mean.size))
    H[np.arange(tr.rows.size), tr.rows] = 1.0
    H[tr.kid_row, tr.kids] = -1.0
    g = rng.normal(size=tr.rows.size)
    np.testing.assert_allclose(_newton(tr, D, g), np.linalg.solve(H @ np.diag(D) @ H.T, g), rtol=1e-9, atol=1e-12)
