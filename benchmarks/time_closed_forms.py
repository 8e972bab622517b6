"""Timing of the closed forms at d = 10⁷ (not a test). Run: .venv/bin/python benchmarks/time_closed_forms.py

Estimate: OUE, ε = 1, n = 10⁸ users on a Zipf(1.1) histogram; support counts drawn from
Binomial(n_v, p) + Binomial(n − n_v, q) (exact marginals). Prints the best of 3 wall times.
"""

from __future__ import annotations

import sys
import time

import numpy as np

from ldpopt import Estimate
from ldpopt.methods.mle import mle_apx, mle_apx_paper_iterate
from ldpopt.methods.normalize import norm_cut, norm_hyb, norm_sub


def make_estimate(d: int, n: int, eps: float, rng) -> Estimate:
    p, q = 0.5, 1.0 / (np.exp(eps) + 1.0)
    w = 1.0 / np.arange(1, d + 1) ** 1.1
    true = rng.multinomial(n, w / w.sum())
    c = rng.binomial(true, p) + rng.binomial(n - true, q)
    return Estimate.from_counts(c.astype(np.float64), n, eps, p, q, "oue")


def best_of(fn, reps=3):
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t)
    return min(times), out


def main(d: int = 10**7) -> None:
    est = make_estimate(d, 10**8, 1.0, np.random.default_rng(0))
    print(f"d = {d:,}, OUE eps=1, n=1e8")
    for name, fn in [("norm-sub", lambda: norm_sub(est)),
                     ("mle-apx (sort)", lambda: mle_apx(est)),
                     ("mle-apx (brentq)", lambda: mle_apx(est, method="brentq")),
                     ("mle-apx-paper", lambda: mle_apx_paper_iterate(est)),
                     ("norm-cut", lambda: norm_cut(est)),
                     ("norm-hyb", lambda: norm_hyb(est))]:
        t, out = best_of(fn)
        f = out[0] if isinstance(out, tuple) else out
        extra = f", {out[1]} iterations" if isinstance(out, tuple) else ""
        print(f"  {name:18s} {t:7.3f} s   sum-1 = {f.sum() - 1:+.1e}, support {np.count_nonzero(f):,}{extra}")


if __name__ == "__main__":
    main(int(float(sys.argv[1])) if len(sys.argv) > 1 else 10**7)
