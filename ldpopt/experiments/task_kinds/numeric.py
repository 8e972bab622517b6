"""Task kind ``numeric``: distribution estimation of a numeric column under the Square Wave mechanism
(Li et al. SIGMOD 2020).

Details: docs/experiments.md, section `ldpopt.experiments.task_kinds.numeric`.
"""

from __future__ import annotations

import numpy as np

from ...numeric import choose_lambda, em, ems
from ...numeric.columns import unit_values
from ...numeric.metrics import quantile_error, range_query_error, wasserstein1
from ...numeric.penalized import DEFAULT_LAMBDAS
from ...numeric.square_wave import SquareWave
from ..registry import kind
from ..toolkit import load_dataset, params

__all__ = ["METHODS", "numeric"]

METHODS = ("sw-ems", "sw-em", "sw-penalized")


def _fit(method, c, K, p, rng):
    if method == "sw-em":
        r = em(c, K)
        return r.f, r.converged, {}
    if method == "sw-ems":
        r = ems(c, K)
        return r.f, r.converged, {}
    if method == "sw-penalized":
        r = choose_lambda(c, K, lambdas=p.get("lambdas", DEFAULT_LAMBDAS), folds=int(p.get("folds", 2)), rng=rng)
        return r.f, r.converged, {"lam": r.lam, "gap": r.gap}
    raise ValueError(f"methods must be among {METHODS} for kind 'numeric', got {method!r}")


@kind("numeric")
def numeric(task) -> list[dict]:
    if task.oracle != "sw":
        raise ValueError(f"oracles must be ['sw'] for kind 'numeric' (the Square Wave mechanism), got {task.oracle!r}")
    p = params(task)
    d, d_out = int(p.get("d", 256)), int(p.get("d_out", p.get("d", 256)))
    rng = task.rng()
    vals = unit_values(load_dataset(task.dataset), rng)
    truth = np.histogram(vals, bins=d, range=(0.0, 1.0))[0] / vals.size
    sw = SquareWave(task.epsilon)
    c = sw.bin_reports(sw.perturb(vals, rng), d_out)
    K = sw.channel(d, d_out)
    qseed = int(rng.integers(2**63))
    rows = []
    for m in task.methods:
        f, ok, extra = _fit(m, c, K, p, rng)
        vals_m = {"w1": wasserstein1(f, truth), "quantile": quantile_error(f, truth), "converged": float(ok)}
        for a in p.get("alphas", [0.1, 0.4]):
            vals_m[f"range-{a:g}"] = range_query_error(f, truth, float(a), n_queries=int(p.get("n_queries", 200)),
                                                       rng=qseed)
        rows += [{"method": m, "metric": k, "value": float(v), **extra} for k, v in vals_m.items()]
    return rows
