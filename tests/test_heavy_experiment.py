"""The ext_heavy_hitters experiment in its --quick form: its rows, the scores' definitions, ldpopt's
check on every consistent answer, and the figure."""

from __future__ import annotations

import numpy as np
import pytest


def test_ext_heavy_hitters_quick_rows_and_figure(tmp_path):
    from ldpopt.experiments import run
    from ldpopt.experiments.config import load_config
    from ldpopt.experiments.figures.draw import plot

    t = run("ext_heavy_hitters", quick=True, out=tmp_path, progress=False)
    cfg = load_config("ext_heavy_hitters", quick=True)
    assert set(t.method) == set(cfg.methods) and set(t.k) == set(cfg.params["ks"])
    assert len(t) == len(cfg.methods) * len(cfg.params["ks"]) * 4 * len(cfg.epsilons) * cfg.repetitions
    # every consistent answer passed ldpopt's check
    assert (t[t.method == "pem-consistent"].status == "optimal").all()
    w = t.pivot_table(index=["method", "epsilon", "rep", "k"], columns="metric", values="value")
    for col in ("precision", "recall", "f1"):
        assert w[col].between(0, 1).all()
    # F1 is the harmonic mean of the two (both defined here: every method found something)
    hm = 2 * w.precision * w.recall / (w.precision + w.recall)
    np.testing.assert_allclose(w.f1, hm.fillna(0.0), atol=1e-12)
    assert (w.mse > 0).all()
    # at the largest ε every method finds most of the top-k on this Zipf law
    assert w.xs(max(cfg.epsilons), level="epsilon").f1.groupby("method").mean().min() >= 0.75
    paths = plot(tmp_path / "ext_heavy_hitters-quick", out=tmp_path / "fig")
    assert [p.name for p in paths] == ["ext_heavy_hitters.png"] and paths[0].stat().st_size > 10_000


def test_heavy_discovery_rejects_unknown_methods(tmp_path):
    from ldpopt.experiments.task_kinds.heavy import heavy_discovery

    class Task:
        methods = ("pem", "rappor")

    with pytest.raises(ValueError, match="methods of a heavy-discovery config"):
        heavy_discovery(Task())
