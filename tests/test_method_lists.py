"""The method lists a reader sees (README.md's capability table, docs/python.md's overview) name every
registered method and nothing else: they are checked against the registry, not kept by hand beside it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ldpopt import methods

ROOT = Path(__file__).resolve().parents[1]


def _listed(page: str, pattern: str) -> set[str]:
    text = (ROOT / page).read_text(encoding="utf-8")
    found = re.search(pattern, text, flags=re.S)
    assert found, f"{page}: no method list matching {pattern!r}"
    return {name.strip() for name in " ".join(found.group(1).split()).split(",")}


@pytest.mark.parametrize("page, pattern", [
    ("README.md", r"\| Post-processing methods \| ([^|]+) \|"),
    ("docs/python.md", r"\* Methods \(`ldpopt\.methods\.available\(\)`\): ([^;]+);"),
])
def test_each_page_lists_exactly_the_registered_methods(page, pattern):
    listed, registered = _listed(page, pattern), set(methods.names())
    assert listed == registered, (f"{page}: not registered {sorted(listed - registered)}, "
                                  f"not listed {sorted(registered - listed)}")
