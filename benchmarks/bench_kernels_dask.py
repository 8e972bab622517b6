"""Dask workers with the aggregation kernels: (1) why one cluster worker was slower than one
in-process ``threads`` worker on OUE, and the fix; (2) scaling from 1 to all local workers.

(1) The same OUE shards (d = 1024) aggregated by one LocalCluster worker process, first as
``distributed`` starts it (its nanny sets ``MALLOC_TRIM_THRESHOLD_``, which also freezes glibc's mmap
threshold at 128 KiB, so each numpy temporary of the aggregator is a fresh mmap to fault in), then
after ``ldpopt._malloc.keep_freed_memory`` ran in the worker (what ``aggregate_shards(scheduler=
"local")`` now does), and by one ``threads`` worker in this process. Measured: the worker's CPU time
(``time.process_time`` run in the worker) and the wall time of the aggregation alone (the cluster
is started outside the clock). (2) OLH shards (d = 1024) on a LocalCluster of 1 and of all workers
(started outside the clock), numpy path and CPU kernels (one kernel thread per worker), wall time,
with the speed-up over one worker and the efficiency (speed-up / workers). The machine is shared
(2 cores, other engineers' jobs and a background sweep): the numbers are indicative.

    PYTHONPATH=. python benchmarks/bench_kernels_dask.py [--quick]

Results: benchmarks/results/kernels_dask.json.
"""

from __future__ import annotations

import json
import logging
import os
import platform
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

from bench_kernels import cli, write_result  # noqa: E402  (benchmarks/ is the script's folder)

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "benchmarks" / "results" / "kernels_dask.json"


def _cpu() -> float:
    return time.process_time()


def _load_kernels() -> None:
    from ldpopt.kernels import cpu

    cpu.hash_counts(np.zeros(4, np.int64), np.zeros(4, np.int64), 3, 4)


def _shards(folder: Path, name: str, d: int, shards: int, rows: int, groups: int) -> int:
    from ldpopt import oracles
    from ldpopt.aggregate.shards import write_shard_batches

    orc = oracles.get(name, 1.0, d)
    rng = np.random.default_rng(0)
    for s in range(shards):
        write_shard_batches(folder / f"s{s}.parquet", orc,
                            (orc.perturb(rng.integers(0, d, rows), rng) for _ in range(groups)))
    return shards * rows * groups


def malloc_rows(folder: Path, n: int) -> list[dict]:
    from distributed import Client, LocalCluster

    import ldpopt.aggregate.dask as ad
    from ldpopt._malloc import keep_freed_memory

    rows = []
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None,
                      silence_logs=logging.ERROR) as cluster, Client(cluster) as client:
        for label, fix in (("one cluster worker, as distributed starts it", False),
                           ("one cluster worker, keep_freed_memory", True)):
            if fix:
                client.run(keep_freed_memory)
            for _ in range(2):
                c0 = next(iter(client.run(_cpu).values()))
                t0 = time.perf_counter()
                part = ad.aggregate_shards(folder, scheduler=client, device="numpy")
                wall = time.perf_counter() - t0
                cpu = next(iter(client.run(_cpu).values())) - c0
                rows.append({"case": label, "reports": part.n, "worker_cpu_s": cpu, "wall_s": wall,
                             "M_reports_per_s_wall": n / wall / 1e6})
    for _ in range(2):
        c0, t0 = time.process_time(), time.perf_counter()
        part = ad.aggregate_shards(folder, scheduler="threads", workers=1, device="numpy")
        rows.append({"case": "one threads worker in this process", "reports": part.n,
                     "worker_cpu_s": time.process_time() - c0, "wall_s": time.perf_counter() - t0,
                     "M_reports_per_s_wall": n / (time.perf_counter() - t0) / 1e6})
    return rows


def scaling_rows(folder: Path, n: int) -> list[dict]:
    """One LocalCluster per worker count, started outside the clock (its start costs seconds here),
    set up as ``aggregate_shards(scheduler="local")`` sets its own (one thread and one kernel thread
    per worker, freed memory kept); the kernels are loaded in every worker before the clock (a tiny
    call), and each configuration runs once (a repeat would be served from the cluster's memory:
    the tasks are pure, with the same keys). Wall time, and the CPU time of all workers."""
    from distributed import Client, LocalCluster

    from ldpopt._malloc import keep_freed_memory
    from ldpopt.aggregate.dask import aggregate_shards, local_workers

    rows, ref = [], None
    for workers in sorted({1, local_workers(None, 10**6)}):
        with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None,
                          silence_logs=logging.ERROR, env={"NUMBA_NUM_THREADS": "1"}) as cluster, \
                Client(cluster) as client:
            client.run(keep_freed_memory)
            client.run(_load_kernels)
            for device in ("numpy", "cpu"):
                c0 = sum(client.run(_cpu).values())
                t0 = time.perf_counter()
                part = aggregate_shards(folder, scheduler=client, device=device)
                wall = time.perf_counter() - t0
                cpu = sum(client.run(_cpu).values()) - c0
                ref = part.counts if ref is None else ref
                assert np.array_equal(part.counts, ref)
                rows.append({"device": device, "workers": workers, "reports": part.n, "wall_s": wall,
                             "workers_cpu_s": cpu, "M_reports_per_s_wall": n / wall / 1e6})
    for row in rows:  # efficiency: speed-up over one worker (same device) divided by the workers
        one = next(r for r in rows if r["device"] == row["device"] and r["workers"] == 1)
        row["speedup_wall"] = one["wall_s"] / row["wall_s"]
        row["efficiency_wall"] = row["speedup_wall"] / row["workers"]
    return rows


def run(quick: bool = False) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        oue, olh = Path(tmp, "oue"), Path(tmp, "olh")
        oue.mkdir(), olh.mkdir()
        n_oue = _shards(oue, "oue", 1024, 2, 1 << (14 if quick else 18), 4)
        n_olh = _shards(olh, "olh", 1024, 4, 1 << (12 if quick else 16), 4)
        result = {"machine": f"{platform.node()}: {os.cpu_count()} cores, shared with other work (indicative)",
                  "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                  "command": "PYTHONPATH=. python benchmarks/bench_kernels_dask.py" + (" --quick" if quick else ""),
                  "malloc": malloc_rows(oue, n_oue), "scaling_olh_d1024": scaling_rows(olh, n_olh)}
    for row in result["malloc"] + result["scaling_olh_d1024"]:
        print(json.dumps(row), flush=True)
    return write_result(result, OUT, quick)


if __name__ == "__main__":
    cli(run, __doc__)
