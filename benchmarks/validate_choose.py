"""Validate ``ldpopt.choose`` against ground truth on the shipped real datasets (issue 13, item 3).

Per cell (dataset × oracle × ε × query): one simulated estimate of the real data (fast path, seeded);
``choose`` ranks the closed forms on it (R = 20 re-simulations of its Norm-Sub fit); the *true*
expected loss of every method is the mean over ``TRUE_RUNS`` fresh simulations of the real data.
A rule "wins" a cell when its method's true loss is within 1.2× of the best method's (for hh,
loss = 1 − F1). Rules: ``choose``; always Norm-Sub; the papers' recommendation by query type (NDSS
§VI: single values → Base-Cut, the most frequent values → Norm; heavy hitters → Base-Cut, the
sensitivity threshold of Jia & Gong / Erlingsson et al.).

``python benchmarks/validate_choose.py [--quick] [--out DIR]`` writes choose_validation.{json,md}.
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

DATASETS = ("emoji", "bms-webview-1", "bms-webview-2", "retail")
ORACLES = ("grr", "oue", "olh")
EPSILONS = (0.5, 1.0, 2.0, 4.0)
QUERIES = ("full", "topk:10", "hh:0.01")
PAPER_RULE = {"full": "base-cut", "topk:10": "norm", "hh:0.01": "base-cut"}
TRUE_RUNS = 20


def cell(ds, oracle, eps, queries, seed):
    o = ldpopt.oracles.get(oracle, eps, ds.d)
    est = o.simulate(ds.counts, seed)
    C = draw_counts(o, ds.counts, TRUE_RUNS, np.random.default_rng(seed + 1))
    F = (C / est.n - est.q) / (est.p - est.q)
    outs = {m: apply_batch(est, m, F, counts=C) for m in CLOSED_FORM}
    rows = []
    for qs in queries:
        q = parse_query(qs)
        true = {m: float(losses(q, outs[m], ds.frequencies).mean()) for m in CLOSED_FORM}
        best = min(true.values())
        ch = ldpopt.choose(est, qs, rng=seed + 2)
        ok = {rule: true[m] <= 1.2 * best + 1e-15 for rule, m in
              (("choose", ch.best), ("norm-sub", "norm-sub"), ("paper", PAPER_RULE[qs]))}
        rows.append({"dataset": ds.name, "oracle": oracle, "epsilon": eps, "query": qs, "chosen": ch.best,
                     "true_best": min(true, key=true.get), "ratio_chosen": true[ch.best] / max(best, 1e-300),
                     **{f"win_{k}": v for k, v in ok.items()}})
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--out", default=str(Path(__file__).resolve().parent / "results"))
    a = ap.parse_args(argv)
    dss = DATASETS[:1] if a.quick else DATASETS
    orcs = ORACLES[1:2] if a.quick else ORACLES
    epss = EPSILONS[1:2] if a.quick else EPSILONS
    rows, t0 = [], time.perf_counter()
    for name in dss:
        ds = ldpopt.datasets.load(name)
        for i, oracle in enumerate(orcs):
            for j, eps in enumerate(epss):
                rows += cell(ds, oracle, eps, QUERIES, 1000 + 10 * i + j)
                print(f"  {name} {oracle} {eps}: {[r['chosen'] for r in rows[-len(QUERIES):]]}", flush=True)
    import pandas as pd

    t = pd.DataFrame(rows)
    summ = t.groupby("query")[["win_choose", "win_norm-sub", "win_paper"]].mean()
    summ.loc["all"] = t[["win_choose", "win_norm-sub", "win_paper"]].mean()
    out = Path(a.out) / ("quick" if a.quick and a.out.endswith("results") else "")
    out.mkdir(parents=True, exist_ok=True)
    cmd = "python benchmarks/validate_choose.py" + (" --quick" if a.quick else "")
    (out / "choose_validation.json").write_text(json.dumps({"command": cmd, "rows": rows,
                                                            "seconds": time.perf_counter() - t0}, indent=2))
    md = [f"Command: `{cmd}` ({len(t)} cells, {time.perf_counter() - t0:.0f} s)", "",
          "Fraction of cells where the rule's method has true loss within 1.2× of the best closed form:", "",
          "| query | choose | always Norm-Sub | papers' rule |", "|---|---|---|---|",
          *[f"| {q} | {r['win_choose']:.2f} | {r['win_norm-sub']:.2f} | {r['win_paper']:.2f} |"
            for q, r in summ.iterrows()], ""]
    (out / "choose_validation.md").write_text("\n".join(md))
    print("\n".join(md))
    return 0


if __name__ == "__main__":
    sys.exit(main())
