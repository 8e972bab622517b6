"""`ldpopt postprocess --central MECH:SCALE` through the real entry point: noisy counts (negative,
fractional for the continuous mechanisms) give the methods' output equal to the library's on
``Estimate.from_central``, the sidecar records meta["privacy"], the methods that refuse central noise
are skipped with one line under ``--method all`` and are an error when named, and every
contradiction is one line naming the option. Two tests run the real entry point (a subprocess,
``subprocess_run``: exit status and stderr as the user sees them); the others call ``ldpopt.cli.main``
in this process (``run``, ``main_in_process``: the same output, files and exit status, without a fresh
interpreter's imports per call)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from _cli import ldpopt as subprocess_run
from _cli import main_in_process as run
from _cli import one_line_error
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import examples
from ldpopt import Estimate, methods
from ldpopt.privacy import central


def _csv(path, counts):
    path.write_text("value,count\n" + "".join(f"v{i},{c!r}\n" for i, c in enumerate(counts)))
    return path


@settings(max_examples=examples(4), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(mech=st.sampled_from(sorted(central.MECHANISMS)), scale=st.floats(0.5, 20.0), n_known=st.booleans(),
       seed=st.integers(0, 2**31))
def test_output_equals_the_library_and_the_sidecar_records_privacy(tmp_path, mech, scale, n_known, seed):
    rng = np.random.default_rng(seed)
    true = rng.multinomial(2_000, np.full(6, 1 / 6))
    noisy = true + central.get(mech).sample(6, scale, rng)
    counts = [int(c) for c in noisy] if central.get(mech).discrete else [float(c) for c in noisy]
    path = _csv(tmp_path / f"noisy-{seed}.csv", counts)
    out = tmp_path / f"out-{seed}.csv"
    args = ["postprocess", "--counts", path, "--central", f"{mech}:{scale!r}", "--method", "norm-sub", "--out", out]
    proc = run(*args, *(["--n", 2_000] if n_known else []))
    assert proc.returncode == 0, proc.stderr
    est = Estimate.from_central(counts, mech, scale, n=2_000 if n_known else None)
    got = np.loadtxt(out, delimiter=",", skiprows=1, usecols=3)
    np.testing.assert_allclose(got, methods.postprocess(est, "norm-sub"), rtol=0, atol=1e-15)
    meta = json.loads((tmp_path / f"out-{seed}.csv.meta.json").read_text())
    assert meta["privacy"] == est.meta["privacy"] and meta["oracle"] == f"central:{mech}"
    assert meta["privacy"]["n_known"] is n_known and meta["n"] == est.n
    assert f"ldpopt postprocess: privacy: {est.privacy}" in proc.stderr


def test_method_all_skips_the_methods_that_refuse_central_noise(tmp_path):
    path = _csv(tmp_path / "c.csv", [503, -2, 251, 249])
    proc = subprocess_run("postprocess", "--counts", path, "--central", "discrete-laplace:2", "--n", 1000, "--json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert {"em", "mle-apx", "mle-apx-paper"} == set(doc["metadata"]["skipped"])
    assert "norm-sub" in doc["methods"] and doc["metadata"]["privacy"]["epsilon"] == 0.5
    assert all("\n" not in why for why in doc["metadata"]["skipped"].values())


@pytest.mark.parametrize(("extra", "match"), [
    (["--central", "laplace"], "--central must be MECH:SCALE"),
    (["--central", "poisson:2"], "--central poisson:2: mechanism must be one of"),
    (["--central", "laplace:-1"], "--central laplace:-1: scale must be finite and > 0"),
    (["--central", "laplace:2", "--oracle", "grr"], "--oracle contradicts --central"),
    (["--central", "laplace:2", "--epsilon", "1"], "--epsilon contradicts --central"),
    (["--central", "laplace:2", "--g", "4"], "--g contradicts --central"),
    (["--central", "laplace:2", "--shuffled-among", "1000"], "--shuffled-among contradicts --central"),
    (["--central", "discrete-laplace:2"], "noisy_counts must be integers"),
    (["--central", "laplace:2", "--method", "em"], "--method em: method 'em' does not apply"),
])
def test_contradictions_are_one_line(tmp_path, extra, match):
    path = _csv(tmp_path / "c.csv", [503.5, -2.25, 251.0, 249.0])
    line = one_line_error(run("postprocess", "--counts", path, *extra))
    assert match in line


def test_a_counts_record_naming_an_oracle_contradicts_central(tmp_path):
    path = _csv(tmp_path / "c.csv", [503, 2, 251, 249])
    (tmp_path / "c.csv.meta.json").write_text(json.dumps({"oracle": "grr", "epsilon": 1.0, "n": 1005}))
    line = one_line_error(subprocess_run("postprocess", "--counts", path, "--central", "laplace:2"))
    assert "--central" in line and "grr" in line


@settings(max_examples=examples(3), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(mech=st.sampled_from(sorted(central.MECHANISMS)), scale=st.floats(0.5, 20.0), seed=st.integers(0, 2**31))
def test_solve_and_choose_take_central_counts_as_postprocess_does(tmp_path, mech, scale, seed):
    """``solve`` and ``choose`` read ``--central`` with the same shared option: their answers equal the
    library's on ``Estimate.from_central`` and their records carry its privacy statement."""
    from ldpopt.problems import Problem
    from ldpopt.recommend import choose

    rng = np.random.default_rng(seed)
    noisy = rng.multinomial(3_000, [0.5, 0.3, 0.1, 0.06, 0.04]) + central.get(mech).sample(5, scale, rng)
    counts = [int(c) for c in noisy] if central.get(mech).discrete else [float(c) for c in noisy]
    path = _csv(tmp_path / f"noisy-{seed}.csv", counts)
    problem = tmp_path / "p.toml"
    problem.write_text('objective = "cls"\n')
    est = Estimate.from_central(counts, mech, scale, n=3_000)
    proc = run("solve", "--counts", path, "--central", f"{mech}:{scale!r}", "--n", 3_000, "--problem", problem, "--json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    want = Problem(est, "cls").solve()
    np.testing.assert_allclose(doc["data"]["f"], want.f, rtol=0, atol=1e-12)
    assert doc["metadata"]["privacy"] == est.meta["privacy"] and doc["oracle"] == f"central:{mech}"
    proc = run("choose", "--counts", path, "--central", f"{mech}:{scale!r}", "--n", 3_000, "--repeats", 4, "--json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["best"] == choose(est, "full", n_repeats=4, rng=0).best
    assert doc["privacy"] == est.meta["privacy"] and doc["oracle_params"] == {}


@pytest.mark.parametrize("command", ["solve", "choose"])
@pytest.mark.parametrize(("extra", "match"), [
    (["--central", "poisson:2"], "--central poisson:2: mechanism must be one of"),
    (["--central", "laplace:2", "--epsilon", "1"], "--epsilon contradicts --central"),
])
def test_solve_and_choose_refuse_central_contradictions_in_one_line(tmp_path, command, extra, match):
    path = _csv(tmp_path / "c.csv", [503.5, -2.25, 251.0, 249.0])
    problem = tmp_path / "p.toml"
    problem.write_text('objective = "cls"\n')
    more = ["--problem", problem] if command == "solve" else []
    line = one_line_error(run(command, "--counts", path, *more, *extra))
    assert match in line
