"""Dense linear algebra on small matrices with one BLAS thread.

Notes: docs/notes/devices.md, "ldpopt._blas"."""

from __future__ import annotations

import contextlib
import threading
from functools import lru_cache

__all__ = ["SMALL", "one_thread"]

#: up to this many rows a dense system runs on one BLAS thread (a choice: a single thread solves a
#: 2,000 × 2,000 system in ~0.1 s, where threads pay back, if at all, only on an idle machine)
SMALL = 2000

#: the one-thread limit in force (threadpoolctl's limiter, the libraries' own thread counts before
#: it) and how many blocks, in any thread, are inside it: the first sets it, the last lifts it
_LOCK = threading.Lock()
_held: list = []
_depth = 0


@lru_cache(maxsize=1)
def _controller():
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:  # an environment without it: BLAS keeps its own threading
        return None
    return ThreadpoolController()


def _released() -> None:
    """No thread left holding threadpoolctl's OpenBLAS control (threadpoolctl >= 3.6 lets only the
    thread that last set OpenBLAS's count change it until that thread's ``with`` block ends; the
    limit here is set by one thread and may be lifted by another, so neither keeps it)."""
    from threadpoolctl import OpenBLASController

    clear = getattr(OpenBLASController, "clear_controlling_thread", None)
    if clear is not None:
        clear(force=True)


@contextlib.contextmanager
def _limited(ctl):
    """One BLAS thread for the block, counted across threads: the libraries' thread counts are read
    and set to 1 by the first block to enter and restored by the last to leave, so two blocks that
    overlap in two threads never leave the process at one thread (a limit per block would: the
    second reads the first's 1 as the count to restore)."""
    global _depth
    with _LOCK:
        if _depth == 0:
            _released()
            _held.append(ctl.limit(limits=1, user_api="blas"))
            _released()
        _depth += 1
    try:
        yield
    finally:
        with _LOCK:
            _depth -= 1
            if _depth == 0:
                _released()
                _held.pop().restore_original_limits()
                _released()


def one_thread(n: int):
    """A context manager that runs its block with one BLAS thread when ``n`` (the system's size) is at
    most :data:`SMALL`, and leaves the threading alone otherwise. Blocks may nest and overlap in
    several threads: the limit holds while any of them runs and the libraries' own thread counts come
    back when the last one ends. The limit is the process's (BLAS keeps one thread count): another
    thread's BLAS call runs on one thread meanwhile."""
    ctl = _controller() if n <= SMALL else None
    return _limited(ctl) if ctl is not None else contextlib.nullcontext()
