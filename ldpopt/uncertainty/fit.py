"""The plausible truth a parametric bootstrap (and :func:`ldpopt.choose`) draws from.

Notes: docs/notes/uncertainty.md, "ldpopt.uncertainty.fit"."""

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
