"""What a release needs from the repository: one version, the licence the package declares, a
citation file that names the same version, and a wheel and an sdist that ``twine check`` accepts.

``test_wheel_installs_in_a_fresh_venv`` installs the built wheel into a new virtual environment (its
dependencies from the package index, pinned by requirements.lock) and runs the README's five lines
and the command from a folder outside the checkout; it takes about 70 s (30 s of CPU) and the
network, so the suite skips it and ``.ci/run`` runs it as its own step (``LDPOPT_RELEASE_CHECK=1``).
The other tests here cost about 3 s of CPU (``python -m build``)."""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import pathlib
import subprocess
import sys
import tomllib
import zipfile

import pytest
import yaml

import ldpopt

ROOT = pathlib.Path(__file__).resolve().parent.parent


def test_version_has_one_source():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert "version" not in project and "version" in project["dynamic"]
    assert importlib.metadata.version("ldpopt") == ldpopt.__version__
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    # a release names itself; a development version X.Y.Z.devN comes after the release the citation names
    assert f"## {cff['version']} (" in (ROOT / "CHANGELOG.md").read_text()
    assert cff["version"] == ldpopt.__version__ or ".dev" in ldpopt.__version__


def test_licence_file_matches_the_declared_licence():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["license"] == "MIT"
    text = (ROOT / "LICENSE").read_text()
    assert text.startswith("MIT License") and "WITHOUT WARRANTY OF ANY KIND" in text
    assert set(project["license-files"]) == {"LICENSE", "NOTICE"}
    # every shipped dataset folder is named in NOTICE with its own terms
    notice = (ROOT / "NOTICE").read_text()
    data = ROOT / "ldpopt" / "datasets" / "data"
    folders = {p.parent.name for p in data.glob("*/SOURCE.md")}
    assert folders and all(f"{name}/" in notice for name in folders), folders


def test_citation_cites_the_papers_implemented():
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    assert cff["cff-version"] == "1.2.0" and cff["license"] == "MIT"
    titles = " | ".join(r["title"] for r in cff["references"])
    for words in ("Frequency Estimation with Consistency", "Consistent and Accurate Frequency Oracles", "Calibrate"):
        assert words in titles


def _release_tools():
    missing = [m for m in ("build", "twine") if importlib.util.find_spec(m) is None]
    if missing:
        pytest.skip(f"the release extra is not installed ({', '.join(missing)}): pip install '.[release]'")


def build_dist(out: pathlib.Path) -> tuple[pathlib.Path, pathlib.Path]:
    """``python -m build`` (the sdist, then the wheel from the sdist) into ``out``; with the installed
    setuptools (``--no-isolation``: requirements.lock pins it, nothing is downloaded). Returns
    (wheel, sdist)."""
    proc = subprocess.run([sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(ROOT)],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    (wheel,), (sdist,) = out.glob("*.whl"), out.glob("*.tar.gz")
    return wheel, sdist


def test_wheel_and_sdist_pass_twine_check_and_ship_the_data(tmp_path):
    _release_tools()
    wheel, sdist = build_dist(tmp_path)
    assert wheel.name == f"ldpopt-{ldpopt.__version__}-py3-none-any.whl" and sdist.name == f"ldpopt-{ldpopt.__version__}.tar.gz"
    check = subprocess.run([sys.executable, "-m", "twine", "check", "--strict", str(wheel), str(sdist)],
                           capture_output=True, text=True, timeout=120)
    assert check.returncode == 0 and check.stdout.count("PASSED") == 2, check.stdout + check.stderr
    names = zipfile.ZipFile(wheel).namelist()
    shipped = {p.parent.name for p in (ROOT / "ldpopt" / "datasets" / "data").glob("*/SOURCE.md")}
    assert {n.split("/")[-2] for n in names if n.startswith("ldpopt/datasets/data/") and n.endswith("/SOURCE.md")} == shipped
    configs = sorted((ROOT / "experiments").rglob("*.toml"))
    assert configs and sum(n.startswith("ldpopt/experiments/data/") and n.endswith(".toml") for n in names) == len(configs)
    assert any(n.startswith("ldpopt/examples/") for n in names)
    assert {"LICENSE", "NOTICE"} <= {n.rsplit("/", 1)[-1] for n in names if ".dist-info/licenses/" in n}
    print(f"wheel {wheel.name}: {wheel.stat().st_size / 1e6:.2f} MB; sdist {sdist.stat().st_size / 1e6:.2f} MB")


@pytest.mark.skipif(os.environ.get("LDPOPT_RELEASE_CHECK", "") in ("", "0"),
                    reason="about 70 s and the package index: .ci/run runs it (LDPOPT_RELEASE_CHECK=1)")
def test_wheel_installs_in_a_fresh_venv(tmp_path):
    _release_tools()
    from test_readme import README, blocks

    wheel, _ = build_dist(tmp_path / "dist")
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    py, cli = venv / "bin" / "python", venv / "bin" / "ldpopt"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    install = subprocess.run([str(py), "-m", "pip", "install", "--quiet", "-c", str(ROOT / "requirements.lock"), str(wheel)],
                             capture_output=True, text=True, env=env, timeout=900)
    assert install.returncode == 0, install.stdout[-3000:] + install.stderr[-3000:]
    away = tmp_path / "elsewhere"
    away.mkdir()
    section = README.split("## Five lines", 1)[1]
    five = next(b for b in blocks(ROOT / "README.md") if b.lang == "python" and b.source in section)
    said = section.split("prints `", 1)[1].split("`", 1)[0]
    script = "import ldpopt, pathlib; assert pathlib.Path(ldpopt.__file__).is_relative_to(pathlib.Path(__import__('sys').prefix))\n"
    run = subprocess.run([str(py), "-c", script + five.source], cwd=away, env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0 and run.stdout.strip() == said, run.stdout + run.stderr[-3000:]
    helped = subprocess.run([str(cli), "--help"], cwd=away, env=env, capture_output=True, text=True, timeout=120)
    assert helped.returncode == 0 and "postprocess" in helped.stdout, helped.stderr
    listed = subprocess.run([str(cli), "experiment", "list"], cwd=away, env=env, capture_output=True, text=True, timeout=300)
    assert listed.returncode == 0 and all(c.stem in listed.stdout for c in (ROOT / "experiments" / "configs").glob("*.toml")), (
        listed.stdout[-2000:] + listed.stderr[-2000:])
    data = subprocess.run([str(py), "-c", "import ldpopt; print(ldpopt.datasets.load('retail').d)"], cwd=away, env=env,
                          capture_output=True, text=True, timeout=300)
    assert data.returncode == 0 and data.stdout.strip() == "16470", data.stderr[-2000:]
