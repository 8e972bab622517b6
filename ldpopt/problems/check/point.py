"""A problem's cvxpy variable set to a point for the duration of a block: how ldpopt's check and its
conflict proof evaluate the cvxpy expressions of constraints that have no numpy form (a user's
callables), at the returned point itself and nowhere else."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np

__all__ = ["at_point"]


@contextmanager
def at_point(problem, f: np.ndarray) -> Iterator[None]:
    """cvxpy's variable of ``problem`` set to the point f (frequency units) inside the block, and back
    to what it was after it (also when the block raises).

    Parameters
    ----------
    problem : Problem
        Its ``x`` (the cvxpy variable, in units of ``problem.scale``) is set.
    f : ndarray (d,)
        The point, in frequency units.

    Examples
    --------
    >>> import numpy as np
    >>> import ldpopt
    >>> from ldpopt.problems.check.point import at_point
    >>> est = ldpopt.oracles.get("grr", 1.0, 3).estimate(np.array([500, 300, 200]), 1000)
    >>> prob = ldpopt.Problem(est)
    >>> with at_point(prob, np.array([0.5, 0.3, 0.2])):
    ...     float(np.sum(prob.x.value) * prob.scale)
    1.0
    >>> prob.x.value is None
    True
    """
    from ..objectives.recognise import set_value

    x = problem.x
    saved = x.value
    set_value(x, np.asarray(f, dtype=np.float64) / problem.scale)
    try:
        yield
    finally:
        set_value(x, saved)
