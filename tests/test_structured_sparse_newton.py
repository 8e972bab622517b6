"""The dual method's sparse Newton system (QDLDL on the augmented system, the Woodbury identity for
the rank-two λ terms, iterative refinement) against the dense solve it replaces from 200 rows on."""

import numpy as np
import pytest
import scipy.sparse as sp

from ldpopt import multi
from ldpopt.problems.solvers.structured import dual


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
