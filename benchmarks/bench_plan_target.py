"""Is the n ``ldpopt.plan`` returns for a target met? Its ``n_target`` checked by independent simulation.

Priors: generated, Dirichlet(α) draws over d = 100 values (α = 0.3, a few heavy values; α = 1, flatter;
two seeds each) and Zipf 1.5. Oracles OUE and OLH at ε = 1; the simulated methods Base-Pos, Norm-Sub and
Norm-Mul (no closed form: their target's n is searched); queries top-10 and the full domain. The target
is the loss Base (closed form) has at n = 2·10⁵ on that prior and query, so every row asks for an n
near 10⁵–10⁶. ``plan(..., target=, n_repeats=20, rng=0)`` gives n and its SE.

The check does not use plan's code: the population is n·f floored with the largest remainders
filled, each of R = 200 draws is ``oracle.sample_counts`` (the oracle's exact-in-law sampler) →
``oracle.estimate`` → ``ldpopt.postprocess(est, method)``, and the loss is the mean squared error over
the true top 10 (or every value), written here in numpy. Per row: simulated loss at n ÷ target with
its SE, and plan's n with its stated SE. A row is within what plan states when |ratio − 1| ≤ 2·(ratio
SE) + 2·(n SE / n) (a loss ∝ n^s with |s| ≤ 1 moves by at most the relative error of n).

Run: ``python benchmarks/bench_plan_target.py [--quick]``. Writes ``results/plan_target.json``.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import _harness as H

D = 100
METHODS = ["base-pos", "norm-sub", "norm-mul"]
QUERIES = ["topk:10", "full"]


def parser():
    ap = H.parser(__doc__)
    ap.add_argument("--draws", type=int, default=200, help="independent draws per checked row (default 200)")
    return ap


def priors(quick: bool) -> list[tuple[str, np.ndarray]]:
    from ldpopt.planning import prior_histogram

    out = []
    for alpha, seeds in ((0.3, (1, 2)), (1.0, (1, 2))):
        for s in seeds[: 1 if quick else 2]:
            f = np.random.default_rng(s).dirichlet(np.full(D, alpha))
            out.append((f"dirichlet({alpha:g}) seed {s}", f))
    if not quick:
        out.append(("zipf:1.5", prior_histogram("zipf:1.5", D)[0]))
    return out


def population(f: np.ndarray, n: int) -> np.ndarray:
    x = f * n
    pop = np.floor(x).astype(np.int64)
    short = n - int(pop.sum())
    if short > 0:
        pop[np.argsort(-(x - pop), kind="stable")[:short]] += 1
    return pop


def simulated(oracle, method: str, query: str, f: np.ndarray, n: int, draws: int, seed: int) -> tuple[float, float]:
    """Mean loss and its SE at n over ``draws`` independent collections (module docstring)."""
    import ldpopt

    pop = population(f, n)
    truth = pop / n
    idx = np.argsort(-truth, kind="stable")[:10] if query.startswith("topk") else np.arange(D)
    rng = np.random.default_rng(seed)
    losses = np.empty(draws)
    for i in range(draws):
        est = oracle.estimate(oracle.sample_counts(pop, rng), n)
        fhat = np.asarray(ldpopt.postprocess(est, method), dtype=np.float64)
        losses[i] = np.mean((fhat[idx] - truth[idx]) ** 2)
    return float(losses.mean()), float(losses.std(ddof=1) / np.sqrt(draws))


def run(quick: bool = False, **opts) -> dict:
    import ldpopt
    from ldpopt import oracles

    a = H.options(parser(), "bench_plan_target.py", quick, opts)
    draws = 40 if a.quick else a.draws
    names = ["oue"] if a.quick else ["oue", "olh"]
    methods = METHODS[:2] if a.quick else METHODS
    rows = []
    for c, (prior, f) in enumerate(priors(a.quick)):
        for name in names:
            for query in QUERIES:
                base = ldpopt.plan(D, 2 * 10**5, 1.0, f, queries=[query], oracles=[name], methods=["base"])
                target = float(base.table["expected_mse"].iloc[0])
                t0 = time.perf_counter()
                p = ldpopt.plan(D, 10**5, 1.0, f, queries=[query], oracles=[name], methods=methods, target=target,
                                n_repeats=20, rng=0)
                took = time.perf_counter() - t0
                orc = oracles.get(name, 1.0, D)
                for r in p.table.itertuples():
                    n = int(r.n_target)
                    mean, se = simulated(orc, r.method, query, f, n, draws, seed=10_000 + 97 * c + len(rows))
                    ratio, ratio_se = mean / target, se / target
                    ok = abs(ratio - 1) <= 2 * ratio_se + 2 * r.n_target_se / n
                    rows.append({"prior": prior, "oracle": name, "method": r.method, "query": query, "target": target,
                                 "n": n, "n_se": float(r.n_target_se), "ratio": ratio, "ratio_se": ratio_se,
                                 "within_stated": bool(ok), "plan_seconds": took})
                    print(f"{prior:24s} {name} {r.method:9s} {query:8s} n={n:>9,} ±{r.n_target_se:>8,.0f}  "
                          f"loss/target={ratio:.3f} ± {ratio_se:.3f} {'ok' if ok else 'MISS'}", flush=True)
    ratios = np.array([r["ratio"] for r in rows])
    summary = {"rows": len(rows), "within_stated": int(sum(r["within_stated"] for r in rows)),
               "median_abs_ratio_minus_1": float(np.median(np.abs(ratios - 1))),
               "max_ratio": float(ratios.max()), "min_ratio": float(ratios.min())}
    print(summary)
    return H.save("plan_target", a, {"d": D, "epsilon": 1.0, "draws": draws, "summary": summary, "rows": rows})


if __name__ == "__main__":
    H.main(parser(), run)
