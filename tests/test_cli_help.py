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
