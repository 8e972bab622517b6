"""The user's call ``Problem(est, obj, [Simplex()]).solve()`` at d = 42,178 against the fastest cvxpy
route of each objective, one process.

    python benchmarks/bench_user_call.py            # cls, weighted MLE, binomial, multinomial + references
    python benchmarks/bench_user_call.py --no-piqp  # the ldpopt calls only (e.g. to compare commits)
    python benchmarks/bench_user_call.py --subset   # the same with one SubsetSum (bench_table's block)
    python benchmarks/bench_user_call.py --d 1000000 --rows 10 --no-piqp   # d = 10⁶ (n = 10⁷), 10 rows

Data as ``bench_structured.py --ref-only``: OUE, ε = 1, Zipf(1.5), n = 10⁶, d = 42,178. CPU seconds
(``time.process_time``, all threads; at d ≥ 10⁶ the best of 3 single calls); GRR counts (``bench_structured.grr_estimate``) for the
multinomial. References (the fastest route of ``benchmarks/bench_policy.py`` / ``bench_table.py``):
PIQP for cls, Clarabel for the weighted MLE, the sequential-QP route ``"SQP"`` (over PIQP) for the
exact likelihoods, whose exponential cones Clarabel fails and SCS takes 16–50 s on. ldpopt calls: the minimum over 7 blocks of 20 calls of the
per-call mean (a millisecond call on a shared 2-core machine: a single call's CPU time varies ±30 %
with the load); ``Problem.solve`` is the whole user's call (Problem construction, the structured
solver with its certificate, ldpopt's check of the Solution), ``solve_structured`` the solver alone.
References: ``Problem(...).solve(solver=...)`` (build + compile + solve + ldpopt's check), best of 2.
Prints one line per number and the ratio reference ÷ the user's call per objective; writes
``benchmarks/results/user_call.json`` (``user_call_cold.json`` with ``--cold``).

Allocator state: glibc serves a d = 42,178 float64 temporary (337 kB) by ``mmap`` until the process
has freed a larger block, and afterwards trims its heap whenever more than twice the largest freed
block is free — so a fresh process re-faults every temporary of every call (~0.5–1 ms per call
here), while one that has once freed a ≥ 32 MB array (any research session; ``--cold`` not given:
this script does so first) keeps them. Both states are real; the default is the warm one.

To compare commits: ``--src CHECKOUT`` imports ldpopt from that checkout; run it for each, back to
back.
"""

from __future__ import annotations

import sys
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
from benchmarks import _harness as H  # noqa: E402


def per_call_cpu(fn, blocks: int = 7, inner: int = 20) -> float:
    """min over ``blocks`` of the mean CPU seconds of ``inner`` calls (after one warm-up call)."""
    fn()
    best = float("inf")
    for _ in range(blocks):
        t = H.cpu_clock()
        for _ in range(inner):
            fn()
        best = min(best, (H.cpu_clock() - t) / inner)
    return best


def parser():
    ap = H.parser(__doc__)
    ap.add_argument("--no-piqp", action="store_true", help="skip the PIQP solve")
    ap.add_argument("--cold", action="store_true", help="do not warm glibc's allocator first (docstring)")
    ap.add_argument("--src", default=str(ROOT), help="the checkout to import ldpopt from (default: this one)")
    ap.add_argument("--subset", action="store_true",
                    help="add one SubsetSum: a disjoint block of d/2 random values at its true total (bench_table's)")
    ap.add_argument("--d", type=int, default=42_178, help="domain size (n = 10⁷ from d = 10⁶ on, else 10⁶)")
    ap.add_argument("--rows", type=int, default=None,
                    help="this many disjoint SubsetSum rows (bench_structured.subsets) instead of --subset's one")
    return ap


def run(quick: bool = False, **opts) -> dict:
    """``--quick``: d = 1,000 (with the references). Results are written for this checkout only."""
    args = H.options(parser(), "bench_user_call.py", quick, opts)
    asked_d = args.d  # the file's name: a quick run writes the row's file (in results/quick or --out)
    if args.quick:
        args.d = 1_000  # the references too: --verify reads the ratio of the quick run
    sys.path.insert(0, args.src)
    from benchmarks.bench_structured import grr_estimate, oue_estimate, subsets
    if not args.cold:
        import numpy as np

        block = np.ones(4 * 10**6)  # 32 MB, freed at once: raises glibc's dynamic mmap/trim thresholds
        del block
    import ldpopt
    from ldpopt.problems import Problem, Simplex
    from ldpopt.problems.solvers.structured import solve_structured

    d, n = args.d, 10**7 if args.d >= 10**6 else 10**6
    oue, true = oue_estimate(d, n)
    grr = grr_estimate(d, n)[0]
    refs = {"cls": "PIQP", "weighted-mle": "CLARABEL", "binomial": "SQP", "multinomial": "SQP"}
    print(f"ldpopt from {ldpopt.__file__} ({'cold' if args.cold else 'warm'} allocator)")
    out, rows = {}, []
    n_rows = args.rows if args.rows is not None else int(args.subset)
    reps = (1, 2) if args.quick else (7, 20) if d < 10**6 else (3, 1)  # 0.1-0.3 s calls at d = 10⁶: best of 3
    cons = [Simplex(), *subsets(d, true, n_rows)] if n_rows else [Simplex()]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for obj, ref in refs.items():
            est = grr if obj == "multinomial" else oue
            sol = Problem(est, obj, cons).solve()
            assert sol.status == "optimal" and sol.solver == "LDPOPT-STRUCTURED", (obj, sol.status, sol.solver)
            row = {"objective": obj, "d": d, "n": n, "allocator": "cold" if args.cold else "warm",
                   "constraints": f"simplex + {n_rows} SubsetSum" if n_rows else "simplex",
                   "problem_solve_cpu_s": per_call_cpu(lambda: Problem(est, obj, cons).solve(), *reps),
                   "solve_structured_cpu_s": per_call_cpu(lambda: solve_structured(est, obj, cons), *reps)}
            out[f"{obj} Problem.solve"] = row["problem_solve_cpu_s"]
            out[f"{obj} solve_structured"] = row["solve_structured_cpu_s"]
            if not args.no_piqp:
                t, rsol = H.best_cpu(lambda: Problem(est, obj, cons).solve(solver=ref), 2)
                out[f"{obj} {ref}"] = t
                row.update(reference=rsol.solver, reference_status=rsol.status, reference_cpu_s=t,
                           ratio=t / row["problem_solve_cpu_s"])
            rows.append(row)
    for k, v in out.items():
        print(f"{k:30s} {v * 1e3:9.3f} ms CPU")
    for row in rows:
        if "ratio" in row:
            print(f"{'ratio ' + row['reference'] + ' / ' + row['objective']:30s} {row['ratio']:9.0f}x "
                  f"({row['reference']} {row['reference_status']})")
    if args.src != str(ROOT):
        return {"rows": rows}
    name = ("user_call" + (f"_d{asked_d}" if asked_d != 42_178 else "") + (f"_rows{n_rows}" if n_rows > 1 else "_subset" if n_rows else "")
            + ("_cold" if args.cold else ""))
    return H.save(name, args, {"rows": rows})


if __name__ == "__main__":
    H.cli(parser(), run)
