"""Temporary files for atomic writes that end with the mode a plain ``open(path, "w")`` gives.

``tempfile.mkstemp`` creates 0600 files, and a rename keeps that mode, so every result written
"atomically" came out private whatever the user's umask. :func:`temp_beside` creates the temporary
with ``os.open(..., 0o666)`` instead, which lets the kernel apply the umask exactly as for a plain
write (no ``os.umask`` round trip, which would race with threads), and copies the mode of a file
being replaced, as an overwrite with ``open(path, "w")`` keeps it.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

__all__ = ["temp_beside"]


def temp_beside(path) -> Path:
    """Create an empty, uniquely named ``.NAME.<hex>.tmp`` in ``path``'s folder and return its path;
    rename it over ``path`` when written (the caller removes it on failure)."""
    path = Path(path)
    while True:
        tmp = path.parent / f".{path.name}.{secrets.token_hex(6)}.tmp"
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
