"""Dense linear algebra on small matrices with one BLAS thread.

The structured solver's Newton systems on the multipliers (one row per constraint row: tens to a few
thousand) and the certificate's small least-squares problems are dense and small. OpenBLAS splits
even a 200 × 200 solve over its threads; on a loaded machine the waiting threads spin, and on this
project's shared 2-core machine that made one 200 × 200 ``np.linalg.solve`` cost 94 ms of CPU
(378 ms wall) against 0.3 ms on one thread — the consistent 3-way marginals (367 cells, 179 rows)
spent most of ``Problem.solve()`` there. :func:`one_thread` limits the BLAS libraries to one thread
for the ``with`` block (``threadpoolctl``; its controller, ~30 ms to find the libraries, is made once
per process on first use). Large systems are not passed through it.
"""

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
