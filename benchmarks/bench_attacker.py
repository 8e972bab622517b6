"""An attacker who has read the default poisoning recovery's code (``robust.search_attack``): random
search then a (1+1) evolution strategy over the fake reports' law, the targets and the number of
fake users under a budget β, maximising the default's MSE ÷ Norm-Sub's, for GRR, OUE and OLH at
ε ∈ {1, 2, 4} on three generated shapes (d = 1,024, n = 10⁶): the near tie (0.200, 0.199, then
Zipf(1.5)), Zipf(1.5), two points (0.5005, 0.4995). Against the default as shipped now ("after") and
the default before its evidence test's null law was computed for the data and the lift held to the
evidence ("before", benchmarks/_previous_guarded.py). The known bad attacks (every OUE bit set on a
few reports; GRR's tie-maker; copies of one large-bucket OLH report) are the search's first
candidates.

Usage: python benchmarks/bench_attacker.py [--budget B] [--reps R] [--final F] [--betas 0.001,0.01]
[--eps 1,2,4] [--oracles grr,oue,olh] [--shapes "near tie,zipf 1.5,two-point"] [--out FILE]; --table FILE
prints the markdown table of a results file.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _previous_guarded import previous_guarded_lift

from ldpopt import oracles, robust

D, N = 1024, 1_000_000
OUT = Path(__file__).resolve().parent / "results" / "attacker.json"
DEFENCES = {"before": lambda e, o: previous_guarded_lift(e, o), "after": None}


def shapes() -> dict:
    rest = 1.0 / np.arange(3, D + 1) ** 1.5
    tie = np.concatenate([[0.200, 0.199], 0.601 * rest / rest.sum()])
    z = 1.0 / np.arange(1, D + 1) ** 1.5
    two = np.concatenate([[0.5005, 0.4995], np.zeros(D - 2)])
    gen = np.random.default_rng(0)
    return {name: gen.multinomial(N, f / f.sum()) for name, f in
            (("near tie", tie), ("zipf 1.5", z), ("two-point", two))}


def starts(beta: float) -> list:
    """The known bad attacks as search coordinates (robust.search_counts)."""
    m_max = beta * N / (1 - beta)
    lm = lambda m: min(1.0, math.log(m) / math.log(m_max)) if m_max > 1 else 1.0
    return [[lm(95), 0.0, 0.1, 0.0, 1.0, 1.0],                    # every bit set, top pair
            [lm(30), math.sqrt(1 / (D - 2)), 0.0, 1.0, 1.0, 0.0],  # rank 2 lifted (tie-maker)
            [lm(1400), 0.0, 0.1, 1.0, 1.0, 1.0]]                  # copies of one large-bucket report


def run(quick: bool = False) -> dict:
    """The bench's contract (``benchmarks/run.py``): the full search into ``results/attacker.json``;
    ``quick``: two candidates on OUE, ε = 4, the near tie, into ``results/quick/attacker.json``."""
    out = OUT.parent / "quick" / "attacker.json" if quick else OUT
    out.parent.mkdir(parents=True, exist_ok=True)
    args = (["--budget", "2", "--reps", "1", "--final", "2", "--eps", "4", "--oracles", "oue", "--shapes", "near tie",
             "--betas", "0.001"] if quick else ["--budget", "24", "--reps", "2", "--final", "6", "--betas", "0.001"])
    main(args + ["--out", str(out)])
    return json.loads(out.read_text())


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--budget", type=int, default=40)
    ap.add_argument("--reps", type=int, default=2)
    ap.add_argument("--final", type=int, default=10)
    ap.add_argument("--betas", default="0.001,0.01")
    ap.add_argument("--eps", default="1,2,4")
    ap.add_argument("--oracles", default="grr,oue,olh")
    ap.add_argument("--shapes", default="near tie,zipf 1.5,two-point")
    ap.add_argument("--out", default=str(OUT))
    ap.add_argument("--table")
    a = ap.parse_args(argv)
    if a.table:
        print(table(json.loads(Path(a.table).read_text())))
        return 0
    rows, t0 = [], time.time()
    for shape, tc in shapes().items():
        if shape not in a.shapes.split(","):
            continue
        for name in a.oracles.split(","):
            for eps in (float(e) for e in a.eps.split(",")):
                o = oracles.get(name, epsilon=eps, d=D)
                for beta in (float(b) for b in a.betas.split(",")):
                    for lab, defence in DEFENCES.items():
                        t = time.time()
                        r = robust.search_attack(o, tc, beta, budget=a.budget, reps=a.reps, rng=1,
                                                 defence=defence, final_reps=a.final, start=starts(beta))
                        rows.append({"shape": shape, "oracle": name, "epsilon": eps, "beta": beta,
                                     "default": lab, "ratio": r["ratio"], "se": r["se"],
                                     "search_ratio": r["search_ratio"], "attack": r["attack"],
                                     "x": [round(float(v), 4) for v in r["x"]], "seconds": time.time() - t})
                        print(shape, name, eps, beta, lab, f"{r['ratio']:.3g} ± {r['se']:.2g}", r["attack"],
                              f"{time.time() - t:.0f}s", flush=True)
                        Path(a.out).write_text(json.dumps(
                            {"command": "python benchmarks/bench_attacker.py " + " ".join(argv or sys.argv[1:]),
                             "budget": a.budget, "reps": a.reps, "final_reps": a.final, "n": N, "d": D,
                             "seconds": time.time() - t0, "rows": rows}, indent=1))
    return 0


def table(doc: dict) -> str:
    lines = ["| oracle | ε | shape | β budget | before: worst ÷ Norm-Sub | attack found | after: worst ÷ Norm-Sub | attack found |",
             "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    by = {}
    for r in doc["rows"]:
        by.setdefault((r["oracle"], r["epsilon"], r["shape"], r["beta"]), {})[r["default"]] = r
    for (o, e, s, b), d in sorted(by.items()):
        cells = []
        for lab in ("before", "after"):
            r = d.get(lab)
            cells += [f"{r['ratio']:.3g} ± {r['se']:.2g}", r["attack"]] if r else ["", ""]
        lines.append(f"| {o.upper()} | {e:g} | {s} | {b:g} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
