"""Joint law of every oracle's fast path (``sample_counts``) against the real protocol.

Three columns per oracle, in one run:

* ``max|z| fast`` / ``max|z| real``: at d = 6, ε = 0.5, a fixed histogram of n = 30 users, R draws of
  the count vector from the fast path (and from the real path, perturb + per-report supports): for
  every entry (j, k) of the covariance matrix, z = (mean of (c_j − μ_j)(c_k − μ_k) − Σ_jk)/s.e., with
  μ, Σ the exact mean and covariance by enumeration of ``output_distribution``
  (:func:`ldpopt.oracles.jointlaw.count_moments`). |z| ≲ 4 is sampling noise;
* ``Var(Σc) real/fast`` and ``Var(half) real/fast``: at d = 1024, ε = 1, n = 500 (Zipf-like
  histogram), the ratio of the variance of Σ_v c_v (so of Σ f̃, an affine function of it) and of
  Σ_{v∈S} c_v for a fixed random half S of the domain, real path over fast path (R draws each), ± its
  standard error from the squared deviations (≈ 2/√R for light tails; larger for HR, whose set sums
  are heavy-tailed).

``--timing`` adds one timed ``sample_counts`` per oracle at d = 42,178, n = 10⁶ (Zipf s = 1.5), and
one timed OLH real path at (d, n) = (1024, 10⁵) and (42,178, 10⁴).

Run: ``PYTHONPATH=. python benchmarks/joint_law.py [--reps-small R] [--reps-large R] [--timing]``.
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

from ldpopt import oracles
from ldpopt.oracles.jointlaw import count_moments

ORACLES = ["grr", "oue", "sue", "olh", "blh", "hr", "ss"]
SMALL_TC = np.array([12, 7, 5, 3, 0, 3])


def real_counts(o, tc, reps: int, gen, block_cells: int = 1 << 24) -> np.ndarray:
    """(reps, d) count vectors from the real path: perturb all users of many repetitions at once,
    then sum each repetition's per-report supports."""
    n, d = int(tc.sum()), o.d
    values = np.repeat(np.arange(d), tc)
    out = np.empty((reps, d), dtype=np.int64)
    per = max(1, block_cells // (n * d))
    for r0 in range(0, reps, per):
        r1 = min(reps, r0 + per)
        S = o.support_matrix(o.perturb(np.tile(values, r1 - r0), gen))
        out[r0:r1] = S.reshape(r1 - r0, n, d).sum(axis=1)
    return out


def cov_z(x: np.ndarray, mean: np.ndarray, cov: np.ndarray) -> float:
    """max over j ≤ k of |z| for the covariance entries of the draws x (R, d) against the exact law."""
    xc = x - mean
    worst = 0.0
    for j in range(x.shape[1]):
        prod = xc[:, j:j + 1] * xc[:, j:]
        se = prod.std(axis=0, ddof=1) / np.sqrt(x.shape[0])
        dev = prod.mean(axis=0) - cov[j, j:]
        z = np.where(se > 0, np.abs(dev) / np.where(se > 0, se, 1), np.where(np.abs(dev) > 1e-9, np.inf, 0))
        worst = max(worst, float(z.max()))
    return worst


def zipf_counts(d: int, n: int, s: float, seed: int) -> np.ndarray:
    w = np.arange(1, d + 1, dtype=np.float64) ** -s
    return np.random.default_rng(seed).multinomial(n, w / w.sum()).astype(np.int64)


def ratio(real: np.ndarray, fast: np.ndarray) -> str:
    """Var(real)/Var(fast) ± its standard error (delta method with the empirical s.e. of each
    variance, from the squared deviations: set sums of HR supports are heavy-tailed)."""
    a, b = real.var(ddof=1), fast.var(ddof=1)
    if a == 0 and b == 0:
        return "0/0 (both 0)"
    if b == 0:
        return f"{a:.3g}/0"

    def rel_se(x, v):
        return ((x - x.mean()) ** 2).std(ddof=1) / math.sqrt(x.size) / v

    r = a / b
    return f"{r:.3f} ± {r * math.hypot(rel_se(real, a), rel_se(fast, b)):.3f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps-small", type=int, default=20000)
    ap.add_argument("--reps-large", type=int, default=1000)
    ap.add_argument("--timing", action="store_true")
    args = ap.parse_args()
    gen = np.random.default_rng(12)
    d_large = 1024
    tc_large = zipf_counts(d_large, 500, 1.1, seed=7)
    half = np.random.default_rng(3).permutation(d_large)[: d_large // 2]
    print("| oracle | max|z| fast (d=6) | max|z| real (d=6) | Var(Σc) real/fast (d=1024) | "
          "Var(half) real/fast (d=1024) |")
    print("|---|---|---|---|---|")
    for name in ORACLES:
        o = oracles.get(name, epsilon=0.5, d=6)
        mean, cov = count_moments(o, SMALL_TC)
        fast = np.array([o.sample_counts(SMALL_TC, gen) for _ in range(args.reps_small)], dtype=np.float64)
        real = real_counts(o, SMALL_TC, args.reps_small, gen).astype(np.float64)
        zf, zr = cov_z(fast, mean, cov), cov_z(real, mean, cov)
        ol = oracles.get(name, epsilon=1.0, d=d_large)
        fl = np.array([ol.sample_counts(tc_large, gen) for _ in range(args.reps_large)], dtype=np.float64)
        rl = real_counts(ol, tc_large, args.reps_large, gen).astype(np.float64)
        vt = ratio(rl.sum(axis=1), fl.sum(axis=1))
        vh = ratio(rl[:, half].sum(axis=1), fl[:, half].sum(axis=1))
        print(f"| {name} | {zf:.1f} | {zr:.1f} | {vt} | {vh} |", flush=True)
    if args.timing:
        d, n = 42_178, 1_000_000
        tc = zipf_counts(d, n, 1.5, seed=20240601)
        print(f"\nsample_counts at d = {d:,}, n = {n:,} (one run each, construction excluded):")
        for name in ORACLES:
            o = oracles.get(name, epsilon=1.0, d=d)
            t = time.perf_counter()
            c = o.sample_counts(tc, np.random.default_rng(0))
            print(f"  {name}: {time.perf_counter() - t:.3f} s (Σc = {int(c.sum()):,})", flush=True)
        print("\nOLH real path (simulate(exact=True)), one run each:")
        for d, n in [(1024, 100_000), (42_178, 10_000)]:
            tc = zipf_counts(d, n, 1.5, seed=1)
            o = oracles.get("olh", epsilon=1.0, d=d)
            t = time.perf_counter()
            o.simulate(tc, 0, exact=True)
            el = time.perf_counter() - t
            print(f"  d = {d:,}, n = {n:,}: {el:.2f} s ({el / (n * d) * 1e9:.1f} ns per user·value)", flush=True)


if __name__ == "__main__":
    main()
