"""``ldpopt.choose`` over rounds under drift: its pick's MSE against the best candidate's, with the
drift estimate and the plausible drifts (now) and with users assumed to keep their value (before:
one world, no drift).

Setting: L-OSUE (ε∞ = 4, ε₁ = 2), d = 32, n = 20,000 users, Zipf(1.2) first round, τ = 4 rounds;
each later round a share ρ of the users, drawn afresh, take a value from the first round's
frequencies under a fresh random permutation (:func:`ldpopt.multi.drift.drifting_collection`,
per user: a changed user takes a new memo). Candidates: the closed forms per round and the three
across-rounds problems; ``choose`` with 8 re-simulations. Each candidate's real MSE is against the
rounds' true histograms; the ratio is the pick's MSE over the smallest.

Usage: python benchmarks/bench_choose_drift.py [--reps R] [--out FILE]; ``--quick`` (``run(quick=True)``,
as ``benchmarks/run.py --quick`` calls it): one repetition per drift into ``results/quick/``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from pathlib import Path
from unittest import mock

import numpy as np

import ldpopt
from ldpopt import methods
from ldpopt.multi import drift as _drift
from ldpopt.multi.drift import drifting_collection
from ldpopt.multi.rounds import ACROSS, rounds_problem
from ldpopt.oracles.longitudinal import LOSUE

D, N, TAU = 32, 20_000, 4
QUICK = Path(__file__).resolve().parent / "results" / "quick"
RHOS = (0.0, 0.05, 0.1, 0.25, 0.5, 0.75, 1.0)


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


def run(quick: bool = False) -> dict:
    """The bench's contract (``benchmarks/run.py``): the full table into ``results/choose_drift.json``;
    ``quick``: one repetition per drift into ``results/quick/choose_drift.json``."""
    if quick:
        QUICK.mkdir(parents=True, exist_ok=True)
        return main(["--reps", "1", "--out", str(QUICK / "choose_drift.json")])
    return main([])


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--out", default="benchmarks/results/choose_drift.json")
    a = ap.parse_args(argv)
    t0 = time.time()
    w = 1.0 / np.arange(1, D + 1) ** 1.2
    base = np.random.default_rng(0).multinomial(N, w / w.sum())
    o = LOSUE(4.0, D, eps_1=2.0)
    rows = []
    for rho in RHOS:
        for rep in range(a.reps):
            ests, truths = drifting_collection(o, base, TAU, rho, 1000 + rep)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                now = ldpopt.choose(ests, longitudinal=o, n_repeats=8, rng=rep)
                with mock.patch.object(_drift, "rounds_drift", lambda e, oo: {
                        "excess": 0.0, "se": 0.0, "z": 0.0, "status": "none", "weight": 0.0, "deviation": 0.0,
                        "deviation_excess": 0.0, "deviation_se": 0.0}):
                    before = ldpopt.choose(ests, longitudinal=o, n_repeats=8, rng=rep)
            mse = real_mse(ests, truths, o, list(now.table.index))
            best = min(mse, key=mse.get)
            rows.append({"rho": rho, "rep": rep, "status": now.drift["status"], "z": now.drift["z"],
                         "weight": now.drift["weight"], "pick": now.best, "pick_before": before.best, "best": best,
                         "ratio": mse[now.best] / mse[best], "ratio_before": mse[before.best] / mse[best],
                         "smooth_over_normsub": mse["rounds-shared-smooth"] / mse["norm-sub"]})
            print(rows[-1], file=sys.stderr)
    res = {"command": "python benchmarks/bench_choose_drift.py " + " ".join(argv or sys.argv[1:]),
           "setting": {"oracle": "L-OSUE eps=4 eps_1=2", "d": D, "n": N, "tau": TAU, "n_repeats": 8},
           "seconds": round(time.time() - t0, 1), "rows": rows}
    with open(a.out, "w") as fh:
        json.dump(res, fh, indent=1)
    print(f"wrote {a.out} ({len(rows)} runs, {res['seconds']} s)")
    return res


if __name__ == "__main__":
    main()
