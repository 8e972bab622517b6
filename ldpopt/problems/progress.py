"""The clock of one ``Problem.solve()``: its time limit, and progress lines on stderr for long solves.
Notes: docs/notes/problems.md, "ldpopt.problems.progress".
"""

from __future__ import annotations

import contextlib
import contextvars
import sys
import threading
import time

__all__ = ["CONIC_TIME_LIMIT", "OWN_TIME_LIMIT", "PROGRESS_AFTER", "Clock", "check_time_limit", "out_of_time", "timed_out"]

#: seconds after which a solve starts printing progress lines
PROGRESS_AFTER = 2.0
#: a conic solver's own time limit when ``solve`` was given none (it then ends ``user_limit``): a
#: user objective nothing else covers went to SCS for 30 min before; 10 min is a choice
CONIC_TIME_LIMIT = 600.0

#: the clock of the route now running (``Clock.running``), read by :func:`out_of_time`
_ACTIVE: contextvars.ContextVar = contextvars.ContextVar("ldpopt_clock", default=None)
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

    def solver_options(self, name: str) -> dict:
        """The solver's own time-limit option set to the time left; without ``time_limit``, the conic
        solvers (Clarabel, SCS: the last resort of the chain) get :data:`CONIC_TIME_LIMIT`."""
        left = self.left()
        key = _LIMIT_KEYS.get(name)
        if key is None:
            return {}
        if left is None:
            return {key: CONIC_TIME_LIMIT} if name in ("CLARABEL", "SCS") else {}
        return {key: max(left, 1e-3)}

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
        """While the block runs, a line every :data:`PROGRESS_AFTER` seconds once the solve is past it;
        and this clock is the one :func:`out_of_time` reads (ldpopt's own solvers' loops)."""
        token = _ACTIVE.set(self)
        try:
            with self._beating(route):
                yield
        finally:
            _ACTIVE.reset(token)

    @contextlib.contextmanager
    def _beating(self, route: str):
        if not self.progress:
            yield
            return
        done = threading.Event()

        def beat():
            while not done.wait(PROGRESS_AFTER):
                self.note(route, status="running")

        thread = threading.Thread(target=beat, daemon=True)
        thread.start()
        try:
            yield
        finally:
            done.set()
            thread.join()


def out_of_time() -> bool:
    """True when the clock of the route now running (:meth:`Clock.running`) has passed its time limit:
    ldpopt's own iterative solvers (:mod:`.structured`) check it once per iteration and stop there
    with the point they have, which ``Problem.solve`` then checks like any other."""
    clock = _ACTIVE.get()
    return clock is not None and clock.expired()


def timed_out(best, clock: Clock) -> None:
    """On time-out, a Solution whose point did not pass ldpopt's check is reported ``"time_limit"`` (the
    point kept is the best one checked: ``best``); one that passed keeps ``"optimal"``."""
    if clock.limit is None or best.success or clock.elapsed() < clock.limit:
        return
    best.message = (f"time limit of {clock.limit:g} s reached after {clock.elapsed():.1f} s; f is the best point "
                    f"checked ({best.solver}: {best.status}) — " + best.message)
    best.status = "time_limit"
