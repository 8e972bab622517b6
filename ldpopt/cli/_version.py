"""The line ``ldpopt --version`` prints: the package's version and, where ldpopt runs from a git
checkout (its source folder holds ``.git``), the commit and whether tracked files differ from it."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from .. import __version__


def source_commit(root: str | os.PathLike | None = None) -> tuple[str, bool] | None:
    """``(commit, modified)`` of the git checkout ldpopt runs from, or ``None``.

    Parameters
    ----------
    root : path, optional
        The folder holding the ``ldpopt`` package; default: this file's. Only a folder that holds
        both ``.git`` and ``pyproject.toml`` is asked (an installed wheel in ``site-packages`` is
        not, even inside another repository), with the ``git`` binary, a few seconds at most.

    Returns
    -------
    tuple or None
        The 40-hex commit of ``HEAD`` and whether a tracked file differs from it; ``None`` where
        there is no checkout, no git, or git fails: the version alone then identifies the code.
    """
    root = Path(__file__).resolve().parents[2] if root is None else Path(root)
    git = shutil.which("git")
    if git is None or not (root / ".git").exists() or not (root / "pyproject.toml").is_file():
        return None
    env = {**os.environ, "GIT_OPTIONAL_LOCKS": "0"}
    try:
        head = subprocess.run([git, "-C", str(root), "rev-parse", "--verify", "HEAD"], capture_output=True,
                              text=True, timeout=5, check=False, env=env)
        status = subprocess.run([git, "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
                                capture_output=True, text=True, timeout=5, check=False, env=env)
    except (OSError, subprocess.SubprocessError):
        return None
    commit = head.stdout.strip()
    if head.returncode != 0 or status.returncode != 0 or len(commit) != 40:
        return None
    return commit, bool(status.stdout.strip())


def version_line(root: str | os.PathLike | None = None) -> str:
    """``ldpopt X.Y.Z`` and, from a git checkout, ``(commit C)`` or ``(commit C, modified)``: what
    identifies a development version in a citation (docs/citing.md)."""
    found = source_commit(root)
    if found is None:
        return f"ldpopt {__version__}"
    commit, modified = found
    return f"ldpopt {__version__} (commit {commit}{', modified' if modified else ''})"
