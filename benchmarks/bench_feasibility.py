"""The infeasibility pre-check (``ldpopt.problems.feasibility``): ``Problem.solve`` on conflicting
built-in constraints at d = 42,178 and 10⁶ (status, conflicting constraints, CPU seconds), and what
the pre-check adds to a feasible solve (the pre-check alone and the whole solve, side by side in
one process; CPU seconds, ``time.process_time``, best of 3).

    python benchmarks/bench_feasibility.py              # d = 42,178 and 10⁶ (~1 min)
    python benchmarks/bench_feasibility.py --d 42178

Data: OUE at ε = 1 on a Dirichlet(1) distribution, n = 10⁶ (support counts drawn exactly). S is
every third value. Results: ``benchmarks/results/feasibility.md`` (with ``--write``).
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def _best(fn, k=3):
    out, best = None, np.inf
    for _ in range(k):
        c = time.process_time()
        out = fn()
        best = min(best, time.process_time() - c)
    return out, best


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--d", type=int, nargs="+", default=[42_178, 10**6])
    ap.add_argument("--write", action="store_true", help="write benchmarks/results/feasibility.md")
    args = ap.parse_args(argv)
    from ldpopt import oracles
    from ldpopt.problems import Box, PartitionTotals, Problem, Simplex, SubsetSum
    from ldpopt.problems.feasibility import find_infeasibility

    warnings.simplefilter("ignore")
    lines = ["| d | constraints | objective | status | conflicting | solve() CPU s | pre-check CPU s |",
             "|---|---|---|---|---|---|---|"]
    for d in args.d:
        rng = np.random.default_rng(1)
        o = oracles.get("oue", 1.0, d)
        est = o.estimate(o.sample_counts(rng.multinomial(10**6, rng.dirichlet(np.ones(d))), rng=rng), 10**6)
        S = np.arange(0, d, 3)
        cases = {
            "simplex + SubsetSum(S) = 1.2": [Simplex(), SubsetSum(S, 1.2)],
            "simplex + SubsetSum(S) = -0.1": [Simplex(), SubsetSum(S, -0.1)],
            "simplex + SubsetSum(S) = 1 + 1e-3": [Simplex(), SubsetSum(S, 1 + 1e-3)],
            "simplex + Box(lower = (1 + 1e-6)/d)": [Simplex(), Box(lower=(1 + 1e-6) / d)],
            "simplex + partition totals 0.6, 0.6": [Simplex(), PartitionTotals({"a": S, "b": S[:-1] + 1},
                                                                               {"a": 0.6, "b": 0.6})],
            "simplex + SubsetSum(S) = 0.3 (feasible)": [Simplex(), SubsetSum(S, 0.3)],
            "simplex (feasible)": None,
        }
        for name, cons in cases.items():
            for objective in ("cls", "weighted-mle"):
                P = Problem(est, objective, cons)
                sol, t_solve = _best(P.solve)
                _, t_pre = _best(lambda: find_infeasibility(P))
                names = sol.infeasibility.names if sol.infeasibility is not None else "-"
                row = f"| {d} | {name} | {objective} | {sol.status} | {names} | {t_solve:.4f} | {t_pre:.4f} |"
                print(row, flush=True)
                lines.append(row)
    text = ("Command: `python benchmarks/bench_feasibility.py` (shared 2-core machine; CPU seconds, best of "
            "3, pre-check and solve side by side in one process)\n\n" + "\n".join(lines) + "\n")
    if args.write:
        (Path(__file__).resolve().parent / "results" / "feasibility.md").write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
