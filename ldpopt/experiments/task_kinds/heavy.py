"""Task kind ``heavy-discovery`` (``ext_heavy_hitters``): heavy-hitter discovery over strings with PEM,
TreeHist and SFP (:mod:`ldpopt.heavy`), and PEM's levels made consistent.

Details: docs/experiments.md, section `ldpopt.experiments.task_kinds.heavy`.
"""

from __future__ import annotations

import numpy as np

from ... import heavy
from ...heavy.consistency import consistent
from ..registry import kind
from ..toolkit import load_dataset, params

__all__ = ["METHODS", "heavy_discovery", "string_codes"]

METHODS = ("pem", "pem-consistent", "treehist", "sfp")
TOTAL_BITS = 48


def string_codes(spec, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(codes, counts) of the task's dataset as 48-bit strings (docs/experiments.md); zero counts dropped."""
    ds = load_dataset(spec)
    if ds.name == "aol":
        codes = heavy.encode(list(ds.labels), TOTAL_BITS // 8)
    else:
        gen = np.random.default_rng(seed)
        codes = np.unique(gen.integers(0, 1 << TOTAL_BITS, size=2 * ds.d + 16))
        codes = gen.permutation(codes)[: ds.d]
    keep = ds.counts > 0
    return codes[keep].astype(np.int64), ds.counts[keep].astype(np.int64)


@kind("heavy-discovery")
def heavy_discovery(task) -> list[dict]:
    want = list(task.methods)
    if set(want) - set(METHODS):
        raise ValueError(f"methods of a heavy-discovery config must be among {list(METHODS)}, "
                         f"got {sorted(set(want) - set(METHODS))}")
    prm = params(task)
    codes, counts = string_codes(task.dataset, int(prm.get("string_seed", 0)))
    exact = bool(prm.get("exact", False))
    gen = task.rng()
    oracle = task.oracle
    rows = []
    for k in [int(x) for x in prm.get("ks", [16])]:
        truth = heavy.true_top(codes, counts, k)
        found = {}
        if "pem" in want or "pem-consistent" in want:
            found["pem"] = heavy.pem(codes, counts, total_bits=TOTAL_BITS, epsilon=task.epsilon, k=k,
                                     step_bits=int(prm.get("pem_step", 6)), oracle=oracle, rng=gen, exact=exact)
            if "pem-consistent" in want:
                found["pem-consistent"], _sol = consistent(found["pem"])
        if "treehist" in want:
            found["treehist"] = heavy.treehist(codes, counts, total_bits=TOTAL_BITS, epsilon=task.epsilon, k=k,
                                               step_bits=int(prm.get("treehist_step", 8)), oracle=oracle,
                                               rng=gen, exact=exact)
        if "sfp" in want:
            found["sfp"] = heavy.sfp(codes, counts, total_bits=TOTAL_BITS, epsilon=task.epsilon, k=k,
                                     fragment_bits=int(prm.get("sfp_fragment", 8)), k_fragments=2 * k,
                                     oracle=oracle, rng=gen, exact=exact)
        for m in want:
            r = found[m]
            prec, rec, f1 = heavy.precision_recall_f1(r.items, truth)
            status = r.params.get("consistency", "")
            for metric, v in (("precision", prec), ("recall", rec), ("f1", f1),
                              ("mse", heavy.result.frequency_mse(r, codes, counts))):
                rows.append({"method": m, "k": k, "metric": metric, "value": float(v), "status": status})
    return rows
