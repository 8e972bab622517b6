"""Post-processing across rounds against per-round post-processing, on longitudinal oracles.

n users keep their value for τ rounds and report through one longitudinal oracle (its real clients:
one memo per user, re-randomised every round). Per round: Base (f̃), Norm-Sub, Norm-Mul, PowerNS,
Norm; across rounds (:func:`ldpopt.multi.rounds.rounds_problem`, solved and certified by ldpopt):
the ``shared`` and ``independent`` couplings with λ = 0, and ``shared`` with λ = 10. The error is the
mean over rounds of ‖f_t − f‖² (MSE, ×10⁴), overall and per band of true frequency (``high``: f_v ≥ 1/d,
``low``: f_v < 1/d, summed over the band's values), mean ± s.e. over repetitions.

Run: ``python benchmarks/longitudinal_rounds.py [--quick]``; writes
benchmarks/results/longitudinal_rounds.{json,md}.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

import ldpopt
from ldpopt.multi.rounds import rounds_problem
from ldpopt.oracles.longitudinal import longitudinal_oracle

PER_ROUND = ["base", "norm-sub", "norm-mul", "power-ns", "norm"]
ACROSS = [("rounds-shared", "shared", 0.0), ("rounds-independent", "independent", 0.0),
          ("rounds-shared-smooth10", "shared", 10.0)]


def _zipf(d: int, s: float = 1.1) -> np.ndarray:
    w = 1.0 / np.arange(1, d + 1) ** s
    return w / w.sum()


def run(quick: bool = False) -> dict:
    """The grid (module docstring); quick: fewer repetitions and settings."""
    reps = 6 if quick else 30
    n, d, tau = (2000, 10, 4) if quick else (10_000, 16, 5)
    grid = [("l-osue", 2.0, 1.0), ("l-grr", 2.0, 1.0)] if quick else \
        [(o, ei, ei / 2) for o in ("l-osue", "l-grr") for ei in (1.0, 2.0, 4.0)]
    f_true = _zipf(d)
    true_counts = np.round(f_true * n).astype(np.int64)
    true_counts[0] += n - true_counts.sum()
    f_true = true_counts / n
    high = f_true >= 1.0 / d
    rows = []
    for name, eps_inf, eps_1 in grid:
        o = longitudinal_oracle(name, eps_inf, d, eps_1=eps_1)
        err: dict = {m: [] for m in PER_ROUND + [a[0] for a in ACROSS]}
        certified = 0
        t0 = time.perf_counter()
        for r in range(reps):
            gen = np.random.default_rng([r, int(eps_inf * 10), len(name)])
            values = np.repeat(np.arange(d), true_counts)
            cl = o.clients(n, gen)
            ests = [o.estimate(o.aggregate(cl.report(values, gen)), n) for _ in range(tau)]

            def score(F):
                sq = (np.asarray(F) - f_true[None, :]) ** 2  # (τ, d)
                return [sq.sum(axis=1).mean(), sq[:, high].sum(axis=1).mean(), sq[:, ~high].sum(axis=1).mean()]

            for m in PER_ROUND:
                err[m].append(score([ldpopt.postprocess(e, m) for e in ests]))
            for label, coupling, lam in ACROSS:
                sol = rounds_problem(ests, o, coupling=coupling, smooth=lam).solve()
                certified += bool(sol.checks is not None and sol.checks.passed)
                err[label].append(score(sol.f.reshape(tau, d)))
        secs = time.perf_counter() - t0
        for m, e in err.items():
            a = np.asarray(e) * 1e4
            mean, se = a.mean(axis=0), a.std(axis=0, ddof=1) / np.sqrt(len(a))
            rows.append({"oracle": o.label, "eps_inf": eps_inf, "eps_1": eps_1, "method": m,
                         "mse": mean[0], "mse_se": se[0], "mse_high": mean[1], "mse_high_se": se[1],
                         "mse_low": mean[2], "mse_low_se": se[2]})
        rows.append({"oracle": o.label, "eps_inf": eps_inf, "eps_1": eps_1, "method": "_meta",
                     "certified": certified, "solves": reps * len(ACROSS), "seconds": secs})
    return {"n": n, "d": d, "tau": tau, "reps": reps, "rows": rows}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--out", default=str(Path(__file__).parent / "results" / "longitudinal_rounds"))
    a = ap.parse_args()
    res = run(quick=a.quick)
    Path(a.out + ".json").write_text(json.dumps(res, indent=1))
    lines = [f"n = {res['n']}, d = {res['d']}, τ = {res['tau']}, {res['reps']} repetitions; MSE ×10⁴ (mean ± s.e.)", "",
             "| oracle | ε∞ | ε₁ | method | MSE | high band | low band |", "|---|---|---|---|---|---|---|"]
    for r in res["rows"]:
        if r["method"] == "_meta":
            lines.append(f"| {r['oracle']} | {r['eps_inf']:g} | {r['eps_1']:g} | (certified {r['certified']}/"
                         f"{r['solves']} across-rounds solves, {r['seconds']:.0f} s) | | | |")
            continue
        lines.append(f"| {r['oracle']} | {r['eps_inf']:g} | {r['eps_1']:g} | {r['method']} | "
                     f"{r['mse']:.2f} ± {r['mse_se']:.2f} | {r['mse_high']:.2f} ± {r['mse_high_se']:.2f} | "
                     f"{r['mse_low']:.2f} ± {r['mse_low_se']:.2f} |")
    Path(a.out + ".md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
