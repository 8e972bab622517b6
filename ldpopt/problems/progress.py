"""The context of one ``Problem.solve()`` (:class:`SolveContext`): its clock (the time limit, and
progress lines on stderr for long solves), verbosity, solver options and every per-solve fact (the
affine-row cache, the feasibility decision, the attempts), handed to every route as one explicit
argument — a ``Problem`` holds no per-solve state, so one problem solved from several threads at
once gives each call its own limit and answer.
Notes: docs/notes/problems.md, "ldpopt.problems.progress".
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import sys
import threading
import time
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

__all__ = ["CONIC_TIME_LIMIT", "OWN_TIME_LIMIT", "PROGRESS_AFTER", "CheckTimedOut", "Clock", "SolveAbandoned",
           "SolveContext", "affine_cache", "backstop", "bounded", "check_time_limit", "past", "timed_out"]

#: seconds after which a solve starts printing progress lines
PROGRESS_AFTER = 2.0
#: a conic solver's own time limit when ``solve`` was given none (it then ends ``user_limit``): a
#: user objective nothing else covers went to SCS for 30 min before; 10 min is a choice
CONIC_TIME_LIMIT = 600.0

_LIMIT_KEYS = {"CLARABEL": "time_limit", "SCS": "time_limit_secs", "OSQP": "time_limit"}
#: the cvxpy solvers that take a time limit of their own; any other runs in a child process killed at
#: the limit (:mod:`.isolate`), at :data:`CONIC_TIME_LIMIT` when ``solve`` was given none
OWN_TIME_LIMIT = frozenset(_LIMIT_KEYS)


def check_time_limit(time_limit) -> float | None:
    """``time_limit`` as seconds (None: no limit); a clear error naming the argument otherwise."""
    if time_limit is None:
        return None
    if isinstance(time_limit, bool) or not isinstance(time_limit, (int, float)) or not time_limit > 0:
        raise ValueError(f"time_limit must be a number of seconds > 0 or None, got {time_limit!r}")
    return float(time_limit)


class Clock:
    """Start time, limit and progress switch of one solve."""

    def __init__(self, time_limit=None, progress: bool = True, stream=None):
        self.start = time.perf_counter()
        self.limit = check_time_limit(time_limit)
        if not isinstance(progress, bool):
            raise TypeError(f"progress must be True or False, got {type(progress).__name__}")
        self.progress = progress
        self.stream = stream
        self.lines = 0

    def elapsed(self) -> float:
        return time.perf_counter() - self.start

    def left(self) -> float | None:
        return None if self.limit is None else self.limit - self.elapsed()

    def expired(self) -> bool:
        return self.limit is not None and self.elapsed() >= self.limit

    @property
    def deadline(self) -> float | None:
        """The limit as a ``time.perf_counter()`` reading (None: no limit)."""
        return None if self.limit is None else self.start + self.limit

    def solver_options(self, name: str, cap: float | None = None) -> dict:
        """The solver's own time-limit option set to the time left, and to at most ``cap`` seconds
        where given (a fallback's budget: :func:`.policy.fallback_budget`); without ``time_limit`` and
        ``cap``, the conic solvers (Clarabel, SCS: the last resort of the chain) get
        :data:`CONIC_TIME_LIMIT`."""
        left = self.left()
        key = _LIMIT_KEYS.get(name)
        if key is None:
            return {}
        if left is None:
            if cap is not None:
                return {key: min(cap, CONIC_TIME_LIMIT)}
            return {key: CONIC_TIME_LIMIT} if name in ("CLARABEL", "SCS") else {}
        return {key: max(min(left, cap) if cap is not None else left, 1e-3)}

    def note(self, route: str, iteration=None, **residuals) -> None:
        """One progress line (after :data:`PROGRESS_AFTER` seconds, when ``progress`` is on)."""
        if not self.progress or self.elapsed() < PROGRESS_AFTER:
            return
        parts = [f"ldpopt: {route}", f"{self.elapsed():.1f} s"]
        if iteration is not None:
            parts.append(f"iteration {iteration}")
        parts += [f"{k} {v:.1e}" if isinstance(v, float) else f"{k} {v}" for k, v in residuals.items()]
        if self.limit is not None:
            parts.append(f"time limit {self.limit:g} s")
        print(", ".join(parts), file=self.stream or sys.stderr, flush=True)
        self.lines += 1

    @contextlib.contextmanager
    def running(self, route: str):
        """While the block runs, a line every :data:`PROGRESS_AFTER` seconds once the solve is past it
        (one daemon thread of the process, :class:`_Ticker`, beats for every running block: no thread
        is started per block — that cost 0.5–1 ms a route at d = 100)."""
        if not self.progress:
            yield
            return
        key = _TICKER.add(self, route)
        try:
            yield
        finally:
            _TICKER.remove(key)


class _Ticker:
    """The process's one progress thread: each running block (:meth:`Clock.running`) is registered
    with its next due time and gets :meth:`Clock.note` every :data:`PROGRESS_AFTER` seconds until it
    is removed. The thread starts on first use; a forked child starts afresh (its own lock and
    thread: the parent's may be held or gone there)."""

    def __init__(self):
        self.cond = threading.Condition()
        self.beats: dict[int, list] = {}  # key -> [due, clock, route]
        self.count = 0
        self.thread: threading.Thread | None = None

    def add(self, clock: Clock, route: str) -> int:
        with self.cond:
            self.count += 1
            self.beats[self.count] = [time.perf_counter() + PROGRESS_AFTER, clock, route]
            if self.thread is None:
                self.thread = threading.Thread(target=self._loop, name="ldpopt-progress", daemon=True)
                self.thread.start()
            self.cond.notify()
            return self.count

    def remove(self, key: int) -> None:
        with self.cond:
            self.beats.pop(key, None)

    def _loop(self) -> None:
        with self.cond:
            while True:
                now = time.perf_counter()
                due = [b for b in self.beats.values() if b[0] <= now]
                for b in due:
                    b[0] = now + max(PROGRESS_AFTER, 1e-3)
                if due:
                    self.cond.release()  # the lines are printed without the lock
                    try:
                        for _, clock, route in due:
                            clock.note(route, status="running")
                    finally:
                        self.cond.acquire()
                    continue
                nxt = min((b[0] for b in self.beats.values()), default=None)
                self.cond.wait(None if nxt is None else max(nxt - now, 0.0))


_TICKER = _Ticker()


def _fresh_ticker() -> None:
    global _TICKER
    _TICKER = _Ticker()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_fresh_ticker)


class CheckTimedOut(Exception):
    """ldpopt's check of a point ran past the solve's time limit (raised by :func:`past` inside it;
    the check reports what it verified before, :func:`.verdict.check_solution`)."""


def past(deadline: float | None, what: str) -> None:
    """Raise :class:`CheckTimedOut` naming ``what`` when ``deadline`` (a ``time.perf_counter()``
    reading; None: none) has passed."""
    if deadline is not None and time.perf_counter() >= deadline:
        raise CheckTimedOut(f"the time limit ran out during {what}")


def _no_options() -> MappingProxyType:
    return MappingProxyType({})


@dataclass(eq=False)
class SolveContext:
    """What one ``Problem.solve()`` call hands every route and solver, explicitly: its
    :class:`Clock` (time limit, progress lines), ``verbose`` (the cvxpy solvers' own logs), the
    caller's ``solver_options`` (these three and ``problem`` read-only once made), and every fact of
    this solve alone (written by the routes). Routes read the
    limit here, never from the problem; a ``Problem`` is read-only after construction, so each
    ``solve()`` (one per thread, at once if need be) writes only its own context.

    Parameters
    ----------
    clock : Clock
        The solve's clock.
    verbose : bool, default False
        Passed to cvxpy's solvers.
    solver_options : mapping, default empty
        ``solve(**solver_options)`` as given (:func:`.attempts.options_for` layers them).
    problem : Problem or None, default None
        The problem solved (whose affine rows :attr:`affine_cache` keeps; None: no cache).

    Attributes
    ----------
    affine_cache : dict or None
        A user constraint's affine rows and the owned linear system, read once in this solve
        (:func:`ldpopt.problems.constraints.feasibility.affine_rows`); None: none kept.
    feasibility : Decision or None
        The exact feasibility decision of this solve (:mod:`.constraints.feasibility`): the
        pre-check's, the deferred one's, or a proof from the returned point; None: none made.
    phase_one : PhaseOne or None
        The phase one's result (:func:`.solvers.phase_one.phase_one`) when it ran.
    deferred : dict
        The pre-check's deferred steps until they run (``system``), and what happened when they
        did (``timed_out``, ``raised``): :mod:`.solvers.routes`.
    attempts : list of dict
        The routes tried so far, in order (``Solution.attempts``' entries).
    kept, newton_point : Solution or None
        The best checked point of the structured and direct routes that did not pass, and the
        Newton route's point that did not certify (they compete with later routes' answers).
    conflict : Solution or None
        The ``"infeasible"`` Solution of a deferred decision, once one proved a conflict.
    settle_due : bool
        The pre-check deferred steps: an answer is settled before it is returned
        (:func:`.solvers.routes.settle`).
    start : float
        ``time.perf_counter()`` when the routes began (after the pre-check).

    Examples
    --------
    >>> from ldpopt.problems.progress import SolveContext
    >>> ctx = SolveContext.make(time_limit=5.0, progress=False)
    >>> ctx.clock.limit, ctx.expired(), ctx.stop()
    (5.0, False, False)
    >>> SolveContext.make().deadline is None
    True
    """

    clock: Clock = field(default_factory=lambda: Clock(None, progress=False))
    verbose: bool = False
    solver_options: MappingProxyType = field(default_factory=_no_options)
    problem: Any = None
    affine_cache: dict | None = None
    feasibility: Any = None
    phase_one: Any = None
    deferred: dict = field(default_factory=lambda: {"system": None, "timed_out": False})
    attempts: list = field(default_factory=list)
    kept: Any = None
    newton_point: Any = None
    conflict: Any = None
    settle_due: bool = False
    start: float = field(default_factory=time.perf_counter)

    def __setattr__(self, name: str, value) -> None:
        # the caller's settings are read-only once set; the per-solve facts are this solve's to write
        if name in _SETTINGS and name in self.__dict__:
            raise AttributeError(f"SolveContext.{name} is the caller's setting: read-only")
        object.__setattr__(self, name, value)

    @classmethod
    def make(cls, time_limit=None, progress: bool = False, verbose: bool = False, solver_options=None,
             problem=None):
        """A context from ``solve``'s arguments (``time_limit`` validated: :func:`check_time_limit`);
        with ``problem``, an empty affine-row cache for it (:attr:`affine_cache`)."""
        return cls(Clock(time_limit, progress), bool(verbose), MappingProxyType(dict(solver_options or {})),
                   problem, None if problem is None else {})

    @contextlib.contextmanager
    def active(self):
        """This context the current one of this thread inside the block (:func:`affine_cache` reads
        it: ldpopt's check and the exact decisions, called in a solve and outside one, find the
        solve's cache there without an argument of their own)."""
        token = _CURRENT.set(self)
        try:
            yield self
        finally:
            _CURRENT.reset(token)

    @property
    def limited(self) -> bool:
        return self.clock.limit is not None

    @property
    def deadline(self) -> float | None:
        return self.clock.deadline

    def left(self) -> float | None:
        return self.clock.left()

    def expired(self) -> bool:
        return self.clock.expired()

    def stop(self) -> bool:
        """True once the time limit has passed: ldpopt's own iterative solvers (:mod:`.structured`,
        the interior point, sequential QP) call it once per iteration and stop with the point they
        have, which ``Problem.solve`` then checks like any other."""
        return self.clock.expired()

    def note(self, route: str, iteration=None, **residuals) -> None:
        self.clock.note(route, iteration, **residuals)


#: the fields of :class:`SolveContext` that are the caller's settings (read-only once made)
_SETTINGS = frozenset({"clock", "verbose", "solver_options", "problem"})
#: the solve context active in this thread (:meth:`SolveContext.active`)
_CURRENT: contextvars.ContextVar[SolveContext | None] = contextvars.ContextVar("ldpopt_solve", default=None)


def affine_cache(problem) -> dict | None:
    """The affine-row cache of the solve of ``problem`` running in this thread
    (:attr:`SolveContext.affine_cache`), or None outside one (the rows are then read afresh).

    Examples
    --------
    >>> from ldpopt.problems.progress import SolveContext, affine_cache
    >>> owner = object()
    >>> ctx = SolveContext.make(problem=owner)
    >>> with ctx.active():
    ...     affine_cache(owner) is ctx.affine_cache, affine_cache(object())
    (True, None)
    >>> affine_cache(owner) is None
    True
    """
    ctx = _CURRENT.get()
    return ctx.affine_cache if ctx is not None and ctx.problem is problem else None


def timed_out(best, clock: Clock) -> None:
    """On time-out, a Solution whose point did not pass ldpopt's check is reported ``"time_limit"`` (the
    point kept is the best one checked: ``best``); one that passed keeps ``"optimal"``."""
    if clock.limit is None or best.success or clock.elapsed() < clock.limit:
        return
    best.message = (f"time limit of {clock.limit:g} s reached after {clock.elapsed():.1f} s; f is the best point "
                    f"checked ({best.solver}: {best.status}) — " + best.message)
    best.status = "time_limit"


class SolveAbandoned(BaseException):
    """Raised inside a solve's thread that ran past its backstop (:func:`bounded`). A
    ``BaseException``, so that no route's ``except Exception`` (one failed attempt) swallows it."""


def backstop(limit: float) -> float:
    """Seconds after which :func:`bounded` abandons a solve with time limit ``limit``: within the
    promise of limit + max(1 s, 10 %), with 60 % of that margin left for returning (a C call holding
    the GIL in the abandoned thread delays the caller until it returns: 0.8 s measured at d = 10⁵)."""
    return limit + 0.4 * max(1.0, 0.1 * limit)


def _raise_in(thread: threading.Thread, exc: type) -> None:
    """``exc`` raised in ``thread`` at its next Python instruction (CPython's
    ``PyThreadState_SetAsyncExc``; code inside a C call runs on until it returns)."""
    import ctypes

    if thread.ident is not None:
        ctypes.pythonapi.PyThreadState_SetAsyncExc(ctypes.c_ulong(thread.ident), ctypes.py_object(exc))


def bounded(fn, seconds: float, name: str = "ldpopt-solve"):
    """``(True, fn())``, run in a thread of its own, or ``(False, None)`` when it has not returned
    after ``seconds``: then :class:`SolveAbandoned` is raised inside it (so pure-Python work there —
    cvxpy's compilation, a row reading — stops at its next instruction, its ``with`` blocks
    released) and the caller goes on without waiting for it. ``fn``'s own exception is raised here.
    Ctrl-C in the caller stops ``fn`` the same way and propagates."""
    box: dict = {}

    def target():
        try:
            box["value"] = fn()
        except SolveAbandoned:
            pass
        except BaseException as exc:  # noqa: BLE001 - handed to the caller
            box["error"] = exc

    thread = threading.Thread(target=target, name=name, daemon=True)
    thread.start()
    try:
        thread.join(min(seconds, threading.TIMEOUT_MAX))  # a limit past the platform's clock: no limit
    except BaseException:
        _raise_in(thread, SolveAbandoned)
        raise
    if thread.is_alive():
        _raise_in(thread, SolveAbandoned)
        thread.join(0.05)
    if "error" in box:
        raise box["error"]
    if "value" in box:
        return True, box["value"]
    return False, None
