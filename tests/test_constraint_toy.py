"""A new linear constraint type is one file: the extending guide's example (examples/my_constraint.py,
"the first k values hold at most cap"), written to a temporary module outside the package,
registered by decorator, reaches Problem (the structured route, certified optimal, with its dual),
available_constraints, ``ldpopt solve --help``'s list, a problem file through ``ldpopt solve
--problem`` (a subprocess) with the keys the class declares, and check_constraint; user errors are
one line naming the key."""

from __future__ import annotations

import cvxpy as cp
import numpy as np
import pandas as pd
import pytest
from _cli import ldpopt as run_cli
from _cli import main_in_process, one_line_error
from _user_module import COUNTS, toy_estimate, user_module

from ldpopt.cli._problemtypes import help_text
from ldpopt.problems import STRUCTURED, Problem, Simplex, available_constraints, registry
from ldpopt.testing import check_constraint


@pytest.fixture(scope="module")
def toy(tmp_path_factory):
    folder = tmp_path_factory.mktemp("mine")
    with user_module(folder, "my_constraint.py", "head.py", "HeadShare",
                     lambda: registry.unregister("constraint", "head_share")) as cls:
        yield folder, cls


@pytest.fixture(scope="module")
def est():
    return toy_estimate()


def _reference(est, k, cap):
    """CLS on the simplex with sum(f[:k]) <= cap, written directly in cvxpy (not through the class)."""
    f = cp.Variable(est.d)
    cp.Problem(cp.Minimize(cp.sum_squares(f - est.f_tilde)),
               [f >= 0, cp.sum(f) == 1, cp.sum(f[:k]) <= cap]).solve(solver="CLARABEL")
    return f.value


def test_registered_from_a_file_it_is_listed_where_the_builtins_are(toy):
    assert "head_share" in available_constraints()
    assert registry.constraint_type("head_share") is toy[1]
    assert "head_share" in help_text() and "the first k values" in help_text()


def test_problem_solves_with_it_by_the_structured_route_certified(toy, est):
    assert est.f_tilde[:2].sum() > 0.6  # the cap below binds
    sol = Problem(est, "cls", [Simplex(), toy[1](2, 0.6)]).solve()
    assert sol.status == "optimal" and sol.solver == STRUCTURED
    np.testing.assert_allclose(sol.f, _reference(est, 2, 0.6), rtol=0, atol=1e-7)
    assert sol.f[:2].sum() == pytest.approx(0.6, abs=1e-12) and sol.duals["head_share"] > 0


def test_check_constraint_runs_every_check(toy):
    done = check_constraint(toy[1](2, 0.3))
    assert min(done.values()) > 0, done


def _solve(counts_csv, problem, out, runner=run_cli):
    return runner("solve", "--counts", counts_csv, "--oracle", "oue", "--epsilon", "1", "--n",
                  int(COUNTS.sum()), "--problem", problem, "--out", out)


@pytest.fixture
def counts_csv(est, tmp_path):
    path = tmp_path / "counts.csv"
    pd.DataFrame({"value": [f"v{i}" for i in range(est.d)], "count": est.counts}).to_csv(path, index=False)
    return path


def test_a_problem_file_gives_its_keys_and_the_cli_solves_it(toy, est, counts_csv, tmp_path):
    folder, _ = toy
    by_name = folder / "by_name.toml"
    by_name.write_text('modules = ["head.py"]\nobjective = "cls"\n[[constraints]]\ntype = "simplex"\n'
                       '[[constraints]]\ntype = "head_share"\nk = 2\ncap = 0.6\n')
    by_class = folder / "by_class.toml"
    by_class.write_text('objective = "cls"\n[[constraints]]\ntype = "simplex"\n'
                        '[[constraints]]\ntype = "head.py:HeadShare"\nk = 3\ncap = 0.6\n')
    for problem, k in ((by_name, 2), (by_class, 3)):
        out = tmp_path / f"{problem.stem}.csv"
        proc = _solve(counts_csv, problem, out)
        assert proc.returncode == 0, proc.stderr
        np.testing.assert_allclose(pd.read_csv(out)["f"].to_numpy(), _reference(est, k, 0.6), rtol=0, atol=1e-7)


def test_errors_are_one_line_naming_the_key(toy, counts_csv, tmp_path):
    folder, _ = toy
    head = 'modules = ["head.py"]\nobjective = "cls"\n[[constraints]]\n'
    cases = {
        head + 'type = "head_share"\nk = 2\n': "constraints[0] (line 3): head_share needs key 'cap'",
        head + 'type = "head_share"\nk = 2\ncap = 0.5\nlabels = ["v0"]\n': "unknown key 'labels' for head_share",
        head + 'type = "head_share"\nk = 99\ncap = 0.5\n': "head_share: k must be an integer in [1, 12], got 99",
        head + 'type = "head.py:Nope"\n': "constraints[0].type (line 4): head.py has no function 'Nope'",
        head + 'type = "no_such_type"\n': "unknown type 'no_such_type'",
    }
    for j, (text, expected) in enumerate(cases.items()):
        problem = folder / f"bad{j}.toml"
        problem.write_text(text)
        # the first case through the real command (its entry point and exit status), the others in process
        runner = run_cli if j == 0 else main_in_process
        assert expected in one_line_error(_solve(counts_csv, problem, tmp_path / "o.csv", runner)), text
