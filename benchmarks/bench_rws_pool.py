"""RWS aggregation with per-user seeds (O(n·d) hashes) against a bounded seed pool (``PooledRWS``: a K×d
table of (pool key, spin) counts, then one FFT convolution per key: O(n + K·d log d)), and what the
pool costs in accuracy.

Cost: ``RWS.aggregate`` and ``PooledRWS.aggregate`` on the same n and d, CPU seconds (process_time).

Accuracy, exact for each pool held (``PooledRWS.bias_given_hashes`` and ``variance_given_hashes``): the
mean over v of the squared bias (a floor that does not shrink with n) and of the variance at n,
against RWS's Eq. 2 variance at n (per-user seeds: unbiased). Zipf s = 1.1, ``pools`` pool seeds per K,
mean and range over them.

    PYTHONPATH=. python benchmarks/bench_rws_pool.py [--quick]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _harness as H  # noqa: E402
from ldpopt import oracles  # noqa: E402


def run(quick: bool = False, **opts) -> dict:
    args = H.options(H.parser(__doc__), "bench_rws_pool.py", quick, opts)
    cells = [(1.0, 128), (2.0, 1024)] if not args.quick else [(1.0, 128)]
    n = 200_000 if args.quick else 1_000_000
    pools = [16, 64, 256] if args.quick else [16, 64, 256, 1024, 4096]
    seeds = 3 if args.quick else 5
    rng = np.random.default_rng(0)
    rows: dict = {"n": n, "cells": []}
    for eps, d in cells:
        f = 1.0 / np.arange(1, d + 1) ** 1.1
        f /= f.sum()
        rws = oracles.get("rws", eps, d)
        values = rng.choice(d, size=n, p=f)
        reps = rws.perturb(values, rng)
        t = H.cpu_clock()
        rws.aggregate(reps, device="numpy")
        t_rws = H.cpu_clock() - t
        var_rws = float(np.mean(rws.variance(f, n)))
        cell = {"epsilon": eps, "d": d, "k": rws.k, "rws_aggregate_s": t_rws, "rws_variance_at_n": var_rws, "pool": []}
        print(f"RWS per-user seeds: ε={eps:g} d={d} k={rws.k} n={n:,}: aggregate {t_rws:.2f} s; variance at n {var_rws:.3g}")
        for K in pools:
            if K * d > 1 << 25:
                continue
            b2, var, t_pool = [], [], []
            for s in range(seeds):
                o = oracles.get("rws-pool", eps, d, pool=K, pool_seed=s)
                r = o.perturb(values, rng)
                t = H.cpu_clock()
                o.aggregate(r, device="numpy")
                t_pool.append(H.cpu_clock() - t)
                b2.append(float(np.mean(o.bias_given_hashes(f) ** 2)))
                var.append(float(np.mean(o.variance_given_hashes(f, n))))
            row = {"pool": K, "aggregate_s": float(np.mean(t_pool)), "mean_bias2": float(np.mean(b2)),
                   "bias2_range": [min(b2), max(b2)], "mean_variance": float(np.mean(var)),
                   "mse_over_rws_variance": float((np.mean(b2) + np.mean(var)) / var_rws)}
            cell["pool"].append(row)
            print(f"  pool K={K:5d}: aggregate {row['aggregate_s']:.3f} s; mean bias² {row['mean_bias2']:.3g} "
                  f"[{min(b2):.3g}, {max(b2):.3g}]; variance {row['mean_variance']:.3g}; "
                  f"MSE / RWS variance = {row['mse_over_rws_variance']:.3f}")
        rows["cells"].append(cell)
    return H.save("rws_pool", args, rows)


if __name__ == "__main__":
    H.cli(H.parser(__doc__), run)
