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
import time
import warnings

__all__ = ["ChildError", "SolverCrashed", "SolverTimedOut", "fork_available", "isolated", "runs_isolated"]

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
    """Whether the cvxpy solver ``name`` runs in a child process: it has no time limit of its own
    (``own_limit`` False), or the solve has a time limit (``limited``); only where ``fork`` exists."""
    return fork_available() and (not own_limit or limited)


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
