"""One version names one tree: the package (``ldpopt.__version__``, which ``pyproject.toml`` reads),
``CITATION.cff`` (version and release date), the latest release of ``CHANGELOG.md`` (its heading
``## X.Y.Z (YYYY-MM-DD)`` under an ``Unreleased`` heading) and the documentation site (``docs/conf.py``'s
``release``) say the same, and the changelog's releases are in order; every ``vX.Y.Z`` tag of a git
checkout is annotated, its commit's ``__version__`` is X.Y.Z, the changelog has X.Y.Z dated, and no tag
is newer than the package (how a release is tagged: docs/development.md, "Making a release"). Cost:
well under a second (the tag checks' own test makes a small repository: about 0.2 s)."""

from __future__ import annotations

import ast
import datetime
import re
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest
import yaml

import ldpopt

ROOT = Path(__file__).resolve().parents[1]
#: a release heading of CHANGELOG.md: "## 0.2.0 (2026-11-25)"
RELEASE = re.compile(r"^## (\d+\.\d+\.\d+) \((\d{4}-\d{2}-\d{2})\)\s*$", re.MULTILINE)


def releases(text: str) -> list[tuple[str, str]]:
    """The (version, date) of every release heading of a changelog, in the order written."""
    return RELEASE.findall(text)


def _key(version: str) -> tuple[int, ...]:
    return tuple(int(x) for x in version.split("."))


def conf_release() -> str:
    """``release`` as docs/conf.py sets it: read from its source (building the site is not needed):
    either a string literal or ``ldpopt.__version__``."""
    tree = ast.parse((ROOT / "docs" / "conf.py").read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "release" for t in node.targets):
            value = node.value
            if isinstance(value, ast.Constant):
                return value.value
            if ast.unparse(value) == "ldpopt.__version__":
                return ldpopt.__version__
            raise AssertionError(f"docs/conf.py sets release to {ast.unparse(value)}, neither a literal nor the package's")
    raise AssertionError("docs/conf.py sets no release")


def test_the_package_the_citation_the_changelog_and_the_site_name_one_version():
    version = ldpopt.__version__
    assert re.fullmatch(r"\d+\.\d+\.\d+", version), version
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert project["project"]["dynamic"] == ["version"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "ldpopt.__version__"}
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))
    (latest, date), *_ = releases((ROOT / "CHANGELOG.md").read_text(encoding="utf-8"))
    assert (cff["version"], str(cff["date-released"])) == (version, date) == (latest, date)
    assert conf_release() == version


def test_changelog_has_unreleased_on_top_then_dated_releases_newest_first():
    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    headings = re.findall(r"^## .*$", text, re.MULTILINE)
    assert headings[0] == "## Unreleased", headings[:2]
    found = releases(text)
    assert len(found) == len(headings) - 1, "every heading but Unreleased is '## X.Y.Z (YYYY-MM-DD)'"
    versions, dates = [v for v, _ in found], [datetime.date.fromisoformat(d) for _, d in found]
    assert versions == sorted(versions, key=_key, reverse=True) and len(set(versions)) == len(versions)
    assert dates == sorted(dates, reverse=True)
    # every release but the first is grouped, and only into the three kinds a reader looks for
    latest = text.split(headings[1], 1)[1].split("\n## ", 1)[0]
    groups = re.findall(r"^### (.*)$", latest, re.MULTILINE)
    assert groups and set(groups) <= {"Added", "Changed", "Fixed"} and groups == sorted(groups, key=["Added", "Changed", "Fixed"].index)


@pytest.mark.parametrize("text, expected", [
    ("## Unreleased\n\n## 0.2.0 (2026-11-25)\nx\n## 0.1.0 (2026-11-24)\n", [("0.2.0", "2026-11-25"), ("0.1.0", "2026-11-24")]),
    ("## 0.2.0\n## v0.1.0 (2026-11-24)\n", []),  # undated or prefixed headings are not releases
])
def test_release_headings_are_read_as_written(text, expected):
    assert releases(text) == expected


def _git(repo: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(["git", "-C", str(repo), *args], check=False, capture_output=True, text=True, timeout=60)


def tag_problems(repo: Path, version: str, changelog: str) -> list[str]:
    """What is wrong with the release tags (``vX.Y.Z``) of the git repository ``repo`` for a tree whose
    package says ``version`` and whose changelog is ``changelog``: a lightweight tag, a tag whose
    commit's ``ldpopt/__init__.py`` names another version, a tag without a dated changelog section,
    a tag newer than ``version``."""
    dated = dict(releases(changelog))
    problems = []
    for tag in _git(repo, "tag", "--list", "v*").stdout.split():
        if not re.fullmatch(r"v\d+\.\d+\.\d+", tag):
            continue  # not a release tag
        tagged = tag[1:]
        if _git(repo, "cat-file", "-t", tag).stdout.strip() != "tag":
            problems.append(f"{tag}: not annotated (git tag -a)")
        source = _git(repo, "show", f"{tag}:ldpopt/__init__.py").stdout
        found = re.search(r"""^__version__ = ["']([^"']+)["']""", source, re.MULTILINE)
        if not found or found.group(1) != tagged:
            problems.append(f"{tag}: its commit's __version__ is {found.group(1) if found else None}")
        if tagged not in dated:
            problems.append(f"{tag}: no dated CHANGELOG.md section")
        if _key(tagged) > _key(version):
            problems.append(f"{tag}: newer than the package's {version}")
    return problems


needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="no git binary")


@needs_git
def test_release_tags_name_the_tree_they_tag():
    if _git(ROOT, "rev-parse", "--git-dir").returncode != 0:
        pytest.skip("not a git checkout (an unpacked sdist has no tags)")
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert tag_problems(ROOT, ldpopt.__version__, changelog) == []


@needs_git
def test_tag_problems_finds_a_wrong_tag(tmp_path):
    who = ["-c", "user.name=t", "-c", "user.email=t@example.org"]
    assert _git(tmp_path, "init", "-q").returncode == 0
    (tmp_path / "ldpopt").mkdir()
    init = tmp_path / "ldpopt" / "__init__.py"
    changelog = "## Unreleased\n\n## 0.2.0 (2026-11-25)\n\n## 0.1.0 (2026-11-24)\n"
    for version, tags in (("0.1.0", [["-a", "v0.1.0", "-m", "x"], ["v0.1.5"]]),
                          ("0.2.0", [["-a", "v0.3.0", "-m", "x"]])):
        init.write_text(f'__version__ = "{version}"\n', encoding="utf-8")
        assert _git(tmp_path, *who, "add", "-A").returncode == 0
        assert _git(tmp_path, *who, "commit", "-q", "-m", version).returncode == 0
        for args in tags:
            assert _git(tmp_path, *who, "tag", *args).returncode == 0
    assert tag_problems(tmp_path, "0.2.0", changelog) == [
        "v0.1.5: not annotated (git tag -a)", "v0.1.5: its commit's __version__ is 0.1.0",
        "v0.1.5: no dated CHANGELOG.md section",
        "v0.3.0: its commit's __version__ is 0.2.0", "v0.3.0: no dated CHANGELOG.md section",
        "v0.3.0: newer than the package's 0.2.0"]
    for tag in ("v0.1.5", "v0.3.0"):
        assert _git(tmp_path, "tag", "-d", tag).returncode == 0
    assert tag_problems(tmp_path, "0.2.0", changelog) == []
