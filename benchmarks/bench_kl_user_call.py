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


def run(quick: bool = False, **opts) -> dict:
    a = H.options(H.parser(__doc__), "bench_kl_user_call.py", quick, opts)
    counts = datasets.load("retail").counts
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
    print(json.dumps(row))
    return H.save("kl_user_call", a, {"rows": [row]})


if __name__ == "__main__":
    H.cli(H.parser(__doc__), run)
