"""``ldpopt postprocess --ci 0.95`` with the default ``--method all``: CPU seconds per method.

The same work as the command (``ldpopt.uncertainty.intervals`` for every registered method, Base
first, 200 resamples, seed 0) on OUE, ε = 1, n = 200,000 and a Dirichlet(0.5) truth of ``--d``
values, in one process; CPU time (``time.process_time``) per method, the total, and every numpy
``RuntimeWarning`` raised on the way (there must be none). Targets: total ≤ 10 s at d = 256 and
≤ 60 s at d = 42,178.

    python benchmarks/bench_ci_all.py [--d 256] [--resamples 200] [--out benchmarks/results/ci_all_d256.json]
"""

from __future__ import annotations

import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))
import _harness as H  # noqa: E402

from ldpopt import methods, oracles  # noqa: E402
from ldpopt.uncertainty import intervals  # noqa: E402


def parser():
    ap = H.parser(__doc__)
    ap.add_argument("--d", type=int, default=256)
    ap.add_argument("--n", type=int, default=200_000)
    ap.add_argument("--resamples", type=int, default=200)
    return ap


def run(quick: bool = False, **opts) -> dict:
    """Writes ``results/ci_all_d<d>.json``; ``--quick``: d = 32, n = 10⁴, 20 resamples."""
    args = H.options(parser(), "bench_ci_all.py", quick, opts)
    if args.quick:
        args.d, args.n, args.resamples = 32, 10**4, 20
    rng = np.random.default_rng(1)
    truth = rng.multinomial(args.n, rng.dirichlet(np.full(args.d, 0.5)))
    est = oracles.get("oue", 1.0, args.d).simulate(truth, 3)
    names = list(methods.available().index)
    rows, total = [], 0.0
    for name in ["base", *[m for m in names if m != "base"]]:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            c0 = H.cpu_clock()
            intervals(est, name, 0.95, n_resamples=args.resamples, rng=0)
            cpu = H.cpu_clock() - c0
        numpy_warnings = sorted({str(w.message) for w in caught if "encountered in" in str(w.message)})
        total += cpu
        rows.append({"method": name, "cpu_s": round(cpu, 3), "numpy_warnings": numpy_warnings})
        print(f"{name:15s} {cpu:8.2f} s CPU  {numpy_warnings or ''}", flush=True)
    load = os.getloadavg()[0]
    print(f"total {total:.1f} s CPU (d = {args.d}, {args.resamples} resamples; load average {load:.1f})")
    return H.save(f"ci_all_d{args.d}", args, {"d": args.d, "n": args.n, "oracle": "oue", "epsilon": 1.0,
                                              "resamples": args.resamples, "total_cpu_s": round(total, 2),
                                              "loadavg_1min": round(load, 2), "rows": rows})


if __name__ == "__main__":
    H.cli(parser(), run)
