"""A generated fuzz over every numeric option of every ``ldpopt`` subcommand (tests/_numeric_fuzz.py):
each option given 0, -1, 1e-300, 1e300, inf, nan and 2^63 - 1 on a small valid command line, run in
process. No case may end in a traceback, run past the harness's timeout, or exit 0 on a value no
option takes (nan, ±inf, negative) or with nan/inf in its output; a refusal is one line. The cases
of seconds each (``_numeric_fuzz.SLOW``) run with ``python tests/_numeric_fuzz.py``. Cost: ~6 s.
"""

from __future__ import annotations

import _numeric_fuzz as fuzz

from ldpopt.cli._commands import COMMANDS


def test_no_numeric_extreme_ends_in_a_traceback_a_hang_or_a_silent_acceptance(tmp_path, monkeypatch):
    from ldpopt import cli

    monkeypatch.setattr(cli, "build_parser", cli.build_parser)  # the harness caches it; undone after
    counts, bad = fuzz.table(tmp_path, skip=fuzz.SLOW)
    assert bad == [], "\n".join(" ".join(row) for row in bad)
    # every subcommand with a numeric option is in the fuzz, and each refused something
    assert set(counts) == set(COMMANDS) - {"example"}, sorted(set(COMMANDS) - set(counts))
    assert all(c["error"] > 0 for c in counts.values()), counts


def test_the_harness_tells_a_traceback_a_hang_and_a_silent_acceptance_from_a_refusal(monkeypatch):
    import time

    from ldpopt.cli import plan

    argv = ["plan", "--d", "5", "--n", "10", "--epsilon", "{v}"]
    assert fuzz.run_case(argv, "nan")[0] == "error"
    monkeypatch.setattr(plan, "_run", lambda args: 1 / 0)
    assert fuzz.run_case(argv, "1") == ("traceback", "ZeroDivisionError: division by zero")
    monkeypatch.setattr(plan, "_run", lambda args: print("f = nan") or 0)
    assert fuzz.run_case(argv, "1") == ("silent", "output holds nan")
    monkeypatch.setattr(fuzz, "TIMEOUT", 0.2)
    monkeypatch.setattr(plan, "_run", lambda args: time.sleep(5))
    assert fuzz.run_case(argv, "1")[0] == "hang"
