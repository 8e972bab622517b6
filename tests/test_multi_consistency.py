"""Consistent marginals (ldpopt.multi): the agreement rows, the consistency Problem against an
independent cvxpy formulation (every pair of marginals, every cell of what they share, no row
dropped), ldpopt's structured solver certified ``optimal`` by ldpopt's check, and CALM's
consistency step (exact weighted projection when no cell is negative; feasible, not optimal, when
non-negativity binds).
"""

from __future__ import annotations

import itertools
import warnings

import cvxpy as cp
import numpy as np
import pytest

from ldpopt import multi
from ldpopt.problems import LinearEquality, NonNegative, Problem, SumTo
from ldpopt.problems.solvers.structured import NotApplicable

DATA = multi.chain_network(600, 4, domains=(2, 3, 2, 2), strength=0.6, rng=4)
BINARY = multi.chain_network(600, 4, strength=0.6, rng=4)  # equal marginal sizes: one GRR (p, q)


def _est(protocol="grr", n_data=DATA, rng=7, way=2):
    return multi.calm(n_data.domains, 1.0, way=way, oracle=protocol).simulate(n_data, rng)


def _referee(est, objective):
    """The problem written directly in cvxpy from its definition (module docstring)."""
    ms = est.marginals
    f = cp.Variable(ms.size)
    cons = [f >= 0] + [cp.sum(f[ms.block(i)]) == 1 for i in range(ms.m)]
    for i, j in itertools.combinations(range(ms.m), 2):
        s = tuple(sorted(set(ms.attrs[i]) & set(ms.attrs[j])))
        if s:
            ssize = int(np.prod([ms.domains[a] for a in s]))
            Pi = np.zeros((ssize, ms.size))
            Pi[ms.projection(i, s), np.arange(ms.offsets[i], ms.offsets[i + 1])] = 1
            Pj = np.zeros((ssize, ms.size))
            Pj[ms.projection(j, s), np.arange(ms.offsets[j], ms.offsets[j + 1])] = 1
            cons.append((Pi - Pj) @ f == 0)
    ft = est.f_tilde
    if objective == "cls":
        obj = cp.sum_squares(f - ft)
    elif objective == "weighted":
        obj = cp.sum(cp.multiply(1.0 / (est.sigma2 / est.sigma2.mean()), cp.square(f - ft)))
    else:
        e = est.estimates[0]
        c = np.concatenate([x.counts for x in est.estimates])
        pos = c > 0
        obj = -cp.sum(cp.multiply(c[pos], cp.log(e.q + (e.p - e.q) * f[pos])))
    cp.Problem(cp.Minimize(obj), cons).solve(solver="CLARABEL", tol_gap_abs=1e-12, tol_gap_rel=1e-12,
                                             tol_feas=1e-12)
    return f.value


def test_agreement_rows_vanish_exactly_on_consistent_marginals():
    est = _est()
    ms = est.marginals
    A = ms.agreement()
    truth = est.truth(DATA)
    assert np.max(np.abs(A @ truth)) < 1e-15
    # 2-way marginals of 4 attributes: attribute a is in 3 marginals -> 2 rows x (d_a - 1) cells
    assert A.shape == (2 * (1 + 2 + 1 + 1), ms.size)
    assert np.linalg.matrix_rank(A.toarray()) == A.shape[0]
    bad = truth.copy()
    bad[ms.block(0)] += np.array([0.01, -0.01, 0.0, 0.0, 0.0, 0.0])  # moves marginal (0, 1)'s attribute-0 split
    assert np.max(np.abs(A @ bad)) > 0.009


def test_redundant_intersections_are_dropped_without_changing_the_set():
    ms = multi.MarginalSet((2, 2, 2, 2), [(0, 1, 2), (0, 1, 3), (0, 2, 3)])
    A = ms.agreement()
    assert np.linalg.matrix_rank(A.toarray()) == A.shape[0]
    # every pairwise agreement (all cells) is in the row space of A
    for i, j in itertools.combinations(range(ms.m), 2):
        s = tuple(sorted(set(ms.attrs[i]) & set(ms.attrs[j])))
        P = np.zeros((4, ms.size))
        P[ms.projection(i, s), np.arange(ms.offsets[i], ms.offsets[i + 1])] += 1
        P[ms.projection(j, s), np.arange(ms.offsets[j], ms.offsets[j + 1])] -= 1
        T = np.zeros((ms.m, ms.size))  # the totals' rows, stated separately
        for k in range(ms.m):
            T[k, ms.block(k)] = 1
        both = np.vstack([A.toarray(), T])
        assert np.linalg.matrix_rank(np.vstack([both, P])) == np.linalg.matrix_rank(both)


@pytest.mark.parametrize("objective", ["cls", "weighted", "likelihood"])
def test_structured_solver_matches_the_cvxpy_referee(objective):
    est = _est(n_data=BINARY if objective == "likelihood" else DATA)
    pr = multi.consistency_problem(est, objective)
    sol = pr.solve()
    assert sol.status == "optimal" and sol.solver == "LDPOPT-STRUCTURED"
    ref = _referee(est, objective)
    assert np.max(np.abs(sol.f - ref)) < 1e-7
    assert np.max(np.abs(est.marginals.agreement() @ sol.f)) < 1e-12
    # and ldpopt's own cvxpy route agrees with both
    if objective != "likelihood":
        via = pr.solve(solver="CLARABEL")
        assert via.status == "optimal" and np.max(np.abs(via.f - sol.f)) < 1e-8


def test_cls_with_unequal_oracles_is_one_problem():
    est = _est("oue")  # OUE's (p, q) are the same on every marginal; n differs
    sol = multi.consistency_problem(est, "weighted").solve()
    assert sol.status == "optimal"
    np.testing.assert_allclose(sol.f, _referee(est, "weighted"), atol=1e-7)
    with pytest.raises(ValueError, match="likelihood"):
        multi.consistency_problem(est, "likelihood")
    with pytest.raises(ValueError, match="likelihood"):  # GRR on marginals of 4 and 6 cells
        multi.consistency_problem(_est(), "likelihood")


def test_calm_step_is_the_weighted_projection_when_no_cell_binds():
    big = multi.chain_network(400_000, 5, rng=1)
    est = multi.calm(big.domains, 2.0, way=2, oracle="grr").simulate(big, 2)
    assert est.f_tilde.min() > 0.01  # no cell near 0: non-negativity does not bind
    got = multi.calm_consistency(est)
    assert got.converged and got.rounds == 0
    opt = multi.consistency_problem(est, "weighted").solve()
    assert np.max(np.abs(got.f - opt.f)) < 1e-10
    cert = multi.certify(est, got.f)
    assert cert.feasible and cert.distance_linf < 1e-8


def test_calm_with_negatives_is_feasible_but_not_the_optimum():
    est = _est()
    assert est.f_tilde.min() < -0.05
    got = multi.calm_consistency(est)
    assert got.converged and got.rounds >= 1
    assert got.max_negative <= 1e-12 and got.max_disagreement < 1e-12
    opt = multi.consistency_problem(est, "weighted").solve()
    obj = multi.consistency_problem(est, "weighted").objective
    vec = multi.consistency_problem(est, "weighted").estimate
    assert obj.value(got.f, vec) > obj.value(opt.f, vec) * (1 + 1e-6)
    cert = multi.certify(est, got.f)
    assert cert.feasible and cert.gap > 1e-6


def test_linear_equality_constraint():
    est = _est()
    ms = est.marginals
    con = LinearEquality(ms.agreement(), name="shared")
    with pytest.raises(ValueError, match="columns"):
        con.matrix(ms.size + 1)
    with pytest.raises(ValueError, match="rhs"):
        LinearEquality(np.eye(3), rhs=[1.0, 2.0])
    with pytest.raises(ValueError, match="2-D"):
        LinearEquality(np.ones(3))
    # a nonzero right-hand side through the structured solver, checked against cvxpy
    from ldpopt import Estimate
    e = Estimate.from_frequencies(np.array([0.5, 0.2, 0.2, 0.1]), 1000, 1.0, 0.6, 0.1)
    cons = [NonNegative(), SumTo(1.0), LinearEquality([[1.0, -1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 2.0]], rhs=[0.1, 0.5])]
    sol = Problem(e, "cls", cons).solve()
    assert sol.status == "optimal" and sol.solver == "LDPOPT-STRUCTURED"
    f = cp.Variable(4)
    cp.Problem(cp.Minimize(cp.sum_squares(f - e.f_tilde)),
               [f >= 0, cp.sum(f) == 1, f[0] - f[1] == 0.1, f[2] + 2 * f[3] == 0.5]).solve(solver="CLARABEL")
    np.testing.assert_allclose(sol.f, f.value, atol=1e-8)
    assert sol.duals["linear"].shape == (2,)


def test_bad_input_is_named():
    est = _est()
    with pytest.raises(ValueError, match="objective"):
        multi.consistency_problem(est, "l2")
    with pytest.raises(TypeError, match="MarginalEstimates"):
        multi.calm_consistency(est.estimates[0])
    with pytest.raises(ValueError, match="max_rounds"):
        multi.calm_consistency(est, max_rounds=0)
    with pytest.raises(ValueError, match="same marginal"):
        multi.MarginalSet((2, 2), [(0, 1), (1, 0)])


def test_one_way_marginals_are_norm_sub_per_attribute():
    """SPL's one-way marginals share nothing: the CLS problem is Norm-Sub attribute by attribute."""
    from ldpopt.methods.normalize import norm_sub

    est = multi.spl(DATA.domains, 1.0).simulate(DATA, 3)
    assert est.marginals.agreement().shape[0] == 0
    sol = multi.consistency_problem(est, "cls").solve()
    assert sol.status == "optimal"
    for i, e in enumerate(est.estimates):
        np.testing.assert_allclose(sol.f[est.marginals.block(i)], norm_sub(e), atol=1e-12)


def test_agreement_rows_skip_the_rank_search_only_when_sure():
    """3-way marginals with overlapping shared sets go through the rank search; the rows it keeps and
    all the rows span the same space (checked above); 2-way ones are already independent."""
    for attrs in ([(0, 1), (0, 2), (1, 2), (2, 3)], multi.all_k_way(5, 3)):
        ms = multi.MarginalSet((2, 3, 2, 2, 2)[:max(max(a) for a in attrs) + 1], attrs)
        A = ms.agreement().toarray()
        assert np.linalg.matrix_rank(A) == A.shape[0]


def test_agreement_rows_built_once_and_handed_out_as_a_copy():
    ms = multi.MarginalSet((2, 3, 3, 2), multi.all_k_way(4, 3))
    A = ms.agreement()
    built = ms._derived["agreement"]
    A.data[:] = 7.0  # a caller's change stays with the caller
    B = ms.agreement()
    assert ms._derived["agreement"] is built and B is not A
    fresh = multi.MarginalSet((2, 3, 3, 2), multi.all_k_way(4, 3)).agreement()
    assert (B != fresh).nnz == 0 and np.all(np.abs(B.data) == 1.0)


def test_consistency_constraints_made_once_per_marginal_set():
    ms = multi.MarginalSet((2, 3, 3, 2), multi.all_k_way(4, 3))
    first, second = multi.problem.consistency_constraints(ms), multi.problem.consistency_constraints(ms)
    assert first is not second and all(a is b for a, b in zip(first, second)) and len(first) == 4
    other = multi.problem.consistency_constraints(multi.MarginalSet((2, 3, 3, 2), multi.all_k_way(4, 3)))
    assert all(a is not b for a, b in zip(first, other))
    assert (first[3].matrix(ms.size) != other[3].matrix(ms.size)).nnz == 0
    assert np.array_equal(first[2].totals, other[2].totals)
