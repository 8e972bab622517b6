"""OLH aggregation cost (per-user seeds: O(n·d) hashes) against the seed pool of pure-ldp's fast
local hashing (k fixed seeds: O(k·d + n)), and what the pool costs in accuracy.

Cost: ldpopt's OLH ``aggregate`` (per-user 64-bit keys, vectorised SplitMix64, blocks of users) and
``ldpopt.interop.pure_ldp.read_flh`` (a k×g table of (seed, y) counts and the k×d XXH32 matrix) on the
same n and d, timed side by side in CPU seconds (process_time: the reference machine is shared).

Accuracy: with a fixed pool of k hash functions H_1..H_k the estimate is no longer unbiased given
the pool. For a user with value u ≠ v choosing a seed uniformly, Pr[report supports v] =
p* + (p − p*)·ρ_uv with p* = (1 − p)/(g − 1) and ρ_uv = (1/k)·#{i : H_i(u) = H_i(v)}, so

    E[f̃_v | pool] − f_v = (p − p*)/(p − 1/g) · Σ_{u≠v} f_u (ρ_uv − 1/g)            (exact)

Over random pools ρ_uv is a mean of k Bernoulli(1/g), uncorrelated across u for fixed v, so the
squared bias has expectation ((p − p*)/(p − 1/g))² · (1/g)(1 − 1/g)/k · Σ_{u≠v} f_u²: a floor on the
MSE that does not shrink with n. We compute the exact bias for pure-ldp's own pool (seeds 0..k−1,
XXH32) and compare its mean square with that prediction and with OLH's variance at n users.

    PYTHONPATH=. python benchmarks/bench_hash_pool.py [--quick]
"""

from __future__ import annotations

import math
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _harness as H  # noqa: E402
from ldpopt import oracles  # noqa: E402
from ldpopt.interop.pure_ldp import read_flh  # noqa: E402
from ldpopt.interop._xxh32 import hash_values  # noqa: E402


def pool_bias(f: np.ndarray, eps: float, g: int, k: int) -> tuple[float, float]:
    """(exact mean over v of bias², predicted mean over v) for the pool of seeds 0..k−1."""
    d = f.shape[0]
    p = math.exp(eps) / (math.exp(eps) + g - 1)
    ps = (1 - p) / (g - 1)
    H = hash_values(np.arange(k), np.arange(d), g)  # (k, d)
    rho = np.zeros((d, d))
    for i in range(k):  # k rows, each an outer comparison: O(k·d²)
        rho += H[i][:, None] == H[i][None, :]
    rho /= k
    c = (p - ps) / (p - 1.0 / g)
    off = rho - 1.0 / g
    np.fill_diagonal(off, 0.0)
    bias = c * off @ f
    pred = c * c * (1 / g) * (1 - 1 / g) / k * (np.sum(f * f) - f * f)
    return float(np.mean(bias ** 2)), float(np.mean(pred))


def run(quick: bool = False, **opts) -> dict:
    args = H.options(H.parser(__doc__), "bench_hash_pool.py", quick, opts)
    eps, d = 1.0, 256 if args.quick else 1024
    n = 200_000 if args.quick else 1_000_000
    g = int(round(math.exp(eps))) + 1
    rng = np.random.default_rng(0)
    f = 1.0 / np.arange(1, d + 1) ** 1.1
    f /= f.sum()
    olh = oracles.get("olh", eps, d, g=g)
    values = rng.choice(d, size=n, p=f)
    reps = olh.perturb(values, rng)
    t = H.cpu_clock()
    olh.aggregate(reps)
    t_olh = H.cpu_clock() - t
    rows = {"epsilon": eps, "d": d, "n": n, "g": g, "olh_aggregate_s": t_olh,
            "olh_ns_per_user_value": t_olh / (n * d) * 1e9, "pool": []}
    print(f"OLH per-user seeds: n={n:,} d={d}: {t_olh:.2f} s ({rows['olh_ns_per_user_value']:.2f} ns per user·value)")
    var_olh = float(np.mean(olh.variance(f, n)))
    for k in ([16, 64, 256] if args.quick else [16, 64, 256, 1024, 4096]):
        flh = np.stack((rng.integers(0, g, n), rng.integers(0, k, n)), axis=1)  # timing only
        t = H.cpu_clock()
        read_flh(flh, eps, d, k, g=g)
        t_flh = H.cpu_clock() - t
        exact, pred = pool_bias(f, eps, g, k)
        rows["pool"].append({"k": k, "read_s": t_flh, "mean_bias2": exact, "predicted_bias2": pred,
                             "olh_variance_at_n": var_olh, "bias2_over_variance": exact / var_olh})
        print(f"pool k={k:5d}: aggregate {t_flh:.3f} s; mean bias² {exact:.3g} (predicted {pred:.3g}); "
              f"OLH variance at n: {var_olh:.3g} → bias²/var = {exact / var_olh:.3f}")
    return H.save("hash_pool", args, rows)


if __name__ == "__main__":
    H.cli(H.parser(__doc__), run)
