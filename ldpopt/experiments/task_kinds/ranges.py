"""Task kind ``range-queries``: MSE of range answers, flat vs hierarchical vs Haar (
Cormode, Kulkarni & Srivastava VLDB 2019 §6 experiments, Hay et al. VLDB 2010 consistency).

Details: docs/experiments.md, section `ldpopt.experiments.task_kinds.ranges`.
"""

from __future__ import annotations

import re

import numpy as np

from ... import oracles as _oracles
from ...hierarchy import collect, nonnegative_heuristic
from ...hierarchy.haar import haar_collect, haar_leaves, haar_range_variance
from ...hierarchy.queries import cover_answers, leaf_answers, random_ranges
from ...hierarchy.variance import flat_range_variance, hierarchical_range_variance
from ..registry import kind
from ..toolkit import dataset_of, params

__all__ = ["parse_method", "range_queries"]

_HH = re.compile(r"^hh(\d+)(-c|-nn)?$")


def parse_method(name: str):
    """("flat" | "haar" | "hh", branching or None, "raw" | "c" | "nn")."""
    if name in ("flat", "haar"):
        return name, None, "raw"
    m = _HH.match(name)
    if not m or int(m.group(1)) < 2:
        raise ValueError(f"range-queries method must be 'flat', 'haar' or 'hhB[-c|-nn]' with B >= 2, got {name!r}")
    return "hh", int(m.group(1)), (m.group(2) or "-raw")[1:]


@kind("range-queries")
def range_queries(task) -> list[dict]:
    ds = dataset_of(task)
    rng = task.rng()
    p = params(task)
    opar = dict(p.get("oracle_params", {}))
    exact = bool(p.get("exact_variance", True))
    d, n, f, tc = ds.d, int(ds.n), ds.frequencies, ds.counts
    lengths = [int(L) for L in p.get("lengths", [1, 16, 256]) if int(L) <= d]
    q = int(p.get("queries", 50))
    ranges = [random_ranges(d, L, q, rng) for L in lengths]
    a, b = np.concatenate([r[0] for r in ranges]), np.concatenate([r[1] for r in ranges])
    truth = leaf_answers(f, a, b)
    which = np.repeat(np.arange(len(lengths)), q)
    methods = [parse_method(m) + (m,) for m in task.methods]
    answers, variances, hh = {}, {}, {}
    for kind_, B, post, name in methods:
        if kind_ == "flat":
            fo = _oracles.get(task.oracle, epsilon=task.epsilon, d=d, **opar)
            answers[name] = leaf_answers(fo.simulate(tc, rng).f_tilde, a, b)
            if exact:
                variances[name] = flat_range_variance(f, n, task.oracle, task.epsilon, a, b, **opar)
        elif kind_ == "haar":
            answers[name] = leaf_answers(haar_leaves(*haar_collect(tc, task.epsilon, rng=rng)), a, b)
            if exact:
                variances[name] = haar_range_variance(f, n, task.epsilon, a, b)
        else:
            if B not in hh:  # one collection per branching serves raw, -c and -nn
                hh[B] = collect(tc, task.oracle, task.epsilon, B, rng=rng, **opar)
            h = hh[B]
            if post == "raw":
                answers[name] = cover_answers(h.tree, h.y, a, b)
            elif post == "c":
                answers[name] = leaf_answers(h.consistent()[:d], a, b)
            else:
                answers[name] = leaf_answers(nonnegative_heuristic(h.tree, h.y, h.var)[:d], a, b)
            if exact and post != "nn":
                variances[name] = hierarchical_range_variance(f, n, task.oracle, task.epsilon, B, a, b,
                                                              consistent=post == "c", **opar)
    rows = []
    for name, ans in answers.items():
        err2 = (ans - truth) ** 2
        for i, L in enumerate(lengths):
            sel = which == i
            rows.append({"method": name, "metric": "mse", "length": L, "value": float(err2[sel].mean())})
            if name in variances:
                rows.append({"method": name, "metric": "mse-exact", "length": L,
                             "value": float(variances[name][sel].mean())})
    return rows
