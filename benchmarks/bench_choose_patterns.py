"""``ldpopt.choose`` over rounds on generated drift patterns: its pick's real MSE over the best
candidate's, per pattern, with repetitions and SE.

Patterns (τ = 4 rounds, d = 32, n = 20,000, per user through ``oracle.clients``: a user who changes
value takes a new memo): shapes Zipf(1.2), near-two-point (0.50, 0.49, the rest spread) and uniform;
drift fractions ρ ∈ {0.05, 0.1, 0.25} per round; directions *rising* (the movers go to one value,
initially among the rarest), *falling* (a share ρ of the most popular value's users leave it each
round, for uniform values), *permuted* (the movers take a value from the first round's law under a
fresh permutation), and none. Oracles: L-GRR and L-OSUE (ε∞ = 4, ε₁ = 2). ``choose`` with 8
re-simulations; the ratio is the pick's MSE over the smallest among the candidates.

Usage: python benchmarks/bench_choose_patterns.py [--reps R] [--out FILE] [--table FILE].
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np

import ldpopt
from ldpopt import methods
from ldpopt.multi.rounds import ACROSS, rounds_problem
from ldpopt.oracles.longitudinal import LGRR, LOSUE

D, N, TAU = 32, 20_000, 4
OUT = Path(__file__).resolve().parent / "results" / "choose_patterns.json"
SHAPES = ("zipf", "near-two-point", "uniform")
DIRECTIONS = ("rising", "falling", "permuted")
RHOS = (0.05, 0.1, 0.25)


def shape(name: str) -> np.ndarray:
    if name == "zipf":
        w = 1.0 / np.arange(1, D + 1) ** 1.2
    elif name == "near-two-point":
        w = np.concatenate([[0.50, 0.49], np.full(D - 2, 0.01 / (D - 2))])
    else:
        w = np.ones(D)
    return w / w.sum()


def pattern_values(f: np.ndarray, direction: str, rho: float, gen) -> np.ndarray:
    """(τ, n) values of the users over the rounds (module notes)."""
    d = f.size
    V = np.empty((TAU, N), dtype=np.int64)
    V[0] = gen.permutation(np.repeat(np.arange(d), gen.multinomial(N, f)))
    rare = int(np.argsort(f, kind="stable")[0])
    top = int(np.argmax(f))
    for t in range(1, TAU):  # rounds
        V[t] = V[t - 1]
        if direction == "none" or rho == 0:
            continue
        if direction == "falling":
            moved = (V[t] == top) & (gen.random(N) < rho)
            V[t, moved] = gen.integers(0, d, size=int(moved.sum()))
        else:
            moved = gen.random(N) < rho
            if direction == "rising":
                V[t, moved] = rare
            else:
                V[t, moved] = gen.choice(gen.permutation(d), size=int(moved.sum()), p=f)
    return V


def collection(o, f, direction, rho, seed):
    gen = np.random.default_rng(seed)
    V = pattern_values(f, direction, rho, gen)
    C = o.clients(N, gen).rounds(V, gen)
    truths = np.stack([np.bincount(v, minlength=o.d) / N for v in V])
    return [o.estimate(c, N) for c in C], truths


def real_mse(ests, truths, o, names) -> dict:
    out = {}
    for m in names:
        if m in ACROSS:
            coupling, lam = ACROSS[m]
            F = rounds_problem(ests, o, coupling=coupling, smooth=lam).solve().f.reshape(len(ests), -1)
        else:
            F = np.stack([methods.postprocess(e, m) for e in ests])
        out[m] = float(np.mean((F - truths) ** 2))
    return out


def patterns():
    for sh in SHAPES:
        yield sh, "none", 0.0
        for direction in DIRECTIONS:
            for rho in RHOS:
                yield sh, direction, rho


def run(quick: bool = False) -> dict:
    """The bench's contract (``benchmarks/run.py``): 2 repetitions per pattern into
    ``results/choose_patterns.json``; ``quick``: L-GRR, one repetition, into ``results/quick/``."""
    out = OUT.parent / "quick" / "choose_patterns.json" if quick else OUT
    out.parent.mkdir(parents=True, exist_ok=True)
    main(["--reps", "1" if quick else "2", "--oracles", "lgrr" if quick else "lgrr,losue", "--out", str(out)])
    return json.loads(out.read_text())


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=4)
    ap.add_argument("--out", default=str(OUT))
    ap.add_argument("--oracles", default="lgrr,losue")
    ap.add_argument("--table")
    a = ap.parse_args(argv)
    if a.table:
        print(table(json.loads(Path(a.table).read_text())))
        return 0
    t0, rows = time.time(), []
    ors = {"lgrr": LGRR(4.0, D, eps_1=2.0), "losue": LOSUE(4.0, D, eps_1=2.0)}
    for oname in a.oracles.split(","):
        o = ors[oname]
        for sh, direction, rho in patterns():
            for rep in range(a.reps):
                ests, truths = collection(o, shape(sh), direction, rho, 1000 + rep)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    ch = ldpopt.choose(ests, longitudinal=o, n_repeats=8, rng=rep)
                mse = real_mse(ests, truths, o, list(ch.table.index))
                best = min(mse, key=mse.get)
                rows.append({"oracle": oname, "shape": sh, "direction": direction, "rho": rho, "rep": rep,
                             "pick": ch.best, "best": best, "ratio": mse[ch.best] / mse[best],
                             "status": ch.drift["status"], "cannot_tell": bool(ch.drift.get("cannot_tell", False))})
                print(rows[-1], file=sys.stderr, flush=True)
        Path(a.out).write_text(json.dumps({"command": "python benchmarks/bench_choose_patterns.py "
                                           + " ".join(argv or sys.argv[1:]), "d": D, "n": N, "tau": TAU,
                                           "seconds": round(time.time() - t0, 1), "rows": rows}, indent=1))
    return 0


def table(doc: dict) -> str:
    import pandas as pd

    df = pd.DataFrame(doc["rows"])
    g = df.groupby(["oracle", "shape", "direction", "rho"], sort=False)
    out = ["| oracle | shape | drift | ρ | picks | ratio to best (mean ± SE) | worst | cannot tell |",
           "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for (o, s, dd, r), x in g:
        picks = ", ".join(f"{k} ×{v}" for k, v in x["pick"].value_counts().items())
        se = x["ratio"].std(ddof=1) / np.sqrt(len(x)) if len(x) > 1 else 0.0
        out.append(f"| {o} | {s} | {dd} | {r:g} | {picks} | {x['ratio'].mean():.2f} ± {se:.2f} | "
                   f"{x['ratio'].max():.2f} | {int(x['cannot_tell'].sum())}/{len(x)} |")
    within = (df["ratio"] <= 1.2).mean()
    out.append("")
    out.append(f"Within 1.2× of the best: {within:.1%} of {len(df)} runs; worst {df['ratio'].max():.2f}.")
    return "\n".join(out)


if __name__ == "__main__":
    sys.exit(main())
