"""The billion-report case end to end: OLH reports written as Parquet shards (``ldpopt perturb``),
counted (``ldpopt aggregate``, the threads scheduler and the local Dask cluster), estimated and
post-processed (``ldpopt postprocess``), with the cost of every stage per report, and a projection
to 1,139,469,767 OLH reports, the number a pure-ldp user asked about
(github.com/Samuel-Maddock/pure-LDP/issues/6).

Every stage is the command itself, run as ``nice -n 19 python -m ldpopt.cli ...`` in a fresh
process; per stage the bench records wall seconds, CPU seconds of the whole process tree (user +
system from ``os.wait4``, which includes the worker processes the command started and reaped: the
Dask cluster's), the peak of the tree's summed RSS (polled every 0.1 s with psutil; shared pages
count once per process) and the bytes the shards take on disk. Rates are reports per CPU-second and
per wall-second; a command's interpreter start and imports are inside its numbers (≈ 1 CPU-s,
negligible at the largest size, not at the smallest).

Runs:

* the **grid**: ε in ``--epsilons`` × d in ``--ds``, n = ``--cells`` / d reports (the same n·d, so
  the same hashing work per cell: the aggregation of OLH evaluates d hashes per report), aggregated
  with the threads scheduler and the local cluster at all the cores of this machine;
* **scaling**: the first grid cell aggregated on 1 core and on all the cores of this machine, both
  schedulers, alternately ``--scaling-repeats`` times (the speed-up compares the fastest of each) (``taskset`` pins the command and its workers, ``NUMBA_NUM_THREADS`` the kernels' threads:
  without it one worker's kernels already use every core);
* the **largest run**: ``--big-n`` reports at ε = ``--big-epsilon``, d = ``--big-d`` (threads);
* **pure-ldp**: its ``LHServer.aggregate`` loop (one call per report, d xxhash calls each, in the
  peers' venv) on the first ``--peer-cells`` / d reports of each grid cell's first shard, the
  (seed, hash) pairs handed over as they are stored (the seed's low 32 bits, what xxh32 keys on).
  pure-ldp hashes with XXH32 where ldpopt hashes with SplitMix64, so the counts are checked equal
  against ldpopt's reader of pure-ldp's reports (``ldpopt.interop.pure_ldp.read_lh``, XXH32
  vectorised) on the same pairs; the ratio is ldpopt's aggregate stage (reports/CPU-s, from Parquet)
  over pure-ldp's loop — both evaluate d hashes per report.

The **projection** multiplies each stage's measured CPU-seconds per report by 1,139,469,767 and
divides by a core count: it assumes cost linear in the number of reports (checked between the grid
and the largest run at the same d), perfect scaling over cores (the measured 1 → 2 worker speed-up
says how far this machine is from it) and the same per-core speed; it is a projection, not a
measurement, and the results file says so.

    PYTHONPATH=. python benchmarks/bench_billion.py --quick
    PYTHONPATH=. python benchmarks/bench_billion.py            # the BENCHMARKS.md run (16 min on 2 shared cores)

Results: benchmarks/results/billion.json (or --out DIR). Needs ``bash benchmarks/setup_peers.sh``
for the pure-ldp rows (else they say "not run").
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import _harness as H  # noqa: E402  (benchmarks/ is the script's folder)

#: the number of OLH reports a pure-ldp user asked about (github.com/Samuel-Maddock/pure-LDP/issues/6)
BILLION = 1_139_469_767
#: the second post-processing method beside norm-sub
METHODS = ("norm-sub", "mle-apx")


def parser():
    ap = H.parser(__doc__)
    ap.add_argument("--epsilons", nargs="+", type=float, default=[1.0, 4.0])
    ap.add_argument("--ds", nargs="+", type=int, default=[1000, 10000, 40000])
    ap.add_argument("--cells", type=float, default=2e10, help="n·d of a grid cell (n = cells / d reports)")
    ap.add_argument("--big-n", type=float, default=1e8, help="reports of the largest run (0: none)")
    ap.add_argument("--big-d", type=int, default=1000)
    ap.add_argument("--big-epsilon", type=float, default=1.0)
    ap.add_argument("--peer-cells", type=float, default=2e7, help="n·d of pure-ldp's sample (0: no peer)")
    ap.add_argument("--shard-rows", type=int, default=1_000_000)
    ap.add_argument("--scaling-repeats", type=int, default=3, help="1-core / all-core aggregations of the first cell")
    ap.add_argument("--timeout", type=float, default=1800.0, help="seconds a stage may take")
    ap.add_argument("--tmp", default=None, help="folder for the shards (default: the system's temporary folder)")
    return ap


def measure(cmd: list[str], timeout: float, cores: int | None = None) -> dict:
    """Run ``cmd`` (niced) in a fresh process group: wall and CPU seconds of the whole tree, the peak
    of its summed RSS; its stdout; an error (non-zero exit, time out) raises with stderr's last line.
    ``cores``: pinned to the first ``cores`` cores (``taskset``; the Numba kernels' threads too)."""
    import psutil

    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(H.REPO), os.environ.get("PYTHONPATH", "")])}
        pin = []
        if cores is not None:
            pin = ["taskset", "-c", f"0-{cores - 1}"]
            env["NUMBA_NUM_THREADS"] = str(cores)
        t0 = time.perf_counter()
        proc = subprocess.Popen([*pin, "nice", "-n", "19", *cmd], stdout=out, stderr=err, cwd=H.REPO, env=env,
                                start_new_session=True)
        peak, ps = 0.0, psutil.Process(proc.pid)
        while True:
            pid, status, ru = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            try:
                tree = [ps, *ps.children(recursive=True)]
                peak = max(peak, sum(p.memory_info().rss for p in tree if p.is_running()) / 2**20)
            except psutil.Error:
                pass  # a process of the tree ended between the listing and the reading
            if time.perf_counter() - t0 > timeout:
                os.killpg(proc.pid, 9)
                os.wait4(proc.pid, 0)
                raise RuntimeError(f"{' '.join(cmd[:4])}: did not finish in {timeout:.0f} s")
            time.sleep(0.1)
        wall = time.perf_counter() - t0
        out.seek(0)
        err.seek(0)
        code = os.waitstatus_to_exitcode(status)
        if code != 0:
            tail = (err.read().decode(errors="replace").strip().splitlines() or ["(no stderr)"])[-1]
            raise RuntimeError(f"{' '.join(cmd[2:5])}: exit {code}: {tail}")
        peak = max(peak, ru.ru_maxrss / 1024.0)
        return {"wall_s": wall, "cpu_s": ru.ru_utime + ru.ru_stime, "peak_rss_mb": peak,
                "stdout": out.read().decode(errors="replace")}


def _cli(*words) -> list[str]:
    return [sys.executable, "-m", "ldpopt.cli", *map(str, words)]


def _row(stage: str, n: int, m: dict, **extra) -> dict:
    row = {"stage": stage, "n": n, **extra, **{k: v for k, v in m.items() if k != "stdout"},
           "reports_per_cpu_s": n / m["cpu_s"], "reports_per_wall_s": n / m["wall_s"],
           "cpu_s_per_report": m["cpu_s"] / n}
    print(f"{stage:22s} n={n:>11,d} {json.dumps(extra)[:60]:60s} {row['reports_per_cpu_s']:10.3g}/CPU-s "
          f"{row['reports_per_wall_s']:10.3g}/wall-s peak {m['peak_rss_mb']:7.0f} MB", flush=True)
    return row


def _counts(path: Path) -> np.ndarray:
    import pandas as pd

    return pd.read_csv(path)["count"].to_numpy()


def cell(tmp: Path, eps: float, d: int, n: int, shard_rows: int, runs: list[tuple[str, int]],
         timeout: float) -> tuple[list[dict], Path]:
    """One (ε, d, n): perturb, aggregate with each (scheduler, cores) of ``runs`` (pinned to that many
    cores, one worker or thread per core; the counts must agree), post-process with each of METHODS.
    Returns the rows and the shard folder."""
    import pandas as pd

    base = dict(epsilon=eps, d=d)
    hist = tmp / f"h-{d}-{n}.csv"
    pd.DataFrame({"value": np.arange(d), "count": H.zipf_counts(d, n)}).to_csv(hist, index=False)
    shards = tmp / f"olh-e{eps:g}-d{d}-n{n}"
    rows = []
    m = measure(_cli("perturb", "--histogram", hist, "--d", d, "--oracle", "olh", "--epsilon", eps, "--seed", 1,
                     "--shard-rows", shard_rows, "--out", shards), timeout)
    files = sorted(shards.glob("*.parquet"))
    disk = sum(f.stat().st_size for f in files)
    rows.append(_row("perturb", n, m, **base, shards=len(files), bytes_on_disk=disk, bytes_per_report=disk / n))
    first = None
    for sched, cores in runs:
        out = tmp / f"counts-{sched}-{cores}.csv"
        m = measure(_cli("aggregate", shards, "--scheduler", sched, "--workers", cores, "--no-progress",
                         "--out", out), timeout, cores=cores)
        counts = _counts(out)
        if first is None:
            first = counts
        elif not np.array_equal(counts, first):
            raise AssertionError(f"ε={eps} d={d}: {sched} on {cores} cores counted differently")
        rows.append(_row("aggregate", n, m, **base, scheduler=sched, workers=cores, cores=cores,
                         counts_equal_first=True))
    counts_file = tmp / "counts.csv"
    shutil.copy(tmp / f"counts-{runs[0][0]}-{runs[0][1]}.csv", counts_file)
    for method in METHODS:
        out = tmp / f"est-{method}.csv"
        m = measure(_cli("postprocess", "--counts", counts_file, "--oracle", "olh", "--epsilon", eps, "--n", n,
                         "--d", d, "--method", method, "--out", out), timeout)
        est = pd.read_csv(out)[method].to_numpy()
        if not (np.all(np.isfinite(est)) and est.min() >= -1e-12 and abs(est.sum() - 1) < 1e-6):
            raise AssertionError(f"{method}: not a distribution (min {est.min()}, sum {est.sum()})")
        truth = H.zipf_counts(d, n) / n
        rows.append(_row("postprocess", n, m, **base, method=method, l1_error=float(np.abs(est - truth).sum())))
    return rows, shards


def peer(shards: Path, eps: float, d: int, m: int, tmp: Path) -> dict:
    """pure-ldp's LHServer loop on the first m reports of the first shard, and ldpopt's reader of the
    same (hash, seed) pairs (counts checked equal)."""
    import pyarrow.parquet as pq

    from ldpopt.interop.pure_ldp import read_lh

    if not H.PEER_PYTHON.exists():
        return {"epsilon": eps, "d": d, "status": "not run: no benchmarks/.peer-venv (bash benchmarks/setup_peers.sh)"}
    table = pq.read_table(min(shards.glob("*.parquet")), columns=["hash", "seed"]).slice(0, m)
    pairs = np.stack([table["hash"].to_numpy(), table["seed"].to_numpy() & 0xFFFFFFFF], axis=1).astype(np.int64)
    path = tmp / f"peer-{eps:g}-{d}.npy"
    np.save(path, pairs)
    cfg = {"task": "lh_aggregate", "epsilon": eps, "d": d, "reports": str(path)}
    r = H.run_process([str(H.PEER_PYTHON), str(H.BENCH_DIR / "peers.py"), json.dumps(cfg)], timeout=1800)
    if r.status != "ok":
        return {"epsilon": eps, "d": d, "m": m, "status": r.status, "error": r.error}
    ours = None
    best = float("inf")
    for _ in range(3):
        c0 = H.cpu_clock()
        ours = read_lh(pairs, eps, d, use_olh=True)
        best = min(best, H.cpu_clock() - c0)
    assert ours is not None
    equal = bool(np.array_equal(np.asarray(r.payload["counts"]), ours.counts))
    if not equal:
        raise AssertionError(f"ε={eps} d={d}: pure-ldp's counts differ from read_lh's on the same reports")
    return {"epsilon": eps, "d": d, "m": m, "status": "ok", "counts_equal": equal,
            "peer_cpu_s": r.payload["cpu_seconds"], "peer_wall_s": r.payload["seconds"],
            "peer_reports_per_cpu_s": m / r.payload["cpu_seconds"],
            "read_lh_cpu_s": best, "read_lh_reports_per_cpu_s": m / best}


def fit_exponent(ds, ys) -> float:
    """Slope of log y against log d (least squares)."""
    return float(np.polyfit(np.log(np.asarray(ds, float)), np.log(np.asarray(ys, float)), 1)[0])


def summarise(rows: list[dict], peers: list[dict], cores: int) -> dict:
    """Exponents over d, the scaling, the ratios to pure-ldp and the projection to BILLION reports."""
    fixed = {(r["stage"], r.get("scheduler"), r.get("method")): r["cpu_s"] for r in rows if r.get("part") == "fixed"}
    for r in rows:  # the cost per report less the command's fixed cost (start-up, imports, cluster)
        f = fixed.get((r["stage"], r.get("scheduler"), r.get("method")))
        if f is not None and r.get("part") != "fixed" and r["cpu_s"] > f:
            r["cpu_s_less_fixed"] = r["cpu_s"] - f
            r["reports_per_cpu_s_less_fixed"] = r["n"] / (r["cpu_s"] - f)
    agg = [r for r in rows if r["stage"] == "aggregate" and r.get("part") == "grid" and r["scheduler"] == "threads"]
    exps = {}
    for eps in sorted({r["epsilon"] for r in agg}):
        pts = sorted((r["d"], r["cpu_s"] / r["n"]) for r in agg if r["epsilon"] == eps)
        if len(pts) >= 2:
            exps[f"aggregate_cpu_per_report_eps{eps:g}"] = fit_exponent(*zip(*pts))
        pts = sorted((r["d"], 1 / r["reports_per_cpu_s_less_fixed"]) for r in agg
                     if r["epsilon"] == eps and "reports_per_cpu_s_less_fixed" in r)
        if len(pts) >= 2:
            exps[f"aggregate_cpu_per_report_less_fixed_eps{eps:g}"] = fit_exponent(*zip(*pts))
        post = sorted((r["d"], r["cpu_s"]) for r in rows if r["stage"] == "postprocess" and r.get("part") == "grid"
                      and r["epsilon"] == eps and r["method"] == METHODS[0])
        if len(post) >= 2:
            exps[f"postprocess_{METHODS[0]}_cpu_eps{eps:g}"] = fit_exponent(*zip(*post))
    scaling = []
    for sched in ("threads", "local"):
        sc = {c: [r for r in rows if r.get("part") == "scaling" and r["scheduler"] == sched and r["workers"] == c]
              for c in (1, cores)}
        if sc[1] and sc[cores]:
            best = {c: min(r["wall_s"] for r in sc[c]) for c in sc}  # the least disturbed of the repeats
            scaling.append({"scheduler": sched, "cores": [1, cores], "repeats": len(sc[1]),
                            "wall_s": [[r["wall_s"] for r in sc[c]] for c in (1, cores)],
                            "cpu_s": [[r["cpu_s"] for r in sc[c]] for c in (1, cores)],
                            "best_wall_s": [best[1], best[cores]],
                            "speedup_wall": best[1] / best[cores], "efficiency": best[1] / best[cores] / cores})
    ratios = []
    for p in peers:
        mine = [r for r in agg if r["epsilon"] == p["epsilon"] and r["d"] == p["d"]]
        if p.get("status") == "ok" and mine:
            ratios.append({"epsilon": p["epsilon"], "d": p["d"],
                           "ldpopt_aggregate_reports_per_cpu_s": mine[-1]["reports_per_cpu_s"],
                           "pure_ldp_reports_per_cpu_s": p["peer_reports_per_cpu_s"],
                           "ldpopt_cpu_s_per_report": mine[-1]["cpu_s_per_report"],
                           "pure_ldp_cpu_s_per_report": 1 / p["peer_reports_per_cpu_s"],
                           "ratio": mine[-1]["reports_per_cpu_s"] / p["peer_reports_per_cpu_s"],
                           "read_lh_ratio": p["read_lh_reports_per_cpu_s"] / p["peer_reports_per_cpu_s"]})
    projection = []
    for r in [r for r in rows if r["stage"] in ("perturb", "aggregate") and r.get("scheduler", "threads") == "threads"
              and r.get("part") in ("grid", "big")]:
        cpu = BILLION / r.get("reports_per_cpu_s_less_fixed", r["reports_per_cpu_s"])
        projection.append({"stage": r["stage"], "epsilon": r["epsilon"], "d": r["d"], "from_n": r["n"],
                           "from": r["part"], "less_fixed": "reports_per_cpu_s_less_fixed" in r,
                           "cpu_hours": cpu / 3600,
                           "wall_hours_2_cores": cpu / 2 / 3600, "wall_hours_16_cores": cpu / 16 / 3600,
                           "bytes_on_disk": r.get("bytes_per_report", 0) * BILLION or None})
    for p in peers:
        if p.get("status") == "ok":
            projection.append({"stage": "pure-ldp LHServer.aggregate loop", "epsilon": p["epsilon"], "d": p["d"],
                               "from_n": p["m"], "from": "peer",
                               "cpu_hours": BILLION / p["peer_reports_per_cpu_s"] / 3600})
    return {"exponents": exps, "scaling": scaling, "pure_ldp": ratios, "projection": projection,
            "projection_note": (f"PROJECTION, not a measurement: {BILLION:,} reports × the measured CPU-s per "
                                "report of each stage, less the command's fixed cost where measured (cost "
                                "assumed linear in reports), divided by the cores "
                                "(perfect scaling assumed; see 'scaling' for this machine's 1 -> 2 cores) at "
                                "this machine's per-core speed; post-processing does not grow with n (it is "
                                "O(d)) and is not projected")}


def run(quick: bool = False, **opts) -> dict:
    """``--quick``: ε = 1, d = 100, 20,000 reports, threads only, no largest run, no peer (seconds)."""
    args = H.options(parser(), "bench_billion.py", quick, opts)
    cores = os.cpu_count() or 1
    if args.quick:
        args.epsilons, args.ds, args.cells, args.big_n, args.peer_cells = [1.0], [100], 2e6, 0, 0
    rows: list[dict] = []
    peers: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="ldpopt-bench-billion-", dir=args.tmp) as tmp_name:
        tmp = Path(tmp_name)
        full_runs = [("threads", cores)] if args.quick else [("threads", cores), ("local", cores)]
        work = tmp / "fixed"  # each command on 2,000 reports: its fixed cost (start-up, imports, cluster)
        work.mkdir()
        got, _ = cell(work, args.epsilons[0], args.ds[0], 2000, 500, full_runs, args.timeout)
        rows += [{**r, "part": "fixed"} for r in got]
        shutil.rmtree(work)
        for i, (eps, d) in enumerate((e, d) for e in args.epsilons for d in args.ds):
            n = int(args.cells // d)
            shard_rows = min(args.shard_rows, max(1, n // 4))  # at least 4 map tasks for the cluster
            scaling = i == 0 and not args.quick
            # scaling: 1 core and all cores alternately, --scaling-repeats times (the machine is shared)
            runs = full_runs + ([("threads", 1), ("local", 1), *full_runs] * args.scaling_repeats if scaling else [])
            work = tmp / f"cell-{i}"
            work.mkdir()
            got, shards = cell(work, eps, d, n, shard_rows, runs, args.timeout)
            seen = set()
            for r in got:  # the first run on all cores of each kind is the grid's; the others, scaling
                key = (r["stage"], r.get("scheduler"), r.get("workers"), r.get("method"))
                grid = key not in seen and r.get("workers", cores) == cores
                seen.add(key)
                rows.append({**r, "part": "grid" if grid else "scaling"})
            if args.peer_cells:
                peers.append(peer(shards, eps, d, max(50, int(args.peer_cells // d)), work))
                print(f"pure-ldp ε={eps:g} d={d}: {json.dumps(peers[-1])}", flush=True)
            shutil.rmtree(work)  # the disk holds one cell at a time
        if args.big_n:
            n = int(args.big_n)
            work = tmp / "big"
            work.mkdir()
            got, _ = cell(work, args.big_epsilon, args.big_d, n, args.shard_rows, [("threads", cores)], args.timeout)
            rows += [{**r, "part": "big"} for r in got]
            shutil.rmtree(work)
    doc = {"rows": rows, "peers": peers, "cores": cores, "reports_target": BILLION, **summarise(rows, peers, cores)}
    return H.save("billion", args, doc)


if __name__ == "__main__":
    H.cli(parser(), run)
