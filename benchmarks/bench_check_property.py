"""The status property at large d: random problems (every built-in smooth objective × Simplex / Box /
Fixed / SubsetSum ==, <=, >= / two disjoint SubsetSums, feasible ones) solved by ``Problem.solve()``
and judged against the exact reference of ``tests/_exact_reference.py`` (bisection to adjacent
floats with its own derivative formulas): optimal ⇔ within accuracy_tol(d) of the exact optimum.
The small-d version with infeasible sets is ``tests/test_check_property.py``.

    python benchmarks/bench_check_property.py --d 42178 --per-cell 1   # writes results/check_property_d42178.json

writes ``benchmarks/results/check_property_d<d>.json`` (cases, agreements, disagreements with their
cases, CPU seconds of ldpopt's solves and of the references).
"""

from __future__ import annotations

import collections
import json
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests"))
import _harness as H  # noqa: E402
from _status_property import FAMILIES, OBJECTIVES, judge, ldpopt_status, make_case, references  # noqa: E402


def parser():
    ap = H.parser(__doc__)
    ap.add_argument("--d", type=int, default=42_178)
    ap.add_argument("--per-cell", type=int, default=1, help="cases per objective × family")
    ap.add_argument("--n", type=int, default=10**6, help="users per estimate")
    ap.add_argument("--seed", type=int, default=20261123)
    ap.add_argument("--objectives", nargs="+", default=list(OBJECTIVES), choices=OBJECTIVES)
    ap.add_argument("--families", nargs="+", default=list(FAMILIES), choices=FAMILIES,
                    help="constraint families (default all; at d = 1e6 the reference takes minutes per case)")
    return ap


def run(quick: bool = False, **opts) -> dict:
    """Writes ``results/check_property_d<d>.json``; ``--quick``: d = 200, n = 10⁴, CLS only."""
    a = H.options(parser(), "bench_check_property.py", quick, opts)
    if a.quick:
        a.d, a.n, a.objectives = 200, 10**4, ["cls"]
    rng = np.random.default_rng(a.seed)
    tally, bad, cpu_solve, cpu_ref = collections.Counter(), [], 0.0, 0.0
    for o in a.objectives:
        cases = [make_case(o, fam, a.d, rng, infeasible=False, n=a.n) for fam in a.families for _ in range(a.per_cell)]
        t = H.cpu_clock()
        refs = references(o, cases)
        cpu_ref += H.cpu_clock() - t
        for case, ref in zip(cases, refs):
            t = H.cpu_clock()
            status, f = ldpopt_status(o, case)
            dt = H.cpu_clock() - t
            cpu_solve += dt
            v = judge(o, case, ref, status, f)
            tally[v == "agree"] += 1
            row = (o, [type(c).__name__ for c in case[1]], status, round(dt, 3), v)
            print(*row, flush=True)
            if v != "agree":
                bad.append(row)
    out = {"d": a.d, "n": a.n, "seed": a.seed, "objectives": a.objectives, "families": a.families, "cases": sum(tally.values()), "agreements": tally[True],
           "disagreements": tally[False], "disagreeing_cases": bad, "cpu_seconds_ldpopt": round(cpu_solve, 2),
           "cpu_seconds_reference": round(cpu_ref, 2)}
    print(json.dumps({k: v for k, v in out.items() if k != "disagreeing_cases"}))
    return H.save(f"check_property_d{a.d}", a, out)


if __name__ == "__main__":
    raise SystemExit(1 if run(**vars(parser().parse_args()))["disagreements"] else 0)
