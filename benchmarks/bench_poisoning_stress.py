"""Every recovery against attacks outside the lift's threat model, with β known, estimated and mis-stated.

Task kind ``poisoning-stress`` (``ldpopt.experiments.task_kinds.poisoning_stress.py``): attacks MGA on
r ∈ {1, 2, 3, 5, 10} random targets, the unequal split 1 : 2 : … : r (r ∈ {2, 3, 5, 10}), MGA on
the values of ranks 5–14, the adaptive attacker against the lift (``robust.evasive_shape``) and no
attack; β ∈ {0.01, 0.05, 0.1, 0.2}; recoveries Norm-Sub, RSN, LDPRecover, the lift and the guarded
lift, those that take β with β known, estimated (``robust.estimate_beta``), ×0.25 and ×4. Data: Zipf
(a = 1.5, n = 10⁶, d = 1,024, ldpopt's) and the anchors' ``datasets/zipf.npy`` (n = 10⁵, d = 1,024,
read from ``--anchor-src``; skipped without it); GRR, OUE, OLH; ε ∈ ``--epsilons`` (default the anchors'
ε sweep 0.5, 1, 2, 4); ``--reps`` repetitions (20).

Per cell (dataset, oracle, ε, β, attack, method, mode, metric; ``results/poisoning_stress_cells.csv``,
4 significant digits): mean, standard error, median, the
Shapiro–Wilk p-value of the repetitions and, where it is below 0.01 (*heavy*: this bench's test),
the percentile bootstrap 95 % interval of the mean and of the median (2,000 resamples). The rule:
each recovery's worst case over every cell of the MSE ratio to the best recovery of that cell;
recommended = the smallest worst case, among the recoveries that need no β (β-free or β estimated)
and among all.

Re-run rows (``rerun``): two heavy-tailed rows on a small setting (OUE, ε = 1, d = 64, n = 20,000,
β = 0.1; lift with β known under MGA on 5 targets, lift told β ×4 under no attack), ``RERUN_REPS``
repetitions, with the interval a re-run with another seed and as many repetitions should land in:
mean + the 0.05 % and 99.95 % quantiles of the difference of two bootstrap means.
tests/test_poisoning_stress.py re-runs both with another seed.

    python benchmarks/bench_poisoning_stress.py [--quick] [--reps R] [--epsilons 0.5,1,2,4] [--anchor-src DIR]
    python benchmarks/bench_poisoning_stress.py --table benchmarks/results/poisoning_stress.json   # its tables
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import _harness as H

BETAS = (0.01, 0.05, 0.1, 0.2)
ORACLES = ("grr", "oue", "olh")
HEAVY_P = 0.01
BOOT = 2000
#: the re-run rows: (attack, method, mode) on the small setting of the module docstring
RERUN = {"setting": {"oracle": "oue", "epsilon": 1.0, "d": 64, "n": 20_000, "beta": 0.1, "seed": 4040},
         "rows": [("mga-r5", "lift", "known"), ("none", "lift", "high")]}
RERUN_REPS = 300
#: the per-cell statistics, beside the JSON (module docstring)
CELLS_FILE = "poisoning_stress_cells.csv"


def rerun_values(seed: int, reps: int = RERUN_REPS) -> dict:
    """MSE of the re-run rows over ``reps`` repetitions drawn from ``seed`` (the small setting)."""
    from ldpopt import oracles
    from ldpopt.experiments.task_kinds.poisoning_stress import stress_rows

    s = RERUN["setting"]
    o = oracles.get(s["oracle"], epsilon=s["epsilon"], d=s["d"])
    tc = H.zipf_counts(s["d"], s["n"])
    gen = np.random.default_rng(seed)
    out: dict = {f"{a}|{m}|{mo}": [] for a, m, mo in RERUN["rows"]}
    for _ in range(reps):
        for a, m, mo in RERUN["rows"]:
            rows = stress_rows(o, tc, [a], [s["beta"]], gen, methods=(m,), modes=(mo,))
            out[f"{a}|{m}|{mo}"].append(next(r["value"] for r in rows if r["metric"] == "mse"))
    return {k: np.array(v) for k, v in out.items()}


def _boot_means(x: np.ndarray, gen, stat=np.mean) -> np.ndarray:
    idx = gen.integers(0, x.size, size=(BOOT, x.size))
    return stat(x[idx], axis=1)


def cell_stats(x: np.ndarray, gen) -> dict:
    """Mean, SE, median, Shapiro–Wilk p and, when heavy, the bootstrap intervals (module docstring)."""
    from scipy import stats

    x = np.asarray(x, dtype=float)
    se = float(x.std(ddof=1) / np.sqrt(x.size))
    p = float(stats.shapiro(x).pvalue) if x.size >= 3 and np.ptp(x) > 0 else 1.0
    out = {"mean": float(x.mean()), "se": se, "median": float(np.median(x)), "shapiro_p": p}
    if p < HEAVY_P:
        bm, bmed = _boot_means(x, gen), _boot_means(x, gen, np.median)
        out["mean_ci"] = [float(v) for v in np.quantile(bm, [0.025, 0.975])]
        out["median_ci"] = [float(v) for v in np.quantile(bmed, [0.025, 0.975])]
    return out


def rerun_interval(x: np.ndarray, gen) -> list[float]:
    """mean + [0.05 %, 99.95 %] quantiles of the difference of two bootstrap means (module docstring)."""
    diff = _boot_means(x, gen) - _boot_means(x, gen)
    return [float(x.mean() + v) for v in np.quantile(diff, [0.0005, 0.9995])]


def _datasets(a):
    out = {"zipf": H.zipf_counts(1024, 1_000_000)}
    src = a.anchor_src or os.environ.get("LDPOPT_ANCHOR_SRC")
    if src and (Path(src) / "datasets" / "zipf.npy").exists():
        out["zipf-anchor"] = np.bincount(np.load(Path(src) / "datasets" / "zipf.npy"), minlength=1024)
    return out


def run(quick: bool = False, **opts) -> dict:
    import pandas as pd

    from ldpopt import oracles
    from ldpopt.experiments.task_kinds.poisoning_stress import ATTACKS, stress_rows

    ap = _parser()
    a = H.options(ap, Path(__file__).name, quick, opts)
    if a.table:  # the tables of a saved run
        doc = json.loads(Path(a.table).read_text())
        print(summary(doc, read_cells(Path(a.table).parent / doc["cells_file"])))
        return doc
    reps = 3 if a.quick else a.reps
    eps_list = (1.0,) if a.quick else tuple(float(e) for e in a.epsilons.split(","))
    betas = (0.05,) if a.quick else BETAS
    gen = np.random.default_rng(404)
    frames = []
    t0 = H.cpu_clock()
    for ds, tc in _datasets(a).items():
        for name in ORACLES:
            for eps in eps_list:
                o = oracles.get(name, epsilon=eps, d=tc.size)
                for rep in range(reps):
                    rows = stress_rows(o, tc, list(ATTACKS), betas, gen)
                    frames.append(pd.DataFrame(rows).assign(dataset=ds, oracle=name, epsilon=eps, rep=rep))
                print(f"{ds} {name} eps={eps}: {H.cpu_clock() - t0:.0f} s", flush=True)
    df = pd.concat(frames, ignore_index=True)
    keys = ["dataset", "oracle", "epsilon", "beta", "attack", "method", "mode", "metric"]
    sgen = np.random.default_rng(405)
    cells = [{**dict(zip(keys, k)), **cell_stats(g["value"].to_numpy(), sgen)} for k, g in df.groupby(keys, sort=True)]
    rule = recommendation(cells)
    rerun = {}
    for k, x in rerun_values(RERUN["setting"]["seed"], 30 if a.quick else RERUN_REPS).items():
        rerun[k] = {**cell_stats(x, sgen), "rerun_interval": rerun_interval(x, sgen), "reps": int(x.size)}
    doc = {"setting": {"betas": list(betas), "epsilons": list(eps_list), "oracles": list(ORACLES), "reps": reps,
                       "attacks": list(ATTACKS), "heavy_test": f"Shapiro-Wilk p < {HEAVY_P}", "bootstrap": BOOT},
           "cpu_s": H.cpu_clock() - t0, "rule": rule, "rerun_setting": RERUN["setting"], "rerun": rerun,
           "cells_file": CELLS_FILE}
    write_cells(H.results_dir(a) / CELLS_FILE, cells)
    print(summary(doc, cells))
    return H.save("poisoning_stress", a, doc)


def write_cells(path: Path, cells: list[dict]) -> None:
    """The cells as CSV, numbers to 4 significant digits (intervals as lo;hi)."""
    import pandas as pd

    df = pd.DataFrame(cells)
    for col in ("mean_ci", "median_ci"):
        df[col] = [f"{v[0]:.4g};{v[1]:.4g}" if isinstance(v, list) else "" for v in df.get(col, [None] * len(df))]
    path.parent.mkdir(parents=True, exist_ok=True)
    df.to_csv(path, index=False, float_format="%.4g")


def read_cells(path: Path) -> list[dict]:
    """:func:`write_cells`' file back as cells (intervals as [lo, hi])."""
    import pandas as pd

    df = pd.read_csv(path, keep_default_na=False, na_values=[])
    out = df.to_dict("records")
    for c in out:
        for col in ("mean_ci", "median_ci"):
            c[col] = [float(x) for x in c[col].split(";")] if c[col] else None
    return out


def recommendation(cells: list[dict]) -> dict:
    """Each recovery's worst MSE ratio to the best recovery of a cell, over every cell (module docstring)."""
    import pandas as pd

    df = pd.DataFrame([c for c in cells if c["metric"] == "mse"])
    df["label"] = df["method"] + np.where(df["mode"] == "", "", ":" + df["mode"])
    key = ["dataset", "oracle", "epsilon", "beta", "attack"]
    best = df.groupby(key)["mean"].transform("min")
    df["ratio"] = df["mean"] / best
    out = {}
    for label, g in df.groupby("label"):
        w = g.loc[g["ratio"].idxmax()]
        out[label] = {"worst_ratio": float(w["ratio"]), "median_ratio": float(g["ratio"].median()),
                      "worst_cell": {k: (w[k].item() if hasattr(w[k], "item") else w[k]) for k in key}}
    free = {k: v for k, v in out.items() if ":" not in k or k.endswith(":estimated")}
    pick = min(free, key=lambda k: free[k]["worst_ratio"])
    pick_all = min(out, key=lambda k: out[k]["worst_ratio"])
    return {"per_recovery": out, "recommended_without_beta": pick, "recommended_any": pick_all}


def summary(doc: dict, cells: list[dict]) -> str:
    """Markdown: the rule table, then the worst-case ratio per attack × recovery."""
    import pandas as pd

    r = doc["rule"]["per_recovery"]
    lines = ["| recovery (β mode) | worst MSE / best | median | worst cell |", "|---|---|---|---|"]
    for k in sorted(r, key=lambda k: r[k]["worst_ratio"]):
        w = r[k]["worst_cell"]
        lines.append(f"| {k} | {r[k]['worst_ratio']:.3g} | {r[k]['median_ratio']:.3g} | {w['dataset']} {w['oracle']} "
                     f"ε={w['epsilon']:g} β={w['beta']:g} {w['attack']} |")
    df = pd.DataFrame([c for c in cells if c["metric"] == "mse"])
    df["label"] = df["method"] + np.where(df["mode"] == "", "", ":" + df["mode"])
    key = ["dataset", "oracle", "epsilon", "beta", "attack"]
    df["ratio"] = df["mean"] / df.groupby(key)["mean"].transform("min")
    tab = df.pivot_table(index="label", columns="attack", values="ratio", aggfunc="max")
    lines += ["", "worst MSE / best per attack (over datasets, oracles, ε, β):", "",
              "| recovery | " + " | ".join(tab.columns) + " |", "|---" * (len(tab.columns) + 1) + "|"]
    lines += [f"| {i} | " + " | ".join(f"{v:.3g}" for v in row) + " |" for i, row in tab.iterrows()]
    g = pd.DataFrame([c for c in cells if c["metric"] == "gain"])
    g["label"] = g["method"] + np.where(g["mode"] == "", "", ":" + g["mode"])
    gt = g.pivot_table(index="label", columns="attack", values="mean", aggfunc=lambda v: v.iloc[np.argmax(np.abs(v))])
    lines += ["", "target gain of largest magnitude per attack (over datasets, oracles, ε, β; negative: genuine mass erased):", "",
              "| recovery | " + " | ".join(gt.columns) + " |", "|---" * (len(gt.columns) + 1) + "|"]
    lines += [f"| {i} | " + " | ".join(f"{v:.3g}" for v in row) + " |" for i, row in gt.iterrows()]
    lines += ["", (f"recommended without β: {doc['rule']['recommended_without_beta']}; "
                   f"with β known too: {doc['rule']['recommended_any']}")]
    return "\n".join(lines)


def _parser():
    ap = H.parser(__doc__.split("\n")[0])
    ap.add_argument("--reps", type=int, default=20, help="repetitions per setting (default 20)")
    ap.add_argument("--epsilons", default="0.5,1,2,4", help="comma-separated ε values (default 0.5,1,2,4)")
    ap.add_argument("--table", default=None, help="print the tables of a saved results JSON and stop")
    ap.add_argument("--anchor-src", default=None, help="a checkout of the anchors' repository (its datasets/zipf.npy)")
    return ap


if __name__ == "__main__":
    H.cli(_parser(), run)
