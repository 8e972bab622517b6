"""BLAS threads for ldpopt's own numerical work: one, except in dense systems large enough to use more.

Notes: docs/notes/devices.md, "ldpopt._blas"."""

from __future__ import annotations

import contextlib
import threading
from functools import lru_cache

__all__ = ["SMALL", "one_thread"]

#: up to this many rows a dense system runs on one BLAS thread (a choice: a single thread solves a
#: 2,000 × 2,000 system in ~0.1 s, where threads pay back, if at all, only on an idle machine)
SMALL = 2000

#: the state of the process's BLAS threads, counted across threads: ``_depth`` blocks want one thread,
#: ``_lifted`` blocks (large dense systems) want the libraries' own counts, and the one-thread limit
#: (threadpoolctl's limiter, holding the libraries' own counts to restore) is in force while some
#: block wants it and none is lifted (:func:`_sync`)
_LOCK = threading.Lock()
_limiter: list = []
_depth = 0
_lifted = 0


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


def _sync(ctl) -> None:
    """The one-thread limit set or lifted to match the blocks inside (under ``_LOCK``)."""
    want = _depth > 0 and _lifted == 0
    if want and not _limiter:
        _released()
        _limiter.append(ctl.limit(limits=1, user_api="blas"))
        _released()
    elif not want and _limiter:
        _released()
        _limiter.pop().restore_original_limits()
        _released()


@contextlib.contextmanager
def _counted(ctl, lift: bool):
    """A block counted across threads: a one-thread block (``lift`` False) or a large dense system's
    (``lift`` True). The first one-thread block to enter reads the libraries' thread counts and sets
    them to 1; a lifted block restores them while it runs; the last block to leave leaves them as
    they were. A limit per block would not do: two blocks that overlap in two threads would leave the
    process at one thread for good (the second reads the first's 1 as the count to restore)."""
    global _depth, _lifted
    with _LOCK:
        if lift:
            _lifted += 1
        else:
            _depth += 1
        _sync(ctl)
    try:
        yield
    finally:
        with _LOCK:
            if lift:
                _lifted -= 1
            else:
                _depth -= 1
            _sync(ctl)


def one_thread(n: int | None = None):
    """A context manager for BLAS threads in its block.

    ``n`` None (ldpopt's own work, whatever its size: vector products, sparse algebra, small dense
    systems): one BLAS thread. A threaded BLAS call gains nothing on vectors (memory-bound), and
    OpenBLAS's threads then wait by spinning: one dot product of two 10⁵-vectors cost 104 ms of CPU
    for 0.3 ms of wall clock on this project's 2-core machine (docs/notes/devices.md).

    ``n`` the rows of a dense system: one thread up to :data:`SMALL`; past it the libraries' own
    thread counts, even inside an enclosing one-thread block (where threads can pay back).

    Blocks may nest and overlap in several threads: the state holds while any of them runs and the
    libraries' own counts come back when the last one ends. The limit is the process's (BLAS keeps
    one thread count): another thread's BLAS call runs on one thread meanwhile. Without
    threadpoolctl, nothing changes.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt._blas import one_thread
    >>> with one_thread():
    ...     float(np.ones(3) @ np.ones(3))
    3.0
    """
    ctl = _controller()
    if ctl is None:
        return contextlib.nullcontext()
    return _counted(ctl, lift=n is not None and n > SMALL)
