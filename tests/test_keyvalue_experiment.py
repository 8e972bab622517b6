"""The ext_keyvalue experiment's quick run (kind "keyvalue"): its numbers against properties that could
fail (the consistent solution certified, consistency lowers the frequency MSE at ε = 1, the bands
partition the keys), its figure (readable by the rules of tests/test_plots.py), and its errors for a protocol or method it does not know."""

from __future__ import annotations

import numpy as np
import pytest
from test_plots import recording

from ldpopt import keyvalue as kv
from ldpopt.experiments import run
from ldpopt.experiments.config import load_config
from ldpopt.experiments.figures.draw import plot


@pytest.fixture(scope="module")
def quick(tmp_path_factory):
    out = tmp_path_factory.mktemp("kv")
    return out, run("ext_keyvalue", quick=True, out=out, progress=False)


def test_ext_keyvalue_quick_numbers(quick):
    _, t = quick
    cfg = load_config("ext_keyvalue", quick=True)
    assert set(t.method) == set(cfg.methods) and set(t.oracle) == set(cfg.oracles)
    cons = t[t.method == "consistent"]
    assert (cons.status == "optimal").all()
    assert (cons[cons.metric == "relative-gap"].value.abs() < 1e-8).all()
    m = t.groupby(["oracle", "epsilon", "method", "metric"]).value.mean()
    for proto in cfg.oracles:  # at ε = 1 the consistent frequencies beat each paper's estimator
        assert m[proto, 1.0, "consistent", "freq-all"] < m[proto, 1.0, "paper", "freq-all"]
    # head and tail partition the keys: the all-keys MSE is their key-weighted mean (truth redrawn here)
    spec = dict(cfg.datasets[0])
    F = kv.power_law(spec["n"], spec["d"], items=spec["items"], rng=spec["rng"]).frequencies()
    n_head = int((F >= np.quantile(F, 0.9)).sum())
    w = t.set_index(["oracle", "epsilon", "rep", "method", "metric"]).value.unstack("metric")
    both = (n_head * w["freq-head"] + (F.size - n_head) * w["freq-tail"]) / F.size
    np.testing.assert_allclose(both, w["freq-all"], rtol=1e-12)


def test_ext_keyvalue_figure(quick, tmp_path):
    out, _ = quick
    with recording() as saved:  # the readability rules every figure kind meets (tests/test_plots.py)
        paths = plot(out / "ext_keyvalue-quick", out=tmp_path / "fig")
    assert len(saved) == 1 and not saved[0][2], saved
    assert [p.name for p in paths] == ["ext_keyvalue_power-law.png"] and paths[0].stat().st_size > 10_000


@pytest.mark.parametrize("field, value, message", [("oracles", '["oue"]', "oracles of a keyvalue config"),
                                                   ("methods", '["norm-sub"]', "methods of a keyvalue config")])
def test_ext_keyvalue_rejects_unknown_protocol_or_method(tmp_path, field, value, message):
    text = {"name": '"kvbad"', "kind": '"keyvalue"', "oracles": '["privkv"]', "methods": '["paper"]',
            "datasets": '[{name = "power-law", n = 500, d = 5, rng = 1}]', "epsilons": "[1.0]", "repetitions": "1"}
    text[field] = value
    cfg = tmp_path / "kvbad.toml"
    cfg.write_text("".join(f"{k} = {v}\n" for k, v in text.items()))
    with pytest.raises(ValueError, match=message):
        run(cfg, out=tmp_path / "out", progress=False)
