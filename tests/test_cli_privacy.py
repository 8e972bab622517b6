"""The privacy statement through the ``ldpopt`` command: every file written beside an estimate
carries ``meta["privacy"]`` (the CSV sidecar, Parquet metadata, the JSON document, ``aggregate``'s
record, ``solve``'s sidecar), ``postprocess`` prints its line on stderr, and ``--shuffled-among N
--delta D`` records the shuffled central (ε, δ). The stderr line and ``perturb`` run the real entry
point (a subprocess, ``subprocess_run``); the other calls go to ``ldpopt.cli.main`` in this process
(``run``, ``main_in_process``: the same output, files and exit status, without a fresh interpreter's
imports per call)."""

from __future__ import annotations

import json

import pyarrow.parquet as pq
import pytest
from _cli import ldpopt as subprocess_run
from _cli import main_in_process as run
from _cli import one_line_error

from ldpopt.privacy.shuffle import shuffled
from ldpopt.privacy.statement import local

COUNTS = [340, 300, 285, 275]
N = 1000


@pytest.fixture
def counts_csv(tmp_path):
    path = tmp_path / "c.csv"
    path.write_text("value,count\n" + "".join(f"v{i},{c}\n" for i, c in enumerate(COUNTS)))
    return path


def _base(counts_csv, *more):
    return ("postprocess", "--counts", counts_csv, "--oracle", "oue", "--epsilon", "1", "--n", N,
            "--method", "norm-sub", *more)


def test_sidecar_and_stderr_carry_the_local_statement(counts_csv, tmp_path):
    out = tmp_path / "o.csv"
    proc = subprocess_run(*_base(counts_csv, "--out", out))
    assert proc.returncode == 0, proc.stderr
    meta = json.loads((tmp_path / "o.csv.meta.json").read_text())
    assert meta["privacy"] == local(1.0)
    assert "ldpopt postprocess: privacy: local ε = 1 per report (replace), 1 round" in proc.stderr.splitlines()


def test_parquet_and_json_carry_the_shuffled_statement(counts_csv, tmp_path):
    want = shuffled(1.0, 10**6, 1e-8).as_privacy()
    out = tmp_path / "o.parquet"
    proc = run(*_base(counts_csv, "--out", out, "--shuffled-among", "1e6", "--delta", "1e-8"))
    assert proc.returncode == 0, proc.stderr
    meta = json.loads(pq.read_schema(out).metadata[b"ldpopt"])
    assert meta["privacy"] == want
    assert "shuffled among n = 1000000: central (ε = 0.006126, δ = 1e-08)" in proc.stderr
    doc = json.loads(run(*_base(counts_csv, "--json", "--shuffled-among", "1000000", "--delta", "1e-8")).stdout)
    assert doc["metadata"]["privacy"] == want and doc["privacy"].startswith("shuffled among n = 1000000")


def test_shuffled_default_delta(counts_csv):
    doc = json.loads(run(*_base(counts_csv, "--json", "--shuffled-among", "5000")).stdout)
    assert doc["metadata"]["privacy"] == shuffled(1.0, 5000, 1e-6).as_privacy()


def test_solve_sidecar_carries_the_statement(counts_csv, tmp_path):
    out = tmp_path / "s.csv"
    prob = tmp_path / "p.toml"
    prob.write_text('objective = "cls"\n[[constraints]]\ntype = "simplex"\n')
    proc = run("solve", "--counts", counts_csv, "--oracle", "oue", "--epsilon", "1", "--n", N,
               "--problem", prob, "--shuffled-among", "20000", "--out", out)
    assert proc.returncode == 0, proc.stderr
    assert json.loads((tmp_path / "s.csv.meta.json").read_text())["privacy"] == shuffled(1.0, 20000, 1e-6).as_privacy()


def test_aggregate_record_carries_the_statement(tmp_path):
    values = tmp_path / "v.csv"
    values.write_text("value\n" + "".join(f"{i % 4}\n" for i in range(400)))
    shards = tmp_path / "shards"
    proc = subprocess_run("perturb", "--values", values, "--oracle", "grr", "--epsilon", "2", "--d", 4, "--seed", 1,
                          "--out", shards)
    assert proc.returncode == 0, proc.stderr
    out = tmp_path / "agg.csv"
    proc = run("aggregate", shards, "--out", out)
    assert proc.returncode == 0, proc.stderr
    assert json.loads((tmp_path / "agg.csv.meta.json").read_text())["privacy"] == local(2.0)


def test_delta_without_shuffled_among_and_bad_values_are_one_line_errors(counts_csv):
    err = one_line_error(run(*_base(counts_csv, "--delta", "1e-8")))
    assert "--delta needs --shuffled-among" in err
    for argv, needle in ((("--shuffled-among", "0"), "--shuffled-among"), (("--shuffled-among", "10", "--delta", "2"),
                                                                          "--delta")):
        proc = run(*_base(counts_csv, *argv))
        assert proc.returncode == 2 and needle in proc.stderr and "Traceback" not in proc.stderr



def test_shuffled_among_fewer_users_than_reports_is_refused(counts_csv):
    err = one_line_error(run(*_base(counts_csv, "--shuffled-among", "999")))
    assert "--shuffled-among must be >= --n (1000)" in err
