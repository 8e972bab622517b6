"""The exact likelihoods on the simplex per distinct count (dual.grouped) vs
the same solver with the grouping switched off, and vs the fastest cvxpy route, in one process.

    python benchmarks/bench_grouped.py            # d ∈ {42,178, 10⁵, 10⁶}; SQP at 42,178 only (~1 min)
    python benchmarks/bench_grouped.py --no-sqp   # structured only

Data as ``bench_table.py``: OUE ε = 1 support counts (binomial) and GRR counts (multinomial), Zipf(1.5),
n = 10⁶ (10⁷ at d = 10⁶). Per cell, CPU seconds (``time.process_time``) of ``solve_structured`` with
its certificate: ``first`` the first call on a new estimate (what ``bench_table.py`` times: one call
per cell, after other problems warmed the imports) and ``best`` the best of ``repeats`` calls on the
same one; grouped and ungrouped (``grouped.count_groups`` → None: the working-set dual method and
the elementwise certificate) interleaved, each on its own fresh estimate object for ``first``. Also
max |f_grouped − f_ungrouped|, both statuses and relative KKT residuals, and ``SQP`` (the route
``policy.py`` takes for these objectives: a few PIQP QPs through cvxpy) once at d = 42,178 with the
ratios SQP CPU ÷ structured CPU. Results: benchmarks/results/grouped.json.
"""

from __future__ import annotations

import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchmarks import _harness as H  # noqa: E402
from benchmarks.bench_structured import grr_estimate, oue_estimate  # noqa: E402
from ldpopt import Estimate  # noqa: E402
from ldpopt.problems import Problem  # noqa: E402
from ldpopt.problems.dual import grouped  # noqa: E402
from ldpopt.problems.solvers.structured import solve_structured  # noqa: E402

_ORIGINAL = grouped.count_groups


def _fresh(est):
    """The same data in a new Estimate (new arrays): nothing cached on the old one's objects."""
    return Estimate.from_counts(est.counts.copy(), est.n, est.epsilon, est.p, est.q, oracle=est.oracle)


def _solve(est, objective, on: bool):
    grouped.count_groups = _ORIGINAL if on else (lambda sep: None)
    try:
        return solve_structured(est, objective)
    finally:
        grouped.count_groups = _ORIGINAL


def parser():
    ap = H.parser(__doc__)
    ap.add_argument("--no-sqp", action="store_true")
    ap.add_argument("--d", type=int, nargs="+", default=[42_178, 100_000, 1_000_000])
    return ap


def run(quick: bool = False, **opts) -> dict:
    """``--quick``: d = 2,000 only, no SQP, 2 repeats."""
    args = H.options(parser(), "bench_grouped.py", quick, opts)
    if args.quick:
        args.d, args.no_sqp = [2_000], True
    for o in ("binomial", "multinomial"):  # warm the imports on a small problem, as the table does
        _solve(grr_estimate(1000, 10**6)[0] if o == "multinomial" else oue_estimate(1000, 10**6)[0], o, True)
    rows = []
    print("| objective | d | distinct counts | grouped first / best | ungrouped first / best | speed-up (best) | "
          "max abs(f_g - f_u) | KKT g / u | SQP CPU | SQP / grouped (first, best) |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for d in args.d:
        n = 10**7 if d >= 10**6 else 10**6
        repeats = 2 if args.quick else 5 if d >= 10**6 else 20
        for objective, est in (("binomial", oue_estimate(d, n)[0]), ("multinomial", grr_estimate(d, n)[0])):
            first, best, res = {}, {}, {}
            for on in (False, True, False, True):  # interleaved; the second pass's first calls count
                e = _fresh(est)
                t = H.cpu_clock()
                r = _solve(e, objective, on)
                first[on] = H.cpu_clock() - t
                b, r = H.best_cpu(lambda: _solve(e, objective, on), repeats)
                best[on] = min(best.get(on, np.inf), b)
                res[on] = r
            g, u = res[True], res[False]
            sqp = np.nan
            if d == 42_178 and not args.no_sqp:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    t = H.cpu_clock()
                    sol = Problem(est, objective).solve(solver="SQP")
                    sqp = H.cpu_clock() - t
                assert sol.status == "optimal", sol.status
            row = {"objective": objective, "d": d, "n": n, "distinct_counts": g.iterations.get("distinct_counts"),
                   "grouped_first_s": first[True], "grouped_best_s": best[True],
                   "ungrouped_first_s": first[False], "ungrouped_best_s": best[False],
                   "max_abs_diff": float(np.max(np.abs(g.f - u.f))), "status": [g.status, u.status],
                   "kkt": [g.kkt_residual, u.kkt_residual], "iterations": g.iterations, "sqp_cpu_s": sqp}
            rows.append(row)
            ratio = (f"{sqp / first[True]:.0f}×, {sqp / best[True]:.0f}×" if np.isfinite(sqp) else "—")
            print(f"| {objective} | {d:,} | {row['distinct_counts']} | "
                  f"{first[True] * 1e3:.1f} / {best[True] * 1e3:.1f} ms | "
                  f"{first[False] * 1e3:.1f} / {best[False] * 1e3:.1f} ms | {best[False] / best[True]:.1f}× | "
                  f"{row['max_abs_diff']:.1e} | {g.kkt_residual:.1e} / {u.kkt_residual:.1e} | "
                  f"{'—' if not np.isfinite(sqp) else f'{sqp:.3f} s'} | {ratio} |", flush=True)
    return H.save("grouped", args, {"rows": rows})


if __name__ == "__main__":
    H.cli(parser(), run)
