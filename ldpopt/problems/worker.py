"""A clean process that serves each foreign call in a child of its own: started once (a fresh
interpreter, never a fork of this process), it keeps one child forked and waiting, and lends it to a
caller, who then calls it directly, call after call, on a connection of its own; a call pays a
socket round trip and the pickling, and a child never inherits a solver's thread pool, a lock held
by another thread, or a crash's aftermath. Notes: docs/notes/problems.md, "ldpopt.problems.worker".
"""

from __future__ import annotations

import atexit
import contextlib
import gc
import os
import pickle
import select
import signal
import socket
import struct
import subprocess
import sys
import threading
import time

__all__ = ["Crashed", "Raised", "TimedOut", "call", "clean", "forks_directly", "server_pid", "shutdown",
           "start_in_background"]

#: modules the server imports before its first fork, so that each child has them (a child's own
#: imports are lost with it: ldpopt's, for a function it is sent by reference, cost 0.26 s a child);
#: a module that is not installed is skipped. None of them starts a thread.
PRELOAD = ("numpy", "scipy.sparse", "scipy.optimize", "cvxpy", "clarabel", "piqp", "osqp", "scs", "highspy",
           "ldpopt.problems.solvers.isolate", "ldpopt.problems.solvers.direct_qp",
           "ldpopt.problems.solvers.conic_format", "ldpopt.problems.constraints.farkas")
#: calls one child of the server serves before it exits (a new one is forked): a bound on what a
#: solver may keep in it between calls
CHILD_CALLS = 1000
#: bytes resident past which a child exits after its call instead of waiting for the next (a large
#: solve's memory, which the allocator may keep, is not held between calls)
CHILD_MEMORY = 1 << 30
#: children of the server kept waiting for a call at most (more were forked while calls overlapped)
IDLE_MAX = 2
#: children a caller keeps lent to it between its calls at most (more were lent while its threads'
#: calls overlapped: given back to the server)
LENT_MAX = 1
#: seconds a call waits between looks at the clock
_POLL = 0.05
#: seconds a call waits for the server to start before giving up (its start measured 1.0-2.5 s on a
#: loaded 2-core machine: importing numpy, scipy and cvxpy in a fresh interpreter)
START_WAIT = 30.0


class Crashed(RuntimeError):
    """The child died without an answer (a signal, or an exit without a result)."""


class Raised(RuntimeError):
    """The function raised in the child: its exception's type and text."""


class TimedOut(RuntimeError):
    """The child was killed at the time limit."""


#: the most parts one message may say it has, and the most bytes one part may: a header past them is
#: not a message of :func:`_pack` (a child dying mid-write), read as no answer
_MAX_PARTS = 1 << 20
_MAX_PART = 1 << 40


def _pack(obj) -> list:
    """``obj`` as the parts of one message, to be sent in order: a header (the number of parts that
    follow, then each one's length, as little-endian uint64), ``obj`` pickled (protocol 5), then the
    data of each of its out-of-band buffers (a contiguous numpy array's, a sparse matrix's arrays),
    sent from where they lie rather than copied into the pickle (a buffer that is not contiguous is
    pickled in band). Read back by :class:`_Incoming`. What it saves: docs/notes/problems.md,
    "ldpopt.problems.worker"."""
    raws: list = []

    def out_of_band(buffer: pickle.PickleBuffer) -> bool:
        try:
            raws.append(buffer.raw())
        except BufferError:  # neither C- nor Fortran-contiguous: pickled in band (True)
            return True
        return False

    main = pickle.dumps(obj, protocol=5, buffer_callback=out_of_band)
    lengths = [len(main), *(r.nbytes for r in raws)]
    return [struct.pack(f"<{len(lengths) + 1}Q", len(lengths), *lengths), main, *raws]


#: bytes below which a message's parts are joined and sent in one piece (one system call; the copy
#: costs less than the calls it saves)
_JOIN_BELOW = 1 << 18


def _send(sock: socket.socket, parts: list) -> None:
    """The parts of one message (:func:`_pack`) written to ``sock``, in order."""
    if sum(memoryview(p).nbytes for p in parts) < _JOIN_BELOW:
        sock.sendall(b"".join(parts))
        return
    for part in parts:
        sock.sendall(part)


def _write_all(fd: int, parts: list) -> None:
    """The parts of one message (:func:`_pack`) written to the file descriptor ``fd`` (a pipe), in order."""
    for part in parts:
        view = memoryview(part).cast("B")
        while view:
            view = view[os.write(fd, view):]


class _Incoming:
    """One message of :func:`_pack` read as it arrives, each part straight into its own buffer (no
    chunk allocated, joined or copied again). ``feed(read_into)`` reads what there is with
    ``read_into(view) -> bytes read`` (a socket's ``recv_into``, or :func:`os.readv` on a pipe):
    False where the peer closed before the message was whole, or its header is not one of
    :func:`_pack`'s; ``done`` once it is whole; ``value()`` the object."""

    def __init__(self):
        self.parts: list[bytearray] = [bytearray(8)]
        self.at = self.pos = 0
        self.stage = 0  # 0: the number of parts; 1: their lengths; 2: the parts
        self.done = False

    def feed(self, read_into) -> bool:
        n = read_into(memoryview(self.parts[self.at])[self.pos:])
        if n == 0:
            return False
        self.pos += n
        return self._advance()

    def _advance(self) -> bool:
        while not self.done and self.pos == len(self.parts[self.at]):
            head = self.parts[self.at]
            if self.stage == 0:
                (k,) = struct.unpack("<Q", head)
                if not 1 <= k <= _MAX_PARTS:
                    return False
                self.parts, self.at, self.stage = [bytearray(8 * k)], 0, 1
            elif self.stage == 1:
                lengths = struct.unpack(f"<{len(head) // 8}Q", head)
                if max(lengths) > _MAX_PART:
                    return False
                self.parts, self.at, self.stage = [bytearray(n) for n in lengths], 0, 2
            else:
                self.at += 1
                self.done = self.at == len(self.parts)
            self.pos = 0
        return True

    def value(self):
        return pickle.loads(self.parts[0], buffers=self.parts[1:])


def _recv_obj(sock: socket.socket) -> _Incoming | None:
    """One whole message of :func:`_pack` read from ``sock`` (blocking); None where it ended first."""
    got = _Incoming()
    while not got.done:
        if not got.feed(sock.recv_into):
            return None
    return got


def _recv_exactly(sock: socket.socket, n: int) -> bytes | None:
    out = bytearray()
    while len(out) < n:
        chunk = sock.recv(n - len(out))
        if not chunk:
            return None
        out += chunk
    return bytes(out)


#: a control message: one byte (``r`` a call's socket passed along, ``w`` kill and reap a child and
#: answer its status) and a pid (0 for ``r``)
_MSG = struct.Struct("<cq")


def _recv_msg(sock: socket.socket) -> tuple[bytes, int, list[int]] | None:
    """One control message (kind, pid, the file descriptors passed with it); None at the end."""
    buf, fds = b"", list[int]()
    while len(buf) < _MSG.size:
        chunk, got, _, _ = socket.recv_fds(sock, _MSG.size - len(buf), 1)
        if not chunk:
            for f in got + fds:
                os.close(f)
            return None
        buf += chunk
        fds += got
    kind, pid = _MSG.unpack(buf)
    return kind, pid, fds


# -- the server side (runs in the spawned interpreter) ------------------------------------------------

def _die_with_parent() -> None:
    """Linux: this process gets SIGKILL when its parent dies (prctl PR_SET_PDEATHSIG)."""
    with contextlib.suppress(Exception):
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL), 0, 0, 0)


def _resident() -> int:
    """This process's resident bytes (Linux's /proc; 0 elsewhere)."""
    try:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def _serve_one(conn: socket.socket, last: bool = False) -> bool | None:
    """One call on ``conn``, a caller's connection: read (function, arguments), run, send ``(kind,
    value, on)`` — ``("ok", value)`` or ``("error", text)``, and whether this child serves the
    caller's next call on ``conn``. ``on`` False (it retires): an error, more than
    :data:`CHILD_MEMORY` resident, or ``last``, its :data:`CHILD_CALLS`-th call; the caller then
    drops the connection, and the child exits. None: the caller closed ``conn`` before a call (it
    gave the child back); a caller gone before the answer does not retire it."""
    body = _recv_obj(conn)
    if body is None:
        return None
    try:
        fn, args, kwargs = body.value()
        del body  # the call's data not held while it runs
        kind, value = "ok", fn(*args, **kwargs)
    except BaseException as exc:  # noqa: BLE001 - reported to the caller as text
        kind, value = "error", f"{type(exc).__name__}: {exc}"
    on = kind == "ok" and not last and _resident() <= CHILD_MEMORY
    try:
        data = _pack((kind, value, on))
    except Exception as exc:  # noqa: BLE001 - an answer that cannot travel
        on = False
        data = _pack(("error", f"the answer could not be sent: {type(exc).__name__}: {exc}", on))
    # a caller gone (it stopped waiting at its limit) leaves nothing of its call here
    with contextlib.suppress(OSError):
        _send(conn, data)
    return on


def _child(link: socket.socket) -> None:
    """A child of the server: it waits on ``link`` for a caller's connection (the server lends it
    to one caller), serves that caller's calls on it one after another (:func:`_serve_one`) until
    the caller closes it, then says ``i``, idle, on ``link`` and waits for the next, up to
    :data:`CHILD_CALLS` calls in all; it exits after a call that did not answer "ok" or left it
    holding more than :data:`CHILD_MEMORY`, and when the server closes ``link``. The server is not
    woken by a call: only by a loan and its end. It never forks, so a solver's thread pool started
    here serves its next calls."""
    code, calls = 0, 0
    try:
        _die_with_parent()
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        while calls < CHILD_CALLS:
            _, fds, _, _ = socket.recv_fds(link, 1, 1)
            if not fds:
                break
            with socket.socket(fileno=fds[0]) as conn:
                while calls < CHILD_CALLS:
                    on = _serve_one(conn, last=calls == CHILD_CALLS - 1)
                    if on is None:  # given back: waits for the next loan
                        break
                    calls += 1
                    if not on:
                        return
            link.sendall(b"i")
    except BaseException:  # noqa: BLE001 - the server closed the link, or the caller went
        code = 1
    finally:
        os._exit(code)


def serve(fd: int) -> None:
    """The server's loop on the control socket ``fd``. Its children (:func:`_child`) are lent to
    one caller at a time, who calls them directly; it keeps one waiting, forked while no message
    waits, so that a fork is off the callers' path: ``r`` with a socket passed along (a caller's
    own connection) lends a waiting child to that caller (hands it the socket) and answers its pid;
    ``w`` + pid kills that child (its caller gave up on it) unless it was given back and waits
    again, reaps it and answers its wait status. A child that says ``i``, given back, waits again
    (at most :data:`IDLE_MAX` wait; others are retired); one that exits is reaped. Exits when the caller's
    end closes (the caller died or shut it down), killing its children, and at once, silently, when
    that end is gone before the server is ready (a short script that exits while it starts)."""
    ctl = socket.socket(fileno=fd)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    for name in PRELOAD:
        with contextlib.suppress(Exception):
            __import__(name)
    links: dict[int, socket.socket] = {}  # every live child's link, by pid
    idle: list[int] = []                   # the children waiting for a call, oldest first
    exited: dict[int, int] = {}            # wait statuses of children reaped before a ``w`` asked

    def fork_child() -> int:
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        gc.freeze()  # the server's objects out of the child's collections: fewer pages copied on write
        pid = os.fork()
        if pid == 0:
            ctl.close()
            mine.close()
            for other in links.values():
                other.close()
            _child(theirs)
        theirs.close()
        links[pid] = mine
        return pid

    def drop(pid: int) -> int:
        """Child ``pid`` forgotten, its link closed, and reaped: its wait status."""
        if pid in exited:
            return exited.pop(pid)
        link = links.pop(pid, None)
        if pid in idle:
            idle.remove(pid)
        if link is None:
            return -1
        link.close()
        try:
            return os.waitpid(pid, 0)[1]
        except ChildProcessError:
            return -1

    try:
        ctl.sendall(b"ready\n")
    except OSError:  # the caller exited while this server started: nothing to serve, nothing to say
        os._exit(0)
    try:
        while True:
            if not idle and not select.select([ctl], [], [], 0)[0]:
                idle.append(fork_child())  # between calls, or while one runs
            ready, _, _ = select.select([ctl, *links.values()], [], [])
            for link in ready:
                if link is ctl:
                    continue
                pid = next(k for k, v in links.items() if v is link)
                if link.recv(16):  # "i": it answered and waits again
                    if pid not in idle:
                        idle.append(pid)
                    while len(idle) > IDLE_MAX:
                        drop(idle[0])  # its link closed: it exits
                else:  # it exited (an error answered, its calls used up, or killed)
                    exited[pid] = drop(pid)
            if ctl not in ready:
                continue
            got = _recv_msg(ctl)
            if got is None:
                break
            kind, pid, fds = got
            if kind == b"r" and fds:
                pid = -1
                while pid < 0:
                    child = idle.pop() if idle else fork_child()  # the most recently used: its caches warm
                    try:
                        socket.send_fds(links[child], [b"r"], fds[:1])
                        pid = child
                    except OSError:  # a waiting child gone (killed from outside): the next one
                        exited[child] = drop(child)
                for f in fds:
                    os.close(f)
                ctl.sendall(struct.pack("<q", pid))
            elif kind == b"w":  # killed here, not by the caller: one that answered and waits again is spared
                if pid in idle:
                    status = -1
                else:
                    if pid in links:  # alive (one reaped already has its status in ``exited``)
                        with contextlib.suppress(OSError):
                            os.kill(pid, signal.SIGKILL)
                    status = drop(pid)
                ctl.sendall(struct.pack("<q", status))
            else:
                for f in fds:
                    os.close(f)
            if len(exited) > 64:  # statuses nobody asked for (a child retired by itself)
                exited.clear()
    finally:
        for pid in links:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        os._exit(0)


# -- the caller side ----------------------------------------------------------------------------------

class _Server:
    def __init__(self):
        self.proc: subprocess.Popen | None = None
        self.ctl: socket.socket | None = None
        self.owner = 0
        self.lock = threading.Lock()       # one control exchange at a time
        self.starting = threading.Lock()   # one start at a time
        self.ready = threading.Event()
        self.start_seconds: float | None = None
        self.lent: list[tuple[int, socket.socket]] = []  # children lent to this process, between its calls
        self.lent_lock = threading.Lock()

    def alive(self) -> bool:
        return (self.proc is not None and self.owner == os.getpid() and self.ready.is_set()
                and self.proc.poll() is None)

    def start(self) -> None:
        """Start the server (a fresh interpreter; blocks until it has imported :data:`PRELOAD`)."""
        with self.starting:
            if self.alive():
                return
            self.stop()
            t0 = time.perf_counter()
            mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
            code = (f"import sys; sys.path[:0] = {list(sys.path)!r}; "
                    f"from ldpopt.problems.worker import serve; serve({theirs.fileno()})")
            proc = subprocess.Popen([sys.executable, "-c", code], pass_fds=(theirs.fileno(),),
                                    stdin=subprocess.DEVNULL, close_fds=True, start_new_session=True)
            theirs.close()
            line = b""
            while not line.endswith(b"\n"):
                chunk = mine.recv(16)
                if not chunk:
                    proc.kill()
                    proc.wait()
                    mine.close()
                    raise Crashed("the solver worker process did not start")
                line += chunk
            self.proc, self.ctl, self.owner = proc, mine, os.getpid()
            self.start_seconds = time.perf_counter() - t0
            self.ready.set()

    def stop(self) -> None:
        self.ready.clear()
        with self.lent_lock:  # (a fork of the owner only closes its own copies: the owner's stay lent)
            for _, conn in self.lent:
                conn.close()
            self.lent.clear()
        if self.proc is not None and self.owner == os.getpid():
            with contextlib.suppress(OSError):
                assert self.ctl is not None
                self.ctl.close()
            with contextlib.suppress(OSError):
                self.proc.kill()
            with contextlib.suppress(Exception):
                self.proc.wait(timeout=5)
        self.proc = self.ctl = None

    def borrow(self) -> tuple[int, socket.socket]:
        """A child of the server for one call: one lent to this process and given back by its last
        call (:meth:`give_back`), else one the server lends now (its waiting one); its pid and this
        end of its connection."""
        with self.lent_lock:
            if self.lent and self.owner == os.getpid():
                return self.lent.pop()
        mine, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            with self.lock:
                assert self.ctl is not None
                socket.send_fds(self.ctl, [_MSG.pack(b"r", 0)], [theirs.fileno()])
                got = _recv_exactly(self.ctl, 8)
        finally:
            theirs.close()
        if got is None or struct.unpack("<q", got)[0] < 0:
            mine.close()
            raise Crashed("the solver worker process died")
        return struct.unpack("<q", got)[0], mine

    def give_back(self, pid: int, conn: socket.socket) -> None:
        """Child ``pid``, which answered and serves on, kept for this process's next call (at most
        :data:`LENT_MAX`); past that, its connection closed: it goes back to the server."""
        with self.lent_lock:
            if len(self.lent) < LENT_MAX and self.alive():
                self.lent.append((pid, conn))
                return
        conn.close()

    def reap(self, pid: int) -> int:
        """Child ``pid`` killed (unless it answered after all and waits again) and reaped by the
        server; its wait status (-1: unknown)."""
        with self.lock:
            assert self.ctl is not None
            self.ctl.sendall(_MSG.pack(b"w", pid))
            got = _recv_exactly(self.ctl, 8)
        return -1 if got is None else struct.unpack("<q", got)[0]


_SERVER = _Server()


def start_in_background() -> None:
    """Start the server in a thread of its own, if it is not running (returns at once)."""
    if not _SERVER.alive() and not _SERVER.starting.locked():
        threading.Thread(target=_quiet_start, name="ldpopt-worker-start", daemon=True).start()


def _quiet_start() -> None:
    with contextlib.suppress(Exception):
        _SERVER.start()


def forks_directly() -> bool:
    """Whether :func:`call` forks this process instead of going to the server: the server is not
    running yet and this process is :func:`clean`."""
    return not _SERVER.alive() and clean()


def server_pid() -> int | None:
    """The running server's pid (None: not running)."""
    return _SERVER.proc.pid if _SERVER.alive() and _SERVER.proc is not None else None


def shutdown() -> None:
    """Stop the server (the next :func:`call` starts another). Also run at exit."""
    _SERVER.stop()


def _died(what: str, status: int) -> str:
    if status != -1 and os.WIFSIGNALED(status):
        try:
            name = signal.Signals(os.WTERMSIG(status)).name
        except ValueError:
            name = f"signal {os.WTERMSIG(status)}"
        return f"{what} crashed ({name}) in an isolated process; the solve went on"
    code = os.waitstatus_to_exitcode(status) if status != -1 else "unknown"
    return f"{what} exited (code {code}) without an answer in an isolated process"


def _threads() -> int | None:
    """This process's OS threads (Linux's /proc; None elsewhere)."""
    try:
        return len(os.listdir(f"/proc/{os.getpid()}/task"))
    except OSError:
        return None


#: threads this process ran that Python did not start, when this module was imported (numpy's BLAS
#: pool: it survives a fork, its library re-creating it in the child)
_FOREIGN_AT_IMPORT = (_threads() or 0) - threading.active_count()


def clean() -> bool:
    """Whether this process may be forked directly: it runs no thread beyond Python's own and those
    it had when this module was imported. A solver's thread pool (Clarabel's, started by its first
    solve in this process) makes it False: a fork would copy the pool's state without its threads,
    and the child's solver waits for them for ever."""
    n = _threads()
    return n is not None and n - threading.active_count() <= _FOREIGN_AT_IMPORT


def call(fn, args: tuple = (), seconds: float | None = None, what: str = "a solver", kwargs: dict | None = None):
    """``fn(*args, **kwargs)`` in a child process; its (picklable) return value.

    The child is one the server (:func:`serve`: a fresh interpreter started once, in the background
    at the first call, and again after it died) lent to this process: the one that answered this
    process's last call, called again directly (the server not woken), else the server's waiting
    child, lent now (the server forks its next one while this call runs); ``fn`` travels by reference (a module-level function), the arguments pickled. Until
    the server has started, a call from a :func:`clean` process (no foreign thread pool) forks this
    process instead (:func:`forks_directly`; ``fn`` may then be any callable); a call from a process
    that is not clean waits for the server, its start counted against ``seconds``. Raises
    :class:`TimedOut` at ``seconds`` (the child killed), :class:`Crashed` when the child died
    without an answer (its signal named), :class:`Raised` with the child's exception text."""
    if forks_directly():
        start_in_background()
        return _forked(fn, args, dict(kwargs or {}), seconds, what)
    start = time.perf_counter()
    if not _SERVER.alive():
        t = threading.Thread(target=_quiet_start, daemon=True)
        t.start()
        t.join(START_WAIT if seconds is None else min(max(seconds, 0.0), threading.TIMEOUT_MAX))
        if not _SERVER.alive():
            if t.is_alive():
                raise TimedOut(f"{what} stopped at its time limit of {seconds:.3g} s (the solver worker was "
                               "still starting)")
            raise Crashed(f"{what}: the solver worker process could not be started")
    payload = _pack((fn, tuple(args), dict(kwargs or {})))
    try:
        pid, conn = _SERVER.borrow()
    except (OSError, Crashed):
        _SERVER.stop()
        raise Crashed(f"{what}: the solver worker process died; the next call starts another") from None
    answer: tuple | None = None  # (kind, value, whether the child serves on)
    timed_out = False
    try:
        with contextlib.suppress(OSError):  # a child dead before reading: as a crash
            _send(conn, payload)
        del payload  # its buffers are the caller's arrays: not held past the send
        got = _Incoming()
        while not got.done:
            left = None if seconds is None else seconds - (time.perf_counter() - start)
            if left is not None and left <= 0:
                timed_out = True
                break
            ready, _, _ = select.select([conn], [], [], _POLL if left is None else min(_POLL, left))
            if not ready:
                continue
            try:
                if not got.feed(conn.recv_into):  # the child gone before its whole answer: as a crash
                    break
            except OSError:  # reset by a child gone without reading the call: as a crash
                break
        if got.done:
            answer = got.value()
    finally:
        status = -1
        if answer is not None and answer[2]:  # it serves on: kept for the next call
            _SERVER.give_back(pid, conn)
        else:
            conn.close()
        try:
            if timed_out or answer is None:  # killed by the server, its status read (a crash's signal named)
                status = _SERVER.reap(pid)
        except OSError:
            _SERVER.stop()
    if timed_out:
        raise TimedOut(f"{what} stopped at its time limit of {seconds:.3g} s (killed)")
    if answer is None:
        raise Crashed(_died(what, status))
    kind, value, _ = answer
    if kind == "error":
        raise Raised(value)
    return value


atexit.register(shutdown)


#: held from a directly forked child's pipe to the parent's close of the child's end: a child forked
#: in between (from another thread) would hold that end open, and the parent would wait for it too
_FORK_LOCK = threading.Lock()


def _forked(fn, args: tuple, kwargs: dict, seconds: float | None, what: str):
    """``fn(*args, **kwargs)`` in a direct fork of this process (:func:`call` while :func:`clean`)."""
    import warnings

    start = time.perf_counter()
    with _FORK_LOCK:
        read, write = os.pipe()
        with warnings.catch_warnings():
            # Python >= 3.12 warns that fork with threads may deadlock: clean() allows only Python's
            # own threads (the progress line's holds no lock the child takes) and the BLAS pool
            warnings.simplefilter("ignore", DeprecationWarning)
            pid = os.fork()
        if pid != 0:
            os.close(write)
    if pid == 0:  # the child: never returns into the caller's code
        code = 0
        try:
            os.close(read)
            try:
                out = ("ok", fn(*args, **kwargs), False)
            except BaseException as exc:  # noqa: BLE001 - reported to the parent as text
                out = ("error", f"{type(exc).__name__}: {exc}", False)
            _write_all(write, _pack(out))
        except BaseException:  # noqa: BLE001 - the parent sees no complete result
            code = 1
        finally:
            os._exit(code)
    got, timed_out, done = _Incoming(), False, False
    try:
        while not got.done:
            left = None if seconds is None else seconds - (time.perf_counter() - start)
            ready, _, _ = select.select([read], [], [], _POLL if left is None else max(min(_POLL, left), 0.0))
            if ready:
                if not got.feed(lambda view: os.readv(read, [view])):  # the child closed its end early: dead
                    break
            elif left is not None and left <= 0:
                timed_out = True
                break
        done = True
    finally:
        os.close(read)
        if timed_out or not done:  # at the limit, or this wait interrupted (Ctrl-C, an abandoned solve)
            os.kill(pid, signal.SIGKILL)
        _, status = os.waitpid(pid, 0)
    if timed_out:
        raise TimedOut(f"{what} stopped at its time limit of {seconds:.3g} s (killed)")
    if not got.done:  # a partial or empty result: the child died while sending
        raise Crashed(_died(what, status))
    try:
        kind, value, _ = got.value()
    except Exception:  # noqa: BLE001 - an answer this process cannot read back: as the child's failure
        raise Crashed(_died(what, status)) from None
    if kind == "error":
        raise Raised(value)
    return value
