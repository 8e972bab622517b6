"""What a release needs from the repository: one version, the licence the package declares, and a
citation file that names the same version."""

from __future__ import annotations

import importlib.metadata
import pathlib
import tomllib

import yaml

import ldpopt

ROOT = pathlib.Path(__file__).resolve().parent.parent


def test_version_has_one_source():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert "version" not in project and "version" in project["dynamic"]
    assert importlib.metadata.version("ldpopt") == ldpopt.__version__
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text())
    assert cff["version"] == ldpopt.__version__
    assert f"## {ldpopt.__version__}" in (ROOT / "CHANGELOG.md").read_text()


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
