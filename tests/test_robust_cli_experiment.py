"""``ldpopt postprocess --robust`` against the Python API, its argument errors, and the ext_poisoning
experiment's quick run (its numbers against the attack's closed form, its figure). The mixture column
runs the real entry point (a subprocess); the other commands call ``ldpopt.cli.main`` in this process
(``main_in_process``: the same output and exit status, without a fresh interpreter's imports per call)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from _cli import ldpopt, main_in_process, one_line_error
from ldpopt import oracles, robust

D, N = 48, 30000


@pytest.fixture(scope="module")
def poisoned_csv(tmp_path_factory):
    o = oracles.get("oue", epsilon=1.0, d=D)
    w = np.arange(1, D + 1) ** -1.5
    tc = np.random.default_rng(0).multinomial(N, w / w.sum())
    est = robust.poisoned_estimate(o, tc, "mga", [10, 20, 30], 0.05, 1)
    path = tmp_path_factory.mktemp("robust") / "counts.csv"
    path.write_text("value,count\n" + "".join(f"{v},{int(c)}\n" for v, c in enumerate(est.counts)))
    return path, est


@pytest.mark.parametrize("method,extra", [("mixture", ["--beta", "0.05", "--suspects", "top:3"]), ("rsn", []),
                                          ("guarded", [])])
def test_cli_robust_column_is_the_api(poisoned_csv, method, extra):
    path, est = poisoned_csv
    run = ldpopt if method == "mixture" else main_in_process  # one column through the real entry point
    proc = run("postprocess", "--counts", path, "--oracle", "oue", "--epsilon", 1, "--n", est.n,
               "--method", "base", "--robust", method, *extra, "--json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    col = np.array(doc["data"][f"robust_{method}"])
    want = {"mixture": lambda: robust.recover(est, "mixture", beta=0.05, suspects=robust.suspects(est.f_tilde, 3)).f,
            "ldprecover": lambda: robust.ldprecover(est, 0.05), "rsn": lambda: robust.rsn(est),
            "guarded": lambda: robust.guarded_lift(est, oracle=oracles.get("oue", epsilon=1.0, d=est.d))}[method]()
    np.testing.assert_allclose(col, want, atol=1e-12)
    meta = doc["metadata"]["robust"]
    assert meta["method"] == method
    if method == "mixture":
        assert meta["status"] == "optimal" and len(meta["suspects"]) == 3


@pytest.mark.parametrize("args,word", [(["--robust", "ldprecover"], "--beta"),
                                       (["--robust", "mixture", "--beta", "0.1", "--suspects", "999"], "999"),
                                       (["--robust", "guarded", "--suspects", "top:3"], "--suspects")])
def test_cli_robust_errors_are_one_line(poisoned_csv, args, word):
    path, est = poisoned_csv
    line = one_line_error(main_in_process("postprocess", "--counts", path, "--oracle", "oue", "--epsilon", 1,
                                          "--n", est.n, "--method", "base", *args))
    assert word in line


def test_ext_poisoning_quick_numbers_and_figure(tmp_path):
    from ldpopt.experiments import run
    from ldpopt.experiments.config import load_config
    from ldpopt.experiments.figures.draw import plot

    t = run("ext_poisoning", quick=True, out=tmp_path, progress=False)
    cfg = load_config("ext_poisoning", quick=True)
    assert set(t.attack) == set(cfg.params["attacks"])
    assert (t[t.method == "mixture"].status == "optimal").all()
    auc = t[t.metric == "auc"].value
    assert auc.between(0, 1).all()
    # under MGA on GRR at the smallest ε the attack is plain in the reports: the score separates well
    g = t[(t.metric == "auc") & (t.oracle == "grr") & (t.attack == "mga") & (t.epsilon == min(cfg.epsilons))]
    assert (g.value > 0.9).all()
    # every projection removes part of the raw gain of MGA; the mixture removes the most on GRR
    gain = t[(t.metric == "gain") & (t.attack == "mga")].groupby(["oracle", "epsilon", "method"]).value.mean().unstack()
    assert (gain["norm-sub"] <= gain["raw"] + 1e-12).all()
    assert (gain.loc["grr", "mixture"].abs() < gain.loc["grr", "ldprecover"]).all()
    # the lift recovery finds the 5 targets on the unary and hashing oracles and removes most of the gain
    for name in ("oue", "olh"):
        assert (gain.loc[name, "lift"].abs() < 0.25 * gain.loc[name, ["ldprecover", "rsn"]].min(axis=1)).all()
    paths = plot(tmp_path / "ext_poisoning-quick", out=tmp_path / "fig")
    assert sorted(p.name for p in paths) == ["ext_poisoning_input.png", "ext_poisoning_mga.png"]
    assert all(p.stat().st_size > 10_000 for p in paths)
