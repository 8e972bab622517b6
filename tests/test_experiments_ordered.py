"""The ext_ordered experiment's quick run (kind ``ordered``): its rows against an estimate recomputed
here, properties of the methods that could fail, the dataset keys of the kind, its errors and its figure."""

from __future__ import annotations

import numpy as np
import pytest

from ldpopt import datasets, oracles
from ldpopt.experiments import run
from ldpopt.experiments.config import load_config
from ldpopt.experiments.figures.draw import plot
from ldpopt.experiments.runner import tasks_of
from ldpopt.experiments.task_kinds.ordered import bands, ordered, ordered_dataset


def test_ext_ordered_quick_numbers_and_figure(tmp_path):
    t = run("ext_ordered", quick=True, out=tmp_path, progress=False)
    cfg = load_config("ext_ordered", quick=True)
    assert set(t.method) == set(cfg.methods)
    assert set(t.metric) == {"mse", "mse-head", "mse-mid", "mse-tail", "seconds"}
    # Base's MSE from an estimate drawn here with the task's generator (GRR's exact fast path)
    task = next(x for x in tasks_of(cfg) if x.dataset_name == "beta-5-2")
    counts = ordered_dataset(task.dataset)
    est = oracles.get("grr", epsilon=task.epsilon, d=counts.size).simulate(counts, task.rng())
    f = counts / counts.sum()
    row = t[(t.dataset == "beta-5-2") & (t.epsilon == task.epsilon) & (t.rep == task.rep) & (t.method == "base")]
    got = row.set_index("metric").value
    assert got["mse"] == pytest.approx(float(np.mean((est.f_tilde - f) ** 2)), rel=1e-12)
    idx = np.argsort(-f, kind="stable")[: f.size // 10]
    assert got["mse-head"] == pytest.approx(float(np.mean((est.f_tilde[idx] - f[idx]) ** 2)), rel=1e-12)
    m = t[t.metric == "mse"].groupby(["dataset", "method"]).value.mean()
    for ds in ("beta-5-2", "zipf-shuffled"):
        # projecting onto the simplex never moves an estimate away from a point on it
        assert m[ds, "norm-sub"] <= m[ds, "base"] and m[ds, "dw-simplex"] <= m[ds, "dw"]
    # the order helps on the smooth histogram: the penalised CLS beats Norm-Sub there
    assert m["beta-5-2", "pen-cls"] < m["beta-5-2", "norm-sub"]
    paths = plot(tmp_path / "ext_ordered-quick", out=tmp_path / "fig")
    assert [p.name for p in paths] == ["ext_ordered_mse.png"] and paths[0].stat().st_size > 10_000


def test_bands_partition_the_domain_by_true_frequency():
    f = np.random.default_rng(3).dirichlet(np.ones(50))
    b = bands(f)
    assert sorted(np.concatenate(list(b.values())).tolist()) == list(range(50))
    assert [len(b[k]) for k in ("head", "mid", "tail")] == [5, 20, 25]
    assert f[b["head"]].min() >= f[b["mid"]].max() >= f[b["mid"]].min() >= f[b["tail"]].max()


def test_dataset_keys_first_and_shuffle():
    base = datasets.load("zipf", n=5000, d=40, rng=2).counts
    spec = (("d", 40), ("first", 30), ("n", 5000), ("name", "zipf"), ("rng", 2), ("shuffle", 9))
    got = ordered_dataset(spec)
    assert got.size == 30 and sorted(got.tolist()) == sorted(base[:30].tolist())
    assert not np.array_equal(got, base[:30]) and np.array_equal(got, ordered_dataset(spec))
    with pytest.raises(ValueError, match="first must be an int"):
        ordered_dataset((("first", 1), ("name", "zipf"), ("n", 100), ("d", 8), ("rng", 0)))


def test_ems_needs_grr():
    cfg = load_config("ext_ordered", quick=True)
    task = tasks_of(cfg)[0]
    with pytest.raises(ValueError, match="ems.*oracle 'grr'"):
        ordered(task.__class__(**{**task.__dict__, "oracle": "oue"}))
