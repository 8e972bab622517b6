"""Task kind ``multi``: marginals of many attributes — CALM's comparison and the one-way protocols.

Details: docs/experiments.md, section `ldpopt.experiments.task_kinds.multi`.
"""

from __future__ import annotations

import functools

import numpy as np

from ... import multi
from ...interop.multi_freq_ldpy_multi import peer_mi_marginals
from ...methods.normalize import project_simplex
from ..registry import kind

__all__ = ["METHODS", "multi_dataset", "multi_task"]

_POST = ("raw", "norm-sub", "calm", "weighted", "pgm")
_ONE = ("raw", "peer-mi", "norm-sub")
METHODS = (tuple(f"{w}way:{p}" for w in (2, 3) for p in _POST) + ("flat",)
           + tuple(f"{c}:{p}" for c in ("spl", "smp", "rsfd") for p in _ONE))


@functools.lru_cache(maxsize=8)
def multi_dataset(spec) -> multi.MultiDataset:
    """The dataset a config names: a synthetic law by its name in :data:`ldpopt.multi.SYNTHETIC` with
    its generator's arguments (e.g. ``{name = "chain", n, k, strength, domains, rng}``,
    ``{name = "log-linear", n, k, threeway, rng}``) or ``{name = "retail" | "bms-webview-1" | "bms-webview-2",
    top}`` (:func:`ldpopt.multi.item_presence`); ``label`` is only a display name."""
    kw = {"name": spec} if isinstance(spec, str) else dict(spec)
    kw.pop("label", None)
    name = kw.pop("name")
    if name in multi.SYNTHETIC:
        return multi.SYNTHETIC[name](**kw)
    return multi.item_presence(name, **kw)


def _truth(data, way):
    attrs = multi.all_k_way(data.k, way)
    return attrs, [data.marginal(a) for a in attrs]


def _mean_tv(parts, truth) -> float:
    return float(np.mean([multi.total_variation(p, t) for p, t in zip(parts, truth)]))


def _collected(data, oracle, eps, way, posts, rng, truths):
    est = multi.calm(data.domains, eps, way=way, oracle=oracle).simulate(data, rng)
    rows = []
    for post in posts:
        status = ""
        if post == "pgm":
            rows += _reconstructed(est, est.f_tilde, f"{way}way:pgm", truths, status, (2, 3))
            continue
        if post in ("raw", "norm-sub"):
            parts = est.marginals.split(est.f_tilde)
            if post == "norm-sub":
                parts = [project_simplex(x) for x in parts]
            rows.append((f"{way}way:{post}", f"tv{way}", _mean_tv(parts, truths[way][1]), status))
            continue
        if post == "calm":
            f = multi.calm_consistency(est).f
        else:
            sol = multi.consistency_problem(est, "weighted").solve()
            f, status = sol.f, sol.status
        parts = est.marginals.split(f)
        rows.append((f"{way}way:{post}", f"tv{way}", _mean_tv(parts, truths[way][1]), status))
        if way == 3:  # the 2-way marginals: projections of the consistent 3-way ones (any container)
            proj = [_project(est.marginals, parts, a) for a in truths[2][0]]
            rows.append((f"{way}way:{post}", "tv2", _mean_tv(proj, truths[2][1]), status))
        else:
            rows += _reconstructed(est, f, f"{way}way:{post}", truths, status, (3,))
    return rows


def _reconstructed(est, f, method, truths, status, ways):
    """Rows for the marginals of ``ways`` read off the table :func:`ldpopt.multi.fit_table` fits to ``f``
    (weights 1/σ_i²; Frank–Wolfe gap ≤ 1e-7 or 2000 steps, metric ``fw-gap``)."""
    w = 1.0 / np.array([e.sigma2 for e in est.estimates])
    table = multi.fit_table(est.marginals, f, w / w.mean(), tol=1e-7, max_iter=2000)
    rows = [(method, f"tv{x}", _mean_tv(table.marginals(truths[x][0]), truths[x][1]), status) for x in ways]
    return rows + [(method, "fw-gap", table.residual, status)]


def _project(ms, parts, sub) -> np.ndarray:
    """The marginal on ``sub`` from the first marginal of ``ms`` that contains it."""
    i = next(i for i, a in enumerate(ms.attrs) if set(sub) <= set(a))
    return np.bincount(ms.projection(i, sub), weights=parts[i], minlength=int(np.prod([ms.domains[j] for j in sub])))


def _flat(data, oracle, eps, rng, truths):
    est = multi.MarginalSampling(data.domains, eps, [tuple(range(data.k))], oracle, "flat").simulate(data, rng)
    table = project_simplex(est.f_tilde).reshape(data.domains)
    rows = []
    for w in (2, 3):
        parts = [table.sum(axis=tuple(j for j in range(data.k) if j not in a)).ravel() for a in truths[w][0]]
        rows.append(("flat", f"tv{w}", _mean_tv(parts, truths[w][1]), ""))
    return rows


def _one_way(data, oracle, eps, proto, posts, rng, truths):
    build = {"spl": multi.spl, "smp": multi.smp, "rsfd": multi.rsfd}[proto]
    est = build(data.domains, eps, oracle).simulate(data, rng)
    raw = [e.f_tilde for e in est.estimates]
    fns = {"raw": lambda: raw, "peer-mi": lambda: peer_mi_marginals(raw),
           "norm-sub": lambda: [project_simplex(x) for x in raw]}
    return [(f"{proto}:{p}", "tv1", _mean_tv(fns[p](), truths[1][1]), "") for p in posts]


@kind("multi", own_data=True)
def multi_task(task) -> list[dict]:
    want = list(task.methods)
    if set(want) - set(METHODS):
        raise ValueError(f"methods of a multi config must be among {list(METHODS)}, got {sorted(set(want) - set(METHODS))}")
    if task.oracle not in ("grr", "oue"):
        raise ValueError(f"oracle of a multi config must be 'grr' or 'oue' (RS+FD's inner oracles), got {task.oracle!r}")
    data = multi_dataset(task.dataset)
    rng = task.rng()
    truths = {w: _truth(data, w) for w in (1, 2, 3)}
    rows = []
    for way in (2, 3):
        posts = [m.split(":")[1] for m in want if m.startswith(f"{way}way:")]
        if posts:
            rows += _collected(data, task.oracle, task.epsilon, way, posts, rng, truths)
    if "flat" in want:
        rows += _flat(data, task.oracle, task.epsilon, rng, truths)
    for proto in ("spl", "smp", "rsfd"):
        posts = [m.split(":")[1] for m in want if m.startswith(f"{proto}:")]
        if posts:
            rows += _one_way(data, task.oracle, task.epsilon, proto, posts, rng, truths)
    return [{"method": m, "metric": met, "value": float(v), "status": s, "k": data.k, "n_users": data.n}
            for m, met, v, s in rows]
