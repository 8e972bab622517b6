"""Dask workers with the aggregation kernels: (1) why one LocalCluster worker counted slower than one
in-process ``threads`` worker, measured side by side as the code was and as it is; (2) where the
time went, one cause at a time; (3) the numpy path in a worker with and without freed memory kept;
(4) scaling from 1 to all local workers, one core each.

Folders: written by ``ldpopt perturb`` (its row groups hold 2²⁴/d reports: 16,384 at d = 1,024),
OUE and OLH at d = 1,024 (ε = 1) and GRR at d = 1,024 (the cheapest count per report, where the
per-task cost shows most). Every aggregation's counts are asserted equal, bit for bit, to the numpy
path's (``device="numpy"``, synchronous scheduler) on that folder. Device: the default ("auto").

(1) ``before``: the code as it was, rebuilt from today's pieces — map tasks of 4 row groups (65,536
reports here), the map task as it was (numba imported and its threads set for every device but
numpy/cuda, integer columns read with pyarrow's ``to_numpy``, whose first call imports pandas), one
Numba thread per task whatever the number of workers, ``NUMBA_NUM_THREADS`` left at the cores, no
warm-up; ``now``: ``aggregate_shards(scheduler="local")``'s setup — tasks of about 10⁶ reports
(``ldpopt.aggregate.dask.task_rows``), cores // workers Numba threads per worker, every worker warmed
up at the cluster's start (``ldpopt.aggregate.cluster``). A fresh cluster for every measurement (its
start and warm-up timed apart from the aggregation); ``threads`` with one worker (its kernels on every
core, as before and now) and with one worker and one kernel thread. Measured: wall time of the
aggregation, CPU time of the worker processes (``time.process_time`` in each, before and after) and
of this process (the client and the scheduler), the start's wall time and the workers' CPU time at
ready. (2) On a 1-worker cluster, from before to now one change at a time: the warm-up, the map task,
the plan, the kernel threads; then now without the warm-up. (2b) In fresh processes, phase by phase,
what a new worker spends before and in its first task, with Numba's on-disk cache hit and empty.
(3) The numpy path on a cluster worker with and without freed memory kept. (4) OLH and OUE, numpy
path and kernels, one kernel thread per worker, speed-up over one worker and efficiency (speed-up /
workers).

The machine is shared with other engineers' jobs: the load average is recorded with every section;
CPU times are the fair measure, wall times are indicative.

    PYTHONPATH=. python benchmarks/bench_kernels_dask.py [--quick]

Results: benchmarks/results/kernels_dask.json.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

from bench_kernels import _machine, cli, write_result  # noqa: E402  (benchmarks/ is the script's folder)

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "benchmarks" / "results" / "kernels_dask.json"
D = 1024


def _cpu() -> float:
    return time.process_time()


def _load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def perturb_folder(folder: Path, name: str, n: int, seed: int = 1) -> Path:
    """``ldpopt perturb`` of a Dirichlet(0.5) histogram of n users over d = 1,024 values into
    ``folder`` (shards of 10⁶ users)."""
    rng = np.random.default_rng(seed)
    counts = rng.multinomial(n, rng.dirichlet(np.full(D, 0.5)))
    hist = folder.with_suffix(".csv")
    hist.write_text("value,count\n" + "".join(f"{v},{c}\n" for v, c in enumerate(counts)))
    subprocess.run([sys.executable, "-m", "ldpopt.cli", "perturb", "--histogram", str(hist), "--d", str(D),
                    "--oracle", name, "--epsilon", "1", "--seed", str(seed), "--out", str(folder)],
                   check=True, capture_output=True, env={**os.environ, "PYTHONPATH": str(REPO)})
    return folder


def _map_before(path, groups, device, kernel_threads):
    """The map task as it was: numba imported and its threads set whenever ``device`` was not
    "numpy" or "cuda" (the kernels used or not), and the shards' integer columns read with pyarrow's
    ``to_numpy``, whose first call in a process imports pandas (OUE/SUE's packed bits were already
    read as a view)."""
    import numpy as np
    import pyarrow as pa

    from ldpopt.aggregate.dask import _map
    from ldpopt.aggregate.shards import read_oracle

    if device not in ("numpy", "cuda"):
        import numba

        numba.set_num_threads(kernel_threads)
    if read_oracle(path).name not in ("oue", "sue"):
        pa.array(np.zeros(1, np.int64)).to_numpy()
    return _map(path, groups, device, None)


def _run_with(client, map_fn, tasks, device, kernel_threads):
    """``ldpopt.aggregate.dask._run_on`` with another map function: the same merge tree."""
    from ldpopt.aggregate.dask import _merge

    level = [client.submit(map_fn, path, groups, device, kernel_threads, pure=True) for path, groups in tasks]
    while len(level) > 1:
        nxt = [client.submit(_merge, level[i], level[i + 1], pure=True) for i in range(0, len(level) - 1, 2)]
        if len(level) % 2:
            nxt.append(level[-1])
        level = nxt
    return level[0].result()


#: the code as it was (``before``) and as it is (``now``), as the parameters of :func:`_on_cluster`
BEFORE = dict(group_plan=4, old_map=True, warm=False, kernel_threads=1, numba_env="cores")
NOW = dict(group_plan=None, old_map=False, warm=True, kernel_threads=None, numba_env="share")


def _on_cluster(folder: Path, workers: int, device, ref, group_plan, old_map, warm, kernel_threads,
                numba_env) -> dict:
    """One aggregation on a fresh LocalCluster of ``workers`` (one thread each), started as
    ``ldpopt.aggregate.cluster.local_client`` starts it (with ``warm``: warmed up; freed memory kept
    either way; ``NUMBA_NUM_THREADS`` in the workers: every core (``numba_env="cores"``, as
    distributed left it) or the tasks' kernel threads ("share")), the tasks planned by
    ``group_plan`` row groups each (None: ~10⁶ reports), counted by the map task of before or now, with
    ``kernel_threads`` Numba threads each (None: the share)."""
    from ldpopt.aggregate.cluster import kernel_share, local_client, usable_cores
    from ldpopt.aggregate.dask import _map, _plan
    from ldpopt.aggregate.shards import list_shards

    tasks, rows, empty = _plan(list_shards(folder), group_plan, workers)
    oracle = {"oracle": empty.oracle, "epsilon": empty.epsilon, "d": empty.d, "params": dict(empty.params)}
    kt = kernel_threads or kernel_share(workers)
    t0 = time.perf_counter()
    env = usable_cores() if numba_env == "cores" else kt
    with local_client(workers, device, oracle, warm=warm, kernel_threads=env) as (client, _):
        start = time.perf_counter() - t0
        ready = client.run(_cpu)
        c0, s0, w0 = sum(ready.values()), time.process_time(), time.perf_counter()
        part = _run_with(client, _map_before if old_map else _map, tasks, device, kt)
        wall = time.perf_counter() - w0
        own = time.process_time() - s0
        cpu = sum(client.run(_cpu).values()) - c0
    assert part.n == sum(rows) and np.array_equal(part.counts, ref), (folder, workers)
    return {"scheduler": "local", "workers": workers, "tasks": len(tasks), "kernel_threads_per_worker": kt,
            "numba_num_threads_env": env, "warmed_up": warm,
            "map": "before" if old_map else "now", "start_wall_s": start,
            "workers_cpu_at_ready_s": sum(ready.values()), "wall_s": wall, "workers_cpu_s": cpu,
            "client_and_scheduler_cpu_s": own, "M_reports_per_s_wall": part.n / wall / 1e6,
            "M_reports_per_worker_cpu_s": part.n / cpu / 1e6}


def _on_threads(folder: Path, how: str, device, ref, kernel_threads=None) -> dict:
    import dask

    from ldpopt.aggregate.cluster import kernel_share
    from ldpopt.aggregate.dask import _graph, _plan
    from ldpopt.aggregate.shards import list_shards

    tasks, rows, _ = _plan(list_shards(folder), 4 if how == "before" else None, 1)
    kt = kernel_threads or kernel_share(1)
    c0, w0 = time.process_time(), time.perf_counter()
    part = dask.compute(_graph(tasks, device, kt), scheduler="threads", num_workers=1)[0]
    wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    assert part.n == sum(rows) and np.array_equal(part.counts, ref), (folder, "threads", how)
    return {"scheduler": "threads", "workers": 1, "code": how, "tasks": len(tasks), "kernel_threads_per_worker": kt,
            "wall_s": wall, "process_cpu_s": cpu, "M_reports_per_s_wall": part.n / wall / 1e6,
            "M_reports_per_cpu_s": part.n / cpu / 1e6}


def _summary(rows: list[dict]) -> list[dict]:
    """Median and spread of the repetitions of each configuration."""
    keys = ("wall_s", "workers_cpu_s", "process_cpu_s", "start_wall_s", "workers_cpu_at_ready_s",
            "client_and_scheduler_cpu_s")
    groups: dict = {}
    for r in rows:
        groups.setdefault((r["oracle"], r["case"]), []).append(r)
    out = []
    for (oracle, case), rs in groups.items():
        s = {"oracle": oracle, "case": case, "repetitions": len(rs), "reports": rs[0]["reports"], "tasks": rs[0]["tasks"]}
        for k in keys:
            vals = [r[k] for r in rs if k in r]
            if vals:
                s[f"{k}_median"], s[f"{k}_min"], s[f"{k}_max"] = float(np.median(vals)), min(vals), max(vals)
        cpu = s.get("workers_cpu_s_median", s.get("process_cpu_s_median"))
        s["M_reports_per_s_wall_median"] = s["reports"] / s["wall_s_median"] / 1e6
        s["M_reports_per_cpu_s_median"] = s["reports"] / cpu / 1e6
        out.append(s)
    return out


def worker_vs_threads(folders: dict, refs: dict, reps: int, device) -> list[dict]:
    """(1): per folder, the configurations in turn, ``reps`` rounds (interleaved, so that a change in
    the machine's load falls on all of them)."""
    from ldpopt.aggregate.cluster import usable_cores

    cases = [("threads x1, kernels on every core (before)", lambda f, r: _on_threads(f, "before", device, r)),
             ("threads x1, kernels on every core (now)", lambda f, r: _on_threads(f, "now", device, r)),
             ("threads x1, one kernel thread (now)", lambda f, r: _on_threads(f, "now", device, r, 1)),
             ("local x1 (before)", lambda f, r: _on_cluster(f, 1, device, r, **BEFORE)),
             ("local x1 (now)", lambda f, r: _on_cluster(f, 1, device, r, **NOW))]
    if usable_cores() > 1:
        n = usable_cores()
        cases += [(f"local x{n} (before)", lambda f, r: _on_cluster(f, n, device, r, **BEFORE)),
                  (f"local x{n} (now)", lambda f, r: _on_cluster(f, n, device, r, **NOW))]
    rows = []
    for name, folder in folders.items():
        for rep in range(reps):
            for case, fn in cases:
                row = {"oracle": name, "case": case, "repetition": rep, "reports": int(refs[name][1]), "device": device,
                       "load_avg": _load(), **fn(folder, refs[name][0])}
                rows.append(row)
                print(json.dumps(row), flush=True)
    return rows


def causes(folders: dict, refs: dict, reps: int, device) -> list[dict]:
    """(2): on a 1-worker cluster, from the code as it was to the code as it is, one change at a time."""
    from ldpopt.aggregate.cluster import usable_cores

    steps = [("1 before: cold worker, old map task, 4-row-group tasks, 1 kernel thread", BEFORE),
             ("2 + warm-up at start", {**BEFORE, "warm": True}),
             ("3 + map task without pandas, numba only where it counts", {**BEFORE, "warm": True, "old_map": False}),
             ("4 + tasks of ~10^6 reports", {**NOW, "kernel_threads": 1}),
             (f"5 + the worker's share of kernel threads ({usable_cores()}) = now", NOW),
             ("6 now without the warm-up", {**NOW, "warm": False})]
    rows = []
    for name, folder in folders.items():
        for rep in range(reps):
            for case, kw in steps:
                row = {"oracle": name, "case": case, "repetition": rep, "reports": int(refs[name][1]), "device": device,
                       "load_avg": _load(), **_on_cluster(folder, 1, device, refs[name][0], **kw)}
                rows.append(row)
                print(json.dumps(row), flush=True)
    return rows


_FIRST_CALLS = """
import json, sys, time
c = time.process_time()
out = {}
def lap(k):
    global c
    out[k] = time.process_time() - c
    c = time.process_time()
import pyarrow.parquet, ldpopt.aggregate.dask
from ldpopt.aggregate.cluster import warm_worker
from ldpopt.aggregate.dask import _map
from ldpopt.aggregate.partial import _structural_params
from ldpopt.aggregate.shards import read_oracle
lap("import pyarrow.parquet, ldpopt.aggregate")
import numpy as np, pyarrow as pa
pa.array(np.zeros(1, np.int64)).to_numpy()
lap("pyarrow's first to_numpy (imports pandas; the reading path before)")
path, groups = sys.argv[1], [int(g) for g in sys.argv[2].split(",")]
orc = read_oracle(path)
oracle = {"oracle": orc.name, "epsilon": orc.epsilon, "d": orc.d, "params": _structural_params(orc)}
out["warm_worker"] = warm_worker(oracle, None)
lap("warm_worker: import numba, initialise it, load or compile the kernels")
_map(path, groups, None, None)
lap("first map task after that")
_map(path, groups, None, None)
lap("second map task")
print(json.dumps(out))
"""


def first_call_rows(folders: dict, reps: int) -> list[dict]:
    """(2b): what a fresh worker process spends before and in its first map task (one task of ~10⁶
    reports, or the shard's first 16 row groups), phase by phase in CPU time, with Numba's on-disk
    cache as it is (hit) and with an empty cache directory (``NUMBA_CACHE_DIR``: every kernel the
    oracle uses compiled in that process)."""
    from ldpopt.aggregate.dask import _plan
    from ldpopt.aggregate.shards import list_shards

    rows = []
    for name in ("oue", "olh"):
        path, groups = _plan(list_shards(folders[name]), 16, 1)[0][0]
        for cache in ("hit", "empty"):
            for rep in range(reps if cache == "hit" else 1):
                env = {**os.environ, "PYTHONPATH": str(REPO)}
                with tempfile.TemporaryDirectory(prefix="ldpopt-numba-cache-") as nc:
                    if cache == "empty":
                        env["NUMBA_CACHE_DIR"] = nc
                    proc = subprocess.run([sys.executable, "-c", _FIRST_CALLS, path, ",".join(map(str, groups))],
                                          capture_output=True, text=True, env=env, check=True)
                rows.append({"oracle": name, "numba_cache": cache, "repetition": rep, "load_avg": _load(),
                             "cpu_s": json.loads(proc.stdout.strip().splitlines()[-1])})
                print(json.dumps(rows[-1]), flush=True)
    return rows


def malloc_rows(folder: Path, ref, reps: int) -> list[dict]:
    """(3): the numpy path (device="numpy") on one warm cluster worker, as distributed starts it and
    after ldpopt._malloc.keep_freed_memory, against one threads worker in this process."""
    from distributed import Client, LocalCluster

    from ldpopt._malloc import keep_freed_memory
    from ldpopt.aggregate.dask import _plan, _run_on, aggregate_shards
    from ldpopt.aggregate.shards import list_shards

    rows = []
    tasks, nrows, _ = _plan(list_shards(folder), None, 1)
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=True, dashboard_address=None,
                      silence_logs=logging.ERROR) as cluster, Client(cluster) as client:
        for label, fix in (("one cluster worker, as distributed starts it", False),
                           ("one cluster worker, keep_freed_memory", True)):
            if fix:
                client.run(keep_freed_memory)
            for _ in range(reps):
                c0 = next(iter(client.run(_cpu).values()))
                t0 = time.perf_counter()
                part = _run_on(client, tasks, nrows, False, "numpy", None)
                wall = time.perf_counter() - t0
                cpu = next(iter(client.run(_cpu).values())) - c0
                assert np.array_equal(part.counts, ref)
                rows.append({"case": label, "reports": part.n, "worker_cpu_s": cpu, "wall_s": wall,
                             "M_reports_per_s_wall": part.n / wall / 1e6, "load_avg": _load()})
                print(json.dumps(rows[-1]), flush=True)
    for _ in range(reps):
        c0, t0 = time.process_time(), time.perf_counter()
        part = aggregate_shards(folder, scheduler="threads", workers=1, device="numpy")
        wall = time.perf_counter() - t0
        assert np.array_equal(part.counts, ref)
        rows.append({"case": "one threads worker in this process", "reports": part.n,
                     "worker_cpu_s": time.process_time() - c0, "wall_s": wall,
                     "M_reports_per_s_wall": part.n / wall / 1e6, "load_avg": _load()})
        print(json.dumps(rows[-1]), flush=True)
    return rows


def scaling_rows(folders: dict, refs: dict, reps: int) -> list[dict]:
    """(4): 1 and all local workers, one kernel thread each (so that a worker is one core), set up as
    ``aggregate_shards(scheduler="local")`` sets its own otherwise (warmed up, freed memory kept, the
    plan of now for that many workers); numpy path and kernels; the best of ``reps``."""
    from ldpopt.aggregate.cluster import usable_cores

    rows = []
    for name in ("olh", "oue"):
        for workers in sorted({1, usable_cores()}):
            for device in ("numpy", "cpu"):
                runs = [_on_cluster(folders[name], workers, device, refs[name][0], **{**NOW, "kernel_threads": 1})
                        for _ in range(reps)]
                best = min(runs, key=lambda r: r["wall_s"])
                rows.append({"oracle": name, "d": D, "device": device, "reports": int(refs[name][1]),
                             "load_avg": _load(), "walls_s": [r["wall_s"] for r in runs], **best})
                print(json.dumps(rows[-1]), flush=True)
    for row in rows:  # efficiency: speed-up over one worker (same oracle, device) divided by the workers
        one = next(r for r in rows if (r["oracle"], r["device"], r["workers"]) == (row["oracle"], row["device"], 1))
        row["speedup_wall"] = one["wall_s"] / row["wall_s"]
        row["efficiency_wall"] = row["speedup_wall"] / row["workers"]
        row["speedup_cpu_rate"] = (row["reports"] / row["workers_cpu_s"]) / (one["reports"] / one["workers_cpu_s"])
    return rows


def run(quick: bool = False) -> dict:
    from ldpopt.aggregate.dask import aggregate_shards
    from ldpopt.aggregate.cluster import usable_cores

    sizes = {"oue": 4_000_000, "olh": 2_000_000, "grr": 8_000_000}
    if quick:
        sizes = {k: v // 100 for k, v in sizes.items()}
    reps = 1 if quick else 3
    with tempfile.TemporaryDirectory(prefix="ldpopt-bench-dask-") as tmp:
        folders = {k: perturb_folder(Path(tmp, k), k, n) for k, n in sizes.items()}
        refs = {}
        for k, f in folders.items():
            part = aggregate_shards(f, scheduler="synchronous", device="numpy")
            refs[k] = (part.counts, part.n)
            # and the kernels loaded in this process (the threads rows) before any clock
            assert np.array_equal(aggregate_shards(f, scheduler="threads").counts, part.counts)
        result = {"machine": f"{_machine()}; {usable_cores()} cores usable",
                  "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                  "command": "PYTHONPATH=. python benchmarks/bench_kernels_dask.py" + (" --quick" if quick else ""),
                  "folders": {k: f"ldpopt perturb --oracle {k} --epsilon 1 --d {D}: {sizes[k]} reports, row groups "
                                 f"of {2**24 // D}" for k in folders},
                  "load_avg_at_start": _load()}
        result["worker_vs_threads"] = worker_vs_threads(folders, refs, reps, None)
        result["worker_vs_threads_summary"] = _summary(result["worker_vs_threads"])
        result["causes_one_worker"] = causes(folders, refs, reps, None)
        result["causes_one_worker_summary"] = _summary(result["causes_one_worker"])
        result["first_calls_fresh_process"] = first_call_rows(folders, 1 if quick else 3)
        result["malloc"] = malloc_rows(folders["oue"], refs["oue"][0], 1 if quick else 2)
        result["scaling_d1024"] = scaling_rows(folders, refs, 1 if quick else 2)
        result["load_avg_at_end"] = _load()
    for s in result["worker_vs_threads_summary"] + result["causes_one_worker_summary"]:
        print(json.dumps(s), flush=True)
    return write_result(result, OUT, quick)


if __name__ == "__main__":
    cli(run, __doc__)
