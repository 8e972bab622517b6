"""Time limits per route, and the AOL problems that took PIQP past every limit (or crashed it).

    python benchmarks/bench_routes.py                 # everything below; writes results/routes.json
    python benchmarks/bench_routes.py --only aol      # the two AOL problems on the default route
    python benchmarks/bench_routes.py --only limits   # time_limit=T per route on a slow problem
    python benchmarks/bench_routes.py --only nonsmooth  # objectives with kinks, d = 1,000 and 16,470

The AOL problems (OUE, ε = 1, one draw, seed 1, of the shipped AOL prefixes histogram, d = 120,978;
``ldpopt.datasets``): CLS + 10·Σ(f_{r(i+1)} − f_{r(i)})² along the public ranking r (values by
count, descending) and Σ huber(f − f̃, σ) (σ of Wang et al. Eq. 7), each with the simplex and
SubsetSum(the prefixes starting with "a", their true share, "<=" or "=="). Before: PIQP first on the
QP chain, which ran past 200 s (killed) on the smooth "<=" problem here; an independent check measured
352 s and a segmentation fault on "==", and > 7 min on Huber. Each row: ``Problem(...).solve(time_limit=...)`` in this
process; wall and CPU seconds (this process and its solver child processes), status, solver, attempts.

``limits``: the smooth AOL "<=" problem with each route named (PIQP — no limit of its own, isolated
in a child process — Clarabel, OSQP, SCS, and the default route) at ``time_limit`` = 1 and 3 s: the
wall seconds of the whole ``solve`` beside T (the bound: T + 1 s plus ldpopt's check of the point).
``nonsmooth``: CLS + a term with kinks — total variation 1e-3·Σ|f_{i+1} − f_i|, weighted L1
1e-3·Σ w|f − 1/d| (w uniform in [0.5, 2], seed 3), 1e-2·max(f), Huber with δ = 1e-9 (1e-3·Σ huber(f −
1/d, 1e-9)) — on the simplex, OUE ε = 1, one draw (seed 1) of Retail (d = 16,470) and of its 1,000
most frequent values (d = 1,000): the default route's wall seconds, status, solver, certified bound,
and max |f − f_ref| against Clarabel at 1e-13 on the same expression (solved independently).

Results go to ``benchmarks/results/routes.json`` with the machine, date and command.
"""

from __future__ import annotations

import argparse
import json
import platform
import resource
import sys
import time
import warnings
from pathlib import Path

import cvxpy as cp
import numpy as np

OUT = Path(__file__).resolve().parent / "results" / "routes.json"


def aol_problem(kind: str, sense: str = "<=", d: int | None = None):
    """The AOL reproducer as a ``Problem`` (module docstring); ``d``: the first d values only."""
    from ldpopt import datasets
    from ldpopt.oracles.unary import OUE
    from ldpopt.problems import Problem
    from ldpopt.problems.constraints.base import Simplex, SubsetSum

    ds = datasets.load("aol")
    d = ds.d if d is None else int(d)
    counts, labels = ds.counts[:d], np.asarray(ds.labels[:d]).astype(str)
    oracle = OUE(1.0, d)
    n = int(counts.sum())
    est = oracle.estimate(oracle.sample_counts(counts, np.random.default_rng(1)), n)
    rank = np.argsort(-counts, kind="stable")
    a = np.flatnonzero(np.char.startswith(labels, "a"))
    share = float(counts[a].sum() / n)
    if kind == "smooth":
        def func(f, e):
            return cp.sum_squares(f - e.f_tilde) + 10 * cp.sum_squares(f[rank[1:]] - f[rank[:-1]])
    elif kind == "huber":
        s = float(np.sqrt(est.q * (1 - est.q) / (est.n * (est.p - est.q) ** 2)))

        def func(f, e):
            return cp.sum(cp.huber(f - e.f_tilde, s))
    else:
        raise ValueError(f"kind must be 'smooth' or 'huber', got {kind!r}")
    return Problem(est, func, [Simplex(), SubsetSum(a, share, sense)])


def _cpu() -> float:
    """CPU seconds of this process and of its waited-for children (a solver isolated in a child process)."""
    ch = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + ch.ru_utime + ch.ru_stime


def timed_solve(pr, **kw) -> dict:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t0, c0 = time.perf_counter(), _cpu()
        sol = pr.solve(**kw)
    return {"wall_s": time.perf_counter() - t0, "cpu_s": _cpu() - c0, "status": sol.status,
            "solver": sol.solver, "attempts": [(a.get("solver"), a.get("status")) for a in sol.attempts
                                               if "solver" in a][:8],
            "error_bound": None if sol.checks is None or sol.checks.error_bound is None else float(sol.checks.error_bound)}


def aol_rows(time_limit: float) -> list[dict]:
    rows = []
    for kind in ("smooth", "huber"):
        for sense in ("<=", "=="):
            t0 = time.perf_counter()
            pr = aol_problem(kind, sense)
            build = time.perf_counter() - t0
            row = {"problem": f"aol {kind} {sense}", "build_s": build, "time_limit": time_limit,
                   **timed_solve(pr, time_limit=time_limit, progress=False)}
            print(row, flush=True)
            rows.append(row)
    return rows


def limit_rows(limits=(1.0, 3.0)) -> list[dict]:
    pr = aol_problem("smooth", "<=")
    rows = []
    for solver in ("PIQP", "CLARABEL", "OSQP", "SCS", None):
        for limit in limits:
            row = {"problem": "aol smooth <=", "route": solver or "default", "time_limit": limit,
                   **timed_solve(pr, solver=solver, time_limit=limit, progress=False)}
            print(row, flush=True)
            rows.append(row)
    return rows


def nonsmooth_rows() -> list[dict]:
    from ldpopt import datasets
    from ldpopt.oracles.unary import OUE
    from ldpopt.problems import Problem
    from ldpopt.problems.constraints.base import Simplex

    ds = datasets.load("retail")
    rows = []
    for d in (1000, ds.d):
        counts = np.sort(ds.counts)[::-1][:d]
        oracle = OUE(1.0, d)
        est = oracle.estimate(oracle.sample_counts(counts, np.random.default_rng(1)), int(counts.sum()))
        w = np.random.default_rng(3).uniform(0.5, 2.0, d)
        c = np.full(d, 1.0 / d)
        kinds = {
            "total variation": lambda f, e: cp.sum_squares(f - e.f_tilde) + 1e-3 * cp.norm1(f[1:] - f[:-1]),
            "weighted L1": lambda f, e, w=w, c=c: (cp.sum_squares(f - e.f_tilde)
                                                   + 1e-3 * cp.sum(cp.multiply(w, cp.abs(f - c)))),
            "max": lambda f, e: cp.sum_squares(f - e.f_tilde) + 1e-2 * cp.max(f),
            "huber 1e-9": lambda f, e, c=c: cp.sum_squares(f - e.f_tilde) + 1e-3 * cp.sum(cp.huber(f - c, 1e-9)),
        }
        for name, func in kinds.items():
            pr = Problem(est, func, [Simplex()])
            row = {"objective": f"CLS + {name}", "d": d, "route": pr.objective_route.split(":")[0],
                   **timed_solve(pr, progress=False)}
            x = cp.Variable(d)
            t0 = time.perf_counter()
            cp.Problem(cp.Minimize(func(x, est)), [x >= 0, cp.sum(x) == 1]).solve(
                solver="CLARABEL", tol_gap_abs=1e-13, tol_gap_rel=1e-13, tol_feas=1e-13)
            row["referee_s"] = time.perf_counter() - t0
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                sol = pr.solve(progress=False)
            row["max_abs_diff_ref"] = float(np.max(np.abs(sol.f - x.value)))
            print(row, flush=True)
            rows.append(row)
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", choices=("aol", "limits", "nonsmooth"), default=None)
    ap.add_argument("--time-limit", type=float, default=60.0, help="the AOL rows' time_limit (wall s)")
    args = ap.parse_args(argv)
    result = json.loads(OUT.read_text()) if OUT.exists() else {}
    result.update({"machine": platform.processor() or platform.machine(), "python": platform.python_version(),
                   "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                   "command": "python benchmarks/bench_routes.py " + " ".join(argv or sys.argv[1:])})
    if args.only in (None, "aol"):
        result["aol"] = aol_rows(args.time_limit)
    if args.only in (None, "limits"):
        result["limits"] = limit_rows()
    if args.only in (None, "nonsmooth"):
        result["nonsmooth"] = nonsmooth_rows()
    OUT.write_text(json.dumps(result, indent=1, default=float) + "\n")


def run(quick: bool = False, **opts) -> dict:
    """Entry of ``benchmarks/run.py``: every part, or with ``quick`` the non-smooth rows only (the AOL
    rows and the time limits take minutes); returns what ``results/routes.json`` then holds."""
    main(["--only", "nonsmooth"] if quick else [])
    return json.loads(OUT.read_text())


if __name__ == "__main__":
    main()
