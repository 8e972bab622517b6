"""A solver call run where it can be stopped: in a child forked from a clean worker process
(:mod:`..worker`: a fresh interpreter started once, never a fork of this process), so a solver that
ignores the time limit is killed at it, a solver that crashes (a segmentation fault inside its
C/C++ code) ends one attempt, never the user's process, and a solver's thread pool in this process
(Clarabel's, after an in-process solve) is never inherited by a child.

Notes: docs/notes/problems.md, "ldpopt.problems.solvers.isolate".
"""

from __future__ import annotations

import copy
import os

from .. import worker
from ..errors import user_code_raised

__all__ = ["ChildError", "SolverCrashed", "SolverTimedOut", "fork_available", "isolated", "run_solver",
           "runs_isolated", "solved_in_worker", "standing", "stop_standing", "user_code_raised"]


class SolverCrashed(worker.Crashed):
    """The child running a solver died without an answer (a signal, or an exit without a result)."""


class ChildError(worker.Raised):
    """``fn`` raised in the child: its exception's type and text."""


class SolverTimedOut(worker.TimedOut):
    """The child running a solver was stopped at the time limit."""


def fork_available() -> bool:
    """Whether solver calls can run isolated here (a POSIX system: the worker forks its children)."""
    return hasattr(os, "fork")


def runs_isolated(name: str, own_limit: bool, limited: bool) -> bool:
    """Whether the solver ``name`` runs in a child process: it has no time limit of its own
    (``own_limit`` False: PIQP, through cvxpy or its own interface), or the solve has a time limit
    (``limited``); only where ``fork`` exists (:func:`fork_available`). In this process otherwise (Clarabel, OSQP, SCS
    without ``time_limit``), behind two guards: the solver's own time limit (``CONIC_TIME_LIMIT``
    when none was given, :mod:`.progress`) and every exception it raises made a ``"solver_error"``
    attempt (:func:`user_code_raised` tells the user's own apart); a segmentation fault there is
    not contained. A call costs 10-15 ms more than in this process (the worker's fork and the
    data's pickling; ``benchmarks/bench_worker.py``)."""
    return fork_available() and (not own_limit or limited)



def isolated(fn, args: tuple, seconds: float | None, what: str):
    """``fn(*args)`` in a child of the worker (:func:`..worker.call`); its (picklable) return value.
    ``fn`` is a module-level function (it travels by reference). ``seconds``: kill the child after
    that long (None: wait for it). Raises :class:`SolverTimedOut` at the limit,
    :class:`SolverCrashed` when the child dies without a result, and :class:`ChildError` carrying the
    child's own exception text when ``fn`` raised."""
    try:
        return worker.call(fn, args, seconds, what)
    except worker.TimedOut as exc:
        raise SolverTimedOut(str(exc)) from None
    except worker.Raised as exc:
        raise ChildError(str(exc)) from None
    except worker.Crashed as exc:
        raise SolverCrashed(str(exc)) from None


#: the former standing child's entry point: the worker serves every call the same way
standing = isolated


def stop_standing() -> None:
    """Stop the worker process, if it runs (the next isolated call starts another)."""
    worker.shutdown()


def run_solver(solver, data: dict, verbose: bool, opts: dict, inverse):
    """cvxpy's ``solver.solve_via_data`` on the compiled ``data``, then the solver's own inversion
    (``solver.invert(raw, inverse)``): a cvxpy ``Solution`` of plain data (the solver's extra
    statistics, which may hold its own objects, dropped). What an isolated cvxpy attempt runs in the
    worker's child; :func:`solved_in_worker` finishes it in this process."""
    from cvxpy import settings as s

    raw = solver.solve_via_data(data, False, verbose, opts)
    sol = solver.invert(raw, inverse)
    sol.attr = {k: v for k, v in sol.attr.items() if k != s.EXTRA_STATS}
    return sol


def solved_in_worker(prob, data: dict, chain, inverse, verbose: bool, opts: dict, seconds: float | None,
                     what: str) -> None:
    """``prob`` (a cvxpy Problem compiled to ``data, chain, inverse`` by ``get_problem_data``)
    solved by :func:`run_solver` in the worker, and its answer unpacked into ``prob`` here (status,
    values, duals, solver statistics) as ``prob.unpack_results`` would. Raises as :func:`isolated`."""
    from cvxpy.reductions.solvers.conic_solvers.conic_solver import ConicSolver  # noqa: F401 - cvxpy loaded

    sent = {k: v for k, v in data.items() if k != "param_prob"}
    sol = isolated(run_solver, (chain.solver, sent, verbose, opts, inverse[-1]), seconds, what)
    rest = copy.copy(chain)
    rest.reductions = list(chain.reductions[:-1]) + [_Done()]
    prob.unpack_results(sol, rest, inverse)


class _Done:
    """The solver's step of a chain, already inverted in the worker (:func:`run_solver`)."""

    def invert(self, solution, inverse_data):
        return solution
