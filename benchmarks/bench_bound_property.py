"""Every reported ‖f − f*‖∞ bound against the true distance: random small problems (d = 2–8, the
simplex or the simplex and one SubsetSum ==) of every objective kind — built-in ``cls``, a recognised
cvxpy callable (CLS + λ·KL, CLS + λ·rel_entr, log-barrier CLS), the same declared as a
``SeparableObjective``, smooth (CLS + a smoothness penalty, with and without λ·KL) — solved by
``Problem.solve()`` and compared with a 40-digit mpmath optimum (``tests/_bound_reference.py``).
The suite runs 100 per kind with another seed (``tests/test_problems_bounds.py``). ``off_rows``: each
answer also moved off its rows on purpose (f ± δ·w, δ = 10^U(−10, −8), w ≥ 0 summing to 1) and
checked again, with the subset row built in and as the user's cvxpy row (``--off-per-kind`` per
kind and setting; ``run_off_cases`` in ``tests/_bound_reference.py``).

    python benchmarks/bench_bound_property.py            # 500 per kind: writes results/bound_property.json

writes ``benchmarks/results/bound_property.json`` (per kind: cases, bounds reported, bounds below the
true distance and those cases, statuses, the largest distance/bound ratio, CPU seconds; ``off_rows``
per kind and setting: bounds on the moved points, those refused, below).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests"))
import _harness as H
from _bound_reference import KINDS, run_cases, run_off_cases


def parser():
    ap = H.parser(__doc__)
    ap.add_argument("--per-kind", type=int, default=500)
    ap.add_argument("--seed", type=int, default=20261125)
    ap.add_argument("--kinds", nargs="+", default=list(KINDS), choices=KINDS)
    ap.add_argument("--off-per-kind", type=int, default=250)
    return ap


def run(quick: bool = False, **opts) -> dict:
    """Writes ``results/bound_property.json``; ``--quick``: 20 per kind, 5 moved off their rows."""
    a = H.options(parser(), "bench_bound_property.py", quick, opts)
    if a.quick:
        a.per_kind, a.off_per_kind = 20, 5
    per = {}
    for kind in a.kinds:
        t = H.cpu_clock()
        got = run_cases(kind, a.per_kind, a.seed)
        got["cpu_seconds"] = round(H.cpu_clock() - t, 1)
        per[kind] = got
        print(kind, {k: v for k, v in got.items() if k != "failures"}, flush=True)
    off = {}
    for kind in a.kinds:
        for setting in ("built-in rows", "user rows"):
            t = H.cpu_clock()
            got = run_off_cases(kind, a.off_per_kind, a.seed + 1, user_rows=setting == "user rows")
            got["cpu_seconds"] = round(H.cpu_clock() - t, 1)
            off[f"{kind}, {setting}"] = got
            print(kind, setting, {k: v for k, v in got.items() if k != "failures"}, flush=True)
    out = {"per_kind": a.per_kind, "seed": a.seed, "problems": sum(g["cases"] for g in per.values()),
           "bounds": sum(g["bounds"] for g in per.values()), "below": sum(g["below"] for g in per.values()),
           "kinds": per,
           "off_rows": {"per_kind": a.off_per_kind, "problems": sum(g["cases"] for g in off.values()),
                        "bounds": sum(g["bounds"] + g["moved_bounds"] for g in off.values()),
                        "moved_refused": sum(g["moved_refused"] for g in off.values()),
                        "below": sum(g["below"] for g in off.values()), "settings": off}}
    return H.save("bound_property", a, out)


if __name__ == "__main__":
    res = run(**vars(parser().parse_args()))
    raise SystemExit(1 if res["below"] or res["off_rows"]["below"] else 0)
