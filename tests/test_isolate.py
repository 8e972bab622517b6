"""No solver can take the user's process down, and ``time_limit`` bounds a solver with no limit of its own:
a solver that segfaults ends one attempt (``solver_error``) and the chain goes on; PIQP, which ignored
every limit on the AOL reproducer (:mod:`benchmarks.bench_routes`), is stopped at it. Both run in a
subprocess, as a user's script would, and are timed there."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import examples
from ldpopt import Estimate
from ldpopt.problems import Problem
from ldpopt.problems.solvers.isolate import SolverCrashed, SolverTimedOut, isolated

ROOT = Path(__file__).resolve().parents[1]


def _run(code: str, timeout: float = 120) -> dict:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)}
    proc = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env, capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return {**json.loads(proc.stdout.strip().splitlines()[-1]), "stderr": proc.stderr}


def test_a_segfault_inside_the_solver_is_one_failed_attempt_and_the_chain_goes_on():
    # PIQP's solve replaced by a real segmentation fault (a read at address 0) in the process that runs it
    out = _run("""
        import ctypes, json, time, warnings
        import piqp
        from ldpopt import Estimate
        from ldpopt.problems import Problem
        piqp.SparseSolver.solve = lambda self: ctypes.string_at(0)
        est = Estimate.from_counts([50, 30, 15, 5], n=100, epsilon=2.0, p=0.7, q=0.1)
        warnings.simplefilter("ignore")
        t0 = time.perf_counter()
        sol = Problem(est, "cls").solve(solver=["PIQP", "CLARABEL"])
        print(json.dumps({"status": sol.status, "solver": sol.solver, "f": sol.f.tolist(),
                          "attempts": [[a["solver"], a["status"], a["checks"]] for a in sol.attempts],
                          "seconds": time.perf_counter() - t0}))
    """)
    assert out["attempts"][0][:2] == ["PIQP", "solver_error"] and "SIGSEGV" in out["attempts"][0][2]
    assert out["status"] == "optimal" and out["solver"] == "CLARABEL"
    # the chain's answer against the closed form (Norm-Sub is CLS on the simplex)
    est = Estimate.from_counts([50, 30, 15, 5], n=100, epsilon=2.0, p=0.7, q=0.1)
    from ldpopt.methods.normalize import project_simplex
    assert np.max(np.abs(np.array(out["f"]) - project_simplex(est.f_tilde))) <= 1e-8


def test_piqp_past_every_limit_at_aol_is_stopped_at_the_time_limit():
    # the AOL reproducer with PIQP named: without isolation it ran past 200 s (killed) here
    out = _run("""
        import json, sys, time, warnings
        sys.path.insert(0, "benchmarks")
        from bench_routes import aol_problem
        pr = aol_problem("smooth", "<=")
        warnings.simplefilter("ignore")
        t0 = time.perf_counter()
        sol = pr.solve(solver="PIQP", time_limit=3.0)
        print(json.dumps({"status": sol.status, "seconds": time.perf_counter() - t0,
                          "attempts": [[a["solver"], a["status"]] for a in sol.attempts]}))
    """)
    assert out["status"] == "time_limit" and out["attempts"] == [["PIQP", "user_limit"]]
    assert out["seconds"] <= 3.0 + 1.0 + 2.0  # T + 1 s, and generous slack for a loaded machine
    # the solver's wait no longer holds the GIL: the progress line of the 2 s mark appeared
    assert "ldpopt: PIQP" in out["stderr"] and "status running" in out["stderr"]


def _pid():
    return {"pid": os.getpid()}


def _exit3():
    os._exit(3)


def _divide():
    return 1 / 0


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform")
def test_isolated_reports_results_errors_and_the_limit(isolation_path):
    import time

    assert isolated(_pid, (), 10.0, "x")["pid"] != os.getpid()
    t0 = time.perf_counter()
    isolated(_pid, (), 30.0, "x")  # the worker already running: the call itself
    assert time.perf_counter() - t0 < 1.0
    t0 = time.perf_counter()
    with pytest.raises(SolverTimedOut):
        isolated(_sleep, (30,), 0.5, "sleeper")
    assert time.perf_counter() - t0 < 0.5 + 1.0
    with pytest.raises(SolverCrashed, match="exited"):
        isolated(_exit3, (), 10.0, "quitter")
    with pytest.raises(SolverCrashed, match="SIGSEGV"):
        isolated(_segfault, (), 10.0, "crasher")
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        isolated(_divide, (), 10.0, "divider")


def test_time_limited_solve_of_each_own_limit_solver_still_certifies():
    # a time limit runs every cvxpy solver in a child process: the answers are the same
    est = Estimate.from_counts([50, 30, 15, 5], n=100, epsilon=2.0, p=0.7, q=0.1)
    ref = Problem(est, "cls").solve(solver="CLARABEL").f
    for name in ("PIQP", "CLARABEL", "OSQP"):
        sol = Problem(est, "cls").solve(solver=name, time_limit=30)
        assert sol.status == "optimal" and np.max(np.abs(sol.f - ref)) <= 1e-8


def _solve_in_worker(_):
    est = Estimate.from_counts([50, 30, 15, 5], n=100, epsilon=2.0, p=0.7, q=0.1)
    sol = Problem(est, "cls").solve(solver="PIQP", time_limit=30)
    return sol.status, sol.f.tolist()


def test_isolation_works_inside_a_daemonic_pool_worker():
    # a multiprocessing.Process cannot be started from a pool worker: the isolation forks by itself
    import multiprocessing

    with multiprocessing.get_context("fork").Pool(1) as pool:
        status, f = pool.map(_solve_in_worker, [0])[0]
    from ldpopt.methods.normalize import project_simplex
    est = Estimate.from_counts([50, 30, 15, 5], n=100, epsilon=2.0, p=0.7, q=0.1)
    assert status == "optimal" and np.max(np.abs(np.array(f) - project_simplex(est.f_tilde))) <= 1e-8


# -- the worker (.worker): a clean interpreter started once, forking one child per call ----------------

def _segfault(*args):
    import ctypes

    ctypes.string_at(0)


def _sleep(seconds):
    import time

    time.sleep(seconds)


def _sleep_and_pid(seconds):
    time.sleep(seconds)
    return os.getpid(), seconds


def _raise(*args):
    raise RuntimeError("raised in the child")


def _weighted(a, b, w):
    return float(np.dot(a, b) * w), np.cumsum(a)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform")
def test_the_worker_serves_calls_and_survives_each_fault_as_one_error(monkeypatch):
    import time

    from hypothesis import given, settings
    from hypothesis import strategies as st

    from ldpopt.problems import worker
    from ldpopt.problems.solvers.isolate import ChildError, standing

    monkeypatch.setattr(worker, "clean", lambda: False)  # every call through the worker
    assert standing(_weighted, (np.arange(3.0), np.ones(3), 2.0), None, "t")[0] == 6.0
    pid = worker.server_pid()
    assert pid is not None and pid != os.getpid()

    @settings(max_examples=examples(25), deadline=None)
    @given(st.lists(st.floats(-1e150, 1e150), min_size=0, max_size=200), st.floats(-1e3, 1e3))
    def same_answer_as_in_this_process(values, w):
        a = np.asarray(values, float)
        got = standing(_weighted, (a, a[::-1].copy(), w), 5.0, "t")
        want = _weighted(a, a[::-1].copy(), w)
        assert np.array_equal(got[1], want[1]) and (got[0] == want[0] or (np.isnan(got[0]) and np.isnan(want[0])))

    same_answer_as_in_this_process()
    with pytest.raises(ChildError, match="RuntimeError: raised in the child"):
        standing(_raise, (), None, "t")
    with pytest.raises(SolverCrashed, match="SIGSEGV"):
        standing(_segfault, (), None, "t")
    t0 = time.perf_counter()
    with pytest.raises(SolverTimedOut):
        standing(_sleep, (60.0,), 1.0, "t")
    assert time.perf_counter() - t0 < 1.0 + 1.5
    assert standing(_weighted, (np.ones(2), np.ones(2), 1.0), None, "t")[0] == 2.0  # serving again
    assert worker.server_pid() == pid  # one worker served every call: each fault ended only its child


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform")
def test_a_child_of_the_worker_serves_call_after_call_its_solver_threads_included(monkeypatch):
    # a child answers call after call (the most recent waiting one is handed the next call); a child
    # whose Clarabel started its thread pool solves again with it (it is never forked, so no copy
    # waits for threads)
    from _faults import clarabel_psd

    from ldpopt.problems import worker

    monkeypatch.setattr(worker, "forks_directly", lambda: False)

    def foreign_threads():  # OS threads Python did not start (Linux's /proc; None elsewhere)
        task = f"/proc/{os.getpid()}/task"
        return len(os.listdir(task)) - threading.active_count() if os.path.isdir(task) else None

    before = foreign_threads()  # (earlier tests of this process may have started a pool: not ours to judge)

    def served(fn, *args):
        return worker.call(fn, args, 60.0)

    first = served(os.getpid)
    assert first != os.getpid() and [served(os.getpid) for _ in range(3)] == [first] * 3
    with pytest.raises(worker.Raised, match="ZeroDivisionError"):
        worker.call(_divide, (), 10.0)
    status, pid, threads = served(clarabel_psd, 200)
    assert status == "optimal" and threads > 1  # its pool started in the child
    assert served(clarabel_psd, 200)[:2] == ("optimal", pid)  # and served the child's next call
    assert foreign_threads() == before  # nothing of it in this process


def test_a_lent_child_answers_whether_it_serves_on_and_its_callers_next_call_goes_to_it(monkeypatch):
    # one call on a caller's connection: the answer says whether the child serves the caller's next
    # call (a call that raised, or a child's last call, CHILD_CALLS, retires it); a connection the
    # caller closed before a call gives the child back (None), and a caller gone before its answer
    # (it stopped waiting at its limit) leaves it serving on
    import socket

    from _faults import pid_and_size

    from ldpopt.problems import worker

    monkeypatch.setattr(worker, "_resident", lambda: 0)  # this process's own size is not the child's
    for fn, args, last, served_on in ((pid_and_size, (b"abc",), False, True), (_divide, (), False, False),
                                      (pid_and_size, (b"abc",), True, False)):
        caller, conn = socket.socketpair()
        worker._send(caller, worker._pack((fn, args, {})))
        with conn:
            assert worker._serve_one(conn, last=last) is served_on
        kind, _, on = worker._recv_obj(caller).value()
        assert kind == ("error" if fn is _divide else "ok") and on is served_on
        caller.close()
    caller, conn = socket.socketpair()
    caller.close()
    with conn:
        assert worker._serve_one(conn) is None
    caller, conn = socket.socketpair()
    worker._send(caller, worker._pack((pid_and_size, (b"abc",), {})))
    caller.close()
    with conn:
        assert worker._serve_one(conn) is True
    # through the worker: calls back to back go to the child lent to this process, straight to it
    # (the server is not woken: its context switches do not move), and past its CHILD_CALLS to the
    # next, every call answered
    monkeypatch.undo()
    monkeypatch.setattr(worker, "forks_directly", lambda: False)
    worker.call(pid_and_size, (np.zeros(10),), 60.0)
    server = worker.server_pid()

    def switches():
        with open(f"/proc/{server}/status") as fh:
            return sum(int(line.split()[1]) for line in fh if "ctxt_switches" in line)

    time.sleep(0.2)  # the server's fork of its next waiting child, while the first call ran, done
    if os.path.exists(f"/proc/{server}/status"):
        before = switches()
        pids = {worker.call(pid_and_size, (np.zeros(10),), 60.0)[0] for _ in range(50)}
        assert len(pids) == 1 and switches() == before
    pids = [worker.call(pid_and_size, (np.zeros(6000),), 60.0)[0] for _ in range(worker.CHILD_CALLS + 100)]
    changes = sum(a != b for a, b in zip(pids, pids[1:]))
    assert changes <= 2 and len(set(pids)) <= 3 and os.getpid() not in pids, (changes, len(set(pids)))


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform")
def test_children_lent_to_overlapping_calls_are_given_back_and_the_worker_keeps_few(monkeypatch):
    # calls from several threads at once borrow a child each; after them this process keeps at most
    # LENT_MAX and gives the others back, and the server keeps at most IDLE_MAX of those waiting: a
    # child given back says so (it would otherwise be counted neither lent nor waiting, and each
    # burst would leave more)
    from concurrent.futures import ThreadPoolExecutor

    from _faults import live_children, pid_and_size

    from ldpopt.problems import worker

    monkeypatch.setattr(worker, "forks_directly", lambda: False)
    worker.call(pid_and_size, (b"x",), 60.0)
    server = worker.server_pid()
    served = set()
    for _ in range(3):
        with ThreadPoolExecutor(4) as pool:
            served |= {p for p, _ in pool.map(lambda _: worker.call(_sleep_and_pid, (0.3,), 60.0), range(4))}
        t0 = time.perf_counter()
        while len(live_children(server)) > worker.IDLE_MAX + worker.LENT_MAX and time.perf_counter() - t0 < 5:
            time.sleep(0.02)
        assert len(live_children(server)) <= worker.IDLE_MAX + worker.LENT_MAX
    assert len(served) >= 4  # the calls of a burst overlapped: each had a child of its own
    assert worker.call(pid_and_size, (b"x",), 60.0)[1] == 1  # and the worker serves on


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform")
def _message_objects():
    """Objects as a call or an answer carries them: numpy arrays of several dtypes and layouts (C,
    Fortran, a strided view that is neither, empty), scipy sparse matrices, scalars and text, nested."""
    import scipy.sparse as sp

    def array(draw_shape, dtype, order, step):
        shape, seed = draw_shape
        a = np.random.default_rng(seed).standard_normal(shape).astype(dtype)
        a = np.asarray(a, order=order)
        return a[::step] if a.ndim and step > 1 else a

    arrays = st.builds(array, st.tuples(st.sampled_from([(0,), (1,), (7,), (3, 5), (40, 3), (2000,)]),
                                        st.integers(0, 2**31 - 1)),
                       st.sampled_from([np.float64, np.float32, np.int64, np.uint8, np.complex128, bool]),
                       st.sampled_from(["C", "F"]), st.sampled_from([1, 2]))
    sparse = st.builds(lambda n, seed: sp.random(n, n + 3, density=0.3, format="csr", random_state=seed),
                       st.integers(1, 60), st.integers(0, 2**31 - 1))
    leaves = st.one_of(arrays, sparse, st.floats(allow_nan=False), st.integers(), st.text(max_size=20), st.none())
    return st.recursive(leaves, lambda inner: st.one_of(st.lists(inner, max_size=4), st.tuples(inner, inner),
                                                        st.dictionaries(st.text(max_size=5), inner, max_size=3)),
                        max_leaves=8)


def _same(a, b) -> bool:
    import scipy.sparse as sp

    if isinstance(a, np.ndarray):
        return (isinstance(b, np.ndarray) and a.dtype == b.dtype and a.shape == b.shape
                and bool(np.array_equal(a, b)))
    if sp.issparse(a):
        return sp.issparse(b) and a.dtype == b.dtype and a.shape == b.shape and (a != b).nnz == 0
    if isinstance(a, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


@settings(max_examples=examples(40), deadline=None)
@given(obj=_message_objects(), cuts=st.lists(st.integers(1, 5000), max_size=30))
def test_a_message_read_as_it_arrives_in_any_pieces_is_the_object_sent(obj, cuts):
    # the framing of worker calls and answers (a pickle with its arrays out of band) read back whole
    # by the incremental reader, the bytes arriving in pieces of any size, cut anywhere — inside the
    # header, between parts, inside an array —, by the blocking reader a child uses, and from a pipe
    import select
    import socket

    from ldpopt.problems import worker

    whole = b"".join(bytes(memoryview(p).cast("B")) for p in worker._pack(obj))
    sender, receiver = socket.socketpair()
    with sender, receiver:
        got, at = worker._Incoming(), 0
        for size in [*cuts, len(whole)]:
            piece = whole[at:at + size]
            at += len(piece)
            if piece:
                sender.sendall(piece)
            while not got.done and select.select([receiver], [], [], 0)[0]:
                assert got.feed(receiver.recv_into)
        assert got.done and _same(obj, got.value())
        worker._send(sender, worker._pack(obj))
        assert _same(obj, worker._recv_obj(receiver).value())
        # through a pipe, as a directly forked child answers (its writer in a thread: a pipe holds 64 kB)
        read, write = os.pipe()
        writer = threading.Thread(target=worker._write_all, args=(write, worker._pack(obj)))
        writer.start()
        piped = worker._Incoming()
        while not piped.done:
            assert piped.feed(lambda view: os.readv(read, [view]))
        writer.join()
        os.close(read)
        os.close(write)
        assert _same(obj, piped.value())
        # a peer gone mid-message, or a header that is not one: no object, never a hang or an error
        sender.sendall(whole[: len(whole) // 2])
        sender.shutdown(socket.SHUT_WR)
        assert worker._recv_obj(receiver) is None
    for junk in (b"\x00" * 8, (1 << 30).to_bytes(8, "little"), (1).to_bytes(8, "little") + (1 << 50).to_bytes(8, "little")):
        a, b = socket.socketpair()
        with a, b:
            a.sendall(junk)
            a.shutdown(socket.SHUT_WR)
            assert worker._recv_obj(b) is None


def test_the_worker_does_not_outlive_a_killed_parent():
    # a parent that started the worker and a child hanging in it, then killed with SIGKILL: both go
    import signal
    import time

    code = textwrap.dedent("""
        import sys, time, threading
        from ldpopt.problems import worker
        worker.clean = lambda: False
        worker.call(time.sleep, (0,), 60.0)
        print(worker.server_pid(), flush=True)
        worker.call(time.sleep, (600,), 600.0)
    """)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)}
    proc = subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.PIPE, text=True, cwd=ROOT)
    server = int(proc.stdout.readline())
    time.sleep(0.3)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < 10.0:
        try:
            os.kill(server, 0)
        except ProcessLookupError:
            break
        time.sleep(0.05)
    with pytest.raises(ProcessLookupError):
        os.kill(server, 0)
    assert time.perf_counter() - t0 < 5.0


def test_a_script_that_exits_while_the_worker_starts_prints_nothing():
    # the worker's server (a fresh interpreter importing the solvers, ~1 s) outlives a short script
    # that started it; it inherits the script's stderr, which stays open until it exits
    code = "import time\nfrom ldpopt.problems import worker\nworker.start_in_background()\ntime.sleep(0.2)\n"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)}
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, cwd=ROOT,
                          timeout=120)
    assert proc.returncode == 0 and proc.stderr == "" and proc.stdout == "", proc.stderr


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform")
def test_a_limited_solve_after_an_in_process_clarabel_solve_returns_its_answer():
    # Clarabel's thread pool, started in this process by a solve without a limit, is never forked:
    # the limited solve's Clarabel runs in the worker's child (here: a subprocess, a fresh process)
    out = _run("""
        import json, time, warnings
        import cvxpy as cp, numpy as np
        from ldpopt import Estimate
        from ldpopt.problems import Problem
        warnings.simplefilter("ignore")
        rng = np.random.default_rng(3)
        d = 200
        est = Estimate.from_counts(rng.multinomial(5000, rng.dirichlet(np.ones(d))), n=5000, epsilon=2.0,
                                   p=0.7, q=0.3 / (d - 1))
        M = rng.standard_normal((d, d)); Q = M @ M.T / d + 1e-2 * np.eye(d); Q = (Q + Q.T) / 2
        obj = lambda f, e: cp.sum_squares(f - e.f_tilde) + cp.quad_form(f, Q)
        Problem(est, obj).solve(solver="CLARABEL")                 # in this process: its pool starts
        x = cp.Variable(d); cp.Problem(cp.Minimize(cp.sum_squares(x - est.f_tilde) + cp.quad_form(x, Q)),
                                       [x >= 0, cp.sum(x) == 1]).solve(solver="CLARABEL")
        ref = x.value
        t0 = time.perf_counter()
        sol = Problem(est, obj).solve(time_limit=12.0, progress=False)
        print(json.dumps({"status": sol.status, "seconds": time.perf_counter() - t0,
                          "err": float(np.max(np.abs(sol.f - ref)))}))
    """)
    assert out["status"] == "optimal" and out["err"] <= 1e-4
    assert out["seconds"] < 8.0  # hung before, returning time_limit after 12 s (3.4 s now, the worker's start included)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork on this platform")
def test_standing_child_called_from_several_threads_answers_each():
    from concurrent.futures import ThreadPoolExecutor

    from ldpopt.problems.solvers.isolate import standing

    args = [(np.arange(k, k + 50.0), np.ones(50), 1.0) for k in range(12)]
    with ThreadPoolExecutor(4) as pool:  # a call made while the child is busy runs in a child of its own
        got = list(pool.map(lambda a: standing(_weighted, a, 30.0, "t")[0], args))
    assert got == [_weighted(*a)[0] for a in args]


@settings(max_examples=examples(6), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**31 - 1), d=st.sampled_from([10, 60, 300]))
def test_a_clarabel_answer_inverted_here_is_the_one_inverted_in_the_child(seed, d, isolation_path, monkeypatch):
    """Clarabel's own answer travels back as plain data and cvxpy's inversion runs in this process
    (:data:`.isolate.RAW_ANSWER`): on families drawn from the grammar (any cone, second constraints,
    failures included) the status, value, point and every constraint's dual are bit for bit those of
    the inversion run in the child with the inverse data sent there."""
    import warnings

    from problem_strategies import draw_family

    from ldpopt.problems.solvers import isolate

    def solved(raw: bool):
        monkeypatch.setattr(isolate, "RAW_ANSWER", frozenset({"CLARABEL"} if raw else ()))
        prob, f, _ = draw_family(seed, d).cvxpy_problem()
        data, chain, inverse = prob.get_problem_data("CLARABEL", solver_opts={})
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                isolate.solved_in_worker(prob, data, chain, inverse, False, {}, 60.0, "Clarabel")
            except Exception as exc:  # noqa: BLE001 - a failed solve: its text compared
                return (type(exc).__name__, str(exc))
        duals = [None if c.dual_value is None else np.asarray(c.dual_value).tolist() for c in prob.constraints]
        return (prob.status, prob.value, None if f.value is None else f.value.tolist(), duals,
                prob.solver_stats.num_iters)

    here = solved(True)
    assert here == solved(False)
    assert isinstance(here[0], str)
