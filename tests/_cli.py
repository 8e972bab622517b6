"""Run the real ``ldpopt`` command in a subprocess, as a user would (for tests/test_cli_*.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

# the checkout under test first, then whatever the caller had (LDPOPT_CLI_ROOT: run another tree)
ROOT = Path(os.environ.get("LDPOPT_CLI_ROOT", Path(__file__).resolve().parents[1]))


def ldpopt(*args, cwd=None, umask=None, env=None, timeout=300) -> subprocess.CompletedProcess:
    """``python -m ldpopt.cli ARGS`` with this checkout on PYTHONPATH; ``umask`` set in the child."""
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
    full_env = {**os.environ, "PYTHONPATH": path, **(env or {})}
    preexec = (lambda: os.umask(umask)) if umask is not None else None
    return subprocess.run([sys.executable, "-m", "ldpopt.cli", *map(str, args)], check=False, cwd=cwd,
                          env=full_env, capture_output=True, text=True, timeout=timeout, preexec_fn=preexec)


def main_in_process(*args) -> subprocess.CompletedProcess:
    """``ldpopt.cli.main(ARGS)`` in this process, its stdout, stderr and exit status as
    :func:`ldpopt` returns them (a ``CompletedProcess``): for a test that sweeps many argument lists
    through the same entry point, where one real subprocess already checks the command's entry point
    and exit status, and a fresh interpreter per list would only repeat the imports."""
    import contextlib
    import io
    import warnings

    from ldpopt import cli

    argv = list(map(str, args))
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), warnings.catch_warnings():
        try:
            code = cli.main(argv)
        except SystemExit as exc:  # argparse's usage errors
            code = exc.code if isinstance(exc.code, int) else 2
    return subprocess.CompletedProcess(["ldpopt", *argv], code, out.getvalue(), err.getvalue())


def one_line_error(proc) -> str:
    """Assert ``proc`` failed with exit status 2 and one line on stderr, no traceback; return it."""
    assert proc.returncode == 2, (proc.returncode, proc.stderr)
    assert "Traceback" not in proc.stderr, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and "error" in lines[0], proc.stderr
    return lines[0]
