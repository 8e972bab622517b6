"""Import a module of ``benchmarks/`` (not a package on the path) for the tests about benchmarks."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parent.parent / "benchmarks"


def bench_module(name: str):
    """``benchmarks/<name>.py`` imported with ``benchmarks/`` on ``sys.path`` only while importing
    (its own imports of ``_harness`` and siblings resolve; nothing stays on the path)."""
    sys.path.insert(0, str(BENCH))
    try:
        return importlib.import_module(name)
    finally:
        sys.path.remove(str(BENCH))
