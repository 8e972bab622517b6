"""A solver call run where it can be stopped: in a forked child process, so that a solver that
ignores the time limit is killed at it and a solver that crashes (a segmentation fault inside its
C/C++ code) ends one attempt, never the user's process.
Notes: docs/notes/problems.md, "ldpopt.problems.solvers.isolate".
"""

from __future__ import annotations

import os
import pickle
import select
import signal
import sys
import sysconfig
import time
import warnings
from functools import lru_cache

__all__ = ["ChildError", "SolverCrashed", "SolverTimedOut", "fork_available", "isolated", "runs_isolated",
           "user_code_raised"]

#: seconds the parent waits between looks at the clock
_POLL = 0.05


class SolverCrashed(RuntimeError):
    """The child running a solver died without an answer (a signal, or an exit without a result)."""


class ChildError(RuntimeError):
    """``work`` raised in the child: its exception's type and text."""


class SolverTimedOut(RuntimeError):
    """The child running a solver was stopped at the time limit."""


def fork_available() -> bool:
    return hasattr(os, "fork")


def runs_isolated(name: str, own_limit: bool, limited: bool) -> bool:
    """Whether the solver ``name`` runs in a child process: it has no time limit of its own
    (``own_limit`` False: PIQP, through cvxpy or its own interface), or the solve has a time limit
    (``limited``); only where ``fork`` exists. In this process otherwise (Clarabel, OSQP, SCS
    without ``time_limit``), behind two guards: the solver's own time limit (``CONIC_TIME_LIMIT``
    when none was given, :mod:`.progress`) and every exception it raises made a ``"solver_error"``
    attempt (:func:`user_code_raised` tells the user's own apart); a segmentation fault there is
    not contained. The child costs 5–8 ms to fork and 15–90 ms more per solve (cvxpy + Clarabel,
    CLS + smoothness at d = 10²–10⁴: 2.9 / 25 / 351 ms in this process, 21 / 45 / 442 ms in a
    child; ``benchmarks/bench_time_limit.py``)."""
    return fork_available() and (not own_limit or limited)


@lru_cache(maxsize=1)
def _library_dirs() -> tuple[str, ...]:
    """The folders whose code is not the user's: ldpopt's package and the interpreter's and its
    installed packages' (stdlib, site-packages)."""
    here = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # ldpopt/
    dirs = {here}
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        path = sysconfig.get_paths().get(key)
        if path:
            dirs.add(os.path.abspath(path))
    dirs.update(os.path.abspath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix))
    return tuple(sorted(dirs))


def user_code_raised(exc: BaseException) -> bool:
    """True when ``exc`` passed through the user's own code on its way up: a frame whose file is
    outside ldpopt and outside the interpreter's and installed packages' folders (a callable
    objective's or constraint's function, wherever ldpopt or a solver called it). ``solve()`` lets
    such an exception propagate unchanged, as documented; any other exception raised inside a
    solver (Clarabel's ``RuntimeError``, a factorisation's) becomes that solver's failed attempt.
    A choice: a file named ``<...>`` (``python -c``, a doctest, ``exec``) counts as the user's,
    except the interpreter's own ``<frozen ...>`` modules."""
    tb = exc.__traceback__
    lib = _library_dirs()
    while tb is not None:
        name = tb.tb_frame.f_code.co_filename
        if name.startswith("<"):
            if not name.startswith("<frozen"):
                return True
        elif not os.path.abspath(name).startswith(lib):
            return True
        tb = tb.tb_next
    return False


def isolated(work, seconds: float | None, what: str):
    """``work()`` run in a forked child; its return value (picklable). ``seconds``: kill the child
    after that long (None: wait for it). Raises :class:`SolverTimedOut` at the limit,
    :class:`SolverCrashed` when the child dies without a result, and :class:`ChildError` carrying the
    child's own exception text when ``work`` raised."""
    read, write = os.pipe()
    start = time.perf_counter()
    with warnings.catch_warnings():
        # Python ≥ 3.12 warns that fork with threads may deadlock: the only threads here are the
        # progress line's (it holds no lock the child takes) and the BLAS pool, idle while we wait
        warnings.simplefilter("ignore", DeprecationWarning)
        pid = os.fork()
    if pid == 0:  # the child: never returns into the caller's code
        code = 0
        try:
            os.close(read)
            try:
                out = ("ok", work())
            except BaseException as exc:  # noqa: BLE001 - reported to the parent as text
                out = ("error", f"{type(exc).__name__}: {exc}")
            data = memoryview(pickle.dumps(out, protocol=pickle.HIGHEST_PROTOCOL))
            while data:
                data = data[os.write(write, data):]
        except BaseException:  # noqa: BLE001 - the parent sees no complete result
            code = 1
        finally:
            os._exit(code)
    os.close(write)
    chunks, timed_out = [], False
    try:
        while True:
            wait = _POLL if seconds is None else max(min(_POLL, seconds - (time.perf_counter() - start)), 0.0)
            ready, _, _ = select.select([read], [], [], wait)
            if ready:
                chunk = os.read(read, 1 << 20)
                if not chunk:  # the child closed its end: done, or dead
                    break
                chunks.append(chunk)
            elif seconds is not None and time.perf_counter() - start >= seconds:
                timed_out = True
                break
    finally:
        os.close(read)
        if timed_out:
            os.kill(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
    if timed_out:
        raise SolverTimedOut(f"{what} stopped at its time limit of {seconds:.3g} s (killed)")
    try:
        kind, payload = pickle.loads(b"".join(chunks))
    except Exception:  # noqa: BLE001 - a partial or empty result: the child died while sending
        raise SolverCrashed(_died(what, status)) from None
    if kind == "error":
        raise ChildError(payload)
    return payload


def _died(what: str, status: int) -> str:
    if os.WIFSIGNALED(status):
        try:
            name = signal.Signals(os.WTERMSIG(status)).name
        except ValueError:
            name = f"signal {os.WTERMSIG(status)}"
        return f"{what} crashed ({name}) in an isolated process; the solve went on"
    return f"{what} exited (code {os.waitstatus_to_exitcode(status)}) without an answer in an isolated process"
