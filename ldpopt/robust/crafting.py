"""The primitives the report forms (:mod:`.forms`) are built from: blocks of reports, the device of a
per-report hash count, the maximal-gain pieces (OUE/SUE padding, uniform subsets, HR's best outputs,
the OLH/BLH key search) and the unary adaptive attack's reports and counts. They sit below
:mod:`.forms`, which dispatches on an oracle's report form; :mod:`.attacks`, :mod:`.detect` and
:mod:`.apa` (the public functions) ask the form, so no module here imports them."""

from __future__ import annotations

import math

import numpy as np

from .. import kernels
from .._validation import as_generator
from ..oracles.base import FrequencyOracle
from ..oracles.hashing import keyed_hash

# reports whose supports are expanded at once (× d booleans)
_BLOCK_CELLS = 1 << 23

def _blocks(m: int, d: int):
    step = max(1, _BLOCK_CELLS // d)
    for start in range(0, m, step):
        yield slice(start, min(m, start + step))

def report_device(device, cells: int) -> str:
    """The device of a per-report OLH/BLH count or search of ``cells`` hashes: ``kernels.resolve``
    ("numpy", "cpu", or "auto"/None: "cpu" from ``kernels.AUTO_CELLS`` cells on when Numba is
    installed); "cuda" or anything else is an error naming the argument (no GPU kernel here)."""
    if device not in (None, "auto", "numpy", "cpu"):
        raise ValueError(f"device must be 'numpy', 'cpu', 'auto' or None for the per-report hash kernels, got {device!r}")
    return kernels.resolve(device, cells)

def _n_reports(reports) -> int:
    return int(np.asarray(reports).shape[0])

# cells (users × keys × targets) hashed per block by the OLH search
_SEARCH_CELLS = 1 << 22

def padding_ones(oracle: FrequencyOracle, r: int) -> int:
    """OUE/SUE MGA padding l = max(0, ⌊p + (d − 1)q − r⌋) (module docstring)."""
    return max(0, math.floor(oracle.p + (oracle.d - 1) * oracle.q - r))

def _uniform_subsets(gen, pool: np.ndarray, m: int, size: int) -> np.ndarray:
    """(m, size) rows, each a uniform ``size``-subset of ``pool`` (random keys, partial sort)."""
    if size == 0:
        return np.zeros((m, 0), dtype=np.int64)
    keys = gen.random((m, pool.size))
    idx = np.argpartition(keys, size - 1, axis=1)[:, :size] if size < pool.size else np.argsort(keys, axis=1)
    return pool[idx]

def hr_best_outputs(oracle, targets: np.ndarray) -> tuple[np.ndarray, int]:
    """HR outputs y ∈ [K] whose set C_y holds the most targets, and that number."""
    y = np.arange(oracle.K, dtype=np.int64)
    score = oracle.support_matrix(y)[:, targets].sum(axis=1)
    best = int(score.max())
    return np.flatnonzero(score == best), best

def _olh_search(oracle, targets: np.ndarray, m: int, candidates: int, gen, device=None) -> np.ndarray:
    """(m, 2) OLH reports (s, bucket) from the key search of the module docstring, in blocks of
    users (the same key draws either way). The numpy search below is the reference; ``device``
    "cpu" (the default "auto" from ``kernels.AUTO_CELLS`` hashed cells on) runs
    ``kernels.best_bucket_keys`` on each block, the same reports."""
    from ._draws import key_blocks

    r, g = targets.size, oracle.g
    dev = report_device(device, m * candidates * r)
    out = np.empty((m, 2), dtype=np.int64)
    for u0, keys in key_blocks(gen, m, candidates, r, _SEARCH_CELLS):
        b = keys.shape[0]
        if dev == "cpu":
            out[u0:u0 + b, 0], out[u0:u0 + b, 1] = kernels.best_bucket_keys(keys, targets, g, dev)
            continue
        h = keyed_hash(keys[:, :, None], targets[None, None, :], g)            # (b, C, r)
        size = (h[:, :, :, None] == h[:, :, None, :]).sum(axis=3)              # bucket size per target
        best = size.max(axis=2)                                                # (b, C)
        pick = best.argmax(axis=1)                                             # first best key
        rows = np.arange(b)
        hb, sb = h[rows, pick], size[rows, pick]                               # (b, r)
        bucket = np.where(sb == best[rows, pick][:, None], hb, g).min(axis=1)  # smallest best bucket
        out[u0:u0 + b, 0] = keys[rows, pick]
        out[u0:u0 + b, 1] = bucket
    return out

def unary_apa_reports(oracle: FrequencyOracle, targets: np.ndarray, m: int, rng) -> np.ndarray:
    """m packed APA reports of a unary-report oracle (OUE, SUE; module docstring)."""
    gen = as_generator(rng)
    d, r = oracle.d, targets.size
    others = np.setdiff1d(np.arange(d, dtype=np.int64), targets)
    k = gen.choice(d + 1, size=m, p=oracle.support_size_pmf())
    j = np.minimum(k, r)
    bits = np.zeros((m, d), dtype=bool)
    rank_t = np.argsort(np.argsort(gen.random((m, r)), axis=1), axis=1)  # a uniform order of T per report
    rank_o = np.argsort(np.argsort(gen.random((m, others.size)), axis=1), axis=1)
    bits[:, targets] = rank_t < j[:, None]
    bits[:, others] = rank_o < (k - j)[:, None]
    return np.packbits(bits, axis=1)

def unary_apa_counts(oracle: FrequencyOracle, targets: np.ndarray, m: int, rng) -> np.ndarray:
    """Support counts of m APA reports of a unary-report oracle, exact in law (module docstring)."""
    from ._draws import _subset_sums

    gen = as_generator(rng)
    d, r = oracle.d, targets.size
    others = np.setdiff1d(np.arange(d, dtype=np.int64), targets)
    out = np.zeros(d, dtype=np.int64)
    per_k = gen.multinomial(m, oracle.support_size_pmf())
    for k in np.flatnonzero(per_k):
        j = min(int(k), r)
        out[targets] += _subset_sums(gen, r, j, int(per_k[k]))
        out[others] += _subset_sums(gen, others.size, int(k) - j, int(per_k[k]))
    return out
