"""LDP³'s KL (``ldpopt.experiments.task_kinds.ldpcube.kl``: Σ f'_v log(f'_v/f_v) over f'_v, f_v > 0, with f' not
renormalised) against the same KL of f' renormalised to sum 1: which method wins each repetition, and how
often Power's unnormalised KL is negative (its output sums below 1, which that measure rewards).

Zipf(1.5), n = 10⁵, d = 256 (``ldpcube_grid``'s), LDP³'s seven methods, 30 repetitions per (oracle, ε), seed 2025.

Run: ``python benchmarks/ldpcube_kl.py``; writes benchmarks/results/ldpcube_kl.md (about 30 s).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ldpopt import datasets, oracles
from ldpopt.experiments.task_kinds.ldpcube import kl
from ldpopt.methods import registry as methods

METHODS = ["base-pos", "norm", "norm-cut", "norm-mul", "norm-sub", "power", "power-ns"]
CELLS = [("grr", 1.0), ("grr", 4.0), ("oue", 1.0), ("oue", 4.0), ("olh", 1.0), ("olh", 4.0)]
REPS = 30


def main() -> None:
    ds = datasets.load("zipf", n=100_000, d=256, rng=1)
    f = ds.frequencies
    rows = ["| oracle | ε | wins, LDP³'s KL | wins, KL of f'/Σf' | Power's KL < 0 | Power's Σf' (mean) |",
            "|---|---|---|---|---|---|"]
    for name, eps in CELLS:
        o = oracles.get(name, epsilon=eps, d=256)
        gen = np.random.default_rng(2025)
        raw: dict[str, int] = {}
        norm: dict[str, int] = {}
        neg, sums = 0, []
        for _ in range(REPS):  # repetitions
            est = o.simulate(ds.counts, gen)
            out = {m: methods.postprocess(est, m) for m in METHODS}
            r = {m: kl(v, f) for m, v in out.items()}
            n = {m: kl(v / v.sum(), f) for m, v in out.items()}
            raw[min(r, key=r.__getitem__)] = raw.get(min(r, key=r.__getitem__), 0) + 1
            norm[min(n, key=n.__getitem__)] = norm.get(min(n, key=n.__getitem__), 0) + 1
            neg += r["power"] < 0
            sums.append(float(out["power"].sum()))
        fmt = lambda w: ", ".join(f"{m} {c}" for m, c in sorted(w.items(), key=lambda x: -x[1]))
        rows.append(f"| {name} | {eps:g} | {fmt(raw)} | {fmt(norm)} | {neg}/{REPS} | {np.mean(sums):.3f} |")
    text = ("# LDP³'s KL, unnormalised and renormalised\n\n`python benchmarks/ldpcube_kl.py`: Zipf(1.5), n = 10⁵, "
            f"d = 256, {REPS} repetitions per cell, seed 2025; wins out of {REPS}.\n\n" + "\n".join(rows) + "\n")
    out_path = Path(__file__).parent / "results" / "ldpcube_kl.md"
    out_path.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
