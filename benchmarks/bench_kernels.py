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


#: channel oracles (ldpopt.oracles.channel: their aggregate is one histogram of component outputs,
#: counted by the histogram kernel): (label, constructor, d, reports) full / quick
CHANNELS = [("channel grr (J = 1, k = d)", "grr", 1024, 10_000_000),
            ("channel memoised sue (J = d, k = 2)", "memoised_sue", 128, 200_000)]
QUICK_CHANNELS = [("channel grr (J = 1, k = d)", "grr", 256, 100_000),
                  ("channel memoised sue (J = d, k = 2)", "memoised_sue", 32, 10_000)]


def _channel(kind: str, d: int):
    from ldpopt.oracles import channel

    return channel.Channel.grr(1.0, d) if kind == "grr" else channel.memoised_unary(2.0, 1.0, d, "sue")


def channel_rows(quick: bool = False) -> list[dict]:
    """The channel oracles' ``aggregate(reports, device=...)``: numpy against the histogram kernel on
    one thread and on every core, the same protocol as the oracle rows (warm-up call, CPU and wall
    time, counts bit-identical to numpy); "ns per cell": per report component (report × J)."""
    import numba

    cores = numba.config.NUMBA_NUM_THREADS
    rows = []
    for label, kind, d, n in (QUICK_CHANNELS if quick else CHANNELS):
        ch = _channel(kind, d)
        gen = np.random.default_rng(1)
        values = np.minimum((gen.pareto(1.0, n) * 3).astype(np.int64), d - 1)
        step = max(1, (1 << 22) // (ch.J * ch.k))  # perturb holds (m, J, k) floats: chunks of 4 M
        rep = np.concatenate([ch.perturb(values[i:i + step], gen) for i in range(0, n, step)])
        cells = n * ch.J
        ref, cpu_np, wall_np = _time(lambda: ch.aggregate(rep, device="numpy"), 1 if quick else 2)
        row = {"oracle": label, "J": ch.J, "k": ch.k, "d": d, "reports": n,
               "numpy": {"cpu_s": cpu_np, "wall_s": wall_np, "ns_per_cell_cpu": cpu_np / cells * 1e9,
                         "ns_per_report_cpu": cpu_np / n * 1e9}}
        for threads in sorted({1, cores}):
            numba.set_num_threads(threads)
            ch.aggregate(rep, device="cpu")  # compile / load from the cache outside the clock
            got, c, w = _time(lambda: ch.aggregate(rep, device="cpu"), 1 if quick else 3)
            assert np.array_equal(got, ref), (label, threads)
            row[f"kernel_{threads}_threads"] = {"cpu_s": c, "wall_s": w, "ns_per_cell_cpu": c / cells * 1e9,
                                                "ns_per_report_cpu": c / n * 1e9, "ns_per_cell_wall": w / cells * 1e9,
                                                "ratio_cpu_vs_numpy": cpu_np / c, "ratio_wall_vs_numpy": wall_np / w}
        numba.set_num_threads(cores)
        row["cuda"] = "not measured (no CUDA GPU on this machine)"
        rows.append(row)
        print(json.dumps(row), flush=True)
    return rows


def _time(fn, repeat):
    best_cpu, best_wall = float("inf"), float("inf")
    for _ in range(repeat):
        c0, t0 = time.process_time(), time.perf_counter()
        out = fn()
        best_cpu = min(best_cpu, time.process_time() - c0)
        best_wall = min(best_wall, time.perf_counter() - t0)
    return out, best_cpu, best_wall


def _estimate(name: str, d: int, seed: int):
    from ldpopt import oracles

    orc = oracles.get(name, 1.0, d)
    gen = np.random.default_rng(seed)
    return orc.simulate(gen.multinomial(10 * d, gen.dirichlet(np.full(d, 0.5))), gen)


def _cpu_check(est, objective, f, duals):
    from ldpopt.problems import Problem
    from ldpopt.problems.check.verdict import check_solution

    return check_solution(Problem(est, objective), f, {k: np.asarray(v) if np.ndim(v) else float(v)
                                                      for k, v in duals.items()})


def closed_forms(d: int) -> list[dict]:
    """ldpopt.xp.forms / xp_cut / xp_mle / xp_check (array-namespace code, here on numpy) against
    ldpopt.methods (and ldpopt.problems.check.verdict.check_solution) at dimension d: CPU time of each and
    the largest absolute difference (for the checks: of the error bound, and whether the verdicts
    agree). Estimates: OLH (ε = 1; the binomial EM) and GRR (ε = 1; the multinomial MLE), n = 10·d
    from a Dirichlet(0.5) distribution. The CuPy rows are not measured (no GPU)."""
    import scipy.optimize  # noqa: F401  (imported outside the clock: both sides use brentq)
    import scipy.special  # noqa: F401

    from ldpopt import methods
    from ldpopt.xp import check as xp_check
    from ldpopt.xp import cut as xp_cut
    from ldpopt.xp import forms as xp
    from ldpopt.xp import mle as xp_mle

    est, grr = _estimate("olh", d, 2), _estimate("grr", d, 3)
    f = est.f_tilde
    t = xp.cut_threshold(est.d, est.n, est.p, est.q)
    m = methods.get
    cases = [("norm", lambda: xp.norm(f), lambda: m("norm").func(est)),
             ("norm-mul", lambda: xp.norm_mul(f), lambda: m("norm-mul").func(est)),
             ("base-cut", lambda: xp.base_cut(f, t), lambda: m("base-cut").func(est)),
             ("norm-sub", lambda: xp.norm_sub(f), lambda: m("norm-sub").func(est)),
             ("mle-apx", lambda: xp.mle_apx(est.counts.astype(float), est.n, est.p, est.q), lambda: m("mle-apx").func(est)),
             ("norm-cut", lambda: xp_cut.norm_cut(f, est.p, est.q), lambda: m("norm-cut").func(est)),
             ("norm-hyb", lambda: xp_cut.norm_hyb(f, est.p, est.q, threshold=t), lambda: m("norm-hyb").func(est)),
             ("em (GRR, multinomial)", lambda: xp_mle.grr_mle(grr.counts, grr.p, grr.q), lambda: m("em").func(grr)),
             ("em (OLH, binomial)", lambda: xp_mle.binomial_mle(est.counts, est.n, est.p, est.q), lambda: m("em").func(est))]
    out = []
    for name, ours, ref in cases:
        a, ca, _ = _time(ours, 1)
        b, cb, _ = _time(ref, 1)
        out.append({"method": name, "d": d, "xp_numpy_cpu_s": ca, "methods_cpu_s": cb,
                    "max_abs_diff": float(np.max(np.abs(a - b))), "cupy": "not measured (no CUDA GPU on this machine)"})
        print(json.dumps(out[-1]), flush=True)
    for name, objective, point, terms in [
            ("check of Norm-Sub (cls)", "cls", xp.norm_sub(f), xp_check.Cls(f)),
            ("check of MLE-Apx (weighted-mle)", "weighted-mle", xp.mle_apx(est.counts.astype(float), est.n, est.p, est.q),
             xp_check.WeightedMLE(est.counts, est.n, est.p, est.q))]:
        a, ca, _ = _time(lambda: xp_check.check_simplex(point, terms), 1)
        b, cb, _ = _time(lambda: _cpu_check(est, objective, point, a.duals), 1)
        out.append({"method": name, "d": d, "xp_numpy_cpu_s": ca, "methods_cpu_s": cb,
                    "max_abs_diff": abs(a.error_bound - b.error_bound), "same_verdict": a.passed == b.passed,
                    "passed": a.passed, "cupy": "not measured (no CUDA GPU on this machine)"})
        print(json.dumps(out[-1]), flush=True)
    return out


def olh_congruence_rows(d: int, n: int) -> list[dict]:
    """OLH at ε = 4 (g = 56, not a power of two) on one thread, side by side in one process: the
    numpy aggregator, the current kernel (``ldpopt.kernels.cpu.hash_counts``: for wide outputs one
    task per value block, tiles from 0) and the previous kernel's loop nest (tasks = user chunks ×
    value blocks, the chunk's bounds computed per task, here with one chunk as it ran at this d; the
    same arithmetic), each checked bit-identical to numpy."""
    import numba

    from ldpopt.kernels import cpu
    from ldpopt.kernels.scalar import GAMMA, divisibility_constants

    orc, rep = _reports("olh", 4.0, d, n)
    g = orc.params()["g"]
    numba.set_num_threads(1)
    ref, c_np, _ = _time(lambda: orc.aggregate(rep, device="numpy"), 2)
    keys, r = np.ascontiguousarray(rep[:, 0]).view(np.uint64), rep[:, 1].astype(np.uint64)
    vg = np.arange(1, d + 1, dtype=np.uint64) * GAMMA
    inv, rot, lim = divisibility_constants(g)
    nblk = -(-d // 64)
    previous = lambda: _previous_test(keys, r, vg, inv, rot, lim, nblk)  # noqa: E731
    current = lambda: cpu.hash_counts(keys, r, d, g)  # noqa: E731
    rows = []
    for label, fn in (("numpy aggregator", None), ("previous kernel (chunk bounds per task)", previous),
                      ("current kernel (value blocks only)", current)):
        if fn is None:
            c = c_np
        else:
            fn()  # compile outside the clock
            got, c, _ = _time(fn, 3)
            assert np.array_equal(got, ref), label
        rows.append({"case": label, "epsilon": 4.0, "g": g, "d": d, "reports": n, "threads": 1, "cpu_s": c,
                     "ns_per_cell_cpu": c / (n * d) * 1e9})
        print(json.dumps(rows[-1]), flush=True)
    numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
    return rows


def _previous_test(keys, r, vg, inv, rot, lim, nblk):
    """The previous kernel's loop nest (``ldpopt.kernels.scalar.congruent`` written out), compiled on
    first call."""
    global _PREVIOUS
    if "_PREVIOUS" not in globals():
        import numba

        from ldpopt.kernels.scalar import mix64

        mix = numba.njit(inline="always")(mix64)
        s63, s64 = np.uint64(63), np.uint64(64)

        @numba.njit(parallel=True)
        def kernel(keys, r, vg, inv, rot, lim, nblk):
            n, d, U = keys.shape[0], vg.shape[0], 1
            part = np.zeros((U, d), np.int64)
            for task in numba.prange(U * nblk):
                u, b = task // nblk, task % nblk
                lo, hi = n * u // U, n * (u + 1) // U
                row = part[u]
                for t0 in range(lo, hi, 1024):
                    t1 = min(hi, t0 + 1024)
                    for v in range(b * 64, min(d, b * 64 + 64)):
                        h, c = vg[v], 0
                        for i in range(t0, t1):
                            z = mix(keys[i] + h)
                            x = (z - r[i]) * inv
                            x = (x >> rot) | (x << ((s64 - rot) & s63))
                            c += np.int64((z >= r[i]) & (x <= lim))
                        row[v] += c
            return part[0]

        _PREVIOUS = kernel
    return _PREVIOUS(keys, r, vg, inv, rot, lim, nblk)


def run(quick: bool = False, **opts) -> dict:
    """The kernel rows, the channel oracles' rows, the OLH congruence rows and the closed forms at
    d = 10⁷ (10⁵ with ``quick``) into results/kernels.json; with the option ``channels_only`` only the
    channel rows, into results/kernels_channels.json; with the option ``closed_d`` only the closed-form rows at that d, into
    results/kernels_closed_forms_<d>.json (d = 10⁸ needs about 22 GB of memory on numpy, the checks'
    temporaries included)."""
    closed_d = opts.get("closed_d")
    if opts.get("channels_only"):
        import numba

        result = {"machine": _machine(), "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                  "command": "PYTHONPATH=. python benchmarks/bench_kernels.py --channels-only" + (" --quick" if quick else ""),
                  "numba": numba.__version__, "load_avg_at_start": list(os.getloadavg()),
                  "channels": channel_rows(quick)}
        result["threading_layer"], result["load_avg_at_end"] = numba.threading_layer(), list(os.getloadavg())
        return write_result(result, OUT.with_name("kernels_channels.json"), quick)
    if closed_d:
        import resource

        rows = closed_forms(closed_d)
        result = {"machine": _machine(), "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
                  "command": f"PYTHONPATH=. python benchmarks/bench_kernels.py --closed-d {closed_d}",
                  "peak_rss_gb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6, "closed_forms": rows}
        return write_result(result, OUT.with_name(f"kernels_closed_forms_{closed_d}.json"), quick)
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
    channels = channel_rows(quick)
    congruence = olh_congruence_rows(1024 if quick else 42178, 1000 if quick else 20_000)
    closed = closed_forms(10**5 if quick else 10**7)
    result = {"machine": _machine(),
              "date": datetime.now(timezone.utc).isoformat(timespec="seconds"),
              "command": "PYTHONPATH=. python benchmarks/bench_kernels.py" + (" --quick" if quick else ""),
              "numba": numba.__version__, "threading_layer": numba.threading_layer(), "rows": rows, "channels": channels,
              "olh_congruence_test": congruence, "closed_forms": closed}
    return write_result(result, OUT, quick)


def _machine() -> str:
    """The host as a reader needs it to compare numbers: node, CPU model and LLVM's name for it (the
    kernels' code generation target: it says whether AVX-512 was used), cores; no GPU."""
    model = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")),
                 platform.processor() or platform.machine()) if os.path.exists("/proc/cpuinfo") else platform.machine()
    try:
        import llvmlite.binding as llvm

        target = llvm.get_host_cpu_name()
        avx512 = bool(llvm.get_host_cpu_features().get("avx512f"))
        model += f" (LLVM target {target}, {'with' if avx512 else 'no'} AVX-512)"
    except Exception:  # noqa: BLE001  (llvmlite absent or too old: the model name alone)
        pass
    return (f"{platform.node()}: {model}, {os.cpu_count()} cores "
            "(shared with other work; CPU times are the fair measure), no GPU")


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
    if run_fn is run:
        ap.add_argument("--closed-d", type=int, default=None, help="only the closed-form rows, at this d (e.g. 100000000)")
        ap.add_argument("--channels-only", action="store_true",
                        help="only the channel oracles' rows, into results/kernels_channels.json")
    args = ap.parse_args()
    sys.path.insert(0, str(REPO))
    run_fn(quick=args.quick, **({"closed_d": args.closed_d, "channels_only": args.channels_only} if run_fn is run else {}))


if __name__ == "__main__":
    cli(run, __doc__)
