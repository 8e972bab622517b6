"""The exact feasibility decision's cheap steps before any LP (ldpopt.problems.constraints.feasibility):
the part-wise uniform point and the dense simplex's vertex on the aggregated system, each repaired and
checked exactly. Random small systems with totals nudged by one or two float steps (margins ~1e-16)
are decided as an independent rational reference decides them (vertex enumeration in Fractions, or
the closed form of disjoint blocks), and the dense simplex finds a point exactly where HiGHS's
phase-one LP does."""

from __future__ import annotations

import itertools
from fractions import Fraction

import numpy as np
import pytest

from ldpopt import Estimate
from ldpopt.problems import PartitionTotals, Problem, Simplex, SubsetSum
from ldpopt.problems.constraints.farkas import dense_phase_one, phase_one
from ldpopt.problems.constraints.feasibility import decide


def _est(d):
    return Estimate.from_frequencies(np.full(d, 1.0 / d), 1000, 1.0, 0.5, 0.25)


def _solve_exact(M, rhs):
    """The unique solution of M g = rhs (Fractions) when M's columns are independent and the system is
    consistent, else None (Gaussian elimination written out here)."""
    rows = [list(r) + [v] for r, v in zip(M, rhs)]
    n = len(M[0])
    piv_rows = []
    r = 0
    for c in range(n):
        p = next((i for i in range(r, len(rows)) if rows[i][c] != 0), None)
        if p is None:
            return None  # dependent columns
        rows[r], rows[p] = rows[p], rows[r]
        rows[r] = [v / rows[r][c] for v in rows[r]]
        for i in range(len(rows)):
            if i != r and rows[i][c] != 0:
                f = rows[i][c]
                rows[i] = [a - f * b for a, b in zip(rows[i], rows[r])]
        piv_rows.append(r)
        r += 1
    if any(row[-1] != 0 for row in rows[r:]):
        return None  # inconsistent
    return [rows[i][-1] for i in piv_rows]


def _reference(d, subsets, totals) -> bool:
    """Whether f ≥ 0, Σ f = 1, Σ_{S_k} f = b_k has a point, exactly: the values aggregated by their
    membership pattern (atoms, g ≥ 0), then every basic solution enumerated (a non-empty polyhedron
    {g ≥ 0, A g = b} has a vertex: independent columns, solved exactly, g ≥ 0)."""
    member = np.array([[v in set(S.tolist()) for S in subsets] for v in range(d)], dtype=int)
    atoms = np.unique(member, axis=0)
    A = [[Fraction(1)] * len(atoms)] + [[Fraction(int(a[k])) for a in atoms] for k in range(len(subsets))]
    b = [Fraction(1)] + [Fraction(t) for t in totals]
    for size in range(1, len(A) + 1):
        for cols in itertools.combinations(range(len(atoms)), size):
            g = _solve_exact([[row[c] for c in cols] for row in A], b)
            if g is not None and all(v >= 0 for v in g):
                return True
    return False


def _nudge(t, steps):
    for _ in range(abs(steps)):
        t = float(np.nextafter(t, np.inf if steps > 0 else -np.inf))
    return t


def test_random_subset_sums_at_float_step_margins():
    rng = np.random.default_rng(7)
    hows, n_feasible, n_infeasible = [], 0, 0
    for case in range(36):
        d = int(rng.choice([10, 16]))
        x = rng.dirichlet(np.ones(d)) * (rng.random(d) < 0.7)  # exact zeros: vertices of the atoms
        x /= x.sum()
        if case % 3 == 0:  # a value set and its complement (disjoint rows), then a random half
            S0 = np.flatnonzero(rng.random(d) < 0.5)
            subsets = [S0, np.setdiff1d(np.arange(d), S0), np.flatnonzero(rng.random(d) < 0.5)]
        else:
            subsets = [np.flatnonzero(rng.random(d) < 0.5) for _ in range(int(rng.integers(2, 4)))]
        subsets = [S for S in subsets if 0 < S.size < d]
        totals = [_nudge(float(x[S].sum()), int(rng.choice([0, 0, 1, -1, 2]))) for S in subsets]
        cons = [Simplex()] + [SubsetSum(S, t, name=f"s{k}") for k, (S, t) in enumerate(zip(subsets, totals))]
        got = decide(Problem(_est(d), "cls", cons))
        want = _reference(d, subsets, totals)
        assert got.feasible is want, (case, got.how)
        hows.append(got.how)
        n_feasible += want
        n_infeasible += not want
    assert n_feasible >= 5 and n_infeasible >= 5  # both sides at float-step margins
    assert any("dense simplex" in h for h in hows)


@pytest.mark.parametrize("steps", [-2, -1, 0, 1, 2])
def test_partition_totals_at_float_step_margins(steps):
    d = 60
    parts = np.array_split(np.arange(d), 6)
    totals = [0.1, 0.2, 0.15, 0.05, _nudge(0.3, steps)]  # the sixth group gets what is left of 1
    cons = [Simplex(), PartitionTotals({f"g{k}": g for k, g in enumerate(parts[:5])},
                                       {f"g{k}": t for k, t in enumerate(totals)})]
    got = decide(Problem(_est(d), "cls", cons))
    want = sum(Fraction(t) for t in totals) <= 1  # every total ≥ 0; the rest's mass 1 − Σ ≥ 0
    assert got.feasible is want
    if want:
        assert got.how == "uniform point on each part, checked exactly"


def test_consistent_marginals_proved_feasible_without_lp():
    from ldpopt import multi

    data = multi.chain_network(2000, 4, domains=(2, 3, 2, 3), rng=1)
    est = multi.calm(data.domains, 1.0, way=3, oracle="oue").simulate(data, 1)
    got = decide(multi.consistency_problem(est))
    assert got.feasible is True and got.how == "uniform point on each part, checked exactly"


def test_dense_simplex_finds_a_point_where_highs_does():
    rng = np.random.default_rng(3)
    found = 0
    for case in range(40):
        m, n = int(rng.integers(1, 5)), int(rng.integers(2, 9))
        A = rng.integers(-2, 3, (m, n)).astype(float)
        ineq = rng.random(m) < 0.4
        lo = np.zeros(n)
        up = np.where(rng.random(n) < 0.3, rng.uniform(0.5, 2.0, n), np.inf)
        x = rng.uniform(0, 1, n)
        b = A @ x + np.where(ineq, rng.uniform(-0.5, 0.5, m), 0.0) + (case % 4 == 0) * rng.normal(0, 3, m)
        _, hx = phase_one(A, b, ineq, lo, up)
        viol = np.concatenate([np.where(ineq, A @ hx - b, np.abs(A @ hx - b)), lo - hx, hx - up])
        highs_feasible = bool(np.max(viol) <= 1e-9)
        got = dense_phase_one(A, b, ineq, lo, up)
        assert (got is not None) is highs_feasible, case
        if got is None:
            continue
        found += 1
        assert np.all(got >= lo) and np.all(got <= up + 1e-9)
        assert np.all(np.where(ineq, A @ got - b <= 1e-9, np.abs(A @ got - b) <= 1e-9))
    assert found >= 20


def test_same_columns_against_a_column_gather():
    import scipy.sparse as sp

    from ldpopt.problems.constraints.farkas import aggregate, same_columns

    rng = np.random.default_rng(5)
    seen = {True: 0, False: 0}
    for case in range(400):
        m, d = int(rng.integers(1, 5)), int(rng.integers(1, 12))
        A = sp.random(m, d, density=rng.uniform(0.2, 1.0), random_state=rng,
                      data_rvs=lambda k: rng.integers(-2, 3, k).astype(float)).tocsr()
        if case % 2:
            Ag, _, _, inv = aggregate(A, np.zeros(d), np.ones(d))
        else:  # another matrix's columns, or A's own with one entry changed
            inv = rng.integers(0, d, d)
            Ag = A[:, np.arange(d)].tolil()
            Ag[int(rng.integers(m)), int(rng.integers(d))] = float(rng.integers(-2, 3))
            Ag = Ag.tocsr()
        want = (A != Ag[:, inv]).nnz == 0
        assert same_columns(A, Ag, inv) is want
        seen[want] += 1
    assert min(seen.values()) >= 20
