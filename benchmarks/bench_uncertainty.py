"""Benchmark section "uncertainty": intervals and ``choose`` at Kosarak's domain size.

Issue targets: Norm-Sub intervals at d = 42,178 with 200 resamples in < 2 s; ``ldpopt.choose``
over every closed-form method at d = 42,178 in < 30 s. Data: Zipf(1.5) true counts (d = 42,178,
n = 10⁶, ε = 1; Kosarak itself does not ship), fast-path estimate (seed 7), OUE / GRR / OLH.
Measured in this process, wall and CPU time of one call each (the box is shared: the load average
at the start of each case is recorded), and, side by side, the bootstrap's Norm-Sub path
(:func:`ldpopt.uncertainty.resample.apply_batch`: the projection per row of the (B, d) batch)
against the generic path (an Estimate built per resample, then the registry's method). ``--quick``: d = 1,024, n = 10⁵.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _harness as H  # noqa: E402

SECTION = "uncertainty"
ORACLES = ("oue", "grr", "olh")


def measure(oracle: str, d: int, n: int, eps: float, B: int, R: int) -> dict:
    import ldpopt
    from ldpopt.estimate import Estimate
    from ldpopt.uncertainty import intervals
    from ldpopt.uncertainty.fit import plausible_truth, population
    from ldpopt.uncertainty.resample import apply_batch, draw_counts

    o = ldpopt.oracles.get(oracle, eps, d)
    est = o.simulate(H.zipf_counts(d, n), 7)
    load = os.getloadavg()[0]
    _, ci_wall, ci_cpu = H.timed(lambda: intervals(est, "norm-sub", 0.95, n_resamples=B, rng=1))
    pop = population(plausible_truth(est), n)
    C, draw_wall, _ = H.timed(lambda: draw_counts(o, pop, B, np.random.default_rng(2)))
    F = (C / n - est.q) / (est.p - est.q)
    S, batch_wall, _ = H.timed(lambda: apply_batch(est, "norm-sub", F))
    L, loop_wall, _ = H.timed(lambda: np.stack([ldpopt.postprocess(Estimate.from_counts(
        c, n, est.epsilon, est.p, est.q, oracle=est.oracle), "norm-sub") for c in C]))
    c, ch_wall, ch_cpu = H.timed(lambda: ldpopt.choose(est, "full", n_repeats=R, rng=3))
    return {"oracle": oracle, "d": d, "n": n, "epsilon": eps, "B": B, "R": R, "load": load,
            "ci_wall": ci_wall, "ci_cpu": ci_cpu, "draw_wall": draw_wall,
            "normsub_batched_wall": batch_wall, "normsub_loop_wall": loop_wall,
            "normsub_maxdiff": float(np.abs(S - L).max()),
            "choose_wall": ch_wall, "choose_cpu": ch_cpu, "choose_best": c.best,
            "choose_methods": len(c.table)}


def run(opts) -> dict:
    out = Path(opts.out)
    out.mkdir(parents=True, exist_ok=True)
    d, n = (1024, 10**5) if opts.quick else (42_178, 10**6)
    rows = []
    for oracle in ORACLES:
        r = measure(oracle, d, n, 1.0, 200, 20)
        rows.append(r)
        print(f"  {oracle} d={d}: intervals {H.fmt_seconds(r['ci_wall'])}, choose {H.fmt_seconds(r['choose_wall'])} "
              f"(load {r['load']:.1f})", flush=True)
    doc = {"section": SECTION, "command": getattr(opts, "command", ""), "environment": H.environment(),
           "rows": rows}
    (out / f"{SECTION}.json").write_text(json.dumps(doc, indent=2))
    (out / f"{SECTION}.md").write_text(markdown(doc))
    return doc


def markdown(doc: dict) -> str:
    env = doc["environment"]
    lines = [f"Command: `{doc['command']}`  ",
             f"Machine: {env['cpu']}, {env['cores']} cores; Python {env['python']}, numpy {env['numpy']}; "
             f"commit {env['git_commit'][:10]}; {env['date']}", "",
             "Zipf(1.5), ε = 1, fast-path estimate. Intervals: `ldpopt.uncertainty.intervals(est, "
             "'norm-sub', 0.95, n_resamples=200)` (draw + Norm-Sub per resample + basic interval), wall (CPU). "
             "Norm-Sub on the 200 resamples: apply_batch vs an Estimate + registry call per resample (max "
             "abs diff). choose: `ldpopt.choose(est, 'full', n_repeats=20)` over the 9 closed forms. "
             "Load: 1-min load average at the start (the machine has 2 cores).", "",
             "| oracle | d | n | load | intervals (target < 2 s) | draw 200 | Norm-Sub apply_batch | "
             "Norm-Sub via Estimate | max diff | choose (target < 30 s) | best |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in doc["rows"]:
        lines.append(
            f"| {r['oracle'].upper()} | {r['d']:,} | {r['n']:.0e} | {r['load']:.1f} | "
            f"{H.fmt_seconds(r['ci_wall'])} ({H.fmt_seconds(r['ci_cpu'])}) | {H.fmt_seconds(r['draw_wall'])} | "
            f"{H.fmt_seconds(r['normsub_batched_wall'])} | {H.fmt_seconds(r['normsub_loop_wall'])} | "
            f"{r['normsub_maxdiff']:.1e} | {H.fmt_seconds(r['choose_wall'])} ({H.fmt_seconds(r['choose_cpu'])}) | "
            f"{r['choose_best']} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    if "--quick" in sys.argv or len(sys.argv) == 1 or sys.argv[1] == "--out":
        import argparse

        ap = argparse.ArgumentParser()
        ap.add_argument("--quick", action="store_true")
        ap.add_argument("--out", default=str(H.BENCH_DIR / "results"))
        a = ap.parse_args()
        a.command = "python benchmarks/bench_uncertainty.py" + (" --quick" if a.quick else "")
        if a.quick and a.out == str(H.BENCH_DIR / "results"):
            a.out = str(H.BENCH_DIR / "results" / "quick")
        run(a)
    else:
        H.section_main(SECTION, lambda cfg: None, markdown)
