"""`ldpopt experiment`: `plot` takes what `run` takes, `list` prints aligned columns, and a missing
dataset or an unwritable --out is one line, not a traceback. `run` goes through the real entry point
(a subprocess: a umask, an environment variable, the experiment's own work); `plot`, `list` and the
unwritable --out call ``ldpopt.cli.main`` in this process (``main_in_process``: the same output,
files and exit status, without a fresh interpreter's imports per call)."""

from __future__ import annotations

import stat
from pathlib import Path

from _cli import ldpopt as run, main_in_process, one_line_error
from ldpopt.cli.experiment import config_paths
from ldpopt.experiments.config import load_config

# the file's stem differs from the experiment's name: results are saved under the name
CONFIG = """
name = "cli_plot_test"
kind = "full-domain"
description = "a tiny sweep for the CLI's tests"
datasets = [{name = "zipf", n = 2000, d = 16, rng = 1}]
oracles = ["grr"]
epsilons = [1.0]
methods = ["base", "norm-sub"]
repetitions = 1
seed = 7
"""


def test_plot_accepts_the_toml_path_that_run_accepts(tmp_path, monkeypatch):
    """...and run's outputs get the mode a plain write gives under the user's umask."""
    (tmp_path / "my sweep.toml").write_text(CONFIG)
    proc = run("experiment", "run", "my sweep.toml", "--out", "res", "--no-progress", cwd=tmp_path, umask=0o027)
    assert proc.returncode == 0, proc.stderr
    folder = tmp_path / "res" / "cli_plot_test"
    written = [folder / "results.parquet", folder / "meta.json", *(folder / "parts").iterdir()]
    assert len(written) == 3 and not list(folder.glob(".*"))  # one task; no temporary left
    assert {stat.S_IMODE(p.stat().st_mode) for p in written} == {0o640}  # the umask's, not mkstemp's 0600
    monkeypatch.chdir(tmp_path)  # the paths relative to the same working directory
    proc = main_in_process("experiment", "plot", "my sweep.toml", "--out", "res")
    assert proc.returncode == 0, proc.stderr
    pngs = [tmp_path / p for p in proc.stdout.split("\n") if p]
    assert pngs and all(p.suffix == ".png" and p.stat().st_size > 0 for p in pngs)
    assert all(p.parent == tmp_path / "res" / "cli_plot_test" for p in pngs)


def test_list_prints_aligned_columns_under_a_header():
    proc = main_in_process("experiment", "list")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.rstrip("\n").split("\n")
    header = lines[0]
    assert header.split() == ["NAME", "KIND", "DESCRIPTION"]
    k_at, d_at = header.index("KIND"), header.index("DESCRIPTION")
    cfgs = [load_config(p) for p in config_paths()]
    assert len(lines) == 1 + len(cfgs) > 1
    for line, cfg in zip(lines[1:], cfgs):
        assert line[:k_at].rstrip() == cfg.name and line[k_at - 2:k_at] == "  "  # two spaces at least
        assert line[k_at:d_at].rstrip() == cfg.kind
        assert line[d_at:] == " ".join(cfg.description.split())


def test_missing_dataset_is_one_line_naming_the_file(tmp_path):
    (tmp_path / "k.toml").write_text(CONFIG.replace('[{name = "zipf", n = 2000, d = 16, rng = 1}]', '["kosarak"]'))
    err = one_line_error(run("experiment", "run", "k.toml", "--out", "res", "--no-progress", cwd=tmp_path,
                             env={"LDPOPT_DATA": str(tmp_path)}))
    assert "kosarak.dat" in err and "LDPOPT_DATA" in err, err


def test_unwritable_out_is_one_line(tmp_path, monkeypatch):
    (tmp_path / "c.toml").write_text(CONFIG)
    (tmp_path / "a_file").write_text("x")
    monkeypatch.chdir(tmp_path)
    err = one_line_error(main_in_process("experiment", "run", "c.toml", "--out", Path("a_file") / "res",
                                         "--no-progress"))
    assert "a_file" in err, err


def test_plot_all_draws_what_exists_and_names_what_does_not(tmp_path):
    """After `run all` skipped a config (missing data), `plot all` draws the others and says which
    had no results, one line each; with no results at all it is an error (exit 2)."""
    out = tmp_path / "r"
    r = run("experiment", "run", "jia_fig5_6_hh_threshold", "--quick", "--no-progress", "--out", str(out))
    assert r.returncode == 0, r.stderr
    r = main_in_process("experiment", "plot", "all", "--quick", "--out", str(out), "--out-dir", str(tmp_path / "figs"))
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    missing = [ln for ln in lines if "no saved results" in ln]
    assert len(missing) == len(config_paths()) - 1
    assert any(ln.endswith(".png") for ln in lines)
    r = main_in_process("experiment", "plot", "all", "--quick", "--out", str(tmp_path / "none"))
    assert r.returncode == 2 and "no config has saved results" in r.stderr
