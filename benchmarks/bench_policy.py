"""Which cvxpy solver should ``Problem.solve()`` use by default, per problem class?

Problem classes (OUE, ε = 1, Zipf(1.5) true counts, n = max(10⁶, 10·d), fast-path estimate):

* ``cls``            CLS on the simplex                      reference: Norm-Sub (closed form)
* ``cls+subset``     CLS, simplex + Σ_{v<d/10} f_v = t        reference: two simplex projections
                     (t = the true head mass)                 (totals t and 1 − t; closed form)
* ``cls+monotone``   CLS, simplex + f_0 ≥ f_1 ≥ … (ordinal)   reference: none (KKT via the checks)
* ``posterior``      Euclidean projection of a posterior mean reference: ``project_simplex(mean)``
* ``weighted-mle``   Eq. 13 (second-order cones)              reference: none

Each (class, d, solver) runs once in a fresh process under a timeout (``_harness.run_process``):
``Problem(...)`` + ``.solve(solver=…)`` as a user runs it, wall and CPU (process_time) seconds of
the whole route (build + cvxpy compile + solver). Columns: status (cvxpy's, as the solver said it),
max |f − reference| and the max constraint violation in frequency units, both recomputed here
with numpy from the returned f (never the solver's own residuals).

Run: ``python benchmarks/bench_policy.py [--quick] [--out benchmarks/results]`` (one run ≲ 10 min;
``--quick`` d = 300 only, in-process). Writes ``<out>/policy.json``.
"""

from __future__ import annotations

import json
import math
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _harness as H  # noqa: E402

EPS = 1.0
DS = (1_000, 10_000, 42_178, 100_000)
QP_SOLVERS = ("PIQP", "CLARABEL", "OSQP")
CONE_SOLVERS = ("CLARABEL", "SCS")
CLASSES = ("cls", "cls+subset", "cls+monotone", "posterior", "weighted-mle")
# measured elsewhere to run past any reasonable timeout (OSQP 133 s to user_limit on the
# monotone variant at d = 1e4, > 150 s on plain CLS at 1e5): run once at the first d that exceeds it
SKIP_AFTER_TIMEOUT = True


def n_for(d: int) -> int:
    return max(10**6, 10 * d)


def plan(quick: bool) -> list[dict]:
    import cvxpy as cp

    inst = set(cp.installed_solvers())
    rows = []
    for d in ((300,) if quick else DS):
        for cls in CLASSES:
            for s in (CONE_SOLVERS if cls == "weighted-mle" else QP_SOLVERS):
                if s in inst:
                    rows.append(dict(d=d, n=10**4 if quick else n_for(d), cls=cls, solver=s))
    return rows


def _instance(cfg):
    import ldpopt
    from ldpopt.methods.normalize import project_simplex
    from ldpopt.problems import Simplex, SubsetSum

    d = cfg["d"]
    counts = H.zipf_counts(d, cfg["n"])
    est = ldpopt.oracles.get("oue", epsilon=EPS, d=d).simulate(counts, 12345, exact=False)
    cls = cfg["cls"]
    kw, ref, viol = {}, None, []
    if cls == "cls":
        ref = ldpopt.postprocess(est, "norm-sub")
    elif cls == "cls+subset":
        head = np.arange(max(1, d // 10))
        t = float(counts[head].sum() / counts.sum())
        kw["constraints"] = [Simplex(), SubsetSum(head, t)]
        ref = np.concatenate([project_simplex(est.f_tilde[head], t), project_simplex(est.f_tilde[head.size:], 1 - t)])
        viol.append(lambda f: abs(float(f[head].sum()) - t))
    elif cls == "cls+monotone":
        kw["constraints"] = [Simplex(), lambda f, e: {"monotone": f[:-1] >= f[1:]}]
        viol.append(lambda f: float(np.max(np.maximum(f[1:] - f[:-1], 0.0))))
    elif cls == "posterior":
        mean = np.abs(est.f_tilde) + 0.1 / d
        kw["mean"] = mean
        ref = project_simplex(mean)
    objective = "cls" if cls.startswith("cls") else cls
    return est, objective, kw, ref, viol


def measure_inproc(cfg: dict) -> dict:
    from ldpopt.problems import Problem

    est, objective, kw, ref, viol = _instance(cfg)
    c0, t0 = H.cpu_clock(), time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        prob = Problem(est, objective, **kw)
        sol = prob.solve(solver=cfg["solver"])
    wall, cpu = time.perf_counter() - t0, H.cpu_clock() - c0
    f = sol.f
    out = {"status": sol.status, "wall": wall, "cpu": cpu, "solve_time": sol.solve_time,
           "iterations": sol.iterations, "max_err": math.nan, "max_violation": math.nan,
           "freq_scale": 1.0 / cfg["d"]}
    if np.all(np.isfinite(f)):
        v = [max(0.0, -float(f.min())), abs(float(f.sum()) - 1.0)] + [g(f) for g in viol]
        out["max_violation"] = float(max(v))
        if ref is not None:
            out["max_err"] = float(np.max(np.abs(f - ref)))
    return out


def parser():
    ap = H.parser(__doc__)
    ap.add_argument("--timeout", type=float, default=45.0, help="seconds per solve (its own process)")
    return ap


def run(quick: bool = False, **opts) -> dict:
    opts = H.options(parser(), "bench_policy.py", quick, opts)
    rows, timed_out = [], set()
    for s in plan(opts.quick):
        row = dict(s)
        if SKIP_AFTER_TIMEOUT and (s["cls"], s["solver"]) in timed_out:
            row.update(status="skipped", error="timed out at a smaller d")
        elif opts.quick:
            row.update(measure_inproc(s))
        else:
            row.update(H.in_child(__file__, s, opts.timeout))
            if row["status"] == "timeout":
                timed_out.add((s["cls"], s["solver"]))
        rows.append(row)
        print(f"  d={row['d']:>7} {row['cls']:>13} {row['solver']:>8}: {row['status']:>18} "
              f"wall {H.fmt_seconds(row.get('wall'))} cpu {H.fmt_seconds(row.get('cpu'))} "
              f"err {row.get('max_err', math.nan):.1e} viol {row.get('max_violation', math.nan):.1e}", flush=True)
    return H.save("policy", opts, {"epsilon": EPS, "oracle": "oue", "zipf_s": 1.5, "timeout": opts.timeout,
                                   "rows": rows})


if __name__ == "__main__":
    H.main(parser(), run, lambda cfg: print(json.dumps(measure_inproc(cfg), default=float)))
