"""The README is a newcomer's first page: its five-line example runs and prints what the README says
it prints, every page it links to exists, and its time table states the measured test time."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_five_line_example_prints_what_the_readme_says():
    section = README.split("## Five lines", 1)[1]
    code = section.split("```python\n", 1)[1].split("```", 1)[0]
    assert len(code.strip().splitlines()) <= 5, code
    said = re.search(r"prints `([^`]+)`", section).group(1)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, "README.md", "exec"), {"__name__": "readme_example"})
    assert out.getvalue().strip() == said


def test_every_linked_page_exists():
    links = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", README)
    assert len(links) >= 10
    missing = [link for link in links if not (ROOT / link).exists()]
    assert not missing, missing
    for page in (ROOT / "docs").glob("*.md"):  # the docs' links between themselves too
        for link in re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", page.read_text(encoding="utf-8")):
            assert (page.parent / link).exists(), (page.name, link)


def test_time_table_states_measured_times():
    table = README.split("## Two commands", 1)[1].split("\n## ", 1)[0]
    for command in ("make test", "make sweep"):
        row = next(line for line in table.splitlines() if line.startswith(f"| `{command}`"))
        assert re.search(r"\d+(\.\d+)? ?(min|h)\b", row.rsplit("|", 2)[1]), row


def test_command_list_names_every_subcommand_and_the_notebook_list_every_notebook():
    from ldpopt.cli._commands import COMMANDS

    row = next(line for line in README.splitlines() if line.startswith("| Command line |"))
    assert [name for name in COMMANDS if f"`{name}`" not in row] == []
    notes = README.split("## Notebooks", 1)[1].split("\n## ", 1)[0]
    books = sorted(p.name[:2] for p in (ROOT / "notebooks").glob("*.ipynb"))
    assert len(books) >= 7 and [b for b in books if f"({b})" not in notes] == []
