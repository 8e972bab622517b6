"""Keep freed large blocks in the process (glibc malloc) instead of unmapping them at every ``free``.

numpy allocates each array above glibc's mmap threshold (≤ 32 MB) with its own ``mmap`` and unmaps it
when it is freed, so every temporary of a d = 10⁷ float64 vector (80 MB) is new memory the kernel
must fault in and zero. On this project's machines (a Firecracker VM) that costs ~40 ms of system
CPU per 80 MB temporary: half of ``ldpopt verify --d 10000000``'s CPU time was page faults (measured:
10 s of 20 s). With mmap off (``M_MMAP_MAX = 0``) large blocks come from the heap, and with a high trim
threshold the freed ones stay there for the next temporary of the same size. The price: the process
keeps its peak heap until it exits — right for a one-shot CLI command, wrong for a library import,
so only the ``verify`` subcommand calls :func:`keep_freed_memory`, and only at large d.
"""

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
