"""A new separable objective is one file: the extending guide's example (examples/my_objective.py, a
robust weighted least squares: the pseudo-Huber loss of f̃'s standardised residuals), written to a
temporary module outside the package, registered by decorator, reaches Problem (the structured route, certified optimal), available_objectives, ``ldpopt solve
--help``'s list, a problem file through ``ldpopt solve --problem`` (a subprocess), verify's certificate
referee and check_objective; user errors are one line naming the key."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from _cli import ldpopt as run_cli
from _cli import main_in_process, one_line_error
from _user_module import COUNTS, toy_estimate, user_module
from scipy.optimize import minimize

from ldpopt.cli._problemtypes import help_text
from ldpopt.problems import STRUCTURED, Problem, available_objectives, registry
from ldpopt.testing import check_objective
from ldpopt.verify.equivalences import check_equivalence


@pytest.fixture(scope="module")
def toy(tmp_path_factory):
    folder = tmp_path_factory.mktemp("mine")
    with user_module(folder, "my_objective.py", "robust_cls.py", "RobustWLS",
                     lambda: registry.unregister("objective", "robust-wls")) as cls:
        yield folder, cls


@pytest.fixture(scope="module")
def est():
    return toy_estimate()


def _reference(est, delta):
    """argmin of the robust WLS loss on the simplex by SLSQP on the formula itself (not ldpopt's):
    s_v² is Wang et al.'s Eq. 2 variance at max(f̃_v, 0)."""
    p, q = est.p, est.q
    s = np.sqrt((q * (1 - q) + np.maximum(est.f_tilde, 0) * (p - q) * (1 - p - q)) / (est.n * (p - q) ** 2))

    def j(f):
        return float(np.sum(delta**2 * (np.sqrt(1 + ((f - est.f_tilde) / (delta * s)) ** 2) - 1)))

    def g(f):
        z = f - est.f_tilde
        return z / s**2 / np.sqrt(1 + (z / (delta * s)) ** 2)

    got = minimize(j, np.full(est.d, 1 / est.d), jac=g, method="SLSQP", bounds=[(0, 1)] * est.d,
                   constraints=[{"type": "eq", "fun": lambda f: f.sum() - 1, "jac": lambda f: np.ones_like(f)}],
                   options={"ftol": 1e-15, "maxiter": 500})
    return got.x


def test_registered_from_a_file_it_is_listed_where_the_builtins_are(toy):
    assert "robust-wls" in available_objectives()
    assert registry.objective_factory("robust-wls") is toy[1]
    assert "robust-wls" in help_text() and "pseudo-Huber loss of the standardised" in help_text()


def test_problem_solves_it_by_the_structured_route_certified(toy, est):
    sol = Problem(est, "robust-wls").solve()
    assert sol.status == "optimal" and sol.solver == STRUCTURED
    np.testing.assert_allclose(sol.f, _reference(est, 2.0), rtol=0, atol=1e-6)
    other = Problem(est, toy[1](delta=0.5)).solve()  # an instance with its own parameter
    np.testing.assert_allclose(other.f, _reference(est, 0.5), rtol=0, atol=1e-6)
    assert np.max(np.abs(other.f - sol.f)) > 1e-5  # the parameter is used (100x the agreement above)
    row = check_equivalence(est, sol.f, "robust-wls", referee="certificate", claim="toy=robust-wls")
    assert row.verdict == "holds", row


def test_check_objective_runs_every_check(toy):
    done = check_objective("robust-wls")
    assert min(done.values()) > 0, done


def _solve(counts_csv, problem, out, runner=run_cli):
    return runner("solve", "--counts", counts_csv, "--oracle", "oue", "--epsilon", "1", "--n",
                  int(COUNTS.sum()), "--problem", problem, "--out", out)


def test_a_problem_file_names_it_and_the_cli_solves_it(toy, est, tmp_path):
    folder, _ = toy
    counts_csv = tmp_path / "counts.csv"
    pd.DataFrame({"value": [f"v{i}" for i in range(est.d)], "count": est.counts}).to_csv(counts_csv, index=False)
    by_name = folder / "by_name.toml"
    by_name.write_text('modules = ["robust_cls.py"]\nobjective = "robust-wls"\n')
    by_class = folder / "by_class.toml"
    by_class.write_text('[objective]\nfunction = "robust_cls.py:RobustWLS"\nparams = { delta = 0.5 }\n')
    for problem, delta in ((by_name, 2.0), (by_class, 0.5)):
        out = tmp_path / f"{problem.stem}.csv"
        proc = _solve(counts_csv, problem, out)
        assert proc.returncode == 0, proc.stderr
        f = pd.read_csv(out)["f"].to_numpy()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            np.testing.assert_allclose(f, _reference(est, delta), rtol=0, atol=1e-6)


def test_errors_are_one_line_naming_the_key(toy, tmp_path):
    folder, _ = toy
    counts_csv = tmp_path / "counts.csv"
    pd.DataFrame({"value": [f"v{i}" for i in range(COUNTS.size)], "count": COUNTS}).to_csv(counts_csv, index=False)
    cases = {
        'objective = "robust_cls.py:Nope"\n': "objective (line 1): robust_cls.py has no function 'Nope'",
        'objective = "missing.py:RobustWLS"\n': "objective (line 1): no such file",
        '[objective]\nfunction = "robust_cls.py:RobustWLS"\nparams = { delta = -1 }\n':
            "robust_cls.py:RobustWLS(delta=-1) raised ValueError: delta must be a finite number > 0",
        'modules = ["missing.py"]\nobjective = "cls"\n': "modules (line 1): no such file",
    }
    for k, (text, expected) in enumerate(cases.items()):
        problem = folder / f"bad{k}.toml"
        problem.write_text(text)
        # the first case through the real command (its entry point and exit status), the others in process
        runner = run_cli if k == 0 else main_in_process
        assert expected in one_line_error(_solve(counts_csv, problem, tmp_path / "o.csv", runner)), text


def test_plugin_puts_the_objective_in_solve_help(tmp_path):
    """``ldpopt --plugin FILE.py`` loads the file before the parser: ``solve --help`` lists what it
    registers; without it, the name is absent; a missing plugin is one line (exit 2)."""
    from pathlib import Path

    example = Path(__file__).resolve().parents[1] / "examples" / "my_objective.py"
    (tmp_path / "mine.py").write_text(example.read_text())
    bare = run_cli("solve", "--help", cwd=tmp_path)
    assert bare.returncode == 0 and "robust-wls" not in bare.stdout
    helped = run_cli("--plugin", "mine.py", "solve", "--help", cwd=tmp_path)
    assert helped.returncode == 0 and "robust-wls" in helped.stdout, helped.stderr
    assert "--plugin nowhere.py: no such file" in one_line_error(run_cli("--plugin", "nowhere.py", "solve", "--help",
                                                                         cwd=tmp_path))
