"""Shared pytest configuration: hypothesis profiles and a per-entry-point case counter.

Profiles: every property sets its example count (or its generated sample size) through
:func:`examples`, so one switch scales them all:

* ``ci`` (default, ``make test``): bounded counts, so the whole suite fits its budget;
* ``slow`` (``make test-slow``, ``LDPOPT_SLOW=1``): every count × 5 (:data:`SLOW_FACTOR`), the
  nightly run: the same properties on more generated inputs;
* ``soak`` (``LDPOPT_SOAK=1 .venv/bin/pytest tests/test_reliability_*.py``): × 20, random seeds, no
  deadline (a long, still-bounded run; RELIABILITY.md documents the numbers).

Outside a checkout (the unpacked sdist, which ships ``tests/`` whole but not the repository's docs,
notebooks, benchmarks or experiment folders), a test module that reads one of ``CHECKOUT_ONLY`` (itself
or through a test module it imports) is not collected, and the summary names it with what it reads;
the rest of the suite runs (``python -m pytest`` in the unpacked sdist: the package beside the tests).

The suite runs on pytest-xdist workers (``-n auto`` in ``pyproject.toml``; ``-n 0`` runs it in one
process): the case counts are summed over the workers before they are printed and written.
"""

from __future__ import annotations

import collections
import contextlib
import json
import os
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

SOAK = os.environ.get("LDPOPT_SOAK", "") not in ("", "0")
SOAK_FACTOR = 20
SLOW = os.environ.get("LDPOPT_SLOW", "") not in ("", "0")
SLOW_FACTOR = 5

settings.register_profile("ci", max_examples=100, deadline=None, derandomize=True, print_blob=True,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.register_profile("soak", deadline=None, derandomize=False, print_blob=True,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.register_profile("slow", max_examples=100 * SLOW_FACTOR, deadline=None, derandomize=True, print_blob=True,
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.load_profile("soak" if SOAK else "slow" if SLOW else "ci")


ROOT = Path(__file__).resolve().parents[1]
#: what a checkout has and the sdist does not ship (MANIFEST.in): a test module naming one of these
#: (as a quoted path part, or by importing a benchmarks module) needs the repository
CHECKOUT_ONLY = ("docs", "notebooks", "benchmarks", "examples", "experiments", ".ci", "Makefile",
                 "REPRODUCTION.md", "BENCHMARKS.md", "RELIABILITY.md", "DESIGN.md")
_NEEDS = re.compile(r"""["'/](""" + "|".join(map(re.escape, CHECKOUT_ONLY)) + r""")["'/]|^\s*(?:from|import) (bench\w*)""", re.MULTILINE)


_LOCAL_IMPORT = re.compile(r"^\s*(?:from|import) (_?test_\w+|_\w+)\b", re.M)


def checkout_needs(source: str) -> list[str]:
    """The repository-only paths (``CHECKOUT_ONLY``) a test module's source names, and the benchmarks
    modules it imports."""
    return sorted({a or b for a, b in _NEEDS.findall(source)})


def module_needs(path: Path, _seen: frozenset = frozenset()) -> list[str]:
    """What a test module needs of the checkout, its own and that of the test modules and helpers of
    ``tests/`` it imports."""
    source = path.read_text(encoding="utf-8")
    found = set(checkout_needs(source))
    for name in _LOCAL_IMPORT.findall(source):
        local = path.parent / f"{name}.py"
        if local.is_file() and local not in _seen:
            found |= set(module_needs(local, _seen | {path}))
    return sorted(found)


#: the test modules left out of this run because they read what the sdist does not ship
LEFT_OUT: dict[str, list[str]] = {}


def pytest_ignore_collect(collection_path, config):
    """In the unpacked sdist (no ``docs/``, ``notebooks/``, ...), the modules that read them are not
    collected (several read them at import); the run's summary names them and why."""
    path = Path(collection_path)
    if path.suffix != ".py" or not path.name.startswith("test_") or (ROOT / "docs").exists():
        return None
    missing = [n for n in module_needs(path) if n.startswith("bench") or not (ROOT / n).exists()]
    if missing:
        LEFT_OUT[path.name] = missing
        return True
    return None


def examples(n: int) -> int:
    """Example budget for one property (a hypothesis ``max_examples`` or the number of seeded
    generated cases): n (ci profile), SLOW_FACTOR·n (slow) or SOAK_FACTOR·n (soak)."""
    return n * SOAK_FACTOR if SOAK else n * SLOW_FACTOR if SLOW else n


#: entry point -> number of generated cases actually executed in this session
CASES: collections.Counter = collections.Counter()


@contextlib.contextmanager
def solve_contexts():
    """Every ``SolveContext`` a ``Problem.solve()`` makes inside the block, in order: the list is
    yielded (a solve's own facts — its feasibility decision, its phase one — are read there, since the
    Problem keeps none)."""
    from ldpopt.problems.progress import SolveContext

    made: list = []
    make = SolveContext.__dict__["make"]

    def recording(cls, *args, **kwargs):
        made.append(make.__func__(cls, *args, **kwargs))
        return made[-1]

    SolveContext.make = classmethod(recording)
    try:
        yield made
    finally:
        SolveContext.make = make


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
    if LEFT_OUT:
        terminalreporter.section("left out: they need the repository checkout, not shipped in the sdist")
        for name, needs in sorted(LEFT_OUT.items()):
            terminalreporter.write_line(f"{name}: reads {', '.join(needs)}")
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


@pytest.fixture(params=["cold", "warm"])
def isolation_path(request, monkeypatch):
    """Both ways a solver call is isolated (:mod:`ldpopt.problems.worker`): "cold", a direct fork of
    this process (before the worker has started, in a process that holds no solver thread pool);
    "warm", the clean worker process's waiting child (once it runs, or the process is not clean). A
    fault injected for "warm" must travel by reference: a module-level function."""
    from ldpopt.problems import worker

    monkeypatch.setattr(worker, "forks_directly", lambda: request.param == "cold")
    return request.param
