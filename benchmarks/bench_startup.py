"""Start-up cost of the ``ldpopt`` command and of ``import ldpopt``: CPU seconds of a fresh process.

Each case runs ``--reps`` times in a fresh interpreter (warm file cache: one untimed run first); the
CPU time is the child's user + system time from ``os.wait4`` (the whole process: interpreter start,
imports, the work), and the best of the repetitions is reported with the median beside it. The
Emoji example (``examples/emoji_oue_eps1_counts.csv``, d = 969) is the end-to-end case. Targets:
``--version``, ``--help`` and argument errors ≤ 0.15 s; ``import ldpopt`` ≤ 0.3 s; ``postprocess
--method norm-sub`` on the Emoji example ≤ 0.6 s.

    python benchmarks/bench_startup.py [--reps 5] [--out benchmarks/results/startup.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
EMOJI = REPO / "examples" / "emoji_oue_eps1_counts.csv"

# name -> (argv after the interpreter, target CPU seconds, expected exit status)
CASES = {
    "ldpopt --version": (["-m", "ldpopt.cli", "--version"], 0.15, 0),
    "ldpopt --help": (["-m", "ldpopt.cli", "--help"], 0.15, 0),
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
    proc = subprocess.Popen([sys.executable, *argv], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, cwd=REPO)
    _, status, usage = os.wait4(proc.pid, 0)
    err = proc.stderr.read().decode()
    proc.stderr.close()
    code = os.waitstatus_to_exitcode(status)
    if code != expect:
        raise RuntimeError(f"{argv}: exit {code}, expected {expect}: {err[-500:]}")
    return usage.ru_utime + usage.ru_stime


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--out", default=str(REPO / "benchmarks" / "results" / "startup.json"))
    args = ap.parse_args(argv)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH")) if p)}
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, (case, target, expect) in CASES.items():
            case = [a.replace("{tmp}", tmp) for a in case]
            cpu_of(case, env, expect)  # warm the file cache
            times = sorted(cpu_of(case, env, expect) for _ in range(args.reps))
            best, median = times[0], times[len(times) // 2]
            rows.append({"case": name, "cpu_best_s": round(best, 4), "cpu_median_s": round(median, 4),
                         "target_s": target, "meets_target": best <= target})
            print(f"{name:42s} best {best:6.3f} s  median {median:6.3f} s  target {target:.2f} s  "
                  f"{'ok' if best <= target else 'OVER'}", flush=True)
    load = os.getloadavg()[0]
    doc = {"python": platform.python_version(), "machine": platform.machine(), "reps": args.reps,
           "loadavg_1min": round(load, 2), "rows": rows}
    Path(args.out).write_text(json.dumps(doc, indent=1) + "\n")
    print(f"wrote {args.out} (load average {load:.1f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
