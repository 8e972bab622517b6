"""Faults injected into the solvers: an exception, a segmentation fault and a hang, each a module-level
function of this small module, so that one patched in this process reaches the worker's child by
reference (the child imports this module, not the test file that patched it)."""

from __future__ import annotations

import ctypes
import functools
import os
import time
import types

import scipy.sparse as sp
import scipy.sparse.linalg as sla

from ldpopt.problems.solvers import isolate

#: the real run_solver, kept before any test patches it (the child's own import reads it unpatched too)
RUN_SOLVER = isolate.run_solver


def as_library(fn):
    """``fn`` with its code filed under scipy's: its frame reads as a solver's own, not as the user's
    (:func:`.isolate.user_code_raised` lets an exception through the user's code propagate, and a
    function of the tests is the user's code)."""
    code = fn.__code__.replace(co_filename=sla.__file__)
    return types.FunctionType(code, fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__)


@as_library
def raises_runtime_error(*args, **kwargs):
    """A solver's RuntimeError (scipy's factorisation of a singular matrix)."""
    return sla.splu(sp.csc_matrix((2, 2)))


_SEGFAULT = functools.partial(ctypes.string_at, 0)  # a read at address 0: SIGSEGV in the process that runs it


def segfaults(*args, **kwargs):
    _SEGFAULT()


def hangs(*args, **kwargs):
    time.sleep(1000)


#: each fault by name
FAULTS = {"exception": raises_runtime_error, "segfault": segfaults, "hang": hangs}


def faulty(fault):
    """The function that injects ``fault`` (picklable by reference)."""
    return FAULTS[fault]


def _run_solver_unless(name, fault, solver, *args):
    """:func:`.isolate.run_solver` with ``fault`` injected when ``solver`` is ``name``'s."""
    if solver.name() == name:
        FAULTS[fault]()
    return RUN_SOLVER(solver, *args)


def run_solver_faulted(name, fault):
    """A stand-in for :func:`.isolate.run_solver` that faults for solver ``name`` only (picklable)."""
    return functools.partial(_run_solver_unless, name, fault)


def live_children(pid: int) -> list[int]:
    """The children of ``pid`` still running (not zombies), from Linux's /proc."""
    out = []
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for t in tasks:
        try:
            with open(f"/proc/{pid}/task/{t}/children") as fh:
                kids = [int(k) for k in fh.read().split()]
        except OSError:
            continue
        for k in kids:
            try:
                with open(f"/proc/{k}/stat") as fh:
                    state = fh.read().rsplit(")", 1)[1].split()[0]
            except OSError:
                continue
            if state != "Z":
                out.append(k)
    return out


def no_orphans(before: set[int], wait: float = 3.0) -> tuple[bool, list[int], list[int]]:
    """Whether, within ``wait`` seconds, this process has no live child but those of ``before`` and
    the worker's server (running or starting), and the server no live child but those lent to this
    process between its calls or waiting for one (at most ``worker.LENT_MAX`` + ``worker.IDLE_MAX``):
    (that, this process's new children, the server's)."""
    from ldpopt.problems import worker

    t0 = time.perf_counter()
    while True:
        server = worker.server_pid() or getattr(worker._SERVER.proc, "pid", None)
        mine = [k for k in live_children(os.getpid()) if k != server and k not in before]
        theirs = live_children(server) if server is not None else []
        ok = not mine and len(theirs) <= worker.LENT_MAX + worker.IDLE_MAX
        if ok or time.perf_counter() - t0 > wait:
            return ok, mine, theirs
        time.sleep(0.02)


# -- one faulted call, the same in a test and in a fresh process -------------------------------------

#: the chain named for each faulted cvxpy solver: it first, then one that answers
CHAINS = {"CLARABEL": ["CLARABEL", "OSQP"], "OSQP": ["OSQP", "CLARABEL"], "SCS": ["SCS", "CLARABEL"],
          "PIQP": ["PIQP", "CLARABEL"]}
#: every foreign solver a solve calls, and every fault
SOLVERS = ("CLARABEL", "PIQP", "OSQP", "SCS", "HIGHS")
KINDS = ("exception", "segfault", "hang")


def estimate(d: int, seed: int = 0):
    import numpy as np

    import ldpopt

    rng = np.random.default_rng(seed)
    return ldpopt.oracles.get("grr", 1.0, d).simulate(rng.multinomial(20_000, rng.dirichlet(np.ones(d))), rng=seed)


def conflicting_rows(d: int = 30, seed: int = 0):
    """The simplex and six rows A f <= b that no point of it meets (b below each row's smallest
    entry): the exact pre-check calls HiGHS (:func:`.farkas.highs`) for the certificate."""
    import numpy as np

    from ldpopt.problems import Simplex

    rng = np.random.default_rng(seed)
    A = rng.uniform(0.5, 1.5, (6, d))
    b = 0.9 * A.min(axis=1)
    return [Simplex(), lambda f, e: A @ f <= b]


def run_case(solver: str, fault: str, hang_limit: float, d: int = 30) -> dict:
    """One ``solve()`` with ``fault`` injected into ``solver`` (HiGHS: the exact feasibility decision's
    LP, on :func:`conflicting_rows`; a cvxpy solver: first of :data:`CHAINS`, on CLS), with a time
    limit ``hang_limit`` for a hang and none otherwise: what the call returned, how long it took, and
    whether a child outlived it."""
    import warnings
    from unittest import mock

    import numpy as np

    from ldpopt.methods.normalize import project_simplex
    from ldpopt.problems import Problem
    from ldpopt.problems.constraints import farkas

    limit = hang_limit if fault == "hang" else None
    est = estimate(d)
    before = set(live_children(os.getpid()))
    if solver == "HIGHS":
        patch = mock.patch.object(farkas, "_linprog", faulty(fault))
        pr, kw = Problem(est, "cls", conflicting_rows(d)), {}
    else:
        patch = mock.patch.object(isolate, "run_solver", run_solver_faulted(solver, fault))
        pr, kw = Problem(est, "cls"), {"solver": CHAINS[solver]}
    with patch, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0 = time.perf_counter()
        sol = pr.solve(time_limit=limit, progress=False, **kw)
        wall = time.perf_counter() - t0
    ok, mine, theirs = no_orphans(before)
    first = sol.attempts[0] if sol.attempts else {}
    err = float(np.max(np.abs(sol.f - project_simplex(est.f_tilde)))) if np.all(np.isfinite(sol.f)) else None
    return {"solver": solver, "fault": fault, "limit": limit, "wall": wall, "status": sol.status,
            "answer_from": sol.solver, "first": [first.get("solver"), first.get("status"), str(first.get("checks"))],
            "error": err, "verified": bool(sol.infeasibility is not None and sol.infeasibility.verified),
            "no_orphans": ok, "left": [mine, theirs], "pid": os.getpid()}


def users_own_solves() -> None:
    """What a user's script may have run in its own process before ``solve()``: cvxpy with Clarabel,
    OSQP, SCS and PIQP, and scipy's HiGHS — a dense PSD quadratic at d = 200 among them, where Clarabel
    starts its thread pool (a small problem does not)."""
    import cvxpy as cp
    import numpy as np
    import scipy.optimize

    x = cp.Variable(20)
    for s in ("CLARABEL", "OSQP", "SCS", "PIQP"):
        cp.Problem(cp.Minimize(cp.sum_squares(x - np.linspace(0, 1, 20))), [cp.sum(x) == 1, x >= 0]).solve(solver=s)
    scipy.optimize.linprog(np.ones(3), A_ub=-np.eye(3), b_ub=-np.ones(3), method="highs")
    rng = np.random.default_rng(3)
    M = rng.standard_normal((200, 200))
    Q = M @ M.T / 200 + 1e-2 * np.eye(200)
    y = cp.Variable(200)
    cp.Problem(cp.Minimize(cp.sum_squares(y - 1 / 200) + cp.quad_form(y, (Q + Q.T) / 2)),
               [y >= 0, cp.sum(y) == 1]).solve(solver="CLARABEL")


def matrix(warm: bool, hang_limit: float) -> dict:
    """Every solver × fault (:func:`run_case`) in this process, after :func:`users_own_solves` when
    ``warm``; then whether this process is clean (:func:`.worker.clean`) and a limited Clarabel solve
    of a small CLS (it hung once after a warm solve: a fork inherited Clarabel's pool)."""
    import warnings

    from ldpopt.problems import Problem, worker

    if warm:
        users_own_solves()
    clean = worker.clean()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0 = time.perf_counter()
        sol = Problem(estimate(30, 3), "cls").solve(solver="CLARABEL", time_limit=10.0, progress=False)
        limited = {"status": sol.status, "wall": time.perf_counter() - t0}
    rows = [run_case(s, k, hang_limit) for s in SOLVERS for k in KINDS]
    return {"clean": clean, "limited": limited, "rows": rows, "pid": os.getpid()}


def clarabel_psd(d: int = 200) -> tuple[str, int, int]:
    """A dense PSD quadratic on the simplex solved by cvxpy + Clarabel where this runs (Clarabel starts
    its thread pool at this size): (cvxpy's status, this process's pid, its OS threads after)."""
    import cvxpy as cp
    import numpy as np

    rng = np.random.default_rng(d)
    M = rng.standard_normal((d, d))
    Q = M @ M.T / d + 1e-2 * np.eye(d)
    y = cp.Variable(d)
    prob = cp.Problem(cp.Minimize(cp.sum_squares(y - 1 / d) + cp.quad_form(y, (Q + Q.T) / 2)), [y >= 0, cp.sum(y) == 1])
    prob.solve(solver="CLARABEL")
    return prob.status, os.getpid(), len(os.listdir(f"/proc/{os.getpid()}/task"))


def pid_and_size(payload):
    """(the serving process's pid, the payload's byte count): what a call through the worker
    measures of where it ran."""
    return os.getpid(), int(getattr(payload, "nbytes", len(payload)))
