"""What isolating every foreign solver call costs: the whole call (``Problem(...).solve(...)``) with
the solver in a child process against the tree before (Clarabel, OSQP, SCS in this process without a
time limit; a fork per isolated call), and one call of the worker on its own.

Three tables, each run in a fresh process per tree (this checkout, "after"; the merge base with
``main``, "before", extracted by ``git archive``), written to ``benchmarks/results/worker.json`` and
``.md``:

1. per-call overhead: CLS on the simplex + one user row (``f[0] + f[1] <= 0.5``; the cvxpy chain),
   ``solve(solver=S)`` for S in Clarabel, OSQP, SCS without a time limit, at d = 100, 1,000, 10⁴:
   median wall and mean CPU of the whole call, CPU counted in this process, its reaped children and
   the worker process with its children, live and reaped (``psutil``; the worker's start is not in it: it
   is started, and the problem solved once, before the timed calls). A pause of 50 ms between calls,
   as a user's code would leave between solves.
2. the call itself: ``worker.call(len, (data,))`` with the Clarabel data compiled for the same
   problems, through each path the tree has (before: a fork of the server per call, and a direct fork
   of this process; after: a waiting child of the server, which serves call after call, and a direct
   fork), median wall; and the server's start.

3. in this checkout's process, the same Clarabel solve with the solver in this process and in the
   worker's child, interleaved call by call (both under the same load).

Run: ``PYTHONPATH=. python benchmarks/bench_worker.py`` (about 4 min; ``--reps N`` calls per cell,
default 15; ``--before REV``, default the merge base with main).
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
SOLVERS = ("CLARABEL", "OSQP", "SCS")

CHILD = textwrap.dedent('''
import json, os, sys, time, warnings
import numpy as np, psutil
warnings.simplefilter("ignore")
import ldpopt
from ldpopt.problems import Problem, Simplex, worker

reps = int(sys.argv[1])
me = psutil.Process()


def cpu():
    """this process + its reaped children + the worker server, its live children and those it reaped"""
    t = me.cpu_times()
    total = t.user + t.system + t.children_user + t.children_system
    pid = worker.server_pid()
    if pid is not None:
        try:
            server = psutil.Process(pid)
            s = server.cpu_times()
            total += s.user + s.system + s.children_user + s.children_system
            for child in server.children():  # its children serve call after call: alive, not reaped
                c = child.cpu_times()
                total += c.user + c.system
        except psutil.Error:
            pass
    return total


def problem(d):
    rng = np.random.default_rng(d)
    est = ldpopt.oracles.get("grr", 1.0, d).simulate(rng.multinomial(50 * d, rng.dirichlet(np.ones(d))), rng=d)
    return Problem(est, "cls", [Simplex(), lambda f, e: f[0] + f[1] <= 0.5])


def wait_server():
    t0 = time.perf_counter()
    while worker.server_pid() is None and time.perf_counter() - t0 < 30:
        time.sleep(0.05)


out = {"solve": [], "call": []}
t0 = time.perf_counter()
worker._SERVER.start()
out["server_start_s"] = time.perf_counter() - t0
for d in %(sizes)r:
    pr = problem(d)
    for name in %(solvers)r:
        sol = pr.solve(solver=name, progress=False)  # warm: the server running, cvxpy's caches filled
        wait_server()
        walls, cpus = [], []
        for _ in range(reps):
            time.sleep(0.05)
            c0, w0 = cpu(), time.perf_counter()
            sol = pr.solve(solver=name, progress=False)
            walls.append(time.perf_counter() - w0)
            time.sleep(0.02)  # the worker reaps its child; then its CPU is read
            cpus.append(cpu() - c0)
        out["solve"].append({"d": d, "solver": name, "status": sol.status, "answered_by": sol.solver,
                             "wall_ms": 1e3 * float(np.median(walls)), "cpu_ms": 1e3 * float(np.median(cpus)),
                             "cpu_total_ms": 1e3 * float(np.sum(cpus)) / reps})
        print(json.dumps(out["solve"][-1]), file=sys.stderr, flush=True)
    if "--ab" in sys.argv:  # this tree only: the same solve in this process and isolated, interleaved
        from ldpopt.problems.solvers import attempts
        real = attempts.runs_isolated
        got = {"in this process": ([], []), "worker": ([], [])}
        for _ in range(reps):
            for label, iso in (("in this process", False), ("worker", True)):
                attempts.runs_isolated = lambda *a, iso=iso: iso
                time.sleep(0.05)
                c0, w0 = cpu(), time.perf_counter()
                pr.solve(solver="CLARABEL", progress=False)
                got[label][0].append(time.perf_counter() - w0)
                time.sleep(0.02)
                got[label][1].append(cpu() - c0)
        attempts.runs_isolated = real
        out.setdefault("ab", []).append({"d": d, **{f"{k} {m}": 1e3 * float(f(v[i])) for k, v in got.items()
                                                    for i, m, f in ((0, "wall_ms", np.median), (1, "cpu_ms", np.mean))}})
        print(json.dumps(out["ab"][-1]), file=sys.stderr, flush=True)
    data, _, _ = pr.cvxpy_problem.get_problem_data("CLARABEL")
    data = {k: v for k, v in data.items() if k != "param_prob"}
    saved = dict(worker.__dict__)
    for label in ("server", "direct fork"):
        if label == "server":
            worker.clean = lambda: False
        elif hasattr(worker, "forks_directly"):
            worker.forks_directly = lambda: True
        else:
            worker.clean = lambda: True
        walls = []
        for _ in range(reps):
            time.sleep(0.05)
            w0 = time.perf_counter()
            worker.call(len, (data,), 30.0)
            walls.append(time.perf_counter() - w0)
        out["call"].append({"d": d, "path": label, "wall_ms": 1e3 * float(np.median(walls)),
                            "wall_min_ms": 1e3 * float(np.min(walls))})
        print(json.dumps(out["call"][-1]), file=sys.stderr, flush=True)
        worker.__dict__.update(saved)
print(json.dumps(out))
''')


def run_tree(tree: Path, reps: int, ab: bool = False) -> dict:
    code = CHILD % {"sizes": SIZES, "solvers": SOLVERS}
    env = {**os.environ, "PYTHONPATH": str(tree)}
    proc = subprocess.run([sys.executable, "-c", code, str(reps)] + (["--ab"] if ab else []), env=env, capture_output=True, text=True,
                          cwd=tree, timeout=1800, check=False)
    if proc.returncode != 0:
        raise RuntimeError(proc.stderr[-3000:])
    return json.loads(proc.stdout.strip().splitlines()[-1])


def parser():
    ap = H.parser(__doc__)
    ap.add_argument("--reps", type=int, default=15, help="calls per cell")
    ap.add_argument("--before", default=None, help="git revision of the 'before' tree (default: merge base with main)")
    ap.add_argument("--markdown-only", action="store_true", help="rewrite worker.md from worker.json, run nothing")
    return ap


def run(quick: bool = False, **opts) -> dict:
    a = H.options(parser(), "bench_worker.py", quick, opts)
    reps = 2 if a.quick else a.reps
    out_dir = H.results_dir(a)
    if a.markdown_only:
        out = json.loads((out_dir / "worker.json").read_text())
        write_markdown(out, out_dir)
        return out
    rev = a.before or subprocess.run(["git", "-C", str(REPO), "merge-base", "HEAD", "main"], capture_output=True,
                                     text=True, check=True).stdout.strip()
    out = {"machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores (shared)",
           "python": platform.python_version(), "loadavg_at_start": [round(x, 2) for x in os.getloadavg()],
           "command": "PYTHONPATH=. " + a.command, "before_rev": rev, "reps": reps}
    with tempfile.TemporaryDirectory() as tmp:
        out["before"] = run_tree(H.extract(rev, ["ldpopt"], tmp), reps)
    out["after"] = run_tree(REPO, reps, ab=True)
    out["loadavg_at_end"] = [round(x, 2) for x in os.getloadavg()]
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "worker.json").write_text(json.dumps(out, indent=1) + "\n")
    write_markdown(out, out_dir)
    return out


def write_markdown(out: dict, out_dir: Path) -> None:
    """``worker.md`` in ``out_dir`` from the run's record ``out``."""
    md = ["# The isolation's cost (benchmarks/bench_worker.py)", "",
          (f"{out['machine']}, load average {out['loadavg_at_start']} at the start, {out['loadavg_at_end']} at the "
           f"end; before = {out['before_rev'][:10]} (the merge base), after = this checkout; {out['reps']} calls per "
           f"cell, 50 ms apart; `{out['command']}`."), "",
          (f"The worker's start (once per process): before {out['before']['server_start_s']:.2f} s, after "
           f"{out['after']['server_start_s']:.2f} s."), "",
          ("Whole call, `Problem(est, \"cls\", [Simplex(), f[0] + f[1] <= 0.5]).solve(solver=S)`, no time limit "
           "(before: S in this process; after: S in the worker's child). Wall: the median call. CPU: this process, "
           "its children, the worker and its children, summed over the calls / calls (the clock ticks 10 ms)."), "",
          ("| d | solver | status | wall before (ms) | wall after (ms) | wall overhead (ms) | CPU before (ms) | "
           "CPU after (ms) | CPU overhead (ms) |"), "|---|---|---|---|---|---|---|---|---|"]
    for b, f in zip(out["before"]["solve"], out["after"]["solve"]):
        md.append(f"| {b['d']:,} | {b['solver']} | {f['status']} | {b['wall_ms']:.1f} | {f['wall_ms']:.1f} | "
                  f"{f['wall_ms'] - b['wall_ms']:+.1f} | {b['cpu_total_ms']:.1f} | {f['cpu_total_ms']:.1f} | "
                  f"{f['cpu_total_ms'] - b['cpu_total_ms']:+.1f} |")
    md += ["", ("One `worker.call(len, (data,))` with the compiled Clarabel data of the same problem (median wall, "
                "min in brackets): before, a fork of the server per call or a direct fork of this process; after, "
                "the server's waiting child or a direct fork."), "",
           "| d | path | before (ms) | after (ms) |", "|---|---|---|---|"]
    for b, f in zip(out["before"]["call"], out["after"]["call"]):
        md.append(f"| {b['d']:,} | {b['path']} | {b['wall_ms']:.2f} ({b['wall_min_ms']:.2f}) | "
                  f"{f['wall_ms']:.2f} ({f['wall_min_ms']:.2f}) |")
    if out["after"].get("ab"):
        md += ["", ("The same comparison in one process of this checkout, interleaved call by call (so both see the "
                    "same load): `solve(solver=\"CLARABEL\")` with Clarabel in this process and in the worker's child "
                    "(median wall, mean CPU as above)."), "",
               "| d | wall in process (ms) | wall isolated (ms) | CPU in process (ms) | CPU isolated (ms) |",
               "|---|---|---|---|---|"]
        for r in out["after"]["ab"]:
            md.append(f"| {r['d']:,} | {r['in this process wall_ms']:.1f} | {r['worker wall_ms']:.1f} | "
                      f"{r['in this process cpu_ms']:.1f} | {r['worker cpu_ms']:.1f} |")
    (out_dir / "worker.md").write_text("\n".join(md) + "\n")


if __name__ == "__main__":
    H.cli(parser(), run)
