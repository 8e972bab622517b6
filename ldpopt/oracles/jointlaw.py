"""The exact joint law of an oracle's support counts on a small domain, by enumeration.

Notes: docs/notes/python.md, "ldpopt.oracles.jointlaw"."""

from __future__ import annotations

import numpy as np

from .._validation import check_counts
from .base import FrequencyOracle

__all__ = ["count_moments", "output_supports"]


def output_supports(oracle: FrequencyOracle) -> np.ndarray:
    """S(y) for every column y of ``oracle.output_distribution()``, as a bool (d, |Y|) array: the
    oracle's own :meth:`~ldpopt.oracles.base.FrequencyOracle.output_supports` (each oracle states its
    column order there)."""
    return oracle.output_supports()


def count_moments(oracle: FrequencyOracle, true_counts) -> tuple[np.ndarray, np.ndarray]:
    """Exact mean (d,) and covariance (d, d) of the support counts for histogram ``true_counts``."""
    tc = check_counts(true_counts, "true_counts", d=oracle.d, integral=True)
    P = oracle.output_distribution()          # (d, |Y|): Pr[y | x]
    S = output_supports(oracle).astype(np.float64)  # (d, |Y|): S(y)_v
    mu = P @ S.T                              # (x, v): E[S_v | x]
    second = np.einsum("xy,vy,wy->xvw", P, S, S)  # (x, v, w): E[S_v S_w | x]
    cov_x = second - mu[:, :, None] * mu[:, None, :]
    return tc @ mu, np.tensordot(tc, cov_x, axes=1)
