"""The interop table: library × oracle — counts equal to the peer's own aggregation? the peer's
estimate equal to ldpopt's? ldpopt's estimate unbiased over repetitions (max |z| over values)?
Runs ldpopt.interop.conformance on every case whose peer package is installed (the peers extra).

    PYTHONPATH=. python benchmarks/interop_table.py --reps 100 --out benchmarks/results/interop.json
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import warnings

from ldpopt.interop.conformance import CASES, run_case

_MODULE = {"pure-ldp": "pure_ldp", "multi-freq-ldpy": "multi_freq_ldpy", "opendp": "opendp"}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=100)
    ap.add_argument("--epsilon", type=float, default=1.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    warnings.simplefilter("ignore")
    rows = []
    print("| library | client | ldpopt oracle | counts equal | max |peer est − ldpopt est| | max |z| (unbiased) |")
    print("|---|---|---|---|---|---|")
    for case in CASES:
        if importlib.util.find_spec(_MODULE[case[0]]) is None:
            print(f"| {case[0]} | {case[1]} | — | not installed | | |")
            continue
        r = run_case(case, eps=args.epsilon, reps=args.reps, seed=args.seed)
        rows.append(r)
        diff = "no peer aggregator" if r["max_abs_diff"] is None else f"{r['max_abs_diff']:.1e}"
        print(f"| {case[0]} | {case[1]} | {r['ldpopt']} | {'yes' if r['counts_equal'] else '**no**'} | {diff} | "
              f"{r['max_abs_z']:.2f} |", flush=True)
    print(f"\nε = {args.epsilon}, d = 8, n = 150 users per repetition, {args.reps} repetitions, seed {args.seed}")
    if args.out:
        with open(args.out, "w") as fh:
            json.dump(rows, fh, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
