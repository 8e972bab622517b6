"""Count-level estimates for the solver tests: OUE support counts (Binomial per value) and GRR counts
(one Multinomial) of a Dirichlet(α) truth, without simulating users."""

from __future__ import annotations

import numpy as np

from ldpopt.estimate import Estimate


def oue_counts(d: int, n: int, seed: int, eps: float = 1.0, alpha: float = 0.2) -> Estimate:
    rng = np.random.default_rng(seed)
    p, q = 0.5, 1.0 / (1.0 + np.exp(eps))
    true = rng.dirichlet(np.full(d, alpha))
    return Estimate.from_counts(rng.binomial(n, q + (p - q) * true).astype(float), n, eps, p, q)


def grr_counts(d: int, n: int, seed: int, eps: float = 2.0, alpha: float = 0.2) -> Estimate:
    rng = np.random.default_rng(seed)
    p, q = np.exp(eps) / (np.exp(eps) + d - 1), 1.0 / (np.exp(eps) + d - 1)
    true = rng.dirichlet(np.full(d, alpha))
    return Estimate.from_counts(rng.multinomial(n, q + (p - q) * true).astype(float), n, eps, p, q)
