"""A problem's cvxpy variable set to a point for the duration of a block: how ldpopt's check and its
conflict proof evaluate the cvxpy expressions of constraints that have no numpy form (a user's
callables), at the returned point itself and nowhere else."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np

__all__ = ["MET_WITHIN", "SYSTEM_ROWS", "at_point", "user_rows_met"]

#: the most a user's left-out constraint g(f) ≤ 0 may read above 0 at the point and still count as
#: met (:func:`user_rows_met`): the phase one's own floor (``solvers.phase_one.PHASE_ONE_FLOOR``; it
#: claims a conflict only with a verified smallest violation above it, which such a point refutes up
#: to rounding). An active constraint reads 1e-13–1e-12 above 0 at an interior point's answer
MET_WITHIN = 1e-12
#: the most rows of one constraint the exact linear system holds (``constraints.feasibility.MAX_LP``,
#: not imported here: this module sits below the pre-check's chain of imports)
SYSTEM_ROWS = 10**7


@contextmanager
def at_point(problem, f: np.ndarray) -> Iterator[None]:
    """cvxpy's variable of ``problem`` set to the point f (frequency units) inside the block, and back
    to what it was after it (also when the block raises); the problem's ``cvxpy_lock`` is held
    meanwhile (another thread's solve of it sets the same variable).

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
    with problem.cvxpy_lock:  # x's value is shared by every thread solving this problem
        saved = x.value
        set_value(x, np.asarray(f, dtype=np.float64) / problem.scale)
        try:
            yield
        finally:
            set_value(x, saved)


def user_rows_met(problem, f: np.ndarray, complete: bool) -> bool:
    """Whether the point f (frequency units) meets, in floating point, every constraint of a user's
    callable that the exact linear system (:func:`~ldpopt.problems.constraints.feasibility.owned_system`,
    ``complete`` its flag) leaves out: each a ``<=`` whose g(f) = lhs − rhs is ≤ :data:`MET_WITHIN` at f,
    entry by entry. True at once where the system holds every constraint. With the linear system proved
    non-empty at the same f (:func:`~ldpopt.problems.constraints.feasibility.point_feasible`), this
    is the evidence that lets the phase one (:mod:`~ldpopt.problems.solvers.phase_one`, a second
    conic solve of the whole problem) be skipped: the phase one claims a conflict only with a
    verified margin above 1e-12, which a point with g(f) ≤ that floor contradicts up to the rounding of g's
    evaluation. An equality or a cone constraint left out (a ``>>``, an exponential cone written as
    a constraint object) is not decided here: False, and the phase one runs as before.

    Parameters
    ----------
    problem : Problem
        The problem whose user constraints are read (its built cvxpy constraints).
    f : ndarray (d,)
        The point, in frequency units.
    complete : bool
        The linear system's own flag: True when it holds every constraint.

    Returns
    -------
    bool

    Examples
    --------
    >>> import cvxpy as cp
    >>> import numpy as np
    >>> import ldpopt
    >>> from ldpopt.problems import Problem, Simplex
    >>> from ldpopt.problems.check.point import user_rows_met
    >>> est = ldpopt.oracles.get("grr", 1.0, 3).estimate(np.array([500, 300, 200]), 1000)
    >>> prob = Problem(est, "cls", [Simplex(), lambda f, e: cp.norm(f - 1 / 3, 2) <= 0.1])
    >>> user_rows_met(prob, np.array([0.4, 0.3, 0.3]), False), user_rows_met(prob, np.array([1.0, 0.0, 0.0]), False)
    (True, False)
    """
    import cvxpy as cp

    from ..constraints.base import UserConstraint

    if complete:
        return True
    f = np.asarray(f, dtype=np.float64)
    if f.shape != (problem.estimate.d,) or not np.all(np.isfinite(f)):
        return False
    left_out = []
    for name, con in problem.named_constraints.items():
        if not isinstance(problem.owners[name][0], UserConstraint):
            continue
        if isinstance(con, cp.constraints.Equality) and con.expr.is_affine():
            continue  # in the linear system (the caller proved it at f) unless too large: see below
        if not isinstance(con, cp.constraints.Inequality):
            return False
        left_out.append(con)
    try:
        with at_point(problem, f):
            for con in left_out:
                g = con.expr.value
                if g is None or not np.all(np.asarray(g, dtype=np.float64) <= MET_WITHIN):
                    return False
    except Exception:  # noqa: BLE001 - cvxpy cannot evaluate it here: not decided, the phase one runs
        return False
    # an affine equality is in the system unless it has more rows than the exact LP takes
    return all(con.size <= SYSTEM_ROWS for name, con in problem.named_constraints.items()
               if isinstance(problem.owners[name][0], UserConstraint) and con.expr.is_affine())
