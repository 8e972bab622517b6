"""Maximum-entropy reconstruction of marginals that were not collected (ldpopt.multi.reconstruct):
exact where the answer is known in closed form, a property where it is not, and its errors."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import examples

from ldpopt import multi
from ldpopt.multi.reconstruct import maxent, total_variation


def _exact(joint, ms):
    k = joint.ndim
    return np.concatenate([joint.sum(axis=tuple(j for j in range(k) if j not in a)).ravel() for a in ms.attrs])


def _entropy(t):
    t = t[t > 0]
    return float(-(t * np.log(t)).sum())


@pytest.mark.parametrize("pairs", ["chain", "all"])
def test_chain_law_is_recovered_from_its_two_way_marginals(pairs):
    # the chain's joint factorises over (j, j+1): it is the max-ent table given those marginals (and
    # given all 2-way ones, which it also matches), so IPF must return it exactly
    data = multi.chain_network(10, 6, domains=(2, 3, 2, 4, 2, 3), strength=0.6, rng=1)
    joint = data.meta["joint"]
    attrs = [(j, j + 1) for j in range(5)] if pairs == "chain" else multi.all_k_way(6, 2)
    ms = multi.MarginalSet(data.domains, attrs)
    r = maxent(ms, _exact(joint, ms))
    assert r.converged
    np.testing.assert_allclose(r.table, joint, atol=1e-10, rtol=0)
    for a in multi.all_k_way(6, 3):  # every 3-way marginal, none of them given
        assert total_variation(r.marginal(a), joint.sum(axis=tuple(j for j in range(6) if j not in a)).ravel()) < 1e-9


def test_one_way_marginals_give_the_product_table():
    rng = np.random.default_rng(3)
    ps = [rng.dirichlet(np.ones(d)) for d in (3, 2, 4)]
    ms = multi.MarginalSet((3, 2, 4), [(0,), (1,), (2,)])
    r = maxent(ms, np.concatenate(ps))
    np.testing.assert_allclose(r.table, np.einsum("i,j,k->ijk", *ps), atol=1e-14, rtol=0)


def test_real_data_marginals_are_matched_at_no_less_entropy_than_the_truth():
    data = multi.item_presence("retail", top=7)
    ms = multi.MarginalSet(data.domains, multi.all_k_way(7, 2))
    truth = np.zeros(data.domains)
    truth[tuple(data.tuples.T)] = data.counts / data.n
    r = maxent(ms, _exact(truth, ms), tol=1e-11)
    assert r.converged
    np.testing.assert_allclose(np.concatenate(r.marginals(ms.attrs)), _exact(truth, ms), atol=1e-10, rtol=0)
    # the true table matches the same marginals, so the maximum-entropy one has at least its entropy
    assert _entropy(r.table) >= _entropy(truth) - 1e-9
    assert _entropy(r.table) > _entropy(truth) + 1e-3  # retail's items are not a pairwise model


def test_noisy_marginals_made_consistent_reconstruct_three_way_marginals():
    data = multi.chain_network(200_000, 6, strength=0.7, rng=2)
    joint = data.meta["joint"]
    est = multi.calm(data.domains, 2.0, way=2).simulate(data, rng=5)
    sol = multi.consistency_problem(est, "weighted").solve()
    assert sol.status == "optimal"
    r = maxent(est.marginals, sol.f, tol=1e-10)
    assert r.converged
    tv = [total_variation(r.marginal(a), joint.sum(axis=tuple(j for j in range(6) if j not in a)).ravel())
          for a in multi.all_k_way(6, 3)]
    # the 3-way answers are as close as the 2-way inputs allow: each 2-way input is within TV 0.05 here
    worst_in = max(total_variation(x, t) for x, t in zip(est.marginals.split(sol.f), np.split(est.truth(data), est.marginals.offsets[1:-1])))
    assert worst_in < 0.05 and max(tv) < 2 * worst_in


def test_bad_input_is_named():
    data = multi.chain_network(50_000, 4, rng=2)
    est = multi.calm(data.domains, 0.5, way=2).simulate(data, rng=1)
    with pytest.raises(ValueError, match="consistent"):
        maxent(est.marginals, est.f_tilde)
    with pytest.raises(ValueError, match="max_sweeps"):
        maxent(est.marginals, est.truth(data), max_sweeps=0)
    with pytest.raises(ValueError, match="tol"):
        maxent(est.marginals, est.truth(data), tol=-1)
    with pytest.raises(TypeError, match="marginals"):
        maxent(est, est.truth(data))
    wide = multi.MarginalSet((2,) * 23, [(0, 1)])
    with pytest.raises(ValueError, match="cells"):
        maxent(wide, np.full(4, 0.25))
    with pytest.raises(ValueError, match="same shape"):
        total_variation(np.ones(2), np.ones(3))


def test_fit_table_is_maxent_when_a_table_matches_and_fits_noisy_marginals_otherwise():
    from ldpopt.multi import fit_table

    data = multi.chain_network(10, 5, domains=(2, 3, 2, 2, 3), strength=0.6, rng=4)
    joint = data.meta["joint"]
    ms = multi.MarginalSet(data.domains, multi.all_k_way(5, 2))
    r = fit_table(ms, _exact(joint, ms), tol=1e-12, max_iter=5000)
    assert r.converged
    np.testing.assert_allclose(r.table, joint, atol=1e-8, rtol=0)
    # noisy raw f̃ (no joint table matches them): the fit's loss is at most the true table's, which is
    # one point of the simplex, and its Frank–Wolfe gap bounds how far it is from the minimum
    big = multi.chain_network(50_000, 5, domains=(2, 3, 2, 2, 3), strength=0.6, rng=4)
    est = multi.calm(big.domains, 1.0, way=2).simulate(big, rng=2)
    fit = fit_table(est.marginals, est.f_tilde, tol=1e-4, max_iter=3000)
    assert fit.converged and fit.residual <= 1e-4
    truth = big.meta["joint"]
    loss_truth = 0.5 * float(np.sum((_exact(truth, est.marginals) - est.f_tilde) ** 2))
    assert fit.loss <= loss_truth
    assert abs(fit.table.sum() - 1) < 1e-12 and fit.table.min() >= 0
    with pytest.raises(ValueError, match="weights"):
        fit_table(est.marginals, est.f_tilde, weights=np.ones(3))
    with pytest.raises(ValueError, match="max_iter"):
        fit_table(est.marginals, est.f_tilde, max_iter=0)


def test_fit_table_sparse_map_is_the_marginals_and_takes_the_reductions_steps(monkeypatch):
    """On generated layouts (2 to 6 attributes of 2 to 4 values, 1 to 5 marginals of 1 to 3
    attributes, random weights, noisy targets): the sparse matrix applied to a table gives its
    marginals (summed here with numpy), and fit_table on it takes the same steps as on the
    per-marginal reductions it uses above ``SPARSE_NNZ``: the same iterates over 5 steps (to
    rounding), and after 300 (where a step's halving may flip on a rounding-level tie in the loss)
    the same table to 1e-9."""
    from ldpopt.multi import fit_table
    from ldpopt.multi import reconstruct as rc

    rng = np.random.default_rng(11)
    for _ in range(examples(25)):
        k = int(rng.integers(2, 7))
        doms = tuple(int(x) for x in rng.integers(2, 5, size=k))
        subsets = {tuple(sorted(rng.choice(k, size=int(rng.integers(1, min(k, 3) + 1)), replace=False).tolist()))
                   for _ in range(int(rng.integers(1, 6)))}
        ms = multi.MarginalSet(doms, sorted(subsets))
        table = rng.dirichlet(np.full(int(np.prod(doms)), 0.5)).reshape(doms)
        np.testing.assert_allclose(rc._marginal_matrix(ms) @ table.ravel(), _exact(table, ms), rtol=0, atol=1e-15)
        f = _exact(table, ms) + rng.normal(0, 0.02, ms.size)
        w = rng.uniform(0.5, 2.0, ms.m)
        for steps, atol in ((5, 1e-15), (300, 1e-9)):
            sparse = fit_table(ms, f, w, max_iter=steps, tol=0.0)
            with monkeypatch.context() as m:
                m.setattr(rc, "SPARSE_NNZ", 0)
                reduced = fit_table(ms, f, w, max_iter=steps, tol=0.0)
            assert sparse.sweeps == reduced.sweeps == steps
            np.testing.assert_allclose(sparse.table, reduced.table, rtol=0, atol=atol)
            assert abs(sparse.loss - reduced.loss) <= 10 * atol
