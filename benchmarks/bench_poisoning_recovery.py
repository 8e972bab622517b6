"""Recovery from poisoned reports on the anchors' suite: Norm-Sub, LDPRecover, RSN and the common-lift
recovery, per dataset × oracle × ε × attack, mean ± standard error over repetitions.

Suite (Li, Li, Wang & Sun, CCS 2025, §6.1): Zipf(a = 1.5) with n = 10⁶ over d = 1,024
(``_harness.zipf_counts``); Emoji as ldpopt ships it (``datasets.load("emoji")``: n = 156,941,
d = 969, the Emoji Sentiment Ranking — not the anchors' n = 218,477, d = 1,496 crawl); SF Fire is
absent, **stand-in** BMS-WebView-1 (d = 497); Kosarak is absent, **stand-in** FIMI retail item
counts (d = 16,470). GRR, OUE, OLH; ε ∈ {0.5, 1, 2, 4}; β = 0.05 (m = βn/(1 − β) fake users);
10 targets drawn uniformly per repetition; the maximal gain attack and input poisoning through
ldpopt's exact-in-law fast paths (``robust.poisoned_estimate``). Every method gets β; the lift
recovery finds its own suspects. (The mixture recovery, a solve per repetition, is compared on
Zipf in ``bench_poisoning_anchor.py``.)

Metrics as the anchors' ``Recovery.py``: MSE = mean over the d values of (f̂_v − f_v)² against the
genuine users' frequencies; target gain = Σ_{t∈T} f̂_t − f_T. Each cell: mean and standard error
over ``--reps`` repetitions (30 by default). Also recorded for the lift recovery: the fraction of
repetitions where it found suspects and their precision (suspects that are targets).

    python benchmarks/bench_poisoning_recovery.py [--quick] [--reps R]
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import _harness as H  # noqa: E402

BETA, R_TARGETS = 0.05, 10
DATASETS = {"zipf": "Zipf a=1.5 (n=1e6, d=1024)", "emoji": "Emoji (ldpopt's copy)",
            "bms-webview-1": "stand-in for SF Fire", "retail": "stand-in for Kosarak"}
METHODS = ("norm_sub", "ldprecover", "rsn", "lift")


def _counts(name: str) -> np.ndarray:
    if name == "zipf":
        return H.zipf_counts(1024, 1_000_000)
    from ldpopt import datasets

    return np.asarray(datasets.load(name).counts, dtype=np.int64)


def draws(tc, oracle_name, eps, attack, reps, seed):
    """One setting's repetitions: the genuine frequencies f and, per repetition, the targets and the
    poisoned estimate (targets drawn, then the estimate, from one generator seeded with ``seed``).
    ``bench_poisoning_anchor.py`` takes the same draws, so its ldpopt numbers are these."""
    from ldpopt import oracles, robust

    d = tc.size
    o = oracles.get(oracle_name, epsilon=eps, d=d)
    gen = np.random.default_rng(seed)
    out = []
    for _ in range(reps):
        t = np.sort(gen.choice(d, R_TARGETS, replace=False))
        out.append((t, robust.poisoned_estimate(o, tc, attack, t, BETA, gen)))
    return tc / tc.sum(), out


def recoveries(est):
    """(outputs of ``METHODS`` on one poisoned estimate, the lift's suspects); every method gets β."""
    from ldpopt import robust
    from ldpopt.methods.normalize import project_simplex

    s = robust.lift_suspects(est, BETA)
    return {"norm_sub": project_simplex(est.f_tilde), "ldprecover": robust.ldprecover(est, BETA),
            "rsn": robust.rsn(est), "lift": robust.lift(est, BETA, s)}, s


def mean_se(x) -> tuple[float, float | None]:
    x = np.asarray(x, dtype=float)
    return float(x.mean()), (float(x.std(ddof=1) / np.sqrt(x.size)) if x.size > 1 else None)


def _setting(tc, oracle_name, eps, attack, reps, seed):
    f, reps_ = draws(tc, oracle_name, eps, attack, reps, seed)
    mse = {k: [] for k in METHODS}
    gain = {k: [] for k in METHODS}
    found, precision = [], []
    for t, est in reps_:
        outs, s = recoveries(est)
        found.append(s.size > 0)
        if s.size:
            precision.append(np.isin(s, t).mean())
        for k, v in outs.items():
            mse[k].append(float(((v - f) ** 2).mean()))
            gain[k].append(float(v[t].sum() - f[t].sum()))
    row = {"found": float(np.mean(found)), "precision": float(np.mean(precision)) if precision else None}
    for k in METHODS:
        (m, m_se), (g, g_se) = mean_se(mse[k]), mean_se(gain[k])
        row[k] = {"mse": m, "mse_se": m_se, "gain": g, "gain_se": g_se}
    return row


def run(quick: bool = False, **opts) -> dict:
    ap = _parser()
    a = H.options(ap, Path(__file__).name, quick, opts)
    reps = 3 if a.quick else a.reps
    names = ("zipf",) if a.quick else tuple(DATASETS)
    epsilons = (1.0,) if a.quick else (0.5, 1.0, 2.0, 4.0)
    rows = []
    for k, name in enumerate(names):
        tc = _counts(name)
        for oracle_name in ("grr", "oue", "olh"):
            for eps in epsilons:
                for attack in ("mga", "input"):
                    t0 = H.cpu_clock()
                    row = _setting(tc, oracle_name, eps, attack, reps, seed=29 + k)
                    rows.append({"dataset": name, "what": DATASETS[name], "n": int(tc.sum()), "d": int(tc.size),
                                 "oracle": oracle_name, "epsilon": eps, "attack": attack, "reps": reps,
                                 "cpu_s": H.cpu_clock() - t0, **row})
                    print(f"{name} {oracle_name} eps={eps} {attack}: lift mse {row['lift']['mse']:.3e} "
                          f"gain {row['lift']['gain']:+.4f}", flush=True)
    return H.save("poisoning_recovery", a, {"setting": {"beta": BETA, "targets": R_TARGETS}, "rows": rows})


def _parser():
    ap = H.parser(__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=30, help="repetitions per setting (default 30)")
    return ap


if __name__ == "__main__":
    H.cli(_parser(), run)
