"""``ldpopt.choose``'s pick against doing nothing special (Norm-Sub) on clean data of the shapes a user
may have: the pick's real MSE over Norm-Sub's on the same estimate.

Shapes (d = 256, n = 10⁵): a near tie at the top (0.200, 0.199, then Zipf(1.5) from rank 3), a flat head
(10 values at 0.06), two points (0.5005, 0.4995, every other value 0), a heavy tail (Zipf 1.1) and
Zipf(1.5); oracles GRR, OUE, OLH at ε ∈ {1, 4}; ``choose`` with its defaults (closed-form candidates,
20 re-simulations); R repetitions per cell (fresh counts and reports, seeded by the cell's index). Two
ratios: on the estimate ``choose`` saw (one draw: what that user gets), and over ``--fresh`` new draws of
the reports from the same users (the true law: the pick's MSE, the quantity the rule bounds).

Usage: python benchmarks/choose_shapes.py [--reps R] [--fresh F] [--out FILE]; writes
benchmarks/results/choose_shapes.md.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from collections import Counter
from pathlib import Path

import numpy as np

import ldpopt
from ldpopt import methods, oracles

D, N = 256, 100_000


def zipf(s: float, d: int = D) -> np.ndarray:
    w = 1.0 / np.arange(1, d + 1) ** s
    return w / w.sum()


def shapes() -> dict:
    rest = 1.0 / np.arange(3, D + 1) ** 1.5
    return {"near tie": np.concatenate([[0.200, 0.199], 0.601 * rest / rest.sum()]),
            "flat head": np.concatenate([np.full(10, 0.06), 0.4 * zipf(1.5, D - 10)]),
            "two-point": np.concatenate([[0.5005, 0.4995], np.zeros(D - 2)]),
            "heavy tail": zipf(1.1), "zipf 1.5": zipf(1.5)}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--fresh", type=int, default=6, help="fresh draws of the true law per repetition")
    ap.add_argument("--out", default=str(Path(__file__).resolve().parent / "results" / "choose_shapes.md"))
    a = ap.parse_args(argv)
    t0 = time.time()
    rows = ["| shape | oracle | ε | picks | pick's MSE ÷ Norm-Sub's: mean ± SE | max | over fresh draws: mean ± SE | max |",
            "|---|---|---|---|---|---|---|---|"]
    cell = 0
    for sh, f in shapes().items():
        for on in ("grr", "oue", "olh"):
            for eps in (1.0, 4.0):
                cell += 1
                o = oracles.get(on, epsilon=eps, d=D)
                gen = np.random.default_rng(cell)
                ratio, picks, expected = [], [], []
                for _ in range(a.reps):
                    tc = gen.multinomial(N, f / f.sum())
                    truth = tc / N
                    est = o.estimate(o.sample_counts(tc, gen), N)
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        best = ldpopt.choose(est, rng=int(gen.integers(2 ** 31))).best
                    mse = [np.mean((np.asarray(methods.postprocess(est, m)) - truth) ** 2) for m in (best, "norm-sub")]
                    ratio.append(mse[0] / mse[1])
                    fresh = [o.estimate(o.sample_counts(tc, gen), N) for _ in range(a.fresh)]  # the true law
                    exp = [np.mean([np.mean((np.asarray(methods.postprocess(e, m)) - truth) ** 2) for e in fresh])
                           for m in (best, "norm-sub")]
                    expected.append(exp[0] / exp[1])
                    picks.append(best)
                r, x = np.array(ratio), np.array(expected)
                rows.append(f"| {sh} | {on.upper()} | {eps:g} | {', '.join(f'{k} {v}' for k, v in Counter(picks).most_common())} "
                            f"| {r.mean():.3g} ± {r.std(ddof=1) / np.sqrt(r.size):.2g} | {r.max():.3g} "
                            f"| {x.mean():.3g} ± {x.std(ddof=1) / np.sqrt(x.size):.2g} | {x.max():.3g} |")
                print(rows[-1], file=sys.stderr, flush=True)
    text = (f"# choose's pick against Norm-Sub on clean shapes\n\n`python benchmarks/choose_shapes.py "
            f"{' '.join(argv if argv is not None else sys.argv[1:])}`: d = {D}, n = {N:,}, {a.reps} repetitions per cell, "
            f"{a.fresh} fresh draws of the true law per repetition, choose's defaults (20 re-simulations); "
            f"{time.time() - t0:.0f} s on two shared cores.\n\n" + "\n".join(rows) + "\n")
    Path(a.out).write_text(text)
    print(text)


if __name__ == "__main__":
    main()
