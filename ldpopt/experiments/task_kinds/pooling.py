"""Task kind ``pooling``: one estimate from groups of users who chose different ε / oracles
(:mod:`ldpopt.pooling`).

Details: docs/experiments.md, section `ldpopt.experiments.task_kinds.pooling`.
"""

from __future__ import annotations

import time

import numpy as np

from ... import oracles as _oracles
from ...methods.normalize import project_simplex
from ...pooling import group_from_estimate, pool_ivw, pool_mle
from ...queries import mse
from ..registry import kind
from ..toolkit import dataset_of, params

__all__ = ["METHODS", "group_specs", "pooling"]

#: the config's ``methods`` (any subset, in any order)
METHODS = ("alone", "pool-naive", "pool-ivw", "pool-ivw-simplex", "pool-mle")


def group_specs(task) -> list[dict]:
    """The task's groups with ``"task"`` substituted; shares checked to sum to 1."""
    raw = params(task).get("groups")
    if not raw:
        raise ValueError("params.groups must list the groups ({oracle, epsilon, share} tables)")
    out = []
    for i, g in enumerate(raw):
        if not isinstance(g, dict) or set(g) != {"oracle", "epsilon", "share"}:
            raise ValueError(f"params.groups[{i}] must be a table with keys oracle, epsilon, share; got {g!r}")
        out.append({"oracle": task.oracle if g["oracle"] == "task" else str(g["oracle"]),
                    "epsilon": float(task.epsilon if g["epsilon"] == "task" else g["epsilon"]),
                    "share": float(g["share"])})
    shares = np.array([g["share"] for g in out])
    if np.any(shares <= 0) or abs(shares.sum() - 1.0) > 1e-9:
        raise ValueError(f"params.groups shares must be > 0 and sum to 1, got {shares.tolist()}")
    return out


@kind("pooling")
def pooling(task) -> list[dict]:
    want = set(task.methods)
    if want - set(METHODS):
        raise ValueError(f"methods of a pooling config must be among {list(METHODS)}, got {sorted(want - set(METHODS))}")
    ds = dataset_of(task)
    rng = task.rng()
    specs = group_specs(task)
    f = ds.frequencies
    split = rng.multinomial(ds.counts, [g["share"] for g in specs])  # (d, G): each user picks a group
    ests = []
    for i, g in enumerate(specs):
        if split[:, i].sum() < 1:
            raise ValueError(f"group {i} received no users: raise its share or the dataset's n")
        o = _oracles.get(g["oracle"], epsilon=g["epsilon"], d=ds.d)
        ests.append(o.simulate(split[:, i], rng))
    rows = []

    def row(method, metric, value, **extra):
        rows.append({"method": method, "metric": metric, "value": float(value), **extra})

    for i, (g, e) in enumerate(zip(specs, ests) if "alone" in want else ()):
        row(f"alone:{i}", "mse", mse(project_simplex(e.f_tilde), f), group=f"{g['oracle']} ε={g['epsilon']:g}",
            share=g["share"])
    n = np.array([e.n for e in ests], dtype=np.float64)
    naive = np.sum(n[:, None] * np.stack([e.f_tilde for e in ests]), axis=0) / n.sum()
    if "pool-naive" in want:
        row("pool-naive", "mse", mse(project_simplex(naive), f))
    groups = [group_from_estimate(e) for e in ests]
    if want & {"pool-ivw", "pool-ivw-simplex"}:
        t0 = time.perf_counter()
        ivw = pool_ivw(groups)
        row("pool-ivw", "seconds", time.perf_counter() - t0)
        row("pool-ivw", "mse", mse(ivw.f_raw, f))
        row("pool-ivw-simplex", "mse", mse(ivw.f, f))
        row("pool-ivw", "predicted-mse", np.mean(pool_ivw(groups, at=f, simplex=False).variance))
    if "pool-mle" in want:
        t0 = time.perf_counter()
        ml = pool_mle(groups)
        row("pool-mle", "seconds", time.perf_counter() - t0)
        row("pool-mle", "mse", mse(ml.f, f))
    return rows
