"""Central noise: ldpopt's post-processing against what deployments do, on the same noisy counts.

Accuracy. Per dataset (Zipf s = 1.1 with d = 1,000 and n = 10⁵; the shipped real datasets, item
counts), per mechanism (Laplace, discrete Laplace, Gaussian, discrete Gaussian) and per scale giving
ε ∈ {0.1, 0.5, 1, 2} under add-remove (the Laplace ones b = 1/ε; the Gaussian ones the σ whose exact ε
at δ = 10⁻⁶ is ε), R ≥ 30 draws of the noise on the exact counts, n known. Methods on each draw:
``base`` (c̃/n), ``norm-sub``, ``weighted`` (``Problem(est, "weighted-mle")``: CLS for central noise),
``central-mle`` (``Problem(est, "central-mle")``: L1 for the Laplace mechanisms, CLS for the Gaussian
ones; not run where the L1 LP has d > 5,000, where the policy's solvers end inaccurate), ``power``
(Jia & Gong's posterior with the mechanism's variance; not run at d > 5,000, its cost), Presto's ``clip-round``, the Census-style
``nnls`` (with the total) and ``nnls-round`` (its rounding to integers keeping n). Metrics (frequency
units): MSE over the domain, MSE over the true top-10, top-10 precision; mean and SE over R draws.

Hierarchy. A Census-like tree: 2¹⁷ = 131,072 leaves under fan-outs 64/64/32 (a range tree of
branching 64: 131,072 → 2,048 → 32 → 1, 133,153 nodes), a Zipf(1.1) population of n = 10⁷ over the
leaves, Gaussian noise σ = 10 on every node. The consistent non-negative fit (CLS over all nodes,
f ≥ 0, parent = Σ children, leaves sum to 1) as a certified ``Problem`` (ldpopt's structured solver)
against the same problem written in cvxpy directly with Clarabel, OSQP and PIQP (their default
tolerances), interleaved over rounds; wall seconds (build + solve), max |f − f_ldpopt|.

Hierarchy accuracy (``--parts hierarchy-accuracy``). The same tree, Gaussian noise at the σ of ε ∈
{0.5, 1}, R draws: the leaves as released, clip-and-round, the NNLS of the leaves alone, Hay et al.'s
closed form and the certified tree fit; MSE of the leaves and of the 2,048 level-1 totals, top-10.

Run: ``python benchmarks/bench_central.py [--quick] [--reps R] [--rounds K] [--parts ...]``. Writes
``central.json``, ``central.md``, ``central_hierarchy.json`` and ``central_hierarchy.md``.
"""

from __future__ import annotations

import functools
import math
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _harness as H

EPSILONS = (0.1, 0.5, 1.0, 2.0)
DELTA = 1e-6
MECHANISMS = ("laplace", "discrete-laplace", "gaussian", "discrete-gaussian")
METHODS = ("base", "norm-sub", "weighted", "central-mle", "power", "clip-round", "nnls", "nnls-round")
K = 10
L1_MAX_D = 5_000
POWER_MAX_D = 5_000   # Power's posterior: 1.2 s per draw at d = 16,470, 4.5 s at 120,978 (measured)


@functools.cache
def scale_for(mech: str, epsilon: float) -> float:
    """b = Δ₁/ε for the pure mechanisms; for the Gaussian ones the σ whose exact ε at δ is ``epsilon``."""
    from scipy import optimize

    from ldpopt.privacy import central

    m = central.get(mech)
    if m.pure:
        return 1.0 / epsilon
    return float(optimize.brentq(lambda s: m.epsilon(s, DELTA) - epsilon, 0.05, 2_000.0, xtol=1e-10, rtol=1e-12))


def datasets(quick: bool) -> list[tuple[str, np.ndarray]]:
    import ldpopt

    if quick:
        return [("zipf", H.zipf_counts(200, 10_000, s=1.1))]
    out = [("zipf", H.zipf_counts(1_000, 100_000, s=1.1))]
    table = ldpopt.datasets.available()
    for _, row in table.iterrows():
        if row["kind"] == "real" and row["present"] and row["mode"] in ("", "item-counts"):
            out.append((row["name"], np.asarray(ldpopt.datasets.load(row["name"], **(
                {"mode": "item-counts"} if row["mode"] else {})).counts, dtype=np.int64)))
    return out


def _apply(method: str, est):
    import ldpopt
    from ldpopt.methods import deployments as baselines

    if method == "base":
        return est.f_tilde
    if method in ("norm-sub", "power"):
        return ldpopt.postprocess(est, method)
    if method == "weighted":
        return ldpopt.Problem(est, "weighted-mle").solve(progress=False).f
    if method == "central-mle":
        sol = ldpopt.Problem(est, "central-mle").solve(progress=False)
        return sol.f if sol.status == "optimal" else None
    return {"clip-round": baselines.clip_round, "nnls": baselines.nnls, "nnls-round": baselines.nnls_round}[method](est)


def accuracy(name: str, counts: np.ndarray, mech: str, epsilon: float, reps: int, seed: int) -> dict:
    from ldpopt.estimate import simulate_central
    from ldpopt.privacy import central

    scale = scale_for(mech, epsilon)
    truth = counts / counts.sum()
    top = np.argsort(-truth, kind="stable")[:K]
    rng = np.random.default_rng(seed)
    per = {m: {"mse": [], "mse_topk": [], "prec_topk": []} for m in METHODS}
    skipped = {}
    var_emp = []
    for _ in range(reps):
        est = simulate_central(counts, mech, scale, rng=rng)
        var_emp.append(float(np.mean((est.counts - counts) ** 2)))
        for m in METHODS:
            if m == "central-mle" and central.get(mech).pure and est.d > L1_MAX_D:
                skipped[m] = f"not run: the L1 LP at d = {est.d} > {L1_MAX_D} ends inaccurate with the policy's solvers"
                continue
            if m == "power" and est.d > POWER_MAX_D:
                skipped[m] = f"not run: d = {est.d} > {POWER_MAX_D} (the posterior's cost per draw)"
                continue
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                f = _apply(m, est)
            if f is None:
                skipped[m] = "solve not optimal"
                continue
            per[m]["mse"].append(float(np.mean((f - truth) ** 2)))
            per[m]["mse_topk"].append(float(np.mean((f[top] - truth[top]) ** 2)))
            got = np.argsort(-f, kind="stable")[:K]
            per[m]["prec_topk"].append(len(set(got) & set(top)) / K)
    rows = []
    for m in METHODS:
        r = {"dataset": name, "d": int(counts.size), "n": int(counts.sum()), "mechanism": mech, "epsilon": epsilon,
             "scale": scale, "method": m, "reps": len(per[m]["mse"])}
        if m in skipped and not per[m]["mse"]:
            r["status"] = skipped[m]
        else:
            r["status"] = "ok"
            for k, v in per[m].items():
                a = np.asarray(v)
                r[k] = float(a.mean())
                r[k + "_se"] = float(a.std(ddof=1) / math.sqrt(a.size)) if a.size > 1 else math.nan
        rows.append(r)
    stated = central.get(mech).variance(scale)
    v = np.asarray(var_emp)
    check = {"dataset": name, "mechanism": mech, "epsilon": epsilon, "scale": scale, "stated_var": stated,
             "empirical_var": float(v.mean()), "empirical_var_se": float(v.std(ddof=1) / math.sqrt(v.size)),
             "cells": int(counts.size * reps)}
    return {"rows": rows, "variance": check}


def hierarchy(rounds: int, quick: bool) -> dict:
    import cvxpy as cp

    import ldpopt
    from ldpopt.estimate import simulate_central
    from ldpopt.problems import range_tree

    d, branching, n, sigma = (4_096, 16, 10**5, 10.0) if quick else (2**17, 64, 10**7, 10.0)
    tree = range_tree(d, branching)
    rng = np.random.default_rng(20240601)
    w = rng.permutation(1.0 / np.arange(1, d + 1) ** 1.1)
    leaves = rng.multinomial(n, w / w.sum())
    nodes = np.rint(tree.node_totals(leaves.astype(np.float64))).astype(np.int64)
    est = ldpopt.Estimate.from_central(simulate_central(nodes, "gaussian", sigma, rng=rng).counts, "gaussian", sigma,
                                       n=n)
    cons = tree.constraints()
    H_ = tree.hierarchy().matrix(tree.size)
    solvers = [s for s in ("CLARABEL", "OSQP", "PIQP") if s in cp.installed_solvers()]
    times: dict[str, list] = {"ldpopt": [], **{s: [] for s in solvers}}
    status: dict[str, str] = {}
    dist: dict[str, float] = {}
    ref = None
    for _ in range(rounds):
        t = time.perf_counter()
        sol = ldpopt.Problem(est, "cls", cons).solve(progress=False)
        times["ldpopt"].append(time.perf_counter() - t)
        status["ldpopt"] = (f"{sol.status} ({sol.solver}; certified: {sol.checks.passed}, "
                            f"distance to the optimum <= {sol.checks.error_bound:.1e})")
        ref = sol.f
        for s in solvers:
            x = cp.Variable(tree.size)
            t = time.perf_counter()
            prob = cp.Problem(cp.Minimize(cp.sum_squares(x - est.f_tilde)),
                              [x >= 0, H_ @ x == 0, cp.sum(x[: tree.d]) == 1])
            try:
                prob.solve(solver=s)
                times[s].append(time.perf_counter() - t)
                status[s] = str(prob.status)
                dist[s] = float(np.max(np.abs(x.value - ref))) if x.value is not None else math.nan
            except cp.SolverError as exc:
                times[s].append(math.nan)
                status[s] = f"solver error: {exc}"
    return {"leaves": d, "nodes": int(tree.size), "level_sizes": [int(v) for v in tree.level_size], "n": n,
            "sigma": sigma, "rounds": rounds,
            "routes": [{"route": k, "median_s": float(np.nanmedian(v)), "min_s": float(np.nanmin(v)),
                        "status": status.get(k, ""), "max_abs_diff_to_ldpopt": dist.get(k, 0.0)}
                       for k, v in times.items()]}


HIER_METHODS = ("base", "clip-round", "leaves-nnls", "hay", "tree-cls")


def hierarchy_accuracy(reps: int, quick: bool) -> dict:
    """The Census-like tree of :func:`hierarchy` (Gaussian σ per ε ∈ {0.5, 1} at δ = 10⁻⁶, noise on every
    node), R draws: the leaves as released (``base``), Presto's clip-and-round of the leaves, the
    Census-style NNLS of the leaves alone (with n), Hay et al.'s consistency (closed form, no sign
    constraint), and the consistent non-negative tree fit (``tree-cls``: the certified ``Problem``).
    Metrics: MSE of the leaves and of the level-1 totals (frequency units), top-10 leaf precision."""
    import ldpopt
    from ldpopt.estimate import simulate_central
    from ldpopt.hierarchy.consistency import consistency
    from ldpopt.methods import deployments as baselines
    from ldpopt.problems import range_tree

    d, branching, n = (4_096, 16, 10**5) if quick else (2**17, 64, 10**7)
    tree = range_tree(d, branching)
    rng = np.random.default_rng(20240602)
    w = rng.permutation(1.0 / np.arange(1, d + 1) ** 1.1)
    leaves = rng.multinomial(n, w / w.sum())
    nodes = np.rint(tree.node_totals(leaves.astype(np.float64))).astype(np.int64)
    truth = nodes / n
    lv1 = slice(int(tree.level_start[1]), int(tree.level_start[1] + tree.level_size[1]))
    top = np.argsort(-truth[:d], kind="stable")[:K]
    rows = []
    for eps in ((1.0,) if quick else (0.5, 1.0)):
        sigma = scale_for("gaussian", eps)
        per = {m: {"mse_leaves": [], "mse_level1": [], "prec_topk": []} for m in HIER_METHODS}
        certified = 0
        for _ in range(reps):
            noisy = simulate_central(nodes, "gaussian", sigma, rng=rng).counts
            # the tree's statement: each user is in one node per level (its ε is the whole release's)
            est = ldpopt.Estimate.from_central(noisy, "gaussian", sigma, n=n, contributions=len(tree.level_size))
            leaf_est = ldpopt.Estimate.from_central(noisy[:d], "gaussian", sigma, n=n)
            sol = ldpopt.Problem(est, "cls", tree.constraints()).solve(progress=False)
            certified += sol.status == "optimal"
            fits = {"base": est.f_tilde,
                    "clip-round": np.concatenate([baselines.clip_round(leaf_est),
                                                  np.maximum(np.round(noisy[d:]), 0) / n]),
                    "leaves-nnls": tree.node_totals(baselines.nnls(leaf_est)),
                    "hay": consistency(tree, est.f_tilde, np.full(tree.size, est.meta["extra_variance"])),
                    "tree-cls": sol.f}
            for m, f in fits.items():
                per[m]["mse_leaves"].append(float(np.mean((f[:d] - truth[:d]) ** 2)))
                per[m]["mse_level1"].append(float(np.mean((f[lv1] - truth[lv1]) ** 2)))
                per[m]["prec_topk"].append(len(set(np.argsort(-f[:d], kind="stable")[:K]) & set(top)) / K)
        for m in HIER_METHODS:
            r = {"epsilon": eps, "sigma": sigma, "method": m, "reps": reps, "certified": certified}
            for k, v in per[m].items():
                a = np.asarray(v)
                r[k] = float(a.mean())
                r[k + "_se"] = float(a.std(ddof=1) / math.sqrt(a.size)) if a.size > 1 else math.nan
            rows.append(r)
        print(f"  hierarchy accuracy eps={eps:g}: {certified}/{reps} certified", flush=True)
    return {"leaves": d, "nodes": int(tree.size), "n": n, "rows": rows}


def hierarchy_markdown(doc: dict) -> str:
    lines = ["# Central noise on a Census-like hierarchy", "",
             (f"{doc['leaves']} leaves, {doc['nodes']} nodes, n = {doc['n']}, Gaussian noise on every node at the σ whose ε for "
              f"one level's histogram is ε (add-remove, δ = 1e-6; the levels together compose to a larger ε); "
              f"{doc['rows'][0]['reps']} draws; mean ± SE."), "",
             "| ε | σ | method | MSE leaves | MSE level-1 totals | top-10 precision |", "|---|---|---|---|---|---|"]
    for r in doc["rows"]:
        lines.append(f"| {r['epsilon']:g} | {r['sigma']:.3g} | {r['method']} | {r['mse_leaves']:.3g} ± "
                     f"{r['mse_leaves_se']:.1g} | {r['mse_level1']:.3g} ± {r['mse_level1_se']:.1g} | "
                     f"{r['prec_topk']:.2f} |")
    return "\n".join(lines) + "\n"


def markdown(doc: dict) -> str:
    lines = ["# Central noise: ldpopt against clip-and-round and NNLS", "",
             (f"R = {doc['reps']} draws per (dataset, mechanism, ε); mean ± SE; MSE in frequency units; "
             f"top-{K}: precision of the top-{K} set."), ""]
    lines += ["## Variance check (stated vs empirical per-cell noise variance, counts²)", "",
              "| dataset | mechanism | ε | scale | stated | empirical ± SE |", "|---|---|---|---|---|---|"]
    for v in doc["variance"]:
        lines.append(f"| {v['dataset']} | {v['mechanism']} | {v['epsilon']:g} | {v['scale']:.4g} | "
                     f"{v['stated_var']:.5g} | {v['empirical_var']:.5g} ± {v['empirical_var_se']:.2g} |")
    lines += ["", "## Accuracy", "", "| dataset | mechanism | ε | " + " | ".join(METHODS) + " |",
              "|---|---|---|" + "---|" * len(METHODS)]
    by = {}
    for r in doc["rows"]:
        by.setdefault((r["dataset"], r["mechanism"], r["epsilon"]), {})[r["method"]] = r
    for (ds, mech, eps), rs in by.items():
        cells = []
        for m in METHODS:
            r = rs[m]
            cells.append("n/a" if r["status"] != "ok" else
                         f"{r['mse']:.3g}±{r['mse_se']:.1g} / {r['prec_topk']:.2f}")
        lines.append(f"| {ds} | {mech} | {eps:g} | " + " | ".join(cells) + " |")
    lines += ["", "Cells: MSE ± SE / top-10 precision.", "", "## Hierarchy", ""]
    h = doc["hierarchy"]
    lines += [(f"{h['leaves']} leaves, {h['nodes']} nodes (levels {h['level_sizes']}), n = {h['n']}, Gaussian σ = "
              f"{h['sigma']} on every node; {h['rounds']} interleaved rounds."), "",
              "| route | median s | min s | status | max abs diff to ldpopt |", "|---|---|---|---|---|"]
    for r in h["routes"]:
        lines.append(f"| {r['route']} | {r['median_s']:.3f} | {r['min_s']:.3f} | {r['status']} | "
                     f"{r['max_abs_diff_to_ldpopt']:.1e} |")
    return "\n".join(lines) + "\n"


def parser():
    ap = H.parser(__doc__)
    ap.add_argument("--reps", type=int, default=30, help="noise draws per (dataset, mechanism, epsilon) (default 30)")
    ap.add_argument("--rounds", type=int, default=3, help="interleaved timing rounds of the hierarchy (default 3)")
    ap.add_argument("--parts", default="accuracy,hierarchy-accuracy",
                    help="what to run: accuracy (flat datasets and the hierarchy timing; central.json), "
                         "hierarchy-accuracy (central_hierarchy.json); comma-separated (default both)")
    return ap


def run(quick: bool = False, **opts) -> dict:
    opts = H.options(parser(), "bench_central.py", quick, opts)
    reps = 3 if opts.quick else opts.reps
    parts = set(opts.parts.split(","))
    if "hierarchy-accuracy" in parts:
        hdoc = hierarchy_accuracy(reps, opts.quick)
        H.save("central_hierarchy", opts, hdoc)
        (H.results_dir(opts) / "central_hierarchy.md").write_text(hierarchy_markdown(hdoc))
    if "accuracy" not in parts:
        return hdoc
    rows, variance = [], []
    for i, (name, counts) in enumerate(datasets(opts.quick)):
        for j, mech in enumerate(MECHANISMS):
            for k, eps in enumerate((1.0,) if opts.quick else EPSILONS):
                t = time.perf_counter()
                out = accuracy(name, counts, mech, eps, reps, seed=1_000 * i + 100 * j + k)
                rows += out["rows"]
                variance.append(out["variance"])
                print(f"  {name} {mech} eps={eps:g}: {time.perf_counter() - t:.1f} s", flush=True)
    hier = hierarchy(1 if opts.quick else opts.rounds, opts.quick)
    doc = {"reps": reps, "k": K, "delta": DELTA, "rows": rows, "variance": variance, "hierarchy": hier}
    saved = H.save("central", opts, doc)
    (H.results_dir(opts) / "central.md").write_text(markdown(doc))
    return saved


if __name__ == "__main__":
    H.cli(parser(), run)
