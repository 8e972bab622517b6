"""REPRODUCTION.md row 32's Norm-Mul/Norm-Sub ratio over seeds: ``wang_arxiv_fig4_fixed_sets`` (US-cities
IPUMS stand-in, 51 states, 9 divisions, 4 regions; OUE; ε = 0.2–2; 30 repetitions) with Norm-Mul and
Norm-Sub only, run at seeds 2020 (the published) and 1–7; per seed the min and max over ε of
MSE(Norm-Mul)/MSE(Norm-Sub) per query set, then their mean ± sd over the seeds.

Run: ``python benchmarks/fixed_sets_seeds.py``; writes benchmarks/results/fixed_sets_seeds.md (about 3 min
on one core).
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

SEEDS = [2020, 1, 2, 3, 4, 5, 6, 7]
CONFIG = """name = "wang_arxiv_fig4_fixed_sets"
kind = "fixed-sets"
description = "row 32 over seeds"
datasets = [{{name = "us-cities", sample_n = 602325, label = "ipums-us-cities"}}]
oracles = ["oue"]
epsilons = [0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0]
methods = ["norm-mul", "norm-sub"]
repetitions = 30
seed = {seed}
[params]
partitions = ["state", "division", "region"]
"""


def main() -> None:
    per = []
    with tempfile.TemporaryDirectory() as tmp:
        for seed in SEEDS:  # seeds: one experiment run each
            cfg = Path(tmp) / f"s{seed}.toml"
            cfg.write_text(CONFIG.format(seed=seed))
            out = Path(tmp) / f"out{seed}"
            subprocess.run([sys.executable, "-m", "ldpopt.cli", "experiment", "run", str(cfg), "--out", str(out),
                            "--no-progress"], check=True, capture_output=True)
            t = pd.read_parquet(out / "wang_arxiv_fig4_fixed_sets" / "results.parquet")
            m = t[t.metric == "mse"].groupby(["query_set", "epsilon", "method"]).value.mean().unstack("method")
            ratio = (m["norm-mul"] / m["norm-sub"]).groupby("query_set")
            for qs, lo, hi in zip(ratio.min().index, ratio.min(), ratio.max(), strict=True):
                per.append({"seed": seed, "set": qs, "min": lo, "max": hi})
    R = pd.DataFrame(per)
    lines = ["| query set | seed 2020: min–max over ε | other seeds (1–7): min | max | all 8 seeds: min, mean ± sd | max, mean ± sd |",
             "|---|---|---|---|---|---|"]
    for qs in ("state", "division", "region"):
        g = R[R.set == qs].set_index("seed")
        rest = g.drop(index=2020)
        lines.append(f"| {qs} | {g.loc[2020, 'min']:.3f}–{g.loc[2020, 'max']:.3f} | "
                     + ", ".join(f"{v:.3f}" for v in rest["min"]) + " | " + ", ".join(f"{v:.3f}" for v in rest["max"])
                     + f" | {g['min'].mean():.3f} ± {np.std(g['min'], ddof=1):.3f} | "
                     f"{g['max'].mean():.3f} ± {np.std(g['max'], ddof=1):.3f} |")
    text = ("# Row 32 over seeds: MSE(Norm-Mul)/MSE(Norm-Sub), OUE, fixed IPUMS-stand-in sets\n\n"
            "`python benchmarks/fixed_sets_seeds.py`; 30 repetitions per seed, ε = 0.2–2 (10 values); per seed "
            "the min and max over ε of the ratio of mean MSEs.\n\n" + "\n".join(lines) + "\n")
    (Path(__file__).parent / "results" / "fixed_sets_seeds.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
