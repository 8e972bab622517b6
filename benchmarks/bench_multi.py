"""Consistent 2-way marginals: CALM's consistency step and ldpopt's structured solver vs cvxpy.

    python benchmarks/bench_multi.py          # 10, 12, 16 binary attributes (chain network), Retail top 10, BMS-1 top 12
    python benchmarks/bench_multi.py --quick  # 6 binary attributes (seconds)

Data: ``multi.chain_network`` (n = 10⁵, strength 0.6) and ``multi.item_presence`` (the shipped Retail
and BMS-WebView-1 transactions, the most frequent items as binary attributes). Collection: every
2-way marginal (k(k − 1)/2 of them, 4 cells each: d = 2k(k − 1)), each user one marginal, ε = 1,
through OUE (cls, weighted) and GRR (the exact likelihood: one (p, q) for all marginals). Per
objective of :func:`ldpopt.multi.consistency_problem`:

* ``structured``: ``solve_structured`` (ldpopt's dual solver with the shared-cell rows), CPU seconds
  best of 3, its status; ``problem``: ``Problem.solve()`` end to end (the structured solver plus
  ldpopt's check), its status and solver;
* ``cvxpy``: ``Problem.solve(solver="CLARABEL")`` (the referee; gap and feasibility tolerances 1e-12
  for the likelihood's exponential cones, ``TIGHT``), CPU seconds of one run, status and
  max |f − f_structured|;
* ``calm`` (weighted only: CALM's weights): ``calm_consistency`` CPU seconds (best of 3), rounds,
  max |f_calm − f*| against the structured optimum, J(f_calm)/J* − 1, the certificate's duality gap
  at f_calm;
* errors against the true marginals (mean |·| per cell): raw f̃, CALM, the optimum.

Times are CPU seconds (``time.process_time``) on a shared machine. Results: results/multi.json.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchmarks import _harness as H  # noqa: E402
from benchmarks._harness import best_cpu  # noqa: E402
from ldpopt import multi  # noqa: E402
from ldpopt.problems.solvers.structured import solve_structured  # noqa: E402

# Clarabel's own tolerances on the exponential cones stop ~1e-4 from the optimum, which ldpopt's check
# rejects ("inaccurate"); at these it is certified optimal (measured at k = 10: 4.7e-10 from ldpopt's)
TIGHT = {"likelihood": {"tol_gap_abs": 1e-12, "tol_gap_rel": 1e-12, "tol_feas": 1e-12}}


def datasets(quick: bool):
    if quick:
        return [("chain k=6", multi.chain_network(20_000, 6, strength=0.6, rng=1))]
    return [(f"chain k={k}", multi.chain_network(100_000, k, strength=0.6, rng=1)) for k in (10, 12, 16)] + [
        ("retail top 10", multi.item_presence("retail", 10)),
        ("bms-webview-1 top 12", multi.item_presence("bms-webview-1", 12))]


def _mae(f, truth):
    return float(np.mean(np.abs(f - truth)))


def one(label, data, objective, oracle, seed=7):
    est = multi.calm(data.domains, 1.0, way=2, oracle=oracle).simulate(data, seed)
    truth = est.truth(data)
    pr = multi.consistency_problem(est, objective)
    t_s, r = best_cpu(lambda: solve_structured(pr.estimate, pr.objective, pr.constraints), 3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t_p, sp = best_cpu(lambda: multi.consistency_problem(est, objective).solve(), 3)
        t_c, sc = best_cpu(lambda: multi.consistency_problem(est, objective).solve(solver="CLARABEL", **TIGHT.get(objective, {})), 1)
    row = {"data": label, "k": data.k, "n": data.n, "objective": objective, "oracle": oracle,
           "d": est.marginals.size, "rows": int(est.marginals.agreement().shape[0]),
           "structured": {"cpu_s": t_s, "status": r.status, "iterations": r.iterations},
           "problem": {"cpu_s": t_p, "status": sp.status, "solver": sp.solver},
           "cvxpy": {"cpu_s": t_c, "status": sc.status,
                     "max_abs_diff": float(np.max(np.abs(sc.f - r.f))) if np.all(np.isfinite(sc.f)) else None},
           "mae_raw": _mae(est.f_tilde, truth), "mae_opt": _mae(r.f, truth),
           "negative_raw_cells": int(np.count_nonzero(est.f_tilde < 0))}
    if objective == "weighted":
        t_k, ck = best_cpu(lambda: multi.calm_consistency(est), 3)
        cert = multi.certify(est, ck.f)
        vec, obj = pr.estimate, pr.objective
        excess = obj.value(ck.f, vec) / obj.value(r.f, vec) - 1.0
        row["calm"] = {"cpu_s": t_k, "rounds": ck.rounds, "converged": ck.converged,
                       "max_abs_diff_to_opt": float(np.max(np.abs(ck.f - r.f))), "gap": cert.gap,
                       "objective_excess_rel": excess,
                       "feasible": cert.feasible, "max_negative": ck.max_negative,
                       "max_disagreement": ck.max_disagreement}
        row["mae_calm"] = _mae(ck.f, truth)
    return row


def run(quick: bool = False, **opts) -> dict:
    """``--quick``: 6 binary attributes."""
    a = H.options(H.parser(__doc__), "bench_multi.py", quick, opts)
    rows = []
    for label, data in datasets(quick):
        for objective, oracle in (("cls", "oue"), ("weighted", "oue"), ("likelihood", "grr")):
            row = one(label, data, objective, oracle)
            rows.append(row)
            s, p, c = row["structured"], row["problem"], row["cvxpy"]
            extra = ""
            if "calm" in row:
                k = row["calm"]
                extra = (f" calm={k['cpu_s'] * 1e3:.1f}ms rounds={k['rounds']} |calm-opt|={k['max_abs_diff_to_opt']:.1e}"
                         f" J_calm/J*-1={k['objective_excess_rel']:.1e} mae_calm={row['mae_calm']:.4f}")
            diff = c["max_abs_diff"]
            print(f"{label:22s} {objective:10s} d={row['d']:4d} rows={row['rows']:4d} "
                  f"structured={s['cpu_s'] * 1e3:.1f}ms[{s['status']}] Problem.solve={p['cpu_s']:.3f}s[{p['status']}] "
                  f"clarabel={c['cpu_s']:.3f}s[{c['status']}] diff={(diff if diff is not None else float('nan')):.1e} "
                  f"mae raw={row['mae_raw']:.4f} opt={row['mae_opt']:.4f}{extra}", flush=True)
            H.save("multi", a, {"rows": rows})  # after every row: a cut-short run keeps them
    return H.save("multi", a, {"rows": rows})


if __name__ == "__main__":
    H.cli(H.parser(__doc__), run)
