"""The dual method's sparse Newton system (QDLDL on the augmented system, the Woodbury identity for
the rank-two λ terms, iterative refinement) against the dense solve it replaces from 200 rows on."""

import numpy as np
import pytest
import scipy.sparse as sp

from ldpopt import multi
from ldpopt.problems.dual import dual


def _consistency(way, domains, obj, seed):
    data = multi.chain_network(20_000, len(domains), domains=domains, strength=0.6, rng=1)
    est = multi.calm(data.domains, 1.0, way=way, oracle="oue").simulate(data, seed)
    return multi.consistency_problem(est, obj)


def test_sparse_system_solves_the_dense_one():
    rng = np.random.default_rng(0)
    A = sp.random(60, 200, density=0.05, random_state=1, format="csr")
    Dn = np.where(rng.random(200) < 0.8, rng.uniform(0.1, 2.0, 200), 0.0)
    D_all = np.where(Dn > 0, Dn, rng.uniform(0.1, 2.0, 200))
    mu = 1e-3
    H = dual._schur(A, Dn) + mu * dual._schur(A, D_all)
    rows = rng.random(60) < 0.9
    r = rng.standard_normal(int(rows.sum()))
    system = dual._SparseNewton(dual._Augmented(A), Dn, D_all, mu)
    x = system.solve(rows, r)
    Hr = H[np.ix_(rows, rows)]
    assert np.abs(Hr @ x - r).max() <= 1e-9 * np.abs(r).max() * np.linalg.cond(Hr) ** 0.5
    np.testing.assert_allclose(system.H_diag, np.diag(dual._schur(A, Dn)), rtol=1e-12, atol=1e-15)
    z = rng.standard_normal(int((~rows).sum()))
    np.testing.assert_allclose(system.block_times(rows, ~rows, z), H[np.ix_(rows, ~rows)] @ z,
                               rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("obj", ["cls", "weighted"])
def test_sparse_and_dense_newton_reach_the_same_certified_answer(monkeypatch, obj):
    """3-way marginals over (2, 3, 3, 4, 5): 367 cells, 179 rows, below the sparse threshold; forced
    through the sparse path, the answer is certified and equals the dense path's to 1e-9."""
    dense = _consistency(3, (2, 3, 3, 4, 5), obj, 2).solve(progress=False)
    monkeypatch.setattr(dual, "_SPARSE_ROWS", 0)
    monkeypatch.setattr(dual, "_SPARSE_FILL", 1.0)
    calls = []
    original = dual._SparseNewton.solve

    def counted(self, rows, r):
        calls.append(rows.sum())
        return original(self, rows, r)

    monkeypatch.setattr(dual._SparseNewton, "solve", counted)
    sparse = _consistency(3, (2, 3, 3, 4, 5), obj, 2).solve(progress=False)
    assert calls, "the sparse Newton system was not used"
    assert dense.status == sparse.status == "optimal"
    assert sparse.solver == "LDPOPT-STRUCTURED"
    np.testing.assert_allclose(np.ravel(sparse.f), np.ravel(dense.f), atol=1e-9)


@pytest.mark.parametrize("obj", ["cls", "weighted"])
@pytest.mark.parametrize("domains", [(2, 3, 3, 4, 5), (2,) * 8])
def test_projection_start_reaches_the_same_answer_in_fewer_newton_steps(monkeypatch, obj, domains):
    """The rows' projection as the start (a quadratic objective, >= 32 rows): certified, the same f
    as the y = 0 start to 1e-12, and fewer Newton steps (dense path at 179 rows, sparse at 355)."""
    from ldpopt.problems.solvers.structured.solver import solve_structured
    from ldpopt.problems.dual.structure import compiled_for

    pr = _consistency(3, domains, obj, 2)
    proj = solve_structured(pr.estimate, pr.objective, compiled_for(pr))
    monkeypatch.setattr(dual, "_PROJECTION_ROWS", 10**9)
    zero = solve_structured(pr.estimate, pr.objective, compiled_for(pr))
    assert proj.iterations.get("projection_start") and "projection_start" not in zero.iterations
    assert proj.status == zero.status == "optimal"
    np.testing.assert_allclose(proj.f, zero.f, atol=1e-12)
    assert proj.iterations["newton_iterations"] < zero.iterations["newton_iterations"]


def test_projection_start_is_the_equality_constrained_projection():
    """Its (λ, y) give f = f̃ − (λ1 + Aᵀy)/2 on the rows (cls: h = (f − f̃)², bounds dropped), the
    point scipy's least-squares projection onto {Σ f = total, A f = b} finds (a dense KKT solve)."""
    from ldpopt.problems.objectives.separable import Quadratic

    rng = np.random.default_rng(3)
    d, m = 60, 40
    A = sp.random(m, d, density=0.1, random_state=4, format="csr")
    A.data = rng.standard_normal(A.nnz)
    ft = rng.normal(0.02, 0.05, d)
    b = A @ np.abs(rng.normal(0.02, 0.01, d))

    class St:  # the fields _projection_start reads
        pass

    st = St()
    st.d, st.A, st.b, st.total, st.ineq = d, A, b, 1.0, np.zeros(m, bool)
    st.m = m
    st.residual = lambda x: A @ x - b
    lam, y = dual._projection_start(Quadratic(ft, 1.0, "cls"), st, None, None, [], A.T.tocsr())
    f = ft - (lam + A.T @ y) / 2.0
    C = np.vstack([np.ones(d), A.toarray()])
    K = np.block([[2 * np.eye(d), C.T], [C, np.zeros((m + 1, m + 1))]])
    ref = np.linalg.solve(K, np.concatenate([2 * ft, [1.0], b]))[:d]
    np.testing.assert_allclose(f, ref, atol=1e-10)


def test_sparse_system_kept_per_row_set(monkeypatch):
    """A second problem over the same rows reuses the first's system (its symbolic factorisation)
    and gets the same bits; a system in use is never handed out twice; the cache keeps KEEP."""
    monkeypatch.setattr(dual._Augmented, "_recent", [])
    made = []
    original = dual._Augmented.__init__

    def counted(self, A):
        made.append(self)
        original(self, A)

    monkeypatch.setattr(dual._Augmented, "__init__", counted)
    first = _consistency(3, (2,) * 8, "cls", 1).solve(progress=False)
    second = _consistency(3, (2,) * 8, "cls", 1).solve(progress=False)
    assert first.status == second.status == "optimal"
    assert len(made) == 1 and dual._Augmented._recent == made
    np.testing.assert_array_equal(first.f, second.f)
    A = made[0].A
    a, b = dual._Augmented.of(A), dual._Augmented.of(A)
    assert a is made[0] and b is not a and dual._Augmented._recent == []
    B = A.copy()
    B.data[0] = 2.0
    assert not a.same_rows(B) and a.same_rows(A.copy())
    for aug in (a, b, *(dual._Augmented(A) for _ in range(dual._Augmented.KEEP))):
        aug.release()
    assert len(dual._Augmented._recent) == dual._Augmented.KEEP and a not in dual._Augmented._recent


def test_large_sparse_systems_are_not_kept(monkeypatch):
    monkeypatch.setattr(dual._Augmented, "_recent", [])
    A = sp.random(30, 80, density=0.1, random_state=5, format="csr")
    aug = dual._Augmented(A)
    monkeypatch.setattr(dual._Augmented, "KEEP_NNZ", aug.mat.nnz - 1)
    aug.release()
    assert dual._Augmented._recent == []
    monkeypatch.setattr(dual._Augmented, "KEEP_NNZ", aug.mat.nnz)
    aug.release()
    assert dual._Augmented._recent == [aug]
