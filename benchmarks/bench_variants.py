"""Monotone variant: the closed form (simplex projection of PAV, ``ldpopt.problems.order``) against
``Problem(est, "cls", [Simplex(), Monotone()]).solve()`` (ldpopt's default solver chain) and against
Clarabel named explicitly, side by side in one process.

Estimate: OUE, ε = 1, Zipf(s = 1.1) true frequencies in their natural (non-increasing) order,
n = 10⁶ (10⁷ at d ≥ 10⁵), support counts from ``simulate`` with a fixed seed. The closed form is
timed as the median of 5 runs; each solver route (cvxpy build + solve + ldpopt's check) once.
Agreement: max_v |f_closed − f_solver|; status as ldpopt reports it.

Run: ``python benchmarks/bench_variants.py [d ...]`` (default 1000 10000 42178 100000).
"""

from __future__ import annotations

import sys
import time

import numpy as np


def timed(fn):
    w, c = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - w, time.process_time() - c


def main(ds):
    import warnings

    from ldpopt import oracles
    from ldpopt.problems import Monotone, Problem, Simplex

    print("| d | closed form wall (CPU) | solver | status | wall (CPU) | ratio (CPU) | max abs diff |")
    print("|---|---|---|---|---|---|---|")
    for d in ds:
        rng = np.random.default_rng(0)
        w = 1.0 / np.arange(1, d + 1) ** 1.1
        n = 10**6 if d < 10**5 else 10**7
        est = oracles.get("oue", epsilon=1.0, d=d).simulate(rng.multinomial(n, w / w.sum()), rng)
        runs = [timed(lambda: Monotone().project(est.f_tilde)) for _ in range(5)]
        f_closed = runs[0][0]
        cw, cc = float(np.median([r[1] for r in runs])), float(np.median([r[2] for r in runs]))
        for solver in (None, "CLARABEL"):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                sol, sw, sc = timed(lambda: Problem(est, "cls", [Simplex(), Monotone()]).solve(solver=solver))
            diff = float(np.max(np.abs(sol.f - f_closed)))
            name = sol.solver if solver is not None else f"default ({sol.solver})"
            print(f"| {d:,} | {cw * 1e3:.2f} ms ({cc * 1e3:.2f} ms) | {name} | {sol.status} | {sw:.2f} s ({sc:.2f} s) "
                  f"| {sw / cw:,.0f}x ({sc / max(cc, 1e-9):,.0f}x) | {diff:.1e} |", flush=True)


if __name__ == "__main__":
    main([int(float(a)) for a in sys.argv[1:]] or [1000, 10000, 42178, 100000])
