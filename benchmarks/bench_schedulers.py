"""Start-up cost against throughput of ``ldpopt aggregate``'s schedulers: ``threads`` (in process)
against ``local`` (a 2-worker ``distributed.LocalCluster``, the CLI default), on the same folders.

For each (oracle, N) one shard of 2^21 reports is written and a folder of N / 2^21 symbolic links to
it is aggregated (as in bench_aggregate.py: the page cache serves the file). Each measurement is a
fresh subprocess that imports dask/distributed before the clock starts and times, for ``local``:
cluster + client start (with the workers' warm-up, ``ldpopt.aggregate.cluster.local_client``), the
aggregation, and the shutdown separately. Wall time (``perf_counter``)
and CPU time: the process's own (``process_time``) plus its reaped children (the worker processes,
``RUSAGE_CHILDREN`` after shutdown). The counts of every run are compared with the ``threads`` run
(bit for bit, or the script fails).

    PYTHONPATH=. python benchmarks/bench_schedulers.py            # the BENCHMARKS.md run
    PYTHONPATH=. python benchmarks/bench_schedulers.py --quick    # one small folder, threads only

Results: benchmarks/results/schedulers.json (or --out DIR).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import resource
import tempfile
import time
from pathlib import Path

import numpy as np

import _harness as H  # noqa: E402  (benchmarks/ is the script's folder)

SHARD_ROWS = 1 << 21


def _cpu():
    ch = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time(), ch.ru_utime + ch.ru_stime


def child(folder: str, scheduler: str) -> None:
    import dask  # noqa: F401  (imports before the clock starts)
    import distributed  # noqa: F401

    from ldpopt.aggregate.cluster import local_client, usable_cores
    from ldpopt.aggregate.dask import _plan, _run_on, aggregate_shards, local_workers
    from ldpopt.aggregate.shards import list_shards

    t0, (c0, k0) = time.perf_counter(), _cpu()
    phases = {}
    if scheduler == "threads":
        part = aggregate_shards(folder, scheduler="threads", workers=2)
        phases["aggregate_s"] = time.perf_counter() - t0
    else:
        # what aggregate_shards(scheduler="local") does, with its phases timed apart
        tasks, rows, empty = _plan(list_shards(folder), None, usable_cores())
        nw = local_workers(None, len(tasks))
        oracle = {"oracle": empty.oracle, "epsilon": empty.epsilon, "d": empty.d, "params": dict(empty.params)}
        with local_client(nw, None, oracle) as (client, share):
            t1 = time.perf_counter()
            part = _run_on(client, tasks, rows, False, None, share).with_labels(empty.labels)
            t2 = time.perf_counter()
        t3 = time.perf_counter()
        phases = {"start_s": t1 - t0, "aggregate_s": t2 - t1, "shutdown_s": t3 - t2,
                  "workers": nw}
    wall = time.perf_counter() - t0
    c1, k1 = _cpu()
    print(json.dumps({"n": part.n, "wall_s": wall, "cpu_self_s": c1 - c0, "cpu_children_s": k1 - k0,
                      "counts_sha256": hashlib.sha256(part.counts.tobytes()).hexdigest(), **phases}))


def parser():
    ap = H.parser(__doc__)
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--scheduler", default="threads", help=argparse.SUPPRESS)
    return ap


def run(quick: bool = False, **opts) -> dict:
    args = H.options(parser(), "bench_schedulers.py", quick, opts)
    from ldpopt import oracles
    from ldpopt.aggregate.shards import write_shard

    d = 128
    # --quick: a smoke run (a LocalCluster alone takes ~10 s to start on this machine)
    schedulers = ("threads",) if args.quick else ("threads", "local")
    rows_per_shard = 2**14 if args.quick else SHARD_ROWS
    cases = [("oue", 1)] if args.quick else [("oue", 1), ("oue", 8), ("oue", 48), ("olh", 1), ("olh", 4)]
    rows = []
    with tempfile.TemporaryDirectory(prefix="ldpopt-bench-sched-") as tmp:
        for name in sorted({c[0] for c in cases}):
            orc = oracles.get(name, 1.0, d)
            rng = np.random.default_rng(0)
            write_shard(Path(tmp) / f"{name}.parquet", orc, orc.perturb(rng.integers(0, d, rows_per_shard), rng))
        for name, k in cases:
            folder = H.shard_folder(Path(tmp) / f"{name}.parquet", k, Path(tmp) / f"{name}-{k}")
            ref = None
            for sched in schedulers:
                r, err = H.child_json(__file__, "--child", str(folder), "--scheduler", sched)
                ref = ref or r["counts_sha256"]
                if r["counts_sha256"] != ref:
                    raise SystemExit(f"{name} n={r['n']}: {sched} counts differ from threads")
                row = {"oracle": name, "d": d, "n": r["n"], "scheduler": sched, **r,
                       "cpu_s": r["cpu_self_s"] + r["cpu_children_s"], "stderr_lines": len(err.splitlines())}
                rows.append(row)
                extra = (f" start {r['start_s']:.2f} s, run {r['aggregate_s']:.2f} s, shutdown {r['shutdown_s']:.2f} s"
                         if sched == "local" else "")
                print(f"{name} n={r['n']:>11,d} {sched:8s} wall {r['wall_s']:6.2f} s  CPU {row['cpu_s']:6.2f} s"
                      f"{extra}  stderr lines {row['stderr_lines']}", flush=True)
    return H.save("schedulers", args, {"rows": rows})


if __name__ == "__main__":
    a = parser().parse_args()
    child(a.child, a.scheduler) if a.child else run(**vars(a))
