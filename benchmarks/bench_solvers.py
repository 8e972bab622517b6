"""The closed forms against cvxpy solving the same convex problem.

Pairs (Wang et al. arXiv §3.3–§3.5, App. A/B; NDSS 2020 §IV-C/D):

* CLS, argmin ‖f − f̃‖² on the simplex (``Problem(est, "cls")``) vs Norm-Sub (``postprocess(est,
  "norm-sub")``): OSQP, Clarabel, SCS (ECOS when installed).
* weighted MLE of Eq. 13 (``Problem(est, "weighted-mle")``, a second-order-cone program) vs MLE-Apx:
  Clarabel, SCS (ECOS when installed). OSQP cannot do the cone.

Estimate: OUE, ε = 1, Zipf(s = 1.5) true counts (``_harness.zipf_counts``), n = max(10⁶, 10·d), support
counts from the fast path ``simulate(exact=False)`` with a fixed seed. d = 10³, 42,178, 10⁵, 10⁶.

Each (d, objective, solver) runs in a fresh child process under ``--solver-timeout`` seconds
(default 300; past it the row says "> timeout"), and RSS limits (``_harness.run_process``). Inside
the child, side by side: the closed form is timed k times before the solve and k times after it
(ABA, median of all), then the solver time is the whole route a user takes —
``Problem(...)`` (cvxpy build) + ``.solve(solver)`` (canonicalisation + the solver) — in wall time
(perf_counter) and CPU time (process_time, all threads of the process). Ratios are solver ÷ closed form
from the same process. Solver options are ldpopt's defaults (``DEFAULT_SOLVER_OPTIONS``: OSQP
eps 1e-10 + polishing, Clarabel gaps 1e-10) and ``ldpopt.verify``'s for SCS (eps 1e-9).

Agreement: max_v |f_closed − f_solver| against the tolerance ``ldpopt.verify.check_equivalence``
derives from the solver's stopping tolerances (tol_f = √(2(tol_J + max(J_s − J_c, 0))/μ), μ the
strong-convexity modulus; see ``ldpopt/verify.py``), computed here the same way without a second solve.

Also run as a worker: ``python benchmarks/bench_solvers.py --worker '<json>'``.
"""

from __future__ import annotations

import json
import math
import os
import sys
import tempfile
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _harness as H  # noqa: E402

EPS = 1.0
DS = (1_000, 42_178, 100_000, 1_000_000)
DS_QUICK = (64, 300)
CLOSED = {"cls": "norm-sub", "weighted-mle": "mle-apx"}
SOLVERS = {"cls": ("OSQP", "CLARABEL", "SCS", "ECOS"), "weighted-mle": ("CLARABEL", "SCS", "ECOS")}


def n_for(d: int) -> int:
    return max(10**6, 10 * d)


def _installed() -> list[str]:
    import cvxpy as cp

    return list(cp.installed_solvers())


def plan(quick: bool) -> list[dict]:
    import cvxpy as cp

    inst = set(cp.installed_solvers())
    rows = []
    for d in (DS_QUICK if quick else DS):
        for obj, solvers in SOLVERS.items():
            for s in solvers:
                if s in inst:
                    rows.append(dict(d=d, n=10**4 if quick else n_for(d), objective=obj, closed=CLOSED[obj], solver=s))
    return rows


def key(r: dict) -> tuple:
    return (r["d"], r["objective"], r["solver"])


# -- the child ------------------------------------------------------------------------------------
def measure_inproc(cfg: dict) -> dict:
    """Closed form (ABA, k each side) and one solve, in this process; agreement and tolerance."""
    import ldpopt
    from ldpopt import verify
    from ldpopt.problems import Problem
    from ldpopt.problems.objectives.builtins import make_objective

    counts = np.load(cfg["counts"]) if "counts" in cfg else H.zipf_counts(cfg["d"], cfg["n"])
    est = ldpopt.oracles.get("oue", epsilon=EPS, d=cfg["d"]).simulate(counts, cfg["seed"], exact=False)
    k = cfg.get("k", 5)
    cw, cc = [], []

    def closed_runs():
        f = None
        for _ in range(k):
            f, w, c = H.timed(lambda: ldpopt.postprocess(est, cfg["closed"]))
            cw.append(w)
            cc.append(c)
        return f

    f_c = closed_runs()
    obj = make_objective(cfg["objective"])
    # the route a user takes: build the cvxpy problem, then solve (canonicalisation + solver)
    problem, bw, bc = H.timed(lambda: Problem(est, obj))
    opts = dict(verify._SCS_OPTS) if cfg["solver"] == "SCS" else {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sol, sw, sc = H.timed(lambda: problem.solve(solver=cfg["solver"], **opts))
    closed_runs()
    out = {"status": sol.status, "closed_seconds": float(np.median(cw)), "closed_cpu": float(np.median(cc)),
           "closed_all": cw, "solver_seconds": bw + sw, "solver_cpu": bc + sc, "build_seconds": bw,
           "compile_seconds": sol.compile_time, "solve_seconds": sol.solve_time,
           "iterations": sol.iterations, "max_abs_diff": math.nan, "tol_f": math.nan,
           "objective_gap": math.nan, "objective_tol": math.nan}
    if sol.status in ("optimal", "optimal_inaccurate") and np.all(np.isfinite(sol.f)):
        # the tolerance of ldpopt.verify.check_equivalence, without a second solve
        j_c, j_s = obj.value(f_c, est), obj.value(sol.f, est)
        a, r, _ = verify._solver_tolerance(cfg["solver"], obj)
        g = obj.gradient(f_c, est)
        lam = verify.tolerances.simplex_kkt(g, f_c, scale=verify._gradient_scale(obj, est))["multiplier"]
        infeas = abs(lam) * abs(float(np.sum(sol.f)) - 1.0) + float(np.max(np.abs(g - lam))) * float(
            np.sum(np.maximum(-sol.f, 0.0)))
        tol_j = 10.0 * (a + r * abs(float(problem.cvxpy_problem.value))) / problem.multiplier + infeas
        hess = verify._hessian_diag(obj, f_c, est)
        pos = hess[np.isfinite(hess) & (hess > 0)]
        mu = float(np.min(pos)) if pos.size else 0.0
        tol_f = (math.sqrt(2.0 * (tol_j + max(j_s - j_c, 0.0)) / mu) if mu > 0 else math.inf) + 1e-9
        out.update(max_abs_diff=float(np.max(np.abs(f_c - sol.f))), tol_f=tol_f, objective_gap=j_c - j_s,
                   objective_tol=tol_j)
    return out


# -- the section ----------------------------------------------------------------------------------
def parser():
    ap = H.parser(__doc__)
    ap.add_argument("--solver-timeout", type=float, default=300.0,
                    help="seconds before one solve (its own process) is stopped (default 300)")
    ap.add_argument("--resume", action="store_true",
                    help="keep the finished solves in OUT/solvers.jsonl, measure only the rest")
    return ap


def measure(s: dict, tmp: Path, timeout: float, inproc: bool) -> dict:
    row = dict(s, status="", error="", loadavg_1min=os.getloadavg()[0], maxrss_mb=math.nan, timeout=timeout)
    cfg = dict(s, seed=12345, k=3 if s["d"] >= 10**6 else 5)
    if inproc:
        try:
            row.update(measure_inproc(cfg))
        except Exception as e:  # noqa: BLE001 — a smoke run reports, never stops
            row.update(status="error", error=f"{type(e).__name__}: {e}")
        return row
    cfg["counts"] = str(H.counts_file(s["d"], s["n"], tmp))
    H.wait_for_memory(1024, max_wait=120)
    r = H.run_process([sys.executable, str(Path(__file__).resolve()), "--worker", json.dumps(cfg)],
                      timeout=timeout)
    row["maxrss_mb"] = r.maxrss_mb
    row["process_wall"] = r.wall
    if r.status == "ok":
        row.update(r.payload)
    else:
        row["status"] = r.status
        row["error"] = {"timeout": f"> {timeout:.0f} s (stopped)",
                        "mem-pressure": f"stopped at RSS {r.maxrss_mb / 1024:.1f} GB: machine low on memory"
                        }.get(r.status, r.error or r.status)
    return row


def run(quick: bool = False, **opts) -> dict:
    opts = H.options(parser(), "bench_solvers.py", quick, opts)
    journal = H.Journal(opts, "solvers", key)
    timeout = opts.solver_timeout
    rows = []
    with tempfile.TemporaryDirectory(prefix="ldpopt-bench-") as tmp:
        for s in plan(opts.quick):
            if (row := journal.get(s)) is not None:
                rows.append(row)
                continue
            row = measure(s, Path(tmp), timeout, inproc=opts.quick)
            rows.append(row)
            journal.add(row)
            print(f"  d={row['d']:>8} {row['objective']:>12} {row['solver']:>8}: {row['status']:>8} "
                  f"closed {H.fmt_seconds(row.get('closed_seconds'))} solver "
                  f"{H.fmt_seconds(row.get('solver_seconds'))} diff {row.get('max_abs_diff', math.nan):.1e} "
                  f"(tol {row.get('tol_f', math.nan):.1e}) {row['error']}", flush=True)
    return H.save("solvers", opts, {"epsilon": EPS, "oracle": "oue", "zipf_s": 1.5, "timeout": timeout,
                                    "rows": rows, "installed_solvers": _installed()})


if __name__ == "__main__":
    H.main(parser(), run, lambda cfg: print(json.dumps(measure_inproc(cfg), default=float)))
