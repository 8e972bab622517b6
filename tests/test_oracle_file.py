"""An oracle of one's own named ``FILE.py:NAME`` — in Python, on the command line (``--oracle``,
``ldpopt --plugin``), in an experiment config (also in worker processes) — and ``ldpopt --debug``.

The oracle is the extending guide's example (half-ε randomized response), written to a temporary
folder outside the package; the references are its own formulas and the counts' totals."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from test_oracle_toy import TOY

from ldpopt import oracles
from ldpopt.cli import main

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def user(tmp_path, monkeypatch):
    """A folder holding half_rr.py (the guide's oracle); the registration is removed afterwards."""
    (tmp_path / "half_rr.py").write_text(TOY)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("LDPOPT_PLUGINS", raising=False)
    yield tmp_path
    oracles._REGISTRY.pop("half-rr", None)


def _cli(args, cwd, env_extra=None):
    env = {**os.environ, "PYTHONPATH": str(ROOT), **(env_extra or {})}
    env.pop("LDPOPT_PLUGINS", None)
    return subprocess.run([sys.executable, "-m", "ldpopt.cli", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=120)


def test_python_reference_builds_and_registers(user):
    o = oracles.get("half_rr.py:HalfRR", 1.0, 8)
    assert o.name == "half-rr" and "half-rr" in oracles.available()
    assert o.p == pytest.approx(math.exp(0.5) / (math.exp(0.5) + 7), rel=1e-15)
    assert oracles.oracle_class("half-rr") is type(o)  # by name once registered
    with pytest.raises(ValueError, match=r"no such file: .*nope\.py"):
        oracles.get("nope.py:HalfRR", 1.0, 8)
    with pytest.raises(ValueError, match="has no function 'Missing'"):
        oracles.get("half_rr.py:Missing", 1.0, 8)
    with pytest.raises(ValueError, match="FrequencyOracle subclass, got"):
        oracles.get("half_rr.py:math", 1.0, 8)  # the module's import of math, not an oracle
    with pytest.raises(ValueError, match="or an oracle of your own, FILE.py:NAME"):
        oracles.get("no-such-oracle", 1.0, 8)


def test_command_line_perturb_aggregate_postprocess(user):
    pd.DataFrame({"value": [0, 1, 2, 3], "count": [500, 300, 150, 50]}).to_csv(user / "hist.csv", index=False)
    assert main(["perturb", "--histogram", "hist.csv", "--d", "4", "--oracle", "half_rr.py:HalfRR",
                 "--epsilon", "2", "--seed", "1", "--out", "shards"]) == 0
    # a fresh process knows the shards' oracle only through --plugin
    bare = _cli(["aggregate", "shards", "--out", "counts.csv"], user)
    assert bare.returncode == 2 and "ldpopt --plugin FILE.py aggregate" in bare.stderr and "half-rr" in bare.stderr
    assert len(bare.stderr.strip().splitlines()) == 1
    ok = _cli(["--plugin", "half_rr.py", "aggregate", "shards", "--out", "counts.csv"], user)
    assert ok.returncode == 0, ok.stderr
    counts = pd.read_csv(user / "counts.csv")
    assert counts["count"].sum() == 1000  # one report per user, each counted once
    assert main(["postprocess", "--counts", "counts.csv", "--oracle", "half_rr.py:HalfRR", "--epsilon", "2",
                 "--n", "1000", "--method", "norm-sub", "--out", "est.csv"]) == 0
    est = pd.read_csv(user / "est.csv")
    f = est[[c for c in est.columns if c != "value"][-1]].to_numpy()
    assert f.sum() == pytest.approx(1.0, abs=1e-12) and (f >= 0).all()
    missing = _cli(["--plugin", "nowhere.py", "aggregate", "shards", "--out", "c2.csv"], user)
    assert missing.returncode == 2 and "--plugin nowhere.py: no such file" in missing.stderr
    assert not (user / "c2.csv").exists()


def test_experiment_config_oracle_from_file_in_worker_processes(user):
    from ldpopt.experiments.runner import run

    (user / "cfg").mkdir()
    (user / "cfg" / "mine.toml").write_text(textwrap.dedent("""\
        name = "mine"
        kind = "full-domain"
        datasets = [{name = "zipf", n = 2000, d = 8, rng = 1}]
        oracles = ["../half_rr.py:HalfRR", "grr"]
        epsilons = [1.0]
        methods = ["base", "norm-sub"]
        repetitions = 2
        """))
    table = run(user / "cfg" / "mine.toml", out=user / "results", jobs=2, progress=False)
    assert set(table["oracle"]) == {"half-rr", "grr"}
    meta = json.loads((user / "results" / "mine" / "meta.json").read_text())
    assert meta["config"]["oracles"] == ["half-rr", "grr"]
    assert meta["config"]["plugins"] == [f"{(user / 'half_rr.py').resolve()}:HalfRR"]
    assert np.isfinite(table.select_dtypes("number").to_numpy(dtype=float)).all()
    (user / "cfg" / "bad.toml").write_text((user / "cfg" / "mine.toml").read_text()
                                           .replace("../half_rr.py:HalfRR", "../half_rr.py:Nope"))
    with pytest.raises(ValueError, match=r"oracles\[0\]: .*has no function 'Nope'"):
        run(user / "cfg" / "bad.toml", out=user / "results", progress=False)
    assert not (user / "results" / "mine-bad").exists()


def test_debug_prints_the_users_traceback(user):
    (user / "boom.py").write_text("def boom(estimate):\n    return 1 / 0\n")
    pd.DataFrame({"value": [0, 1], "count": [60, 40]}).to_csv(user / "c.csv", index=False)
    args = ["postprocess", "--counts", "c.csv", "--oracle", "grr", "--epsilon", "1", "--n", "100",
            "--method", "boom.py:boom", "--out", "o.csv"]
    quiet = _cli(args, user)
    assert quiet.returncode == 2 and "Traceback" not in quiet.stderr
    assert "ZeroDivisionError" in quiet.stderr and len(quiet.stderr.strip().splitlines()) == 1
    loud = _cli(["--debug", *args], user)
    assert loud.returncode == 2 and "Traceback" in loud.stderr
    assert 'boom.py", line 2, in boom' in loud.stderr  # the user's own frame
    assert loud.stderr.strip().splitlines()[-1].startswith("ldpopt postprocess: error:")
    assert not (user / "o.csv").exists()
