"""ldpopt's frequency oracles against the peer libraries.

Cases (ε = 1, Zipf(s = 1.5) data made by ``_harness.zipf_counts``):

1. real path (client perturbation + aggregation), n = 10⁶, d = 1024: every ldpopt oracle, and every
   peer class that implements the same oracle (``peers.SUPPORTED``). Peers' OLH and BLH evaluate d
   hashes per user in Python, so they are measured at n = 10⁵ and their time scaled ×10 (linear in n:
   their loops are per user). Peak RSS of each measurement is the ru_maxrss of a fresh process.
2. real path, d = 42,178, n = 10⁶: ldpopt OUE and OLH must complete. Peers: OLH at n = 10³ (basis
   for a linear extrapolation) and at n = 10⁵ under a timeout; OUE at n = 10⁴ (scaled ×100).
3. fast path (``simulate(exact=False)``: counts drawn from their exact distribution), d = 42,178,
   n = 10⁶ and 10⁹, every ldpopt oracle: time per estimate.
4. real path over more domain sizes, d ∈ {128, 8192} (with case 1's d = 1024 and case 2's 42,178: a
   grid), n = 10⁶ for ldpopt, OUE against both peers and HR against pure-ldp, the peers at n = 10⁵
   (d = 128; HR at both sizes) or 10⁴ (OUE at d = 8192), time scaled linearly.

``pairs`` puts ldpopt's and each peer's time of one (oracle, d) side by side (wall: ``seconds``
scaled to n = 10⁶; CPU where the peer's was recorded), the input both start from being the users'
values (each library's own client, then its aggregator): the rows ``BENCHMARKS.md`` spans.

ldpopt is timed as ``oracles.get(name, epsilon=1.0, d=d).simulate(true_counts, rng, exact=...)``,
construction included, median (and best) of up to k repeats in one fresh process; peers once.

``python benchmarks/bench_oracles.py [--quick] [--no-peers] [--resume]``; also a worker:
``--worker '<json>'`` (one ldpopt measurement; prints one JSON line).
"""

from __future__ import annotations

import json
import math
import os
import resource
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _harness as H  # noqa: E402
import peers  # noqa: E402  (only its tables: it imports no peer library at module level)

ORACLES = ("grr", "oue", "sue", "olh", "blh", "hr", "ss")   # every oracle ldpopt has
EPS = 1.0
D_SMALL, D_LARGE = 1024, 42_178
D_GRID = (128, 8192)
PEER_LIBS = tuple(peers.SUPPORTED)
#: peers whose per-user cost is Θ(d) Python-level hash calls are measured at 10⁵ and scaled
PEER_N_CASE1 = {"olh": 10**5, "blh": 10**5}


# -- measurement plan -------------------------------------------------------------------------

def plan(quick: bool, peer_timeout: float) -> list[dict]:
    """Every measurement, in the order they run (cheap first; one at a time)."""
    m: list[dict] = []

    def add(case, impl, oracle, path, d, n, n_target=None, timeout=1800.0, repeats=3, note=""):
        m.append(dict(case=case, impl=impl, oracle=oracle, path=path, d=d, n=int(n),
                      n_target=int(n_target or n), timeout=timeout, repeats=repeats, note=note))

    if quick:
        for o in ORACLES:
            add("1-real-d1024", "ldpopt", o, "real", 64, 10**4, timeout=60, repeats=1)
        for n in (10**4, 10**6):
            for o in ORACLES:
                add("3-fast-d42178", "ldpopt", o, "fast", 64, n, timeout=60, repeats=3)
        return m

    for o in ORACLES:
        add("1-real-d1024", "ldpopt", o, "real", D_SMALL, 10**6, repeats=3)
    for o in ("oue", "olh"):
        add("2-real-d42178", "ldpopt", o, "real", D_LARGE, 10**6, repeats=1)
    for n in (10**6, 10**9):
        for o in ORACLES:
            add("3-fast-d42178", "ldpopt", o, "fast", D_LARGE, n, repeats=7)
    for o in ORACLES:
        for lib in PEER_LIBS:
            if o in peers.SUPPORTED[lib]:
                n = PEER_N_CASE1.get(o, 10**6)
                add("1-real-d1024", lib, o, "real", D_SMALL, n, 10**6, timeout=peer_timeout, repeats=1,
                    note="" if n == 10**6 else f"measured at n={n:.0e}, time scaled x{10**6 // n}")
    for lib in PEER_LIBS:
        add("2-real-d42178", lib, "oue", "real", D_LARGE, 10**4, 10**6, timeout=peer_timeout, repeats=1,
            note="measured at n=1e4, time scaled x100")
        add("2-real-d42178", lib, "olh", "real", D_LARGE, 10**3, 10**6, timeout=peer_timeout, repeats=1,
            note="measured at n=1e3, time scaled x1000 (extrapolation basis)")
    for lib in PEER_LIBS:
        add("2-real-d42178", lib, "olh", "real", D_LARGE, 10**5, 10**6, timeout=peer_timeout, repeats=1,
            note="measured at n=1e5 under a timeout, time scaled x10")
    for d in D_GRID:
        for o in ("oue", "hr"):
            add(f"4-real-d{d}", "ldpopt", o, "real", d, 10**6, repeats=3)
            for lib in PEER_LIBS:
                if o in peers.SUPPORTED[lib]:
                    n = 10**4 if (o == "oue" and d > D_SMALL) else 10**5
                    add(f"4-real-d{d}", lib, o, "real", d, n, 10**6, timeout=peer_timeout, repeats=1,
                        note=f"measured at n={n:.0e}, time scaled x{10**6 // n}")
    return m


def pairs(rows: list[dict]) -> list[dict]:
    """ldpopt's real-path row and each peer's of the same (oracle, d), side by side: wall seconds
    scaled to n_target (and CPU where both have it), for every (oracle, d) measured on both sides."""
    mine = {(r["oracle"], r["d"]): r for r in rows
            if r["impl"] == "ldpopt" and r["path"] == "real" and r["status"] == "ok"}
    out = []
    for r in rows:
        m = mine.get((r["oracle"], r["d"]))
        if r["impl"] == "ldpopt" or m is None or r["status"] != "ok" or r["n_target"] != m["n"]:
            continue
        cpu = r.get("scaled_cpu_seconds")
        out.append({"oracle": r["oracle"], "d": r["d"], "lib": r["impl"], "n": m["n"], "peer_n": r["n"],
                    "peer_seconds": r["scaled_seconds"], "ldpopt_seconds": m["seconds"],
                    "peer_cpu_seconds": cpu if cpu and cpu > 0 else None, "ldpopt_cpu_seconds": m["cpu_seconds"],
                    "note": r["note"]})
    return out


def key(s: dict) -> tuple:
    return (s["case"], s["impl"], s["oracle"], s["path"], s["d"], s["n"])


def projected_peer_mb(s: dict) -> float:
    """multi-freq-ldpy keeps every report: a float64 vector of length d per user for UE."""
    if s["impl"] == "multi-freq-ldpy" and s["oracle"] in ("oue", "sue"):
        return s["n"] * (8 * s["d"] + 112) / 2**20 + 200
    return 0.0


# -- one measurement --------------------------------------------------------------------------

def measure(s: dict, tmp: Path, mem_limit_mb: float, inproc: bool = False) -> dict:
    row = {k: s[k] for k in ("case", "impl", "oracle", "path", "d", "n", "n_target", "note")}
    row.update(status="", seconds=math.nan, cpu_seconds=math.nan, scaled_cpu_seconds=math.nan, seconds_min=math.nan, seconds_all=[], maxrss_mb=math.nan,
               rss_before_mb=math.nan, linf_err=math.nan, scaled_seconds=math.nan, error="")
    # the box is shared: record how busy it was when the measurement started
    row["loadavg_1min"] = os.getloadavg()[0]
    cpath = H.counts_file(s["d"], s["n"], tmp)
    proj = 0.0
    if s["impl"] == "ldpopt":
        from ldpopt import oracles

        if s["oracle"] not in oracles.available():
            row["status"] = "missing"
            row["error"] = f"ldpopt.oracles has no {s['oracle']!r} yet (available: {oracles.available()})"
            return row
        cfg = dict(oracle=s["oracle"], d=s["d"], epsilon=EPS, seed=12345, counts=str(cpath),
                   exact=s["path"] == "real", repeats=s["repeats"], budget=20.0)
        cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", json.dumps(cfg)]
    else:
        proj = projected_peer_mb(s)
        if proj > mem_limit_mb:
            row["status"] = "skipped-memory"
            row["maxrss_mb"] = proj
            row["error"] = (f"projected peak {proj / 1024:.1f} GB > limit {mem_limit_mb / 1024:.0f} GB "
                            "(one float64 report vector of length d per user kept in a list)")
            return row
        if proj > 2048 and not H.wait_for_memory(proj + 2048, max_wait=120):
            # shared box without room for it now: measure at n/10 (time scales linearly: per-user
            # loop) and report the projected peak next to the measured one
            small = dict(s, n=s["n"] // 10, note=(
                f"box lacked {(proj + 2048) / 1024:.1f} GB free for n={s['n']:.0e}: measured at "
                f"n={s['n'] // 10:.0e}, time scaled x{s['n_target'] * 10 // s['n']}; peak at "
                f"n={s['n']:.0e} projected {proj / 1024:.1f} GB (one float64 vector of length d per report)"))
            row = measure(small, tmp, mem_limit_mb, inproc)
            row["projected_maxrss_mb"] = proj
            return row
        if not H.PEER_PYTHON.exists():
            row["status"] = "error"
            row["error"] = "no benchmarks/.peer-venv: run `bash benchmarks/setup_peers.sh`"
            return row
        cfg = dict(lib=s["impl"], oracle=s["oracle"], d=s["d"], epsilon=EPS, seed=12345, counts=str(cpath))
        cmd = [str(H.PEER_PYTHON), str(Path(__file__).resolve().parent / "peers.py"), json.dumps(cfg)]
    if inproc and s["impl"] == "ldpopt":
        # --quick: in this process (a fresh interpreter per row costs more than the row itself);
        # peak RSS is then this process's, so it is not reported
        t0 = time.perf_counter()
        payload = ldpopt_measure(cfg)
        r = H.ProcResult("ok", time.perf_counter() - t0, math.nan, payload)
    else:
        for _attempt in range(3):
            # shared box: start only with room for the child (+2 GB); retry a run stopped for pressure
            H.wait_for_memory(max(proj, 500) + 2048, max_wait=900)
            r = H.run_process(cmd, timeout=s["timeout"], mem_limit_mb=mem_limit_mb)
            if r.status != "mem-pressure":
                break
    row["status"] = r.status
    row["maxrss_mb"] = r.maxrss_mb
    row["process_wall"] = r.wall
    if r.status == "timeout":
        row["error"] = f"did not finish in {s['timeout']:.0f} s"
    elif r.status == "mem-limit":
        row["error"] = f"killed at RSS > {mem_limit_mb / 1024:.0f} GB"
    elif r.status == "mem-pressure":
        row["error"] = (f"stopped at RSS {r.maxrss_mb / 1024:.1f} GB: machine MemAvailable fell under "
                        f"{H.MIN_SYSTEM_AVAILABLE_MB / 1024:.1f} GB (shared box)")
    elif r.status == "error":
        row["error"] = r.error
    else:
        p = r.payload
        times = p.get("seconds_all", [p["seconds"]])
        row.update(seconds=float(np.median(times)), seconds_min=float(min(times)), seconds_all=times,
                   rss_before_mb=p["rss_before_mb"], linf_err=p["linf_err"])
        row["scaled_seconds"] = row["seconds"] * s["n_target"] / s["n"]
        # CPU time of the measured call: much less sensitive than wall time to a busy shared box
        row["cpu_seconds"] = p.get("cpu_seconds", math.nan)
        row["scaled_cpu_seconds"] = row["cpu_seconds"] * s["n_target"] / s["n"]
    return row


def worker(cfg: dict) -> None:
    """One ldpopt measurement in this (fresh) process; prints one JSON line."""
    print(json.dumps(ldpopt_measure(cfg)))


def ldpopt_measure(cfg: dict) -> dict:
    """Time ``oracles.get(...).simulate(...)`` up to ``repeats`` times (stop once ``budget`` s spent)."""
    from ldpopt import oracles

    counts = np.load(cfg["counts"])
    n = int(counts.sum())
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
    times, cpus, est = [], [], None
    for i in range(int(cfg["repeats"])):
        c0, t0 = H.cpu_clock(), time.perf_counter()
        est = oracles.get(cfg["oracle"], epsilon=cfg["epsilon"], d=cfg["d"]).simulate(
            counts, cfg["seed"] + i, exact=cfg["exact"])
        times.append(time.perf_counter() - t0)
        cpus.append(H.cpu_clock() - c0)
        if sum(times) > cfg["budget"]:
            break
    linf = float(np.max(np.abs(np.asarray(est.f_tilde) - counts / n)))
    return {"seconds": float(np.median(times)), "seconds_all": times,
            "cpu_seconds": float(np.median(cpus)), "rss_before_mb": rss0,
            "maxrss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0,
            "linf_err": linf, "n": n}


# -- the section ------------------------------------------------------------------------------

def parser():
    ap = H.parser(__doc__)
    ap.add_argument("--peer-timeout", type=float, default=900.0,
                    help="seconds before a peer measurement is stopped (default 900)")
    ap.add_argument("--mem-limit-gb", type=float, default=12.0,
                    help="kill/skip a measurement whose peak RSS would pass this (default 12)")
    ap.add_argument("--no-peers", action="store_true", help="measure ldpopt only")
    ap.add_argument("--resume", action="store_true",
                    help="keep the finished measurements in OUT/oracles.jsonl, measure only the rest")
    return ap


def run(quick: bool = False, **opts) -> dict:
    opts = H.options(parser(), "bench_oracles.py", quick, opts)
    journal = H.Journal(opts, "oracles", key, retry=("missing", "error", "mem-pressure"))
    specs = plan(opts.quick, opts.peer_timeout)
    if opts.quick or opts.no_peers:
        specs = [s for s in specs if s["impl"] == "ldpopt"]
    mem_limit = opts.mem_limit_gb * 1024
    rows = []
    with tempfile.TemporaryDirectory(prefix="ldpopt-bench-") as tmp:
        for s in specs:
            if (row := journal.get(s)) is not None:
                rows.append(row)
                continue
            row = measure(s, Path(tmp), mem_limit, inproc=opts.quick)
            rows.append(row)
            if row["status"] != "missing":
                journal.add(row)
            print(f"  [{row['case']}] {row['impl']:>15} {row['oracle']:>4} {row['path']} d={row['d']} "
                  f"n={row['n']:.0e}: {row['status']:>8} {H.fmt_seconds(row['seconds'])} "
                  f"(scaled to n={row['n_target']:.0e}: {H.fmt_seconds(row['scaled_seconds'])}), "
                  f"peak {H.fmt_mb(row['maxrss_mb'])} {row['error']}", flush=True)
    privacy = None
    if not (opts.quick or opts.no_peers) and H.PEER_PYTHON.exists():
        r = H.run_process([str(H.PEER_PYTHON), str(Path(__file__).resolve().parent / "peers.py"),
                           json.dumps({"task": "privacy", "epsilon": EPS, "d": D_SMALL})], timeout=300)
        privacy = r.payload if r.status == "ok" else {"error": r.error or r.status}
    return H.save("oracles", opts, {"epsilon": EPS, "zipf_s": 1.5, "rows": rows, "pairs": pairs(rows),
                                    "peer_oue_privacy": privacy})


if __name__ == "__main__":
    H.main(parser(), run, worker)
