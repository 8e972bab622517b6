"""The consistency-on-sketches experiment (kind "sketches", configs/ext_sketches.toml) runs --quick
and draws its figure."""

import numpy as np
import pytest

from ldpopt.experiments import run
from ldpopt.experiments.config import load_config
from ldpopt.experiments.figures.draw import plot
from ldpopt.experiments.task_kinds.sketches import sketches


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
    from test_plots import recording  # the readability rules every figure of the project meets

    with recording() as saved:
        paths = plot(tmp_path / "ext_sketches-quick", out=tmp_path / "fig")
    assert [p.name for p in paths] == ["ext_sketches_mse.png", "ext_sketches_mae.png"]
    assert all(p.exists() and p.stat().st_size > 10_000 for p in paths)
    assert not [f"{name}: {q}" for _, name, qs in saved for q in qs]
    fig = saved[0][0]
    left, right = fig.axes[0], fig.axes[1]
    assert "Base, predicted (exact variance over the family)" in [ln.get_label() for ln in left.get_lines()]
    # the ratio panel: every method at its own x (side by side), so twins (Norm-Sub, MLE-Apx) both show
    xs = {c.get_label(): tuple(np.round(np.asarray(c.lines[0].get_xdata(), float), 6)) for c in right.containers}
    assert {"Norm-Sub", "MLE-Apx", "Norm", "Power"} <= set(xs) and len(set(xs.values())) == len(xs)
    assert left.get_yscale() == right.get_yscale() == "log"


def test_sketches_kind_names_a_wrong_oracle():
    class T:
        oracle, epsilon, params, methods, rep = "oue", 1.0, (), ("base",), 0

    with pytest.raises(ValueError, match=r"must be sketch oracles \['cms', 'hcms'\], got 'oue'"):
        sketches(T)
