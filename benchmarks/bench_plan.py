"""How honest is ``ldpopt.plan``? Its prediction against independent simulation, and its time.

Predicted: ``ldpopt.plan(d, n, ε, prior)`` (closed forms for Base and Norm, R = 20 draws for the rest,
seed 0). Simulated: ``ldpopt.planning.simulate`` at the *true* distribution with other draws (R = 40, seed
1000 + cell). Two strata of prior: ``exact`` (the planner is given the true distribution: the error is
the Monte Carlo's and the closed forms') and ``sample`` (the planner is given an add-one smoothed
histogram of a public sample of 2,000 values of the truth: the error a real plan makes). Grid: ε ∈ {0.5,
1, 2, 4}; d ∈ {100, 1000}; truths Zipf 1.1 and 1.5, Beta(5, 2) and Beta(0.5, 0.5), the Emoji and
BMS-WebView-1 counts (their d most frequent values), flat, and five tied heads (d = 1000 at ε = 1 and 4
only); n = 10⁵; queries full, topk:10, subsets:10:20 and hh:0.01; the closed-form methods on GRR, OUE,
OLH, RLH, HR, SS and RWS. The planner was
written against Zipf 1.5 only; every other truth is unseen. A third stratum, ``central``: the four
central-noise mechanisms (``mechanism=``, scale calibrated to ε at δ = 0 for the Laplace ones, 10⁻⁶ for the
Gaussian ones, add-remove) × ε ∈ {0.5, 1} × d = 100 × truths Zipf 1.5, Beta(5, 2), flat and five tied
heads, the planner given the truth, simulated with ``simulate(..., mechanism=...)`` (R = 40, other seeds).

Per row: relative error predicted/simulated − 1 with its SE (delta method over both SEs); for hh
(1 − F1, often 0) the absolute difference. Summary per (stratum, method family, query family): median
and 90th percentile of |relative error|, median SE. Timing: ``plan`` at d = 10², 10³, 10⁴, 10⁵ (n =
10⁶, ε = 1, Zipf 1.5, full query, every pure oracle, no target) and with a target (OUE, OLH, GRR).

Run: ``python benchmarks/bench_plan.py [--quick]``. Writes ``results/plan.json``.
"""

from __future__ import annotations

import math
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _harness as H

#: method families of the summary
FAMILY = {"base": "unbiased (Base, Norm)", "norm": "unbiased (Base, Norm)", "base-pos": "clipping (Base-Pos, Base-Cut)",
          "base-cut": "clipping (Base-Pos, Base-Cut)", "norm-sub": "simplex (Norm-Sub, MLE-Apx, Norm-Hyb)",
          "mle-apx": "simplex (Norm-Sub, MLE-Apx, Norm-Hyb)", "norm-hyb": "simplex (Norm-Sub, MLE-Apx, Norm-Hyb)",
          "norm-mul": "rescaling (Norm-Mul, Norm-Cut)", "norm-cut": "rescaling (Norm-Mul, Norm-Cut)"}
QUERIES = ["full", "topk:10", "subsets:10:20", "hh:0.01"]
TRUTHS = ["zipf:1.1", "zipf:1.5", "beta:5,2", "beta:0.5,0.5", "emoji", "bms-webview-1", "uniform", "tied:5"]
SAMPLE = 2000


def parser():
    ap = H.parser(__doc__)
    ap.add_argument("--n", type=int, default=10**5, help="users per cell (default 1e5)")
    ap.add_argument("--part", choices=("all", "accuracy", "central", "timing"), default="all",
                    help="run one part only (written as plan_accuracy.json, plan_central.json or plan_timing.json)")
    return ap


def _qfamily(qs: str) -> str:
    return qs.split(":")[0]


#: the oracles of the accuracy grid: one of each kind (SUE, RUE and BLH share OUE's, RLH's and OLH's
#: variance form); every pure oracle is timed
GRID_ORACLES = ["grr", "oue", "olh", "rlh", "hr", "ss", "rws"]


def _cells(quick: bool):
    if quick:
        return [(1.0, 100, t) for t in ("zipf:1.5", "beta:5,2", "emoji")]
    # d = 100 over the four budgets; d = 1000 at ε = 1 and 4 (the grid's cost on a shared two-core machine)
    return ([(e, 100, t) for e in (0.5, 1.0, 2.0, 4.0) for t in TRUTHS]
            + [(e, 1000, t) for e in (1.0, 4.0) for t in TRUTHS])


def accuracy(quick: bool, n: int) -> list[dict]:
    import ldpopt
    from ldpopt.planning import prior_histogram, simulate

    oracles = ["grr", "oue", "olh"] if quick else GRID_ORACLES
    rows = []
    for c, (eps, d, truth) in enumerate(_cells(quick)):
        t0 = time.perf_counter()
        f, _ = prior_histogram(truth, d)
        sim = simulate(d, n, eps, f, QUERIES, oracles=oracles, n_repeats=40, rng=1000 + c)
        sim = {(r.oracle, r.method, r.query): (r.mse, r.se) for r in sim.itertuples()}
        sample = np.random.default_rng(2000 + c).choice(d, size=SAMPLE, p=f)
        for stratum, prior in (("exact", f), ("sample", ("sample", sample))):
            p = ldpopt.plan(d, n, eps, prior, QUERIES, oracles=oracles, n_repeats=20, rng=c)
            rows += [_compare(stratum, eps, d, truth, r, sim) for r in p.table.itertuples()]
        print(f"  ε={eps:g} d={d} {truth}: {time.perf_counter() - t0:.1f} s", flush=True)
    return rows


def _compare(stratum: str, eps: float, d: int, truth: str, r, sim: dict) -> dict:
    """One plan row against the independent simulation ``sim`` {(oracle, method, query): (loss, SE)}."""
    s, s_se = sim[(r.oracle, r.method, r.query)]
    hh = r.query.startswith("hh")
    if hh:
        err, err_se = r.expected_mse - s, math.hypot(r.se, s_se)
    else:
        err = r.expected_mse / s - 1 if s > 0 else math.nan
        err_se = math.hypot(r.se / s, r.expected_mse * s_se / s**2) if s > 0 else math.nan
    return {"stratum": stratum, "epsilon": eps, "d": d, "truth": truth, "oracle": r.oracle,
            "method": r.method, "family": FAMILY.get(r.method, r.method), "query": _qfamily(r.query),
            "how": "exact" if r.how == "exact" else "simulated",
            "predicted": r.expected_mse, "predicted_se": r.se, "simulated": s, "simulated_se": s_se,
            "error": err, "error_se": err_se, "error_kind": "absolute" if hh else "relative"}


#: the central stratum's truths (d = 100)
CENTRAL_TRUTHS = ["zipf:1.5", "beta:5,2", "uniform", "tied:5"]


def central(quick: bool, n: int) -> list[dict]:
    """The central stratum: the planner (given the truth) against ``simulate(..., mechanism=)``."""
    import ldpopt
    from ldpopt.planning import prior_histogram, simulate
    from ldpopt.privacy.central import MECHANISMS

    rows = []
    cells = [(e, t) for e in ((1.0,) if quick else (0.5, 1.0)) for t in (CENTRAL_TRUTHS[:1] if quick else CENTRAL_TRUTHS)]
    for c, (eps, truth) in enumerate(cells):
        t0 = time.perf_counter()
        f, _ = prior_histogram(truth, 100)
        for mech in MECHANISMS:
            sim = simulate(100, n, eps, f, QUERIES, mechanism=mech, n_repeats=40, rng=3000 + c)
            sim = {(r.oracle, r.method, r.query): (r.mse, r.se) for r in sim.itertuples()}
            p = ldpopt.plan(100, n, eps, f, QUERIES, mechanism=mech, n_repeats=20, rng=c)
            rows += [_compare("central", eps, 100, truth, r, sim) | {"scale": p.central[mech]["scale"]}
                     for r in p.table.itertuples()]
        print(f"  central ε={eps:g} {truth}: {time.perf_counter() - t0:.1f} s", flush=True)
    return rows


def summary(rows: list[dict]) -> list[dict]:
    out = []
    keys = sorted({(r["stratum"], r["family"], r["query"]) for r in rows})
    for st, fam, q in keys:
        sel = [r for r in rows if (r["stratum"], r["family"], r["query"]) == (st, fam, q) and np.isfinite(r["error"])]
        if not sel:
            continue
        e = np.abs([r["error"] for r in sel])
        se = np.array([r["error_se"] for r in sel])
        out.append({"stratum": st, "family": fam, "query": q, "rows": len(sel), "error_kind": sel[0]["error_kind"],
                    "median_abs_error": float(np.median(e)), "p90_abs_error": float(np.quantile(e, 0.9)),
                    "max_abs_error": float(e.max()), "median_se": float(np.nanmedian(se)),
                    "within_3se": float(np.mean(e <= 3 * se + 1e-12))})
    return out


def per_oracle(rows: list[dict]) -> list[dict]:
    """Predicted vs simulated per oracle × method × query family (exact stratum, ε = 1, Zipf 1.5 where run)."""
    out = []
    for r in rows:
        if r["stratum"] == "exact" and r["epsilon"] == 1.0 and r["truth"] == "zipf:1.5" and r["d"] == 100:
            out.append({k: r[k] for k in ("oracle", "method", "query", "how", "predicted", "predicted_se",
                                          "simulated", "simulated_se", "error", "error_se", "error_kind")})
    return out


def timing(quick: bool) -> list[dict]:
    import ldpopt

    out = []
    for d in ([100, 1000] if quick else [100, 1000, 10_000, 100_000]):
        for target, oracles in ((None, None), (1e-6 * 1000 / d, ["oue", "olh", "grr"])):
            t0, c0 = time.perf_counter(), H.cpu_clock()
            p = ldpopt.plan(d, 10**6, 1.0, "zipf:1.5", oracles=oracles, target=target)
            out.append({"d": d, "target": target, "oracles": "all pure" if oracles is None else ",".join(oracles),
                        "rows": len(p.table), "wall": time.perf_counter() - t0, "cpu": H.cpu_clock() - c0})
            print(f"  timing d={d} target={target}: {out[-1]['wall']:.1f} s", flush=True)
    return out


def run(quick: bool = False, **opts) -> dict:
    a = H.options(parser(), "bench_plan.py", quick, opts)
    n = 10**4 if a.quick else a.n
    doc: dict = {"n": n, "queries": QUERIES, "sample": SAMPLE}
    if a.part in ("all", "accuracy"):
        rows = accuracy(a.quick, n)
        doc.update(summary=summary(rows), per_oracle=per_oracle(rows), rows=rows)
    if a.part in ("all", "central"):
        crows = central(a.quick, n)
        doc.update(central_summary=summary(crows), central_rows=crows)
    if a.part in ("all", "timing"):
        doc["timing"] = timing(a.quick)
    return H.save("plan" if a.part == "all" else f"plan_{a.part}", a, doc)


if __name__ == "__main__":
    H.main(parser(), run)
