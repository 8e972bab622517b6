"""The project stands on its own (issue 10): a clone or a `pip install` finds every config and dataset
inside the repository/package, names no path outside it, and a config whose data are absent is
skipped with one line instead of aborting a sweep."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from ldpopt.experiments import config as C

ROOT = Path(__file__).resolve().parents[1]
TINY = """name = "{name}"
kind = "full-domain"
datasets = [{datasets}]
oracles = ["grr"]
epsilons = [1.0]
methods = ["base", "norm-sub"]
repetitions = 1
seed = 1
"""


def _tiny_configs(folder: Path) -> list[Path]:
    folder.mkdir()
    ok = folder / "a_tiny_zipf.toml"
    ok.write_text(TINY.format(name="a_tiny_zipf", datasets='{name = "zipf", n = 2000, d = 16, rng = 1}'))
    gone = folder / "b_needs_kosarak.toml"
    gone.write_text(TINY.format(name="b_needs_kosarak", datasets='"kosarak"'))
    return [ok, gone]


# the patterns are split so that this file does not match itself
_OUTSIDE = ["../" + "shared", "/" + "work/", "shared" + "/data", "../" + "papers"]
_SKIP_DIRS = {".git", ".venv", "results", "__pycache__", ".pytest_cache", ".hypothesis", "build", "dist",
              ".peer-venv", ".ipynb_checkpoints"}
_TEXT = {".py", ".md", ".toml", ".txt", ".ipynb", ".sh", ".lock", ".cfg", ".yml", ".yaml", ".json", ".csv", ""}


def _repository_files() -> list[Path]:
    """The tracked files (``git ls-files``), or, without git, every file outside the build dirs."""
    try:
        out = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z"], capture_output=True, check=True)
        return [ROOT / f for f in out.stdout.decode().split("\0") if f]
    except (OSError, subprocess.CalledProcessError):
        files = []
        for dirpath, dirnames, filenames in os.walk(ROOT):
            dirnames[:] = [d for d in dirnames if d not in _SKIP_DIRS and not d.endswith(".egg-info")]
            files += [Path(dirpath) / fn for fn in filenames if fn not in _SKIP_DIRS]
        return files


def test_no_file_names_a_path_outside_the_repository():
    hits, n = [], 0
    for p in _repository_files():
        if p.suffix not in _TEXT or not p.is_file() or p.stat().st_size > 2_000_000:
            continue
        try:
            text = p.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        n += 1
        hits += [f"{p.relative_to(ROOT)}: {pat}" for pat in _OUTSIDE if pat in text]
    assert n > 100 and not hits, hits


def test_configs_ship_in_the_package_and_are_found_by_name_from_any_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no experiments/ folder here
    paths = C.config_paths()
    assert len(paths) >= 20 and all(p.parent == C.CONFIG_DIR for p in paths)
    assert C.CONFIG_DIR.is_relative_to(Path(C.__file__).resolve().parent)  # package data, not the checkout
    assert C.find_config("wang_ndss_fig4_full_domain") == C.CONFIG_DIR / "wang_ndss_fig4_full_domain.toml"
    assert C.load_config("ext_full_domain_large", quick=True).datasets == ("aol",)


def test_experiment_list_with_no_configs_fails_loudly(tmp_path, monkeypatch, capsys):
    from ldpopt.cli import main

    monkeypatch.setattr(C, "CONFIG_DIR", tmp_path)
    assert main(["experiment", "list"]) == 2
    assert "no experiment configs" in capsys.readouterr().err
    assert main(["experiment", "run", "all", "--quick", "--out", str(tmp_path / "r")]) == 2


def test_report_skips_a_config_with_missing_data_and_runs_the_rest(tmp_path, monkeypatch, capsys):
    from ldpopt import report

    monkeypatch.setenv("LDPOPT_DATA", str(tmp_path / "empty"))
    ok, gone = _tiny_configs(tmp_path / "cfg")
    report._quick_reproduction(tmp_path / "out", configs=[gone, ok])
    lines = capsys.readouterr().out.splitlines()
    skip = [ln for ln in lines if "b_needs_kosarak" in ln]
    assert len(skip) == 1 and "skipped:" in skip[0] and "kosarak.dat" in skip[0] and "LDPOPT_DATA" in skip[0]
    assert (tmp_path / "out" / "a_tiny_zipf-quick" / "results.parquet").is_file()
    assert not (tmp_path / "out" / "b_needs_kosarak-quick").exists()  # nothing written for it
    assert "1 of 2 experiments skipped for missing data" in "\n".join(lines)


def test_run_all_skips_a_config_with_missing_data(tmp_path, monkeypatch, capsys):
    from ldpopt.cli import main

    monkeypatch.setenv("LDPOPT_DATA", str(tmp_path / "empty"))
    _tiny_configs(tmp_path / "cfg")
    monkeypatch.setattr(C, "CONFIG_DIR", tmp_path / "cfg")
    out = tmp_path / "out"
    assert main(["experiment", "run", "all", "--no-progress", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert sum("b_needs_kosarak skipped:" in ln for ln in text.splitlines()) == 1
    assert (out / "a_tiny_zipf" / "results.parquet").is_file()
    entry = json.loads((out / "sweep_timings.json").read_text())[-1]
    assert [e.get("skipped", "") != "" for e in entry["experiments"]] == [False, True]
    assert "(1 skipped for missing data)" in text
    # a single named config with absent data is an error (one line, exit 2), not a silent success
    assert main(["experiment", "run", "b_needs_kosarak", "--no-progress", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "kosarak.dat" in err[0] and "LDPOPT_DATA" in err[0]


def test_ci_script_runs_make_test_and_a_fresh_clone():
    text = (ROOT / ".ci" / "run").read_text()
    assert "make test" in text and "git clone" in text and "mktemp -d" in text and "make run" in text
    assert subprocess.run(["bash", "-n", str(ROOT / ".ci" / "run")]).returncode == 0


def test_runtime_dependencies_declared():
    import tomllib

    deps = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    names = {d.split(">")[0].split("=")[0].split("[")[0].strip().lower() for d in deps["dependencies"]}
    assert {"tqdm", "joblib", "numpy", "scipy", "cvxpy", "pandas", "pyarrow", "matplotlib", "dask"} <= names
    assert "data" in deps["optional-dependencies"]
    # every declared dependency is pinned exactly in requirements.lock (what make installs)
    lock = {ln.split("==")[0].strip().lower() for ln in (ROOT / "requirements.lock").read_text().splitlines() if "==" in ln}
    for extra in ("data", "test"):
        names |= {d.split(">")[0].split("[")[0].strip().lower() for d in deps["optional-dependencies"][extra]}
    assert names <= lock, names - lock


def test_default_experiment_path_imports_no_dask(tmp_path):
    # the progress bar (tqdm) is on by default; Dask (a core dependency, for aggregate) is not imported
    code = ("import sys; from ldpopt.experiments import run; "
            "run('wang_ndss_fig4_full_domain', quick=True, out=sys.argv[1], progress=True); "
            "assert 'tqdm' in sys.modules and not any(m.startswith('dask') for m in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path / "r")], capture_output=True, text=True,
                         cwd=tmp_path)
    assert out.returncode == 0, out.stderr
