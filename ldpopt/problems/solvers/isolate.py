"""A solver call run where it can be stopped: in a forked child process, so that a solver that
ignores the time limit is killed at it and a solver that crashes (a segmentation fault inside its
C/C++ code) ends one attempt, never the user's process.
Notes: docs/notes/problems.md, "ldpopt.problems.solvers.isolate".
"""

from __future__ import annotations

import atexit
import os
import pickle
import select
import signal
import struct
import sys
import sysconfig
import threading
import time
import warnings
from functools import lru_cache

__all__ = ["ChildError", "SolverCrashed", "SolverTimedOut", "fork_available", "isolated", "runs_isolated",
           "standing", "stop_standing", "user_code_raised"]

#: seconds the parent waits between looks at the clock
_POLL = 0.05
#: held from a child's pipe to the parent's close of the child's end, in this module's every fork: a
#: child forked in between (from another thread) would hold that end open, and the parent waiting for
#: it to close would wait for that other child too (for ever, were it the standing child)
_FORK_LOCK = threading.Lock()


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
    start = time.perf_counter()
    with _FORK_LOCK:  # until this parent has closed the child's end
        read, write = os.pipe()
        with warnings.catch_warnings():
            # Python ≥ 3.12 warns that fork with threads may deadlock: the only threads here are the
            # progress line's (it holds no lock the child takes) and the BLAS pool, idle while we wait
            warnings.simplefilter("ignore", DeprecationWarning)
            pid = os.fork()
        if pid != 0:
            os.close(write)
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


# -- the standing child: one per process, forked once, serving solver calls ------------------------

class _Standing:
    """This process's standing child: its pid, the request and answer pipes, and the functions it was
    forked knowing (``known``: id → function; a call names one by its id, never sends code)."""

    def __init__(self):
        self.pid: int | None = None
        self.owner = 0
        self.req = self.ans = -1
        self.known: dict[int, object] = {}
        self.lock = threading.Lock()

    def alive(self) -> bool:
        return self.pid is not None and self.owner == os.getpid()

    def stop(self) -> None:
        if self.pid is not None and self.owner == os.getpid():
            for fd in (self.req, self.ans):
                try:
                    os.close(fd)
                except OSError:
                    pass
            try:
                os.kill(self.pid, signal.SIGKILL)
                os.waitpid(self.pid, 0)
            except (ProcessLookupError, ChildProcessError):
                pass
        self.pid = None

    def start(self, fn) -> None:
        self.stop()
        self.known[id(fn)] = fn
        with _FORK_LOCK:
            req_r, req_w = os.pipe()
            ans_r, ans_w = os.pipe()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DeprecationWarning)   # as in isolated(): fork with threads
                pid = os.fork()
            if pid == 0:
                os.close(req_w)
                os.close(ans_r)
                _serve(req_r, ans_w, self.known)   # never returns
            os.close(req_r)
            os.close(ans_w)
        self.pid, self.owner, self.req, self.ans = pid, os.getpid(), req_w, ans_r


def _read_exactly(fd: int, n: int) -> bytes | None:
    out = bytearray()
    while len(out) < n:
        chunk = os.read(fd, n - len(out))
        if not chunk:
            return None
        out += chunk
    return bytes(out)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _serve(req: int, ans: int, known: dict) -> None:
    """The standing child's loop: a request (the function's id and its arguments, pickled behind an
    8-byte length) in, its answer (``("ok", value)`` or ``("error", text)``) out, until the parent
    closes its end. Ctrl-C is the parent's to handle: ignored here."""
    code = 0
    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        while True:
            head = _read_exactly(req, 8)
            if head is None:
                break
            body = _read_exactly(req, struct.unpack("<Q", head)[0])
            if body is None:
                break
            token, args = pickle.loads(body)
            try:
                out = ("ok", known[token](*args))
            except BaseException as exc:  # noqa: BLE001 - reported to the parent as text
                out = ("error", f"{type(exc).__name__}: {exc}")
            data = pickle.dumps(out, protocol=pickle.HIGHEST_PROTOCOL)
            _write_all(ans, struct.pack("<Q", len(data)) + data)
    except BaseException:  # noqa: BLE001 - the parent sees the answer pipe close
        code = 1
    finally:
        os._exit(code)


_STANDING = _Standing()


def stop_standing() -> None:
    """Stop this process's standing child, if it runs (:func:`standing` starts another when next
    called). Also run at exit."""
    with _STANDING.lock:
        _STANDING.stop()


def standing(fn, args: tuple, seconds: float | None, what: str):
    """``fn(*args)`` in this process's standing child: a child forked once (at the first call, or
    again after it died, was stopped at a limit, or does not know ``fn``) that serves one call after
    another, so a call costs the arguments' pickling instead of a fork (5–8 ms each at the off-grid
    benchmark's sizes). The same guarantees as :func:`isolated`, whose exceptions it raises: killed
    at ``seconds`` (:class:`SolverTimedOut`), a crash ends that child, never this process
    (:class:`SolverCrashed`; the next call forks a new one), ``fn``'s exception comes back as
    :class:`ChildError`. ``fn`` is named to the child by identity, so a function the child was not
    forked with (replaced since, as a test does) forks a new child that has it. A call made while
    another thread's call holds the child runs in a child of its own (:func:`isolated`). A choice:
    the child is a fork of this process at its first use, holding the memory it had then (copy on
    write)."""
    w = _STANDING
    if not w.lock.acquire(blocking=False):
        return isolated(lambda: fn(*args), seconds, what)
    try:
        if not w.alive() or w.known.get(id(fn)) is not fn:
            w.start(fn)
        assert w.pid is not None
        data = pickle.dumps((id(fn), args), protocol=pickle.HIGHEST_PROTOCOL)
        start = time.perf_counter()
        try:
            _write_all(w.req, struct.pack("<Q", len(data)) + data)
        except OSError:   # the child died before reading: as a crash
            pass
        answer, timed_out = _await(w.ans, seconds, start)
        if timed_out:
            w.stop()
            raise SolverTimedOut(f"{what} stopped at its time limit of {seconds:.3g} s (killed)")
        if answer is None:
            pid = w.pid
            w.pid = None
            _, status = os.waitpid(pid, 0)
            for fd in (w.req, w.ans):
                os.close(fd)
            raise SolverCrashed(_died(what, status))
    finally:
        w.lock.release()
    kind, payload = pickle.loads(answer)
    if kind == "error":
        raise ChildError(payload)
    return payload


def _await(fd: int, seconds: float | None, start: float) -> tuple[bytes | None, bool]:
    """(the answer, False), (None, False) when the child closed its end without one, or (None, True)
    at ``seconds`` after ``start``."""
    buf, need = bytearray(), None
    while need is None or len(buf) < need:
        wait = _POLL if seconds is None else max(min(_POLL, seconds - (time.perf_counter() - start)), 0.0)
        ready, _, _ = select.select([fd], [], [], wait)
        if ready:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                return None, False
            buf += chunk
            if need is None and len(buf) >= 8:
                need = 8 + struct.unpack("<Q", bytes(buf[:8]))[0]
        elif seconds is not None and time.perf_counter() - start >= seconds:
            return None, True
    return bytes(buf[8:need]), False


atexit.register(stop_standing)
