"""Task kind ``distribution-error`` (``ldpcube_grid``): the distribution-error task of LDP³ (Khodaie,
Balioglu & Gursoy, "Post-Processing in Local Differential Privacy: An Extensive Evaluation and Benchmark
Platform", IFIP SEC 2025; code github.com/alrzakh/LDPcube): every configured method on one estimate,
the four distances of LDP³'s ``metrics/`` between the post-processed f' and the true frequencies f.

Details and the distances' conventions (LDP³'s, kept so that numbers compare): docs/experiments.md,
section `ldpopt.experiments.task_kinds.ldpcube`. The win-percentage table of a run is
:mod:`.winrate_report` (``ldpopt experiment winrate``).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..registry import kind
from ..toolkit import QUERY_METHODS, active_methods, dataset_of, outputs, simulate

__all__ = ["DISTANCES", "distance_rows", "emd", "kl", "l1", "l2"]


def l1(f_post: np.ndarray, f: np.ndarray) -> float:
    """(1/d) Σ |f' − f| (LDP³'s convention, docs/experiments.md)."""
    return float(np.mean(np.abs(f_post - f)))


def l2(f_post: np.ndarray, f: np.ndarray) -> float:
    """sqrt(Σ (f' − f)²) (LDP³'s convention, docs/experiments.md)."""
    return float(np.sqrt(np.sum((f_post - f) ** 2)))


def kl(f_post: np.ndarray, f: np.ndarray) -> float:
    """Σ over f'_v > 0 and f_v > 0 of f'_v log(f'_v / f_v) (LDP³'s convention, docs/experiments.md).

    *Caveat* (kept as LDP³'s so that numbers compare): f' is not renormalised, so this is a divergence
    only when Σ f' = 1. Otherwise it rewards an output summing below 1 and can be negative — Power's
    (Σ f' ≈ 0.95 at ε = 4) is, in 15 of 30 repetitions for GRR at ε = 4 on Zipf(1.5), d = 256 — and a
    ranking on it differs from one on f'/Σf' (there PowerNS, not Power, wins 26 of those 30;
    ``benchmarks/ldpcube_kl.py``). Pass ``f_post / f_post.sum()`` for the normalised one.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt.experiments.task_kinds.ldpcube import kl
    >>> f = np.array([0.5, 0.5])
    >>> kl(np.array([0.4, 0.4]), f) < 0 < kl(np.array([0.6, 0.4]), f)  # mass below 1 reads as "closer"
    True
    """
    both = (f_post > 0) & (f > 0)
    return float(np.sum(f_post[both] * np.log(f_post[both] / f[both])))


def emd(f_post: np.ndarray, f: np.ndarray) -> float:
    """Σ_v |cumsum(f' − f)_v|: the 1-D earth mover's distance on the ordered domain (LDP³'s convention, docs/experiments.md).

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt.experiments.task_kinds.ldpcube import emd
    >>> emd(np.array([0.0, 1.0, 0.0]), np.array([1.0, 0.0, 0.0]))  # one unit of mass moved one step
    1.0
    >>> emd(np.array([0.0, 0.0, 1.0]), np.array([1.0, 0.0, 0.0]))  # two steps
    2.0
    """
    return float(np.sum(np.abs(np.cumsum(f_post - f))))


#: the distances of the task, by the name its rows carry
DISTANCES: dict[str, Callable[[np.ndarray, np.ndarray], float]] = {"l1": l1, "l2": l2, "kl": kl, "emd": emd}


def distance_rows(fs: dict, f: np.ndarray) -> list[dict]:
    """One row ``method, metric, value`` per method in ``fs`` (name → f') and distance."""
    return [{"method": m, "metric": name, "value": fn(np.asarray(out, dtype=np.float64), f)}
            for m, out in fs.items() for name, fn in DISTANCES.items()]


@kind("distribution-error", registry_methods=(), oracle_params=True)
def distribution_error(task) -> list[dict]:
    """LDP³'s evaluation cell: one estimate of the task's dataset, oracle and ε (the oracle's exact fast
    path unless ``params.exact``), every configured method (``base`` for no post-processing), the four
    distances of :data:`DISTANCES` to the true frequencies."""
    ds = dataset_of(task)
    est = simulate(task, ds.counts, ds.d, task.rng())
    names = [m for m in active_methods(task) if m not in QUERY_METHODS]
    fs = outputs(est, names)
    return distance_rows(fs, ds.frequencies)
