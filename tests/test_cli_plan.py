"""``ldpopt plan``: the ranked table, JSON with its inputs, one-line errors. The ranked table and a
refused option run the real entry point (a subprocess: exit status, stdout and stderr as the user
sees them); the other tests call ``ldpopt.cli.main`` in this process (``main_in_process``: the same
output and exit status, without a fresh interpreter's imports per call)."""

from __future__ import annotations

import json

import pytest
from _cli import ldpopt, main_in_process, one_line_error


def test_plan_prints_the_ranked_table_with_the_target_n():
    r = ldpopt("plan", "--d", "200", "--n", "1e5", "--epsilon", "1", "--prior", "zipf:1.5", "--target", "1e-5",
               "--oracles", "oue,grr", "--methods", "base,norm-sub", "--repeats", "4")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0].startswith("plan: d = 200, n = 100,000, ε = 1, prior zipf:1.5, target 1e-05")
    assert "n_target" in lines[1] and "expected_mse" in lines[1]
    ranks = [int(line.split()[0]) for line in lines[2:6]]
    assert ranks == [1, 2, 3, 4]


def test_plan_json_matches_the_library():
    import ldpopt as lib

    r = main_in_process("plan", "--d", "50", "--n", "20000", "--epsilon", "2", "--prior", "beta:5,2", "--query", "full",
                        "--query", "topk:3", "--oracles", "olh", "--methods", "base,norm", "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["d"] == 50 and doc["n"] == 20000 and doc["epsilon"] == 2.0 and doc["prior"] == "beta:5,2"
    want = lib.plan(50, 20000, 2.0, "beta:5,2", ["full", "topk:3"], oracles=["olh"], methods=["base", "norm"]).table
    got = [(row["query"], row["method"], row["expected_mse"]) for row in doc["table"]]
    assert got == [(q, m, pytest.approx(v, rel=1e-12)) for q, m, v in
                   zip(want["query"], want["method"], want["expected_mse"], strict=True)]


@pytest.mark.parametrize(("args", "match"), [
    (["--d", "100", "--n", "0", "--epsilon", "1"], "--n must be an integer >= 1"),
    (["--d", "100", "--n", "1e6", "--epsilon", "1", "--prior", "zipf:x"], "--prior: prior 'zipf:x'"),
    (["--d", "100", "--n", "1e6", "--epsilon", "1", "--query", "topk:500"], "--query: queries: topk:500 needs K <= d"),
    (["--d", "100", "--n", "1e6", "--epsilon", "1", "--oracles", "nope"], "--oracles: oracle must be"),
    (["--d", "100", "--n", "1e6", "--epsilon", "1", "--methods", "nope"], "--methods: "),
])
def test_plan_bad_input_is_one_line(args, match):
    assert match in one_line_error(main_in_process("plan", *args))


def test_plan_refuses_a_bad_option_at_the_option():
    r = ldpopt("plan", "--d", "100", "--n", "1e6", "--epsilon", "1", "--target", "-1")
    assert r.returncode == 2 and "argument --target: must be > 0" in r.stderr and "Traceback" not in r.stderr


def test_plan_central_rows_beside_the_local_ones():
    import ldpopt as lib

    r = main_in_process("plan", "--d", "100", "--n", "1e4", "--epsilon", "0.5", "--mechanism", "local,gaussian,laplace",
                        "--delta", "1e-7", "--oracles", "oue", "--methods", "base,norm", "--target", "1e-6", "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert sorted(doc["central"]) == ["gaussian", "laplace"] and doc["central"]["gaussian"]["delta"] == 1e-7
    want = lib.plan(100, 10**4, 0.5, mechanism=["local", "gaussian", "laplace"], delta=1e-7, oracles=["oue"],
                    methods=["base", "norm"], target=1e-6).table
    got = [(row["oracle"], row["method"], row["family"], row["n_target"]) for row in doc["table"]]
    assert got == list(zip(want["oracle"], want["method"], want["family"], want["n_target"], strict=True))
    assert {row["family"] for row in doc["table"]} == {"local", "central"}
    t = main_in_process("plan", "--d", "100", "--n", "1e4", "--epsilon", "0.5", "--mechanism", "all",
                        "--methods", "base")
    assert t.returncode == 0, t.stderr
    assert "central:discrete-gaussian" in t.stdout and "scale" in t.stdout.splitlines()[1]


@pytest.mark.parametrize(("args", "match"), [
    (["--mechanism", "nope"], "--mechanism: mechanism must be"),
    (["--mechanism", "gaussian", "--delta", "0"], "--delta: delta must be > 0"),
    (["--delta", "1e-6"], "--delta: delta applies to a central mechanism only"),
    (["--mechanism", "gaussian", "--oracles", "oue"], "--oracles: oracles applies to the local rows only"),
])
def test_plan_central_bad_input_is_one_line(args, match):
    assert match in one_line_error(main_in_process("plan", "--d", "100", "--n", "1e6", "--epsilon", "1", *args))


def test_plan_delta_out_of_range_is_refused_at_the_option():
    r = main_in_process("plan", "--d", "100", "--n", "1e6", "--epsilon", "1", "--mechanism", "gaussian",
                        "--delta", "1.5")
    assert r.returncode == 2 and "argument --delta: must be a number in [0, 1)" in r.stderr
