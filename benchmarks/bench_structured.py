"""The structured dual solver against cvxpy's solvers, side by side in one process (CPU time).

    python benchmarks/bench_structured.py            # full: d = 42,178 vs Clarabel, d = 1e6, 1e7
    python benchmarks/bench_structured.py --quick    # d = 300 vs Clarabel, d = 2,000 (seconds)
    python benchmarks/bench_structured.py --monotone # Monotone + simplex, d = 1e4 … 1e6 vs PIQP/Clarabel

Data: Zipf(1.5) histogram (``_harness.zipf_counts``), OUE at ε = 1 simulated by per-value binomial
support counts (n = 10⁶; 10⁷ at d ≥ 10⁶), GRR counts (multinomial) for the multinomial objective.
Times are CPU seconds (``time.process_time``: all threads of this process) of the whole call —
for cvxpy ``Problem(...)`` construction + compile + solve, for ldpopt ``solve_structured`` including
its certificate, and ``Problem(...).solve()`` end to end (the structured solver plus ldpopt's own
check of the Solution: the user's call, which the ratio ``x`` divides by; ``ratio_to_solve_structured``
in the JSON divides by the solver alone). ldpopt: best of 3 runs; cvxpy: one run (best of 2 in --quick). Agreement is
max_v |f_structured − f_cvxpy|; "dist bound" is the certificate's bound on max_v |f − f*| for the
cvxpy point (its own duals, feas_tol 1e-8). Results: benchmarks/results/structured[_ref|_monotone].json.
Disjoint subset sums and range trees: ``bench_structured_blocks.py``, ``bench_structured_tree.py``.
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
from ldpopt.problems import Monotone, Problem, Simplex, SubsetSum  # noqa: E402
from ldpopt.problems.check.certificate import certificate  # noqa: E402
from ldpopt.problems.solvers.structured import solve_structured  # noqa: E402


def oue_estimate(d, n, eps=1.0, seed=1):
    true = zipf_counts(d, n) / n
    p, q = 0.5, 1.0 / (1.0 + np.exp(eps))
    c = np.random.default_rng(seed).binomial(n, q + (p - q) * true).astype(float)
    return Estimate.from_counts(c, n, eps, p, q, oracle="oue"), true


def grr_estimate(d, n, eps=1.0, seed=2):
    true = zipf_counts(d, n) / n
    p, q = np.exp(eps) / (np.exp(eps) + d - 1), 1.0 / (np.exp(eps) + d - 1)
    c = np.random.default_rng(seed).multinomial(n, q + (p - q) * true).astype(float)
    return Estimate.from_counts(c, n, eps, p, q, oracle="grr"), true


def subsets(d, true, k, seed=3):
    """k SubsetSum rows: disjoint random blocks of d/(2k) values at their true totals."""
    perm = np.random.default_rng(seed).permutation(d)
    size = max(1, d // (2 * max(k, 1)))
    return [SubsetSum(perm[i * size:(i + 1) * size], float(true[perm[i * size:(i + 1) * size]].sum()),
                      name=f"s{i}") for i in range(k)]




def run_case(est, objective, cons, label, solvers, rows, repeats_cvx):
    t_s, r = best_cpu(lambda: solve_structured(est, objective, cons), 3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t_p, sp = best_cpu(lambda: Problem(est, objective, cons).solve(), 3)
    row = {"case": label, "objective": objective, "d": est.d, "n": est.n, "ldpopt_cpu_s": t_s,
           "ldpopt_status": r.status, "ldpopt_kkt_rel": r.kkt_residual,
           "ldpopt_gap_rel": r.certificate.relative_gap, "ldpopt_iterations": r.iterations,
           "problem_solve_cpu_s": t_p, "problem_solve_status": sp.status, "problem_solve_solver": sp.solver}
    for name in solvers:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            t_c, sol = best_cpu(lambda: Problem(est, objective, cons).solve(solver=name), repeats_cvx)
        agree = float(np.max(np.abs(sol.f - r.f))) if np.all(np.isfinite(sol.f)) else float("nan")
        try:
            cert = certificate(objective, cons, est, sol.f, sol.duals, feas_tol=1e-8)
            dist = cert.distance_linf
        except Exception as e:  # noqa: BLE001 - recorded, not hidden
            dist = f"certificate failed: {e}"
        row[name] = {"cpu_s": t_c, "status": sol.status, "max_abs_diff": agree, "dist_bound": dist,
                     "ratio": t_c / t_p, "ratio_to_solve_structured": t_c / t_s}
    rows.append(row)
    cv = " ".join(f"{k}={row[k]['cpu_s']:.3f}s[{row[k]['status']}] x{row[k]['ratio']:.0f} "
                  f"diff={row[k]['max_abs_diff']:.1e}" for k in solvers)
    print(f"{label:34s} d={est.d:>8} ldpopt={t_s:.4f}s kkt={r.kkt_residual:.1e} {r.status} "
          f"Problem.solve={t_p:.4f}s[{sp.status}] {cv}", flush=True)


def certificate_timing(d, rows, n):
    from ldpopt.methods.normalize import project_simplex
    est, _ = oue_estimate(d, n)
    f = project_simplex(est.f_tilde)
    t, c = best_cpu(lambda: certificate("cls", None, est, f), 1)
    bad = f * (1 + 1e-6)
    cb = certificate("cls", None, est, bad)
    rows.append({"case": "certificate Norm-Sub (no solver)", "d": d, "cpu_s": t, "relative_gap": c.relative_gap,
                 "distance_linf": c.distance_linf, "mass_error_1e-6_caught": not cb.feasible})
    print(f"certificate d={d}: {t:.3f}s rel_gap={c.relative_gap:.1e} dist<={c.distance_linf:.1e} "
          f"1e-6 mass error caught: {not cb.feasible}", flush=True)


def monotone(rows, quick, save):
    """Monotone (natural order, nonincreasing) + simplex: the generalised PAV of dual/chain.py
    against the fastest cvxpy solver. Both PIQP and Clarabel at d ≤ 42,178 (cls); above, the faster
    one only (and Clarabel for the weighted MLE — PIQP takes QPs only — up to 10⁵: its 10⁶ solve
    would take minutes on this shared machine). The likelihoods at 10⁶: structured only."""
    cons = [Simplex(), Monotone()]
    sizes = [300] if quick else [10**4, 42_178, 10**5, 10**6]
    for d in sizes:
        n = 10**7 if d >= 10**6 else 10**6
        est, _ = oue_estimate(d, n)
        run_case(est, "cls", cons, "cls simplex+Monotone", ["PIQP", "CLARABEL"] if d <= 42_178 else ["PIQP"],
                 rows, 1)
        save()
        run_case(est, "weighted-mle", cons, "weighted-mle simplex+Monotone",
                 ["CLARABEL"] if d <= 10**5 else [], rows, 1)
        save()
        if d == sizes[-1]:
            run_case(est, "binomial", cons, "binomial simplex+Monotone", [], rows, 1)
            g, _ = grr_estimate(d, n)
            run_case(g, "multinomial", cons, "multinomial simplex+Monotone", [], rows, 1)
            save()


def parser():
    ap = H.parser(__doc__)
    ap.add_argument("--ref-only", action="store_true",
                    help="only the d = 42,178 rows against cvxpy (results/structured_ref.json)")
    ap.add_argument("--monotone", action="store_true",
                    help="only the Monotone + simplex rows (results/structured_monotone.json)")
    return ap


def run(quick: bool = False, **opts) -> dict:
    args = H.options(parser(), "bench_structured.py", quick, opts)
    rows: list = []
    name = "structured_monotone" if args.monotone else "structured_ref" if args.ref_only else "structured"
    if args.monotone:  # saved after every row: a run cut short keeps what it measured
        monotone(rows, args.quick, lambda: H.save(name, args, {"rows": rows}))
        return H.save(name, args, {"rows": rows})
    d_ref = 300 if args.quick else 42_178
    rep = 2 if args.quick else 1
    n = 10**6
    est, true = oue_estimate(d_ref, n)
    one = [Simplex(), *subsets(d_ref, true, 1)]
    for obj in ("cls", "weighted-mle"):
        qp = ["PIQP", "CLARABEL"] if obj == "cls" else ["CLARABEL"]  # PIQP: QPs only
        run_case(est, obj, None, f"{obj} simplex", qp, rows, rep)
        run_case(est, obj, one, f"{obj} simplex+SubsetSum", qp, rows, rep)
    if args.ref_only:
        return H.save(name, args, {"rows": rows})
    # exponential cones: SCS only at small d (Clarabel/ECOS fail these, BENCHMARKS.md)
    e_small, t_small = oue_estimate(300, n)
    run_case(e_small, "binomial", None, "binomial simplex", ["SCS"], rows, rep)
    g_small, _ = grr_estimate(300, n)
    run_case(g_small, "multinomial", None, "multinomial simplex", ["SCS"], rows, rep)
    for obj in ("binomial",):
        run_case(est, obj, None, f"{obj} simplex", [], rows, 1)
        run_case(est, obj, one, f"{obj} simplex+SubsetSum", [], rows, 1)
    # large d, structured only
    d_big = 2000 if args.quick else 10**6
    n_big = 10**7
    est_b, true_b = oue_estimate(d_big, n_big)
    ten = [Simplex(), *subsets(d_big, true_b, 10)]
    for obj in ("cls", "weighted-mle", "binomial"):
        run_case(est_b, obj, None, f"{obj} simplex", [], rows, 1)
        run_case(est_b, obj, ten, f"{obj} simplex+10 SubsetSum", [], rows, 1)
    g_b, tg = grr_estimate(d_big, n_big)
    run_case(g_b, "multinomial", None, "multinomial simplex", [], rows, 1)
    run_case(g_b, "multinomial", [Simplex(), *subsets(d_big, tg, 10)], "multinomial simplex+10 SubsetSum", [], rows, 1)
    for d in ([2000] if args.quick else [10**6, 10**7]):
        certificate_timing(d, rows, 10**7)
    return H.save(name, args, {"rows": rows})


if __name__ == "__main__":
    H.cli(parser(), run)
