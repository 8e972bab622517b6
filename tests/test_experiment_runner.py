"""The experiment runner: resumable, atomic, identical across backends and worker counts (issue 5)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pandas as pd
import pytest

from ldpopt.experiments import run
from ldpopt.experiments.config import load_config
from ldpopt.experiments.runner import tasks_of

CONFIG = """
name = "runner_test"
kind = "full-domain"
description = "a small sweep for the runner's tests"
datasets = [{{name = "zipf", n = 20000, d = 64, rng = 1}}]
oracles = ["grr", "oue"]
epsilons = [0.5, 1.0]
methods = ["base", "norm-sub"]
repetitions = {reps}
seed = 7
[quick]
repetitions = 1
"""


@pytest.fixture
def config(tmp_path):
    path = tmp_path / "runner_test.toml"
    path.write_text(CONFIG.format(reps=3))
    return path


def test_tasks_and_seeds_are_stable(config):
    tasks = tasks_of(load_config(config))
    assert len(tasks) == 2 * 2 * 3
    assert len({t.key for t in tasks}) == len(tasks)
    # the seed depends on the task's key only (not on the process: no salted str hash)
    code = ("from ldpopt.experiments import load_config, tasks_of; import sys;"
            f"print([t.seed_sequence().generate_state(2).tolist() for t in tasks_of(load_config(r'{config}'))])")
    other = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert other.strip() == str([t.seed_sequence().generate_state(2).tolist() for t in tasks])


def test_quick_overrides(config):
    assert load_config(config, quick=True).repetitions == 1
    assert load_config(config).repetitions == 3


def test_table_shape_and_values(config, tmp_path):
    table = run(config, out=tmp_path / "serial", progress=False)
    assert len(table) == 12 * 2 * 2  # tasks × methods × metrics
    assert set(table.columns) >= {"experiment", "dataset", "oracle", "epsilon", "rep", "method", "metric", "value"}
    mse = table[table.metric == "mse"].groupby("method").value.mean()
    assert mse["norm-sub"] < mse["base"]
    meta = (tmp_path / "serial" / "runner_test" / "meta.json").read_text()
    assert '"numpy"' in meta and '"seed": 7' in meta


def test_joblib_and_dask_give_identical_tables(config, tmp_path):
    serial = run(config, out=tmp_path / "serial", progress=False)
    parallel = run(config, out=tmp_path / "joblib", jobs=2, progress=False)
    pd.testing.assert_frame_equal(serial, parallel)
    from dask.distributed import LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        dask_table = run(config, out=tmp_path / "dask", scheduler=cluster.scheduler_address, progress=False)
    pd.testing.assert_frame_equal(serial, dask_table)


def test_resume_after_interruption_loses_nothing(config, tmp_path):
    full = run(config, out=tmp_path / "full", progress=False)
    assert run(config, out=tmp_path / "resumed", max_tasks=5, progress=False) is None
    parts = tmp_path / "resumed" / "runner_test" / "parts"
    assert len(list(parts.glob("*.parquet"))) == 5
    seen = []
    resumed = run(config, out=tmp_path / "resumed", progress=False, on_task_done=seen.append)
    assert len(seen) == 7  # only the missing tasks ran
    pd.testing.assert_frame_equal(full, resumed)


def test_killed_run_resumes_to_the_same_table(tmp_path):
    path = tmp_path / "runner_test.toml"
    path.write_text(CONFIG.format(reps=40))  # 160 tasks: long enough to kill mid-way
    out = tmp_path / "killed"
    env = {**os.environ, "PYTHONHASHSEED": "random"}
    proc = subprocess.Popen([sys.executable, "-m", "ldpopt.cli", "experiment", "run", str(path),
                             "--out", str(out), "--no-progress"], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    parts = out / "runner_test" / "parts"
    deadline = time.time() + 120
    while time.time() < deadline and len(list(parts.glob("*.parquet"))) < 10:
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    done = len(list(parts.glob("*.parquet")))
    assert 10 <= done < 160, f"kill landed at {done} parts"
    resumed = run(path, out=out, progress=False)
    assert not list(parts.glob(".*.tmp"))
    full = run(path, out=tmp_path / "full", progress=False)
    pd.testing.assert_frame_equal(full, resumed)


def test_bad_configs_are_named(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text('name = "x"\nkind = "full-domain"\ndatasets = ["zipf"]\noracles = ["grr"]\n'
                   'epsilons = [-1]\nmethods = ["base"]\n')
    with pytest.raises(ValueError, match="epsilons"):
        load_config(bad)
    with pytest.raises(ValueError, match="not found"):
        load_config("no_such_experiment")
    bad.write_text('name = "x"\nkind = "full-domain"\n')
    with pytest.raises(ValueError, match="missing"):
        load_config(bad)


def test_run_all_records_the_sweep_and_appends_on_resume(tmp_path, capsys):
    """`ldpopt experiment run all --quick`: every config's table, one timing entry per invocation."""
    import json
    from pathlib import Path

    from ldpopt.cli import main
    from ldpopt.experiments.config import config_paths

    names = [p.stem for p in config_paths()]
    expected = sum(len(tasks_of(load_config(n, quick=True))) for n in names)
    args = ["experiment", "run", "all", "--quick", "--no-progress", "--out", str(tmp_path)]
    assert main(args) == 0
    for n in names:
        assert (tmp_path / f"{n}-quick" / "results.parquet").is_file()
    assert main(args) == 0                      # nothing left to do: appends a 0-task entry
    history = json.loads(Path(tmp_path / "sweep_timings-quick.json").read_text())
    assert [h["tasks_run"] for h in history] == [expected, 0]
    assert [h["tasks"] for h in history] == [expected, expected]
    assert [e["experiment"] for e in history[0]["experiments"]] == names
    # each time is rounded to 0.01 s: the sum of k rounded parts can exceed the rounded total by k·0.005
    parts = history[0]["experiments"]
    assert history[0]["wall_s"] >= sum(e["wall_s"] for e in parts) - 0.005 * (len(parts) + 1) - 1e-9
    assert "full sweep: %d configs" % len(names) in capsys.readouterr().out
    # the claims summary reads those saved tables (both papers, one table row per claim)
    assert main(["experiment", "claims", "--quick", "--out", str(tmp_path)]) == 0
    text = capsys.readouterr().out
    assert "## Wang et al." in text and "## Jia & Gong" in text
    assert "| 32 |" in text and "| 7 |" in text
    # a quick run decides no claim: it says so, with the repetitions each verdict needs
    assert "check failed" not in text and "not decided at quick size (needs ≥ 30 repetitions" in text
