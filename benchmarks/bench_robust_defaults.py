"""The poisoning recovery's default against doing nothing special: the guarded lift with β estimated,
with the attack-evidence test (``alpha`` 1e-4, the default) and without it (``alpha=None``, the
former default), beside Norm-Sub and RSN, on clean data of many shapes and under attacks aimed at it.

Clean shapes (d = 1,024 unless real): a near tie at the top (0.200, 0.199, then Zipf(1.5) from rank 3), a
flat head (10 values at 0.06), two points (0.5005, 0.4995), a heavy tail (Zipf 1.1), Zipf(1.5), and
the real Zipf, Emoji, BMS-WebView-1 and Retail (``ldpopt.datasets``). Attacks (on the near-tie and
Zipf shapes): MGA on 10 and on 3 random targets and on the genuine ranks 5–14 (β = 0.05), the
tie-maker (rank 2 lifted to rank 1's level) and the β-fooling spread (ranks 2–6 to rank 1's level)
(:mod:`ldpopt.robust.ties`).

Per cell: R repetitions; each recovery's MSE over the d values against the genuine frequencies;
ratio to Norm-Sub's MSE per repetition, mean ± SE over repetitions; ratio to the best of the four.

Usage: python benchmarks/bench_robust_defaults.py [--reps R] [--n N] [--out FILE]; --table FILE prints
the markdown tables of a results file. ``--quick`` (``run(quick=True)``, as ``benchmarks/run.py --quick``
calls it): one repetition at n = 10⁵ and ε = 4 into ``results/quick/``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

from ldpopt import datasets, oracles, robust
from ldpopt.methods.normalize import project_simplex

D = 1024
QUICK = Path(__file__).resolve().parent / "results" / "quick"
METHODS = {"norm-sub": lambda e, o: project_simplex(e.f_tilde),
           "rsn": lambda e, o: robust.rsn(e),
           "guarded (former default)": lambda e, o: robust.guarded_lift(e, oracle=o, alpha=None),
           "guarded (default)": lambda e, o: robust.guarded_lift(e, oracle=o)}


def zipf(s: float, d: int = D) -> np.ndarray:
    w = 1.0 / np.arange(1, d + 1) ** s
    return w / w.sum()


def shapes(n: int) -> dict:
    """name -> genuine counts."""
    def counts(f, nn=n):
        return np.random.default_rng(0).multinomial(nn, f / f.sum())

    rest = 1.0 / np.arange(3, D + 1) ** 1.5  # Zipf(1.5) from rank 3: its largest (0.092) below the pair
    tie = np.concatenate([[0.200, 0.199], 0.601 * rest / rest.sum()])
    flat = np.concatenate([np.full(10, 0.06), 0.4 * zipf(1.5, D - 10)])
    two = np.concatenate([[0.5005, 0.4995], np.zeros(D - 2)])
    out = {"near tie": counts(tie), "flat head": counts(flat), "two-point": counts(two),
           "heavy tail": counts(zipf(1.1)), "zipf 1.5": counts(zipf(1.5))}
    out["real zipf"] = np.asarray(datasets.zipf(rng=0).counts)
    for nm in ("emoji", "bms_webview_1", "retail"):
        out["real " + nm] = np.asarray(datasets.load(nm).counts)
    return out


def attacked(o, tc, attack: str, gen):
    order = np.argsort(-tc, kind="stable")
    if attack == "none":
        return o.estimate(o.sample_counts(tc, gen), int(tc.sum()))
    if attack == "tie-maker":
        return robust.tie_estimate(o, tc, [order[1]], gen)
    if attack == "beta-spread":
        return robust.tie_estimate(o, tc, order[1:6], gen)
    if attack == "mga popular":
        targets = order[4:14]
    else:
        r = int(attack.split()[1])
        targets = gen.choice(np.setdiff1d(np.arange(o.d), order[:20]), r, replace=False)
    return robust.poisoned_estimate(o, tc, "mga", targets=np.sort(targets), beta=0.05, rng=gen)


def cell(o, tc, attack, reps, seed):
    gen = np.random.default_rng(seed)
    truth = tc / tc.sum()
    mse = {m: [] for m in METHODS}
    for _ in range(reps):
        e = attacked(o, tc, attack, gen)
        for m, f in METHODS.items():
            mse[m].append(float(np.mean((f(e, o) - truth) ** 2)))
    M = {m: np.array(v) for m, v in mse.items()}
    best = np.min(np.vstack(list(M.values())), axis=0)
    out = {}
    for m, v in M.items():
        r = v / M["norm-sub"]
        b = v / best
        out[m] = {"mse": float(v.mean()), "ratio_ns": float(r.mean()),
                  "ratio_ns_se": float(r.std(ddof=1) / np.sqrt(reps)), "ratio_best": float(b.mean()),
                  "ratio_best_max": float(b.max()), "ratio_ns_max": float(r.max())}
    return out


def table(path: str) -> str:
    """Markdown: the clean-data table (ratio to Norm-Sub, mean ± SE) and the attack table."""
    with open(path) as fh:
        res = json.load(fh)
    old, new = "guarded (former default)", "guarded (default)"
    out = [f"From `{res['command']}`.", "", "Clean data: MSE ÷ Norm-Sub's (mean ± SE over repetitions)", "",
           "| shape | oracle | ε | former default | default | RSN |", "| --- | --- | --- | --- | --- | --- |"]
    for x in res["rows"]:
        if x["attack"] == "none":
            m = x["methods"]
            out.append(f"| {x['shape']} | {x['oracle']} | {x['epsilon']:g} | "
                       + " | ".join(f"{m[k]['ratio_ns']:.3g} ± {m[k]['ratio_ns_se']:.2g}" for k in (old, new, "rsn"))
                       + " |")
    out += ["", "Attacks: per attack the worst cell over shapes, oracles and ε (mean ratio over repetitions)", "",
            "| attack | recovery | worst ÷ Norm-Sub | where | worst ÷ best of four | where |",
            "| --- | --- | --- | --- | --- | --- |"]
    attacks = sorted({x["attack"] for x in res["rows"]} - {"none"})
    for att in attacks + ["none"]:
        rows = [x for x in res["rows"] if x["attack"] == att]
        for k in ("norm-sub", "rsn", old, new):
            w_ns = max(rows, key=lambda x: x["methods"][k]["ratio_ns"])
            w_b = max(rows, key=lambda x: x["methods"][k]["ratio_best"])

            def where(x):
                return f"{x['shape']}, {x['oracle'].upper()}, ε = {x['epsilon']:g}"
            out.append(f"| {att} | {k} | {w_ns['methods'][k]['ratio_ns']:.3g} ± {w_ns['methods'][k]['ratio_ns_se']:.2g} "
                       f"| {where(w_ns)} | {w_b['methods'][k]['ratio_best']:.3g} | {where(w_b)} |")
    return "\n".join(out)


def run(quick: bool = False) -> dict:
    """The bench's contract (``benchmarks/run.py``): the full grid into ``results/robust_defaults.json``;
    ``quick``: one repetition at n = 10⁵, ε = 4, into ``results/quick/robust_defaults.json``."""
    if quick:
        QUICK.mkdir(parents=True, exist_ok=True)
        return main(["--reps", "1", "--n", "100000", "--eps", "4", "--out", str(QUICK / "robust_defaults.json")])
    return main([])


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--eps", default="1,2,4")
    ap.add_argument("--out", default="benchmarks/results/robust_defaults.json")
    ap.add_argument("--table", default=None, help="print the markdown tables of a results file and exit")
    a = ap.parse_args(argv)
    if a.table:
        print(table(a.table))
        return {}
    eps = [float(x) for x in a.eps.split(",")]
    t0 = time.time()
    sh = shapes(a.n)
    rows = []
    seed = 0
    for name, tc in sh.items():
        attacks = ["none"] + (["mga 10", "mga 3", "mga popular", "tie-maker", "beta-spread"]
                              if name in ("near tie", "zipf 1.5", "real emoji") else [])
        for oname in ("grr", "oue", "olh"):
            for e in eps:
                o = oracles.get(oname, epsilon=e, d=tc.size)
                for att in attacks:
                    seed += 1
                    rows.append({"shape": name, "oracle": oname, "epsilon": e, "attack": att, "n": int(tc.sum()),
                                 "d": int(tc.size), "reps": a.reps, "methods": cell(o, tc, att, a.reps, seed)})
                    print(name, oname, e, att, {m: round(v["ratio_ns"], 3)
                                                for m, v in rows[-1]["methods"].items()}, file=sys.stderr)
    res = {"command": "python benchmarks/bench_robust_defaults.py " + " ".join(argv or sys.argv[1:]),
           "seconds": round(time.time() - t0, 1), "rows": rows}
    with open(a.out, "w") as fh:
        json.dump(res, fh, indent=1)
    print(f"wrote {a.out} ({len(rows)} cells, {res['seconds']} s)")
    return res


if __name__ == "__main__":
    main()
