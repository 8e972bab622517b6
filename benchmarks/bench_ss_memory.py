"""Peak memory and CPU time of Subset Selection's exact fast path (``oracles.subset_counts``) at
d = 42,178, ε = 1, Zipf(1.5) true counts (or, with ``--uniform``, a uniform histogram: every value's
pinned histogram is then dense, the worst case), n ∈ {10⁶, 10⁷, 10⁸, 10⁹}: the code of commit 15db1ce
(read with ``git show``, loaded as a module) beside the current code, one fresh process per (code, n)
so that ``ru_maxrss`` is the peak of that one call (plus the interpreter, numpy and the input
histogram, reported as ``base_rss_mb``). Both draw from the same seed; the rows say whether the two
count vectors are identical.

    python benchmarks/bench_ss_memory.py [--ns 1e6,1e7,1e8,1e9] [--mem-limit-mb 8000] [--uniform]

Writes ``results/ss_memory.json`` (``results/ss_memory_uniform.json`` with ``--uniform``).
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import resource
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import _harness as H  # noqa: E402

OLD_COMMIT = "15db1ce"
MODULE = "ldpopt/oracles/subset_counts.py"
OLD_MODULE = "ldpopt/oracles/_subset_counts.py"  # its name at OLD_COMMIT
D, EPSILON, SEED = 42_178, 1.0, 7


def _load(path: str):
    spec = importlib.util.spec_from_file_location("_subset_counts_under_test", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _true_counts(n: int, uniform: bool) -> np.ndarray:
    if uniform:
        return np.random.default_rng(20240601).multinomial(n, np.full(D, 1.0 / D)).astype(np.int64)
    return H.zipf_counts(D, n)


def _worker(module_path: str, n: int, uniform: bool) -> None:
    """One measurement in this (fresh) process: prints one JSON line."""
    from ldpopt import oracles

    mod = _load(module_path)
    o = oracles.get("ss", epsilon=EPSILON, d=D)
    tc = _true_counts(n, uniform)
    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    t = H.cpu_clock()
    c = mod.sample_subset_counts(np.random.default_rng(SEED), D, o.k, o.mixture_weight, tc)
    cpu = H.cpu_clock() - t
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    ok = int(c.sum()) == n * o.k
    print(json.dumps({"cpu_s": cpu, "peak_rss_mb": peak, "base_rss_mb": base, "sum_is_nk": ok,
                      "counts_sha1": hashlib.sha1(np.ascontiguousarray(c, np.int64).tobytes()).hexdigest()}))


def parser():
    ap = H.parser(__doc__)
    ap.add_argument("--ns", default="1e6,1e7,1e8,1e9")
    ap.add_argument("--mem-limit-mb", type=float, default=8000.0)
    ap.add_argument("--timeout", type=float, default=3600.0)
    ap.add_argument("--uniform", action="store_true", help="uniform true counts instead of Zipf(1.5)")
    ap.add_argument("--worker", nargs=2, metavar=("MODULE_PATH", "N"), help=argparse.SUPPRESS)
    return ap


def run(quick: bool = False, **opts) -> dict:
    """``--quick``: n = 10⁴."""
    a = H.options(parser(), "bench_ss_memory.py", quick, opts)
    if a.quick:
        a.ns = "1e4"
    with tempfile.TemporaryDirectory() as tmp:
        old_path = H.extract(OLD_COMMIT, [OLD_MODULE], tmp) / OLD_MODULE
        rows = [_compare(old_path, int(float(s)), a) for s in a.ns.split(",")]
    return H.save("ss_memory_uniform" if a.uniform else "ss_memory", a, {"rows": rows})


def _compare(old_path: Path, n: int, a) -> dict:
    """One row: the old and the current code at ``n``, each in a fresh process."""
    row = {"d": D, "epsilon": EPSILON, "n": n, "seed": SEED, "data": "uniform" if a.uniform else "zipf1.5"}
    for label, path in (("old", old_path), ("new", H.REPO / MODULE)):
        H.wait_for_memory(a.mem_limit_mb + 1024, max_wait=120)
        cmd = [sys.executable, __file__, "--worker", str(path), str(n)] + (["--uniform"] if a.uniform else [])
        r = H.run_process(cmd, timeout=a.timeout, mem_limit_mb=a.mem_limit_mb)
        row[label] = {"status": r.status, "wall_s": r.wall, "maxrss_mb": r.maxrss_mb,
                      **r.payload, **({"error": r.error} if r.error else {})}
    sha = [row[x].get("counts_sha1") for x in ("old", "new")]
    row["identical"] = None if None in sha else sha[0] == sha[1]  # None: one side did not finish
    print(json.dumps(row), flush=True)
    return row


if __name__ == "__main__":
    a = parser().parse_args()
    _worker(a.worker[0], int(a.worker[1]), a.uniform) if a.worker else run(**vars(a))
