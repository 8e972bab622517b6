"""The certificate's lower-bound terms at d = 10⁷ (``certificate_support._AtLower``): per value vs
once per distinct support count, side by side in one process (CPU seconds, ``time.process_time``).

    python benchmarks/bench_at_lower.py            # d = 10⁷ (~10 s, 2.5 GB)
    python benchmarks/bench_at_lower.py --d 200000

Data: Zipf(1.5) OUE support counts at ε = 1, n = 10⁶ (as ``ldpopt verify --d``). The allocator is
set as ``ldpopt verify`` sets it at this d (``ldpopt._malloc.keep_freed_memory``); each variant runs
twice, alternating (the first call of a process also pays fresh memory). Objectives: binomial,
weighted MLE, cls (cls has no group keys: both rows are the elementwise path).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--d", type=int, default=10**7)
    args = ap.parse_args(argv)
    from ldpopt import Estimate
    from ldpopt._malloc import keep_freed_memory
    from ldpopt.problems import certificate_support as cs
    from ldpopt.problems.objectives import make_objective
    from ldpopt.problems.structured import compile_constraints, separable_for

    keep_freed_memory()
    d, n = args.d, 10**6
    rng = np.random.default_rng(1)
    w = 1.0 / np.arange(1, d + 1) ** 1.5
    p, q = 0.5, 1 / (1 + np.e)
    est = Estimate.from_counts(rng.binomial(n, q + (p - q) * w / w.sum()).astype(float), n, 1.0, p, q)
    st = compile_constraints(None, d)
    for obj in ("binomial", "weighted-mle", "cls"):
        sep = separable_for(make_objective(obj), est)
        grp = cs._groups(sep, st)
        for group in (False, True, False, True):
            c = time.process_time()
            cs._AtLower(sep, st, group=group)
            print(f"{obj:13s} grouped={group!s:5s} {time.process_time() - c:.3f} s CPU "
                  f"({'%d groups' % grp[2] if grp else 'no grouping'})", flush=True)


if __name__ == "__main__":
    main()
