"""Task kind ``keyvalue`` (``ext_keyvalue``): key–value collection (PCKV-UE, PCKV-GRR, PrivKV;
:mod:`ldpopt.keyvalue`), each protocol's own estimator against the consistent Problem on the same
reports — frequency and mean MSE per key-frequency band.

Details: docs/experiments.md, section `ldpopt.experiments.task_kinds.keyvalue`; the measured table:
docs/results/key-value.md (the measurement of benchmarks/bench_keyvalue.py).
"""

from __future__ import annotations

import functools
from collections.abc import Callable

import numpy as np

from ... import keyvalue as kv
from ..registry import kind

__all__ = ["DATASETS", "METHODS", "PROTOCOLS", "keyvalue", "keyvalue_dataset"]

#: the config's ``oracles``: protocol name → constructor (ε, d, ℓ)
PROTOCOLS: dict[str, Callable[[float, int, int], kv.PCKV | kv.PrivKV]] = {"pckv-ue": lambda eps, d, ell: kv.pckv_ue(eps, d, ell),
             "pckv-grr": lambda eps, d, ell: kv.pckv_grr(eps, d, ell),
             "privkv": lambda eps, d, ell: kv.privkv(eps, d)}
#: the config's ``methods``: the protocol's paper estimator, ldpopt's consistent one
METHODS = ("paper", "consistent")
#: the config's dataset names → generators of :mod:`ldpopt.keyvalue`
DATASETS: dict[str, Callable[..., kv.KVData]] = {"power-law": kv.power_law, "ratings-like": kv.ratings_like}
#: the head band: keys whose true frequency is at least this quantile (the 10 % most frequent)
HEAD_QUANTILE = 0.9


@functools.lru_cache(maxsize=8)
def keyvalue_dataset(spec) -> tuple[kv.KVData, int]:
    """(data, ℓ) of a config's dataset: ``{name = "power-law" | "ratings-like", ell, label, …}`` with the
    generator's arguments (``n``, ``d``, ``items``, ``alpha``, ``sigma``, ``rng``); ``ell`` is PCKV's
    padding length used with it (default 1; PrivKV has none); ``label`` is only a display name."""
    kw = {"name": spec} if isinstance(spec, str) else dict(spec)
    kw.pop("label", None)
    ell = int(kw.pop("ell", 1))
    name = kw.pop("name")
    if name not in DATASETS:
        raise ValueError(f"dataset of a keyvalue config must be one of {sorted(DATASETS)}, got {name!r}")
    return DATASETS[name](**kw), ell


def _scores(est, F, M, head, held) -> list[tuple[str, float]]:
    """(metric, value): frequency MSE over all / head / tail keys, mean MSE over the held keys of each
    band (a band with no held key gives no mean row)."""
    out = []
    for band, mask in (("all", np.ones_like(head)), ("head", head), ("tail", ~head)):
        out.append((f"freq-{band}", float(np.mean((est.freq[mask] - F[mask]) ** 2))))
        hm = mask & held
        if hm.any():
            out.append((f"mean-{band}", float(np.mean((est.mean[hm] - M[hm]) ** 2))))
    return out


@kind("keyvalue", own_data=True)
def keyvalue(task) -> list[dict]:
    """One repetition: one draw of the protocol's reports (its fast path, exact in law), both
    estimators on those counts; rows per (method, metric), the consistent ones with the solver's
    status and the certificate's relative gap (metric ``relative-gap``)."""
    if task.oracle not in PROTOCOLS:
        raise ValueError(f"oracles of a keyvalue config must be among {list(PROTOCOLS)}, got {task.oracle!r}")
    bad = sorted(set(task.methods) - set(METHODS))
    if bad:
        raise ValueError(f"methods of a keyvalue config must be among {list(METHODS)}, got {bad}")
    data, ell = keyvalue_dataset(task.dataset)
    proto = PROTOCOLS[task.oracle](task.epsilon, data.d, ell)
    F, M = data.frequencies(), data.means()
    head, held = F >= np.quantile(F, HEAD_QUANTILE), F > 0
    counts = proto.sample_counts(data, task.rng())
    rows = []
    if "paper" in task.methods:
        rows += [("paper", m, v, "") for m, v in _scores(proto.estimate(counts, data.n), F, M, head, held)]
    if "consistent" in task.methods:
        cons = kv.solve_consistent(proto, counts, data.n)
        status = cons.solution.status
        rows += [("consistent", m, v, status) for m, v in _scores(cons, F, M, head, held)]
        rows.append(("consistent", "relative-gap", float(cons.certificate.relative_gap), status))
    return [{"method": m, "metric": met, "value": v, "status": s, "ell": getattr(proto, "ell", 1),
             "n_users": data.n, "d": data.d} for m, met, v, s in rows]
