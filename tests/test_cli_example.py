"""``ldpopt example`` writes the README's example files from the *installed* package: they are package
data found through importlib.resources, not files of the checkout."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from _cli import ROOT
from ldpopt.cli import main

PKG = Path(ROOT) / "ldpopt"


def _installed_copy(site: Path) -> Path:
    """What ``pip install .`` puts in site-packages, by the rules pyproject.toml gives setuptools: the
    modules of every package (a folder with ``__init__.py``) and the package-data globs; nothing else."""
    data = tomllib.loads((Path(ROOT) / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]
    for init in PKG.rglob("__init__.py"):
        pkg = init.parent
        dotted = ".".join(pkg.relative_to(ROOT).parts)
        files = [*pkg.glob("*.py"), *(f for g in data.get(dotted, []) for f in pkg.glob(g) if f.is_file())]
        for f in files:
            dest = site / f.relative_to(ROOT)
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(f, dest)
    return site


def test_example_files_come_from_the_installed_package(tmp_path):
    site = _installed_copy(tmp_path / "site")
    work = tmp_path / "work"  # a folder with no examples/ and no checkout
    work.mkdir()
    proc = subprocess.run([sys.executable, "-m", "ldpopt.cli", "example", "solve_problem.toml",
                           "emoji_oue_eps1_counts.csv", "--out", "."], cwd=work, capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(site)}, timeout=300)
    assert proc.returncode == 0, proc.stderr
    for name in ("solve_problem.toml", "emoji_oue_eps1_counts.csv"):
        assert (work / name).read_bytes() == (PKG / "examples" / name).read_bytes()
    assert sorted(p.name for p in work.iterdir()) == ["emoji_oue_eps1_counts.csv", "solve_problem.toml"]


def test_checkout_examples_folder_is_the_packaged_one():
    # the README's examples/... paths work in a checkout, and there is one copy of each file
    assert (Path(ROOT) / "examples").resolve() == (PKG / "examples").resolve()
    assert (Path(ROOT) / "examples" / "solve_problem.toml").is_file()


def test_example_lists_writes_all_and_never_replaces(tmp_path, capsys):
    assert main(["example"]) == 0
    listed = [line.split()[0] for line in capsys.readouterr().out.splitlines()]
    assert listed == sorted(p.name for p in (PKG / "examples").iterdir() if p.is_file())
    assert main(["example", "all", "--out", str(tmp_path)]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == listed
    (tmp_path / "solve_problem.toml").write_text("mine\n")
    assert main(["example", "solve_problem.toml", "--out", str(tmp_path)]) == 2
    assert "already exists" in capsys.readouterr().err
    assert (tmp_path / "solve_problem.toml").read_text() == "mine\n"


@pytest.mark.parametrize("argv,needle", [
    (["nope.toml"], "NAME 'nope.toml' is not an example"),
    (["all", "--out", "no/such/dir"], "--out no/such/dir is not an existing folder"),
])
def test_example_errors_are_one_line(tmp_path, monkeypatch, capsys, argv, needle):
    monkeypatch.chdir(tmp_path)
    assert main(["example", *argv]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and needle in err and "Traceback" not in err
    assert list(tmp_path.iterdir()) == []
