"""`ldpopt solve`: the problem file's objective and constraints reach the solver (refereed by cvxpy
with the constraints written by hand), the output carries the solver, status and ldpopt's check, and a
bad file is one line naming the key and line. The documented example and the warning on stderr run the
real entry point (a subprocess); the other tests call ``ldpopt.cli.main`` in this process
(``main_in_process``: the same output, files and exit status, without a fresh interpreter's imports)."""

from __future__ import annotations

import json
from pathlib import Path

import cvxpy as cp
import numpy as np
import pytest

from _cli import ldpopt as run, main_in_process, one_line_error
from ldpopt import oracles
from ldpopt.problems import range_tree

ROOT = Path(__file__).resolve().parents[1]
COUNTS = [340, 300, 285, 275, 265, 250, 240, 230]
LABELS = [f"v{i}" for i in range(8)]
N = 1000


def _csv(path, values, counts):
    path.write_text("value,count\n" + "".join(f"{v},{c}\n" for v, c in zip(values, counts)))
    return path


@pytest.fixture
def counts_csv(tmp_path):
    return _csv(tmp_path / "c.csv", LABELS, COUNTS)


def _solve(tmp_path, counts, text, suffix=".toml", *extra, n=N, runner=main_in_process):
    prob = tmp_path / f"p{suffix}"
    prob.write_text(text)
    return runner("solve", "--counts", counts, "--oracle", "oue", "--epsilon", "1", "--n", n, "--problem", prob,
               "--json", *extra)


def _doc(proc):
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def _by_hand(y, cons):
    f = cp.Variable(y.shape[0])
    cp.Problem(cp.Minimize(cp.sum_squares(f - y)), cons(f)).solve(solver="CLARABEL", tol_gap_abs=1e-12,
                                                                  tol_gap_rel=1e-12, tol_feas=1e-12)
    return f.value


def _ftilde(counts=COUNTS, n=N):
    return oracles.get("oue", 1.0, len(counts)).estimate(np.array(counts, float), n).f_tilde


def test_documented_example_matches_cvxpy_by_hand(tmp_path):
    ex = ROOT / "examples"
    proc = run("solve", "--counts", ex / "emoji_oue_eps1_counts.csv", "--oracle", "oue", "--epsilon", "1",
               "--n", 156941, "--problem", ex / "solve_problem.toml", "--out", tmp_path / "s.csv")
    assert proc.returncode == 0, proc.stderr
    meta = json.loads((tmp_path / "s.csv.meta.json").read_text())
    assert meta["status"] == "optimal" and meta["solver"] and meta["checks"]["passed"] is True
    assert meta["constraints"] == ["nonnegative", "sum", "partition", "monotone"]
    import pandas as pd

    out = pd.read_csv(tmp_path / "s.csv")
    labels = out["value"].tolist()
    pos = {v: i for i, v in enumerate(labels)}
    order = [pos[v] for v in ["😂", "❤", "♥", "😍", "😭", "😘", "😊", "👌"]]
    ref = _by_hand(out["base"].to_numpy(), lambda f: [
        f >= 0, cp.sum(f) == 1, f[pos["❤"]] + f[pos["♥"]] == 0.0968, f[pos["😂"]] == 0.0932,
        *[f[b] <= f[a] for a, b in zip(order, order[1:])]])
    np.testing.assert_allclose(out["f"].to_numpy(), ref, atol=1e-8)


def test_every_constraint_type_reaches_the_solver(tmp_path, counts_csv):
    text = """
objective = "cls"
solver = "CLARABEL"
[[constraints]]
type = "nonnegative"
[[constraints]]
type = "sum"
total = 1.0
[[constraints]]
type = "box"
upper = 0.3
[[constraints]]
type = "subset_sum"
positions = [6, 7]
value = 0.1
sense = ">="
[[constraints]]
type = "fixed"
labels = ["v3"]
frequency = 0.12
[[constraints]]
type = "monotone"
direction = "nondecreasing"
label_pairs = [["v5", "v4"]]
"""
    doc = _doc(_solve(tmp_path, counts_csv, text))
    assert doc["solver"] == "CLARABEL" and doc["status"] == "optimal"
    ref = _by_hand(_ftilde(), lambda f: [f >= 0, cp.sum(f) == 1, f <= 0.3, f[6] + f[7] >= 0.1, f[3] == 0.12,
                                         f[5] <= f[4]])
    np.testing.assert_allclose(doc["data"]["f"], ref, atol=1e-7)
    checks = doc["metadata"]["checks"]
    assert set(checks["violations"]) == {"nonnegative", "sum", "box.upper", "subset_sum", "fixed", "monotone"}
    assert checks["passed"] is True and checks["max_violation"] <= checks["tolerance"]["violation"]


def test_json_file_and_solver_option(tmp_path, counts_csv):
    spec = {"objective": "cls", "constraints": [{"type": "simplex"},
                                                {"type": "partition", "position_groups": {"A": [0, 1], "B": [5]},
                                                 "totals": {"A": 0.5, "B": 0.05}}]}
    doc = _doc(_solve(tmp_path, counts_csv, json.dumps(spec), ".json", "--solver", "OSQP"))
    assert doc["metadata"]["solver"] == "OSQP"
    ref = _by_hand(_ftilde(), lambda f: [f >= 0, cp.sum(f) == 1, f[0] + f[1] == 0.5, f[5] == 0.05])
    np.testing.assert_allclose(doc["data"]["f"], ref, atol=1e-7)


def test_hierarchy_from_a_branching_factor(tmp_path):
    t = range_tree(6, 2)  # 6 + 3 + 2 + 1 = 12 nodes
    counts = [300, 280, 270, 260, 250, 240, 500, 520, 480, 610, 590, 700]
    csv = _csv(tmp_path / "h.csv", range(t.size), counts)
    doc = _doc(_solve(tmp_path, csv, 'objective = "cls"\n[[constraints]]\ntype = "hierarchy"\nbranching = 2\n'
                                     'leaves = 6\n'))
    parents = [(p, [c for c in range(t.size) if t.parent[c] == p]) for p in range(6, t.size)]
    ref = _by_hand(_ftilde(counts), lambda f: [f >= 0, cp.sum(f[:6]) == 1,
                                               *[f[p] == sum(f[c] for c in ch) for p, ch in parents]])
    np.testing.assert_allclose(doc["data"]["f"], ref, atol=1e-7)
    assert doc["metadata"]["constraints"] == ["nonnegative", "leaves", "hierarchy"]


def test_infeasible_is_exit_1_with_no_table_and_the_certificate_in_json(tmp_path, counts_csv):
    """Two values >= 1.5 with the simplex: decided before any solver, no column of blanks written,
    the conflicting constraints on stderr and the certificate in --json."""
    prob = tmp_path / "p.toml"
    prob.write_text('objective = "cls"\n[[constraints]]\ntype = "simplex"\n[[constraints]]\ntype = "subset_sum"\n'
                    'labels = ["v0", "v1"]\nvalue = 1.5\nsense = ">="\n')
    out = tmp_path / "o.csv"
    proc = main_in_process("solve", "--counts", counts_csv, "--oracle", "oue", "--epsilon", "1", "--n", N,
                           "--problem", prob, "--out", out, "--json")
    assert proc.returncode == 1 and "infeasible" in proc.stderr and not out.exists()
    assert "the constraints ['nonnegative', 'sum', 'subset_sum'] conflict" in proc.stderr
    doc = json.loads(proc.stdout)
    cert = doc["infeasibility"]
    assert doc["status"] == "infeasible" and "data" not in doc and doc["out"] is None
    assert cert["conflicting"] == ["nonnegative", "sum", "subset_sum"] and cert["source"] == "ldpopt"
    # the certificate itself: y_sum·(Σ f = 1) + y_S·(−Σ_S f <= −1.5) with f >= 0 off S: 1 − 1.5 < 0
    assert cert["row_multipliers"] == {"sum": 1.0, "subset_sum": 1.0} and cert["bound_values"] == {"nonnegative": 6}
    assert cert["margin"] == 0.5


def test_not_optimal_with_a_point_is_exit_1_with_the_status_written(tmp_path, counts_csv):
    prob = tmp_path / "p.toml"
    prob.write_text('objective = "cls"\nsolver = "SCS"\n[[constraints]]\ntype = "simplex"\n')
    out = tmp_path / "o.json"
    proc = main_in_process("solve", "--counts", counts_csv, "--oracle", "oue", "--epsilon", "1", "--n", N,
                           "--problem", prob, "--out", out, "--solver", "SCS")
    meta = json.loads(out.read_text())["metadata"]
    assert (proc.returncode == 0) == (meta["status"] == "optimal") and meta["infeasibility"] is None


def test_dropping_the_simplex_warns_on_stderr(tmp_path, counts_csv):
    proc = _solve(tmp_path, counts_csv, 'objective = "cls"\n[[constraints]]\ntype = "box"\nlower = 0\nupper = 0.5\n',
                  runner=run)  # the warning line as the user's terminal shows it
    assert proc.returncode == 0, proc.stderr
    assert "warning: the constraint list replaces the default simplex and has no sum(f) == 1" in proc.stderr
    # the advice is the command line's, not Python's
    assert "--allow-no-simplex" in proc.stderr and 'type = "simplex"' in proc.stderr
    assert "filterwarnings" not in proc.stderr and "Simplex()" not in proc.stderr


def test_allow_no_simplex_silences_the_warning(tmp_path, counts_csv):
    prob = tmp_path / "p.toml"
    prob.write_text('objective = "cls"\n[[constraints]]\ntype = "box"\nlower = 0\nupper = 0.5\n')
    proc = main_in_process("solve", "--counts", counts_csv, "--oracle", "oue", "--epsilon", "1", "--n", N,
                           "--problem", prob, "--allow-no-simplex")
    assert proc.returncode == 0, proc.stderr
    assert "warning" not in proc.stderr and "simplex" not in proc.stderr


_C = 'objective = "cls"\n'
@pytest.mark.parametrize("text,suffix,want", [
    (_C + '\n[[constraints]]\ntype = "simplex"\n\n[[constraints]]\ntype = "box"\nuper = 0.5\n', ".toml",
     r"constraints[1].uper (line 8): unknown key 'uper' for box"),
    (_C + '[[constraints]]\ntype = "simplx"\n', ".toml", "constraints[0].type (line 3): unknown type 'simplx'"),
    (_C + '[[constraints]]\ntype = "subset_sum"\nlabels = ["v1"]\n', ".toml", "subset_sum needs key 'value'"),
    (_C + '[[constraints]]\ntype = "fixed"\nlabels = ["zz"]\nfrequency = 0.1\n', ".toml",
     "constraints[0].labels[0] (line 4): label 'zz' is not a value of the counts file"),
    (_C + '[[constraints]]\ntype = "fixed"\npositions = [8]\nfrequency = 0.1\n', ".toml",
     "constraints[0].positions[0] (line 4): position 8 is out of range [0, 8)"),
    (_C + '[[constraints]]\ntype = "partition"\nposition_groups = {A = [0, 1], B = [1]}\ntotals = {A = 0.1, B = 0.1}\n',
     ".toml", "value 1 is in groups['A'] and groups['B']"),
    (_C + '[[constraints]]\ntype = "hierarchy"\nbranching = 2\nleaves = 8\n', ".toml",
     "has 15 nodes, but the counts file has d = 8"),
    (_C + '[[constraints]]\ntype = "monotone"\ndirection = "down"\n', ".toml", "monotone: direction must be one of"),
    ('objective = "lsq"\n', ".toml", "objective (line 1): objective must be one of"),
    ('objective = "multinomial"\n', ".toml", "objective (line 1): 'multinomial' with these constraints: "),
    (_C + 'solver = "NOPE"\n', ".toml", "solver: solver must be a cvxpy solver name"),
    ('objectiv = "cls"\n', ".toml", "objectiv (line 1): unknown key 'objectiv'"),
    (_C + '[[constraints]]\ntype = "simplex"\nx = [1,\n', ".toml", "invalid TOML"),
    ('{"objective": "cls",\n "constraints": [}\n', ".json", "invalid JSON at line 2"),
    ('{"objective": "cls", "constraints": [{"type": "box", "upper": "big"}]}', ".json",
     "constraints[0]: box: upper must be a number"),
    # values named so that they cannot be mistaken; problem-file checks
    (_C + '[[constraints]]\ntype = "subset_sum"\nvalue = 0.1\nindices = [1, 2]\n', ".toml",
     "constraints[0].indices (line 5): 'indices' does not say whether it names labels or rows: write labels"),
    ('{"objective": "cls", "constraints": [{"type": "monotone", "order": [1, 2]}]}', ".json",
     "constraints[0].order: 'order' does not say whether"),
    (_C + '[[constraints]]\ntype = "fixed"\nlabels = ["v1"]\npositions = [1]\nfrequency = 0.1\n', ".toml",
     "constraints[0].positions (line 5): give labels or positions, not both"),
    (_C + '[[constraints]]\ntype = "fixed"\npositions = ["v1"]\nfrequency = 0.1\n', ".toml",
     "constraints[0].positions[0] (line 4): must be a 0-based integer row"),
    ("", ".toml", "missing key 'objective'"),
    ("", ".json", "missing key 'objective'"),
    ('[[constraints]]\ntype = "simplex"\n', ".toml", "missing key 'objective'"),
    (_C + '[[constraints]]\ntype = "fixed"\nlabels = ["v1", "v2"]\nfrequency = [0.1]\n', ".toml",
     "frequency has 1 entries for 2 named values"),
    (_C + '[[constraints]]\ntype = "subset_sum"\nvalue = 0.1\nlabels = ["v1", "v2", "v1"]\n', ".toml",
     "constraints[0].labels[2] (line 5): 'v1' repeats entry [0]"),
    (_C + '[[constraints]]\ntype = "subset_sum"\nvalue = 0.1\n\npositions = []\n', ".toml",
     "constraints[0].positions (line 6): must name at least one value"),
])
def test_bad_problem_file_is_one_line_naming_key_and_line(tmp_path, counts_csv, text, suffix, want):
    line = one_line_error(_solve(tmp_path, counts_csv, text, suffix))
    assert want in line, line
    assert "--problem" in line


def test_l1_is_checked_like_every_objective_and_the_exit_status_says_what_was_certified(tmp_path, counts_csv):
    from ldpopt.cli.solve import exit_status

    doc = _doc(_solve(tmp_path, counts_csv, 'objective = "l1"\n'))
    checks = doc["metadata"]["checks"]
    assert doc["status"] == "optimal" and checks["verified"] and checks["certified"]
    assert checks["stationarity"] <= 1e-5 and checks["gap"] <= 1e-6  # subgradient check, exact LP gap
    assert "stationarity" not in checks["not_run"] and "gap" not in checks["not_run"]
    # the LP's optimum by hand: the same ‖f − f̃‖₁
    y = _ftilde()
    f = cp.Variable(y.shape[0])
    best = cp.Problem(cp.Minimize(cp.norm1(f - y)), [f >= 0, cp.sum(f) == 1]).solve(solver="CLARABEL")
    assert np.abs(np.array(doc["data"]["f"]) - y).sum() == pytest.approx(best, rel=1e-7)
    assert [exit_status(s) for s in ("optimal", "optimal_unverified", "inaccurate", "infeasible")] == [0, 3, 1, 1]
