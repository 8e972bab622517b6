"""Aggregation throughput and memory from Parquet report shards, per oracle (``ldpopt aggregate``'s
engine: ldpopt.aggregate.dask.aggregate_shards).

For each oracle one shard of ``--shard-rows`` reports is written with ``oracle.perturb`` and
``write_shard``; an input of N reports is a folder of N / shard-rows distinct shards made from it
(its reports rotated by a different number of rows each: ``_harness.shard_folder``; aggregation
refuses two shards holding the same reports, so links to one shard no longer serve); files that fit
the page cache are read from it, so this measures decoding + counting, not the disk. Each aggregation runs in a fresh subprocess that
reports its wall time, CPU time and peak RSS (``ru_maxrss``): memory stays bounded iff the peak RSS
does not grow with N. ``synchronous`` gives reports/s on one core; the 10^9 projection divides by
that per-core rate times N workers (perfect scaling of the map; the tree of merges is O(d·shards)).

    PYTHONPATH=. python benchmarks/bench_aggregate.py --quick          # 2^15 reports, OUE
    PYTHONPATH=. python benchmarks/bench_aggregate.py --sizes 1e7 1e8  # the BENCHMARKS.md run

Results: benchmarks/results/aggregate.json (or --out DIR).
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import numpy as np

import _harness as H  # noqa: E402  (benchmarks/ is the script's folder)

ORACLES = ("grr", "oue", "sue", "olh", "blh", "hr", "ss")


def child(folder: str, scheduler: str, workers: int | None) -> None:
    import dask  # noqa: F401  (imported before the clock starts)

    from ldpopt.aggregate.dask import aggregate_shards

    t0, c0 = time.perf_counter(), H.cpu_clock()
    part = aggregate_shards(folder, scheduler=scheduler, workers=workers)
    wall, cpu = time.perf_counter() - t0, H.cpu_clock() - c0
    # VmHWM, not ru_maxrss: ru_maxrss survives exec and would include the parent's RSS at fork
    rss = next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmHWM")) / 1024
    print(json.dumps({"n": part.n, "wall_s": wall, "cpu_s": cpu, "max_rss_mb": rss,
                      "counts_sum": int(part.counts.sum())}))


def parser():
    ap = H.parser(__doc__)
    ap.add_argument("--sizes", nargs="+", type=float, default=[1e7, 1e8])
    ap.add_argument("--d", type=int, default=128)
    ap.add_argument("--epsilon", type=float, default=1.0)
    ap.add_argument("--shard-rows", type=int, default=1 << 21)
    ap.add_argument("--oracles", nargs="+", default=list(ORACLES))
    ap.add_argument("--max-hash-reports", type=float, default=2e7,
                    help="largest N for OLH/BLH (O(n·d) hashes; larger N is projected, not run)")
    ap.add_argument("--schedulers", nargs="+", default=["synchronous", "threads"])
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--scheduler", default="synchronous", help=argparse.SUPPRESS)
    ap.add_argument("--workers", type=int, default=None, help=argparse.SUPPRESS)
    return ap


def run(quick: bool = False, **opts) -> dict:
    """``--quick``: 2¹⁵ reports (two shards), OUE, d = 64, the synchronous scheduler."""
    args = H.options(parser(), "bench_aggregate.py", quick, opts)
    from ldpopt import oracles
    from ldpopt.aggregate.shards import write_shard

    sizes = [2**15] if args.quick else args.sizes
    d = 64 if args.quick else args.d
    shard_rows = 2**14 if args.quick else args.shard_rows
    if args.quick:
        args.oracles, args.schedulers = ["oue"], ["synchronous"]
    rows = []
    with tempfile.TemporaryDirectory(prefix="ldpopt-bench-agg-") as tmp:
        for name in args.oracles:
            orc = oracles.get(name, args.epsilon, d)
            rng = np.random.default_rng(0)
            shard = Path(tmp) / f"{name}.parquet"
            write_shard(shard, orc, orc.perturb(rng.integers(0, d, shard_rows), rng))
            for n_target in sizes:
                if name in ("olh", "blh") and n_target > args.max_hash_reports:
                    continue
                k = max(1, int(round(n_target / shard_rows)))
                folder = H.shard_folder(shard, k, Path(tmp) / f"{name}-{k}")
                for sched in args.schedulers:
                    workers = ["--workers", "2"] if sched == "threads" else []
                    r, _ = H.child_json(__file__, "--child", str(folder), "--scheduler", sched, *workers)
                    row = {"oracle": name, "d": d, "epsilon": args.epsilon, "n": r["n"], "scheduler": sched,
                           "workers": 2 if sched == "threads" else 1, **r,
                           "reports_per_s": r["n"] / r["wall_s"], "reports_per_cpu_s": r["n"] / r["cpu_s"],
                           "shard_bytes": shard.stat().st_size, "shard_rows": shard_rows}
                    rows.append(row)
                    print(f"{name:4s} n={r['n']:>11,d} {sched:11s} {row['reports_per_s'] / 1e6:8.2f} M reports/s "
                          f"({row['reports_per_cpu_s'] / 1e6:6.2f} M/cpu-s)  peak RSS {r['max_rss_mb']:7.1f} MB",
                          flush=True)
    return H.save("aggregate", args, {"rows": rows})


if __name__ == "__main__":
    a = parser().parse_args()
    child(a.child, a.scheduler, a.workers) if a.child else run(**vars(a))
