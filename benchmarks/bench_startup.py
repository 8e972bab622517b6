"""Start-up cost of the ``ldpopt`` command and of ``import ldpopt``: CPU seconds of a fresh process.

Each case runs ``--reps`` times in a fresh interpreter (warm file cache: one untimed run first); the
CPU time is the child's user + system time from ``os.wait4`` (the whole process: interpreter start,
imports, the work), and the best of the repetitions is reported with the median beside it. The
Emoji example (``examples/emoji_oue_eps1_counts.csv``, d = 969) is the end-to-end case. Targets:
``--version``, ``--help`` and argument errors ≤ 0.15 s; ``postprocess --help`` (its method list
imports the oracles and methods) ≤ 0.6 s; ``import ldpopt`` ≤ 0.3 s; ``postprocess
--method norm-sub`` on the Emoji example ≤ 0.6 s.

    python benchmarks/bench_startup.py [--reps 5] [--quick]      # writes results/startup.json
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _harness as H  # noqa: E402

REPO = H.REPO
EMOJI = REPO / "examples" / "emoji_oue_eps1_counts.csv"

# name -> (argv after the interpreter, target CPU seconds, expected exit status)
CASES = {
    "ldpopt --version": (["-m", "ldpopt.cli", "--version"], 0.15, 0),
    "ldpopt --help": (["-m", "ldpopt.cli", "--help"], 0.15, 0),
    "ldpopt postprocess --help": (["-m", "ldpopt.cli", "postprocess", "--help"], 0.6, 0),
    "ldpopt (no command)": (["-m", "ldpopt.cli"], 0.15, 2),
    "ldpopt bogus-command": (["-m", "ldpopt.cli", "bogus-command"], 0.15, 2),
    "ldpopt postprocess --epsilon x": (["-m", "ldpopt.cli", "postprocess", "--epsilon", "x"], 0.15, 2),
    "import ldpopt": (["-c", "import ldpopt"], 0.3, 0),
    "postprocess --method norm-sub (Emoji)": (
        ["-m", "ldpopt.cli", "postprocess", "--counts", str(EMOJI), "--oracle", "oue", "--epsilon", "1",
         "--n", "156941", "--method", "norm-sub", "--out", "{tmp}/out.csv"], 0.6, 0),
}


def cpu_of(argv, env, expect: int) -> float:
    """User + system CPU seconds of one fresh ``python ARGV`` (checked exit status)."""
    return timed(argv, env, expect)[0]


def timed(argv, env, expect: int) -> tuple[float, float]:
    """(CPU seconds, wall seconds) of one fresh ``python ARGV`` (checked exit status); the wall time
    counts the waits of a busy machine, the CPU time does not."""
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, *argv], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, cwd=REPO)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    err = proc.stderr.read().decode()
    proc.stderr.close()
    code = os.waitstatus_to_exitcode(status)
    if code != expect:
        raise RuntimeError(f"{argv}: exit {code}, expected {expect}: {err[-500:]}")
    return usage.ru_utime + usage.ru_stime, wall


def parser():
    ap = H.parser(__doc__)
    ap.add_argument("--reps", type=int, default=5)
    return ap


def run(quick: bool = False, **opts) -> dict:
    """``--quick``: one repetition of the first two cases."""
    args = H.options(parser(), "bench_startup.py", quick, opts)
    cases = dict(list(CASES.items())[:2]) if args.quick else CASES
    reps = 1 if args.quick else args.reps
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH")) if p)}
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, (case, target, expect) in cases.items():
            case = [a.replace("{tmp}", tmp) for a in case]
            cpu_of(case, env, expect)  # warm the file cache
            runs = [timed(case, env, expect) for _ in range(reps)]
            times, walls = sorted(r[0] for r in runs), sorted(r[1] for r in runs)
            best, median = times[0], times[len(times) // 2]
            rows.append({"case": name, "cpu_best_s": round(best, 4), "cpu_median_s": round(median, 4),
                         "wall_best_s": round(walls[0], 4), "wall_median_s": round(walls[len(walls) // 2], 4),
                         "target_s": target, "meets_target": best <= target})
            print(f"{name:42s} best {best:6.3f} s  median {median:6.3f} s  wall best {walls[0]:6.3f} s  "
                  f"target {target:.2f} s  {'ok' if best <= target else 'OVER'}", flush=True)
    return H.save("startup", args, {"reps": reps, "loadavg_1min": round(os.getloadavg()[0], 2), "rows": rows})


if __name__ == "__main__":
    H.cli(parser(), run)
