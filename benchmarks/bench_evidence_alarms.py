"""False alarms of the poisoning evidence test (``robust.attack_evidence``) on clean data, now and
before (a normal approximation of the negative-mass sum, benchmarks/_previous_guarded.py), with
Clopper–Pearson 95 % intervals.

Cells: shape × d, d ∈ {2, 4, 8}; shapes: one value at or near zero (the others a Dirichlet(1) draw),
two values at or near zero, and a point mass (all users on one value). Each clean estimate draws an
oracle (GRR, OUE, OLH), ε ∈ {0.5, 1, 2, 4} and n ∈ {10³, 10⁴, 10⁵}, a histogram of the shape, then
counts from the oracle's exact-in-law sampler (``sample_counts_batch``, 50 per histogram). The rate at
α is the share of p-values below α.

Usage: python benchmarks/bench_evidence_alarms.py [--runs R] [--out FILE]; --table FILE prints the table.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
from scipy import stats

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _previous_guarded import previous_evidence

from ldpopt import oracles, robust

OUT = Path(__file__).resolve().parent / "results" / "evidence_alarms.json"
ALPHAS = (1e-2, 1e-3, 1e-4)


def histogram(gen, shape: str, d: int) -> np.ndarray:
    if shape == "point mass":
        f = np.zeros(d)
        f[gen.integers(d)] = 1.0
        return f
    k = 1 if shape == "one near zero" else 2
    f = gen.dirichlet(np.ones(d))
    f[gen.choice(d, k, replace=False)] = gen.uniform(0, 2e-4, k)
    return f / f.sum()


def cells():
    for d in (2, 4, 8):
        for shape in ("one near zero", "two near zero", "point mass"):
            if not (shape == "two near zero" and d == 2):
                yield shape, d


def cp(k: int, n: int) -> tuple[float, float]:
    lo = 0.0 if k == 0 else float(stats.beta.ppf(0.025, k, n - k + 1))
    hi = 1.0 if k == n else float(stats.beta.ppf(0.975, k + 1, n - k))
    return lo, hi


def run(quick: bool = False) -> dict:
    """The bench's contract (``benchmarks/run.py``): 1,000 clean estimates per cell into
    ``results/evidence_alarms.json``; ``quick``: 50 per cell into ``results/quick/``."""
    out = OUT.parent / "quick" / "evidence_alarms.json" if quick else OUT
    out.parent.mkdir(parents=True, exist_ok=True)
    main(["--runs", "50" if quick else "1000", "--out", str(out)])
    return json.loads(out.read_text())


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=2000)
    ap.add_argument("--out", default=str(OUT))
    ap.add_argument("--table")
    a = ap.parse_args(argv)
    if a.table:
        print(table(json.loads(Path(a.table).read_text())))
        return 0
    t0, rows = time.time(), []
    gen = np.random.default_rng(20261126)
    for shape, d in cells():
        now, before = [], []
        while len(now) < a.runs:
            o = oracles.get(("grr", "oue", "olh")[len(now) // 50 % 3], epsilon=float(gen.choice([0.5, 1, 2, 4])), d=d)
            n = int(gen.choice([1_000, 10_000, 100_000]))
            tc = gen.multinomial(n, histogram(gen, shape, d))
            for c in o.sample_counts_batch(tc, 50, gen):
                est = o.estimate(c, n)
                now.append(robust.attack_evidence(est, o)["p_value"])
                before.append(previous_evidence(est, o))
        now, before = np.array(now[:a.runs]), np.array(before[:a.runs])
        for alpha in ALPHAS:
            k, kb = int((now < alpha).sum()), int((before < alpha).sum())
            rows.append({"shape": shape, "d": d, "alpha": alpha, "runs": a.runs, "alarms": k, "ci": cp(k, a.runs),
                         "alarms_before": kb, "ci_before": cp(kb, a.runs)})
            print(rows[-1], flush=True)
    Path(a.out).write_text(json.dumps({"command": "python benchmarks/bench_evidence_alarms.py "
                                       + " ".join(argv or sys.argv[1:]), "seconds": round(time.time() - t0, 1),
                                       "rows": rows}, indent=1))
    return 0


def table(doc: dict) -> str:
    out = ["| shape | d | α | runs | now: rate [95 % CI] | before: rate [95 % CI] |", "| --- | --- | --- | --- | --- | --- |"]
    for r in doc["rows"]:
        out.append(f"| {r['shape']} | {r['d']} | {r['alpha']:g} | {r['runs']} | {r['alarms'] / r['runs']:.2%} "
                   f"[{r['ci'][0]:.2%}, {r['ci'][1]:.2%}] | {r['alarms_before'] / r['runs']:.2%} "
                   f"[{r['ci_before'][0]:.2%}, {r['ci_before'][1]:.2%}] |")
    tot = sum(r["runs"] for r in doc["rows"] if r["alpha"] == 1e-4)
    k = sum(r["alarms"] for r in doc["rows"] if r["alpha"] == 1e-4)
    kb = sum(r["alarms_before"] for r in doc["rows"] if r["alpha"] == 1e-4)
    lo, hi = cp(k, tot)
    out.append(f"\nAll cells at α = 1e-4: now {k} of {tot} [{lo:.2e}, {hi:.2e}]; before {kb} of {tot}.")
    return "\n".join(out)


if __name__ == "__main__":
    sys.exit(main())
