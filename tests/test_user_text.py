"""What a user reads carries no internal words: the package (code, docstrings, configs, data notes),
the documents (README, docs/, REPRODUCTION, BENCHMARKS, DESIGN, ...), the notebooks, the examples, the
experiment data, the benchmarks and their results, and the CLI's ``--help`` of every command and its
``experiment list`` never name issues, issue numbers, work sessions,
branches or the people who wrote them; and the documents state no count of configs that can go stale
(``ldpopt experiment list`` is the count)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from _cli import ldpopt

ROOT = Path(__file__).resolve().parents[1]
TEXT = (".py", ".toml", ".md", ".txt", ".json", ".cfg", ".ipynb", ".csv", ".yml", ".yaml", ".sh")
# folders a user reads beside the package and the top-level documents (those that exist)
FOLDERS = ("docs", "notebooks", "examples", "experiments", "benchmarks")
INTERNAL = re.compile(
    r"\b[Ii]ssues?[ -]#?\d+"  # "issue 15", "issue-16 code"
    r"|\b[Tt]he issue\b|\b[Ii]ssue's\b"  # "the target"
    r"|\b[Ss]essions? \d+\b"  # "session 2"
    r"|\bhelpers?' |\bhelper (?:note|session)"  # "other helpers' tests"
    r"|\bh\d{1,2}[a-z][a-z0-9]*\b"  # branch names (h23c, h11fast)
    r"|\bthis branch\b|\bthe lead\b")  # who wrote it, where


def _text_files(folder: Path) -> list[Path]:
    return [p for p in folder.rglob("*") if p.suffix in TEXT and p.is_file()
            and not {"__pycache__", ".peer-venv"} & set(p.parts)]


def _user_files():
    pkg = _text_files(ROOT / "ldpopt")
    docs = list(ROOT.glob("*.md")) + [ROOT / "Makefile", ROOT / "pyproject.toml"]
    return pkg + docs + [p for f in FOLDERS if (ROOT / f).is_dir() for p in _text_files(ROOT / f)]


def test_internal_word_pattern_catches_what_it_should():
    for bad in ("(issue 15 item 4)", "before issue 16", "the issue's target", "Issue 11 item 2.", "in session 2",
                "other helpers' tests", "on branch h23c", "(h11fast)", "after = this branch", "the lead re-measures", "the issue-16 code"):
        assert INTERNAL.search(bad), bad
    for fine in ("a design issue", "Legal Issues", "branching 2, 4, 16", "validation helpers at the boundary",
                 "the h-index", "Retail basket sizes"):
        assert not INTERNAL.search(fine), fine


def test_package_and_documents_carry_no_internal_words():
    files = _user_files()
    assert len(files) > 100 and {"REPRODUCTION.md", "README.md", "BENCHMARKS.md", "DESIGN.md"} <= {p.name for p in files}
    assert any(p.suffix == ".ipynb" for p in files) and any(p.parts[-2:-1] == ("examples",) for p in files)
    hits = [f"{p.relative_to(ROOT)}:{i}: {m.group(0)!r}" for p in files
            for i, line in enumerate(p.read_text(encoding="utf-8", errors="replace").splitlines(), 1)
            for m in [INTERNAL.search(line)] if m]
    assert not hits, "\n".join(hits[:30])


def test_experiment_list_carries_no_internal_words():
    proc = ldpopt("experiment", "list")
    assert proc.returncode == 0, proc.stderr
    assert "ext_numeric" in proc.stdout and "wang_ndss_fig4_full_domain" in proc.stdout
    assert not INTERNAL.search(proc.stdout), INTERNAL.search(proc.stdout).group(0)


def _helps(parser) -> list[str]:
    """The --help text of ``parser`` and of every subcommand below it (argparse's own formatting)."""
    import argparse

    out = [parser.format_help()]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                out += _helps(sub)
    return out


def test_cli_help_carries_no_internal_words():
    from ldpopt.cli import build_parser

    helps = _helps(build_parser())
    assert len(helps) > 10 and any("usage: ldpopt solve" in h for h in helps)
    hits = [m.group(0) for h in helps for m in [INTERNAL.search(h)] if m]
    assert not hits, hits


@pytest.mark.parametrize("doc", ["REPRODUCTION.md", "README.md"])
def test_documents_state_no_stale_config_count(doc):
    """A number of configs in the prose goes stale with the next config (it said 22 and 27 beside 28)."""
    counts = re.findall(r"\b\d+ (?:experiment |shipped )?configs\b", (ROOT / doc).read_text())
    assert not counts, counts


def _beyond_sections():
    text = (ROOT / "docs" / "results" / "beyond-the-papers.md").read_text()
    return [s for s in text.split("\n## ")[1:]]


def test_every_beyond_the_papers_section_states_repetitions_and_standard_errors():
    """A claim outside the papers rests on stated repetitions and error bars (a 3-repetition mean once
    reversed the EMS-vs-EM direction at ε = 0.5)."""
    sections = _beyond_sections()
    assert len(sections) >= 4
    for s in sections:
        title = s.splitlines()[0]
        assert re.search(r"\b\d+ repetitions\b", s), title
        assert re.search(r"standard\s+errors?", s), title


def test_ems_vs_em_at_small_epsilon_is_stated_as_measured():
    numeric = next(s for s in _beyond_sections() if s.startswith("Numerical distributions"))
    assert "EMS slightly worse" not in numeric and "30 repetitions" in numeric
