"""Calls of the solver worker back to back, as a solve makes them (a chain's attempts, the phase one,
the exact steps one after another): one ``worker.call(len, (data,))`` with Clarabel's compiled data
of CLS on the simplex + one sparse and five dense user rows at d = 100, 1,000, 10⁴, repeated with no
pause between calls,
with 50 ms and with 300 ms between them (a process idle that long is slower to resume on this machine:
the worker's child, and before, its server too), in this checkout and in a ``--before`` revision (extracted by ``git archive``),
each in a fresh process whose worker is started and warmed before the timed calls. Per cell: mean,
median and 90th percentile wall per call, the CPU per call of the process, the worker and its
children together (``_harness.cpu_clock`` over the cell's calls back to back; each call alone,
``_harness.timed_cpu``, with a pause), the data's size pickled, how many children
of the worker served the calls, and the
calls that failed (a child serves ``worker.CHILD_CALLS`` calls, then the next one takes over: the
calls cross that point at d = 1,000 with the default ``--calls``).

Written to ``benchmarks/results/worker_calls.json`` and ``.md``.

Run: ``PYTHONPATH=. python benchmarks/bench_worker_calls.py --before REV`` (about 2 min; ``--calls N``
per cell, default 300).
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import _harness as H  # benchmarks/ is the script's folder

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
SIZES = (100, 1_000, 10_000)

CHILD = textwrap.dedent('''
import json, os, pickle, sys, time, warnings
import numpy as np
warnings.simplefilter("ignore")
sys.path.insert(0, %(bench)r)
import _harness as H  # cpu_clock: this process, its live descendants and what they reaped
import ldpopt
from ldpopt.problems import Problem, Simplex, worker

calls = int(sys.argv[1])
PAUSES = (0.0, 0.05, 0.3)  # between calls: none (a solve's calls), and as a user's code leaves them

worker.clean = lambda: False  # every call through the server, none forked directly
worker._SERVER.start()
out = []
for d in %(sizes)r:
    rng = np.random.default_rng(d)
    est = ldpopt.oracles.get("grr", 1.0, d).simulate(rng.multinomial(50 * d, rng.dirichlet(np.ones(d))), rng=d)
    A = rng.random((5, d))  # five dense rows, as the grammar's families carry
    pr = Problem(est, "cls", [Simplex(), lambda f, e: f[0] + f[1] <= 0.5, lambda f, e: A @ f <= A.sum(1) / d + 0.1])
    data, _, _ = pr.cvxpy_problem.get_problem_data("CLARABEL")
    data = {k: v for k, v in data.items() if k != "param_prob"}
    for _ in range(20):  # warm: the server's children forked, the data's path through pickle run
        worker.call(len, (data,), 30.0)
    for pause in PAUSES:
        walls, cpus, served, failed = [], [], set(), []

        def ask(fn, args):
            try:
                return worker.call(fn, args, 30.0)
            except Exception as exc:  # a call that failed: counted, named
                failed.append(f"{type(exc).__name__}: {exc}")

        n = calls if pause == 0.0 else max(int(calls * 0.005 / pause), 10)
        cpu0 = H.cpu_clock()
        for _ in range(n):
            if pause:  # each call timed on its own after the pause (H.timed_cpu), its CPU read alone
                time.sleep(pause)
                c, w, _ = H.timed_cpu(lambda: ask(len, (data,)))
                walls.append(w)
                cpus.append(c)
                served.add(ask(os.getpid, ()))  # which child served: asked once more, untimed
                continue
            w0 = time.perf_counter()
            ask(len, (data,))
            walls.append(time.perf_counter() - w0)
        cpu = H.cpu_clock() - cpu0 if not pause else float(np.sum(cpus))
        if not pause:  # which children serve calls back to back: as many calls again, asking
            for _ in range(n):
                served.add(ask(os.getpid, ()))
        w = 1e3 * np.asarray(walls)
        out.append({"d": d, "pause_s": pause, "calls": n, "mean_ms": float(w.mean()),
                    "median_ms": float(np.median(w)), "p90_ms": float(np.percentile(w, 90)),
                    "cpu_ms": 1e3 * cpu / n, "bytes": len(pickle.dumps(data, protocol=5)),
                    "children": len(served - {None}), "failed": len(failed), "failures": sorted(set(failed))})
        print(json.dumps(out[-1]), file=sys.stderr, flush=True)
print(json.dumps(out))
''')


def run_tree(tree: Path, calls: int) -> list[dict]:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    proc = subprocess.run([sys.executable, "-c", CHILD % {"sizes": SIZES, "bench": str(HERE)}, str(calls)], env=env, capture_output=True,
                          text=True, cwd=tree, timeout=1800, check=False)
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr[-3000:])
    return json.loads(proc.stdout.strip().splitlines()[-1])


def parser():
    ap = H.parser(__doc__)
    ap.add_argument("--calls", type=int, default=300, help="calls per cell without a pause (a tenth with one)")
    ap.add_argument("--before", default="HEAD~1", help="git revision of the 'before' tree (default: HEAD~1)")
    return ap


def run(quick: bool = False, **opts) -> dict:
    a = H.options(parser(), "bench_worker_calls.py", quick, opts)
    calls = 20 if a.quick else a.calls
    rev = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short=10", a.before], capture_output=True, text=True,
                         check=True).stdout.strip()
    out = {"machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores (shared)",
           "python": platform.python_version(), "loadavg_at_start": [round(x, 2) for x in os.getloadavg()],
           "command": "PYTHONPATH=. " + a.command, "before_rev": rev, "calls": calls}
    with tempfile.TemporaryDirectory() as tmp:
        out["before"] = run_tree(H.extract(rev, ["ldpopt"], tmp), calls)
    out["after"] = run_tree(REPO, calls)
    out["loadavg_at_end"] = [round(x, 2) for x in os.getloadavg()]
    out_dir = H.results_dir(a)
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "worker_calls.json").write_text(json.dumps(out, indent=1) + "\n")
    write_markdown(out, out_dir)
    return out


def write_markdown(out: dict, out_dir: Path) -> None:
    """``worker_calls.md`` in ``out_dir`` from the run's record ``out``."""
    md = ["# Calls of the solver worker back to back (benchmarks/bench_worker_calls.py)", "",
          (f"{out['machine']}, load average {out['loadavg_at_start']} at the start, {out['loadavg_at_end']} at the "
           f"end; before = {out['before_rev']}, after = this checkout; `{out['command']}`."), "",
          ("One `worker.call(len, (data,))` with Clarabel's compiled data of CLS on the simplex + one sparse and five "
           "dense user rows (its size pickled in the second column): wall per call in ms (mean / median / 90th "
           "percentile), CPU per call in ms of the caller, the worker and its children together (`_harness.cpu_clock`, "
           "children that exited included; with a pause, each call read alone, `_harness.timed_cpu`, and followed "
           "by an untimed one asking which child served), the worker's children that served the calls, and the calls that failed (each raised out of `worker.call`)."), "",
          "| d | data | pause | calls | wall before | CPU before | children, failed before | wall after | CPU after "
          "| children, failed after |",
          "|---|---|---|---|---|---|---|---|---|---|"]
    def ms(x) -> str:
        return "—" if x is None else f"{x:.2f}"

    def cell(r: dict) -> str:
        return f"{r['mean_ms']:.2f} / {r['median_ms']:.2f} / {r['p90_ms']:.2f}"

    for b, f in zip(out["before"], out["after"]):
        pause = "none" if not b["pause_s"] else f"{1e3 * b['pause_s']:.0f} ms"
        md.append(f"| {b['d']:,} | {b['bytes'] / 1e3:,.0f} kB | {pause} | {b['calls']} | {cell(b)} | {ms(b['cpu_ms'])} | "
                  f"{b['children']}, {b['failed']} | {cell(f)} | {ms(f['cpu_ms'])} | {f['children']}, {f['failed']} |")
    failures = sorted({(t, x) for t in ("before", "after") for r in out[t] for x in r["failures"]})
    if failures:
        md += ["", "The failures:", ""] + [f"- {t}: `{x}`" for t, x in failures]
    (out_dir / "worker_calls.md").write_text("\n".join(md) + "\n")


if __name__ == "__main__":
    H.cli(parser(), run)
