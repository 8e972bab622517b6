"""The user's call for CLS + 1e-4·KL(f ‖ uniform) at Retail, with whichever ldpopt is importable:
today's against an earlier commit, side by side (``benchmarks/results/own_variant_kl_side_by_side.json``).

    python benchmarks/bench_kl_user_call.py                          # this checkout
    git worktree add /tmp/ldpopt-before 15db1ce                      # the route before recognition
    PYTHONPATH=/tmp/ldpopt-before python benchmarks/bench_kl_user_call.py

OUE, ε = 1, the shipped Retail histogram (d = 16,470), support counts drawn with seed 1 (as
``bench_own_variant.py``); the call is ``Problem(est, kl).solve()`` with no option — what a user
types — timed in wall and CPU seconds (``time.process_time``: all threads). Prints one JSON line:
the ldpopt imported, solver, status, seconds, and ldpopt's message.
"""

from __future__ import annotations

import json
import time

import cvxpy as cp
import numpy as np

import ldpopt
from ldpopt import datasets
from ldpopt.oracles.unary import OUE
from ldpopt.problems import Problem


def main() -> None:
    ds = datasets.load("retail")
    oracle = OUE(1.0, ds.d)
    est = oracle.estimate(oracle.sample_counts(ds.counts, np.random.default_rng(1)), int(ds.counts.sum()))
    prior = np.full(est.d, 1.0 / est.d)

    def kl(f, e):
        return cp.sum_squares(f - e.f_tilde) + 1e-4 * cp.sum(cp.kl_div(f, prior))

    t0, c0 = time.perf_counter(), time.process_time()
    sol = Problem(est, kl).solve()
    print(json.dumps({"ldpopt": ldpopt.__file__, "solver": sol.solver, "status": sol.status,
                      "wall_s": round(time.perf_counter() - t0, 3), "cpu_s": round(time.process_time() - c0, 3),
                      "message": sol.message[:300]}))


if __name__ == "__main__":
    main()
