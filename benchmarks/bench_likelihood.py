"""Exact likelihoods at scale: the sequential-QP route against the exponential-cone solvers.

Instances: ``binomial`` on OUE reports and ``multinomial`` on GRR reports, ε = 1, Zipf(1.5) true
counts, n = max(10⁶, 10·d), fast-path estimate; d ∈ {10³, 10⁴, 42,178, 10⁵}. Constraint sets:
``simplex`` (every route) and ``simplex+monotone10`` (a user callable f_0 ≤ f_1 ≤ … ≤ f_9, active
on Zipf data; SQP only: the point of the route is that it takes any cvxpy constraint).

Routes, each ``Problem(...).solve(solver=…)`` as a user runs it, in a fresh process under a timeout:
``SQP`` (:mod:`ldpopt.problems.solvers.sqp`, the default from d = 300), ``SCS`` at the tightened options
of the policy's fallback (``policy.SCS_TIGHT``; at its defaults SCS fails ldpopt's check at any d),
``CLARABEL`` at d = 10³ only (it fails these problems from d ≈ 500–1,000, ``policy.SQP_MIN_D``).

Columns: status (ldpopt's own check: ``optimal`` only when it passed), wall and CPU seconds
(process_time, all threads) of build + compile + solve, max constraint violation recomputed here
with numpy in frequency units, max |f − f_ref| and the objective gap J(f) − J(f_ref) (computed
without cancellation) against the simplex MLE derived independently here — closed form for the
multinomial (f_v = max(0, t·c_v − q/(p − q))) and a scalar root find on the simplex multiplier for
the binomial; the monotone variant has no reference (—): ldpopt's KKT check is its certificate.

Run: ``python benchmarks/bench_likelihood.py [--quick] [--out DIR] [--timeout S]`` (one full run
≲ 10 min; ``--quick``: d = 300 in this process). Writes ``<out>/likelihood.json``.
"""

from __future__ import annotations

import json
import math
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from scipy import optimize

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _harness as H  # noqa: E402

EPS = 1.0
DS = (1_000, 10_000, 42_178, 100_000)
ORACLE = {"binomial": "oue", "multinomial": "grr"}
SETS = ("simplex", "simplex+monotone10")


def n_for(d: int) -> int:
    return max(10**6, 10 * d)


def plan(quick: bool) -> list[dict]:
    import cvxpy as cp

    inst = set(cp.installed_solvers())
    rows = []
    for obj in ORACLE:
        for d in ((300,) if quick else DS):
            for cset in SETS:
                routes = ["SQP"] if cset != "simplex" else ["SQP", "SCS"] + (["CLARABEL"] if d == 1_000 else [])
                for r in routes:
                    if r == "SQP" or r in inst:
                        rows.append(dict(objective=obj, d=d, n=n_for(d), cset=cset, route=r))
    return rows


def _monotone10(f, est):
    return {"monotone10": f[0:9] <= f[1:10]}


def reference(est, objective) -> np.ndarray:
    """The MLE on the simplex, derived independently of ldpopt's solvers (see the module docstring)."""
    c, n, p, q = est.counts.astype(float), float(est.n), est.p, est.q
    if objective == "multinomial":
        kappa = q / (p - q)
        cs = np.sort(c)[::-1]
        t = (1.0 + kappa * np.arange(1, c.size + 1)) / np.cumsum(cs)
        k = int(np.flatnonzero(t * cs > kappa)[-1])
        return np.maximum(0.0, t[k] * c - kappa)

    def f_of(mu):  # π solving c/π − (n − c)/(1 − π) = μ, cancellation-free root of the quadratic
        disc = np.sqrt((mu + n) ** 2 - 4.0 * mu * c)
        with np.errstate(divide="ignore", invalid="ignore"):
            pi = np.where(c > 0, 2.0 * c / ((mu + n) + disc), np.where(mu + n < 0, 1.0 + n / mu, 0.0))
        return np.maximum(0.0, (pi - q) / (p - q))

    cm = c.max()
    lo, hi = cm / p - (n - cm) / (1 - p) - 1.0, cm / q - (n - cm) / (1 - q) + 1.0
    mu = optimize.brentq(lambda m: f_of(m).sum() - 1.0, lo, hi, xtol=1e-14 * abs(hi), rtol=1e-15, maxiter=500)
    return f_of(mu)


def _instance(cfg):
    import ldpopt

    d, obj = cfg["d"], cfg["objective"]
    counts = H.zipf_counts(d, cfg["n"])
    est = ldpopt.oracles.get(ORACLE[obj], epsilon=EPS, d=d).simulate(counts, 12345, exact=False)
    return est


def measure_inproc(cfg: dict) -> dict:
    from ldpopt.problems import Problem, Simplex
    from ldpopt.problems.objectives.likelihood_terms import terms_for
    from ldpopt.problems.solvers.policy import SCS_TIGHT

    est = _instance(cfg)
    cons = [Simplex(), _monotone10] if cfg["cset"] == "simplex+monotone10" else None
    opts = {"SCS": SCS_TIGHT} if cfg["route"] == "SCS" else {}
    c0, t0 = H.cpu_clock(), time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        prob = Problem(est, cfg["objective"], cons)
        sol = prob.solve(solver=cfg["route"], **opts)
    wall, cpu = time.perf_counter() - t0, H.cpu_clock() - c0
    f = sol.f
    out = {"status": sol.status, "solver": sol.solver, "wall": wall, "cpu": cpu, "iterations": sol.iterations,
           "checks": sol.checks.summary() if sol.checks is not None else "",
           "max_err": math.nan, "gap": math.nan, "max_violation": math.nan, "freq_scale": 1.0 / cfg["d"]}
    if np.all(np.isfinite(f)):
        v = [max(0.0, -float(f.min())), abs(math.fsum(f.tolist()) - 1.0)]
        if cons is not None:
            v.append(float(np.max(np.maximum(f[0:9] - f[1:10], 0.0))))
        out["max_violation"] = float(max(v))
        if cons is None:
            ref = reference(est, cfg["objective"])
            out["max_err"] = float(np.max(np.abs(f - ref)))
            out["gap"] = terms_for(prob.objective, est).change(ref, f - ref)
    return out


def parser():
    ap = H.parser(__doc__)
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds per solve (its own process)")
    return ap


def run(quick: bool = False, **opts) -> dict:
    opts = H.options(parser(), "bench_likelihood.py", quick, opts)
    rows, timed_out = [], set()
    for s in plan(opts.quick):
        row = dict(s)
        key = (s["objective"], s["cset"], s["route"])
        if key in timed_out:
            row.update(status="skipped", error="timed out at a smaller d")
        elif opts.quick:
            row.update(measure_inproc(s))
        else:
            row.update(H.in_child(__file__, s, opts.timeout))
            if row["status"] == "timeout":
                timed_out.add(key)
        rows.append(row)
        print(f"  {row['objective']:>11} d={row['d']:>7} {row['cset']:>18} {row['route']:>8}: {row['status']:>14} "
              f"wall {H.fmt_seconds(row.get('wall'))} cpu {H.fmt_seconds(row.get('cpu'))} "
              f"err {row.get('max_err', math.nan):.1e} gap {row.get('gap', math.nan):.1e} "
              f"viol {row.get('max_violation', math.nan):.1e}", flush=True)
    return H.save("likelihood", opts, {"epsilon": EPS, "zipf_s": 1.5, "timeout": opts.timeout, "rows": rows})


if __name__ == "__main__":
    H.main(parser(), run, lambda cfg: print(json.dumps(measure_inproc(cfg), default=float)))
