"""Disjoint subset sums / partition totals: the structured solver's block path vs PIQP and Clarabel.

    python benchmarks/bench_structured_blocks.py          # d = 10⁴, 42,178, 10⁵, 10⁶ (~3 min)
    python benchmarks/bench_structured_blocks.py --quick  # d = 1,000 (seconds)

Same data and timing rules as ``bench_structured.py`` (OUE, ε = 1, Zipf(1.5), n = 10⁶, 10⁷ at
d ≥ 10⁵; CPU seconds of the whole call, ``time.process_time``): ldpopt ``solve_structured`` with its
certificate (best of 3), the same call with the block path switched off (the general dual method
that answered these problems before, best of 3), cvxpy ``Problem(...).solve(solver=...)`` build +
compile + solve (one run). Constraint sets: one SubsetSum (d/2 random values at their true total) and
a 10-block :class:`PartitionTotals` (10 disjoint random groups covering 80 % of the domain at their
true totals). cls against PIQP and Clarabel; weighted MLE (second-order cones: not a QP) against
Clarabel. At d = 10⁶ only PIQP on cls (Clarabel takes about a minute per solve there and the
weighted MLE's cones more: left out to keep the run short). Results: results/structured_blocks.json.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchmarks import _harness as H  # noqa: E402
from benchmarks._harness import best_cpu  # noqa: E402
from ldpopt.problems import PartitionTotals, Problem, Simplex, SubsetSum  # noqa: E402
from ldpopt.problems.solvers.structured import solve_structured
from ldpopt.problems.solvers.structured import solver as solver_mod


def _general(est, obj, cons):
    """solve_structured with the block path off: the general dual method (Newton on the multipliers)."""
    keep = solver_mod.blocks_fast
    solver_mod.blocks_fast = lambda sep, st: None
    try:
        return solve_structured(est, obj, cons)
    finally:
        solver_mod.blocks_fast = keep


def constraint_sets(d, true, seed=3):
    perm = np.random.default_rng(seed).permutation(d)
    half = perm[: d // 2]
    parts = np.array_split(perm[: int(0.8 * d)], 10)
    groups = {f"g{i}": g for i, g in enumerate(parts)}
    return {"SubsetSum": [Simplex(), SubsetSum(half, float(true[half].sum()))],
            "10-block partition": [Simplex(), PartitionTotals(groups, {k: float(true[g].sum()) for k, g in groups.items()})]}


def run(quick: bool = False, **opts) -> dict:
    """``--quick``: d = 1,000."""
    from benchmarks.bench_structured import oue_estimate

    a = H.options(H.parser(__doc__), "bench_structured_blocks.py", quick, opts)
    sizes = [1000] if quick else [10**4, 42_178, 10**5, 10**6]
    rows = []
    for d in sizes:
        est, true = oue_estimate(d, 10**6 if d < 10**5 else 10**7)
        for label, cons in constraint_sets(d, true).items():
            for obj in ("cls", "weighted-mle"):
                t_s, r = best_cpu(lambda: solve_structured(est, obj, cons), 3)
                t_g, rg = best_cpu(lambda: _general(est, obj, cons), 3)
                row = {"d": d, "n": est.n, "objective": obj, "constraints": label, "ldpopt_cpu_s": t_s,
                       "status": r.status, "kkt_rel": r.kkt_residual, "gap_rel": r.certificate.relative_gap,
                       "iterations": r.iterations, "general_dual_cpu_s": t_g, "general_status": rg.status,
                       "general_max_abs_diff": float(np.max(np.abs(rg.f - r.f)))}
                solvers = (["PIQP", "CLARABEL"] if obj == "cls" else ["CLARABEL"]) if d < 10**6 else \
                    (["PIQP"] if obj == "cls" else [])
                for name in solvers:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        t_c, sol = best_cpu(lambda: Problem(est, obj, cons).solve(solver=name), 1)
                    row[name] = {"cpu_s": t_c, "status": sol.status, "ratio": t_c / t_s,
                                 "max_abs_diff": float(np.max(np.abs(sol.f - r.f)))}
                rows.append(row)
                cv = " ".join(f"{k}={row[k]['cpu_s']:.3f}s[{row[k]['status']}] x{row[k]['ratio']:.0f} "
                              f"diff={row[k]['max_abs_diff']:.1e}" for k in solvers)
                print(f"d={d:>8} {obj:12s} {label:18s} ldpopt={t_s * 1e3:.1f}ms kkt={r.kkt_residual:.1e} "
                      f"{r.status} general={t_g * 1e3:.1f}ms {cv}", flush=True)
    return H.save("structured_blocks", a, {"rows": rows})


if __name__ == "__main__":
    H.cli(H.parser(__doc__), run)
