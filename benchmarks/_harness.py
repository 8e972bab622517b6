"""Shared machinery of the benchmark sections: data, fresh-process measurement, result files.

Runs in ldpopt's venv (the parent process). Every measurement is a fresh child process (ldpopt's
venv or the peers' venv), so the peak RSS that ``os.wait4`` reports (ru_maxrss) belongs to that one
measurement and nothing else. The parent also polls the child's RSS from /proc and kills it past
``mem_limit_mb`` (so a peer that would eat the machine is stopped, reported as such), or past
``timeout`` seconds (reported as "did not finish in X").
"""

from __future__ import annotations

import json
import os
import platform
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent
PEER_PYTHON = BENCH_DIR / ".peer-venv" / "bin" / "python"
#: the box has 24 GiB and other work runs on it: never let one measurement go past this
DEFAULT_MEM_LIMIT_MB = 12 * 1024


def zipf_counts(d: int, n: int, s: float = 1.5, seed: int = 20240601) -> np.ndarray:
    """True histogram of n users over {0, …, d−1}: Pr[v] ∝ (v + 1)^−s (rank = value + 1), counts by
    one multinomial draw with a fixed seed. Made here on purpose (no dependency on ldpopt.datasets)."""
    ranks = np.arange(1, d + 1, dtype=np.float64)
    p = ranks ** (-s)
    p /= p.sum()
    return np.random.default_rng(seed).multinomial(n, p).astype(np.int64)


def counts_file(d: int, n: int, tmpdir: Path, s: float = 1.5) -> Path:
    """Write zipf_counts(d, n) once to ``tmpdir`` and return its path (children load it)."""
    path = Path(tmpdir) / f"zipf_s{s}_d{d}_n{n}.npy"
    if not path.exists():
        np.save(path, zipf_counts(d, n, s))
    return path


@dataclass
class ProcResult:
    status: str                      # ok | timeout | mem-limit | error
    wall: float                      # seconds, whole child process
    maxrss_mb: float                 # ru_maxrss of the child (peak RSS over its whole life)
    payload: dict = field(default_factory=dict)   # the child's JSON line
    error: str = ""


def _rss_of(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return 0.0


#: the machine is shared: stop our child before the kernel's OOM killer picks someone else's process
MIN_SYSTEM_AVAILABLE_MB = 1024
#: …but only a child that is itself big is stopped for that (killing a 200 MB child frees nothing)
BIG_CHILD_MB = 1024


def mem_available_mb() -> float:
    """MemAvailable of the whole machine (/proc/meminfo), in MB."""
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return float("inf")


def wait_for_memory(need_mb: float, max_wait: float = 600.0) -> bool:
    """Wait (up to ``max_wait`` s) until the machine has ``need_mb`` available; False if it never did."""
    t0 = time.perf_counter()
    while mem_available_mb() < need_mb:
        if time.perf_counter() - t0 > max_wait:
            return False
        time.sleep(5)
    return True


def run_process(cmd: list[str], timeout: float, mem_limit_mb: float = DEFAULT_MEM_LIMIT_MB,
                env: dict | None = None) -> ProcResult:
    """Run ``cmd`` (which prints one JSON line last) in a fresh process; watch time and RSS.

    Killed (status ``timeout`` / ``mem-limit`` / ``mem-pressure``) past ``timeout`` seconds, past
    ``mem_limit_mb`` of its own RSS, or when it holds over ``BIG_CHILD_MB`` and the machine's
    MemAvailable falls under ``MIN_SYSTEM_AVAILABLE_MB`` (other work shares the box)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, cwd=REPO, env=env,
                                start_new_session=True)
        status, peak_seen, ru = "ok", 0.0, None
        while True:
            pid, wstatus, ru = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            elapsed = time.perf_counter() - t0
            peak_seen = max(peak_seen, _rss_of(proc.pid))
            pressure = peak_seen > BIG_CHILD_MB and mem_available_mb() < MIN_SYSTEM_AVAILABLE_MB
            if elapsed > timeout or peak_seen > mem_limit_mb or pressure:
                status = ("timeout" if elapsed > timeout else
                          "mem-limit" if peak_seen > mem_limit_mb else "mem-pressure")
                os.killpg(proc.pid, signal.SIGKILL)
                _, wstatus, ru = os.wait4(proc.pid, 0)
                break
            time.sleep(0.05 if elapsed < 5 else 0.25)
        wall = time.perf_counter() - t0
        proc.returncode = os.waitstatus_to_exitcode(wstatus)
        maxrss = max(ru.ru_maxrss / 1024.0, peak_seen)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode(errors="replace"), err.read().decode(errors="replace")
    if status != "ok":
        return ProcResult(status, wall, maxrss)
    lines = [ln for ln in stdout.splitlines() if ln.startswith("{") or ln.startswith("[")]
    if proc.returncode != 0 or not lines:
        tail = (stderr.strip().splitlines() or ["(no stderr)"])[-1]
        return ProcResult("error", wall, maxrss, error=f"exit {proc.returncode}: {tail}")
    return ProcResult("ok", wall, maxrss, payload=json.loads(lines[-1]))


def environment() -> dict:
    """What a reader needs to compare numbers: machine, versions, commit."""
    import numpy

    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True,
                                text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        commit = "unknown"
    cpu = "unknown"
    try:
        with open("/proc/cpuinfo") as fh:
            cpu = next(ln.split(":", 1)[1].strip() for ln in fh if ln.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return {"python": sys.version.split()[0], "numpy": numpy.__version__, "platform": platform.platform(),
            "cpu": cpu, "cores": os.cpu_count(), "git_commit": commit,
            "date": time.strftime("%Y-%m-%dT%H:%M:%S%z")}


def write_rows(out, rows: list[dict]) -> None:
    """Save a benchmark's result rows as JSON beside the machine they ran on (load average
    included: these machines are shared) and the command line, and say where."""
    doc = {"machine": {**environment(), "loadavg": os.getloadavg()}, "argv": sys.argv[1:], "rows": rows}
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    Path(out).write_text(json.dumps(doc, indent=1))
    print(f"wrote {out}", file=sys.stderr)


def timed(fn):
    """(fn(), wall seconds, CPU seconds of this process) of one call."""
    c0, t0 = time.process_time(), time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0, time.process_time() - c0


def fmt_seconds(s: float | None) -> str:
    if s is None or not np.isfinite(s):
        return "—"
    if s < 1e-3:
        return f"{s * 1e6:.0f} µs"
    if s < 1:
        return f"{s * 1e3:.1f} ms"
    return f"{s:.2f} s" if s < 100 else f"{s:.0f} s"


def fmt_mb(mb: float | None) -> str:
    if mb is None or not np.isfinite(mb):
        return "—"
    return f"{mb:.0f} MB" if mb < 1024 else f"{mb / 1024:.2f} GB"


def section_main(section: str, worker, markdown) -> None:
    """Command-line entry of a section module: ``--worker '<json>'`` runs one measurement in this
    process (``worker(cfg)``); ``--render DIR`` rewrites DIR/<section>.md from DIR/<section>.json."""
    if len(sys.argv) == 3 and sys.argv[1] == "--worker":
        worker(json.loads(sys.argv[2]))
    elif len(sys.argv) == 3 and sys.argv[1] == "--render":
        d = Path(sys.argv[2])
        (d / f"{section}.md").write_text(markdown(json.loads((d / f"{section}.json").read_text())))
    else:
        sys.exit(f"run through benchmarks/run.py --only {section} (or --worker '<json>': one measurement; "
                 f"--render DIR: rewrite DIR/{section}.md from DIR/{section}.json)")


def best_cpu(fn, repeats: int):
    """(best CPU seconds over ``repeats`` calls of fn, the last call's result)."""
    best, out = float("inf"), None
    for _ in range(repeats):
        t = time.process_time()
        out = fn()
        best = min(best, time.process_time() - t)
    return best, out
