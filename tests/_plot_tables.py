"""Small synthetic results tables shaped like the saved tables of each Wang plot kind, for the
figure tests (tests/test_plots.py): numbers are made up (log-normal around a per-method level); only
the layout (columns, keys, repetitions) matters to a figure."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd

ORACLES = ["grr", "oue", "sue", "olh", "blh", "hr", "ss"]
METHODS = ["base", "base-pos", "post-pos", "norm", "norm-mul", "norm-sub", "mle-apx", "base-cut", "norm-cut",
           "power", "power-ns"]


def _rows(keys: dict, reps=3, seed=0, metrics=("mse",)):
    rng = np.random.default_rng(seed)
    names = list(keys)
    out = []
    for combo in itertools.product(*keys.values()):
        row = dict(zip(names, combo))
        level = 1e-4 * (1 + METHODS.index(row["method"]) / 3) if row.get("method") in METHODS else 1e-4
        for rep in range(reps):
            for metric in metrics:
                out.append({**row, "rep": rep, "metric": metric, "value": level * rng.lognormal(0, 0.2)})
    return pd.DataFrame(out)


def table(kind: str, *, datasets=("zipf", "emoji"), oracles=ORACLES, reps=3) -> pd.DataFrame:
    eps = [0.2, 0.5, 1.0, 2.0, 4.0]
    if kind == "full-domain":
        return _rows({"dataset": datasets, "oracle": oracles, "epsilon": eps, "method": METHODS}, reps,
                     metrics=("mse", "mae"))
    if kind == "set-value":
        return _rows({"dataset": datasets, "oracle": oracles, "epsilon": [1.0], "method": METHODS,
                      "rho": [10, 30, 50, 70, 90]}, reps)
    if kind == "top-k":
        return _rows({"dataset": datasets, "oracle": oracles, "epsilon": [1.0], "method": METHODS,
                      "k": [2, 8, 16, 32]}, reps)
    if kind == "fixed-sets":
        return _rows({"dataset": datasets, "oracle": oracles, "epsilon": eps, "method": METHODS,
                      "query_set": ["group", "subgroup"]}, reps)
    if kind == "benefit":
        t = _rows({"dataset": datasets, "oracle": oracles, "epsilon": [1.0], "method": METHODS,
                   "n_users": [200_000, 1_000_000, 2_000_000]}, reps, metrics=("n_prime",))
        t["value"] = t.n_users * (1 + t.value * 1e4)
        return t
    if kind == "choose-method":
        t = _rows({"dataset": ["emoji"], "oracle": oracles, "epsilon": [0.5, 1.0, 2.0, 4.0], "method": METHODS,
                   "fit": ["real", "norm-sub", "power-ns"]}, reps)
        t["query_set"] = "subgroup"
        return t
    raise ValueError(kind)


def meta(kind: str, name: str = "fake") -> dict:
    return {"config": {"kind": kind, "name": f"{name}_{kind}"}, "quick": False}
