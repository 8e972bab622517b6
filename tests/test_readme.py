"""The README and the pages of ``docs/`` are a newcomer's first reading: every code block in them
runs as written, the README's five-line example prints what the README says it prints, every page
they link to exists, and the README's time table states measured times.

Which fenced blocks are code (``blocks``), by their language tag:

* ``python``: run with this interpreter, each block alone: a fresh namespace in a process of its own
  (forked from one that imported ldpopt, numpy and pandas, so nothing another block defined or
  registered is there);
* ``bash`` / ``sh``: run by ``bash -e -o pipefail`` with this interpreter's ``bin/`` (the venv's
  ``ldpopt``) first on ``PATH``;
* any other tag (``text``, ``toml``, ``json``, a MyST directive such as ``{eval-rst}``, ...) is not
  code and is not run. An untagged fence
  is an error (``test_every_fence_says_what_it_is``): it must say which it is.

A block that is deliberately not run (a run of minutes to hours, a command that needs this checkout
or another project's repository) carries ``<!-- not-run: REASON -->`` on the line right before its
fence; the runs count those blocks and print the counts with the reasons.

How a page runs (``test_code_blocks_run``): every block alone, as a reader who copies one block
into an empty folder would run it: in a fresh temporary folder of its own that holds only
``examples/`` as ``ldpopt example all --out examples`` writes it (the files the docs name as shipped
with the package; the command runs once per process, each block gets a copy of its folder), python
blocks each in a process of its own, shell blocks as subprocesses, with ``PYTHONPATH`` this checkout
and ``MPLBACKEND=Agg``. Whatever else a block reads it must write itself. The test asserts that
the process succeeded and that ``git status --porcelain`` of the checkout is the same after the run
as before (a block writes only in its temporary folder).

Cost: every page runs in the suite (about 30 s of CPU together) except those in ``LONG_PAGES``
(``docs/cli.md``: its Dask cluster and experiment commands, another 30 s of CPU), which run only with
``LDPOPT_DOCS_ALL=1`` (``LDPOPT_DOCS_ALL=1 python -m pytest tests/test_readme.py``); the skip says so.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
#: README, the guide's pages and the measurement pages under docs/results/ (not a built site's copies)
PAGES = [ROOT / "README.md", *sorted(p for p in (ROOT / "docs").rglob("*.md") if "_build" not in p.parts)]
PYTHON = ("python",)
SHELL = ("bash", "sh")
#: Pages whose blocks take more than a few seconds of CPU: run with LDPOPT_DOCS_ALL=1 only.
LONG_PAGES = ("docs/cli.md",)
RUN_ALL = os.environ.get("LDPOPT_DOCS_ALL", "") not in ("", "0")
PAGE_TIMEOUT = 600
_FENCE = re.compile(r"^```\s*(\{[\w-]+\}|[\w+-]*)\s*$")
_NOT_RUN = re.compile(r"^<!--\s*not-run:\s*(.*?)\s*-->\s*$")


@dataclass(frozen=True)
class Block:
    """One fenced block of a Markdown page: its language tag, its text, the line of its opening
    fence (1-based) and, when it is marked not to run, the reason."""
    page: str
    line: int
    lang: str
    source: str
    not_run: str | None

    @property
    def code(self) -> bool:
        return self.lang in PYTHON + SHELL


def _name(path: Path) -> str:
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else path.name


def blocks(path: Path) -> list[Block]:
    """Every fenced block of the Markdown page ``path``, in page order."""
    lines = path.read_text(encoding="utf-8").splitlines()
    out, i = [], 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        end = next((j for j in range(i + 1, len(lines)) if lines[j].strip() == "```"), None)
        if end is None:
            raise ValueError(f"{path.name}:{i + 1}: a fence that is never closed")
        marker = _NOT_RUN.match(lines[i - 1]) if i else None
        out.append(Block(_name(path), i + 1, m.group(1), "\n".join(lines[i + 1:end]) + "\n",
                         marker.group(1) if marker else None))
        i = end + 1
    return out


# Runs a page's blocks in order, each alone as its own script: a forked child per block (the parent
# imported ldpopt, numpy and pandas once, and runs no block, so no block sees what another defined,
# registered or wrote), in a fresh folder holding a copy of examples/ only; argv[1]: a JSON list of
# blocks, argv[2]: examples/.
_DRIVER = r'''
import json, os, shutil, subprocess, sys, traceback
import numpy, pandas, ldpopt, ldpopt.methods, ldpopt.oracles
top = os.getcwd()
for i, b in enumerate(json.load(open(sys.argv[1], encoding="utf-8"))):
    print(f"=== {b['page']}:{b['line']} ({b['lang']})", flush=True)
    here = os.path.join(top, f"block-{i}")
    shutil.copytree(sys.argv[2], os.path.join(here, "examples"))
    if b["lang"] != "python":
        rc = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", b["source"]], cwd=here).returncode
        if rc:
            sys.exit(f"{b['page']}:{b['line']}: exit status {rc}")
        continue
    sys.stdout.flush(); sys.stderr.flush()
    child = os.fork()
    if child == 0:
        code = 0
        try:
            os.chdir(here)
            exec(compile("\n" * b["line"] + b["source"], b["page"], "exec"), {"__name__": "__main__"})
        except BaseException:
            traceback.print_exc()
            code = 1
        sys.stdout.flush(); sys.stderr.flush()
        os._exit(code)
    _, status = os.waitpid(child, 0)
    if os.waitstatus_to_exitcode(status):
        sys.exit(f"{b['page']}:{b['line']}: the block failed")
'''


def _git_status() -> str:
    return subprocess.run(["git", "status", "--porcelain", "--untracked-files=all"], cwd=ROOT, check=True,
                          capture_output=True, text=True).stdout


_EXAMPLES: list[tempfile.TemporaryDirectory] = []  # kept until the process ends (its finalizer removes it)


def _examples(env: dict) -> Path:
    """``examples/`` as ``ldpopt example all --out examples`` writes it: the real command, run once per
    process; each page gets a copy of the folder."""
    if not _EXAMPLES:
        _EXAMPLES.append(tempfile.TemporaryDirectory())
        (Path(_EXAMPLES[0].name) / "examples").mkdir()
        subprocess.run([sys.executable, "-m", "ldpopt.cli", "example", "all", "--out", "examples"],
                       cwd=_EXAMPLES[0].name, env=env, check=True, capture_output=True)
    return Path(_EXAMPLES[0].name) / "examples"


def run_page(path: Path) -> tuple[list[Block], list[Block], str]:
    """Run the code blocks of ``path`` as the module docstring says; returns (run, not run, output).
    Raises AssertionError with the output's tail when a block fails."""
    code = [b for b in blocks(path) if b.code]
    run = [b for b in code if b.not_run is None]
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
           "PYTHONPATH": str(ROOT), "MPLBACKEND": "Agg"}
    with tempfile.TemporaryDirectory() as spec, tempfile.TemporaryDirectory() as work:
        (Path(spec) / "blocks.json").write_text(json.dumps([b.__dict__ for b in run]), encoding="utf-8")
        proc = subprocess.run([sys.executable, "-c", _DRIVER, str(Path(spec) / "blocks.json"), str(_examples(env))],
                              check=False, cwd=work, env=env, capture_output=True, text=True, timeout=PAGE_TIMEOUT)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, f"{path.name}: a block failed (exit {proc.returncode}):\n{out[-4000:]}"
    return run, [b for b in code if b.not_run is not None], out


#: a Python warning as the interpreter prints it: "FILE:LINE: CategoryWarning: message"
_WARNING = re.compile(r":\d+: (\w*Warning): ")


def unexplained_warnings(page_text: str, output: str) -> list[str]:
    """The warning classes ``output`` shows that ``page_text`` never names: a reader who runs the
    page sees them with no word of why."""
    return sorted({w for w in _WARNING.findall(output) if w not in page_text})


def test_every_fence_says_what_it_is():
    found = [b for page in PAGES for b in blocks(page)]
    assert sum(b.code for b in found) >= 15, "expected the docs' code blocks"
    untagged = [f"{b.page}:{b.line}" for b in found if not b.lang]
    assert not untagged, f"fences without a language (python, bash, sh, or text for output): {untagged}"
    bad = [f"{b.page}:{b.line}" for b in found if b.not_run is not None and (not b.code or not b.not_run)]
    assert not bad, f"a not-run marker needs a reason and a python/bash block after it: {bad}"


def test_blocks_parse_fences_and_markers(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("x\n```python\na = 1\n```\n<!-- not-run: takes an hour -->\n```bash\nsleep 3600\n```\n"
                    "```text\noutput\n```\n```\nuntagged\n```\n```{eval-rst}\n.. math:: x\n```\n", encoding="utf-8")
    got = [(b.line, b.lang, b.source, b.not_run) for b in blocks(page)]
    assert got == [(2, "python", "a = 1\n", None), (6, "bash", "sleep 3600\n", "takes an hour"),
                   (9, "text", "output\n", None), (12, "", "untagged\n", None),
                   (15, "{eval-rst}", ".. math:: x\n", None)]
    page.write_text("```python\nnever closed\n", encoding="utf-8")
    with pytest.raises(ValueError, match="never closed"):
        blocks(page)


def _runnable(page: Path) -> bool:
    return any(b.code and b.not_run is None for b in blocks(page))


@pytest.mark.parametrize("page", [p for p in PAGES if _runnable(p)], ids=_name)
def test_code_blocks_run(page):
    rel = _name(page)
    if rel in LONG_PAGES and not RUN_ALL:
        pytest.skip(f"{rel}: its Dask cluster and experiment commands take about 30 s of CPU; LDPOPT_DOCS_ALL=1 runs them")
    before = _git_status()
    run, skipped, out = run_page(page)
    assert _git_status() == before, "running the docs' blocks changed the checkout"
    assert unexplained_warnings(page.read_text(encoding="utf-8"), out) == [], "a block prints a warning its page does not explain"
    reasons = "; ".join(f"line {b.line}: {b.not_run}" for b in skipped)
    print(f"{rel}: {len(run)} blocks run and passed, {len(skipped)} not run{' (' + reasons + ')' if skipped else ''}")


def test_a_failing_block_fails_the_page(tmp_path):
    """The runner reports a failing block with its page and line (so a passing page means something),
    and a block that leans on an earlier one (a name it defined, a method it registered, a file it
    wrote) fails: each runs alone."""
    page = tmp_path / "page.md"
    page.write_text("```python\nx = 42\nopen('f.txt', 'w').write('1')\n```\n```bash\ntest -f examples/solve_problem.toml\n```\n"
                    "```python\nassert x == 42, 'x'\n```\n", encoding="utf-8")
    with pytest.raises(AssertionError, match=r"(?s)page\.md:8 \(python\).*NameError: name 'x' is not defined"):
        run_page(page)
    page.write_text("```python\nopen('f.txt', 'w').write('1')\n```\n```bash\ntest -f f.txt\n```\n", encoding="utf-8")
    with pytest.raises(AssertionError, match=r"page\.md:4: exit status 1"):
        run_page(page)
    page.write_text("```python\nimport ldpopt\nldpopt.set_here = 1\n```\n"  # what a registration does: state in ldpopt
                    "```python\nimport ldpopt\nassert not hasattr(ldpopt, 'set_here')\n```\n", encoding="utf-8")
    run_page(page)


def test_a_warning_the_page_does_not_name_is_found():
    out = "x.md:3: FallbackWarning: norm-sub: 3 of 8 entries\n/p/a.py:9: SolverWarning: inaccurate\nldpopt x: warning: y\n"
    assert unexplained_warnings("prints a `FallbackWarning` because ...", out) == ["SolverWarning"]
    assert unexplained_warnings("FallbackWarning and SolverWarning", out) == []


def test_five_line_example_prints_what_the_readme_says():
    section = README.split("## Five lines", 1)[1]
    block = next(b for b in blocks(ROOT / "README.md") if b.lang == "python" and b.source in section)
    assert len(block.source.strip().splitlines()) <= 5, block.source
    said = re.search(r"prints `([^`]+)`", section).group(1)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(block.source, "README.md", "exec"), {"__name__": "readme_example"})
    assert out.getvalue().strip() == said


#: a path the README names (``docs/python.md``, ``BENCHMARKS.md``, ``notebooks/``): written as code, not as a
#: relative link, since the README is also the package's long description, shown where no relative
#: link resolves
_NAMED_PATH = re.compile(r"`((?:docs|notebooks|examples|benchmarks|experiments)/[^`\s]*|[A-Z]+\.(?:md|cff)|LICENSE|NOTICE)`")


def test_every_linked_page_exists():
    links = re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", README)
    relative = [link for link in links if not re.match(r"[a-z]+://", link)]
    assert relative == [], f"the README is the long description an index shows: no relative links {relative}"
    named = [path for path in _NAMED_PATH.findall(README) if "*" not in path]
    assert len(named) >= 10
    missing = [path for path in named if not (ROOT / path).exists()]
    assert not missing, missing
    for page in [*PAGES[1:], ROOT / "REPRODUCTION.md"]:  # the docs' links between themselves too
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
