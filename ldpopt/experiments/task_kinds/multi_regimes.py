"""Task kind ``multi-regimes`` (``ext_multi_regimes``): where reconstruction from 2-way marginals and
CALM's steps stop matching their claims (docs/multi.md, *Where the claims hold*).

Details: docs/experiments.md, section `ldpopt.experiments.task_kinds.multi_regimes`.
"""

from __future__ import annotations

import functools

import numpy as np

from ... import multi
from ..registry import kind
from .multi import _reconstructed, multi_dataset

__all__ = ["BIND_TOL", "METHODS", "model_error", "regimes_task"]

BIND_TOL = 1e-10
METHODS = ("2way:weighted", "3way:weighted", "maxent-of-truth", "2way:calm", "2way:cls", "2way:pgm",
           "2way:likelihood")


def _truth(data, way):
    attrs = multi.all_k_way(data.k, way)
    return attrs, [data.marginal(a) for a in attrs]


def _mean_tv(parts, truth) -> float:
    return float(np.mean([multi.total_variation(p, t) for p, t in zip(parts, truth)]))


@functools.lru_cache(maxsize=16)
def model_error(spec) -> float:
    """Mean TV over the 3-way marginals between ``spec``'s data and the maximum-entropy table of its
    exact 2-way marginals (:func:`ldpopt.multi.maxent`): what reconstruction from 2-way marginals
    cannot recover at any ε (0 for a pairwise law up to IPF's tolerance and the sample's own 3-way
    deviation from pairwise)."""
    data = multi_dataset(spec)
    ms = multi.MarginalSet(data.domains, multi.all_k_way(data.k, 2))
    table = multi.maxent(ms, np.concatenate(_truth(data, 2)[1]))
    attrs3, truth3 = _truth(data, 3)
    return _mean_tv(table.marginals(attrs3), truth3)


@kind("multi-regimes", own_data=True)
def regimes_task(task) -> list[dict]:
    want = set(task.methods)
    if want - set(METHODS):
        raise ValueError(f"methods of a multi-regimes config must be among {list(METHODS)}, "
                         f"got {sorted(want - set(METHODS))}")
    if task.oracle not in ("grr", "oue"):
        raise ValueError(f"oracle of a multi-regimes config must be 'grr' or 'oue', got {task.oracle!r}")
    data = multi_dataset(task.dataset)
    if data.k < 3:
        raise ValueError(f"dataset of a multi-regimes config needs k >= 3 attributes, got k = {data.k}")
    rng = task.rng()
    truths = {w: _truth(data, w) for w in (2, 3)}
    rows = []
    est2 = multi.calm(data.domains, task.epsilon, way=2, oracle=task.oracle).simulate(data, rng)
    sol = multi.consistency_problem(est2, "weighted").solve()
    binds = bool(np.min(sol.f) <= BIND_TOL)
    parts = est2.marginals.split

    def tv2(f) -> float:
        return _mean_tv(parts(f), truths[2][1])

    rows.append(("2way:weighted", "tv2", tv2(sol.f), sol.status))
    if "2way:weighted" in want:
        rows += [r for r in _reconstructed(est2, sol.f, "2way:weighted", truths, sol.status, (3,))]
    if "2way:calm" in want:
        f_c = multi.calm_consistency(est2).f
        rows += [("2way:calm", "tv2", tv2(f_c), ""),
                 ("2way:calm", "calm-linf", float(np.max(np.abs(f_c - sol.f))), "")]
    if "2way:cls" in want:
        s = multi.consistency_problem(est2, "cls").solve()
        rows.append(("2way:cls", "tv2", tv2(s.f), s.status))
    if "2way:pgm" in want:
        w = 1.0 / np.array([e.sigma2 for e in est2.estimates])
        table = multi.fit_table(est2.marginals, est2.f_tilde, w / w.mean(), tol=1e-7, max_iter=2000)
        rows.append(("2way:pgm", "tv2", _mean_tv(table.marginals(truths[2][0]), truths[2][1]), ""))
    if "2way:likelihood" in want and task.oracle == "grr":
        s = multi.consistency_problem(est2, "likelihood").solve()
        rows.append(("2way:likelihood", "tv2", tv2(s.f), s.status))
    if "3way:weighted" in want:
        est3 = multi.calm(data.domains, task.epsilon, way=3, oracle=task.oracle).simulate(data, rng)
        s3 = multi.consistency_problem(est3, "weighted").solve()
        rows.append(("3way:weighted", "tv3", _mean_tv(est3.marginals.split(s3.f), truths[3][1]), s3.status))
    if "maxent-of-truth" in want:
        rows.append(("maxent-of-truth", "tv3", model_error(task.dataset), ""))
    return [{"method": m, "metric": met, "value": float(v), "status": st, "binds": binds, "k": data.k,
             "n_users": data.n} for m, met, v, st in rows]
