"""Every ``ldpopt`` subcommand's ``--help`` works through the real entry point, and the command-line
page (docs/cli.md) names every subcommand."""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from _cli import ROOT, ldpopt
from ldpopt.cli import build_parser


def _commands(parser: argparse.ArgumentParser, prefix=()) -> list[tuple[str, ...]]:
    """Every (sub)command path of the parser, e.g. ("experiment", "coverage-table")."""
    out = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                out.append((*prefix, name))
                out += _commands(sub, (*prefix, name))
    return out


COMMANDS = _commands(build_parser())


# one child process runs the entry point ``ldpopt.cli:main`` for every command in turn (a process per
# command would spend ~2 s each importing the same modules)
_EVERY_HELP = """
import contextlib, io, json, sys
from ldpopt.cli import main
res = {}
for cmd in json.loads(sys.argv[1]):
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main([*cmd, "--help"])
        except SystemExit as exc:
            code = exc.code
        except Exception as exc:
            code, err = repr(exc), io.StringIO(repr(exc))
    res[" ".join(cmd)] = [code, out.getvalue()[:200], err.getvalue()[-500:]]
print(json.dumps(res))
"""


def test_every_subcommand_help_exits_0_with_its_usage():
    assert ("experiment", "coverage-table") in COMMANDS and ("postprocess",) in COMMANDS  # the walk sees both levels
    proc = ldpopt("experiment", "--help")  # the console command itself, for the group whose help had crashed
    assert proc.returncode == 0 and proc.stdout.startswith("usage: ldpopt experiment"), proc.stderr
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)}
    proc = subprocess.run([sys.executable, "-c", _EVERY_HELP, json.dumps([[], *COMMANDS])], env=env, text=True,
                          capture_output=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    res = json.loads(proc.stdout)
    assert len(res) == len(COMMANDS) + 1
    for cmd, (code, out, err) in res.items():
        assert code == 0 and "Traceback" not in err, (cmd, code, err)
        assert out.startswith(f"usage: ldpopt {cmd}".rstrip()), (cmd, out)


def test_command_line_page_names_every_subcommand():
    section = (Path(ROOT) / "docs" / "cli.md").read_text()
    missing = [c for c in COMMANDS if not re.search(rf"ldpopt {re.escape(' '.join(c))}\b", section)]
    assert not missing, missing


@pytest.mark.parametrize("budget", ["-1", "0", "-0.0"])
@pytest.mark.parametrize("command", [
    ["postprocess", "--counts", "c.csv", "--oracle", "oue", "--n", "20"],
    ["perturb", "--values", "v.csv", "--oracle", "oue", "--out", "shards"],
    ["multi", "--tuples", "t.csv"],
    ["heavy-hitters", "--dataset", "aol"],
])
def test_a_budget_that_is_not_positive_is_refused_at_epsilon(capsys, command, budget):
    """Every command taking ``--epsilon`` refuses ε ≤ 0 at that option (exit 2, naming it), before
    reading any file: the error is not left to the oracle, which would name another option."""
    from ldpopt.cli import main

    with pytest.raises(SystemExit) as exc:
        main([*command, "--epsilon", budget])
    err = capsys.readouterr().err
    assert exc.value.code == 2
    assert f"argument --epsilon: must be > 0, got '{budget}'" in err, err
