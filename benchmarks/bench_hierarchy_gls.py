"""Released hierarchies: linear-time GLS against Problem, cvxpy and the equal-fan-out two passes; the
coverage of every cell's interval per band; the correction flags on the real world-cities hierarchy.

Timing (``--parts timing``). Range trees (leaves × fan-out) and one random tree (fan-outs 2–20 drawn per
node, leaves at several depths), leaf truths uniform in [100, 1000], Gaussian noise with a random
variance per node (uniform in [1, 100]). Routes, wall seconds (median of ``--rounds``):
``gls`` (``hierarchy.Tree`` layout + ``hierarchy.gls``: the fit and the exact per-node variances),
``two-pass`` (``hierarchy.consistency``, range trees only: the fit alone), ``Problem`` (the weighted
least squares with f >= 0 and the tree rows as a certified ``Problem``: ``fixed-root``, the root fixed at
the GLS value so that ldpopt's structured tree solver applies; ``free``, the route the policy picks),
``cvxpy`` (the unconstrained GLS written in cvxpy directly, the best of Clarabel, OSQP and PIQP at their
default tolerances). Max |x − x_gls| in counts for each. The fit is non-negative at these truths, so the
f >= 0 problems have the GLS optimum.

Coverage (``--parts coverage``). Structures: a range tree (4,096 leaves, fan-out 16), a random tree
(fan-outs 2–20, leaves at several depths, about 5,000 nodes) with a Zipf(1.1) population of 10⁶ over
its leaves, and world-cities (GeoNames, 37,051 nodes, 3.9·10⁹ people). Noise: central Gaussian
(σ = 20 per node), central Laplace (b = 20), and local: each user reports her node at one of the
levels below the root (chosen uniformly; OUE at ε = 2 over that level's nodes; the root = n is public),
node count = n·f̃ with the plug-in variance (Eq. 2 at the clipped f̃ plus the split's sampling term).
Releases: ``gls`` (exact SE, normal interval) and ``gls-clip-round`` (GLS, leaves rounded and clipped at
0, totals re-summed; the parametric bootstrap through the noise source's own sampler, basic interval).
Bands: the nodes' true totals in thirds (small / medium / large). Measured: the share of (node, draw)
pairs whose 95 % interval holds the truth, with its binomial SE (draws independent; nodes within a draw
are correlated, so the SE is a lower bound).

Flags (``--parts flags``). world-cities under central Gaussian noise (σ = 20): the flagged cells of the
GLS and of its clip-and-round release, as measured and after ten city measurements are corrupted by
+50σ each (a data error): how many flagged, how many of the corrupted ten.

Attacks (``--parts attacks``). ldpopt's hierarchical histogram (``hierarchy.collect``: 1,024 values, fan-out 4,
OUE at ε = 1, n = 10⁶ Zipf(1.1) users split over the five collected levels), a random target range of 64
values, m = β·n fake users (``hierarchy.attacks.poison``: ``optimal``, every fake report at the level and
with the bits that raise the consistent answer most; ``consistent``, spread over the levels, the bits of
the range's nodes set). Gain per fake user: the range answer's change × (n + m)/m (a genuine user in the
range: about 1), for the consistent answer (GLS) and Norm-Sub of the consistent leaves; detection: the GLS
goodness-of-fit χ² test at p < 0.01 (false alarms: the same test on the clean draw); recovery:
``refit_without_worst_level`` (and Norm-Sub of its clipped leaves).

Run: ``python benchmarks/bench_hierarchy_gls.py [--quick] [--parts timing,coverage,flags,attacks] [--rounds K]
[--reps R] [--max-leaves L] [--attack-reps R]``. Writes ``hierarchy_gls_PART.json`` per part run and ``hierarchy_gls.md`` from every part's file present.
"""

from __future__ import annotations

import functools
import json
import math
import sys
import time
import warnings
import zlib
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _harness as H


def random_parent(n_internal_target: int, rng, lo: int = 2, hi: int = 20, leaf_prob: float = 0.35):
    """A random tree grown level by level: each node of the frontier gets lo..hi children; each child
    stops as a leaf with ``leaf_prob`` (leaves at several depths) until about the target node count."""
    parent = [-1]
    frontier = np.array([0])
    while frontier.size and len(parent) < n_internal_target:
        k = rng.integers(lo, hi + 1, frontier.size)
        kids_par = np.repeat(frontier, k)
        start = len(parent)
        parent.extend(kids_par.tolist())
        kids = np.arange(start, start + kids_par.size)
        frontier = kids[rng.random(kids.size) > leaf_prob]
    return np.asarray(parent, dtype=np.int64)


# --- timing -------------------------------------------------------------------------------------

def _cvxpy_gls(groups_matrix, y, s, solver):
    import cvxpy as cp

    x = cp.Variable(y.size)
    prob = cp.Problem(cp.Minimize(cp.sum_squares(cp.multiply(1 / np.sqrt(s), x - y))), [groups_matrix @ x == 0])
    prob.solve(solver=solver)
    return x.value, str(prob.status)


def timing(rounds: int, quick: bool, max_leaves: int) -> list[dict]:
    import cvxpy as cp

    import ldpopt
    from ldpopt.hierarchy import Tree, consistency, gls
    from ldpopt.problems import Fixed, Hierarchy, NonNegative, range_tree

    configs = [(4_096, 16), (2**17, 64)] if quick else [(4_096, 16), (2**17, 64), (2**17, 8), (10**6, 16),
                                                         (10**7, 16), ("random", 10**6)]
    solvers = [s for s in ("CLARABEL", "OSQP", "PIQP") if s in cp.installed_solvers()]
    rows = []
    for leaves, fan in configs:
        rng = np.random.default_rng(7)
        if leaves == "random":
            par = random_parent(int(fan * 1.2), rng)
            rt = None
        else:
            if leaves > max_leaves:
                continue
            rt = range_tree(leaves, fan)
            par = rt.parent
        t0 = time.perf_counter()
        tree = Tree(par)
        t_layout = time.perf_counter() - t0
        truth = tree.node_totals(rng.integers(100, 1001, tree.size).astype(np.float64))
        s = rng.uniform(1.0, 100.0, tree.size)
        y = truth + rng.standard_normal(tree.size) * np.sqrt(s)
        del truth
        times: dict[str, list] = {"gls": [], "gls with layout": [], "two-pass": [], "Problem fixed-root": [], "Problem free": [],
                                  **{f"cvxpy {v}": [] for v in solvers}}
        diff: dict[str, float] = {}
        status: dict[str, str] = {}
        n_leaves = int(tree.leaves.size)
        big = n_leaves > 2 * 10**5
        for _ in range(rounds):
            t0 = time.perf_counter()
            fit = gls(tree, y, s)                       # the layout built once, as the range tree is
            times["gls"].append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            gls(Tree(par), y, s)
            times["gls with layout"].append(time.perf_counter() - t0)
            x = fit.x
            if rt is not None:
                t0 = time.perf_counter()
                xt = consistency(rt, y, s)
                times["two-pass"].append(time.perf_counter() - t0)
                diff["two-pass"] = float(np.abs(xt - x).max())
                del xt
            if n_leaves <= 10**6:
                root = int(np.flatnonzero(par < 0)[0])
                N = float(x[root])
                est = ldpopt.Estimate.from_central(np.maximum(np.rint(y), 0).astype(np.int64), "gaussian", 1.0,
                                                   n=max(int(N), 1))
                hier = rt.hierarchy() if rt is not None else Hierarchy(tree.groups())
                variants = [("Problem fixed-root", [NonNegative(), Fixed([root], x[root] / N), hier])]
                if not big:
                    variants.append(("Problem free", [NonNegative(), hier]))
                for name, cons in variants:
                    t0 = time.perf_counter()
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        sol = ldpopt.Problem(est, "posterior", cons, mean=y / N, variance=s / N**2).solve(progress=False)
                    times[name].append(time.perf_counter() - t0)
                    diff[name] = float(np.abs(sol.f * N - x).max())
                    status[name] = f"{sol.status} ({sol.solver}; certified: {sol.checks.passed})"
            if n_leaves <= 2**17:
                H_ = (rt.hierarchy() if rt is not None else Hierarchy(tree.groups())).matrix(tree.size)
                for v in solvers:
                    t0 = time.perf_counter()
                    try:
                        xc, st = _cvxpy_gls(H_, y, s, v)
                        times[f"cvxpy {v}"].append(time.perf_counter() - t0)
                        status[f"cvxpy {v}"] = st
                        diff[f"cvxpy {v}"] = float(np.abs(xc - x).max()) if xc is not None else math.nan
                    except cp.SolverError as exc:
                        status[f"cvxpy {v}"] = f"solver error: {exc}"
        cv = {k: float(np.median(v)) for k, v in times.items() if k.startswith("cvxpy") and v
              and math.isfinite(diff.get(k, math.nan)) and diff[k] < 1e-2 * np.abs(y).max()}
        best = min(cv, key=lambda k: cv[k]) if cv else None
        row = {"leaves": n_leaves, "fanout": fan if rt is not None else "2-20 random", "nodes": int(tree.size),
               "depths": tree.n_levels, "layout_s": t_layout,
               "routes": {k: {"median_s": float(np.median(v)), "max_abs_diff": diff.get(k, 0.0),
                              "status": status.get(k, "")} for k, v in times.items() if v},
               "best_cvxpy": best}
        rows.append(row)
        print(f"  timing {n_leaves} x {row['fanout']}: " + ", ".join(
            f"{k} {v['median_s']:.3g}s" for k, v in row["routes"].items()), flush=True)
    return rows


# --- coverage -----------------------------------------------------------------------------------

class Measure:
    """One noise source on one tree: ``draw(truth_leaves, rng)`` → (y per node, var per node)."""

    def __init__(self, tree, kind: str, scale: float = 20.0, epsilon: float = 2.0):
        from ldpopt.privacy import central

        self.tree, self.kind = tree, kind
        self.depth = tree.depth
        self.root = int(np.flatnonzero(tree.parent < 0)[0])
        if kind in ("gaussian", "laplace"):
            self.mech = central.get(kind)
            self.scale = scale
            self.var = np.full(tree.size, self.mech.variance(scale))
        else:
            import ldpopt

            self.epsilon = epsilon
            self.levels = list(range(1, tree.n_levels))
            is_leaf = np.zeros(tree.size, dtype=bool)
            is_leaf[tree.leaves] = True
            # level k's domain: the nodes of depth k and the leaves above it (a user whose leaf is
            # shallower than k reports that leaf); a shallow leaf is measured at several levels
            self.nodes = [np.flatnonzero((self.depth == k) | (is_leaf & (self.depth < k)) & (self.depth > 0))
                          for k in self.levels]
            self.oracles = [ldpopt.oracles.get("oue", epsilon, int(v.size)) for v in self.nodes]

    def draw(self, leaf_counts: np.ndarray, rng):
        t = self.tree
        x = t.node_totals(leaf_counts.astype(np.float64))
        if self.kind in ("gaussian", "laplace"):
            return x + self.mech.sample(t.size, self.scale, rng), self.var
        L = len(self.levels)
        leaves = t.leaves
        split = rng.multinomial(leaf_counts[leaves].astype(np.int64), np.full(L, 1.0 / L))   # (leaves, L)
        N = float(x[self.root])
        wy = np.zeros(t.size)
        w = np.zeros(t.size)
        for j, (nodes, orc) in enumerate(zip(self.nodes, self.oracles)):
            part = np.zeros(t.size)
            part[leaves] = split[:, j]
            ck = t.node_totals(part)[nodes].astype(np.int64)
            nk = int(ck.sum())
            est = orc.simulate(ck, rng=rng)
            fc = np.clip(est.f_tilde, 0.0, 1.0)
            v = N**2 * (est.variance(fc) + (N - nk) / max((N - 1) * nk, 1.0) * fc * (1 - fc))
            wy[nodes] += N * est.f_tilde / v                 # several levels' measurements of one node:
            w[nodes] += 1.0 / v                              # inverse-variance weighted
        y = np.where(w > 0, wy / np.where(w > 0, w, 1.0), 0.0)
        var = np.where(w > 0, 1.0 / np.where(w > 0, w, 1.0), np.inf)
        y[self.root], var[self.root] = N, 0.0
        return y, var


def _bands(truth):
    q1, q2 = np.quantile(truth, [1 / 3, 2 / 3])
    return {"small": truth <= q1, "medium": (truth > q1) & (truth <= q2), "large": truth > q2}


def _post_clip(tree, var, Y):
    from ldpopt.hierarchy import gls
    from ldpopt.hierarchy.release import clip_round

    return clip_round(tree, gls(tree, Y, var).x)


def _redraw(m, world, Bn, g):
    """The noise source's own sampler around the released world: (nodes, Bn) re-drawn minus world."""
    out = np.empty((world.size, Bn))
    for j in range(Bn):
        yj, _ = m.draw(world.astype(np.int64), g)
        out[:, j] = yj - world
    return out


def coverage(reps: int, boot_reps: int, B: int, quick: bool) -> list[dict]:
    from ldpopt.datasets import world_cities, zipf_probabilities
    from ldpopt.hierarchy import Tree, gls
    from ldpopt.hierarchy.release import clip_round
    from ldpopt.problems import range_tree
    from ldpopt.uncertainty.cells import bootstrap_cells

    rng0 = np.random.default_rng(2026)
    structures = []
    rt = range_tree(1_024 if quick else 4_096, 16)
    structures.append(("range tree", Tree(rt.parent)))
    structures.append(("random tree", Tree(random_parent(1_200 if quick else 5_000, rng0))))
    if not quick:
        ds = world_cities()
        structures.append(("world-cities", Tree(ds.meta["parent"])))
    rows = []
    for sname, tree in structures:
        leaves = tree.leaves
        counts = np.zeros(tree.size, dtype=np.int64)
        if sname == "world-cities":
            counts[leaves] = ds.counts
        else:
            p = zipf_probabilities(leaves.size, 1.1)
            counts[leaves] = rng0.multinomial(10**6, rng0.permutation(p))
        truth = tree.node_totals(counts.astype(np.float64))
        bands = _bands(truth)
        for noise in ("gaussian", "laplace", "local"):
            m = Measure(tree, noise)
            rng = np.random.default_rng(zlib.crc32(f"{sname}|{noise}".encode()))
            names = ("gls", "clip-round bootstrap", "clip-round hull")
            hits = {p: {b: 0 for b in bands} for p in names}
            tot = {p: {b: 0 for b in bands} for p in names}
            width = {p: [] for p in names}
            t0 = time.perf_counter()
            for r in range(reps):
                y, var = m.draw(counts, rng)
                fit = gls(tree, y, var)
                tab = fit.cells(0.95)
                glo, ghi = tab["ci_low"].to_numpy(), tab["ci_high"].to_numpy()
                ivs = {"gls": (glo, ghi)}
                if r < boot_reps:
                    bt = bootstrap_cells(functools.partial(_post_clip, tree, var), y, np.sqrt(var),
                                         sampler=functools.partial(_redraw, m, clip_round(tree, fit.x)),
                                         n_resamples=B, rng=rng)
                    blo, bhi = bt["ci_low"].to_numpy(), bt["ci_high"].to_numpy()
                    ivs["clip-round bootstrap"] = (blo, bhi)
                    ivs["clip-round hull"] = (np.minimum(blo, glo), np.maximum(bhi, ghi))
                for name, (lo, hi) in ivs.items():
                    inside = (lo <= truth) & (truth <= hi)
                    pos = ghi - glo > 0                  # (the exact root of the local tree has width 0)
                    width[name].append(float(np.mean((hi - lo)[pos] / (ghi - glo)[pos])))
                    for b, mask in bands.items():
                        hits[name][b] += int(inside[mask].sum())
                        tot[name][b] += int(mask.sum())
            for post_name in hits:
                for b in bands:
                    k, n = hits[post_name][b], tot[post_name][b]
                    if n == 0:
                        continue
                    pr = k / n
                    rows.append({"structure": sname, "nodes": int(tree.size), "noise": noise, "release": post_name,
                                 "band": b, "band_range": [float(truth[bands[b]].min()), float(truth[bands[b]].max())],
                                 "nominal": 0.95, "measured": pr, "se": math.sqrt(pr * (1 - pr) / n), "cells": n,
                                 "draws": reps if post_name == "gls" else boot_reps,
                                 "mean_width_over_gls": float(np.mean(width[post_name]))})
            print(f"  coverage {sname} {noise}: {time.perf_counter() - t0:.1f} s", flush=True)
    return rows


# --- flags on the real hierarchy ----------------------------------------------------------------

def flags(quick: bool) -> dict:
    from ldpopt.datasets import world_cities
    from ldpopt.hierarchy import Tree, tree_cells

    ds = world_cities()
    tree = Tree(ds.meta["parent"])
    counts = np.zeros(tree.size)
    counts[tree.leaves] = ds.counts
    truth = tree.node_totals(counts)
    labels = ds.meta["node_labels"]
    out = {}
    for noise, scale in (("gaussian", 20.0), ("local", None)):
        m = Measure(tree, noise)
        rng = np.random.default_rng(5)
        y, var = m.draw(counts.astype(np.int64), rng)
        bad = rng.choice(tree.leaves, 10, replace=False)
        for corrupt in (False, True):
            yy = y.copy()
            if corrupt:
                yy[bad] += 50 * np.sqrt(var[bad])
            res = {}
            for post in ("gls", "gls-clip-round"):
                tab = tree_cells(tree, yy, var, post, n_resamples=20 if quick else 100, rng=1,
                                 labels=labels)
                fl = tab["flagged"].to_numpy()
                res[post] = {"flagged": int(fl.sum()), "corrupted_flagged": int(fl[bad].sum()) if corrupt else None,
                             "max_abs_correction_sigma": float(np.nanmax(np.abs(tab["correction_sigma"]))),
                             "max_finite_correction_sigma": float(np.nanmax(np.abs(np.where(
                                 np.isinf(tab["correction_sigma"]), np.nan, tab["correction_sigma"])))),
                             "root_flagged": bool(fl[int(np.flatnonzero(tree.parent < 0)[0])]),
                             **({"residual_z_above_5": int((np.abs(tab["residual_z"]) > 5).sum()),
                                 "corrupted_residual_z_above_5": int((np.abs(tab["residual_z"].to_numpy()[bad]) > 5).sum())
                                 if corrupt else None} if post == "gls" else {}),
                             "examples": [str(v) for v in tab.index[fl][:5]],
                             "share_ci_holds_truth": float(((tab["ci_low"] <= truth) & (truth <= tab["ci_high"])).mean())}
            out[f"{noise} {'corrupted' if corrupt else 'as measured'}"] = res
            print(f"  flags {noise} corrupt={corrupt}: " + ", ".join(f"{k} {v['flagged']}" for k, v in res.items()),
                  flush=True)
    return out


# --- attacks on the hierarchical histogram -------------------------------------------------------

def attacks(reps: int, quick: bool) -> list[dict]:
    from ldpopt import hierarchy
    from ldpopt.datasets import zipf_probabilities
    from ldpopt.hierarchy.attacks import gof_test, poison, refit_without_worst_level

    d, B, n = (256, 4, 10**5) if quick else (1_024, 4, 10**6)
    rng = np.random.default_rng(303)
    counts = rng.multinomial(n, zipf_probabilities(d, 1.1))
    rows = []
    for beta in (0.001, 0.01, 0.05):
        m = max(int(beta * n), 1)
        for strategy in ("optimal", "consistent"):
            rec: dict[str, list] = {k: [] for k in ("gls", "norm-sub", "recovered", "recovered norm-sub",
                                                    "detected", "false_alarm", "level_found")}
            for r in range(reps):
                est = hierarchy.collect(counts, "oue", 1.0, branching=B, rng=rng)
                a = int(rng.integers(0, d - d // 16))
                b = a + d // 16 - 1
                atk = poison(est, a, b, m, strategy)
                pe = atk.estimate
                scale = (n + m) / m
                x0 = hierarchy.consistency(est.tree, est.y, est.var)
                x1 = hierarchy.consistency(pe.tree, pe.y, pe.var)
                ns0 = hierarchy.nonnegative_heuristic(est.tree, est.y, est.var)
                ns1 = hierarchy.nonnegative_heuristic(pe.tree, pe.y, pe.var)
                rec["gls"].append((x1[a:b + 1].sum() - x0[a:b + 1].sum()) * scale)
                rec["norm-sub"].append((ns1[a:b + 1].sum() - ns0[a:b + 1].sum()) * scale)
                xr, k = refit_without_worst_level(pe)
                rec["recovered"].append((xr[a:b + 1].sum() - x0[a:b + 1].sum()) * scale)
                leaves = np.clip(xr[:d], 0, None)
                rec["recovered norm-sub"].append((leaves[a:b + 1].sum() / max(leaves.sum(), 1e-300)
                                                  - ns0[a:b + 1].sum()) * scale)
                rec["level_found"].append(atk.level is not None and k == atk.level)
                rec["detected"].append(gof_test(pe)[2] < 0.01)
                rec["false_alarm"].append(gof_test(est)[2] < 0.01)
            row = {"d": d, "branching": B, "n": n, "epsilon": 1.0, "oracle": "oue", "beta": beta, "fake": m,
                   "strategy": strategy, "reps": reps, "range_length": d // 16}
            for k, v in rec.items():
                arr = np.asarray(v, dtype=np.float64)
                row[k] = float(arr.mean())
                row[k + "_se"] = float(arr.std(ddof=1) / math.sqrt(arr.size)) if arr.size > 1 else math.nan
            rows.append(row)
            print(f"  attack beta={beta} {strategy}: gain gls {row['gls']:.2f}, norm-sub {row['norm-sub']:.2f}, "
                  f"detected {row['detected']:.2f}, recovered {row['recovered']:.2f}", flush=True)
    return rows


# --- report -------------------------------------------------------------------------------------

def markdown(doc: dict) -> str:
    lines = ["# Released hierarchies: linear-time GLS, error bars on every cell, correction flags", "",
             (f"Machine: {doc['machine'].get('cpu', '')}, {doc['machine'].get('cores', '')} cores, load average "
             f"{', '.join(f'{v:.1f}' for v in doc['machine'].get('loadavg', []))} as the timing finished "
             f"(a shared box: timings are noisy); commands: `{doc['command']}`."), ""]
    if doc.get("timing"):
        lines += ["## Timing (wall seconds, median; max |x − x_gls| in counts)", "",
                  ("| leaves | fan-out | nodes | GLS (fit + variances) | GLS with its layout | two-pass (fit) | "
                   "Problem fixed-root | Problem free | best cvxpy | max diff (two-pass / Problem / cvxpy) |"),
                  "|---|---|---|---|---|---|---|---|---|---|"]
        for r in doc["timing"]:
            R = r["routes"]

            def cell(k, R=R):
                return f"{R[k]['median_s']:.3g}" if k in R else "not run"

            best = r["best_cvxpy"]
            bc = f"{R[best]['median_s']:.3g} ({best.split()[1]})" if best else "not run"
            dif = " / ".join(f"{R[k]['max_abs_diff']:.1e}" if k in R else "–"
                             for k in ("two-pass", "Problem fixed-root", best or ""))
            lines.append(f"| {r['leaves']:,} | {r['fanout']} | {r['nodes']:,} | {cell('gls')} | "
                         f"{cell('gls with layout')} | {cell('two-pass')} | "
                         f"{cell('Problem fixed-root')} | {cell('Problem free')} | {bc} | {dif} |")
        lines.append("")
    if doc.get("coverage"):
        lines += ["## Coverage of the 95 % intervals (share of node × draw pairs holding the truth ± binomial SE)",
                  "", "| structure | noise | release | small | medium | large | mean width / GLS's |",
                  "|---|---|---|---|---|---|---|"]
        keyed: dict = {}
        for r in doc["coverage"]:
            keyed.setdefault((r["structure"], r["noise"], r["release"]), {})[r["band"]] = r
        for (s, n, p), bands in keyed.items():
            cells = [f"{bands[b]['measured']:.3f} ± {bands[b]['se']:.4f}" if b in bands else "–"
                     for b in ("small", "medium", "large")]
            wd = next(iter(bands.values()))["mean_width_over_gls"]
            lines.append(f"| {s} | {n} | {p} | " + " | ".join(cells) + f" | {wd:.2f} |")
        lines.append("")
    if doc.get("attacks"):
        lines += ["## Attacks on the hierarchical histogram (gain per fake user, in units of one user's 1/n)", "",
                  ("| β | attack | GLS answer | Norm-Sub answer | detected (χ² p < 0.01) | false alarms | "
                   "after refit without the worst level | its Norm-Sub | level found |"),
                  "|---|---|---|---|---|---|---|---|---|"]
        for r in doc["attacks"]:
            lines.append(f"| {r['beta']:g} | {r['strategy']} | {r['gls']:.2f} ± {r['gls_se']:.2f} | "
                         f"{r['norm-sub']:.2f} ± {r['norm-sub_se']:.2f} | {r['detected']:.2f} | {r['false_alarm']:.2f} | "
                         f"{r['recovered']:.2f} ± {r['recovered_se']:.2f} | {r['recovered norm-sub']:.2f} ± "
                         f"{r['recovered norm-sub_se']:.2f} | {r['level_found']:.2f} |")
        lines.append("")
    if doc.get("flags"):
        lines += ["## Correction flags on world-cities (|x̂ − y| > max(7σ, 1))", "",
                  ("| noise | measurements | release | flagged cells | of the 10 corrupted | root flagged | "
                   "max finite abs(correction)/σ | abs(residual z) > 5 (of the corrupted) |"),
                  "|---|---|---|---|---|---|---|---|"]
        for key, res in doc["flags"].items():
            noise, _, state = key.partition(" ")
            for post, v in res.items():
                c = "–" if v["corrupted_flagged"] is None else v["corrupted_flagged"]
                cz = v.get("corrupted_residual_z_above_5")
                z = f"{v['residual_z_above_5']} ({'–' if cz is None else cz})" if "residual_z_above_5" in v else "–"
                lines.append(f"| {noise} | {state} | {post} | {v['flagged']} | {c} | {v['root_flagged']} | "
                             f"{v['max_finite_correction_sigma']:.2f} | {z} |")
        lines.append("")
    return "\n".join(lines)


def parser():
    ap = H.parser(__doc__)
    ap.add_argument("--parts", default="timing,coverage,flags,attacks",
                    help="comma-separated: timing, coverage, flags, attacks")
    ap.add_argument("--attack-reps", type=int, default=30, help="draws per attack setting (default 30)")
    ap.add_argument("--rounds", type=int, default=3, help="timing rounds (default 3)")
    ap.add_argument("--reps", type=int, default=200, help="draws for the exact GLS coverage (default 200)")
    ap.add_argument("--boot-reps", type=int, default=40, help="draws for the bootstrap coverage (default 40)")
    ap.add_argument("--resamples", type=int, default=100, help="bootstrap resamples per draw (default 100)")
    ap.add_argument("--max-leaves", type=int, default=10**7, help="skip range trees above this many leaves")
    return ap


def run(quick: bool = False, **opts) -> dict:
    opts = H.options(parser(), "bench_hierarchy_gls.py", quick, opts)
    parts = set(opts.parts.split(","))
    work = {"timing": lambda: timing(1 if opts.quick else opts.rounds, opts.quick, opts.max_leaves),
            "coverage": lambda: coverage(10 if opts.quick else opts.reps, 3 if opts.quick else opts.boot_reps,
                                         20 if opts.quick else opts.resamples, opts.quick),
            "flags": lambda: flags(opts.quick),
            "attacks": lambda: attacks(5 if opts.quick else opts.attack_reps, opts.quick)}
    out = H.results_dir(opts)
    for part in ("timing", "coverage", "flags", "attacks"):   # one file per part: each can be rerun alone
        if part in parts:
            H.save(f"hierarchy_gls_{part}", opts, {part: work[part]()})
    doc: dict = {"command": opts.command, "machine": {}}
    for part in ("timing", "coverage", "flags", "attacks"):
        f = out / f"hierarchy_gls_{part}.json"
        if f.exists():
            got = json.loads(f.read_text())
            doc[part] = got[part]
            if part == "timing" or not doc["machine"]:
                doc["machine"] = got["machine"]          # the timing part's machine and load, where run
            doc.setdefault("commands", []).append(got["command"])
    doc["command"] = "; ".join(dict.fromkeys(doc.get("commands", [opts.command])))
    (out / "hierarchy_gls.md").write_text(markdown(doc))
    return doc


if __name__ == "__main__":
    H.cli(parser(), run)
