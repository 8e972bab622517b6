"""The plausible truth a parametric bootstrap (and :func:`ldpopt.choose`) draws from.

NDSS 2020 §V-D (Fig. 9) fits "a synthetic dataset from the estimation" and notes it must be
consistent (non-negative, summing to one); the paper tries Norm-Sub and PowerNS. ldpopt uses
**Norm-Sub** of the estimate (*choice*): it is the Euclidean projection of f̃ on the simplex (the
least-squares consistent distribution, arXiv §3.2 / Theorem 1, and the approximate MLE), it is
O(d log d) with no fitted prior, and it keeps the estimate's large values nearly unchanged, so the
bootstrap world is as close to the data as a distribution can be. Its cost: Norm-Sub zeroes the
tail, so the bootstrap world has more exact zeros than the truth usually has (its effect on
coverage is what the coverage table measures).

The synthetic population is the integer histogram closest to n·f̂ (largest-remainder rounding,
summing to n exactly): deterministic, so repeated calls see the same world.
"""

from __future__ import annotations

import numpy as np

from ..estimate import Estimate
from ..methods.normalize import project_simplex

__all__ = ["plausible_truth", "population"]


def plausible_truth(estimate: Estimate) -> np.ndarray:
    """f̂ = Norm-Sub(f̃): the projection of f̃ on the probability simplex."""
    return project_simplex(np.asarray(estimate.f_tilde, dtype=np.float64), 1.0)


def population(f, n: int) -> np.ndarray:
    """Integer histogram (int64, summing to n) closest to n·f: floor, then the largest remainders
    get the missing users (ties to the lower index)."""
    x = np.asarray(f, dtype=np.float64) * n
    base = np.floor(x).astype(np.int64)
    short = int(n - base.sum())
    if short > 0:
        rem = x - base
        top = np.argsort(-rem, kind="stable")[:short]
        base[top] += 1
    return base
