"""``solve(time_limit=T)`` bounds the whole call, ldpopt's check included; faults injected per route;
the check's projection on the rows before (dense) and after (sparse).

Four tables, written to ``benchmarks/results/time_limit.json`` and ``.md``:

1. route × problem: T, the call's wall clock, status and solver; "within" is wall ≤ T + max(1 s, 0.1 T).
   Includes the two cases where the check ran past T: CLS on the simplex + the full Monotone chain +
   Fixed(last) = (1 − 1e-15)/d at d = 2,000 (5.8 s for T = 2 s, 51 s for T = 15 s under load), and
   CLS + 2,000 thin user rows (8.6 s for T = 2 s; here: 1,999 equality rows f_i − f_j = b and Σ f = 1,
   the dense projection's 2,000-row cap).
2. route × fault (a solver's exception, a segmentation fault, a hang): the attempt's status, the
   call's status, whether this process is alive after it (it runs them all in turn), wall clock.
   Every foreign solver runs in a child process; ldpopt's own routes (structured, interior point) in
   this one, so only an exception is injected there.
3. foreign solver (Clarabel, PIQP, OSQP, SCS, HiGHS) × fault × cold / warm: each mode in a fresh
   process, "warm" after the user's own solves with every solver in it (Clarabel's thread pool
   started); the faulted attempt, the call's status and answer, whether that process survived and
   left no child behind, T and wall clock (``tests/_faults.py``, which the tests assert on).
4. :func:`ldpopt.problems.check.certificate.project_on_rows` on the points the check met in case 1's
   two problems: the dense lstsq of M Mᵀ it had before (copied below) against the sparse factor.

One repetition per cell (a time limit is a bound, not a mean; on the shared 2-core machine a call
can only run longer, not shorter). Run: ``PYTHONPATH=. python benchmarks/bench_time_limit.py``
(about 2.5 min; table names on the command line — limits, faults,
solver_faults, projection — re-run those only).
"""

from __future__ import annotations

import ctypes
import functools
import json
import os
import platform
import sys
import time
import types
import warnings
from contextlib import ExitStack
from pathlib import Path
from unittest import mock

import cvxpy as cp
import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as sla

import ldpopt
from ldpopt.problems import Fixed, Monotone, Problem, Simplex, SubsetSum
from ldpopt.problems.check import certificate as certificate_module

OUT = Path(__file__).resolve().parent / "results"


def _est(d, seed=0, n=1_000_000):
    rng = np.random.default_rng(seed)
    return ldpopt.oracles.get("grr", 1.0, d).simulate(rng.multinomial(n, rng.dirichlet(np.ones(d))), rng=seed)


def smooth(f, e):
    return cp.sum_squares(f - e.f_tilde) + cp.sum_squares(f[1:] - f[:-1])


def newton(f, e):
    return cp.sum_squares(f - e.f_tilde) + 1e-3 * cp.sum(cp.kl_div(f, np.full(e.d, 1.0 / e.d))) + smooth(f, e)


def chain_fixed(d=2000):
    return Problem(_est(d, 1), "cls", [Simplex(), Monotone(), Fixed([d - 1], (1 - 1e-15) / d)])


def thin_rows(d=4000, k=1999, seed=2):
    """CLS on the simplex + ``k`` user equality rows f_i − f_{i+1} = b (two values each, ``k`` distinct
    random i < d − 1: paths, no cycle, so any float b is consistent), b from a point of the simplex."""
    rng = np.random.default_rng(seed)
    est = _est(d, seed)
    i = rng.choice(d - 1, k, replace=False)
    j = i + 1
    A = sp.csr_matrix((np.r_[np.ones(k), -np.ones(k)], (np.r_[np.arange(k), np.arange(k)], np.r_[i, j])), shape=(k, d))
    base = rng.dirichlet(np.ones(d))
    b = np.asarray(A @ base).ravel()
    return Problem(est, "cls", [Simplex(), lambda f, e: A @ f == b])


#: (route, problem label, builder, solve keywords, T)
CASES = [
    ("default (the chain case)", "CLS + Monotone chain + Fixed(last), d = 2,000", chain_fixed, {}, 2.0),
    ("default (the chain case)", "CLS + Monotone chain + Fixed(last), d = 2,000", chain_fixed, {}, 15.0),
    ("default (the thin rows case)", "CLS + 1,999 thin user rows (+ Σ f = 1: 2,000 rows), d = 4,000", thin_rows, {}, 2.0),
    ("structured", "weighted MLE + 512 disjoint subset sums, d = 10^5",
     lambda: Problem(_est(10**5, 3), "weighted-mle",
                     [Simplex()] + [SubsetSum(np.arange(k, 10**5, 512), 1 / 512) for k in range(512)]), {}, 0.5),
    ("structured", "CLS + Monotone chain, d = 10^6",
     lambda: Problem(_est(10**6, 8), "cls", [Simplex(), Monotone()]), {}, 0.5),
    ("direct QP (Clarabel under a limit)", "CLS + smoothness, simplex, d = 10^4",
     lambda: Problem(_est(10**4, 4), smooth, [Simplex()]), {}, 0.05),
    ("Newton: interior point", "CLS + KL + smoothness, simplex, d = 10^5",
     lambda: Problem(_est(10**5, 5), newton, [Simplex()]), {}, 1.0),
    ("Newton: sequential QP (named)", "multinomial likelihood (GRR), simplex, d = 10^4",
     lambda: Problem(_est(10**4, 6), "multinomial"), {"solver": "SQP"}, 1.0),
    ("structured (the chain case, larger)", "CLS + Monotone chain + Fixed(last), d = 10^5",
     lambda: chain_fixed(10**5), {}, 1.0),
    *[("cvxpy chain: " + name, "CLS + smoothness, simplex, d = 10^5",
       lambda: Problem(_est(10**5, 7), smooth, [Simplex()]), {"solver": name}, 1.0)
      for name in ("PIQP", "CLARABEL", "OSQP", "SCS")],
]


def limits_table():
    rows = []
    for route, label, build, kw, limit in CASES:
        pr = build()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t0 = time.perf_counter()
            sol = pr.solve(time_limit=limit, progress=False, **kw)
            wall = time.perf_counter() - t0
        rows.append({"route": route, "problem": label, "limit_s": limit, "wall_s": round(wall, 3),
                     "within": bool(wall <= limit + max(1.0, 0.1 * limit)), "status": sol.status,
                     "solver": sol.solver})
        print(f"{route:38s} {label:48s} T={limit:5.2f} wall={wall:6.2f} {sol.status} ({sol.solver})", flush=True)
    return rows


# ---- faults

def _as_library(fn):
    """``fn`` filed under scipy's source: its frame reads as a solver's, not as the user's code (an
    exception through the user's code propagates from ``solve()`` by design)."""
    return types.FunctionType(fn.__code__.replace(co_filename=sla.__file__), fn.__globals__, fn.__name__)


@_as_library
def _exception(*args, **kwargs):
    return sla.splu(sp.csc_matrix((2, 2)))  # RuntimeError: Factor is exactly singular


_segv = functools.partial(ctypes.string_at, 0)


def _segfault(*args, **kwargs):
    _segv()


def _hang(*args, **kwargs):
    time.sleep(1000)


def _faults():
    from cvxpy.reductions.solvers.conic_solvers.clarabel_conif import CLARABEL

    from ldpopt.problems.solvers import direct_qp, ipm, stall
    from ldpopt.problems.solvers.structured import solver as structured_solver

    def small_cls():
        return Problem(_est(30, n=20_000), "cls")

    def small_smooth():
        return Problem(_est(40, n=20_000), smooth, [Simplex()])

    def small_newton():
        return Problem(_est(40, n=20_000), newton, [Simplex(), SubsetSum(np.arange(0, 40, 3), 0.4)])

    import piqp

    return [
        # route, fault, problem, patches, solve keywords
        ("structured", "exception", small_cls, [(structured_solver, "solve_structured", _exception)], {}),
        ("direct QP (PIQP, child)", "exception", small_smooth, [("dict", direct_qp._BACKENDS, "PIQP", _exception)], {}),
        ("direct QP (PIQP, child)", "segfault", small_smooth, [("dict", direct_qp._BACKENDS, "PIQP", _segfault)], {}),
        ("direct QP (PIQP, child)", "hang", small_smooth,
         [("dict", direct_qp._BACKENDS, "PIQP", _hang)], {"time_limit": 3.0}),
        ("interior point", "exception", small_newton, [(ipm, "_solve", _exception)], {}),
        ("sequential QP (Clarabel QP, child)", "exception", small_newton,
         [(ipm, "_solve", _exception), (CLARABEL, "solve_via_data", _exception)], {}),
        ("sequential QP (Clarabel QP, child)", "segfault", small_newton,
         [(ipm, "_solve", _exception), (CLARABEL, "solve_via_data", _segfault)], {"time_limit": 60.0}),
        ("sequential QP (Clarabel QP, child)", "hang", small_newton,
         [(ipm, "_solve", _exception), (CLARABEL, "solve_via_data", _hang)], {"time_limit": 3.0}),
        ("cvxpy chain (PIQP, child)", "exception", small_cls, [(piqp.SparseSolver, "solve", _exception)],
         {"solver": ["PIQP", "CLARABEL"]}),
        ("cvxpy chain (PIQP, child)", "segfault", small_cls, [(piqp.SparseSolver, "solve", _segfault)],
         {"solver": ["PIQP", "CLARABEL"]}),
        ("cvxpy chain (PIQP, child)", "hang", small_cls, [(piqp.SparseSolver, "solve", _hang)],
         {"solver": ["PIQP", "CLARABEL"], "time_limit": 3.0}),
        # the chain's Clarabel runs under ldpopt's watch (stall.solve_clarabel), not cvxpy's solve_via_data
        ("cvxpy chain (Clarabel, child)", "exception", small_cls,
         [(CLARABEL, "solve_via_data", _exception), (stall, "solve_clarabel", _exception)],
         {"solver": ["CLARABEL", "OSQP"]}),
    ]


def faults_table():
    """Route × fault, injected by patching this process's modules: each isolated call then forks this
    process directly (``worker.forks_directly``), so the patch reaches the child; this process runs no
    solver itself, so it stays clean (asserted: a direct fork of a process holding Clarabel's pool
    would hang)."""
    from ldpopt.problems import worker

    assert worker.clean(), "this process holds a foreign thread pool: a direct fork of it could hang"
    rows = []
    pid = os.getpid()
    real = worker.forks_directly
    worker.forks_directly = lambda: True
    try:
        return _route_faults(rows, pid)
    finally:
        worker.forks_directly = real


def _route_faults(rows, pid):
    for route, fault, build, patches, kw in _faults():
        pr = build()
        with ExitStack() as stack, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for p in patches:
                if p[0] == "dict":
                    stack.enter_context(mock.patch.dict(p[1], {p[2]: p[3]}))
                else:
                    stack.enter_context(mock.patch.object(p[0], p[1], p[2]))
            t0 = time.perf_counter()
            sol = pr.solve(progress=False, **kw)
            wall = time.perf_counter() - t0
        first = [a for a in sol.attempts if a["status"] not in ("optimal",)][:1] or sol.attempts[:1]
        qp = [a["qp_attempts"][0] for a in sol.attempts if a.get("qp_attempts")]
        rows.append({"route": route, "fault": fault, "faulted_attempt": f"{first[0]['solver']}: {first[0]['status']}"
                     + (f" (QP: {qp[0][:60]})" if qp else ""),
                     "call_status": sol.status, "answer_from": sol.solver, "alive": os.getpid() == pid,
                     "limit_s": kw.get("time_limit"), "wall_s": round(wall, 3)})
        print(f"{route:44s} {fault:9s} {rows[-1]['faulted_attempt'][:70]:70s} -> {sol.status} ({sol.solver}) "
              f"{wall:.2f} s", flush=True)
    return rows


# ---- every foreign solver × fault, cold and warm (tests/_faults.py, each mode in a fresh process)

#: a hang's time limit in the solver fault table (seconds)
SOLVER_HANG_T = 3.0


def solver_faults_table():
    """Clarabel, PIQP, OSQP, SCS and HiGHS × an exception, a segmentation fault and a hang, in a fresh
    process ("cold") and in one that first solved with every solver itself ("warm":
    ``_faults.users_own_solves``, Clarabel's thread pool started), by ``tests/_faults.py``'s
    ``matrix``, the code ``tests/test_solve_limits.py`` asserts on. No time limit but on the hang."""
    import subprocess

    tests = Path(__file__).resolve().parent.parent / "tests"
    rows = []
    for warm in (False, True):
        code = (f"import json, sys; sys.path.insert(0, {str(tests)!r}); import _faults; "
                f"print(json.dumps(_faults.matrix(warm={warm}, hang_limit={SOLVER_HANG_T})))")
        env = {**os.environ, "PYTHONPATH": str(tests.parent)}
        proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=900,
                              check=False)
        if proc.returncode != 0:
            raise RuntimeError(f"the {'warm' if warm else 'cold'} process died: {proc.stderr[-2000:]}")
        out = json.loads(proc.stdout.strip().splitlines()[-1])
        for r in out["rows"]:
            first = f"{r['first'][0]}: {r['first'][1]}"
            if r["solver"] == "HIGHS":
                first = f"the decision's LP failed (nothing claimed); first attempt {first}"
            elif r["fault"] == "segfault":
                first += " (SIGSEGV)" if "SIGSEGV" in r["first"][2] else " (no signal named)"
            rows.append({"solver": r["solver"], "fault": r["fault"], "path": "warm" if warm else "cold",
                         "faulted_attempt": first, "call_status": r["status"], "answer_from": r["answer_from"],
                         "alive": r["pid"] == out["pid"], "limit_s": r["limit"], "wall_s": round(r["wall"], 3),
                         "no_orphans": r["no_orphans"], "clean_before": out["clean"]})
            print(f"{rows[-1]['path']:4s} {r['solver']:8s} {r['fault']:9s} {first[:60]:60s} -> {r['status']} "
                  f"({r['answer_from']}) {r['wall']:.2f} s orphans-free={r['no_orphans']}", flush=True)
        rows.append({"solver": "-", "fault": "none", "path": "warm" if warm else "cold",
                     "faulted_attempt": "a limited Clarabel solve (CLS, d = 30, T = 10 s)",
                     "call_status": out["limited"]["status"], "answer_from": "CLARABEL", "alive": True,
                     "limit_s": 10.0, "wall_s": round(out["limited"]["wall"], 3), "no_orphans": True,
                     "clean_before": out["clean"]})
    return rows


# ---- the projection, before and after

def _dense_project(f, A, b, ineq, lo, up):
    """``project_on_rows`` as it was (dense lstsq of M Mᵀ, at most 2,000 rows), for the timing only."""
    from ldpopt._blas import one_thread
    from ldpopt.problems.dual.structure import row_sums

    eps = np.finfo(float).eps
    A = sp.csr_matrix(A)
    absA = abs(A)
    nnz = np.diff(A.indptr)

    def meets(x):
        res = row_sums(A, x) - b
        rnd = 2 * eps * (nnz + 1) * (absA @ np.abs(x) + np.abs(b))
        viol = np.where(ineq, np.maximum(res, 0.0), np.abs(res))
        return res, rnd, bool(np.all(viol <= rnd) and np.all(x >= lo) and np.all(x <= up))

    if meets(f)[2]:
        return f
    f0 = np.clip(f, lo, up)
    res, rnd, ok = meets(f0)
    if ok:
        return f0
    active = ~ineq | (res >= -rnd)
    free = (f0 > lo) & (f0 < up)
    for _ in range(8):
        rows = np.flatnonzero(active)
        cols = np.flatnonzero(free)
        if rows.size == 0 or cols.size == 0 or rows.size > 2000:
            return None
        M = A[rows][:, cols]
        with one_thread(rows.size):
            step, *_ = np.linalg.lstsq((M @ M.T).toarray(), res[rows], rcond=None)
        fh = f0.copy()
        fh[cols] -= M.T @ step
        res_h, rnd_h, ok = meets(fh)
        if ok:
            return fh
        out = (fh < lo) | (fh > up)
        grow = active | (ineq & (res_h > rnd_h))
        if not np.any(out) and np.array_equal(grow, active):
            return None
        f0 = np.where(out, np.clip(fh, lo, up), f0)
        free &= ~out
        active = grow
        res = row_sums(A, f0) - b
    return None


def projection_table():
    rows = []
    for label, build in (("CLS + Monotone chain + Fixed(last), d = 2,000", chain_fixed),
                         ("CLS + 1,999 thin user rows (+ Σ f = 1: 2,000 rows), d = 4,000", thin_rows)):
        seen = []
        real = certificate_module.project_on_rows

        def spy(f, A, b, ineq, lo, up, move=True, deadline=None, real=real, seen=seen):
            out = real(f, A, b, ineq, lo, up, move=move, deadline=deadline)
            if move and not seen:
                seen.append((np.array(f), sp.csr_matrix(A), np.array(b), np.array(ineq), np.array(lo), np.array(up)))
            return out

        with mock.patch.object(certificate_module, "project_on_rows", spy), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            build().solve(progress=False)
        if not seen:
            print(f"{label}: the check made no projection", flush=True)
            continue
        args = seen[0]
        t0 = time.perf_counter()
        new = real(*args)
        t_new = time.perf_counter() - t0
        t0 = time.perf_counter()
        old = _dense_project(*args)
        t_old = time.perf_counter() - t0
        diff = (float(np.max(np.abs(new - old))) if new is not None and old is not None else None)
        # the sparse projection finds a point wherever the dense one did (it may find one where that did not)
        assert new is not None or old is None, (label, "the dense projection found a point, the sparse did not")
        rows.append({"problem": label, "rows": int(args[1].shape[0]), "values": int(args[1].shape[1]),
                     "dense_s": round(t_old, 4), "sparse_s": round(t_new, 4),
                     "max_abs_difference": diff, "sparse_found": new is not None, "dense_found": old is not None})
        print(f"{label}: dense {t_old:.3f} s, sparse {t_new:.4f} s, |difference| {diff}", flush=True)
    return rows


def run(quick: bool = False, **opts) -> dict:
    """The bench's contract (``benchmarks/run.py``): the three tables written to ``results/`` (``--quick``:
    the fault table only, into ``results/quick/``); ``only``: a list of tables to re-run, the others
    kept from the results file."""
    return main(opts.get("only") or (["faults"] if quick else None), OUT / "quick" if quick else OUT)


def main(tables: list[str] | None = None, out_dir: Path = OUT) -> dict:
    """The tables named in ``tables`` (default: the command line's, else all three) into ``out_dir``."""
    args = tables if tables is not None else sys.argv[1:]
    only = args or ["limits", "faults", "solver_faults", "projection"]
    out = {"machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores (shared)",
           "python": platform.python_version(), "command": "PYTHONPATH=. python benchmarks/bench_time_limit.py",
           "loadavg_at_start": [round(x, 2) for x in os.getloadavg()]}
    path = out_dir / "time_limit.json"
    if args and path.exists():  # some tables re-run: the others kept as they were (with their run's command)
        prev = json.loads(path.read_text())
        for key in ("limits", "faults", "solver_faults", "projection"):
            if key not in only and key in prev:
                out[key] = prev[key]
                out.setdefault("kept_from_before", []).append(key)
        out["command"] += " " + " ".join(only)
    if "faults" in only:  # first: its patches reach a direct fork of this process, clean while no route ran
        out["faults"] = faults_table()
    if "limits" in only:
        out["limits"] = limits_table()
    if "solver_faults" in only:
        out["solver_faults"] = solver_faults_table()
    if "projection" in only:
        out["projection"] = projection_table()
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "time_limit.json").write_text(json.dumps(out, indent=1) + "\n")
    md = ["# solve(time_limit=...) and faults (benchmarks/bench_time_limit.py)", "",
          f"{out['machine']}, load average {out['loadavg_at_start']} at the start; one call per cell; "
          f"`{out['command']}`" + (f" (tables kept from an earlier run: {', '.join(out['kept_from_before'])})"
                                   if out.get("kept_from_before") else "") + ".", ""]
    if "limits" in out:
        md += ["| route | problem | T (s) | wall (s) | within T + max(1 s, 10 %) | status | solver |",
               "|---|---|---|---|---|---|---|"]
        md += [f"| {r['route']} | {r['problem']} | {r['limit_s']:g} | {r['wall_s']:.2f} | {r['within']} | "
               f"{r['status']} | {r['solver']} |" for r in out["limits"]]
        md.append("")
    if "faults" in out:
        md += ["| route | fault | faulted attempt | call status | answer from | process alive | T (s) | wall (s) |",
               "|---|---|---|---|---|---|---|---|"]
        md += [f"| {r['route']} | {r['fault']} | {r['faulted_attempt']} | {r['call_status']} | {r['answer_from']} | "
               f"{r['alive']} | {r['limit_s'] if r['limit_s'] is not None else '-'} | {r['wall_s']:.2f} |"
               for r in out["faults"]]
        md.append("")
    if "solver_faults" in out:
        md += [("| solver | fault | cold / warm | faulted attempt | call status | answer from | process alive | "
               "no child left | T (s) | wall (s) |"), "|---|---|---|---|---|---|---|---|---|---|"]
        md += [f"| {r['solver']} | {r['fault']} | {r['path']} | {r['faulted_attempt']} | {r['call_status']} | "
               f"{r['answer_from']} | {r['alive']} | {r['no_orphans']} | "
               f"{r['limit_s'] if r['limit_s'] is not None else '-'} | {r['wall_s']:.2f} |" for r in out["solver_faults"]]
        md.append("")
    if "projection" in out:
        md += ["| problem | rows × values | dense lstsq (s) | sparse (s) | max abs difference |", "|---|---|---|---|---|"]
        md += [f"| {r['problem']} | {r['rows']} × {r['values']} | {r['dense_s']:.4f} | {r['sparse_s']:.4f} | "
               f"{r['max_abs_difference']} |" for r in out["projection"]]
    (out_dir / "time_limit.md").write_text("\n".join(md) + "\n")
    return out


if __name__ == "__main__":
    main()
