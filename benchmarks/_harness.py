"""Shared machinery of the benchmark sections: data, fresh-process measurement, result files.

Runs in ldpopt's venv (the parent process). Every measurement is a fresh child process (ldpopt's
venv or the peers' venv), so the peak RSS that ``os.wait4`` reports (ru_maxrss) belongs to that one
measurement and nothing else. The parent also polls the child's RSS from /proc and kills it past
``mem_limit_mb`` (so a peer that would eat the machine is stopped, reported as such), or past
``timeout`` seconds (reported as "did not finish in X").

The contract every ``bench_NAME.py`` follows: ``run(quick: bool = False, **options) -> dict`` (the
options are the script's command-line flags as keywords, ``out`` the results directory), which
writes ``results/NAME.json`` through :func:`save` (keys ``machine``, ``date``, ``command`` beside
the measured rows; ``--quick`` runs write under ``results/quick/``); the script runs alone as
``python benchmarks/bench_NAME.py [--quick] [options]`` through :func:`cli`.
"""

from __future__ import annotations

import argparse
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


def extract(rev: str, paths: list[str], dest) -> Path:
    """The files ``paths`` (or folders) of git revision ``rev`` written under ``dest`` (``git
    archive``): a previous version of the code to time beside today's. Returns ``dest``."""
    tar = subprocess.run(["git", "-C", str(REPO), "archive", rev, *paths], check=True,
                         capture_output=True).stdout
    Path(dest).mkdir(parents=True, exist_ok=True)
    subprocess.run(["tar", "-x", "-C", str(dest)], input=tar, check=True)
    return Path(dest)


def in_child(script, cfg: dict, timeout: float) -> dict:
    """``python SCRIPT --worker CFG`` in a fresh process (:func:`run_process`): its JSON line with
    ``process_wall`` and ``maxrss_mb``, or ``status`` (timeout, error, …) and ``error``."""
    r = run_process([sys.executable, str(script), "--worker", json.dumps(cfg)], timeout=timeout)
    row = {"process_wall": r.wall, "maxrss_mb": r.maxrss_mb}
    if r.status == "ok":
        row.update(r.payload)
    else:
        row.update(status=r.status, error=r.error or f"> {timeout:.0f} s (stopped)")
    return row


def shard_folder(shard: Path, k: int, folder: Path) -> Path:
    """A folder of ``k`` distinct shards made from one Parquet shard: shard i holds its reports
    rotated by i rows, in its row groups, so that the k shards' contents (and identities) differ —
    aggregation refuses shards holding the same reports, symbolic links to one shard included —
    while the decoding and counting cost is that of k independent shards of the same size (files
    that fit the page cache are served from it, not the disk)."""
    import pyarrow.parquet as pq

    from ldpopt.aggregate.shards import from_batch, read_labels, read_oracle, write_shard

    orc, pf = read_oracle(shard), pq.ParquetFile(shard)
    reports = from_batch(orc, pf.read().combine_chunks().to_batches()[0])
    group = pf.metadata.row_group(0).num_rows if pf.metadata.num_row_groups else 1
    rows = len(reports[0]) if isinstance(reports, tuple) else len(reports)
    folder.mkdir()
    for i in range(k):
        step = i % max(rows, 1)
        turned = (tuple(np.roll(x, -step, axis=0) for x in reports) if isinstance(reports, tuple)
                  else np.roll(reports, -step, axis=0))
        write_shard(folder / f"part-{i:05d}.parquet", orc, turned, row_group_rows=group, labels=read_labels(shard),
                    run="bench-shard-folder", part=i)
    return folder


def child_json(script, *args: str) -> tuple[dict, str]:
    """``python SCRIPT ARGS`` with this checkout first on PYTHONPATH (checked exit): its last
    stdout line as JSON, and its stderr."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    out = subprocess.run([sys.executable, str(script), *args], capture_output=True, text=True, check=True,
                         env=env)
    return json.loads(out.stdout.strip().splitlines()[-1]), out.stderr


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


def parser(doc: str | None) -> argparse.ArgumentParser:
    """A bench script's argument parser with the two flags every bench has: ``--quick`` (tiny
    sizes, seconds) and ``--out DIR`` (results directory; default ``results/``, ``results/quick/``
    for quick runs)."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="tiny sizes, seconds (the smoke check)")
    ap.add_argument("--out", default=None, help="results directory (default benchmarks/results[/quick])")
    return ap


def options(ap: argparse.ArgumentParser, script: str, quick: bool, opts: dict) -> argparse.Namespace:
    """What ``run(quick, **opts)`` works with: the parser's defaults overridden by ``opts`` (keyword
    names are the flags with ``_`` for ``-``), plus ``command``: the command line that repeats it."""
    a = ap.parse_args([])
    unknown = sorted(set(opts) - set(vars(a)))
    if unknown:
        raise TypeError(f"{script}: unknown option(s) {unknown}; have {sorted(vars(a))}")
    defaults = dict(vars(a))
    vars(a).update(opts, quick=bool(quick))
    words = [f"python benchmarks/{script}"]
    for act in ap._actions:
        v = getattr(a, act.dest, None) if act.option_strings else None
        if act.dest in ("help", "out") or v is None or v == defaults.get(act.dest) or act.help == argparse.SUPPRESS:
            continue
        flag = act.option_strings[-1]
        words += [flag] if v is True else [flag, *map(str, v if isinstance(v, (list, tuple)) else [v])]
    a.command = " ".join(words)
    return a


#: what an anchor bench says when the anchor's environment is not given
ANCHOR_NOT_RUN = "not run: give --anchor-python and --anchor-src (or LDPOPT_ANCHOR_PYTHON / LDPOPT_ANCHOR_SRC)"


def anchor_env(a: argparse.Namespace) -> tuple[str, str] | None:
    """The anchor's python and source folder of a bench run on the papers' own code: ``a.anchor_python``
    and ``a.anchor_src``, else the LDPOPT_ANCHOR_PYTHON / LDPOPT_ANCHOR_SRC environment variables;
    None where either is missing (the anchor lives in its own venv outside the repository, so
    ``make bench`` says "not run" instead of stopping)."""
    py = a.anchor_python or os.environ.get("LDPOPT_ANCHOR_PYTHON")
    src = a.anchor_src or os.environ.get("LDPOPT_ANCHOR_SRC")
    return (py, src) if py and src else None


def cli(ap: argparse.ArgumentParser, run, argv: list[str] | None = None) -> None:
    """``python benchmarks/bench_NAME.py [--quick] [options]``: parse the flags, call ``run``."""
    run(**vars(ap.parse_args(argv)))


def results_dir(a) -> Path:
    """Where a run's files go: ``--out``, else ``results/quick`` for quick runs, else ``results``."""
    return Path(a.out) if a.out else BENCH_DIR / "results" / ("quick" if a.quick else "")


def save(name: str, a, doc: dict) -> dict:
    """Write ``doc`` as ``NAME.json`` in :func:`results_dir`, with ``machine`` (environment and load
    average: these machines are shared), ``date`` and ``command`` first; return what was written."""
    return _write(results_dir(a) / f"{name}.json", a.command, bool(a.quick), doc)


def write_rows(out, rows: list[dict]) -> None:
    """``rows`` saved as the file ``out`` with the same keys as :func:`save` (the command: this
    process's command line), for a script that keeps its own flags."""
    _write(Path(out), " ".join(["python", *sys.argv]), "--quick" in sys.argv, {"rows": rows})


def _write(out: Path, command: str, quick: bool, doc: dict) -> dict:
    env = environment()
    full = {"machine": {**env, "loadavg": os.getloadavg()}, "date": env["date"], "command": command,
            "quick": quick, **doc}
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(full, indent=1, default=_jsonable) + "\n")
    print(f"wrote {out}", file=sys.stderr)
    return full


class Journal:
    """A run's measurements appended to ``OUT/NAME.jsonl`` as they finish, so that ``--resume`` keeps
    the finished ones (a row whose status is in ``retry`` is measured again); without ``--resume``
    the old journal is removed."""

    def __init__(self, a, name: str, key, retry=("error", "mem-pressure")):
        out = results_dir(a)
        out.mkdir(parents=True, exist_ok=True)
        self.path, self.key, self.done = out / f"{name}.jsonl", key, {}
        if a.resume and self.path.exists():
            rows = [json.loads(line) for line in self.path.read_text().splitlines()]
            self.done = {key(r): r for r in rows if r["status"] not in retry}
        elif self.path.exists():
            self.path.unlink()

    def get(self, spec: dict) -> dict | None:
        return self.done.get(self.key(spec))

    def add(self, row: dict) -> None:
        with open(self.path, "a") as fh:
            fh.write(json.dumps(row, default=float) + "\n")


def _jsonable(v):
    return v.item() if hasattr(v, "item") else str(v)


def timed(fn):
    """(fn(), wall seconds, CPU seconds of this process) of one call."""
    c0, t0 = cpu_clock(), time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0, cpu_clock() - c0


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


def main(ap: argparse.ArgumentParser, run, worker=None) -> None:
    """Command-line entry of a bench script: ``--worker '<json>'`` runs one measurement in this
    (fresh) process (``worker(cfg)``, for benches that measure in child processes); anything else
    is the script's flags (:func:`cli`)."""
    if worker is not None and len(sys.argv) == 3 and sys.argv[1] == "--worker":
        worker(json.loads(sys.argv[2]))
    else:
        cli(ap, run)


def cpu_clock() -> float:
    """CPU seconds of this process and of every child it has started: its own (``process_time``, all
    threads), its children waited for (``RUSAGE_CHILDREN``: a solver's fork, such as the cvxpy chain's
    PIQP, once reaped) and its descendants still running (``psutil`` over the process tree, where
    installed: a pool's workers, ldpopt's solver worker and its children; each read by its own CPU
    clock, :func:`_own_cpu`), each with the children it
    has reaped itself (``children_user``, ``children_system``: a worker's child killed at a time limit,
    or retired, and reaped by the worker). The difference of two readings is the CPU the interval
    cost, wherever it ran: a descendant alive at the first reading and reaped by the second is counted
    once (its whole life in its parent's reaped total, less what the first reading saw of it).
    Without the reaped totals of live descendants, a worker's child killed in an interval took its
    whole life's CPU out of the sum: two calls at d = 10⁴ read −64 s and −41 s."""
    import resource

    ch = resource.getrusage(resource.RUSAGE_CHILDREN)
    total = time.process_time() + ch.ru_utime + ch.ru_stime
    try:
        import psutil
    except ImportError:  # pragma: no cover - psutil is in the dev extra
        return total
    for child in psutil.Process().children(recursive=True):
        try:
            t = child.cpu_times()
            total += _own_cpu(child.pid, t.user + t.system) + getattr(t, "children_user", 0.0) + \
                getattr(t, "children_system", 0.0)
        except (psutil.NoSuchProcess, psutil.AccessDenied, psutil.ZombieProcess):
            pass
    return total


def _own_cpu(pid: int, ticks: float) -> float:
    """CPU seconds of the live process ``pid`` (all its threads) to the nanosecond: its process CPU
    clock (Linux's ``MAKE_PROCESS_CPUCLOCK(pid, CPUCLOCK_SCHED)``). ``/proc``'s user and system times
    (``ticks``, what psutil reads) count whole clock ticks of 10 ms: a 2 ms solve in ldpopt's worker's
    child read as 0 or 10 ms. ``ticks`` where the clock cannot be read (not Linux, or the process
    gone)."""
    if not sys.platform.startswith("linux"):
        return ticks
    try:
        return time.clock_gettime((~pid << 3) | 2)
    except OSError:
        return ticks


def quiet_threads(timeout: float = 1.0, window: float = 0.01) -> float:
    """Wait until nothing but this thread uses CPU — this process's other threads and its descendants
    (:func:`cpu_clock`) less than 5 % of a ``window`` — at most ``timeout`` seconds; the seconds
    waited. A BLAS library's helper threads spin for ~0.1 s after each threaded product (measured:
    one 100 × 100 ``matmul`` or ``eigh`` with OpenBLAS on 2 cores, a full core for 0.1 s), in this
    process or in a solver's child; :func:`timed_cpu` waits for that spin before it starts a clock
    and after the call returns, so a call is charged the spin it started, never one an earlier call
    started."""
    t0 = time.perf_counter()
    while time.perf_counter() - t0 < timeout:
        others = cpu_clock() - time.thread_time()
        time.sleep(window)
        if (cpu_clock() - time.thread_time()) - others < 0.05 * window:
            break
    return time.perf_counter() - t0


def timed_cpu(fn):
    """(CPU seconds, wall seconds, fn()) of one call: :func:`cpu_clock` from a quiet start (no
    thread or child still spinning from an earlier call, :func:`quiet_threads`) until the call's own
    helper threads and children are quiet again after it returns, less the clock's own readings (its
    walk over the process tree: ~1 ms, which a plain difference of two readings charged to every
    call); wall until it returns."""
    quiet_threads()
    own = time.thread_time()
    c0 = cpu_clock()  # (its walk over the process tree runs after it read this process's time)
    own = time.thread_time() - own
    w0 = time.perf_counter()
    out = fn()
    w = time.perf_counter() - w0
    t = time.thread_time()
    quiet_threads()
    own += time.thread_time() - t  # the clock's own readings, before and after: not the call's
    return cpu_clock() - c0 - own, w, out


def solver_worker_ready(timeout: float = 60.0) -> float | None:
    """Start ldpopt's solver worker (:mod:`ldpopt.problems.worker`: a fresh interpreter that imports
    numpy, scipy and cvxpy, started once per process) and wait until it serves; the wall seconds
    waited, or None where it did not come up within ``timeout`` (or ldpopt has no such worker). Call
    it after the warm-up and before the first timed call: the worker starts in the background at the
    first foreign solve after an in-process one, and :func:`cpu_clock` counts its descendants, so
    its start (about 1–2.5 s of CPU) would otherwise be charged to whichever call is timed while it
    imports. Its cost per process is measured by ``bench_worker.py``."""
    try:
        from ldpopt.problems import worker
    except ImportError:
        return None
    t0 = time.perf_counter()
    worker.start_in_background()
    while worker.server_pid() is None:
        if time.perf_counter() - t0 > timeout:
            return None
        time.sleep(0.02)
    return time.perf_counter() - t0


def best_cpu(fn, repeats: int, clock=cpu_clock):
    """(best CPU seconds over ``repeats`` calls of fn, the last call's result); ``clock``: what is
    measured (``time.perf_counter``: wall seconds)."""
    best, out = float("inf"), None
    for _ in range(repeats):
        t = clock()
        out = fn()
        best = min(best, clock() - t)
    return best, out
