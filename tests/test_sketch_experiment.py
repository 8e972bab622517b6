"""The consistency-on-sketches experiment (kind "sketches", configs/ext_sketches.toml) runs --quick
and draws its figure."""

import numpy as np
import pytest

from ldpopt.experiments import load_config, run
from ldpopt.experiments.plot import plot
from ldpopt.experiments.tasks_sketches import sketches


def test_sketches_quick_table_and_figure(tmp_path):
    cfg = load_config("ext_sketches", quick=True)
    t = run("ext_sketches", quick=True, out=tmp_path, progress=False)
    mse = t[t.metric == "mse"]
    assert set(mse.method) == set(cfg.methods) and set(mse.oracle) == {"cms", "hcms"}
    assert (mse.value > 0).all() and np.isfinite(mse.value).all()
    m = mse.groupby(["oracle", "epsilon", "method"]).value.mean().unstack()
    # the simplex projection never increases the squared distance to the truth (a point on the simplex)
    assert (m["norm-sub"] <= m["base"] * (1 + 1e-12)).all()
    pred = t[t.metric == "predicted-mse"]
    assert len(pred) == len(mse[mse.method == "base"]) and (pred.value > 0).all()
    paths = plot(tmp_path / "ext_sketches-quick", out=tmp_path / "fig")
    assert paths and all(p.exists() and p.stat().st_size > 10_000 for p in paths)


def test_sketches_kind_names_a_wrong_oracle():
    class T:
        oracle, epsilon, params, methods, rep = "oue", 1.0, (), ("base",), 0

    with pytest.raises(ValueError, match="must be 'cms' or 'hcms'"):
        sketches(T)
