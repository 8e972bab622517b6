"""The infeasibility pre-check (``ldpopt.problems.constraints.feasibility``): ``Problem.solve`` on conflicting
built-in constraints at d = 42,178 and 10⁶ (status, conflicting constraints, CPU seconds), and what
the pre-check adds to a feasible solve (the pre-check alone and the whole solve, side by side in
one process; CPU seconds, ``time.process_time``, best of 3).

    python benchmarks/bench_feasibility.py              # d = 42,178 and 10⁶ (~1 min)
    python benchmarks/bench_feasibility.py --d 42178

Data: OUE at ε = 1 on a Dirichlet(1) distribution, n = 10⁶ (support counts drawn exactly). S is
every third value. Results: ``benchmarks/results/feasibility.json``.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import _harness as H  # noqa: E402


def parser():
    ap = H.parser(__doc__)
    ap.add_argument("--d", type=int, nargs="+", default=[42_178, 10**6])
    return ap


def run(quick: bool = False, **opts) -> dict:
    """Writes ``results/feasibility.json``; ``--quick``: d = 300."""
    args = H.options(parser(), "bench_feasibility.py", quick, opts)
    from ldpopt import oracles
    from ldpopt.problems import Box, PartitionTotals, Problem, Simplex, SubsetSum
    from ldpopt.problems.constraints.feasibility import find_infeasibility

    warnings.simplefilter("ignore")
    rows = []
    for d in [300] if args.quick else args.d:
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
                t_solve, sol = H.best_cpu(P.solve, 3)
                t_pre, _ = H.best_cpu(lambda: find_infeasibility(P), 3)
                row = {"d": d, "constraints": name, "objective": objective, "status": sol.status,
                       "conflicting": sol.infeasibility.names if sol.infeasibility is not None else None,
                       "solve_cpu_s": t_solve, "precheck_cpu_s": t_pre}
                print(row, flush=True)
                rows.append(row)
    return H.save("feasibility", args, {"rows": rows})


if __name__ == "__main__":
    H.cli(parser(), run)
