"""Where Subset Selection's exact fast path (``oracles.subset_counts``) spends
its time, d ∈ {1,024, 42,178}, n = 10⁶, ε ∈ {0.5, 1, 4}, Zipf(1.5) true counts. CPU seconds
(``time.process_time``), best of ``--repeat`` calls; one more call with the generator wrapped to
time its ``multinomial`` (the windowed splits) and ``hypergeometric`` (the per-user splits) calls
and count the cells of the multinomial tables; the rest is numpy bookkeeping in
``subset_counts`` (unique/merge/indexing).

    python benchmarks/bench_ss_fastpath.py [--repeat 2]

Writes ``results/ss_fastpath.json``.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import _harness as H  # noqa: E402


class _TimedGenerator:
    """A Generator whose multinomial and hypergeometric calls are timed (CPU) and counted."""

    def __init__(self, gen: np.random.Generator):
        self._gen = gen
        self.stats = {"multinomial_s": 0.0, "multinomial_rows": 0, "multinomial_cells": 0,
                      "hypergeometric_s": 0.0, "hypergeometric_draws": 0}

    def multinomial(self, n, pvals):
        t = H.cpu_clock()
        out = self._gen.multinomial(n, pvals)
        self.stats["multinomial_s"] += H.cpu_clock() - t
        self.stats["multinomial_rows"] += int(np.size(n))
        self.stats["multinomial_cells"] += int(np.size(pvals))
        return out

    def hypergeometric(self, ngood, nbad, nsample):
        t = H.cpu_clock()
        out = self._gen.hypergeometric(ngood, nbad, nsample)
        self.stats["hypergeometric_s"] += H.cpu_clock() - t
        self.stats["hypergeometric_draws"] += int(np.size(ngood))
        return out

    def __getattr__(self, name):
        return getattr(self._gen, name)


def parser():
    ap = H.parser(__doc__)
    ap.add_argument("--repeat", type=int, default=2)
    return ap


def run(quick: bool = False, **opts) -> dict:
    """``--quick``: d = 1,024, n = 10⁴, ε = 1."""
    a = H.options(parser(), "bench_ss_fastpath.py", quick, opts)
    from ldpopt import oracles
    from ldpopt.oracles.subset_counts import sample_subset_counts

    rows = []
    n = 10**4 if a.quick else 10**6
    for d in (1024,) if a.quick else (1024, 42_178):
        tc = H.zipf_counts(d, n)
        for eps in (1.0,) if a.quick else (0.5, 1.0, 4.0):
            o = oracles.get("ss", epsilon=eps, d=d)
            best = min(_cpu(lambda r=r: o.sample_counts(tc, r)) for r in range(a.repeat))
            g = _TimedGenerator(np.random.default_rng(99))
            total = _cpu(lambda: sample_subset_counts(g, d, o.k, o.mixture_weight, tc))
            row = {"d": d, "epsilon": eps, "k": o.k, "n": n, "cpu_best": best, "cpu_profiled": total,
                   **g.stats, "rest_s": total - g.stats["multinomial_s"] - g.stats["hypergeometric_s"]}
            print(json.dumps(row), flush=True)
            rows.append(row)
    return H.save("ss_fastpath", a, {"rows": rows})


def _cpu(fn) -> float:
    t = H.cpu_clock()
    fn()
    return H.cpu_clock() - t


if __name__ == "__main__":
    H.cli(parser(), run)
