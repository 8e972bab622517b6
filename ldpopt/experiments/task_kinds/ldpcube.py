"""The distribution-error task of LDP³ (Khodaie, Balioglu & Gursoy, "Post-Processing in Local Differential
Privacy: An Extensive Evaluation and Benchmark Platform", IFIP SEC 2025; code github.com/alrzakh/LDPcube):
one estimate per task, every configured method, the four distances of LDP³'s ``metrics/`` between the
post-processed f' and the true frequencies f.

The distances (:data:`DISTANCES`), LDP³'s conventions kept so that numbers compare:

* ``l1``: (1/d) Σ_v |f'_v − f_v| (their ``l1_error`` divides by the length: a mean, not a sum);
* ``l2``: sqrt(Σ_v (f'_v − f_v)²) (their ``l2_error``: the Euclidean distance, not a mean);
* ``kl``: Σ_{v: f'_v > 0, f_v > 0} f'_v log(f'_v/f_v) — KL(f' ‖ f) over the values where both are
  positive (their ``kl_divergence(post, true)``); a value with f'_v > 0 = f_v, which would make the
  divergence infinite, is left out, as theirs does, so read it beside the other three;
* ``emd``: Σ_{v<d} |F'_v − F_v| with F the cumulative sums in the domain's order (their ``EMD.py``):
  the 1-D Wasserstein-1 distance between f' and f on the ordered domain 0 … d−1 with unit spacing.
  *Convention*: for vectors of different totals (Base, Base-Pos) the last term |Σf' − Σf| counts the
  missing or extra mass once, as moving it to the end of the domain.

Rows: ``method, metric, value`` for each method and distance. The win-percentage table of a run is
:mod:`.winrate_report` (``ldpopt experiment winrate``).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..registry import kind
from ..toolkit import QUERY_METHODS, active_methods, dataset_of, outputs, simulate

__all__ = ["DISTANCES", "distance_rows", "emd", "kl", "l1", "l2"]


def l1(f_post: np.ndarray, f: np.ndarray) -> float:
    """(1/d) Σ |f' − f| (module docstring)."""
    return float(np.mean(np.abs(f_post - f)))


def l2(f_post: np.ndarray, f: np.ndarray) -> float:
    """sqrt(Σ (f' − f)²) (module docstring)."""
    return float(np.sqrt(np.sum((f_post - f) ** 2)))


def kl(f_post: np.ndarray, f: np.ndarray) -> float:
    """Σ over f'_v > 0 and f_v > 0 of f'_v log(f'_v / f_v) (module docstring)."""
    both = (f_post > 0) & (f > 0)
    return float(np.sum(f_post[both] * np.log(f_post[both] / f[both])))


def emd(f_post: np.ndarray, f: np.ndarray) -> float:
    """Σ_v |cumsum(f' − f)_v|: the 1-D earth mover's distance on the ordered domain (module docstring).

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


@kind("distribution-error", registry_methods=())
def distribution_error(task) -> list[dict]:
    """LDP³'s evaluation cell: one estimate of the task's dataset, oracle and ε (the oracle's exact fast
    path unless ``params.exact``), every configured method (``base`` for no post-processing), the four
    distances of :data:`DISTANCES` to the true frequencies."""
    ds = dataset_of(task)
    est = simulate(task, ds.counts, ds.d, task.rng())
    names = [m for m in active_methods(task) if m not in QUERY_METHODS]
    fs = outputs(est, names)
    return distance_rows(fs, ds.frequencies)
