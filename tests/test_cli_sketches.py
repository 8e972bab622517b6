"""``ldpopt perturb`` → ``aggregate`` → ``postprocess`` with the sketch oracles (CMS, HCMS, RAPPOR):
the command line gives the Python API's numbers for the same seed, and bad parameters are one-line
errors naming the argument. The CMS round trip runs the real entry point (a subprocess per command);
the other commands call ``ldpopt.cli.main`` in this process (``main_in_process``: the same output,
files and exit status, without a fresh interpreter's imports per call)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from _cli import ldpopt, main_in_process, one_line_error
from ldpopt import methods, oracles
from ldpopt.aggregate.shards import from_batch, to_table
from ldpopt.sketches.consistency import sketch_estimate

HIST = {0: 300, 1: 200, 2: 100, 3: 50, 4: 0, 5: 10}
D, EPS, SEED, ROWS = 6, 2.0, 5, 250
CASES = {
    "cms": ({"k": 4, "m": 16, "hash_seed": 3}, ["--k", "4", "--oracle-param", "m=16", "--oracle-param", "hash_seed=3"]),
    "hcms": ({"k": 4, "m": 16, "hash_seed": 0}, ["--oracle-param", "k=4", "--oracle-param", "m=16"]),
    "rappor": ({"num_bits": 16, "num_hashes": 3, "cohorts": 2, "inst_q": 0.8},
               ["--oracle-param", "num_bits=16", "--oracle-param", "num_hashes=3", "--oracle-param", "cohorts=2",
                "--oracle-param", "inst_q=0.8"]),
}


def _api(name, params):
    """The Python API's counts, n and Norm-Sub estimate for what ``perturb`` does (users in value
    order, shard i randomised with SeedSequence(SEED, spawn_key=(i,)))."""
    oracle = oracles.get(name, epsilon=EPS, d=D, **params)
    values = np.repeat(np.arange(D), [HIST[v] for v in range(D)])
    counts = sum(oracle.aggregate(oracle.perturb(values[a:a + ROWS],
                                                 np.random.default_rng(np.random.SeedSequence(SEED, spawn_key=(i,)))))
                 for i, a in enumerate(range(0, values.size, ROWS)))
    est = sketch_estimate(oracle, counts, values.size) if name != "rappor" else oracle.estimate(counts, values.size)
    return counts, values.size, est


@pytest.mark.parametrize("name", sorted(CASES))
def test_round_trip_equals_the_python_api(tmp_path, name):
    params, flags = CASES[name]
    run = ldpopt if name == "cms" else main_in_process  # one oracle through the real entry point
    hist = tmp_path / "hist.csv"
    pd.DataFrame({"value": list(HIST), "count": list(HIST.values())}).to_csv(hist, index=False)
    p = run("perturb", "--histogram", hist, "--d", D, "--oracle", name, "--epsilon", EPS, "--seed", SEED,
            "--shard-rows", ROWS, "--out", tmp_path / "shards", *flags)
    assert p.returncode == 0, p.stderr
    a = run("aggregate", tmp_path / "shards", "--scheduler", "synchronous", "--no-progress",
            "--out", tmp_path / "agg.csv")
    assert a.returncode == 0, a.stderr
    counts, n, est = _api(name, params)
    agg = pd.read_csv(tmp_path / "agg.csv")
    np.testing.assert_allclose(agg["count"].to_numpy(), counts, rtol=1e-15)  # RAPPOR: multiples of 1/h
    meta = json.loads((tmp_path / "agg.csv.meta.json").read_text())
    assert meta["n"] == n and meta["oracle"] == name
    assert {k: meta["oracle_params"][k] for k in params} == params
    pp = run("postprocess", "--counts", tmp_path / "agg.csv", "--oracle", name, "--epsilon", EPS, "--n", n,
             "--d", D, *flags, "--method", "norm-sub", "--json")
    assert pp.returncode == 0, pp.stderr
    doc = json.loads(pp.stdout)
    cols = doc["data"]
    assert {k: doc["metadata"]["oracle_params"][k] for k in params} == params
    np.testing.assert_allclose(cols["base"], est.f_tilde, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(cols["norm-sub"], methods.get("norm-sub").func(est), rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("name", ["cms", "hcms"])
def test_the_command_line_estimate_carries_the_sketch_variance(name):
    from ldpopt.cli.postprocess import estimate_of

    counts, n, est = _api(name, CASES[name][0])
    oracle = oracles.get(name, epsilon=EPS, d=D, **CASES[name][0])
    cli = estimate_of(oracle, counts, n)
    plain = oracle.estimate(counts, n)
    assert cli.meta["extra_variance"] == est.meta["extra_variance"] > 0
    assert cli.sigma2 == pytest.approx(plain.sigma2 + est.meta["extra_variance"], rel=1e-12)


@pytest.mark.parametrize("name", sorted(CASES))
def test_shard_schema_round_trips_the_reports(name):
    oracle = oracles.get(name, epsilon=EPS, d=D, **CASES[name][0])
    reports = oracle.perturb(np.arange(D).repeat(7), np.random.default_rng(1))
    back = from_batch(oracle, to_table(oracle, reports).to_batches()[0])
    for x, y in zip(reports if isinstance(reports, tuple) else (reports,), back if isinstance(back, tuple) else (back,)):
        np.testing.assert_array_equal(np.asarray(x), np.asarray(y))
    np.testing.assert_array_equal(oracle.aggregate(back), oracle.aggregate(reports))


def test_bad_oracle_parameters_are_one_line_errors_naming_them(tmp_path):
    hist = tmp_path / "hist.csv"
    hist.write_text("value,count\n0,5\n1,5\n")
    base = ["perturb", "--histogram", hist, "--d", 2, "--epsilon", 1, "--seed", 0, "--out", tmp_path / "o"]
    line = one_line_error(main_in_process(*base, "--oracle", "hcms", "--oracle-param", "m=100"))
    assert "m must be a power of 2" in line and "--oracle-param" in line
    line = one_line_error(main_in_process(*base, "--oracle", "cms", "--oracle-param", "buckets=3"))
    assert "--oracle-param buckets" in line and "hash_seed" in line
    line = one_line_error(main_in_process(*base, "--oracle", "rappor", "--oracle-param", "inst_p=high"))
    assert "inst_p must be float" in line
    line = one_line_error(main_in_process(*base, "--oracle", "cms", "--k", "4", "--oracle-param", "k=5"))
    assert "--oracle-param k is given twice" in line
    line = one_line_error(main_in_process("postprocess", "--counts", hist, "--oracle", "rappor", "--epsilon", 1,
                                          "--n", 10, "--oracle-param", "m=16"))
    assert "--oracle-param m" in line and "num_bits" in line
