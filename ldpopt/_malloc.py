"""Keep freed large blocks in the process (glibc malloc) instead of unmapping them at every ``free``.

Notes: docs/notes/devices.md, "ldpopt._malloc"."""

from __future__ import annotations

import ctypes
import sys

__all__ = ["keep_freed_memory"]

_M_TRIM_THRESHOLD = -1  # glibc malloc.h
_M_MMAP_MAX = -4


def keep_freed_memory() -> bool:
    """Set glibc's ``M_MMAP_MAX = 0`` and ``M_TRIM_THRESHOLD = 2³¹ − 1`` for this process; True when
    both took effect, False elsewhere (not Linux/glibc: nothing is changed)."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):  # musl and others have no mallopt
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    return bool(mallopt(_M_MMAP_MAX, 0) == 1 and mallopt(_M_TRIM_THRESHOLD, 2**31 - 1) == 1)
