"""Aggregation kernels: ns per report·value, the numpy aggregators against the fused CPU kernels
(ldpopt.kernels) on one thread and on every core, every oracle, side by side in one process; the
GPU rows are "not measured" unless a CUDA GPU is present (none was on the reference machine).

Each row aggregates the same reports (``oracle.perturb`` of Zipf-ish values) with
``oracle.aggregate(reports, device=...)`` end to end (validation included), after one warm-up call
(the kernels are compiled, or loaded from Numba's cache, outside the clock), and checks that every
device gives the numpy counts bit for bit. Times: CPU time of the whole process
(``time.process_time``, all threads: on a shared machine the fair measure of work; with 2 threads
it includes the OpenMP threads' brief spin at the end of each parallel region) and wall time
(``perf_counter``: what the threads buy, noisy when other work shares the cores). "ns per cell":
time / (reports × d) — per user·value, the unit of the O(n·d) hash oracles.

    PYTHONPATH=. python benchmarks/bench_kernels.py [--quick]

Results: benchmarks/results/kernels.json.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
OUT = REPO / "benchmarks" / "results" / "kernels.json"

# (oracle, ε, d, reports) full / quick
CASES = [("olh", 1.0, 42178, 20_000), ("olh", 4.0, 42178, 20_000), ("blh", 1.0, 42178, 10_000),
         ("grr", 1.0, 42178, 10_000_000), ("hr", 1.0, 42178, 10_000_000), ("ss", 1.0, 1024, 100_000),
         ("oue", 1.0, 1024, 1_000_000), ("sue", 1.0, 1024, 1_000_000)]
QUICK = [("olh", 1.0, 42178, 1_000), ("grr", 1.0, 1024, 200_000), ("oue", 1.0, 1024, 20_000),
         ("ss", 1.0, 256, 5_000), ("hr", 1.0, 1024, 200_000)]


def _reports(name, eps, d, n):
    from ldpopt import oracles

    orc = oracles.get(name, eps, d)
    gen = np.random.default_rng(1)
    values = np.minimum((gen.pareto(1.0, n) * 3).astype(np.int64), d - 1)
    step = orc.chunk_size()
    parts = [orc.perturb(values[i:i + step], gen) for i in range(0, n, step)]
    return orc, np.concatenate(parts)


def _time(fn, repeat):
    best_cpu, best_wall = float("inf"), float("inf")
    for _ in range(repeat):
        c0, t0 = time.process_time(), time.perf_counter()
        out = fn()
        best_cpu = min(best_cpu, time.process_time() - c0)
        best_wall = min(best_wall, time.perf_counter() - t0)
    return out, best_cpu, best_wall


def closed_forms(d: int) -> list[dict]:
    """ldpopt.kernels.xp (array-namespace code, here on numpy) against ldpopt.methods at dimension d:
    CPU time of each and the largest absolute difference. The CuPy rows are not measured (no GPU)."""
    from ldpopt import methods, oracles
    from ldpopt.kernels import xp

    orc = oracles.get("olh", 1.0, d)
    gen = np.random.default_rng(2)
    est = orc.simulate(gen.multinomial(10 * d, gen.dirichlet(np.full(d, 0.5))), gen)
    f = est.f_tilde
    t = xp.cut_threshold(est.d, est.n, est.p, est.q)
    out = []
    for name, ours, ref in [("norm", lambda: xp.norm(f), lambda: methods.get("norm").func(est)),
                            ("norm-mul", lambda: xp.norm_mul(f), lambda: methods.get("norm-mul").func(est)),
                            ("base-cut", lambda: xp.base_cut(f, t), lambda: methods.get("base-cut").func(est)),
                            ("norm-sub", lambda: xp.norm_sub(f), lambda: methods.get("norm-sub").func(est)),
                            ("mle-apx", lambda: xp.mle_apx(est.counts.astype(float), est.n, est.p, est.q),
                             lambda: methods.get("mle-apx").func(est))]:
        a, ca, _ = _time(ours, 1)
        b, cb, _ = _time(ref, 1)
        row = {"method": name, "d": d, "xp_numpy_cpu_s": ca, "methods_cpu_s": cb,
               "max_abs_diff": float(np.max(np.abs(a - b))), "cupy": "not measured (no CUDA GPU on this machine)"}
        out.append(row)
        print(json.dumps(row), flush=True)
    return out


def run(quick: bool = False) -> dict:
    import numba

    cores = numba.config.NUMBA_NUM_THREADS
    rows = []
    for name, eps, d, n in (QUICK if quick else CASES):
        orc, rep = _reports(name, eps, d, n)
        cells = n * d
        ref, cpu_np, wall_np = _time(lambda: orc.aggregate(rep, device="numpy"), 1 if quick else 2)
        row = {"oracle": name, "epsilon": eps, "d": d, "reports": n, "params": orc.params().get("g", None),
               "numpy": {"cpu_s": cpu_np, "wall_s": wall_np, "ns_per_cell_cpu": cpu_np / cells * 1e9,
                         "ns_per_report_cpu": cpu_np / n * 1e9}}
        for threads in sorted({1, cores}):
            numba.set_num_threads(threads)
            orc.aggregate(rep, device="cpu")  # compile / load from the cache outside the clock
            got, c, w = _time(lambda: orc.aggregate(rep, device="cpu"), 1 if quick else 3)
            assert np.array_equal(got, ref), (name, threads)
            row[f"kernel_{threads}_threads"] = {"cpu_s": c, "wall_s": w, "ns_per_cell_cpu": c / cells * 1e9,
                                                "ns_per_report_cpu": c / n * 1e9,
                                                "ns_per_cell_wall": w / cells * 1e9,
                                                "ratio_cpu_vs_numpy": cpu_np / c, "ratio_wall_vs_numpy": wall_np / w}
        numba.set_num_threads(cores)
        row["cuda"] = "not measured (no CUDA GPU on this machine)"
        rows.append(row)
        print(json.dumps(row), flush=True)
    closed = closed_forms(10**5 if quick else 10**7)
    result = {"machine": f"{platform.node()}: {platform.processor() or platform.machine()}, {os.cpu_count()} cores "
                         f"(shared with other work; CPU times are the fair measure), no GPU",
              "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
              "command": "PYTHONPATH=. python benchmarks/bench_kernels.py" + (" --quick" if quick else ""),
              "numba": numba.__version__, "threading_layer": numba.threading_layer(), "rows": rows,
              "closed_forms": closed}
    return write_result(result, OUT, quick)


def write_result(result: dict, out: Path, quick: bool) -> dict:
    """Write ``result`` as JSON to ``out`` (``--quick``: to results/quick/, not the published file)."""
    out = out if not quick else out.with_name("quick") / out.name
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1) + "\n")
    return result


def cli(run_fn, doc: str) -> None:
    """``python benchmarks/bench_X.py [--quick]``: the benchmark scripts' command line."""
    ap = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="small inputs (seconds)")
    args = ap.parse_args()
    sys.path.insert(0, str(REPO))
    run_fn(quick=args.quick)


if __name__ == "__main__":
    cli(run, __doc__)
