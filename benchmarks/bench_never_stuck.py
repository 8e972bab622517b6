"""Never stuck, never escapes: each case in a fresh Python process, against an ldpopt tree given on the
command line (this checkout, or an older one for the "before" column).

Cases (one repetition each: an escape or a hang is a yes/no, a time limit a bound):

- ``escape-objective``: CLS + 0.5·‖f − p‖∞ (``cp.norm(·, "inf")``), d = 50 — did ``solve()`` raise?
- ``escape-ball``: the simplex and an empty ℓ∞ ball ``cp.norm(f − 0.5, "inf") <= 0.01``, d = 50.
- ``warm-then-limited``: CLS + a PSD quadratic at d = 200, one ``solve(solver="CLARABEL")`` without a
  limit (Clarabel's thread pool now in the process), the user's own cvxpy + Clarabel call, then
  ``solve(time_limit=8)``: its status and wall clock.
- ``worker-cost``: the worker's start, and a call through it and through a direct fork (10 calls).
- ``cumsum-limit``: CLS + five ``cp.cumsum`` rows, a 1 s limit, at the d given by ``--cumsum-d``
  (default 2,000): the call's wall clock against limit + max(1 s, 10 %).
- ``infball-limit``: the simplex and a user ℓ∞ ball ``cp.norm(f − c, "inf") <= r`` around a point of
  the simplex, CLS, a 3 s limit, at the same d: the same bound.
- ``cumsum-objective-limit``: ``c @ f + 0.01·norm1(cumsum(f))`` (a running sum in the objective), a
  3 s limit, at the same d: the same bound.

Run: ``PYTHONPATH=. python benchmarks/bench_never_stuck.py --tree . --label after`` and
``--tree /path/to/older/checkout --label before``; results merged into
``benchmarks/results/never_stuck.json`` under the label. Each case is killed at ``--case-timeout``
seconds (default 120; recorded as such).
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import _harness as H

HERE = Path(__file__).resolve().parent

COMMON = """
import json, time, warnings
import numpy as np, cvxpy as cp
warnings.simplefilter("ignore")
import ldpopt
from ldpopt.problems import Problem, Simplex
def report(**kw):
    print("RESULT " + json.dumps(kw), flush=True)
"""

CASES = {
    "escape-objective": """
rng = np.random.default_rng(0); d = 50
est = ldpopt.oracles.get("grr", 1.0, d).simulate(rng.multinomial(20000, rng.dirichlet(np.ones(d))), rng=0)
p = np.full(d, 1 / d)
t = time.perf_counter()
try:
    s = Problem(est, lambda f, e: cp.sum_squares(f - e.f_tilde) + 0.5 * cp.norm(f - p, "inf")).solve(progress=False)
    report(raised=None, status=s.status, seconds=time.perf_counter() - t)
except Exception as exc:
    report(raised=type(exc).__name__, status=None, seconds=time.perf_counter() - t)
""",
    "escape-ball": """
rng = np.random.default_rng(0); d = 50
est = ldpopt.oracles.get("grr", 1.0, d).simulate(rng.multinomial(20000, rng.dirichlet(np.ones(d))), rng=0)
t = time.perf_counter()
try:
    s = Problem(est, "cls", [Simplex(), lambda f, e: cp.norm(f - 0.5, "inf") <= 0.01]).solve(progress=False)
    report(raised=None, status=s.status, seconds=time.perf_counter() - t)
except Exception as exc:
    report(raised=type(exc).__name__, status=None, seconds=time.perf_counter() - t)
""",
    "warm-then-limited": """
rng = np.random.default_rng(3); d = 200
est = ldpopt.Estimate.from_counts(rng.multinomial(5000, rng.dirichlet(np.ones(d))), n=5000, epsilon=2.0,
                                  p=0.7, q=0.3 / (d - 1))
M = rng.standard_normal((d, d)); Q = M @ M.T / d + 1e-2 * np.eye(d); Q = (Q + Q.T) / 2
obj = lambda f, e: cp.sum_squares(f - e.f_tilde) + cp.quad_form(f, Q)
t = time.perf_counter(); Problem(est, obj).solve(solver="CLARABEL", progress=False); warm = time.perf_counter() - t
x = cp.Variable(d)
cp.Problem(cp.Minimize(cp.sum_squares(x - est.f_tilde) + cp.quad_form(x, Q)), [x >= 0, cp.sum(x) == 1]).solve(solver="CLARABEL")
t = time.perf_counter()
s = Problem(est, obj).solve(time_limit=8.0, progress=False)
report(warm_seconds=warm, status=s.status, seconds=time.perf_counter() - t, limit=8.0,
       err=float(np.max(np.abs(s.f - x.value))) if np.all(np.isfinite(s.f)) else None)
""",
    "worker-cost": """
import os
from ldpopt.problems import worker
worker.clean = lambda: False
t = time.perf_counter(); worker.call(os.getpid); first = time.perf_counter() - t
ts = []
for _ in range(10):
    t = time.perf_counter(); worker.call(os.getpid); ts.append(time.perf_counter() - t)
worker.clean = lambda: True
if hasattr(worker, "forks_directly"):  # a direct fork only until the server runs, in this tree
    worker.forks_directly = lambda: True
fs = []
for _ in range(10):
    t = time.perf_counter(); worker.call(os.getpid); fs.append(time.perf_counter() - t)
report(start_seconds=worker._SERVER.start_seconds, first_call=first, worker_call_median=float(np.median(ts)),
       worker_call_max=max(ts), direct_fork_median=float(np.median(fs)), direct_fork_max=max(fs))
""",
    "cumsum-limit": """
import sys
d = int(sys.argv[1]); limit = 1.0
rng = np.random.default_rng(0)
est = ldpopt.oracles.get("grr", 2.0, d).simulate(rng.multinomial(10 * d, rng.dirichlet(np.ones(d))), rng=0)
ks = np.sort(rng.choice(d, 5, replace=False))
t = time.perf_counter()
s = Problem(est, "cls", [Simplex(), lambda f, e: cp.cumsum(f)[ks] <= (ks + 1) / d * 1.2]).solve(time_limit=limit,
                                                                                                progress=False)
w = time.perf_counter() - t
report(d=d, limit=limit, seconds=w, status=s.status, solver=s.solver, within=w <= limit + max(1.0, 0.1 * limit))
""",
    "infball-limit": """
import sys
d = int(sys.argv[1]); limit = 3.0
rng = np.random.default_rng(1)
est = ldpopt.oracles.get("grr", 2.0, d).simulate(rng.multinomial(10 * d, rng.dirichlet(np.ones(d))), rng=0)
c = rng.dirichlet(np.ones(d))
t = time.perf_counter()
s = Problem(est, "cls", [Simplex(), lambda f, e: cp.norm(f - c, "inf") <= 0.5 / d]).solve(time_limit=limit,
                                                                                          progress=False)
w = time.perf_counter() - t
report(d=d, limit=limit, seconds=w, status=s.status, solver=s.solver, within=w <= limit + max(1.0, 0.1 * limit))
""",
    "cumsum-objective-limit": """
import sys
d = int(sys.argv[1]); limit = 3.0
rng = np.random.default_rng(2)
est = ldpopt.oracles.get("grr", 2.0, d).simulate(rng.multinomial(10 * d, rng.dirichlet(np.ones(d))), rng=0)
cost = rng.standard_normal(d)
t = time.perf_counter()
s = Problem(est, lambda f, e: cost @ f + 0.01 * cp.norm1(cp.cumsum(f))).solve(time_limit=limit, progress=False)
w = time.perf_counter() - t
report(d=d, limit=limit, seconds=w, status=s.status, solver=s.solver, within=w <= limit + max(1.0, 0.1 * limit))
""",
}


def run_case(name: str, tree: str, timeout: float, cumsum_d: int) -> dict:
    env = {**os.environ, "PYTHONPATH": str(Path(tree).resolve())}
    code = textwrap.dedent(COMMON) + textwrap.dedent(CASES[name])
    t0 = time.perf_counter()
    try:
        # run from the tree itself: ``python -c`` puts the working directory first on sys.path
        proc = subprocess.run([sys.executable, "-c", code, str(cumsum_d)], env=env, capture_output=True, text=True,
                              timeout=timeout, check=False, cwd=Path(tree).resolve())
    except subprocess.TimeoutExpired:
        return {"killed_after": timeout}
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("RESULT ")]
    if not lines:
        return {"returncode": proc.returncode, "stderr": proc.stderr[-400:], "seconds": time.perf_counter() - t0}
    return json.loads(lines[-1][len("RESULT "):])


def parser():
    ap = H.parser(__doc__)
    ap.add_argument("--tree", default=str(HERE.parent), help="the ldpopt checkout to run (default: this one)")
    ap.add_argument("--label", default="after", help="the column the results are merged under")
    ap.add_argument("--cases", nargs="*", default=list(CASES), help="which cases (default: all)")
    ap.add_argument("--case-timeout", type=float, default=120.0, help="seconds before a case is killed")
    ap.add_argument("--cumsum-d", type=int, default=2000, help="d of the cases with a time limit (cumsum-limit, infball-limit, cumsum-objective-limit)")
    return ap


def run(quick: bool = False, **opts) -> dict:
    args = H.options(parser(), "bench_never_stuck.py", quick, opts)
    cumsum_d = 200 if args.quick else args.cumsum_d
    got = {name: run_case(name, args.tree, args.case_timeout, cumsum_d) for name in args.cases}
    for name, r in got.items():
        print(f"{args.label:8s} {name:20s} {r}")
    out = H.results_dir(args) / "never_stuck.json"
    old = json.loads(out.read_text()) if out.exists() else {}
    old.setdefault(args.label, {}).update(got)
    old.setdefault("machine", {})[args.label] = {"python": platform.python_version(), "cpus": os.cpu_count(),
                                                 "load": os.getloadavg()[0], "date": time.strftime("%Y-%m-%d %H:%M"),
                                                 "command": args.command}
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(old, indent=1, sort_keys=True) + "\n")
    return old


if __name__ == "__main__":
    H.cli(parser(), run)
