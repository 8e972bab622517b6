"""Design time, memory and convergence per d (ldpopt.design.design on all ranges, ε = 1, m = d rows).

For each d: one start (Hadamard Response's channel, the best start at d = 64 in design.json), at most
``--iterations`` accepted steps (one per d, in the order of ``--d``); recorded: wall and CPU seconds,
seconds per step, peak traced memory (tracemalloc) and the process's peak resident memory, the
optimiser's stationarity and last relative decrease of the objective, and the objective against the
start's and Optimised Unary Encoding's (per user, at the uniform distribution: the authors' average case).

    nice -n 10 env PYTHONPATH=. python benchmarks/bench_design_scale.py --d 64 256 1024 2048 --iterations 300 150 60 3

Results: benchmarks/results/design_scale.json (or --out DIR).
"""

from __future__ import annotations

import resource
import time
import tracemalloc

import _harness as H  # benchmarks/ is the script's folder
import numpy as np


def parser():
    ap = H.parser(__doc__)
    ap.add_argument("--d", type=int, nargs="+", default=[64, 256, 1024])
    ap.add_argument("--iterations", type=int, nargs="+", default=[300, 150, 60])
    ap.add_argument("--eps", type=float, default=1.0)
    ap.add_argument("--name", default="design_scale")
    return ap


def _oue_objective(eps: float, d: int, G: np.ndarray) -> float:
    """OUE's average-case objective on the Gram matrix G: tr(G Cov)·n at the uniform distribution."""
    from ldpopt import oracles

    o = oracles.get("oue", eps, d)
    c = o.count_covariance(1, d)
    a, b = c.pair
    f = np.full(d, 1.0 / d)
    C = c.kappa * (a + b * (f[:, None] + f[None, :]))
    np.fill_diagonal(C, c.variance(f))
    return float(np.sum(G * C))


def run(quick: bool = False, **opts) -> dict:
    args = H.options(parser(), "bench_design_scale.py", quick, opts)
    from ldpopt import oracles
    from ldpopt.design import design, verify_ldp
    from ldpopt.design import workloads as w

    ds, its = ([16], [20]) if args.quick else (args.d, args.iterations)
    if len(its) != len(ds):
        raise ValueError("--iterations must give one count per --d")
    rows: list[dict] = []
    doc: dict = {}
    for d, iters in zip(ds, its, strict=True):
        G = w.range_gram(d)
        start = np.asarray(oracles.get("hr", args.eps, d).output_distribution(), dtype=np.float64).T
        tracemalloc.start()
        t0, c0 = time.perf_counter(), H.cpu_clock()
        D = design("ranges", args.eps, d, rows=d, iterations=iters, init=start, rng=0)
        secs, cpu = time.perf_counter() - t0, H.cpu_clock() - c0
        peak = tracemalloc.get_traced_memory()[1] / 2**20
        tracemalloc.stop()
        hist = D.history
        last = (hist[-11] - hist[-1]) / abs(hist[-11]) if len(hist) > 10 else None
        row = {"workload": "ranges", "d": d, "epsilon": args.eps, "rows": D.rows, "iterations_cap": iters,
               "iterations": D.iterations, "design_s": secs, "design_cpu_s": cpu,
               "s_per_iteration": secs / max(D.iterations, 1), "design_peak_mb": peak,
               "max_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
               "stationarity": D.stationarity, "rel_decrease_last_10": last,
               "objective_start": hist[0], "objective": D.objective, "objective_oue": _oue_objective(args.eps, d, G),
               "ldp_verified": verify_ldp(D.strategy, args.eps).verified,
               "history_every_10": hist[::10] + ([hist[-1]] if (len(hist) - 1) % 10 else [])}
        rows.append(row)
        print({k: row[k] for k in ("d", "iterations", "design_s", "design_cpu_s", "design_peak_mb", "stationarity",
                                   "rel_decrease_last_10", "objective_start", "objective", "objective_oue")}, flush=True)
        doc = H.save(args.name, args, {"rows": rows})  # after every d: a long run keeps what it finished
    return doc


if __name__ == "__main__":
    H.cli(parser(), run)
