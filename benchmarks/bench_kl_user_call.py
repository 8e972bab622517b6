"""The user's call for CLS + 1e-4·KL(f ‖ uniform) at Retail, with whichever ldpopt is importable:
today's against an earlier commit, side by side (``benchmarks/results/own_variant_kl_side_by_side.json``).

    python benchmarks/bench_kl_user_call.py                          # this checkout
    git worktree add /tmp/ldpopt-before 15db1ce                      # the route before recognition
    PYTHONPATH=/tmp/ldpopt-before python benchmarks/bench_kl_user_call.py --out /tmp/before

OUE, ε = 1, the shipped Retail histogram (d = 16,470), support counts drawn with seed 1 (as
``bench_own_variant.py``); the call is ``Problem(est, kl).solve()`` with no option — what a user
types — timed in wall and CPU seconds (``time.process_time``: all threads). Writes
``results/kl_user_call.json``: the ldpopt imported, solver, status, seconds, and ldpopt's message.
``--quick``: the first 500 values of Retail.

``--dataset aol`` (d = 120,978, seed 1): the same call against the built-in weighted MLE's
``Problem(est, "weighted-mle", [Simplex()]).solve()`` at the same d — each the minimum CPU seconds
over ``--repeat`` calls after one warm-up (``cpu_min_s``, ``builtin_cpu_min_s`` and their ratio) —
the target of a user separable objective at the built-ins' speed (within 3×). ``--clarabel``: the
same call with ``solve(solver="CLARABEL")`` beside it (one call, CPU seconds of the whole call, its
status and ldpopt's check, CPU of the process and its children: ``clarabel_cpu_s``, ``clarabel_status``, ``ratio_to_clarabel``).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import cvxpy as cp
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _harness as H  # noqa: E402
import ldpopt  # noqa: E402
from ldpopt import datasets  # noqa: E402
from ldpopt.oracles.unary import OUE  # noqa: E402
from ldpopt.problems import Problem  # noqa: E402


def parser():
    ap = H.parser(__doc__)
    ap.add_argument("--dataset", default="retail", choices=("retail", "aol"), help="the shipped histogram")
    ap.add_argument("--repeat", type=int, default=1, help="calls timed (the minimum CPU is kept; >= 1)")
    ap.add_argument("--clarabel", action="store_true", help="also time solve(solver='CLARABEL') once")
    return ap


def _cpu_min(fn, repeat: int) -> float:
    fn()
    best = float("inf")
    for _ in range(repeat):
        c0 = time.process_time()
        fn()
        best = min(best, time.process_time() - c0)
    return best


def run(quick: bool = False, **opts) -> dict:
    a = H.options(parser(), "bench_kl_user_call.py", quick, opts)
    if a.repeat < 1:
        raise SystemExit(f"--repeat must be >= 1, got {a.repeat}")
    counts = datasets.load(a.dataset).counts
    counts = counts[:500] if a.quick else counts
    oracle = OUE(1.0, counts.size)
    est = oracle.estimate(oracle.sample_counts(counts, np.random.default_rng(1)), int(counts.sum()))
    prior = np.full(est.d, 1.0 / est.d)

    def kl(f, e):
        return cp.sum_squares(f - e.f_tilde) + 1e-4 * cp.sum(cp.kl_div(f, prior))

    t0, c0 = time.perf_counter(), time.process_time()
    sol = Problem(est, kl).solve()
    row = {"ldpopt": "working tree" if Path(ldpopt.__file__).resolve().is_relative_to(H.REPO) else "another tree",
           "d": est.d, "solver": sol.solver, "status": sol.status, "wall_s": round(time.perf_counter() - t0, 3),
           "cpu_s": round(time.process_time() - c0, 3), "message": sol.message[:300]}
    if a.repeat > 1 or a.dataset != "retail":
        from ldpopt.problems import Simplex

        row["cpu_min_s"] = _cpu_min(lambda: Problem(est, kl).solve(progress=False), a.repeat)
        row["builtin_cpu_min_s"] = _cpu_min(lambda: Problem(est, "weighted-mle", [Simplex()]).solve(progress=False),
                                            a.repeat)
        row["ratio_to_builtin"] = row["cpu_min_s"] / row["builtin_cpu_min_s"]
    if a.clarabel:
        import resource

        def cpu():  # this process and its waited-for children (a cvxpy solver may run in one)
            ch = resource.getrusage(resource.RUSAGE_CHILDREN)
            return time.process_time() + ch.ru_utime + ch.ru_stime

        c0 = cpu()
        ref = Problem(est, kl).solve(solver="CLARABEL", progress=False)
        row["clarabel_cpu_s"] = cpu() - c0
        row["clarabel_status"], row["clarabel_message"] = ref.status, ref.message[:300]
        row["ratio_to_clarabel"] = row["clarabel_cpu_s"] / row.get("cpu_min_s", row["cpu_s"])
    print(json.dumps(row))
    return H.save("kl_user_call" if a.dataset == "retail" else f"kl_user_call_{a.dataset}", a, {"rows": [row]})


if __name__ == "__main__":
    H.cli(parser(), run)
