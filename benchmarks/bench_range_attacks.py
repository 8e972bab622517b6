"""Range-query poisoning on ldpopt's tree and grid: attack × post-processing → gain per fake user,
detection, recovery.

Tree: ``hierarchy.collect`` (1,024 values, fan-out 4, OUE at ε = 1, n = 10⁶ Zipf(1.1) users split over
the five collected levels), a random target range of 64 values per draw, m = β·n fake users. Posts
(``hierarchy.attacks.POSTS``): none (the cover's raw sum), norm-sub (Norm-Sub per level, then the
cover), gls (consistent), gls-norm-sub (Norm-Sub of the consistent leaves), gls-clip-round (ldpopt's
release). Attacks (``hierarchy.attacks.poison``): input (fake users report values in the range
honestly: a genuine user's influence), consistent (spread over the levels, the range's nodes' bits),
``optimal`` made for each post, and ``padded`` (the optimal report plus random bits up to a genuine
report's expected count: hiding from the bit-count test).

Grid: ``multi.calm(domains=(16, 16), ε = 1, attrs=[(0,), (1,), (0, 1)])`` (the HDG-like layout: two
1-D grids and the 2-D grid, OUE, users split over the three), n = 10⁶ users of one Dirichlet(0.5)
joint (seeded), a random rectangle of 3–8 × 3–8 cells per draw. Posts (``multi.grid_attacks.GRID_POSTS``):
none, norm-sub (of the 2-D grid), consistency (CALM's linear step), calm (consistency and Norm-Sub
iterated: ldpopt's default). Attacks: input, and ``optimal`` and ``padded`` made for each post.

Gain per fake user: the released answer's change × (n + m)/m under each post (a genuine user in the
range: about 1). Detection: the tree's GLS goodness-of-fit χ² (``gof_test``), the grid's agreement χ²
(``grid_gof_test``), at α = 0.01; false alarms: the same test on the clean draw. Also ldpopt's
flat-histogram evidence (``robust.attack_evidence``: the bit-count and negative-mass tests) on each
level or marginal, Bonferroni over them. Recovery: where the
test alarms, the tree is refitted without its worst level (``refit_without_worst_level``, then the
post's answer from the fit) and the grid's blamed marginal is left out (``rake_blamed``); elsewhere the
post's usual answer. Reported: MSE of the target's answer over the draws ÷ the clean MSE (same post,
no attack), poisoned and after recovery. False alarms: each test on ``--clean-draws`` further clean
draws (the grid's from a new Dirichlet joint, α ∈ [0.3, 2], every 20), at α = 0.01 and 0.05 with
Clopper–Pearson intervals.

Run: ``python benchmarks/bench_range_attacks.py [--quick] [--reps R] [--betas 0.001,0.01] [--clean-draws N]``. Writes
``results/range_attacks.json`` (the summary and each draw's p-values and gains) and
``results/range_attacks.md``.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _harness as H

from ldpopt import hierarchy, multi, robust
from ldpopt.hierarchy.attacks import POSTS, answer_from_fit, gof_test, poison, range_answer, refit_without_worst_level
from ldpopt.hierarchy.consistency import level_slices
from ldpopt.multi.grid_attacks import GRID_POSTS, grid_gof_test, poison_grid, rake_blamed, rect_answer

ALPHA = 0.01


def flat_evidence_tree(est) -> float:
    """ldpopt's flat-histogram poisoning evidence (``robust.attack_evidence``) on each collected level,
    Bonferroni over the levels (the level's support counts rebuilt from its estimate)."""
    lv, ps = level_slices(est.tree), []
    for k in range(len(lv) - 1):
        fo, nk = est.level_oracle(k), int(est.n_level[k])
        c = np.rint((est.y[lv[k]] * (fo.p - fo.q) + fo.q) * nk)
        ps.append(robust.attack_evidence(fo.estimate(c, nk), fo)["p_value"])
    return min(1.0, min(ps) * len(ps))


def flat_evidence_grid(est) -> float:
    """The same on each marginal of a grid collection, Bonferroni over the marginals."""
    return min(1.0, min(robust.attack_evidence(e)["p_value"] for e in est.estimates) * len(est.estimates))


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="3 draws, small n")
    ap.add_argument("--reps", type=int, default=40, help="draws per β (default 40)")
    ap.add_argument("--betas", default="0.001,0.01", help="fake users per genuine user, comma-separated")
    ap.add_argument("--clean-draws", type=int, default=400, help="clean draws per test for the false alarms")
    ap.add_argument("--out", default=None, help="results directory (default benchmarks/results)")
    return ap


def _summary(rows: list, keys: tuple) -> list:
    """Mean ± SE of the gains, rates and MSE ratios per (structure, β, attack)."""
    out = []
    groups: dict = {}
    for r in rows:
        groups.setdefault(tuple(r[k] for k in keys), []).append(r)
    for key, rs in groups.items():
        s = dict(zip(keys, key))
        s["draws"] = len(rs)
        for post in rs[0]["gain"]:
            g = np.array([r["gain"][post] for r in rs])
            s.setdefault("gain", {})[post] = [float(g.mean()), float(g.std(ddof=1) / np.sqrt(len(g))) if len(g) > 1 else 0.0]
            for what in ("err_clean", "err_poisoned", "err_recovered"):
                s.setdefault(what, {})[post] = float(np.mean([r[what][post] ** 2 for r in rs]))
        s["detected"] = float(np.mean([r["p"] < ALPHA for r in rs]))
        s["false_alarms"] = float(np.mean([r["p_clean"] < ALPHA for r in rs]))
        s["flat_detected"] = float(np.mean([r["flat"] < ALPHA for r in rs]))
        s["flat_false_alarms"] = float(np.mean([r["flat_clean"] < ALPHA for r in rs]))
        if "blamed" in rs[0]:                                 # the grid: which marginal the recovery blamed
            s["blamed_2d"] = float(np.mean([r.get("blamed") == 2 for r in rs]))
        out.append(s)
    return out


def tree_rows(reps: int, betas: list, quick: bool) -> list:
    d, n = (256, 100_000) if quick else (1024, 1_000_000)
    gen = np.random.default_rng(20261126)
    p = 1.0 / np.arange(1, d + 1) ** 1.1
    attacks = ([("input", None), ("consistent", None)] + [("optimal", post) for post in POSTS]
               + [("padded", post) for post in POSTS])
    rows = []
    for beta in betas:
        m = int(beta * n)
        for _ in range(reps):
            counts = gen.multinomial(n, p / p.sum())
            est = hierarchy.collect(counts, "oue", 1.0, branching=4, rng=gen)
            a = int(gen.integers(0, d - 64))
            b = a + 63
            truth = counts[a: b + 1].sum() / n
            p_clean, f_clean = gof_test(est)[2], flat_evidence_tree(est)
            clean = {post: range_answer(est, a, b, post) for post in POSTS}
            for strategy, target in attacks:
                atk = poison(est, a, b, m, strategy, post=target or "gls", rng=gen)
                new = atk.estimate
                pv = gof_test(new)[2]
                x = refit_without_worst_level(new)[0] if pv < ALPHA else None
                row = {"structure": "tree", "beta": beta, "attack": strategy + (f" for {target}" if target else ""),
                       "level": atk.level, "p": pv, "p_clean": p_clean, "flat": flat_evidence_tree(new),
                       "flat_clean": f_clean, "gain": {}, "err_clean": {},
                       "err_poisoned": {}, "err_recovered": {}}
                truth_after = truth * n / (n + m)               # the genuine users' share once the fakes count
                for post in POSTS:
                    got = range_answer(new, a, b, post)
                    row["gain"][post] = (got - clean[post]) * (n + m) / m
                    row["err_clean"][post] = clean[post] - truth
                    row["err_poisoned"][post] = got - truth_after
                    rec = answer_from_fit(new.tree, x, a, b, post, new.n) if x is not None else got
                    row["err_recovered"][post] = rec - truth_after
                rows.append(row)
    return rows


def grid_rows(reps: int, betas: list, quick: bool) -> list:
    g, n = (8, 100_000) if quick else (16, 1_000_000)
    gen = np.random.default_rng(20261127)
    data = multi.dirichlet_joint(n, 2, domains=g, alpha=0.5, rng=gen)
    proto = multi.calm(data.domains, 1.0, attrs=[(0,), (1,), (0, 1)])
    joint = data.marginal((0, 1)).reshape(g, g)
    attacks = [("input", None)] + [("optimal", post) for post in GRID_POSTS] + [("padded", post) for post in GRID_POSTS]
    rows = []
    for beta in betas:
        m = int(beta * n)
        for _ in range(reps):
            est = proto.simulate(data, rng=gen)
            w0, w1 = (int(v) for v in gen.integers(3, min(8, g) + 1, 2))
            lo0, lo1 = int(gen.integers(0, g - w0 + 1)), int(gen.integers(0, g - w1 + 1))
            rect = [(lo0, lo0 + w0 - 1), (lo1, lo1 + w1 - 1)]
            truth = float(joint[lo0: lo0 + w0, lo1: lo1 + w1].sum())
            p_clean, f_clean = grid_gof_test(est)[2], flat_evidence_grid(est)
            clean = {post: rect_answer(est, (0, 1), rect, post) for post in GRID_POSTS}
            for strategy, target in attacks:
                atk = poison_grid(est, (0, 1), rect, m, strategy, post=target or "calm", rng=gen)
                new = atk.estimate
                pv = grid_gof_test(new)[2]
                f, blamed = rake_blamed(new, (0, 1), ALPHA)
                rec_val = float(f.reshape(g, g)[lo0: lo0 + w0, lo1: lo1 + w1].sum())
                row = {"structure": "grid", "beta": beta, "attack": strategy + (f" for {target}" if target else ""),
                       "marginal": atk.marginal, "p": pv, "p_clean": p_clean, "flat": flat_evidence_grid(new),
                       "flat_clean": f_clean, "blamed": blamed, "gain": {},
                       "err_clean": {}, "err_poisoned": {}, "err_recovered": {}}
                truth_after = truth * n / (n + m)
                for post in GRID_POSTS:
                    got = rect_answer(new, (0, 1), rect, post)
                    row["gain"][post] = (got - clean[post]) * (n + m) / m
                    row["err_clean"][post] = clean[post] - truth
                    row["err_poisoned"][post] = got - truth_after
                    row["err_recovered"][post] = (rec_val if blamed is not None else got) - truth_after
                rows.append(row)
    return rows


def false_alarms(draws: int, quick: bool) -> list:
    """Each test's rejection rate on clean draws at α = 0.01 and 0.05, with Clopper–Pearson 95 % intervals."""
    from scipy import stats

    out = []
    d, n, g = (256, 100_000, 8) if quick else (1024, 1_000_000, 16)
    gen = np.random.default_rng(20261128)
    p = 1.0 / np.arange(1, d + 1) ** 1.1
    tree_p = [gof_test(hierarchy.collect(gen.multinomial(n, p / p.sum()), "oue", 1.0, branching=4, rng=gen))[2]
              for _ in range(draws)]
    grid_p = []
    for _ in range(max(1, draws // 20)):                   # a new joint every 20 draws
        data = multi.dirichlet_joint(n, 2, domains=g, alpha=float(gen.uniform(0.3, 2.0)), rng=gen)
        proto = multi.calm(data.domains, 1.0, attrs=[(0,), (1,), (0, 1)])
        grid_p += [grid_gof_test(proto.simulate(data, rng=gen))[2] for _ in range(20)]
    for name, ps in (("tree: gof_test", tree_p), ("grid: grid_gof_test", grid_p)):
        ps = np.array(ps)
        for alpha in (0.01, 0.05):
            k, t = int((ps < alpha).sum()), ps.size
            lo = float(stats.beta.ppf(0.025, k, t - k + 1)) if k else 0.0
            hi = float(stats.beta.ppf(0.975, k + 1, t - k)) if k < t else 1.0
            out.append({"test": name, "alpha": alpha, "draws": t, "alarms": k, "ci": [lo, hi]})
    return out


def _round(v):
    """Floats to 4 significant digits (the per-draw rows stay small)."""
    if isinstance(v, dict):
        return {k: _round(x) for k, x in v.items()}
    if isinstance(v, list):
        return [_round(x) for x in v]
    return float(f"{v:.4g}") if isinstance(v, float) else v


def _fmt(v: float) -> str:
    return f"{v:.3g}" if abs(v) < 1000 else f"{v:,.0f}"


def markdown(doc: dict) -> str:
    lines = ["# Range-query attacks: attack × post-processing", "",
             f"`{doc['command']}` — {doc['machine'].get('cpu', '')} ({doc['date']}); α = {ALPHA}.", ""]
    for structure, posts in (("tree", POSTS), ("grid", GRID_POSTS)):
        rows = [s for s in doc["summary"] if s["structure"] == structure]
        lines += [f"## {structure}", "", ("Gain per fake user (mean ± SE over the draws; a genuine user ≈ 1), "
                                          "detection and false alarms at α:"), "",
                  "| β | attack | " + " | ".join(f"gain: {p}" for p in posts)
                  + " | detected (χ²) | false alarms | detected (flat evidence) | false alarms |",
                  "|---|---|" + "---|" * (len(posts) + 4)]
        for s in rows:
            lines.append(f"| {s['beta']:g} | {s['attack']} | "
                         + " | ".join(f"{_fmt(s['gain'][p][0])} ± {_fmt(s['gain'][p][1])}" for p in posts)
                         + f" | {s['detected']:.2f} | {s['false_alarms']:.2f} | {s['flat_detected']:.2f}"
                         + f" | {s['flat_false_alarms']:.2f} |")
        lines += ["", "MSE of the target's answer ÷ the clean MSE (same post): poisoned → after recovery:", "",
                  "| β | attack | " + " | ".join(posts) + " |", "|---|---|" + "---|" * len(posts)]
        for s in rows:
            lines.append(f"| {s['beta']:g} | {s['attack']} | " + " | ".join(
                f"{_fmt(s['err_poisoned'][p] / s['err_clean'][p])} → {_fmt(s['err_recovered'][p] / s['err_clean'][p])}"
                for p in posts) + " |")
        lines.append("")
    lines += ["## False alarms on clean draws", "", "| test | α | draws | alarms | rate [95 % CI] |", "|---|---|---|---|---|"]
    for r in doc.get("false_alarms", []):
        lines.append(f"| {r['test']} | {r['alpha']:g} | {r['draws']} | {r['alarms']} | "
                     f"{r['alarms'] / r['draws']:.3f} [{r['ci'][0]:.3f}, {r['ci'][1]:.3f}] |")
    return "\n".join(lines) + "\n"


def run(quick: bool = False, **opts) -> dict:
    a = H.options(parser(), "bench_range_attacks.py", quick, opts)
    reps = 3 if a.quick else a.reps
    betas = [float(b) for b in a.betas.split(",")]
    t0 = time.time()
    rows = tree_rows(reps, betas, a.quick) + grid_rows(reps, betas, a.quick)
    summary = _summary(rows, ("structure", "beta", "attack"))
    clean = false_alarms(20 if a.quick else a.clean_draws, a.quick)
    draws = [{k: r[k] for k in ("structure", "beta", "attack", "p", "p_clean", "flat", "flat_clean")} | {"gain": r["gain"]}
             for r in rows]
    doc = H.save("range_attacks", a, {"alpha": ALPHA, "seconds": time.time() - t0, "summary": summary,
                                      "false_alarms": clean, "draws": _round(draws)})
    (H.results_dir(a) / "range_attacks.md").write_text(markdown(doc))
    return doc


if __name__ == "__main__":
    H.cli(parser(), run)
