"""`ldpopt solve --problem`: values named by label or by position cannot be mistaken (the same f per label whatever the row order), functions of the user's
own reach the solver, and one list of objectives and constraint types serves --help and docs/cli.md.
The real entry point (a subprocess) runs the first call of a test that repeats the command and the
user's functions found beside the problem file from another working directory; the repeats, the
one-line errors and --help call ``ldpopt.cli.main`` in this process (``main_in_process``: the same
output and exit status, without a fresh interpreter's imports per call)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import cvxpy as cp
import numpy as np
import pandas as pd
import pytest
from _cli import ldpopt as run
from _cli import main_in_process, one_line_error

from ldpopt import oracles
from ldpopt.cli._problemtypes import constraint_kinds, help_text, objective_docs
from ldpopt.problems import available_objectives

ROOT = Path(__file__).resolve().parents[1]


def _solve(counts, problem, *extra, n, runner=main_in_process):
    """``ldpopt solve`` of ``counts`` with ``problem``: in this process, or the real command
    (``runner=run``) for the first call of a test that repeats it."""
    return runner("solve", "--counts", counts, "--oracle", "oue", "--epsilon", "1", "--n", n, "--problem", problem,
                  *extra)


@pytest.fixture(scope="module")
def retail(tmp_path_factory):
    """The Retail counts after OUE at ε = 1 (item ids as labels), sorted and in a shuffled row order."""
    from ldpopt import datasets

    ds = datasets.load("retail")
    counts = oracles.get("oue", 1.0, ds.d).sample_counts(ds.counts, rng=3)
    folder = tmp_path_factory.mktemp("retail")
    table = pd.DataFrame({"value": ds.labels, "count": counts})
    table.to_csv(folder / "sorted.csv", index=False)
    table.sample(frac=1.0, random_state=7).to_csv(folder / "shuffled.csv", index=False)
    return folder, int(ds.n)


def test_integer_labels_mean_labels_in_any_row_order(retail):
    """A ranking of items 65 and 32 and a known total of three items, named by their (integer)
    labels: the same f per label from the sorted and the shuffled file; the ranking binds (the
    unconstrained answer has f[65] < f[32]), and holds in both."""
    folder, n = retail
    prob = folder / "p.toml"
    prob.write_text('objective = "cls"\n[[constraints]]\ntype = "simplex"\n[[constraints]]\ntype = "monotone"\n'
                    'labels = [65, 32]\n[[constraints]]\ntype = "subset_sum"\nlabels = [0, 1, 2]\nvalue = 0.05\n')
    plain = folder / "plain.toml"
    plain.write_text('objective = "cls"\n')
    got = {}
    for name in ("sorted", "shuffled"):
        out = folder / f"{name}.out.csv"
        proc = _solve(folder / f"{name}.csv", prob, "--out", out, n=n, runner=run if name == "sorted" else main_in_process)
        assert proc.returncode == 0, proc.stderr
        got[name] = pd.read_csv(out).set_index("value")["f"].sort_index()
    np.testing.assert_allclose(got["shuffled"].to_numpy(), got["sorted"].to_numpy(), rtol=0, atol=1e-12)
    f = got["shuffled"]
    assert f[65] >= f[32] - 1e-12 and abs(f[0] + f[1] + f[2] - 0.05) <= 1e-9
    out = folder / "plain.out.csv"
    assert _solve(folder / "shuffled.csv", plain, "--out", out, n=n, runner=main_in_process).returncode == 0
    free = pd.read_csv(out).set_index("value")["f"]
    assert free[65] < f[65] and free[32] > f[32]  # the constraint moved both: it was read as labels 65, 32


def test_positions_name_rows_of_the_file(tmp_path):
    """positions = [0, 1] are the first two rows as written, whatever their labels."""
    counts = tmp_path / "c.csv"
    # integer labels that run without a gap (integers with gaps are positions, and need --d)
    counts.write_text("value,count\n4,300\n2,280\n3,270\n1,260\n")
    for k, (key, ref) in enumerate((("positions = [0, 1]", ["4", "2"]), ('labels = [4, "2"]', ["4", "2"]),
                                    ("labels = [1, 3]", ["1", "3"]))):
        prob = tmp_path / "p.toml"
        prob.write_text(f'objective = "cls"\n[[constraints]]\ntype = "simplex"\n[[constraints]]\n'
                        f'type = "fixed"\n{key}\nfrequency = 0.4\n')
        proc = _solve(counts, prob, "--json", n=1000, runner=run if k == 0 else main_in_process)
        assert proc.returncode == 0, proc.stderr
        data = json.loads(proc.stdout)["data"]
        f = dict(zip(map(str, data["value"]), data["f"]))
        assert [f[v] for v in ref] == [0.4, 0.4] and abs(sum(f.values()) - 1) <= 1e-12


_VARIANTS = '''
import cvxpy as cp
import numpy as np


def ridge_cls(f, estimate, weight=0.0):
    """CLS plus weight * ||f||^2."""
    return cp.sum_squares(f - estimate.f_tilde) + weight * cp.sum_squares(f)


def cap_first(f, estimate, cap=1.0, k=1):
    return cp.sum(f[:k]) <= cap


def broken(f, estimate):
    raise RuntimeError("no prior for this domain")


NOT_A_FUNCTION = 3
'''


def _by_hand(y, weight, cap):
    f = cp.Variable(y.shape[0])
    cp.Problem(cp.Minimize(cp.sum_squares(f - y) + weight * cp.sum_squares(f)),
               [f >= 0, cp.sum(f) == 1, cp.sum(f[:2]) <= cap]).solve(solver="CLARABEL", tol_gap_abs=1e-12,
                                                                     tol_gap_rel=1e-12, tol_feas=1e-12)
    return f.value


@pytest.mark.parametrize("suffix", [".toml", ".json"])
def test_user_objective_and_constraint_from_a_file_next_to_the_problem(tmp_path, suffix):
    counts = [340, 300, 285, 275, 265, 250, 240, 230]
    csv = tmp_path / "c.csv"
    csv.write_text("value,count\n" + "".join(f"v{i},{c}\n" for i, c in enumerate(counts)))
    sub = tmp_path / "variants"
    sub.mkdir()
    (sub / "my_variants.py").write_text(_VARIANTS)
    if suffix == ".toml":
        text = ('[objective]\nfunction = "my_variants.py:ridge_cls"\nparams = { weight = 0.5 }\n'
                '[[constraints]]\ntype = "simplex"\n[[constraints]]\ntype = "function"\n'
                'function = "my_variants.py:cap_first"\nparams = { cap = 0.2, k = 2 }\n')
    else:
        text = json.dumps({"objective": {"function": "my_variants.py:ridge_cls", "params": {"weight": 0.5}},
                           "constraints": [{"type": "simplex"}, {"type": "function", "function":
                                            "my_variants.py:cap_first", "params": {"cap": 0.2, "k": 2}}]})
    prob = sub / f"p{suffix}"
    prob.write_text(text)
    proc = run("solve", "--counts", csv, "--oracle", "oue", "--epsilon", "1", "--n", 1000, "--problem", prob,
               "--json", cwd=ROOT)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["objective"] == "ridge_cls" and doc["metadata"]["constraints"] == ["nonnegative", "sum", "cap_first"]
    y = oracles.get("oue", 1.0, 8).estimate(np.array(counts, float), 1000).f_tilde
    ref = _by_hand(y, 0.5, 0.2)
    assert abs(ref[0] + ref[1] - 0.2) <= 1e-9  # the cap binds
    np.testing.assert_allclose(doc["data"]["f"], ref, atol=1e-7)


@pytest.mark.parametrize("objective,want", [
    ('"missing.py:ridge_cls"', "objective (line 1): no such file: "),
    ('"my_variants.py:nope"', "objective (line 1): my_variants.py has no function 'nope'"),
    ('"my_variants.py:NOT_A_FUNCTION"', "objective (line 1): my_variants.py:NOT_A_FUNCTION is a int, not a function"),
    ('"my_variants.py:broken"', "objective (line 1): my_variants.py:broken raised RuntimeError: no prior for this"),
    ('"no_such_module_xyz:f"', "objective (line 1): no module 'no_such_module_xyz'"),
    ('"my_variants.py"', "objective (line 1): objective must be one of"),
])
def test_user_function_errors_are_one_line_naming_the_key(tmp_path, objective, want):
    csv = tmp_path / "c.csv"
    csv.write_text("value,count\na,300\nb,280\nc,270\n")
    (tmp_path / "my_variants.py").write_text(_VARIANTS)
    prob = tmp_path / "p.toml"
    prob.write_text(f"objective = {objective}\n")
    line = one_line_error(_solve(csv, prob, n=1000))
    assert want in line, line


def test_constraint_function_error_names_its_entry_and_line(tmp_path):
    csv = tmp_path / "c.csv"
    csv.write_text("value,count\na,300\nb,280\nc,270\n")
    (tmp_path / "my_variants.py").write_text(_VARIANTS)
    prob = tmp_path / "p.toml"
    prob.write_text('objective = "cls"\n[[constraints]]\ntype = "simplex"\n[[constraints]]\ntype = "function"\n'
                    'function = "my_variants.py:broken"\n')
    line = one_line_error(_solve(csv, prob, n=1000))
    assert "constraints[1].function (line 6): my_variants.py:broken raised RuntimeError" in line, line


def test_one_list_of_objectives_and_types_in_help_and_readme():
    """--help prints the registry's text; the registry's objectives are the library's (less
    posterior, which needs arrays); the command-line page (docs/cli.md) names every objective and
    constraint type."""
    OBJECTIVES, CONSTRAINTS = objective_docs(), constraint_kinds()
    assert set(OBJECTIVES) == set(available_objectives()) - {"posterior"}
    proc = main_in_process("solve", "--help")
    assert proc.returncode == 0
    flat = " ".join(proc.stdout.split())
    for line in help_text().splitlines():
        assert " ".join(line.split()) in flat, line
    readme = (ROOT / "docs" / "cli.md").read_text()
    section = readme[readme.index("Objectives (`objective = ...`)"):]
    section = section[:section.index("\n\n")]
    assert [s.strip("`") for s in section.split(": ", 1)[1].rstrip(".").split(", ")] == [*OBJECTIVES, "FILE.py:NAME"]
    section = readme[readme.index("Constraint types (`type = ...`)"):]
    section = section[:section.index("\n\n")]
    named = [s.split()[0].strip("`;.,") for s in re.split(r";\s+", section.split(": ", 1)[1])]
    assert named == list(CONSTRAINTS)
