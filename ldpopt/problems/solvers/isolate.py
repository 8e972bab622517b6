"""A solver call run where it can be stopped: in a child of a clean worker process (:mod:`..worker`:
a fresh interpreter started once, never a fork of a process holding solver threads), so a solver that
ignores the time limit is killed at it, a solver that crashes (a segmentation fault inside its
C/C++ code) ends one attempt, never the user's process, and a solver's thread pool in this process
(Clarabel's, after an in-process solve) is never inherited by a child.

Notes: docs/notes/problems.md, "ldpopt.problems.solvers.isolate".
"""

from __future__ import annotations

import copy
import os
from types import SimpleNamespace

from .. import worker
from ..errors import user_code_raised

__all__ = ["RAW_ANSWER", "ChildError", "SolverCrashed", "SolverTimedOut", "fork_available", "isolated", "plain_answer", "run_solver",
           "run_solver_raw", "runs_isolated", "solved_in_worker", "solved_raw", "standing", "stop_standing",
           "user_code_raised"]


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
    """Whether the solver ``name`` runs in a child process: every foreign solver (Clarabel, PIQP,
    OSQP, SCS, with or without a time limit of its own, ``own_limit``, and with or without the
    solve's, ``limited``) wherever ``fork`` exists (:func:`fork_available`), so that its segmentation
    fault, hang or exception is one failed attempt, never the user's process. A segmentation fault
    in this process cannot be guarded, so nothing runs here by choice; without ``fork`` (Windows)
    the solver runs in this process behind its own time limit and the exception handler alone. A
    call through the worker's child lent to this process costs 1-3 ms (the pickling and a socket round trip;
    ``benchmarks/bench_worker.py``)."""
    return fork_available()


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


def run_solver(solver, data: dict, verbose: bool, opts: dict, inverse, stall: bool = False,
               retry: dict | None = None):
    """cvxpy's ``solver.solve_via_data`` on the compiled ``data``, then the solver's own inversion
    (``solver.invert(raw, inverse)``): a cvxpy ``Solution`` of plain data (the solver's extra
    statistics, which may hold its own objects, dropped). ``inverse`` None: the solver's own answer
    as plain data instead (:func:`plain_answer`), for the caller to invert. ``stall``: Clarabel
    stopped where it stalls; ``retry``: the tolerances whose first meeting Clarabel's watch records
    (:func:`.stall.solve_clarabel`; other solvers as they are). What an
    isolated cvxpy attempt runs in the worker's child; :func:`solved_in_worker` finishes it in this
    process."""
    from cvxpy import settings as s

    if (stall or retry is not None) and solver.name() == "CLARABEL":
        from .stall import solve_clarabel

        raw = solve_clarabel(solver, data, verbose, opts, stall, retry)
    else:
        raw = solver.solve_via_data(data, False, verbose, opts)
    if inverse is None:
        return plain_answer(raw)
    sol = solver.invert(raw, inverse)
    sol.attr = {k: v for k, v in sol.attr.items() if k != s.EXTRA_STATS}
    return sol


#: solvers whose own answer travels back from the worker's child as plain data (:func:`plain_answer`),
#: cvxpy's inversion then run in this process: the inverse data (which holds the problem's cvxpy
#: constraints) is not pickled to the child, nor the inverted Solution back (measured: 0.4 + 0.5 ms
#: a call at d = 100, 0.4 + 3.2 ms at d = 1,000, of the inverse data alone)
RAW_ANSWER = frozenset({"CLARABEL"})


def solved_in_worker(prob, data: dict, chain, inverse, verbose: bool, opts: dict, seconds: float | None,
                     what: str, stall: bool = False, retry: dict | None = None) -> dict | None:
    """``prob`` (a cvxpy Problem compiled to ``data, chain, inverse`` by ``get_problem_data``)
    solved by :func:`run_solver` in the worker, and its answer unpacked into ``prob`` here (status,
    values, duals, solver statistics) as ``prob.unpack_results`` would; what Clarabel's watch
    recorded (``stall``, ``retry``: :mod:`.stall`): ``stalled_at`` (the iteration at which it was
    stopped as stalled, or None) and, where the watch ran, ``retry_met_at`` and ``stop_solved``; None for a solver
    without a watch. Raises as :func:`isolated`."""
    from cvxpy.reductions.solvers.conic_solvers.conic_solver import ConicSolver  # noqa: F401 - cvxpy loaded

    sent = {k: v for k, v in data.items() if k != "param_prob"}
    solver = chain.solver
    watch = None
    if solver.name() in RAW_ANSWER:
        raw = isolated(run_solver, (solver, sent, verbose, opts, None, stall, retry), seconds, what)
        watch = {"stalled_at": raw.stalled_at,
                 **({"retry_met_at": raw.retry_met_at, "stop_solved": raw.stop_solved}
                    if retry is not None and raw.watched else {})}
        sol = solver.invert(raw, inverse[-1])
    else:
        sol = isolated(run_solver, (solver, sent, verbose, opts, inverse[-1], stall, retry), seconds, what)
    rest = copy.copy(chain)
    rest.reductions = list(chain.reductions[:-1]) + [_Done()]
    prob.unpack_results(sol, rest, inverse)
    return watch


#: the fields of a solver's own answer that travel back from :func:`run_solver_raw` (Clarabel's: what
#: cvxpy's inversion and the phase one read; ``stalled_at``, ``retry_met_at``, ``watched`` and
#: ``stop_solved``, what :mod:`.stall`'s watch recorded)
RAW_FIELDS = ("x", "z", "s", "obj_val", "obj_val_dual", "solve_time", "iterations", "stalled_at", "retry_met_at",
              "watched", "stop_solved")


def plain_answer(raw):
    """A solver's own answer ``raw`` as plain data: its :data:`RAW_FIELDS` (lists as float64 arrays)
    and its status as text, which cvxpy's inversion reads as it reads the solver's object."""
    import numpy as np

    out = SimpleNamespace(status=str(raw.status))
    for key in RAW_FIELDS:
        value = getattr(raw, key, None)
        setattr(out, key, np.asarray(value, dtype=np.float64) if isinstance(value, (list, np.ndarray)) else value)
    return out


def run_solver_raw(solver, data: dict, opts: dict):
    """cvxpy's ``solver.solve_via_data`` on the compiled ``data``: the solver's own answer as plain
    data (:func:`plain_answer`). What :func:`solved_raw` runs in the worker's child."""
    return plain_answer(solver.solve_via_data(data, False, False, opts))


def solved_raw(solver, data: dict, opts: dict, seconds: float, what: str):
    """:func:`run_solver_raw` in the worker's child (killed after ``seconds``; raises as
    :func:`isolated`), in this process where there is no ``fork``."""
    sent = {k: v for k, v in data.items() if k != "param_prob"}
    if not fork_available():
        return run_solver_raw(solver, sent, opts)
    return isolated(run_solver_raw, (solver, sent, opts), seconds, what)


class _Done:
    """The solver's step of a chain, already inverted in the worker (:func:`run_solver`)."""

    def invert(self, solution, inverse_data):
        return solution
