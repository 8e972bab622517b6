"""Validate ``ldpopt.choose`` against ground truth on the shipped real datasets.

Per cell (dataset × oracle × ε × query): one simulated estimate of the real data (fast path, seeded);
``choose`` ranks the closed forms on it (R = 20 re-simulations of its Norm-Sub fit); the *true*
expected loss of every method is the mean over ``TRUE_RUNS`` fresh simulations of the real data.
A rule "wins" a cell when its method's true loss is within 1.2× of the best method's (for hh,
loss = 1 − F1). Rules: ``choose``; always Norm-Sub; the papers' recommendation by query type (NDSS
§VI: single values → Base-Cut, the most frequent values → Norm; heavy hitters → Base-Cut, the
sensitivity threshold of Jia & Gong / Erlingsson et al.).

AOL (``aol``: the query-prefix data, d = 120,978) runs with ``AOL_RUNS`` (10) true runs and 10
``choose`` repetitions instead of 20 (its cells are ~25× the others' domain).

``python benchmarks/validate_choose.py [--quick] [--datasets a,b] [--merge] [--out DIR]`` writes
choose_validation.{json,md}; ``--merge`` replaces only the given datasets' rows in the existing
results (so one dataset can be re-run without the rest).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

import ldpopt
from ldpopt.recommend import CLOSED_FORM, losses
from ldpopt.uncertainty import parse_query
from ldpopt.uncertainty.resample import apply_batch, draw_counts

DATASETS = ("emoji", "bms-webview-1", "bms-webview-2", "retail", "aol")
ORACLES = ("grr", "oue", "olh")
EPSILONS = (0.5, 1.0, 2.0, 4.0)
QUERIES = ("full", "topk:10", "hh:0.01")
PAPER_RULE = {"full": "base-cut", "topk:10": "norm", "hh:0.01": "base-cut"}
TRUE_RUNS = 20
AOL_RUNS = 10
WITHIN = 1.2


def loss_ratio(chosen: float, best: float) -> float:
    """chosen / best, with the convention for a zero best loss (an exact heavy-hitter set, 1 − F1 = 0):
    1 when the chosen loss is 0 too (a tie at the optimum), inf otherwise (no finite factor
    reaches an exact answer). Raises on negative or NaN losses."""
    if not (chosen >= 0 and best >= 0) or chosen < best:
        raise ValueError(f"losses must satisfy 0 <= best <= chosen, got chosen={chosen!r}, best={best!r}")
    if best == 0:
        return 1.0 if chosen == 0 else float("inf")
    return chosen / best


def wins(chosen: float, best: float) -> bool:
    """A rule wins a cell when its method's true loss is within ``WITHIN``× of the best (ratio ≤ 1.2,
    so with an exact best it must be exact as well)."""
    return loss_ratio(chosen, best) <= WITHIN


def cell(ds, oracle, eps, queries, seed, runs=TRUE_RUNS):
    o = ldpopt.oracles.get(oracle, eps, ds.d)
    est = o.simulate(ds.counts, seed)
    C = draw_counts(o, ds.counts, runs, np.random.default_rng(seed + 1))
    F = (C / est.n - est.q) / (est.p - est.q)
    outs = {m: apply_batch(est, m, F, counts=C) for m in CLOSED_FORM}
    rows = []
    for qs in queries:
        q = parse_query(qs)
        true = {m: float(losses(q, outs[m], ds.frequencies).mean()) for m in CLOSED_FORM}
        best = min(true.values())
        ch = ldpopt.choose(est, qs, rng=seed + 2, n_repeats=min(runs, 20))
        ok = {rule: wins(true[m], best) for rule, m in
              (("choose", ch.best), ("norm-sub", "norm-sub"), ("paper", PAPER_RULE[qs]))}
        ratio = loss_ratio(true[ch.best], best)
        rows.append({"dataset": ds.name, "oracle": oracle, "epsilon": eps, "query": qs, "chosen": ch.best,
                     "true_best": min(true, key=true.get), "best_loss": best,
                     "n_within": sum(wins(v, best) for v in true.values()),
                     "ratio_chosen": ratio if np.isfinite(ratio) else "inf",
                     **{f"win_{k}": v for k, v in ok.items()}})
    return rows


def summary(t):
    """Per query (and "all"): the win fractions of the three rules, and how many cells are ties:
    ``exact_best`` (best true loss 0, where "within 1.2×" means "also exact"), ``all_within``
    (every candidate within 1.2× of the best: any rule wins, the cell says nothing about choosing),
    ``choose_open`` (choose's win fraction over the other cells, or NaN if none)."""
    import pandas as pd

    n_cand = len(CLOSED_FORM)
    rules = ["win_choose", "win_norm-sub", "win_paper"]

    def one(g):
        open_ = g[g["n_within"] < n_cand]
        return pd.Series({**g[rules].mean().to_dict(), "cells": len(g),
                          "exact_best": int((g["best_loss"] == 0).sum()),
                          "all_within": int((g["n_within"] == n_cand).sum()),
                          "choose_open": open_["win_choose"].mean() if len(open_) else float("nan")})

    out = pd.DataFrame({q: one(g) for q, g in t.groupby("query")}).T
    out.loc["all"] = one(t)
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--datasets", default=None, help="comma-separated subset of " + ",".join(DATASETS))
    ap.add_argument("--merge", action="store_true", help="replace only these datasets' rows in the existing results")
    ap.add_argument("--out", default=str(Path(__file__).resolve().parent / "results"))
    a = ap.parse_args(argv)
    dss = DATASETS[:1] if a.quick else DATASETS
    if a.datasets:
        dss = tuple(x.strip() for x in a.datasets.split(",") if x.strip())
        if bad := set(dss) - set(DATASETS):
            ap.error(f"--datasets: unknown {sorted(bad)}; choose from {DATASETS}")
    orcs = ORACLES[1:2] if a.quick else ORACLES
    epss = EPSILONS[1:2] if a.quick else EPSILONS
    rows, t0 = [], time.perf_counter()
    for name in dss:
        ds = ldpopt.datasets.load(name)
        for i, oracle in enumerate(orcs):
            for j, eps in enumerate(epss):
                rows += cell(ds, oracle, eps, QUERIES, 1000 + 10 * i + j,
                             AOL_RUNS if name == "aol" else TRUE_RUNS)
                print(f"  {name} {oracle} {eps}: {[r['chosen'] for r in rows[-len(QUERIES):]]}", flush=True)
    import pandas as pd

    out = Path(a.out) / ("quick" if a.quick and a.out.endswith("results") else "")
    seconds = time.perf_counter() - t0
    cmd = "python benchmarks/validate_choose.py" + (" --quick" if a.quick else "")
    if a.datasets:
        cmd += f" --datasets {','.join(dss)}" + (" --merge" if a.merge else "")
    if a.merge:  # keep the other datasets' rows (and the commands that made them)
        old = json.loads((out / "choose_validation.json").read_text())
        if any("n_within" not in r for r in old["rows"]):
            ap.error("--merge: the saved rows predate best_loss/n_within; re-run without --merge")
        rows = [r for r in old["rows"] if r["dataset"] not in {ldpopt.datasets.load(x).name for x in dss}] + rows
        cmd = "; ".join([*old.get("commands", [old["command"]]), cmd])
        seconds += old.get("seconds", 0.0)
    t = pd.DataFrame(rows)
    summ = summary(t)
    out.mkdir(parents=True, exist_ok=True)
    (out / "choose_validation.json").write_text(json.dumps({"command": cmd, "commands": cmd.split("; "),
                                                            "rows": rows, "seconds": seconds}, indent=2))
    md = [f"Command: `{cmd}` ({len(t)} cells, {seconds:.0f} s wall in all)", "",
          "Fraction of cells where the rule's method has true loss within 1.2× of the best closed form:", "",
          "| query | choose | always Norm-Sub | papers' rule |", "|---|---|---|---|",
          *[f"| {q} | {r['win_choose']:.2f} | {r['win_norm-sub']:.2f} | {r['win_paper']:.2f} |"
            for q, r in summ.iterrows()], "",
          "Ties (a cell counts for every rule whose method is within 1.2×, so tied methods all win):", "",
          "| query | cells | exact best (loss 0) | all candidates within 1.2× | choose wins, ties excluded |",
          "|---|---|---|---|---|",
          *[f"| {q} | {int(r['cells'])} | {int(r['exact_best'])} | {int(r['all_within'])} | "
            f"{r['choose_open']:.2f} |" for q, r in summ.iterrows()], "",
          "Per dataset (all queries):", "", "| dataset | cells | choose | always Norm-Sub | papers' rule |",
          "|---|---|---|---|---|",
          *[f"| {k} | {len(g)} | {g['win_choose'].mean():.2f} | {g['win_norm-sub'].mean():.2f} | "
            f"{g['win_paper'].mean():.2f} |" for k, g in t.groupby("dataset", sort=False)], ""]
    (out / "choose_validation.md").write_text("\n".join(md))
    print("\n".join(md))
    return 0


if __name__ == "__main__":
    sys.exit(main())
