"""Atomic writes: temporary files that end with the mode a plain ``open(path, "w")`` gives, and
folders whose files appear all at once or not at all (:func:`fill_folder`).

``tempfile.mkstemp`` creates 0600 files, and a rename keeps that mode, so every result written
"atomically" came out private whatever the user's umask. :func:`temp_beside` creates the temporary
with ``os.open(..., 0o666)`` instead, which lets the kernel apply the umask exactly as for a plain
write (no ``os.umask`` round trip, which would race with threads), and copies the mode of a file
being replaced, as an overwrite with ``open(path, "w")`` keeps it.

A temporary is named ``.NAME.<host>-<pid>-<hex>.tmp``: the host (a short digest of its name) and the
id of the process writing it. Ctrl-C and SIGTERM remove it; a process killed outright (SIGKILL, the
out-of-memory killer) cannot, so the next write of the same NAME removes the temporaries of NAME whose
process is gone (:func:`sweep_stale`, a warning naming each): only this host's, since a process id
says nothing of another machine sharing the folder.
"""

from __future__ import annotations

import glob
import os
import secrets
from pathlib import Path

__all__ = ["fill_folder", "sweep_stale", "temp_beside", "write_text"]


def _host() -> str:
    import hashlib
    import socket

    return hashlib.sha256(socket.gethostname().encode()).hexdigest()[:6]


_HOST = _host()


def _temp_name(name: str) -> str:
    return f".{name}.{_HOST}-{os.getpid()}-{secrets.token_hex(6)}.tmp"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, ValueError):
        return True  # another user's process (or a number no process has: kept, to be safe)
    return True


def sweep_stale(path) -> list[Path]:
    """Remove the temporaries of ``path`` (files or folders ``.NAME.<host>-<pid>-<hex>.tmp`` beside it)
    left by a process of this host that no longer runs, with a warning naming each; returns them.
    A temporary of a live process, of another host, or named otherwise is left alone."""
    import shutil
    import warnings

    path = Path(path)
    removed = []
    for tmp in path.parent.glob(f".{glob.escape(path.name)}.{_HOST}-*-*.tmp"):
        pid = tmp.name[len(path.name) + 2 + len(_HOST) + 1:].split("-", 1)[0]
        if not pid.isdigit() or _alive(int(pid)):
            continue
        if tmp.is_dir() and not tmp.is_symlink():
            shutil.rmtree(tmp, ignore_errors=True)
        else:
            tmp.unlink(missing_ok=True)
        removed.append(tmp)
        warnings.warn(f"removed {tmp}, left by a run of {path.name} (process {pid}) that was killed before it "
                      f"finished", stacklevel=2)
    return removed


def temp_beside(path) -> Path:
    """Create an empty, uniquely named ``.NAME.<host>-<pid>-<hex>.tmp`` in ``path``'s folder (after
    :func:`sweep_stale`) and return its path; rename it over ``path`` when written (the caller removes
    it on failure)."""
    path = Path(path)
    sweep_stale(path)
    while True:
        tmp = path.parent / _temp_name(path.name)
        try:
            os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
            break
        except FileExistsError:  # pragma: no cover - 48 random bits
            continue
    try:
        os.chmod(tmp, path.stat().st_mode & 0o7777)
    except FileNotFoundError:
        pass
    return tmp


def write_text(path, text: str) -> None:
    """``text`` (UTF-8) to ``path`` whole or not at all: written to :func:`temp_beside`, renamed over
    ``path``; the temporary removed on failure."""
    path = Path(path)
    tmp = temp_beside(path)
    try:
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def _exchange(a: Path, b: Path) -> bool:
    """Swap the folders ``a`` and ``b`` in one step (Linux ``renameat2(RENAME_EXCHANGE)``); False where
    the system or the file system does not offer it."""
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    at_fdcwd, rename_exchange = -100, 2
    return renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange) == 0


def fill_folder(folder, fill, how: str) -> list[Path]:
    """Write a folder's files all at once or not at all: ``fill(tmp)`` writes them into a new
    temporary sibling ``.NAME.<hex>.tmp`` of ``folder``, and only then are they put in place; if
    ``fill`` fails or is interrupted (Ctrl-C), the temporary goes and ``folder`` is as it was.
    Returns the files put in place.

    ``how``: ``"new"``: ``folder`` is absent or empty and becomes the temporary (one rename);
    ``"overwrite"``: ``folder`` and the temporary swap in one step where Linux offers it
    (``renameat2``), else by two renames (the old folder kept beside until the second is done), and
    the old content is then removed; ``"append"``: each new file is linked into ``folder`` under its
    name, refusing to replace a file there (the ones already added are removed again on failure).
    ``folder``'s parent must exist; a link to a folder is written through."""
    import shutil

    folder = Path(os.path.realpath(folder))
    sweep_stale(folder)
    while True:
        tmp = folder.parent / _temp_name(folder.name)
        try:
            tmp.mkdir()
            break
        except FileExistsError:  # pragma: no cover - 48 random bits
            continue
    added: list[Path] = []
    try:
        fill(tmp)
        names = sorted(p.name for p in tmp.iterdir())
        if how == "append":
            for name in names:
                os.link(tmp / name, folder / name)  # FileExistsError rather than replace a file
                added.append(folder / name)
        elif how == "overwrite" and folder.exists():
            if _exchange(tmp, folder):
                pass  # tmp now holds the old content, removed below
            else:
                old = folder.parent / f".{folder.name}.{secrets.token_hex(6)}.old"
                os.rename(folder, old)
                try:
                    os.rename(tmp, folder)
                except BaseException:
                    os.rename(old, folder)
                    raise
                shutil.rmtree(old, ignore_errors=True)
        else:
            os.rename(tmp, folder)  # over an empty folder, or none: one step
        return [folder / name for name in names]
    except BaseException:
        for path in added:
            path.unlink(missing_ok=True)
        raise
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
