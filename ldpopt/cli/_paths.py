"""The one rule for where a command may write: no output replaces something the command reads.

Every subcommand that writes calls :func:`refuse_collisions` with the paths it will write and the
paths it reads, after parsing and before any work, so that ``--out counts.csv`` on the counts file
itself (or ``./counts.csv``, a symbolic link to it, a hard link to it, ``a/../counts.csv``) is one
line naming both, exit status 2, and the input is never touched.

Notes: docs/notes/cli.md, "ldpopt.cli._paths"."""

from __future__ import annotations

import fnmatch
import os

from ._args import InputError

__all__ = ["refuse_collisions"]


class _Spot:
    """A path as the collision rule compares it: resolved, and its inode when it exists."""

    def __init__(self, arg: str, path, pattern: str | None = None, what: str | None = None):
        self.arg, self.given, self.pattern, self.what = arg, str(path), pattern, what
        self.real = os.path.realpath(os.fspath(path))
        self.inode: tuple[int, int] | None
        try:
            st = os.stat(self.real)
            self.inode = (st.st_dev, st.st_ino)
        except OSError:
            self.inode = None

    def same(self, other: _Spot) -> bool:
        return self.real == other.real or (self.inode is not None and self.inode == other.inode)

    def holds(self, other: _Spot) -> bool:
        """``other`` lies inside this folder (at any depth)."""
        return other.real.startswith(self.real.rstrip(os.sep) + os.sep)

    def __str__(self) -> str:
        return f"{self.what or self.arg} {self.given}"


def _via(a: _Spot, b: _Spot) -> str:
    """How two differently written paths are one file: nothing when both plainly say so."""
    if a.real != b.real:
        return " (hard links to one file)"
    shown = {os.path.normpath(os.path.abspath(a.given)), os.path.normpath(os.path.abspath(b.given))}
    return "" if shown == {a.real} else f" (both are {a.real})"


def refuse_collisions(outputs, inputs=(), folder_outputs=()) -> None:
    """Refuse, with one :class:`InputError` naming both paths, any output that collides (module
    docstring) with an input or with another output.

    ``outputs``: ``(arg, path)`` of each file the run writes (``None`` paths are skipped), or
    ``(arg, path, what)`` where the file is not the one ``arg`` names (``what``: "the metadata file of
    --out post.csv").
    ``inputs``: ``(arg, path)`` of each file the run reads, or ``(arg, folder, pattern)`` for a folder
    whose files matching the glob ``pattern`` are read (a shard folder: ``"*.parquet"``).
    ``folder_outputs``: ``(arg, folder)`` of each folder the run writes files into."""
    outs = [_Spot(item[0], item[1], None, *item[2:]) for item in outputs if item[1] is not None]
    folders = [_Spot(a, p) for a, p in folder_outputs if p is not None]
    ins = [_Spot(*item) for item in inputs if item[1] is not None]
    for i, out in enumerate(outs):
        for other in outs[:i]:
            if out.same(other):
                raise InputError(f"{out} and {other} are the same file{_via(out, other)}: give each output "
                                 f"its own name")
        for src in ins:
            if src.pattern is None and out.same(src):
                raise InputError(f"{out} is the input {src}{_via(out, src)}: writing it would replace what "
                                 f"this command reads; give another {out.arg}")
        for src in ins:
            if src.pattern is not None and os.path.dirname(out.real) == src.real.rstrip(os.sep) \
                    and fnmatch.fnmatch(os.path.basename(out.real), src.pattern):
                raise InputError(f"{out} would land among the {src.pattern} files of the input folder {src}, "
                                 f"and be read as one of them; give another {out.arg}")
    for folder in folders:
        for src in ins:
            if folder.same(src):
                raise InputError(f"{folder} is the input {src}{_via(folder, src)}: give a folder for the output")
            if folder.holds(src):
                raise InputError(f"{folder} holds the input {src}: writing into that folder could replace or "
                                 f"mix with what this command reads; give another {folder.arg}")

