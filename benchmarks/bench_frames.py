"""The same reports counted by five engines: Dask threads, Dask distributed, Spark local[*], DuckDB, Polars.

One folder of Parquet report shards per (oracle, d, n) — written by ``write_shard`` from
``oracle.perturb``'s reports, ``_harness.shard_folder``'s distinct rotations of one shard — is
counted, each engine in a fresh subprocess, by:

* ``dask-threads``: ``aggregate_shards(folder, scheduler="threads", workers=cores)`` (ldpopt's own);
* ``dask-distributed``: ``aggregate_shards(folder, scheduler="local", workers=cores)`` (a
  ``distributed.LocalCluster``, started inside the clock: it is part of the cost);
* ``spark``: ``from_dataframe(spark.read.parquet(folder), oracle)`` on ``local[*]`` (the session
  started outside the clock; its start is reported as ``start_s``);
* ``duckdb``: ``from_dataframe(duckdb.connect().read_parquet(glob), oracle)``;
* ``polars``: ``from_dataframe(polars.scan_parquet(glob), oracle)``.

Every engine's counts must equal Dask's (``counts_sha1``; a difference stops the bench). Reported per
engine: wall seconds, CPU seconds of the whole process tree (the child, the Spark JVM, the Dask
workers: psutil samples every 0.1 s, so a process's last < 0.1 s may be missed), reports per
CPU-second (of the run with the least CPU among ``--repeats`` runs: on a shared machine the
load inflates CPU time too, through threads that spin while they wait), the peak of the process
tree's summed RSS, and the projection of 10⁹ reports: CPU-hours
= 10⁹ / (reports per CPU-second) / 3600 and wall on 64 cores assuming the map scales perfectly — a
projection from the measured rate, never a measurement.

    PYTHONPATH=. python benchmarks/bench_frames.py --quick
    PYTHONPATH=. python benchmarks/bench_frames.py --cases oue:1000:1e7 olh:1000:1e6 oue:40000:2e5 olh:40000:1e5

Results: benchmarks/results/frames.json (or --out DIR).
"""

from __future__ import annotations

import argparse
import glob as globmod
import hashlib
import json
import os
import tempfile
import threading
import time
from pathlib import Path

import _harness as H
import numpy as np

ENGINES = ("dask-threads", "dask-distributed", "spark", "duckdb", "polars")
CASES = ("oue:1000:1e7", "olh:1000:1e6", "oue:40000:2e5", "olh:40000:1e5")
QUICK_CASES = ("oue:1000:32768",)  # one case: Spark's and the cluster's starts dominate at this size
#: the core count the 10⁹ projection's wall time assumes
PROJECTION_CORES = 64


class TreeMonitor:
    """CPU seconds and peak summed RSS of this process and its descendants, sampled every ``every`` s."""

    def __init__(self, every: float = 0.1):
        import psutil

        self.psutil, self.every = psutil, every
        self.me = psutil.Process()
        self.base = self._cpu()
        self.last = dict(self.base)
        self.peak_rss = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()

    def _procs(self):
        try:
            return [self.me, *self.me.children(recursive=True)]
        except self.psutil.Error:
            return [self.me]

    def _cpu(self) -> dict:
        out = {}
        for p in self._procs():
            try:
                t = p.cpu_times()
                out[p.pid] = t.user + t.system
            except self.psutil.Error:
                pass
        return out

    def _sample(self) -> None:
        rss = 0
        for p in self._procs():
            try:
                t = p.cpu_times()
                self.last[p.pid] = max(self.last.get(p.pid, 0.0), t.user + t.system)
                rss += p.memory_info().rss
            except self.psutil.Error:
                pass
        self.peak_rss = max(self.peak_rss, rss)

    def _loop(self) -> None:
        while not self._stop.wait(self.every):
            self._sample()

    def stop(self) -> tuple[float, float]:
        """(CPU seconds since start, peak RSS in MB)."""
        self._sample()
        self._stop.set()
        self._thread.join()
        cpu = sum(v - self.base.get(pid, 0.0) for pid, v in self.last.items())
        return cpu, self.peak_rss / 2**20


def child(engine: str, folder: str) -> None:
    from ldpopt.aggregate.shards import list_shards, read_oracle

    files = list_shards(folder)
    orc = read_oracle(files[0])
    cores = os.cpu_count() or 1
    start = 0.0
    spark = None
    if engine == "spark":
        import sys
        import warnings

        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        from pyspark.sql import SparkSession

        t0 = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            spark = (SparkSession.builder.master("local[*]").config("spark.ui.enabled", "false")
                     .config("spark.sql.shuffle.partitions", str(cores)).config("spark.driver.memory", "2g")
                     .getOrCreate())
        spark.sparkContext.setLogLevel("ERROR")
        start = time.perf_counter() - t0
    elif engine in ("dask-threads", "dask-distributed"):
        import dask  # noqa: F401  (imported before the clock starts)
    elif engine == "duckdb":
        import duckdb
    elif engine == "polars":
        import polars  # noqa: F401
    from ldpopt.aggregate import from_dataframe
    from ldpopt.aggregate.dask import aggregate_shards

    mon = TreeMonitor()
    t0 = time.perf_counter()
    if engine == "dask-threads":
        part = aggregate_shards(files, scheduler="threads", workers=cores)
    elif engine == "dask-distributed":
        part = aggregate_shards(files, scheduler="local", workers=cores)
    elif engine == "spark":
        part = from_dataframe(spark.read.parquet(folder), orc)
    elif engine == "duckdb":
        import duckdb

        con = duckdb.connect()
        con.execute(f"SET threads = {cores}")
        part = from_dataframe(con.read_parquet(str(Path(folder) / "*.parquet")), orc)
    else:
        import polars as pl

        part = from_dataframe(pl.scan_parquet(str(Path(folder) / "*.parquet")), orc)
    wall = time.perf_counter() - t0
    cpu, peak = mon.stop()
    if spark is not None:
        spark.stop()
    print(json.dumps({"n": part.n, "wall_s": wall, "cpu_s": cpu, "peak_rss_mb": peak, "start_s": start,
                      "counts_sha1": hashlib.sha1(np.ascontiguousarray(part.counts).tobytes()).hexdigest()}))


def _available(engine: str) -> str | None:
    """Why ``engine`` cannot run here, or None."""
    import importlib.util
    import shutil

    need = {"spark": "pyspark", "duckdb": "duckdb", "polars": "polars", "dask-distributed": "distributed"}
    mod = need.get(engine)
    if mod and importlib.util.find_spec(mod) is None:
        return f"{mod} is not installed"
    if engine == "spark" and not (shutil.which("java") or os.environ.get("JAVA_HOME")):
        return "no Java runtime"
    return None


def parser():
    ap = H.parser(__doc__)
    ap.add_argument("--cases", nargs="+", default=list(CASES), help="ORACLE:D:N items")
    ap.add_argument("--engines", nargs="+", default=list(ENGINES))
    ap.add_argument("--epsilon", type=float, default=1.0)
    ap.add_argument("--shard-rows", type=int, default=1 << 20)
    ap.add_argument("--max-shard-mb", type=float, default=256.0,
                    help="fewer rows per shard where a report is wide (OUE at d = 40,000: 5 kB)")
    ap.add_argument("--repeats", type=int, default=2, help="runs per engine and case; the row is the least CPU")
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--engine", default=None, help=argparse.SUPPRESS)
    return ap


def run(quick: bool = False, **opts) -> dict:
    """``--quick``: 2¹⁵ OUE reports at d = 1,000, every engine installed here, one run each."""
    args = H.options(parser(), "bench_frames.py", quick, opts)
    from ldpopt import oracles
    from ldpopt.aggregate.shards import write_shard

    cases = list(QUICK_CASES) if args.quick else args.cases
    if args.quick:
        args.repeats = 1
    cores = os.cpu_count() or 1
    rows, skipped = [], {}
    with tempfile.TemporaryDirectory(prefix="ldpopt-bench-frames-") as tmp:
        for case in cases:
            name, d, n = case.split(":")
            d, n = int(d), int(float(n))
            orc = oracles.get(name, args.epsilon, d)
            width = sum(max(c.size, 8) for c in orc.report_columns())
            rows_per = max(1024, min(args.shard_rows, int(args.max_shard_mb * 2**20 / width), n))
            rng = np.random.default_rng(0)
            shard = Path(tmp) / f"{name}-{d}.parquet"
            write_shard(shard, orc, orc.perturb(rng.integers(0, d, rows_per), rng), row_group_rows=min(rows_per, 1 << 18))
            k = max(1, round(n / rows_per))
            folder = H.shard_folder(shard, k, Path(tmp) / f"{name}-{d}-{k}")
            size_mb = sum(os.path.getsize(f) for f in globmod.glob(str(folder / "*.parquet"))) / 2**20
            ref = None
            for engine in args.engines:
                why = _available(engine)
                if why:
                    skipped[engine] = why
                    continue
                runs = [H.child_json(__file__, "--child", str(folder), "--engine", engine)[0]
                        for _ in range(args.repeats)]
                r = min(runs, key=lambda x: x["cpu_s"])  # the shared box's load inflates CPU time too
                if any(x["counts_sha1"] != r["counts_sha1"] for x in runs):
                    raise SystemExit(f"{engine}: counts differ between repeats on {case}")
                if ref is None:
                    ref = r["counts_sha1"]
                elif r["counts_sha1"] != ref:
                    raise SystemExit(f"{engine}: counts differ from {args.engines[0]}'s on {case}")
                rate = r["n"] / r["cpu_s"]
                row = {"oracle": name, "d": d, "epsilon": args.epsilon, "engine": engine, "cores": cores,
                       "shards": k, "shard_rows": rows_per, "parquet_mb": size_mb, **r,
                       "repeats": len(runs), "cpu_s_all": [x["cpu_s"] for x in runs],
                       "wall_s_all": [x["wall_s"] for x in runs], "loadavg": os.getloadavg()[0],
                       "reports_per_s": r["n"] / r["wall_s"], "reports_per_cpu_s": rate,
                       "projected_1e9_cpu_hours": 1e9 / rate / 3600,
                       "projected_1e9_wall_s_on_64_cores": 1e9 / rate / PROJECTION_CORES}
                rows.append(row)
                print(f"{name} d={d:>6,d} n={r['n']:>11,d} {engine:17s} wall {r['wall_s']:7.2f} s  cpu {r['cpu_s']:7.2f} s  "
                      f"{rate / 1e6:7.3f} M reports/CPU-s  peak {r['peak_rss_mb']:7.0f} MB", flush=True)
            folder_files = list(folder.glob("*.parquet"))
            for f in folder_files:
                f.unlink()
    return H.save("frames", args, {"rows": rows, "skipped": skipped, "projection_cores": PROJECTION_CORES,
                                   "projection": "10^9 reports at the measured reports per CPU-second; the wall "
                                                 "time on 64 cores assumes the map scales perfectly (not measured)"})


if __name__ == "__main__":
    a = parser().parse_args()
    child(a.engine, a.child) if a.child else run(**vars(a))
