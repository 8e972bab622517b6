"""RS+FD vs RS+RFD: the sampled-attribute attack's accuracy and the estimators' MSE (the prior's price).

    python benchmarks/bench_rsrfd.py          # n = 20 000, 30 repetitions, ε ∈ {0.5, 1, 2, 4}
    python benchmarks/bench_rsrfd.py --quick  # n = 4 000, 4 repetitions, ε ∈ {1, 4} (seconds)

Data: ``multi.chain_network`` over k = 4 attributes with domains (4, 6, 5, 3), strength 0.6 and a
skewed first attribute (π = (0.55, 0.25, 0.15, 0.05)), so the one-way marginals are far from uniform.
Per ε and inner oracle (GRR, OUE), each repetition draws the reports through the real client path
(``perturb_sampled``) of

* ``rsfd``: RS+FD (uniform / all-zero fake data);
* ``rsrfd-true``: RS+RFD whose prior is the true marginals (the best prior);
* ``rsrfd-previous``: RS+RFD whose prior is a previous release: RS+FD's estimate on an independent draw
  of n users from the same network, clipped at 10⁻³ and renormalised (this benchmark's choice of a
  realistic public prior).

The attack (``sampled_attribute_scores``, Arcolezi et al., PVLDB 2023) knows the true marginals and
guesses each user's sampled attribute as the row's argmax; its accuracy is compared with the 1/k = 0.25
baseline. The MSE is the mean over cells of (f̃ − f)² of the unbiased estimates (no post-processing).
Each figure is the mean over repetitions with its standard error. Results: results/rsrfd.json.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchmarks import _harness as H  # noqa: E402
from ldpopt import multi  # noqa: E402

DOMAINS = (4, 6, 5, 3)
FIRST = np.array([0.55, 0.25, 0.15, 0.05])


def _data(n: int, seed: int):
    return multi.chain_network(n, len(DOMAINS), domains=DOMAINS, strength=0.6, first=FIRST, rng=seed)


def _previous_release(n: int, eps: float, inner: str, seed: int) -> list[np.ndarray]:
    """RS+FD's marginals on an independent draw, clipped at 1e-3 and renormalised: a usable prior."""
    est = multi.rsfd(DOMAINS, eps, inner).simulate(_data(n, seed), rng=seed + 1)
    out = []
    for e in est.estimates:
        f = np.clip(e.f_tilde, 1e-3, None)
        out.append(f / f.sum())
    return out


def _mean_se(x) -> dict:
    a = np.asarray(x, dtype=np.float64)
    return {"mean": float(a.mean()), "se": float(a.std(ddof=1) / np.sqrt(a.size))}


def run(quick: bool = False, **opts) -> dict:
    """``--quick``: n = 4 000, 4 repetitions, ε ∈ {1, 4}."""
    a = H.options(H.parser(__doc__), "bench_rsrfd.py", quick, opts)
    n, reps = (4_000, 4) if quick else (20_000, 30)
    epsilons = (1.0, 4.0) if quick else (0.5, 1.0, 2.0, 4.0)
    data = _data(n, 1)
    truth = [data.marginal((j,)) for j in range(len(DOMAINS))]
    flat = np.concatenate(truth)
    rows = []
    for eps in epsilons:
        for inner in ("grr", "oue"):
            protos = {"rsfd": multi.rsfd(DOMAINS, eps, inner),
                      "rsrfd-true": multi.rsrfd(DOMAINS, eps, truth, inner),
                      "rsrfd-previous": multi.rsrfd(DOMAINS, eps, _previous_release(n, eps, inner, 99), inner)}
            gen = np.random.default_rng(7)
            acc = {k: [] for k in protos}
            mse = {k: [] for k in protos}
            for _ in range(reps):
                for name, proto in protos.items():
                    reports, sampled = proto.perturb_sampled(data.values(), gen)
                    guess = proto.sampled_attribute_scores(reports, truth).argmax(axis=1)
                    acc[name].append(np.mean(guess == sampled))
                    mse[name].append(np.mean((proto.aggregate(reports).f_tilde - flat) ** 2))
            row = {"epsilon": eps, "inner": inner, "n": n, "k": len(DOMAINS), "reps": reps,
                   "baseline": 1 / len(DOMAINS),
                   "attack_accuracy": {k: _mean_se(v) for k, v in acc.items()},
                   "mse": {k: _mean_se(v) for k, v in mse.items()}}
            rows.append(row)
            print(f"eps={eps:<4} {inner:4s} " + "  ".join(
                f"{k}: acc={row['attack_accuracy'][k]['mean']:.3f}±{row['attack_accuracy'][k]['se']:.3f} "
                f"mse={row['mse'][k]['mean']:.2e}" for k in protos), flush=True)
            H.save("rsrfd", a, {"rows": rows})
    return H.save("rsrfd", a, {"rows": rows})


if __name__ == "__main__":
    H.cli(H.parser(__doc__), run)
