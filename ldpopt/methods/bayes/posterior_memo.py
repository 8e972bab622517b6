"""The memo of Power's posterior means: (digest of x, S, prior) -> E[k | x] (read-only arrays).

Power, PowerNS and Calibrate (power law) compute the same posterior mean of the same resamples in a
bootstrap of every method; :mod:`.bayes` reads and fills it per call, :mod:`.exponent_fit_batch` prefills
it for a batch of resamples. Bounded by the number of stored values (2^24 float64, 128 MB), then
cleared.
"""

from __future__ import annotations

import hashlib

import numpy as np

from . import engine as core

__all__ = ["MEMO", "MEMO_VALUES", "key"]

MEMO: dict = {}
MEMO_VALUES = 1 << 24


def key(x, S, prior: core.Prior) -> tuple:
    """Key of :data:`MEMO` for the posterior mean of the counts ``x`` under ``prior``."""
    x = np.ascontiguousarray(x, dtype=np.float64)
    return (hashlib.blake2b(x.tobytes(), digest_size=20).digest(), float(S), prior.kind, prior.n,
            prior.s, prior.mu, prior.tau)
