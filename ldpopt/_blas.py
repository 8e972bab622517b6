"""Dense linear algebra on small matrices with one BLAS thread.

Notes: docs/notes/devices.md, "ldpopt._blas"."""

from __future__ import annotations

import contextlib
from functools import lru_cache

__all__ = ["SMALL", "one_thread"]

#: up to this many rows a dense system runs on one BLAS thread (a choice: a single thread solves a
#: 2,000 × 2,000 system in ~0.1 s, where threads pay back, if at all, only on an idle machine)
SMALL = 2000


@lru_cache(maxsize=1)
def _controller():
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:  # an environment without it: BLAS keeps its own threading
        return None
    return ThreadpoolController()


def one_thread(n: int):
    """A context manager that runs its block with one BLAS thread when ``n`` (the system's size) is at
    most :data:`SMALL`, and leaves the threading alone otherwise."""
    ctl = _controller() if n <= SMALL else None
    return ctl.limit(limits=1, user_api="blas") if ctl is not None else contextlib.nullcontext()
