"""The adaptive attack on local hashing (OLH, BLH): crafted reports whose support size follows the
genuine law while they support as many targets as that allows.

Notes: docs/notes/poisoning.md, "ldpopt.robust.apa_hashing"."""

from __future__ import annotations

import numpy as np

from .._validation import as_generator
from ..oracles.base import FrequencyOracle
from ..oracles.hashing import OLH, keyed_hash
from ._draws import key_blocks

__all__ = ["apa_hash_counts", "apa_hash_reports"]

# cells (users × keys × domain values) hashed per block
_CELLS = 1 << 22


def apa_hash_reports(oracle: FrequencyOracle, targets: np.ndarray, m: int, rng, candidates: int = 1000) -> np.ndarray:
    """(m, 2) OLH/BLH reports (key, bucket) of the adaptive search (module notes); ``targets``
    already checked."""
    if not isinstance(oracle, OLH) or oracle.report_form != "hash":  # BLH is an OLH
        raise ValueError(f"the adaptive hashing attack is defined for OLH's hashed reports (OLH, BLH), "
                         f"not for oracle {oracle.name!r}")
    gen = as_generator(rng)
    d, g, c = oracle.d, oracle.g, int(candidates)
    want = gen.choice(d + 1, size=m, p=oracle.support_size_pmf())
    domain = np.arange(d, dtype=np.int64)
    is_target = np.zeros(d, dtype=np.int64)
    is_target[targets] = 1
    out = np.empty((m, 2), dtype=np.int64)
    for u0, keys in key_blocks(gen, m, c, d, _CELLS):
        b = keys.shape[0]
        h = keyed_hash(keys[:, :, None], domain[None, None, :], g)              # (b, c, d)
        cell = (np.arange(b * c, dtype=np.int64).reshape(b, c, 1) * g + h).ravel()
        size = np.bincount(cell, minlength=b * c * g).reshape(b, c * g)
        hits = np.bincount(cell, weights=np.broadcast_to(is_target, h.shape).ravel(),
                           minlength=b * c * g).reshape(b, c * g)
        score = hits - np.abs(want[u0:u0 + b, None] - size)
        best = score.argmax(axis=1)                                              # first key, smallest bucket
        out[u0:u0 + b, 0] = keys[np.arange(b), best // g]
        out[u0:u0 + b, 1] = best % g
    return out


def apa_hash_counts(oracle: FrequencyOracle, targets: np.ndarray, m: int, rng, candidates: int = 1000) -> np.ndarray:
    """Support counts of m adaptive reports: their aggregate (no fast path, module notes)."""
    return oracle.aggregate(apa_hash_reports(oracle, targets, m, rng, candidates)).astype(np.int64)
