"""Shared pytest configuration: hypothesis profiles and a per-entry-point case counter.

Profiles (``tests/test_reliability_*.py`` use them; RELIABILITY.md documents the numbers):

* ``ci`` (default): bounded example counts, so the reliability suite stays well under its 5-minute
  budget inside ``make test``;
* ``soak``: ``LDPOPT_SOAK=1 .venv/bin/pytest tests/test_reliability_*.py`` multiplies every
  reliability test's example count by 20 and drops the deadline (a long, still-bounded run).

Reliability tests set ``max_examples=examples(N)``: N under ``ci``, 20·N under ``soak``.

The suite runs on pytest-xdist workers (``-n auto`` in ``pyproject.toml``; ``-n 0`` runs it in one
process): the case counts are summed over the workers before they are printed and written.
"""

from __future__ import annotations

import collections
import json
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

SOAK = os.environ.get("LDPOPT_SOAK", "") not in ("", "0")
SOAK_FACTOR = 20

settings.register_profile("ci", deadline=None, derandomize=True, print_blob=True,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.register_profile("soak", deadline=None, derandomize=False, print_blob=True,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.load_profile("soak" if SOAK else "ci")


def examples(n: int) -> int:
    """Example budget for one hypothesis test: n (ci profile) or SOAK_FACTOR·n (soak profile)."""
    return n * SOAK_FACTOR if SOAK else n


#: entry point -> number of generated cases actually executed in this session
CASES: collections.Counter = collections.Counter()


@pytest.fixture(scope="session")
def case_counter():
    """Count generated cases per public entry point: ``case_counter("oracle.perturb")``.

    The totals are written to ``.pytest_cache/reliability_counts.json`` at the end of the session (and printed
    in the terminal summary) so RELIABILITY.md's numbers come from a real run.
    """
    def bump(entry_point: str, k: int = 1) -> None:
        CASES[entry_point] += k

    return bump


def pytest_sessionfinish(session):
    """Under pytest-xdist each worker counts its own cases: hand them to the controller."""
    if hasattr(session.config, "workeroutput"):
        session.config.workeroutput["ldpopt_cases"] = dict(CASES)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    """Controller side of :func:`pytest_sessionfinish`: add a finished worker's counts."""
    CASES.update(getattr(node, "workeroutput", {}).get("ldpopt_cases", {}))


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    if not CASES:
        return
    terminalreporter.section("reliability cases per entry point")
    for key in sorted(CASES):
        terminalreporter.write_line(f"{key:<40}{CASES[key]:>8}")
    out = Path(config.rootpath) / ".pytest_cache" / "reliability_counts.json"
    out.parent.mkdir(exist_ok=True)
    try:
        out.write_text(json.dumps({"soak": SOAK, "cases": dict(sorted(CASES.items()))}, indent=1))
    except OSError:
        pass
