"""The ``longitudinal`` task kind and its figure: the quick ext_longitudinal run's rows, the across-rounds
Problem certified, the error split into bands, and bad parameters refused before any work."""

import numpy as np
import pytest

from ldpopt.experiments import run
from ldpopt.experiments.config import load_config
from ldpopt.experiments.figures.draw import plot


def test_ext_longitudinal_quick_numbers_and_figure(tmp_path):
    t = run("ext_longitudinal", quick=True, out=tmp_path, progress=False)
    cfg = load_config("ext_longitudinal", quick=True)
    assert set(t.method) == set(cfg.methods) and set(t.oracle) == {"l-osue", "l-grr"}
    assert set(t.metric) == {"mse", "mse_high", "mse_low"}
    assert (t[t.method.str.startswith("rounds:")].status == "certified").all()
    assert np.allclose(t.eps_1, t.epsilon / 2)
    w = t.pivot_table(index=["oracle", "epsilon", "rep", "method"], columns="metric", values="value")
    # the bands split the domain: their errors add up to the whole domain's
    assert np.allclose(w.mse_high + w.mse_low, w.mse, rtol=1e-12, atol=0)
    m = t[t.metric == "mse"].groupby(["oracle", "method"]).value.mean()
    for o in ("l-osue", "l-grr"):
        # the value is the same in every round: penalising change between rounds pools them, well below Base
        assert m[o, "rounds:shared+smooth"] < 0.7 * m[o, "base"]
        # a projection onto the simplex never moves an estimate further from a point of the simplex
        assert m[o, "norm-sub"] <= m[o, "base"] + 1e-15
    paths = plot(tmp_path / "ext_longitudinal-quick", out=tmp_path / "fig")
    assert [p.name for p in paths] == ["ext_longitudinal.png"] and paths[0].stat().st_size > 10_000


@pytest.mark.parametrize("line, match", [("params = {tau = 1}", "params.tau"),
                                         ("params = {eps1_ratio = 1.0}", "params.eps1_ratio"),
                                         ("params = {smooth = -1.0}", "params.smooth"),
                                         ('oracles = ["oue"]', "oracle 'oue'")])
def test_bad_settings_are_refused(tmp_path, line, match):
    lines = {"name": '"x"', "kind": '"longitudinal"', "datasets": '[{name = "zipf", n = 300, d = 4, rng = 1}]',
             "oracles": '["l-grr"]', "epsilons": "[2.0]", "methods": '["base", "rounds:shared"]', "repetitions": "1"}
    key, _, value = line.partition(" = ")
    lines[key] = value
    path = tmp_path / "x.toml"
    path.write_text("".join(f"{k} = {v}\n" for k, v in lines.items()))
    with pytest.raises(ValueError, match=match):
        run(path, out=tmp_path / "out", progress=False)
