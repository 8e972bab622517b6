"""A method of the user's own, in one file outside the package, registered by decorator, reaches every
feature the built-ins reach: postprocess, intervals, choose, verify's equivalence rows, an experiment
config (validated before any work) and ``ldpopt postprocess --method FILE.py:NAME``; plain callables
are accepted wherever a method is."""

from __future__ import annotations

import sys

import numpy as np
import pandas as pd
import pytest
from _cli import ldpopt as run_cli
from _cli import one_line_error

import ldpopt
from ldpopt import methods, oracles
from ldpopt.experiments.config import load_config
from ldpopt.experiments.runner import run as run_experiment
from ldpopt.testing import check_method
from ldpopt.verify.equivalences import equivalence_rows

TOY = '''
import numpy as np
from ldpopt.methods import ProblemStatement, register
from ldpopt.methods.normalize import project_simplex


@register("toy-mix", label="Toy-Mix", family="closed-form", description="CLS pulled halfway to uniform",
          non_negative="yes", sums_to_one="yes", order_preserving="weak", complexity="O(d)",
          reference="a test", problem=ProblemStatement(
              "cls+uniform", "argmin ||f - f~||^2 + ||f - 1/d||^2 on the simplex",
              lambda est: {"objective": "posterior", "mean": (est.f_tilde + 1.0 / est.d) / 2.0}))
def toy(estimate):
    return project_simplex((estimate.f_tilde + 1.0 / estimate.d) / 2.0)


def plain(estimate):
    """Base-Pos rescaled by hand (a plain function, nothing declared)."""
    f = np.maximum(estimate.f_tilde, 0.0)
    return f / f.sum()
'''


def _projection(y):
    """Euclidean projection onto the simplex by the sort rule (Held et al. 1974): the reference."""
    u = np.sort(y)[::-1]
    css = np.cumsum(u) - 1.0
    k = np.flatnonzero(u - css / np.arange(1, y.size + 1) > 0)[-1]
    return np.maximum(y - css[k] / (k + 1), 0.0)


@pytest.fixture(scope="module")
def toy(tmp_path_factory):
    folder = tmp_path_factory.mktemp("mine")
    (folder / "toy_methods.py").write_text(TOY)
    info = methods.resolve(f"{folder / 'toy_methods.py'}:toy")
    yield folder, info
    for name in ("toy-mix", "plain"):
        if name in methods.names():
            methods.unregister(name)
    for key in [k for k, m in sys.modules.items() if k.startswith("_ldpopt_user_")
                and str(getattr(m, "__file__", "")).startswith(str(folder))]:
        del sys.modules[key]


@pytest.fixture(scope="module")
def est():
    counts = np.array([300, 90, 40, 20, 5, 0, 0, 10, 0, 35])
    return oracles.get("oue", 1.0, counts.size).simulate(counts * 20, 7)


def test_registered_from_a_file_by_decorator(toy, est):
    _, info = toy
    assert info.name == "toy-mix" and info.declared and methods.get("toy-mix") is info
    ref = _projection((est.f_tilde + 1.0 / est.d) / 2.0)
    np.testing.assert_allclose(ldpopt.postprocess(est, "toy-mix"), ref, rtol=0, atol=1e-15)
    done = check_method("toy-mix")
    assert done["problem"] == done["output"] > 0


def test_intervals_and_choose_take_it(toy, est):
    r = ldpopt.uncertainty.intervals(est, "toy-mix", 0.9, n_resamples=30)
    assert r.method == "toy-mix" and r.bootstrap_distribution.shape == (30, est.d)
    np.testing.assert_allclose(r.values, ldpopt.postprocess(est, "toy-mix"))
    assert np.all(r.lo <= r.hi)
    c = ldpopt.choose(est, methods=["base", "norm-sub", "toy-mix"], n_repeats=5)
    assert set(c.table.index) == {"base", "norm-sub", "toy-mix"}
    assert c.table.loc["toy-mix", "loss"] > 0


def test_verify_checks_its_closed_form_against_the_solver(toy, est):
    rows = equivalence_rows(est, 0, ["CLARABEL"], 2000, 200, methods=["toy-mix"])
    assert [(r.claim, r.referee.split(":")[0], r.verdict) for r in rows] == [
        ("toy-mix=cls+uniform", "certificate", "holds"), ("toy-mix=cls+uniform", "CLARABEL", "holds")]


def test_a_quick_experiment_runs_it_from_a_config_beside_the_papers_methods(toy, tmp_path):
    folder, _ = toy
    cfg = folder / "mine.toml"
    cfg.write_text('name = "mine"\nkind = "full-domain"\ndatasets = [{name = "zipf", n = 3000, d = 16, rng = 1}]\n'
                   'oracles = ["oue"]\nepsilons = [1.0]\nmethods = ["base", "norm-sub", "toy_methods.py:toy", '
                   '"toy_methods.py:plain"]\nrepetitions = 2\n')
    assert load_config(cfg).methods[2] == f"{(folder / 'toy_methods.py').resolve()}:toy"
    table = run_experiment(cfg, out=tmp_path, progress=False)
    mse = table[table.metric == "mse"].groupby("method", observed=True).value.mean()
    assert set(mse.index) == {"base", "norm-sub", "toy-mix", "plain"} and np.all(mse > 0)
    # its figure: the paper's two panels, the user's methods beside Norm-Sub under their own labels
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from ldpopt.experiments.figures.wang import summarise, two_panel

    fig, axes = plt.subplots(1, 2)
    two_panel(axes, summarise(table, "epsilon"), "epsilon", "eps", "mse")
    assert set(axes[1].get_legend_handles_labels()[1]) == {"Norm-Sub (reference, right)", "Toy-Mix", "plain"}
    plt.close(fig)


def test_a_bad_config_entry_is_refused_before_any_work(toy, tmp_path):
    folder, _ = toy
    for entry, text in (("missing.py:kl", "no such file"), ("toy_methods.py:nope", "has no function 'nope'"),
                        ("norm-sob", "method must be one of")):
        cfg = folder / "bad.toml"
        cfg.write_text(f'name = "bad"\nkind = "full-domain"\ndatasets = ["zipf"]\noracles = ["oue"]\n'
                       f'epsilons = [1.0]\nmethods = ["base", "{entry}"]\n')
        with pytest.raises(ValueError, match=rf"bad.toml: methods\[1\].*{text}"):
            run_experiment(cfg, out=tmp_path / "out", progress=False)
        assert not (tmp_path / "out").exists()  # nothing written: refused before the sweep


def test_plain_callables_are_accepted_wherever_a_method_is(est):
    def half(estimate):
        return 0.5 * np.maximum(estimate.f_tilde, 0.0) + 0.5 / estimate.d

    want = 0.5 * np.maximum(est.f_tilde, 0.0) + 0.5 / est.d
    np.testing.assert_array_equal(ldpopt.postprocess(est, half), want)
    r = ldpopt.uncertainty.intervals(est, half, n_resamples=20)
    assert r.method == "half" and r.bootstrap_distribution.shape == (20, est.d)
    c = ldpopt.choose(est, methods=["norm-sub", half], n_repeats=4)
    assert list(c.table.index.sort_values()) == ["half", "norm-sub"]
    assert "half" not in methods.names()  # a callable object is wrapped, not registered
    with pytest.raises(ValueError, match="method 'boom' raised ZeroDivisionError"):
        ldpopt.postprocess(est, _boom)
    with pytest.raises(ValueError, match=r"returned shape \(3,\)"):
        ldpopt.postprocess(est, lambda e: np.zeros(3))


def _boom(estimate):
    return 1 / 0


_boom.__name__ = "boom"


def test_the_command_line_takes_file_py_name(toy, tmp_path):
    folder, _ = toy
    counts = tmp_path / "c.csv"
    counts.write_text("value,count\n" + "".join(f"v{i},{c}\n" for i, c in enumerate([340, 300, 285, 275, 265])))
    proc = run_cli("postprocess", "--counts", counts, "--oracle", "oue", "--epsilon", "1", "--n", "1000",
                   "--method", "toy_methods.py:toy", cwd=folder)
    assert proc.returncode == 0, proc.stderr
    from io import StringIO

    out = pd.read_csv(StringIO(proc.stdout))
    f = (np.array([340, 300, 285, 275, 265]) / 1000 - oracles.get("oue", 1.0, 5).q)
    f /= oracles.get("oue", 1.0, 5).p - oracles.get("oue", 1.0, 5).q
    np.testing.assert_allclose(out["toy-mix"], _projection((f + 0.2) / 2.0), atol=1e-15)
    line = one_line_error(run_cli("postprocess", "--counts", counts, "--oracle", "oue", "--epsilon", "1",
                                  "--n", "1000", "--method", "toy_methods.py:missing", cwd=folder))
    assert "--method" in line and "no function 'missing'" in line


def test_choose_and_verify_on_the_command_line_take_file_py_name(toy, tmp_path):
    folder, _ = toy
    counts = tmp_path / "c.csv"
    counts.write_text("value,count\n" + "".join(f"v{i},{c}\n" for i, c in enumerate([340, 300, 285, 275, 265])))
    proc = run_cli("choose", "--counts", counts, "--oracle", "oue", "--epsilon", "1", "--n", "1000", "--repeats", "3",
                   "--methods", "norm-sub,toy_methods.py:toy,toy_methods.py:plain", "--json", cwd=folder)
    assert proc.returncode == 0, proc.stderr
    import json

    assert {r["method"] for r in json.loads(proc.stdout)["ranking"]} == {"norm-sub", "toy-mix", "plain"}
    proc = run_cli("verify", "--quick", "--no-mc", "--oracles", "oue", "--d", "12", "--solver", "none", "--json",
                   "--method", "toy_methods.py:toy", cwd=folder)
    assert proc.returncode == 0, proc.stderr
    rows = [r for r in json.loads(proc.stdout)["rows"] if r["kind"] == "equivalence"]
    assert rows and {(r["claim"], r["verdict"]) for r in rows} == {("toy-mix=cls+uniform", "holds")}
    line = one_line_error(run_cli("verify", "--quick", "--no-mc", "--oracles", "oue", "--method",
                                  "toy_methods.py:plain", cwd=folder))
    assert "'plain' states no problem" in line
