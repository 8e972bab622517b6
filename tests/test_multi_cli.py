"""The many-attributes pipeline from the command line (``ldpopt multi``) against the Python API, the
``linear`` constraint type of ``ldpopt solve``'s problem file, and their errors (one line naming the
argument, exit status 2). The first test runs the real entry point (a subprocess: exit status and
the privacy line on stderr as the user sees them); the others call ``ldpopt.cli.main`` in this process."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp
from _cli import ldpopt, main_in_process

from ldpopt import multi, oracles
from ldpopt.cli import main
from ldpopt.problems import LinearEquality, Problem, Simplex

NAMES = ["age", "city", "smoker", "sport"]


@pytest.fixture(scope="module")
def tuples_csv(tmp_path_factory):
    data = multi.chain_network(20_000, 4, domains=(2, 3, 2, 2), strength=0.6, rng=1)
    frame = pd.DataFrame(data.tuples, columns=NAMES)
    frame["city"] = frame.city.map({0: "lyon", 1: "nice", 2: "paris"})  # sorted labels keep the codes
    frame["count"] = data.counts
    path = tmp_path_factory.mktemp("multi") / "tuples.csv"
    frame.to_csv(path, index=False)
    return path, data


def test_multi_command_is_the_api(tuples_csv, tmp_path):
    path, data = tuples_csv
    out = tmp_path / "m.csv"
    proc = ldpopt("multi", "--tuples", path, "--epsilon", 2, "--seed", 5, "--reconstruct", "age,city,smoker",
                  "--out", out)
    assert proc.returncode == 0, proc.stderr
    got = pd.read_csv(out)
    est = multi.calm(data.domains, 2.0, way=2).simulate(data, 5)
    sol = multi.consistency_problem(est, "weighted").solve()
    col = got[got.source == "collected"]
    np.testing.assert_allclose(col.f_tilde.to_numpy(), est.f_tilde, atol=1e-15, rtol=0)
    np.testing.assert_allclose(col.f.to_numpy(), sol.f, atol=1e-12, rtol=0)
    rec = got[got.source == "reconstructed"]
    want = multi.maxent(est.marginals, sol.f, consistency_tol=1e-6).marginal((0, 1, 2))
    np.testing.assert_allclose(rec.f.to_numpy(), want, atol=1e-12, rtol=0)
    assert rec.cell.iloc[0] == "0|lyon|0" and set(rec.marginal) == {"age|city|smoker"}
    meta = json.loads((tmp_path / "m.csv.meta.json").read_text())
    assert meta["status"] == "optimal" and meta["domains"] == [2, 3, 2, 2] and meta["n"] == data.n
    assert meta["sha256"] == {"tuples": hashlib.sha256(Path(path).read_bytes()).hexdigest()}
    # the privacy statement of one whole-tuple report (CALM: one marginal at the full ε per user)
    assert meta["privacy"]["model"] == "local" and meta["privacy"]["epsilon"] == 2.0
    assert "ldpopt multi: privacy: local ε = 2 per report (replace)" in proc.stderr


def test_multi_command_one_way_protocols(tuples_csv):
    path, data = tuples_csv
    proc = main_in_process("multi", "--tuples", path, "--epsilon", 1, "--protocol", "rsfd", "--oracle", "grr",
                           "--seed", 2, "--post", "none", "--json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    est = multi.rsfd(data.domains, 1.0, "grr").simulate(data, 2)
    np.testing.assert_allclose(doc["data"]["f"], est.f_tilde, atol=1e-15, rtol=0)
    assert doc["metadata"]["exact_epsilon"] == pytest.approx(multi.fake_data.amplified_epsilon(1.0, 4))
    # RSFD's statement is its exact ε over the whole tuple, above the nominal 1
    got = doc["metadata"]["privacy"]["epsilon"]
    assert got == pytest.approx(multi.fake_data.amplified_epsilon(1.0, 4)) and got > 1.0


@pytest.mark.parametrize("args,word", [
    (["--reconstruct", "age,weight"], "--reconstruct"),
    (["--post", "none", "--reconstruct", "age,city,sport"], "--post"),
    (["--way", "9"], "--way"),
    (["--marginals", "age,age"], "--marginals"),
    (["--protocol", "spl", "--marginals", "age,city"], "--marginals"),
    (["--protocol", "rsfd", "--oracle", "olh"], "--oracle"),
])
def test_multi_command_errors_name_the_argument(tuples_csv, args, word, capsys):
    path, _ = tuples_csv
    assert word in _error(capsys, "multi", "--tuples", path, "--epsilon", 1, *args)


def _error(capsys, *argv) -> str:
    """Run the command in this process (the subprocess test above covers the entry point): exit status
    2 and one line on stderr; return it."""
    assert main([str(a) for a in argv]) == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and "error" in lines[0], lines
    return lines[0]


def test_multi_command_bad_tuples_file(tmp_path, capsys):
    one = tmp_path / "one.csv"
    one.write_text("a,b\n0,1\n0,2\n")
    assert "'a'" in _error(capsys, "multi", "--tuples", one, "--epsilon", 1)
    bad = tmp_path / "bad.csv"
    bad.write_text("a,b,count\n0,1,3\n1,0,x\n")
    assert "count" in _error(capsys, "multi", "--tuples", bad, "--epsilon", 1)
    assert "--tuples" in _error(capsys, "multi", "--tuples", tmp_path / "none.csv", "--epsilon", 1)


@pytest.fixture(scope="module")
def counts_csv(tmp_path_factory):
    o = oracles.get("oue", 1.0, 6)
    counts = o.sample_counts(np.array([400, 300, 100, 100, 60, 40]) * 10, rng=3)
    folder = tmp_path_factory.mktemp("linear")
    (folder / "c.csv").write_text("value,count\n" + "".join(f"v{i},{int(c)}\n" for i, c in enumerate(counts)))
    return folder, o.estimate(counts, 10000)


def _want(est, A, b):
    return Problem(est, "cls", [Simplex(), LinearEquality(A, b)]).solve()


def test_solve_linear_rows_inline_and_from_a_file(counts_csv):
    folder, est = counts_csv
    A = np.array([[1.0, -1, 0, 0, 0, 0], [0, 0, 1, 1, 0, 0]])
    b = [0.0, 0.3]
    want = _want(est, A, np.array(b))
    assert want.status == "optimal"
    sp.save_npz(folder / "A.npz", sp.csr_matrix(A))
    inline = 'matrix = [[1, -1, 0, 0, 0, 0], [0, 0, 1, 1, 0, 0]]'
    for spec in (inline, 'matrix_file = "A.npz"'):
        prob = folder / "p.toml"
        prob.write_text(f'objective = "cls"\n[[constraints]]\ntype = "simplex"\n[[constraints]]\ntype = "linear"\n'
                        f'{spec}\nrhs = [0.0, 0.3]\n')
        proc = main_in_process("solve", "--counts", folder / "c.csv", "--oracle", "oue", "--epsilon", 1,
                               "--n", 10000, "--problem", prob, "--json")
        assert proc.returncode == 0, proc.stderr
        f = np.array(json.loads(proc.stdout)["data"]["f"])
        np.testing.assert_allclose(f, want.f, atol=1e-9, rtol=0)
        assert abs(f[0] - f[1]) < 1e-9 and abs(f[2] + f[3] - 0.3) < 1e-9


@pytest.mark.parametrize("spec,word", [
    ('matrix = [[1, -1, 0]]', "matrix row 0"),
    ('matrix = [[1, -1, 0, 0, 0, 0]]\nmatrix_file = "A.npz"', "exactly one"),
    ('matrix_file = "missing.npz"', "missing.npz"),
    ('matrix = [[1, -1, 0, 0, 0, 0]]\nrhs = [0, 1]', "rhs"),
])
def test_solve_linear_errors_name_the_key(counts_csv, spec, word, capsys):
    folder, _ = counts_csv
    prob = folder / "bad.toml"
    prob.write_text(f'objective = "cls"\n[[constraints]]\ntype = "linear"\n{spec}\n')
    line = _error(capsys, "solve", "--counts", folder / "c.csv", "--oracle", "oue", "--epsilon", 1, "--n", 10000,
                  "--problem", prob)
    assert word in line and "constraints[0]" in line
