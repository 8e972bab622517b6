"""Multi-attribute data (ldpopt.multi): MultiDataset, item presence in the shipped transaction files
(against the shipped item supports and a plain-Python reading of the file), the synthetic chain
network (its samples against its exact law, its dependence and Markov property on the law).
"""

from __future__ import annotations

import gzip

import numpy as np
import pytest
from scipy.stats import chisquare

from ldpopt import datasets, multi
from ldpopt.datasets import _paths


def test_dataset_round_trip_and_marginals():
    v = np.array([[0, 2], [1, 0], [0, 2], [1, 1], [0, 0]])
    d = multi.MultiDataset.from_values(v, (2, 3))
    assert d.n == 5 and d.tuples.shape == (4, 2)
    assert sorted(map(tuple, d.values().tolist())) == sorted(map(tuple, v.tolist()))
    np.testing.assert_array_equal(d.marginal((0,), normalize=False), [3, 2])
    # cell (a, b) of the (0, 1) marginal is a·3 + b
    np.testing.assert_array_equal(d.marginal((0, 1), normalize=False), [1, 0, 2, 1, 1, 0])
    with pytest.raises(ValueError, match="domain"):
        multi.MultiDataset.from_values(v, (2, 2))
    with pytest.raises(ValueError, match="values"):
        multi.MultiDataset.from_values(np.array([0, 1]))
    with pytest.raises(ValueError, match="attributes"):
        d.marginal((0, 0))


@pytest.mark.parametrize("name, loader", [("retail", datasets.retail), ("bms-webview-1", datasets.bms_webview_1),
                                          ("bms-webview-2", datasets.bms_webview_2)])
def test_item_presence_one_way_marginals_are_the_shipped_supports(name, loader):
    got = multi.item_presence(name, 8)
    ds = loader()  # the shipped item_counts.csv: occurrences per item (no item repeats within a line)
    top = np.argsort(-ds.counts, kind="stable")[:8]
    np.testing.assert_array_equal(got.meta["item_ids"], np.asarray(ds.labels)[top])
    ones = np.array([got.marginal((j,), normalize=False)[1] for j in range(8)])
    np.testing.assert_array_equal(ones, ds.counts[top])
    assert got.n == {"retail": 88162, "bms-webview-1": 59602, "bms-webview-2": 77512}[name]


def test_item_presence_two_way_marginal_against_the_file():
    got = multi.item_presence("retail", 3)
    a, b = (int(x) for x in got.meta["item_ids"][:2])
    both = only_a = only_b = none = 0
    with gzip.open(_paths.find("retail", "retail.dat.gz"), "rt") as fh:  # a plain reading of the file
        for line in fh:
            items = set(line.split())
            ia, ib = str(a) in items, str(b) in items
            both += ia and ib
            only_a += ia and not ib
            only_b += ib and not ia
            none += not (ia or ib)
    np.testing.assert_array_equal(got.marginal((0, 1), normalize=False), [none, only_b, only_a, both])


def test_chain_network_samples_follow_its_law():
    data = multi.chain_network(200_000, 4, domains=(2, 3, 2, 3), strength=0.5, rng=8)
    joint = data.meta["joint"]
    assert joint.shape == (2, 3, 2, 3) and joint.sum() == pytest.approx(1.0, abs=1e-14)
    for attrs in [(0, 1), (1, 2), (0, 3), (2, 3)]:
        other = tuple(j for j in range(4) if j not in attrs)
        law = joint.sum(axis=other).ravel()
        obs = data.marginal(attrs, normalize=False)
        assert chisquare(obs, law * data.n).pvalue > 1e-3


def test_chain_network_dependence_is_the_chains():
    data = multi.chain_network(10, 3, domains=2, strength=0.6, rng=1)
    J = data.meta["joint"]
    pab = J.sum(axis=2)
    # neighbours are dependent: P(x0 = x1) = 0.6 + 0.4/2 = 0.8
    assert pab[0, 0] + pab[1, 1] == pytest.approx(0.8, abs=1e-12)
    assert abs(pab[0, 0] - pab.sum(axis=1)[0] * pab.sum(axis=0)[0]) > 0.05
    # Markov: P(a, b, c) P(b) = P(a, b) P(b, c)
    pb, pbc = J.sum(axis=(0, 2)), J.sum(axis=0)
    np.testing.assert_allclose(J * pb[None, :, None], pab[:, :, None] * pbc[None, :, :], atol=1e-15)
    # strength 0: attributes after the first are independent uniform
    J0 = multi.chain_network(10, 3, strength=0.0, rng=1).meta["joint"]
    np.testing.assert_allclose(J0, np.broadcast_to(J0.sum(axis=(1, 2))[:, None, None] * 0.25, J0.shape), atol=1e-15)


def test_bad_input_is_named():
    with pytest.raises(ValueError, match="name"):
        multi.item_presence("kosarak", 5)
    with pytest.raises(ValueError, match="top"):
        multi.item_presence("retail", 0)
    with pytest.raises(ValueError, match="strength"):
        multi.chain_network(10, 3, strength=1.5, rng=0)
    with pytest.raises(ValueError, match="cells"):
        multi.chain_network(10, 30, domains=2, rng=0)
