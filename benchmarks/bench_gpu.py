"""The CUDA aggregation kernels and the CuPy closed forms on a real GPU: bit-identity with numpy
first, then timings beside numpy and the fused CPU kernels on the same machine, then the
billion-report case with the counting on the GPU. On a machine without a CUDA GPU every section
says "not run" and nothing is measured.

Sections (``--only`` picks some):

* ``identity``: ``oracle.aggregate(reports, device="cuda")`` against ``device="numpy"`` (the
  reference) and ``device="cpu"`` for every oracle with a CUDA kernel, on fresh random reports
  (several seeds, sizes from one report to millions, g a power of two and not); any difference fails
  the run (``max_abs_diff`` must be 0).
* ``kernels``: the bench_kernels cases (same oracles, ε, d, reports) timed on each device, end to
  end (the host → device copy of the reports and the copy of the counts back included: what a user
  of ``aggregate`` gets), after one warm-up call (compilation outside the clock); wall time, the
  median of ``--repeats`` runs; numpy and the CPU kernel on one thread and on every core of the
  machine. Then larger inputs for the GPU, checked against the CPU kernel (itself checked against
  numpy in the first rows).
* ``closed``: ``ldpopt.xp.forms`` / ``xp_cut`` / ``xp_mle`` / ``xp_check`` on CuPy arrays against
  the same code on numpy at d = ``--closed-d``: the largest absolute difference, and the times
  (data already on the device; the device synchronised before the clock stops).
* ``billion``: OLH reports written as Parquet shards (``write_shard_batches``), then counted by
  ``aggregate_shards(scheduler="threads", device=...)`` with ``cuda`` and ``cpu`` (every core), the
  counts checked equal, then estimated and post-processed (Norm-Sub on the GPU through
  ``xp.forms``); reports per wall-second per stage, and the projection to 1,139,469,767 reports
  (stated as a projection: linear in n, measured at n = ``--billion-cells`` / d).

    PYTHONPATH=. python benchmarks/bench_gpu.py [--quick] [--only identity,kernels,closed,billion]

Results: benchmarks/results/gpu.json.
"""

from __future__ import annotations

import json
import os
import platform
import statistics
import subprocess
import tempfile
import time
import zlib
from functools import partial
from pathlib import Path

import _harness as H  # benchmarks/ is the script's folder
import numpy as np

BILLION = 1_139_469_767
SECTIONS = ("identity", "kernels", "closed", "billion")
CUDA_ORACLES = ("grr", "oue", "sue", "olh", "blh", "hr", "ss")
#: bench_kernels' cases (oracle, ε, d, reports), timed on every device
KERNEL_CASES = [("olh", 1.0, 42178, 20_000), ("olh", 4.0, 42178, 20_000), ("blh", 1.0, 42178, 10_000),
                ("grr", 1.0, 42178, 10_000_000), ("hr", 1.0, 42178, 10_000_000), ("ss", 1.0, 1024, 100_000),
                ("oue", 1.0, 1024, 1_000_000), ("sue", 1.0, 1024, 1_000_000)]
#: larger inputs for the GPU, checked against the CPU kernel on every core
LARGE_CASES = [("olh", 1.0, 42178, 1_000_000), ("olh", 4.0, 42178, 1_000_000), ("olh", 1.0, 1000, 20_000_000),
               ("grr", 1.0, 42178, 100_000_000), ("oue", 1.0, 1024, 10_000_000)]
QUICK_KERNEL = [("olh", 1.0, 4217, 2_000), ("grr", 1.0, 1024, 200_000), ("oue", 1.0, 1024, 20_000)]


def parser():
    ap = H.parser(__doc__)
    ap.add_argument("--only", default=",".join(SECTIONS), help=f"comma-separated sections of {SECTIONS}")
    ap.add_argument("--repeats", type=int, default=5, help="timed runs per device (the median is kept)")
    ap.add_argument("--closed-d", type=int, default=10**7)
    ap.add_argument("--billion-cells", type=float, default=2e10,
                    help="n·d of a billion-section setting (n = cells / d reports: the same hashing work per setting)")
    ap.add_argument("--billion-ds", default="1000,10000,40000")
    ap.add_argument("--billion-big-n", type=float, default=1e8,
                    help="reports of one larger billion-section run at d = 1,000, ε = 1 (0: none)")
    ap.add_argument("--billion-epsilons", default="1,4")
    ap.add_argument("--tmp", default=None, help="folder for the shards (default: the system's temporary folder)")
    return ap


def gpu_info() -> dict:
    """The GPU as numba and nvidia-smi see it, or why there is none."""
    try:
        from numba import cuda

        if not cuda.is_available():
            return {"present": False, "why": "numba.cuda.is_available() is False"}
        dev = cuda.get_current_device()
        name = dev.name.decode() if isinstance(dev.name, bytes) else str(dev.name)
        info = {"present": True, "name": name, "compute_capability": list(dev.compute_capability)}
    except Exception as e:  # noqa: BLE001  (no numba, no driver: the reason is the result)
        return {"present": False, "why": f"{type(e).__name__}: {e}"}
    try:
        info["nvidia_smi"] = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,memory.total,clocks.max.sm",
                                             "--format=csv,noheader"], capture_output=True, text=True, check=False,
                                            timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        pass
    for mod in ("numba", "numba_cuda", "cupy", "numpy"):
        try:
            info[mod] = __import__(mod).__version__
        except Exception:  # noqa: BLE001
            info[mod] = "absent"
    info["cpu_cores"] = os.cpu_count()
    info["host"] = platform.node()
    return info


def _reports(name: str, eps: float, d: int, n: int, seed: int):
    from ldpopt import oracles

    orc = oracles.get(name, eps, d)
    gen = np.random.default_rng(seed)
    values = np.minimum((gen.pareto(1.0, n) * 3).astype(np.int64), d - 1)
    step = orc.chunk_size()
    return orc, np.concatenate([orc.perturb(values[i:i + step], gen) for i in range(0, n, step)])


def _wall(fn, repeats: int):
    """fn() once to warm up, then ``repeats`` timed calls: (last result, median wall seconds, all)."""
    out = fn()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return out, statistics.median(times), times


def identity(quick: bool) -> list[dict]:
    """Every CUDA oracle on fresh reports: cuda == numpy == cpu, bit for bit."""
    sizes = [(2, 1), (9, 300), (37, 5_000), (1000, 100_000)] + ([] if quick else [(4100, 400_000), (42178, 20_000)])
    rows = []
    for name in CUDA_ORACLES:
        for eps in (0.5, 1.0, 4.0):
            for d, n in sizes:
                if name in ("olh", "blh", "ss") and d * n > 1e9:
                    continue
                seed = zlib.crc32(repr((name, eps, d, n)).encode())  # the same in every process
                orc, rep = _reports(name, eps, max(d, 2), n, seed)
                ref = orc.aggregate(rep, device="numpy")
                got = orc.aggregate(rep, device="cuda")
                cpu = orc.aggregate(rep, device="cpu")
                row = {"oracle": name, "epsilon": eps, "d": max(d, 2), "reports": n, "params": orc.params(),
                       "cuda_max_abs_diff": int(np.max(np.abs(got - ref))), "cpu_max_abs_diff": int(np.max(np.abs(cpu - ref))),
                       "equal": bool(np.array_equal(got, ref) and np.array_equal(cpu, ref))}
                rows.append(row)
                print(json.dumps(row, default=str), flush=True)
    return rows


def kernels(quick: bool, repeats: int) -> list[dict]:
    """bench_kernels' cases on numpy, the CPU kernel (1 thread, every core) and the GPU; then the
    large GPU cases against the CPU kernel."""
    import numba

    cores = numba.config.NUMBA_NUM_THREADS
    rows = []
    for name, eps, d, n in (QUICK_KERNEL if quick else KERNEL_CASES):
        orc, rep = _reports(name, eps, d, n, 1)
        cells = n * d
        ref, t_np, _ = _wall(partial(orc.aggregate, rep, device="numpy"), 1 if quick else 2)
        row = {"oracle": name, "epsilon": eps, "d": d, "reports": n, "numpy_s": t_np}
        for threads in sorted({1, cores}):
            numba.set_num_threads(threads)
            got, t, _ = _wall(partial(orc.aggregate, rep, device="cpu"), repeats)
            assert np.array_equal(got, ref), (name, "cpu", threads)
            row[f"cpu_{threads}_threads_s"] = t
        numba.set_num_threads(cores)
        got, t, times = _wall(partial(orc.aggregate, rep, device="cuda"), repeats)
        assert np.array_equal(got, ref), (name, "cuda")
        row.update(cuda_s=t, cuda_runs_s=times, cuda_equal_numpy=True,
                   ns_per_cell={"numpy": t_np / cells * 1e9, "cpu_all": row[f"cpu_{cores}_threads_s"] / cells * 1e9,
                                "cuda": t / cells * 1e9},
                   cuda_vs_numpy=t_np / t, cuda_vs_cpu_all=row[f"cpu_{cores}_threads_s"] / t,
                   cuda_vs_cpu_1=row["cpu_1_threads_s"] / t)
        rows.append(row)
        print(json.dumps({k: v for k, v in row.items() if k != "cuda_runs_s"}), flush=True)
    for name, eps, d, n in ([] if quick else LARGE_CASES):
        orc, rep = _reports(name, eps, d, n, 2)
        cells = n * d
        ref, t_cpu, _ = _wall(partial(orc.aggregate, rep, device="cpu"), 1)
        got, t, times = _wall(partial(orc.aggregate, rep, device="cuda"), repeats)
        assert np.array_equal(got, ref), (name, "cuda large")
        row = {"oracle": name, "epsilon": eps, "d": d, "reports": n, "large": True, f"cpu_{cores}_threads_s": t_cpu,
               "cuda_s": t, "cuda_runs_s": times, "cuda_equal_cpu": True, "cuda_vs_cpu_all": t_cpu / t,
               "ns_per_cell": {"cpu_all": t_cpu / cells * 1e9, "cuda": t / cells * 1e9},
               "reports_per_s_cuda": n / t}
        rows.append(row)
        print(json.dumps({k: v for k, v in row.items() if k != "cuda_runs_s"}), flush=True)
    return rows


def closed(d: int, repeats: int) -> list[dict]:
    """The array-namespace closed forms on CuPy against numpy at dimension d."""
    import cupy as cp

    from ldpopt import oracles
    from ldpopt.xp import check as xp_check
    from ldpopt.xp import cut as xp_cut
    from ldpopt.xp import forms as xp
    from ldpopt.xp import mle as xp_mle

    gen = np.random.default_rng(2)
    olh = oracles.get("olh", 1.0, d).simulate(gen.multinomial(10 * d, gen.dirichlet(np.full(d, 0.5))), gen)
    grr = oracles.get("grr", 1.0, d).simulate(gen.multinomial(10 * d, gen.dirichlet(np.full(d, 0.5))), gen)
    t = xp.cut_threshold(olh.d, olh.n, olh.p, olh.q)
    host = {"f": olh.f_tilde, "c": olh.counts.astype(float), "gc": grr.counts}
    dev = {k: cp.asarray(v) for k, v in host.items()}

    def cases(a):
        return [("norm", lambda: xp.norm(a["f"])), ("norm-mul", lambda: xp.norm_mul(a["f"])),
                ("base-cut", lambda: xp.base_cut(a["f"], t)), ("norm-sub", lambda: xp.norm_sub(a["f"])),
                ("mle-apx", lambda: xp.mle_apx(a["c"], olh.n, olh.p, olh.q)),
                ("norm-cut", lambda: xp_cut.norm_cut(a["f"], olh.p, olh.q)),
                ("norm-hyb", lambda: xp_cut.norm_hyb(a["f"], olh.p, olh.q, threshold=t)),
                ("em (GRR, multinomial)", lambda: xp_mle.grr_mle(a["gc"], grr.p, grr.q)),
                ("em (OLH, binomial)", lambda: xp_mle.binomial_mle(a["c"], olh.n, olh.p, olh.q))]

    def synced(fn):
        def run():
            out = fn()
            cp.cuda.Stream.null.synchronize()
            return out
        return run

    rows = []
    for (name, on_host), (_, on_dev) in zip(cases(host), cases(dev)):
        a, t_np, _ = _wall(on_host, 1)
        b, t_cp, _ = _wall(synced(on_dev), repeats)
        b = cp.asnumpy(b)
        rows.append({"method": name, "d": d, "numpy_s": t_np, "cupy_s": t_cp, "speedup": t_np / t_cp,
                     "max_abs_diff": float(np.max(np.abs(a - b))), "finite": bool(np.all(np.isfinite(b)))})
        print(json.dumps(rows[-1]), flush=True)

    def check(a):
        return xp_check.check_simplex(xp.norm_sub(a["f"]), xp_check.Cls(a["f"]))

    a, t_np, _ = _wall(partial(check, host), 1)
    b, t_cp, _ = _wall(synced(partial(check, dev)), repeats)
    rows.append({"method": "check of Norm-Sub (cls)", "d": d, "numpy_s": t_np, "cupy_s": t_cp, "speedup": t_np / t_cp,
                 "max_abs_diff": abs(float(a.error_bound) - float(b.error_bound)),
                 "same_verdict": bool(a.passed) == bool(b.passed), "passed": bool(b.passed)})
    print(json.dumps(rows[-1]), flush=True)
    return rows


def _write_shards(folder: Path, eps: float, d: int, n: int, shard_rows: int) -> tuple[list[Path], np.ndarray]:
    """n OLH reports of Zipf(1.5) values (H.zipf_counts), shuffled, as Parquet shards of shard_rows."""
    from ldpopt import oracles
    from ldpopt.aggregate.shards import write_shard_batches

    orc = oracles.get("olh", eps, d)
    truth = H.zipf_counts(d, n)
    gen = np.random.default_rng(7)
    values = gen.permutation(np.repeat(np.arange(d), truth))
    folder.mkdir(parents=True, exist_ok=True)
    files = []
    batch = 1 << 20
    for part, start in enumerate(range(0, n, shard_rows)):
        chunk = values[start:start + shard_rows]
        batches = (orc.perturb(chunk[i:i + batch], gen) for i in range(0, len(chunk), batch))
        files.append(write_shard_batches(folder / f"part-{part:05d}.parquet", orc, batches, run="bench-gpu", part=part))
    return files, truth


def billion(cells: float, ds: list[int], epsilons: list[float], tmp: str | None, big_n: float = 0) -> list[dict]:
    """Per (ε, d): write n = cells / d reports, count them on the GPU and on every CPU core (threads scheduler),
    estimate and post-process on the GPU; rates per stage and the projection to BILLION reports."""
    import cupy as cp
    import numba

    from ldpopt import oracles
    from ldpopt.aggregate.dask import aggregate_shards
    from ldpopt.xp import forms as xp

    cores = numba.config.NUMBA_NUM_THREADS
    with tempfile.TemporaryDirectory(dir=tmp) as folder:  # warm-up: kernels compiled, CuPy's kernels built
        files, _ = _write_shards(Path(folder) / "warm", 1.0, 50, 10_000, 10_000)
        for device in ("cuda", "cpu"):
            aggregate_shards(files, scheduler="threads", device=device)
        xp.norm_sub(cp.asarray(np.linspace(-1.0, 1.0, 50)))
        cp.cuda.Stream.null.synchronize()
    settings = [(eps, d, int(cells // d)) for eps in epsilons for d in ds] + ([(1.0, 1000, int(big_n))] if big_n else [])
    rows = []
    for eps, d, n in settings:
        with tempfile.TemporaryDirectory(dir=tmp) as folder:
            t0 = time.perf_counter()
            files, truth = _write_shards(Path(folder) / "shards", eps, d, n, 10_000_000)
            t_write = time.perf_counter() - t0
            disk = sum(f.stat().st_size for f in files)
            runs = {}
            for device, workers in (("cuda", None), ("cpu", cores)):
                c0, t0 = H.cpu_clock(), time.perf_counter()
                part = aggregate_shards(files, scheduler="threads", workers=workers, device=device)
                runs[device] = {"wall_s": time.perf_counter() - t0, "process_cpu_s": H.cpu_clock() - c0,
                                "counts": part.counts}
            equal = bool(np.array_equal(runs["cuda"]["counts"], runs["cpu"]["counts"]))
            assert equal, ("billion", eps, d)
            orc = oracles.get("olh", eps, d)
            t0 = time.perf_counter()
            est = orc.estimate(runs["cuda"]["counts"], n)
            f = xp.norm_sub(cp.asarray(est.f_tilde))
            cp.cuda.Stream.null.synchronize()
            f = cp.asnumpy(f)
            t_post = time.perf_counter() - t0
            row = {"epsilon": eps, "d": d, "reports": n, "shards": len(files), "bytes_per_report": disk / n,
                   "write_s": t_write, "counts_equal_cuda_cpu": equal,
                   "aggregate": {dev: {k: v for k, v in r.items() if k != "counts"} | {"reports_per_wall_s": n / r["wall_s"]}
                                 for dev, r in runs.items()},
                   "estimate_and_norm_sub_s": t_post, "l1_error_norm_sub": float(np.abs(f - truth / n).sum()),
                   "projection_1139469767": {dev: {"wall_s": BILLION / n * r["wall_s"]} for dev, r in runs.items()},
                   "projection_note": "a projection: the measured wall time at n reports times 1,139,469,767 / n "
                                      "(linear in n), on this one machine; not a measurement"}
            rows.append(row)
            print(json.dumps(row), flush=True)
    return rows


def run(quick: bool = False, **opts) -> dict:
    a = H.options(parser(), "bench_gpu.py", quick, opts)
    only = [s for s in a.only.split(",") if s]
    for s in only:
        if s not in SECTIONS:
            raise SystemExit(f"--only: unknown section {s!r}; sections {SECTIONS}")
    info = gpu_info()
    doc: dict = {"gpu": info}
    if not info.get("present"):
        for s in only:
            doc[s] = f"not run: no CUDA GPU here ({info.get('why')})"
        return H.save("gpu", a, doc)
    if "identity" in only:
        doc["identity"] = identity(a.quick)
        assert all(r["equal"] for r in doc["identity"]), "a CUDA count differs from numpy"
    if "kernels" in only:
        doc["kernels"] = kernels(a.quick, 2 if a.quick else a.repeats)
    if "closed" in only:
        doc["closed"] = closed(10**5 if a.quick else a.closed_d, 2 if a.quick else a.repeats)
    if "billion" in only:
        doc["billion"] = billion(1e8 if a.quick else a.billion_cells,
                                 [int(x) for x in a.billion_ds.split(",")] if not a.quick else [1000],
                                 [float(x) for x in a.billion_epsilons.split(",")] if not a.quick else [1.0], a.tmp,
                                 0 if a.quick else a.billion_big_n)
    return H.save("gpu", a, doc)


if __name__ == "__main__":
    H.cli(parser(), run)
