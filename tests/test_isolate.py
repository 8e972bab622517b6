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
from pathlib import Path

import numpy as np
import pytest

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


def test_isolated_reports_results_errors_and_the_limit():
    assert isolated(lambda: {"pid": os.getpid()}, 10.0, "x")["pid"] != os.getpid()
    with pytest.raises(SolverTimedOut, match="time limit"):
        isolated(lambda: __import__("time").sleep(30), 0.2, "sleeper")
    with pytest.raises(SolverCrashed, match="exited"):
        isolated(lambda: os._exit(3), 10.0, "quitter")
    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        isolated(lambda: 1 / 0, 10.0, "divider")


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
