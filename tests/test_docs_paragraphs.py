"""Paragraph length in the pages a reader of the guide meets: no paragraph over ``LIMIT`` words.

A paragraph is a run of non-blank lines outside fenced blocks, tables, headings and HTML comments; a
list item is a paragraph of its own. The pages listed in ``CHECKED`` must hold to the limit (the test
fails naming the paragraph's first words); the others are reported (counts in a warning;
``python tests/test_docs_paragraphs.py`` lists every long paragraph with its line). Cost: < 0.1 s.
"""

from __future__ import annotations

import re
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
LIMIT = 120
#: pages held to the limit; the rest of PAGES are reported until they are split or rewritten
CHECKED = ("README.md", "docs/index.md", "docs/getting-started.md", "docs/gallery.md", "docs/data.md",
           "docs/devices.md", "docs/multi.md", "docs/python.md", "docs/sketches.md", "docs/poisoning.md",
           "docs/cli.md", "docs/uncertainty.md", "docs/problems.md", "docs/extending.md", "docs/frames.md",
           "REPRODUCTION.md")
PAGES = sorted({*CHECKED, "REPRODUCTION.md", "BENCHMARKS.md", "RELIABILITY.md",
                *(str(p.relative_to(ROOT)) for p in (ROOT / "docs").glob("*.md"))})
_ITEM = re.compile(r"^\s*(?:[*+-]|\d+\.)\s+")


def paragraphs(text: str) -> list[tuple[int, str]]:
    """(first line, text) of every paragraph of the Markdown ``text``, as the module docstring says."""
    out: list[tuple[int, str]] = []
    cur: list[str] = []
    start = 0
    fence = comment = False

    def close():
        if cur:
            out.append((start, " ".join(cur)))
            cur.clear()

    for i, line in enumerate(text.splitlines(), 1):
        s = line.strip()
        if fence or s.startswith("```") or s.startswith(":::"):
            if s.startswith("```") or s.startswith(":::"):
                fence = not fence if s.startswith("```") else fence
            close()
            continue
        if comment or s.startswith("<!--"):
            comment = "-->" not in s
            close()
            continue
        if not s or s.startswith("|") or s.startswith("#"):
            close()
            continue
        if _ITEM.match(line):
            close()
        if not cur:
            start = i
        cur.append(s)
    close()
    return out


def words(paragraph: str) -> int:
    return len(paragraph.split())


def long_paragraphs(page: str) -> list[tuple[int, int, str]]:
    """(line, words, first words) of each paragraph of ``page`` over LIMIT words."""
    text = (ROOT / page).read_text(encoding="utf-8")
    return [(line, words(p), " ".join(p.split()[:8])) for line, p in paragraphs(text) if words(p) > LIMIT]


def test_paragraphs_split_as_documented():
    text = "# T\n\none two\nthree\n\n* a b\n* c\n\n```python\nx = 1 2 3\n```\n| a | b |\n<!-- x y -->\nlast\n"
    assert paragraphs(text) == [(3, "one two three"), (6, "* a b"), (7, "* c"), (14, "last")]


def test_checked_pages_have_no_paragraph_over_the_limit():
    bad = {page: long_paragraphs(page) for page in CHECKED}
    bad = {page: rows for page, rows in bad.items() if rows}
    assert not bad, f"paragraphs over {LIMIT} words (line, words, start): {bad}"


def test_report_long_paragraphs_of_the_other_pages():
    counts = {page: len(long_paragraphs(page)) for page in PAGES if page not in CHECKED}
    warnings.warn("paragraphs over 120 words: " + ", ".join(f"{p} {n}" for p, n in counts.items() if n), stacklevel=1)
    assert set(counts) and all(n >= 0 for n in counts.values())


if __name__ == "__main__":
    for page in PAGES:
        for line, n, start in long_paragraphs(page):
            print(f"{page}:{line}: {n} words: {start} ...")
