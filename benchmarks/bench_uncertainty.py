"""Intervals and ``choose`` at Kosarak's domain size.

Issue targets: Norm-Sub intervals at d = 42,178 with 200 resamples in < 2 s; ``ldpopt.choose``
over every closed-form method at d = 42,178 in < 30 s. Data: Zipf(1.5) true counts (d = 42,178,
n = 10⁶, ε = 1; Kosarak itself does not ship), fast-path estimate (seed 7), OUE / GRR / OLH.
Measured in this process, wall and CPU time of one call each (the box is shared: the load average
at the start of each case is recorded), and, side by side, the bootstrap's Norm-Sub path
(:func:`ldpopt.uncertainty.resample.apply_batch`: the projection per row of the (B, d) batch)
against the generic path (an Estimate built per resample, then the registry's method). ``--quick``: d = 1,024, n = 10⁵.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _harness as H  # noqa: E402

ORACLES = ("oue", "grr", "olh")


def measure(oracle: str, d: int, n: int, eps: float, B: int, R: int) -> dict:
    import ldpopt
    from ldpopt.estimate import Estimate
    from ldpopt.uncertainty import intervals
    from ldpopt.uncertainty.fit import plausible_truth, population
    from ldpopt.uncertainty.resample import apply_batch, draw_counts

    o = ldpopt.oracles.get(oracle, eps, d)
    est = o.simulate(H.zipf_counts(d, n), 7)
    load = os.getloadavg()[0]
    _, ci_wall, ci_cpu = H.timed(lambda: intervals(est, "norm-sub", 0.95, n_resamples=B, rng=1))
    pop = population(plausible_truth(est), n)
    C, draw_wall, _ = H.timed(lambda: draw_counts(o, pop, B, np.random.default_rng(2)))
    F = (C / n - est.q) / (est.p - est.q)
    S, batch_wall, _ = H.timed(lambda: apply_batch(est, "norm-sub", F))
    L, loop_wall, _ = H.timed(lambda: np.stack([ldpopt.postprocess(Estimate.from_counts(
        c, n, est.epsilon, est.p, est.q, oracle=est.oracle), "norm-sub") for c in C]))
    c, ch_wall, ch_cpu = H.timed(lambda: ldpopt.choose(est, "full", n_repeats=R, rng=3))
    return {"oracle": oracle, "d": d, "n": n, "epsilon": eps, "B": B, "R": R, "load": load,
            "ci_wall": ci_wall, "ci_cpu": ci_cpu, "draw_wall": draw_wall,
            "normsub_batched_wall": batch_wall, "normsub_loop_wall": loop_wall,
            "normsub_maxdiff": float(np.abs(S - L).max()),
            "choose_wall": ch_wall, "choose_cpu": ch_cpu, "choose_best": c.best,
            "choose_methods": len(c.table)}


def run(quick: bool = False, **opts) -> dict:
    opts = H.options(H.parser(__doc__), "bench_uncertainty.py", quick, opts)
    d, n = (1024, 10**5) if opts.quick else (42_178, 10**6)
    rows = []
    for oracle in ORACLES:
        r = measure(oracle, d, n, 1.0, 200, 20)
        rows.append(r)
        print(f"  {oracle} d={d}: intervals {H.fmt_seconds(r['ci_wall'])}, choose {H.fmt_seconds(r['choose_wall'])} "
              f"(load {r['load']:.1f})", flush=True)
    return H.save("uncertainty", opts, {"rows": rows})


if __name__ == "__main__":
    H.cli(H.parser(__doc__), run)
