"""Sizes checked before work: what a run would hold in memory against what the machine has.

The same for the disk: what a command is about to write (:func:`refuse_over_disk`) against the free
space of the file system it writes to (``shutil.disk_usage`` of the nearest folder that exists).

A request that cannot fit (``--d 1e9`` values, ``choose --repeats 1e9``) is one line naming the
argument before anything is allocated, instead of numpy's ``MemoryError`` minutes in, or the
machine swapping. The estimate is the caller's (bytes the run holds at its peak, measured for each
command); the bound is the memory the kernel reports as available now (``MemAvailable`` of
``/proc/meminfo``, where there is one; else the physical memory), since a run that would push out
everything else is refused as well.
"""

from __future__ import annotations

import os

from ._args import InputError

__all__ = ["available_disk", "available_memory", "refuse_over_disk", "refuse_oversized", "size_text"]


def available_memory() -> int | None:
    """Bytes of memory available to a new allocation now, or None where the system does not say."""
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return None


def _size(nbytes: float) -> str:
    for unit in ("bytes", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if nbytes < 1024 or unit == "PiB":
            return f"{nbytes:.3g} {unit}"
        nbytes /= 1024
    return f"{nbytes:.3g} PiB"  # pragma: no cover


def refuse_oversized(nbytes: float, arg: str, what: str) -> None:
    """Raise an InputError naming ``arg`` when ``what`` needs ``nbytes`` (the caller's peak estimate)
    and more than that is not available."""
    have = available_memory()
    if have is not None and nbytes > have:
        raise InputError(f"{arg}: {what} needs about {_size(nbytes)} of memory, and {_size(have)} is available; "
                         f"ask for less")


def size_text(nbytes: float) -> str:
    """``nbytes`` as a reader writes it (``1.5 GiB``)."""
    return _size(nbytes)


def available_disk(path) -> int | None:
    """Free bytes on the file system that would hold ``path`` (its nearest existing folder), or None."""
    import shutil
    from pathlib import Path

    p = Path(os.path.abspath(os.fspath(path)))
    while not p.exists() and p != p.parent:
        p = p.parent
    try:
        return shutil.disk_usage(p if p.is_dir() else p.parent).free
    except OSError:
        return None


def refuse_over_disk(nbytes: float, arg: str, what: str, path) -> None:
    """Raise an InputError naming ``arg`` when ``what`` would write about ``nbytes`` under ``path``
    and the file system there has less free."""
    have = available_disk(path)
    if have is not None and nbytes > have:
        raise InputError(f"{arg}: {what} would write about {_size(nbytes)}, and {_size(have)} is free at {path}; "
                         f"ask for less")
