"""Timing of Power / PowerNS / Calibrate at Kosarak scale (not a test).

    .venv/bin/python benchmarks/time_bayes.py [--d 42178] [--n 1000000] [--eps 1.0] [--subset 20]

Zipf(1.1) true counts, OUE support counts sampled exactly (Bin(t, 1/2) + Bin(n − t, q)); optionally
GRR at the same d (σn ≈ 0.12 n there). Wall and CPU times, best of ``--repeat``. The O(n·d) slow
reference (Eq. 10 summed over all i = 1..n) is timed on ``--subset`` values and scaled by
d / subset (it is linear in d); the fast outputs on that subset are compared with it.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from ldpopt.estimate import Estimate
from ldpopt.methods import bayes


def build(d, n, eps, oracle, seed=0):
    rng = np.random.default_rng(seed)
    w = np.arange(1, d + 1, dtype=np.float64) ** -1.1
    tc = rng.multinomial(n, w / w.sum())
    if oracle == "oue":
        p, q = 0.5, 1.0 / (np.exp(eps) + 1.0)
        c = rng.binomial(tc, p) + rng.binomial(n - tc, q)
    else:  # GRR: each user keeps the value w.p. p, else a uniform other value
        p = np.exp(eps) / (np.exp(eps) + d - 1)
        q = 1.0 / (np.exp(eps) + d - 1)
        keep = rng.binomial(tc, p)
        moved = rng.multinomial(n - keep.sum(), np.full(d, 1.0 / d))  # approx.: others uniform
        c = keep + moved
    return Estimate.from_counts(c, n, eps, p, q, oracle=oracle)


def timed(fn, repeat):
    best_w, best_c, out = np.inf, np.inf, None
    for _ in range(repeat):
        w0, c0 = time.perf_counter(), time.process_time()
        out = fn()
        best_w = min(best_w, time.perf_counter() - w0)
        best_c = min(best_c, time.process_time() - c0)
    return out, best_w, best_c


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--d", type=int, default=42178)
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--eps", type=float, default=1.0)
    ap.add_argument("--subset", type=int, default=20)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--oracles", default="oue,grr")
    a = ap.parse_args()
    for oracle in a.oracles.split(","):
        est = build(a.d, a.n, a.eps, oracle)
        print(f"\n{oracle.upper()}  d={a.d} n={a.n} eps={a.eps}  sigma*n={bayes.noise_sd_counts(est):.1f}")
        s_mle, w, c = timed(lambda: bayes.fit_power_law(est, "mle"), a.repeat)
        print(f"  fit s (MLE, Eq. 16)            s={s_mle:.6f}  wall {w:7.3f} s  cpu {c:7.3f} s")
        s_mv, w, c = timed(lambda: bayes.fit_power_law(est, "mean-variance"), a.repeat)
        print(f"  fit s (mean-variance, Eq. 17)  s={s_mv:.6f}  wall {w:7.3f} s  cpu {c:7.3f} s")
        rows = [
            ("power (s given)", lambda: bayes.power(est, s=s_mle)),
            ("power (fit mle)", lambda: bayes.power(est)),
            ("power-ns (fit mle)", lambda: bayes.power_ns(est)),
            ("calibrate power-law (fit mle)", lambda: bayes.calibrate(est)),
            ("calibrate power-law (mean-var)", lambda: bayes.calibrate(est, fit="mean-variance")),
            ("calibrate gaussian (mean-var)", lambda: bayes.calibrate(est, "gaussian", fit="mean-variance")),
            ("calibrate gaussian (mle)", lambda: bayes.calibrate(est, "gaussian", fit="mle")),
        ]
        fast_given = None
        for name, fn in rows:
            out, w, c = timed(fn, a.repeat if "gaussian (mle)" not in name else 1)
            if name == "power (s given)":
                fast_given, t_fast = out, w
            print(f"  {name:32s} wall {w:7.3f} s  cpu {c:7.3f} s  sum={out.sum():.6f}")
        idx = np.random.default_rng(1).choice(a.d, a.subset, replace=False)
        sub = est.with_f_tilde(est.f_tilde)  # same estimate; reference on a subset of values
        x_sub = Estimate(f_tilde=sub.f_tilde[idx], counts=sub.counts[idx], n=sub.n, epsilon=sub.epsilon,
                         p=sub.p, q=sub.q, oracle=sub.oracle)
        ref, w, c = timed(lambda: bayes.power_reference(x_sub, s_mle), 1)
        scaled = w * a.d / a.subset
        err = float(np.max(np.abs(fast_given[idx] / ref - 1)))
        print(f"  reference Eq. 10 on {a.subset} values: {w:.3f} s -> scaled to d: {scaled:.1f} s "
              f"(ratio reference/fast = {scaled / t_fast:.0f}x); max rel diff on subset {err:.2e}")


if __name__ == "__main__":
    main()
