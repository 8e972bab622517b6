"""The pooling experiment (kind "pooling", configs/ext_pooling.toml) runs --quick and draws its figure."""

import numpy as np
import pytest

from ldpopt.experiments import run
from ldpopt.experiments.config import load_config
from ldpopt.experiments.figures.draw import plot
from ldpopt.experiments.task_kinds.pooling import METHODS, group_specs


def test_pooling_quick_table_and_figure(tmp_path):
    cfg = load_config("ext_pooling", quick=True)
    t = run("ext_pooling", quick=True, out=tmp_path, progress=False)
    mse = t[t.metric == "mse"]
    groups = len(cfg.params["groups"])
    want = {f"alone:{i}" for i in range(groups)} | set(METHODS[1:])
    assert set(mse.method) == want
    assert (mse.value > 0).all() and np.isfinite(mse.value).all()
    m = mse.groupby(["epsilon", "method"]).value.mean().unstack()
    # pooling all groups beats the users-weighted average and the worst group alone at every ε
    alone = m[[c for c in m.columns if c.startswith("alone:")]]
    for col in ("pool-mle", "pool-ivw-simplex"):
        assert (m[col] < alone.max(axis=1)).all() and (m[col] < m["pool-naive"]).all()
    pred = t[t.metric == "predicted-mse"]
    assert len(pred) == len(t[(t.metric == "mse") & (t.method == "pool-ivw")]) and (pred.value > 0).all()
    paths = plot(tmp_path / "ext_pooling-quick", out=tmp_path / "fig")
    assert paths and all(p.exists() and p.stat().st_size > 10_000 for p in paths)


def test_pooling_groups_are_checked():
    class T:
        oracle, epsilon, params = "oue", 1.0, (("groups", ((("epsilon", 1.0), ("oracle", "grr"), ("share", 0.5)),)),)

    with pytest.raises(ValueError, match="shares must be > 0 and sum to 1"):
        group_specs(T)
