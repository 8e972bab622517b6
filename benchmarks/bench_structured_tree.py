"""Range trees: the structured solver's tree pass (dual/tree.py) vs PIQP and Clarabel.

    python benchmarks/bench_structured_tree.py          # d = 10³, 10⁴, 42,178, 10⁵; B = 2, 4
    python benchmarks/bench_structured_tree.py --quick  # d = 300, B = 2 (seconds)

Problem: ``Problem(est, objective, range_tree(d, B).constraints())`` — f ≥ 0 on all 2d − 1 (B = 2)
nodes, the leaves sum to 1, parent = Σ children. Data: a Zipf(1.5) histogram over the d leaves
(``_harness.zipf_counts``, n = 10⁶), its node totals, and per-node OUE-style support counts at ε = 1
(one binomial count per node, so every node's f̃ is unbiased with the OUE variance; many leaves
clamp at 0). Times are CPU seconds (``time.process_time``) of the whole call: ldpopt
``solve_structured`` with its certificate (best of 3); ``Problem(...).solve()`` end to end (the tree
pass plus ldpopt's own check of the Solution, best of 3); cvxpy ``Problem(...).solve(solver=...)``
build + compile + solve + ldpopt's check (one run). cls against PIQP (the policy's default for QPs)
and Clarabel; the weighted MLE (second-order cones, not a QP: PIQP does not take it) against
Clarabel. "diff" is max_v |f_ldpopt − f_solver|. Results: results/structured_tree.json.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchmarks import _harness as H  # noqa: E402
from benchmarks._harness import best_cpu, zipf_counts  # noqa: E402
from ldpopt import Estimate  # noqa: E402
from ldpopt.problems import Problem, range_tree  # noqa: E402
from ldpopt.problems.solvers.structured import solve_structured  # noqa: E402


def tree_estimate(d, B, n=10**6, eps=1.0, seed=1):
    t = range_tree(d, B)
    true = t.node_totals(zipf_counts(d, n) / n)
    p, q = 0.5, 1.0 / (1.0 + np.exp(eps))
    c = np.random.default_rng(seed).binomial(n, q + (p - q) * true).astype(float)
    return t, Estimate.from_counts(c, n, eps, p, q, oracle="oue")


def run(quick: bool = False, **opts) -> dict:
    """``--quick``: d = 300, B = 2."""
    a = H.options(H.parser(__doc__), "bench_structured_tree.py", quick, opts)
    sizes = [300] if quick else [1000, 10**4, 42_178, 10**5]
    rows = []
    for d in sizes:
        for B in (2,) if quick else (2, 4):
            t, est = tree_estimate(d, B)
            cons = t.constraints()
            for obj in ("cls", "weighted-mle"):
                t_s, r = best_cpu(lambda: solve_structured(est, obj, cons), 3)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    t_p, sp = best_cpu(lambda: Problem(est, obj, cons).solve(), 3)
                row = {"d": d, "B": B, "size": t.size, "objective": obj, "ldpopt_cpu_s": t_s, "status": r.status,
                       "kkt_rel": r.kkt_residual, "gap_rel": r.certificate.relative_gap, "iterations": r.iterations,
                       "clamped": int(np.count_nonzero(r.f == 0)), "problem_solve_cpu_s": t_p,
                       "problem_solve_solver": sp.solver, "problem_solve_status": sp.status}
                solvers = ["PIQP", "CLARABEL"] if obj == "cls" else ["CLARABEL"]
                for name in solvers:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        t_c, sol = best_cpu(lambda: Problem(est, obj, cons).solve(solver=name), 1)
                    diff = float(np.max(np.abs(sol.f - r.f))) if np.all(np.isfinite(sol.f)) else float("nan")
                    row[name] = {"cpu_s": t_c, "status": sol.status, "ratio": t_c / t_s, "max_abs_diff": diff}
                rows.append(row)
                cv = " ".join(f"{k}={row[k]['cpu_s']:.3f}s[{row[k]['status']}] x{row[k]['ratio']:.1f} "
                              f"diff={row[k]['max_abs_diff']:.1e}" for k in solvers)
                print(f"d={d:>7} B={B} {obj:12s} ldpopt={t_s * 1e3:.1f}ms kkt={r.kkt_residual:.1e} {r.status} "
                      f"its={r.iterations.get('tree_newton_iterations')} clamped={row['clamped']}/{t.size} "
                      f"Problem.solve={t_p:.3f}s[{sp.solver}:{sp.status}] {cv}", flush=True)
                H.save("structured_tree", a, {"rows": rows})  # after every row: a cut-short run keeps them
    return H.save("structured_tree", a, {"rows": rows})


if __name__ == "__main__":
    H.cli(H.parser(__doc__), run)
