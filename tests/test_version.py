"""One version names one tree. The package (``ldpopt.__version__``, which ``pyproject.toml`` reads) is
PEP 440: the last release ``X.Y.Z`` on the commit that releases it, a later ``X.Y.Z.devN`` between
releases; ``CITATION.cff`` (version and release date) names the last release, the latest dated section
of ``CHANGELOG.md`` (``## X.Y.Z (YYYY-MM-DD)`` under an ``Unreleased`` heading); every release records
the commit it was made from (``Commit: `<40 hex>```, written by the next commit), and in a git checkout
that commit's ``__version__`` and top dated section are that release; the documentation site
(``docs/conf.py``'s ``release``) says the package's version; ``ldpopt --version`` adds the commit of a
checkout. Every ``vX.Y.Z`` tag of a git checkout is annotated, its commit's ``__version__`` is X.Y.Z,
the changelog has X.Y.Z dated, and no tag is newer than the package (how a release is made:
docs/development.md, "Making a release"). Cost: about a second (two small repositories made)."""

from __future__ import annotations

import ast
import datetime
import random
import re
import shutil
import subprocess
import tomllib
from pathlib import Path

import pytest
import yaml
from packaging.version import InvalidVersion, Version

import ldpopt

ROOT = Path(__file__).resolve().parents[1]
#: a release heading of CHANGELOG.md: "## 0.2.0 (2026-11-25)"
RELEASE = re.compile(r"^## (\d+\.\d+\.\d+) \((\d{4}-\d{2}-\d{2})\)\s*$", re.MULTILINE)
#: the line under a release heading naming the commit it was made from
COMMIT = re.compile(r"^Commit: `([0-9a-f]{40})`\s*$")
#: releases made before their commit was recorded: the line says so instead of naming one
UNRECORDED = {"0.1.0"}


def releases(text: str) -> list[tuple[str, str]]:
    """The (version, date) of every release heading of a changelog, in the order written."""
    return RELEASE.findall(text)


def release_commits(text: str) -> dict[str, str | None]:
    """Each release's recorded commit: the first non-blank line under its heading, ``Commit: `HASH```
    (the hash), or ``Commit: not recorded ...`` (``""``); ``None`` where no ``Commit:`` line is there."""
    found: dict[str, str | None] = {}
    for match in RELEASE.finditer(text):
        rest = text[match.end():].lstrip("\n").split("\n", 1)[0]
        hit = COMMIT.match(rest)
        found[match.group(1)] = hit.group(1) if hit else ("" if rest.startswith("Commit: not recorded") else None)
    return found


def _key(version: str) -> Version:
    return Version(version)


def version_problems(version: str, changelog: str, cff: dict, unrecorded=UNRECORDED) -> list[str]:
    """What is wrong with a tree whose package says ``version``, whose changelog is ``changelog`` and
    whose citation is ``cff`` (``unrecorded``: the releases allowed to say their commit is not
    recorded); empty when they name one tree."""
    try:
        parsed = Version(version)
    except InvalidVersion:
        return [f"{version!r} is not a PEP 440 version"]
    problems = []
    if str(parsed) != version:
        problems.append(f"{version!r} is not written in PEP 440's normal form ({parsed})")
    found = releases(changelog)
    if not found:
        return problems + ["the changelog has no dated release"]
    (latest, date), commits = found[0], release_commits(changelog)
    if parsed.is_devrelease:
        if parsed.pre or parsed.post is not None or parsed.local or len(parsed.release) != 3:
            problems.append(f"{version}: a development version is X.Y.Z.devN")
        if Version(parsed.base_version) <= Version(latest):
            problems.append(f"{version}: not after the last release {latest}")
    elif version != latest:
        problems.append(f"{version}: a release without the top dated changelog section (that is {latest})")
    if (str(cff.get("version")), str(cff.get("date-released"))) != (latest, date):
        problems.append(f"CITATION.cff names {cff.get('version')} ({cff.get('date-released')}), not the last release {latest} ({date})")
    for release, commit in commits.items():
        if commit is None and not (release == latest == version):  # a release commit cannot name itself
            problems.append(f"{release}: no 'Commit:' line under its heading")
        elif commit == "" and release not in unrecorded:
            problems.append(f"{release}: its commit is not recorded")
    return problems


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


def test_the_package_the_citation_the_changelog_and_the_site_name_one_tree():
    version = ldpopt.__version__
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert "version" not in project["project"] and project["project"]["dynamic"] == ["version"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "ldpopt.__version__"}
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert version_problems(version, changelog, cff) == []
    assert conf_release() == version


def _changelog(rows: list[tuple[str, str, str | None]]) -> str:
    text = "# Changelog\n\n## Unreleased\n\n"
    for version, date, commit in rows:
        line = "" if commit is None else (f"Commit: `{commit}`\n\n" if commit else "Commit: not recorded.\n\n")
        text += f"## {version} ({date})\n\n{line}Text.\n\n"
    return text


def test_version_problems_finds_every_kind_of_disagreement_on_generated_trees():
    """Generated release histories: the consistent tree passes, and each one-fact change is found."""
    rng = random.Random(71)
    for _ in range(60):
        major, minor, patch = rng.randrange(0, 5), rng.randrange(1, 9), rng.randrange(0, 9)
        latest, older = f"{major}.{minor}.{patch}", f"{major}.{minor - 1}.{rng.randrange(0, 9)}"
        h1, h2 = (f"{rng.getrandbits(160):040x}" for _ in range(2))
        on_release = rng.random() < 0.5
        rows = [(latest, "2026-11-25", None if on_release else h1), (older, "2026-11-24", h2)]
        good = latest if on_release else rng.choice([f"{major}.{minor}.{patch + 1}", f"{major}.{minor + 1}.0",
                                                    f"{major + 1}.0.0"]) + f".dev{rng.randrange(0, 3)}"
        cff = {"version": latest, "date-released": "2026-11-25"}
        assert version_problems(good, _changelog(rows), cff, ()) == [], (good, rows)
        bad = [
            (f"{latest}.dev0", rows, cff),                                   # a dev version of a released X.Y.Z
            (f"{older}.dev1", rows, cff),                                    # ... of an older one
            (f"{major}.{minor}.{patch + 1}", rows, cff),                     # a release without its section
            (good + "+local", rows, cff),                                    # not X.Y.Z / X.Y.Z.devN
            ("v" + good, rows, cff),                                         # not in normal form
            (good, rows, {**cff, "version": older}),                         # the citation names another
            (good, rows, {**cff, "date-released": "2026-11-26"}),            # ... or another date
            (good, [rows[0], (older, "2026-11-24", None)], cff),             # an old release without its commit
            (good, [rows[0], (older, "2026-11-24", "")], cff),               # ... or not recorded
        ]
        if not on_release:
            bad.append((good, [(latest, "2026-11-25", None), rows[1]], cff))  # the next commit did not record it
        for version, changed, citation in bad:
            assert version_problems(version, _changelog(changed), citation, ()), (version, changed, citation)


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


@needs_git
def test_each_recorded_release_commit_holds_that_release():
    """In a git checkout, the commit each release records has that ``__version__`` and that top dated
    section; a commit this clone lacks (shallow, or an sdist with no repository) is not asked."""
    if _git(ROOT, "rev-parse", "--git-dir").returncode != 0:
        pytest.skip("not a git checkout")
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    asked = 0
    for release, commit in release_commits(changelog).items():
        if not commit or _git(ROOT, "cat-file", "-e", f"{commit}^{{commit}}").returncode != 0:
            continue
        source = _git(ROOT, "show", f"{commit}:ldpopt/__init__.py").stdout
        found = re.search(r"""^__version__ = ["']([^"']+)["']""", source, re.MULTILINE)
        assert found and found.group(1) == release, (release, commit, found and found.group(1))
        assert releases(_git(ROOT, "show", f"{commit}:CHANGELOG.md").stdout)[0][0] == release
        asked += 1
    if asked == 0:
        pytest.skip("no recorded commit is in this clone")


@needs_git
def test_version_line_names_the_commit_of_a_checkout_and_only_of_one(tmp_path):
    from ldpopt.cli._version import version_line

    assert version_line(tmp_path) == f"ldpopt {ldpopt.__version__}"  # no checkout: the version alone
    who = ["-c", "user.name=t", "-c", "user.email=t@example.org"]
    assert _git(tmp_path, "init", "-q").returncode == 0
    (tmp_path / "pyproject.toml").write_text("[project]\n", encoding="utf-8")
    assert version_line(tmp_path) == f"ldpopt {ldpopt.__version__}"  # no commit yet
    assert _git(tmp_path, *who, "add", "-A").returncode == 0
    assert _git(tmp_path, *who, "commit", "-q", "-m", "x").returncode == 0
    head = _git(tmp_path, "rev-parse", "HEAD").stdout.strip()
    assert version_line(tmp_path) == f"ldpopt {ldpopt.__version__} (commit {head})"
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n", encoding="utf-8")
    assert version_line(tmp_path) == f"ldpopt {ldpopt.__version__} (commit {head}, modified)"
    (tmp_path / "pyproject.toml").unlink()  # a .git without the project's file is not ldpopt's checkout
    assert version_line(tmp_path) == f"ldpopt {ldpopt.__version__}"
