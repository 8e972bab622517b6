"""Objective × constraint set × solver × d, in one process, side by side.

    python benchmarks/bench_table.py            # d ∈ {1e3, 1e4, 42,178, 1e5, 1e6} (~5 min)
    python benchmarks/bench_table.py --quick    # d ∈ {1e3, 1e4} (seconds)
    python benchmarks/bench_table.py --d 42178 --objective binomial multinomial --constraints simplex
                                                 # only those rows

Data: OUE, ε = 1, Zipf(1.5) (``bench_structured.oue_estimate``), n = 10⁶ (10⁷ at d = 10⁶); GRR
counts (``bench_structured.grr_estimate``) for the multinomial; the SubsetSum row is one disjoint
block of d/2 random values at its true total. Per cell: CPU seconds (``time.process_time``, all
threads; after one untimed solve per objective and solver at d = 50, so that no cell carries the
process's one-time costs) and wall seconds of the whole call — ``Problem(...)`` build +
``solve(solver=...)`` for the cvxpy solvers and ``"SQP"``, and the user's own call
``Problem(...).solve()`` for LDPOPT-STRUCTURED (the default route: the structured solver, its
certificate and ldpopt's check of the Solution) — one run each; the status ldpopt reports; max_v |f − f°| with f°
the structured solver's certified optimum (its certificate bounds max_v |f° − f*| to rounding); the
max constraint violation in frequency units (the certificate's primal violation: bounds, Σ f, rows);
and the ratio cvxpy CPU / structured CPU (on the structured row: the fastest cvxpy / SQP cell of
the same problem ÷ structured, the structured solver's speed-up). cvxpy solvers and the SQP route run
up to d = 10⁵; at 10⁶ their cells are rows saying "not run" and why (PIQP takes 14 s and Clarabel
54 s CPU at 10⁶ on the simplex alone; the SQP route solves 2–3 of those QPs).
Results: benchmarks/results/table.json (with the machine and its load average; a run with any
filter writes table_subset.json instead); a markdown table on stdout.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchmarks import _harness as H  # noqa: E402
from benchmarks.bench_structured import grr_estimate, oue_estimate, subsets  # noqa: E402
from ldpopt.problems import Problem, Simplex  # noqa: E402
from ldpopt.problems.check.certificate import certificate  # noqa: E402
from ldpopt.problems.problem import STRUCTURED  # noqa: E402
from ldpopt.problems.solvers.structured import solve_structured  # noqa: E402

SOLVERS = {"cls": ("PIQP", "CLARABEL"), "weighted-mle": ("CLARABEL",), "binomial": ("SQP",),
           "multinomial": ("SQP",)}  # the likelihoods: the route policy.py takes (Clarabel/SCS fail or take 10-30 s)
OBJECTIVES = ("cls", "weighted-mle", "binomial", "multinomial")
CVXPY_MAX_D = 100_000
NOT_RUN = {"PIQP": "PIQP takes ~14 s CPU on the simplex alone at d = 10⁶",
           "CLARABEL": "Clarabel takes ~54 s CPU on the simplex alone at d = 10⁶",
           "SQP": "the SQP route solves 2-3 QPs of PIQP's size (~14 s CPU each at d = 10⁶)"}


def violation(objective, cons, est, f) -> float:
    if not np.all(np.isfinite(f)):
        return float("nan")
    return float(certificate(objective, cons, est, f).primal_violation)


def parser():
    ap = H.parser(__doc__)
    ap.add_argument("--d", type=int, nargs="+", help="only these domain sizes")
    ap.add_argument("--objective", nargs="+", choices=OBJECTIVES, help="only these objectives")
    ap.add_argument("--constraints", nargs="+", choices=("simplex", "subset"), help="only these constraint sets")
    return ap


def run(quick: bool = False, **opts) -> dict:
    """``--quick``: d = 300."""
    args = H.options(parser(), "bench_table.py", quick, opts)
    ds = args.d or ([300] if args.quick else [1_000, 10_000, 42_178, 100_000, 1_000_000])
    objectives = args.objective or OBJECTIVES
    csets = args.constraints or ("simplex", "subset")
    _warm_up(objectives)
    rows = []
    print("| objective | constraints | d | solver | CPU s | wall s | status | max abs(f - f°) | max violation | "
          "CPU / structured (structured row: fastest other / structured) |")
    print("|---|---|---:|---|---:|---:|---|---:|---:|---:|")
    for d in ds:
        n = 10**7 if d >= 10**6 else 10**6
        oue, true = oue_estimate(d, n)
        grr = grr_estimate(d, n)[0] if "multinomial" in objectives else None
        for cname, cons in (("simplex", None), ("simplex + SubsetSum", [Simplex(), *subsets(d, true, 1)])):
            if ("simplex" if cons is None else "subset") not in csets:
                continue
            for objective in objectives:
                est = grr if objective == "multinomial" else oue
                with warnings.catch_warnings():  # the user's call: Problem(...).solve() → the structured route
                    warnings.simplefilter("ignore")
                    r, w, c = H.timed(lambda: Problem(est, objective, cons).solve())
                ref = r.f
                if r.solver != STRUCTURED:  # the structured solver did not pass: say who answered
                    r.status = f"{r.status} (by {r.solver}: structured did not pass)"
                cells = []
                for name in SOLVERS[objective]:
                    if d > CVXPY_MAX_D:
                        cells.append((name, np.nan, np.nan, f"not run ({NOT_RUN[name]})", np.nan, np.nan))
                        continue
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        sol, ws, cs = H.timed(lambda: Problem(est, objective, cons).solve(solver=name))
                    diff = float(np.max(np.abs(sol.f - ref))) if np.all(np.isfinite(sol.f)) else float("nan")
                    cells.append((sol.solver, cs, ws, sol.status, diff, violation(objective, cons, est, sol.f)))
                run_cpu = [cs for _, cs, *_ in cells if np.isfinite(cs)]
                speedup = min(run_cpu) / c if run_cpu else np.nan  # fastest cvxpy / SQP ÷ structured
                cells.insert(0, ("LDPOPT-STRUCTURED", c, w, r.status, 0.0, violation(objective, cons, est, r.f)))
                for solver, cs, ws, status, diff, viol in cells:
                    ratio = speedup if solver == "LDPOPT-STRUCTURED" else cs / c
                    row = {"objective": objective, "constraints": cname, "d": d, "solver": solver, "cpu_s": cs,
                           "wall_s": ws, "status": status, "max_abs_diff_to_certified": diff,
                           "max_violation": viol, "cpu_ratio_to_structured": cs / c,
                           "structured_speedup_vs_fastest": speedup if solver == "LDPOPT-STRUCTURED" else None}
                    rows.append(row)
                    if np.isfinite(cs):
                        print(f"| {objective} | {cname} | {d:,} | {solver} | {cs:.3g} | {ws:.3g} | {status} | "
                              f"{diff:.1e} | {viol:.1e} | {_ratio(ratio, solver)} |", flush=True)
                    else:
                        print(f"| {objective} | {cname} | {d:,} | {solver} | — | — | {status} | — | — | — |",
                              flush=True)
    # a filtered run must not overwrite the full table's results
    filtered = bool(args.d or args.objective or args.constraints)
    return H.save("table_subset" if filtered else "table", args, {"rows": rows})


def _warm_up(objectives):
    """One untimed solve per (objective, solver) at d = 50: the one-time costs of a process (lazy
    imports of the certificate, cvxpy's solver interfaces) otherwise land in whichever cell comes
    first — in a filtered run, the cell being measured."""
    est, _ = oue_estimate(50, 10**5)
    grr = grr_estimate(50, 10**5)[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for objective in objectives:
            e = grr if objective == "multinomial" else est
            solve_structured(e, objective, None)
            Problem(e, objective, Simplex()).solve()
            for name in SOLVERS[objective]:
                Problem(e, objective).solve(solver=name)


def _ratio(x, solver) -> str:
    if not np.isfinite(x):
        return "—"
    return f"**{x:.0f}×**" if solver == "LDPOPT-STRUCTURED" else f"{x:.0f}"


if __name__ == "__main__":
    H.cli(parser(), run)
