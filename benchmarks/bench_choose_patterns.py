"""``ldpopt.choose`` over rounds on generated drift patterns: each candidate's expected MSE per pattern
(over repetitions), the pick's ratio to the best candidate's, with SE, before and after the safe choice.

Patterns (τ = 4 rounds, d = 32, n = 20,000, per user through ``oracle.clients``: a user who changes
value takes a new memo): shapes Zipf(1.2), near-two-point (0.50, 0.49, the rest spread), uniform and
Dirichlet(0.5) (one draw, seed 7); drift fractions ρ ∈ {0.05, 0.1, 0.25} per round; directions
*rising* (the movers go to one value, initially among the rarest), *falling* (a share ρ of the most
popular value's users leave it each round, for uniform values), *permuted* (the movers take a value
from the first round's law under a fresh permutation), and none. Oracles: L-GRR and L-OSUE
(ε∞ = 4, ε₁ = 2). ``choose`` with 8 re-simulations per world.

Per pattern, each candidate's risk is its MSE averaged over the repetitions (the same collections for
all candidates); "best" is the smallest risk. A run's pick is scored by its risk ÷ the best risk (the
pick's expected MSE, not the one collection's draw); the procedure's ratio is the mean MSE of its
picks over the repetitions ÷ the best risk, SE by a bootstrap over repetitions (the best re-chosen in
each resample). "before": the pick of the fitted world alone (the smallest loss there: the rule
before the safe choice; its draws are the first world's, so the pick is the old one exactly).
The constants of the safe choice were set on seeds 5000–5019 (L-GRR, the first three shapes); the
reported runs use seeds 1000 + rep, and Dirichlet data was not looked at before.

Usage: python benchmarks/bench_choose_patterns.py [--reps R] [--jobs J] [--out FILE] [--table FILE]; the
table goes beside the JSON (``choose_patterns.md``).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_choose_drift import TAU, D, N, real_mse

import ldpopt
from ldpopt.oracles.longitudinal import LGRR, LOSUE

OUT = Path(__file__).resolve().parent / "results" / "choose_patterns.json"
SHAPES = ("zipf", "near-two-point", "uniform", "dirichlet")
DIRECTIONS = ("rising", "falling", "permuted")
RHOS = (0.05, 0.1, 0.25)
ORACLES = {"lgrr": lambda: LGRR(4.0, D, eps_1=2.0), "losue": lambda: LOSUE(4.0, D, eps_1=2.0)}
TOL = 1.2


def shape(name: str) -> np.ndarray:
    if name == "zipf":
        w = 1.0 / np.arange(1, D + 1) ** 1.2
    elif name == "near-two-point":
        w = np.concatenate([[0.50, 0.49], np.full(D - 2, 0.01 / (D - 2))])
    elif name == "dirichlet":
        w = np.random.default_rng(7).dirichlet(np.full(D, 0.5))
    else:
        w = np.ones(D)
    return w / w.sum()


def pattern_values(f: np.ndarray, direction: str, rho: float, gen) -> np.ndarray:
    """(τ, n) values of the users over the rounds (module notes)."""
    d = f.size
    V = np.empty((TAU, N), dtype=np.int64)
    V[0] = gen.permutation(np.repeat(np.arange(d), gen.multinomial(N, f)))
    rare = int(np.argsort(f, kind="stable")[0])
    top = int(np.argmax(f))
    for t in range(1, TAU):  # rounds
        V[t] = V[t - 1]
        if direction == "none" or rho == 0:
            continue
        if direction == "falling":
            moved = (V[t] == top) & (gen.random(N) < rho)
            V[t, moved] = gen.integers(0, d, size=int(moved.sum()))
        else:
            moved = gen.random(N) < rho
            if direction == "rising":
                V[t, moved] = rare
            else:
                V[t, moved] = gen.choice(gen.permutation(d), size=int(moved.sum()), p=f)
    return V


def collection(o, f, direction, rho, seed):
    gen = np.random.default_rng(seed)
    V = pattern_values(f, direction, rho, gen)
    C = o.clients(N, gen).rounds(V, gen)
    truths = np.stack([np.bincount(v, minlength=o.d) / N for v in V])
    return [o.estimate(c, N) for c in C], truths


def patterns(shapes=SHAPES):
    for sh in shapes:
        yield sh, "none", 0.0
        for direction in DIRECTIONS:
            for rho in RHOS:
                yield sh, direction, rho


def one(job) -> dict:
    """One collection and ``choose`` on it: the picks and every candidate's real MSE."""
    oname, sh, direction, rho, rep, seed = job
    o = ORACLES[oname]()
    ests, truths = collection(o, shape(sh), direction, rho, seed)
    t0 = time.time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ch = ldpopt.choose(ests, longitudinal=o, n_repeats=8, rng=rep)
    sec = time.time() - t0
    before = str(ch.table.sort_values(["loss", "p_best"], ascending=[True, False], kind="stable").index[0])
    mse = real_mse(ests, truths, o, list(ch.table.index))
    return {"oracle": oname, "shape": sh, "direction": direction, "rho": rho, "rep": rep, "seed": seed,
            "pick": ch.best, "pick_before": before, "cannot_tell": bool(ch.cannot_tell),
            "status": ch.drift["status"], "worlds": ch.drift["worlds"],
            "worst": float(ch.table["worst"].iloc[0]), "worst_upper": float(ch.table["worst_upper"].iloc[0]),
            "seconds": round(sec, 2), "mse": mse}


def run(quick: bool = False) -> dict:
    """The bench's contract (``benchmarks/run.py``): 5 repetitions per pattern into
    ``results/choose_patterns.json``; ``quick``: L-GRR, near-two-point, one repetition, into
    ``results/quick/``."""
    out = OUT.parent / "quick" / "choose_patterns.json" if quick else OUT
    out.parent.mkdir(parents=True, exist_ok=True)
    args = ["--reps", "1", "--oracles", "lgrr", "--shapes", "near-two-point"] if quick else ["--reps", "5"]
    main(args + ["--out", str(out)])
    return json.loads(out.read_text())


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--seed0", type=int, default=1000, help="seed of repetition r: SEED0 + r")
    ap.add_argument("--out", default=str(OUT))
    ap.add_argument("--oracles", default="lgrr,losue")
    ap.add_argument("--shapes", default=",".join(SHAPES))
    ap.add_argument("--jobs", type=int, default=1, help="worker processes")
    ap.add_argument("--table", help="print the table of a results file and exit")
    a = ap.parse_args(argv)
    if a.table:
        print(table(json.loads(Path(a.table).read_text())))
        return 0
    t0 = time.time()
    jobs = [(oname, sh, dr, rho, rep, a.seed0 + rep) for oname in a.oracles.split(",")
            for sh, dr, rho in patterns(a.shapes.split(",")) for rep in range(a.reps)]
    rows: list = []

    def save():
        doc = {"command": "python benchmarks/bench_choose_patterns.py " + " ".join(argv or sys.argv[1:]),
               "d": D, "n": N, "tau": TAU, "n_repeats": 8, "reps": a.reps, "seed0": a.seed0,
               "seconds": round(time.time() - t0, 1), "complete": len(rows) == len(jobs), "rows": rows}
        Path(a.out).write_text(json.dumps(doc, indent=1))

    if a.jobs > 1:
        from multiprocessing import get_context

        with get_context("spawn").Pool(a.jobs) as pool:
            for row in pool.imap(one, jobs):
                rows.append(row)
                print({k: v for k, v in row.items() if k != "mse"}, file=sys.stderr, flush=True)
                if len(rows) % 10 == 0:
                    save()
    else:
        for job in jobs:
            rows.append(one(job))
            print({k: v for k, v in rows[-1].items() if k != "mse"}, file=sys.stderr, flush=True)
            if len(rows) % 10 == 0:
                save()
    save()
    md = Path(a.out).with_suffix(".md")
    md.write_text(f"`{' '.join(['python benchmarks/bench_choose_patterns.py', *(argv or sys.argv[1:])])}`\n\n"
                  + table(json.loads(Path(a.out).read_text())) + "\n")
    print(f"wrote {a.out} and {md} ({len(rows)} runs, {time.time() - t0:.0f} s)")
    return 0


def summarise(doc: dict, boot: int = 400, seed: int = 0) -> list[dict]:
    """Per pattern: the best candidate by risk, the procedure's ratio before and after (± bootstrap
    SE), its picks, the runs flagged, and the runs whose pick's risk is within TOL of the best's."""
    gen = np.random.default_rng(seed)
    groups: dict = {}
    for r in doc["rows"]:
        groups.setdefault((r["oracle"], r["shape"], r["direction"], r["rho"]), []).append(r)
    out = []
    for key, rs in groups.items():
        names = sorted(rs[0]["mse"])
        M = np.array([[r["mse"][m] for m in names] for r in rs])  # (reps, methods)
        after = np.array([names.index(r["pick"]) for r in rs])
        before = np.array([names.index(r["pick_before"]) for r in rs])
        risk = M.mean(axis=0)
        b = int(risk.argmin())
        k = len(rs)
        idx = np.arange(k)

        def ratio(picks, rows=idx, M=M):
            return float(M[rows, picks[rows]].mean() / M[rows].mean(axis=0).min())

        bs = [gen.integers(0, k, k) for _ in range(boot)] if k > 1 else []
        se = {w: float(np.std([ratio(p, s) for s in bs], ddof=1)) if bs else float("nan")
              for w, p in (("after", after), ("before", before))}
        pick_ratio = risk[after] / risk[b]
        flagged = np.array([r["cannot_tell"] for r in rs])
        srt = np.sort(risk)
        out.append({"oracle": key[0], "shape": key[1], "direction": key[2], "rho": key[3], "reps": k,
                    "best": names[b], "best_risk": float(risk[b]),
                    "best_se": float(M[:, b].std(ddof=1) / np.sqrt(k)) if k > 1 else float("nan"),
                    "runner_up_ratio": float(srt[1] / srt[0]),
                    "after": ratio(after), "after_se": se["after"], "before": ratio(before), "before_se": se["before"],
                    "picks": {names[i]: int((after == i).sum()) for i in np.unique(after)},
                    "cannot_tell": int(flagged.sum()),
                    "within_after": int((pick_ratio <= TOL).sum()),
                    "within_before": int((risk[before] / risk[b] <= TOL).sum()),
                    "ok_after": int(((pick_ratio <= TOL) | flagged).sum()),
                    "run_ratio_after": float(np.mean(M[idx, after] / M.min(axis=1))),
                    "run_ratio_before": float(np.mean(M[idx, before] / M.min(axis=1)))})
    return out


def table(doc: dict) -> str:
    s = summarise(doc)
    out = [("| oracle | shape | drift | ρ | best (risk ×10⁶ ± SE) | picks | ratio before | ratio after | "
            "cannot tell | within 1.2× (before → after) |"),
           "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for g in s:
        picks = ", ".join(f"{m} ×{c}" for m, c in sorted(g["picks"].items(), key=lambda kv: -kv[1]))
        out.append(f"| {g['oracle']} | {g['shape']} | {g['direction']} | {g['rho']:g} | {g['best']} "
                   f"({g['best_risk'] * 1e6:.1f} ± {g['best_se'] * 1e6:.1f}) | {picks} | "
                   f"{g['before']:.2f} ± {g['before_se']:.2f} | {g['after']:.2f} ± {g['after_se']:.2f} | "
                   f"{g['cannot_tell']}/{g['reps']} | {g['within_before']} → {g['within_after']} |")
    runs = sum(g["reps"] for g in s)
    wb, wa = sum(g["within_before"] for g in s), sum(g["within_after"] for g in s)
    ok = sum(g["ok_after"] for g in s)
    flag = sum(g["cannot_tell"] for g in s)
    worst_a = max(s, key=lambda g: g["after"])
    worst_b = max(s, key=lambda g: g["before"])
    pa = sum(g["after"] <= TOL for g in s)
    pb = sum(g["before"] <= TOL for g in s)
    out += ["", (f"{runs} runs, {len(s)} patterns ({doc.get('seconds', '?')} s). Runs whose pick's risk is within "
            f"{TOL:g}× of the best: before {wb}/{runs}, after {wa}/{runs}; after, within or flagged cannot tell: "
            f"{ok}/{runs} ({flag} flagged). Patterns whose procedure ratio is within {TOL:g}×: before {pb}/{len(s)}, "
            f"after {pa}/{len(s)}. Worst procedure ratio: before {worst_b['before']:.2f} ± {worst_b['before_se']:.2f} "
            f"({worst_b['oracle']}, {worst_b['shape']}, {worst_b['direction']} {worst_b['rho']:g}), after "
            f"{worst_a['after']:.2f} ± {worst_a['after_se']:.2f} ({worst_a['oracle']}, {worst_a['shape']}, "
            f"{worst_a['direction']} {worst_a['rho']:g}). One collection's pick ÷ that collection's best (the old "
            f"measure, best chosen after the fact): mean {np.mean([g['run_ratio_before'] for g in s]):.3f} before, "
            f"{np.mean([g['run_ratio_after'] for g in s]):.3f} after.")]
    return "\n".join(out)


if __name__ == "__main__":
    sys.exit(main())
