"""``ldpopt experiment evaluate``: a method of the user's own, from a file outside the package, run
beside the papers' methods on the quick grid through the real command — one table with a finite
mean and SE for every metric, one PNG figure per metric, the same numbers as the registered method
it re-implements; resuming runs only what is missing; bad input is one line naming the argument,
refused before any work."""

from __future__ import annotations

import sys

import numpy as np
import pandas as pd
import pytest
from _cli import ldpopt as run_cli

from ldpopt import methods
from ldpopt.cli import main
from ldpopt.experiments.evaluation import AGAINST, METRICS, evaluate

TOY = '''
import numpy as np
from ldpopt.methods import register


def _projection(y):
    """Euclidean projection onto the probability simplex by the sort rule (Held et al. 1974)."""
    u = np.sort(y)[::-1]
    css = np.cumsum(u) - 1.0
    k = np.flatnonzero(u - css / np.arange(1, y.size + 1) > 0)[-1]
    return np.maximum(y - css[k] / (k + 1), 0.0)


@register("eval-toy-mix", label="Eval-Toy-Mix", family="closed-form", description="CLS pulled halfway to uniform",
          non_negative="yes", sums_to_one="yes", order_preserving="weak", complexity="O(d log d)",
          reference="a test")
def mix(estimate):
    return _projection((estimate.f_tilde + 1.0 / estimate.d) / 2.0)


def broken(estimate):
    return estimate.f_tilde * (1 / (estimate.d - estimate.d))  # a bug: Python's ZeroDivisionError


def cls_by_sort(estimate):
    """Norm-Sub (the CLS projection), written out by the sort rule: a plain function."""
    return _projection(estimate.f_tilde)
'''
AGAINST_HERE = "base,norm-sub,mle-apx"
PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """The command once, on the quick grid, with two methods from a file: its output folder, stdout,
    the CSV table and the methods' specs."""
    folder = tmp_path_factory.mktemp("evaluate")
    (folder / "toy.py").write_text(TOY)
    specs = [f"{folder / 'toy.py'}:mix", f"{folder / 'toy.py'}:cls_by_sort"]
    proc = run_cli("experiment", "evaluate", *specs, "--grid", "quick", "--against", AGAINST_HERE, "--out", "ev",
                   "--no-progress", cwd=folder)
    assert proc.returncode == 0, proc.stderr
    yield folder, proc.stdout, pd.read_csv(folder / "ev" / "evaluation.csv"), specs
    for name in ("eval-toy-mix", "cls_by_sort", "broken"):  # registered in this process by the tests below
        if name in methods.names():
            methods.unregister(name)
    for key in [k for k, m in sys.modules.items() if k.startswith("_ldpopt_user_")
                and str(getattr(m, "__file__", "")).startswith(str(folder))]:
        del sys.modules[key]


def test_the_table_has_every_metric_for_the_users_methods_with_finite_mean_and_se(run):
    folder, stdout, table, _ = run
    assert "table: ev/evaluation.md" in stdout.splitlines()  # where it was written, as --out named it
    assert set(table["method"]) == {"eval-toy-mix", "cls_by_sort", *AGAINST_HERE.split(",")}
    for method in ("eval-toy-mix", "cls_by_sort"):
        rows = table[table["method"] == method]
        assert {m.source for m in METRICS} == set(rows["source"]), method
        assert np.isfinite(rows[["mean", "se"]].to_numpy()).all() and (rows["reps"] >= 2).all(), method
    # the regime of every row: dataset with n and d, oracle, ε, repetitions
    quick = table[table["source"] == METRICS[0].source]
    assert set(zip(quick["dataset"], quick["n"], quick["d"], quick["oracle"])) == {("zipf", 20000, 128, "oue")}
    assert sorted(set(quick["epsilon"])) == [0.5, 1.0, 2.0] and set(quick["reps"]) == {3}
    # the markdown: one table, the user's method a column, a cell in every error row
    md = (folder / "ev" / "evaluation.md").read_text(encoding="utf-8")
    lines = [ln for ln in md.splitlines() if ln.startswith("| ")]
    head = [c.strip() for c in lines[0].strip("|").split("|")]
    col = head.index("Eval-Toy-Mix")
    assert head[:6] == ["metric", "dataset (n, d)", "oracle", "ε", "query", "reps"]
    mse_rows = [ln for ln in lines[1:] if "MSE" in ln]
    assert len(mse_rows) == len(table[(table["method"] == "base") & table["metric"].str.contains("MSE")])
    assert all(ln.strip("|").split("|")[col].strip() not in ("", "–") for ln in mse_rows)


def test_one_png_figure_per_metric(run):
    folder, stdout, _, _ = run
    figures = [line.removeprefix("figure: ") for line in stdout.splitlines() if line.startswith("figure: ")]
    assert sorted(p.rsplit("/", 1)[1].split("_")[0] for p in figures) == sorted(m.key.split("_")[0] for m in METRICS)
    for path in figures:
        with open(folder / path, "rb") as fh:
            assert fh.read(8) == PNG, path


def test_a_method_from_a_file_gets_the_numbers_of_the_registered_method_it_reimplements(run):
    """cls_by_sort is Norm-Sub written out: on the same tasks (same seeds) its every cell equals
    Norm-Sub's, MSE and coverage alike."""
    _, _, table, _ = run
    keys = ["metric", "dataset", "oracle", "epsilon", "query"]
    mine = table[table["method"] == "cls_by_sort"].set_index(keys).sort_index()
    ref = table[table["method"] == "norm-sub"].set_index(keys).sort_index()
    assert mine.index.equals(ref.index) and len(mine) > 10
    np.testing.assert_allclose(mine[["mean", "se"]].to_numpy(), ref[["mean", "se"]].to_numpy(), rtol=1e-9, atol=1e-15)
    assert not np.allclose(table[table["method"] == "eval-toy-mix"]["mean"].to_numpy(), ref["mean"].to_numpy())


def test_resume_runs_only_the_missing_task(run):
    folder, _, table, specs = run
    out = folder / "ev"
    parts = sorted(out.glob("*/parts/*.parquet"))
    gone = parts[len(parts) // 2]
    gone.unlink()
    stamps = {p: p.stat().st_mtime_ns for p in parts if p != gone}
    ev = evaluate(specs, against=AGAINST_HERE, grid="quick", out=out, resume=True, progress=False)
    assert (ev.tasks, ev.tasks_run) == (len(parts), 1) and gone.is_file()
    assert {p: p.stat().st_mtime_ns for p in stamps} == stamps  # nothing else recomputed
    again = pd.read_csv(ev.csv)
    pd.testing.assert_frame_equal(again, table)  # the same numbers, the recomputed task included


def _error(capsys, *args, cwd=None) -> str:
    """``ldpopt experiment evaluate ARGS`` in this process: exit 2, one line on stderr, returned."""
    code = main(["experiment", "evaluate", *map(str, args), "--no-progress"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1 and "Traceback" not in err, (code, err)
    return err


def test_bad_input_is_one_line_naming_the_argument_before_any_work(run, tmp_path, capsys, monkeypatch):
    folder, _, _, specs = run
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "new"
    cases = [
        (["missing.py:f"], "METHOD 'missing.py:f': no such file"),
        ([f"{folder / 'toy.py'}:nothing"], "has no function 'nothing'"),
        (["norm-sob"], "METHOD 'norm-sob': method must be one of"),
        ([f"{folder / 'toy.py'}:broken"], "broken' raised ZeroDivisionError"),
        (["norm-sub", "--grid", "huge"], "--grid must be one of ['standard', 'quick']"),
        (["norm-sub", "--against", "base,nope"], "--against: 'nope' is not one of"),
        (["norm-sub", "--resume"], "--resume: "),
    ]
    for args, text in cases:
        err = _error(capsys, *args, "--out", out)
        assert text in err, (args, err)
        assert not out.exists(), args  # refused before anything was written
    # an existing folder: not clobbered without --resume; --resume only for the same evaluation
    ev = folder / "ev"
    before = {p: p.stat().st_mtime_ns for p in ev.rglob("*")}
    assert "already holds an evaluation: pass --resume" in _error(capsys, *specs, "--out", ev)
    err = _error(capsys, specs[0], "--against", AGAINST_HERE, "--grid", "quick", "--out", ev, "--resume")
    assert "--resume: " in err and "evaluates methods" in err
    assert "evaluates grid" in _error(capsys, *specs, "--against", AGAINST_HERE, "--out", ev, "--resume")
    (tmp_path / "files").mkdir()
    (tmp_path / "files" / "mine.txt").write_text("keep")
    assert "already holds files" in _error(capsys, "norm-sub", "--out", tmp_path / "files")
    assert {p: p.stat().st_mtime_ns for p in ev.rglob("*")} == before


def test_a_changed_method_file_is_not_resumed_and_in_process_methods_need_one_job(tmp_path):
    (tmp_path / "v.py").write_text("def mine(estimate):\n    return estimate.f_tilde\n")
    ev = evaluate(f"{tmp_path / 'v.py'}:mine", against="base", grid="quick", out=tmp_path / "ev", progress=False)
    assert ev.tasks_run == ev.tasks > 0 and ev.methods == ("mine",)
    mse = ev.table[ev.table["metric"].str.contains("MSE")]
    mine = mse[mse["method"] == "mine"].reset_index(drop=True)
    base = mse[mse["method"] == "base"].reset_index(drop=True)
    assert len(mine) == len(base) > 0
    pd.testing.assert_series_equal(mine["mean"], base["mean"])  # f~ itself is Base
    # by its registered name it lives in this process only: worker processes could not run it
    with pytest.raises(ValueError, match=r"METHOD 'mine': registered in this process only.*--jobs 1"):
        evaluate("mine", grid="quick", out=tmp_path / "p", jobs=2)
    methods.unregister("mine")
    (tmp_path / "v.py").write_text("def mine(estimate):\n    return estimate.f_tilde * 1.0\n")
    with pytest.raises(ValueError, match=r"--resume: .*v\.py changed since"):
        evaluate(f"{tmp_path / 'v.py'}:mine", against="base", grid="quick", out=tmp_path / "ev", resume=True)
    for key in [k for k, m in sys.modules.items() if k.startswith("_ldpopt_user_")
                and str(getattr(m, "__file__", "")).startswith(str(tmp_path))]:
        del sys.modules[key]
    if "mine" in methods.names():
        methods.unregister("mine")

    def plain(estimate):
        return estimate.f_tilde

    with pytest.raises(ValueError, match=r"methods\[0\]: a function that is not registered"):
        evaluate(plain, grid="quick", out=tmp_path / "p")
    with pytest.raises(ValueError, match=r"--jobs must be an integer >= 1"):
        evaluate("norm-sub", grid="quick", out=tmp_path / "p", jobs=0)
    assert not (tmp_path / "p").exists()


def test_the_commands_default_against_is_the_librarys():
    from ldpopt.cli.experiment import AGAINST_HELP

    assert AGAINST_HELP.split(",") == list(AGAINST)
