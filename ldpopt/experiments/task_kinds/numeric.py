"""Task kind ``numeric``: distribution estimation of a numeric column under the Square Wave mechanism
(Li et al. SIGMOD 2020).

One task = one dataset × ε × repetition (the oracle axis must be ``"sw"``). Every user's value in
[0, 1] (:func:`ldpopt.numeric.columns.unit_values`, seeded per task) is perturbed by SW; the reports
are binned into ``d_out`` bins; the truth is the histogram of the users' values on ``d`` bins. Methods:

* ``sw-em``: EM (:func:`ldpopt.numeric.em`), the paper's stopping rule;
* ``sw-ems``: EMS (:func:`ldpopt.numeric.ems`), Li et al.'s recommended estimator;
* ``sw-penalized``: ldpopt's penalised exact likelihood, λ by ``folds``-fold held-out likelihood
  over the grid ``lambdas`` (:func:`ldpopt.numeric.choose_lambda`).

Rows: method, metric ∈ {``w1``, ``range-<α>`` for α in ``alphas``, ``quantile``, ``converged``
(1.0 when the method's own stopping rule/certificate was met)}, value; ``lam`` (chosen λ) and ``gap``
(the certified bound on J_λ(f) − J*) for ``sw-penalized``.
"""

from __future__ import annotations

import numpy as np

from ...numeric import SquareWave, choose_lambda, em, ems, quantile_error, range_query_error, wasserstein1
from ...numeric.columns import unit_values
from ...numeric.penalized import DEFAULT_LAMBDAS
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
