"""Exact draws shared by the attacks and their fast path: the law of the best hash bucket among
candidate keys (:func:`best_bucket_pmf`, derivation in :mod:`.attack_counts`) and the column sums of
uniform k-subsets (:func:`_subset_sums`), the blocks of random hash keys the OLH/BLH searches draw
(:func:`key_blocks`). Kept apart so that :mod:`.attacks`, :mod:`.apa` and
:mod:`.attack_counts` import them without importing one another in a circle."""

from __future__ import annotations

import math

import numpy as np

from .._validation import _check_int
from ..oracles.subset_counts import sample_subset_counts

__all__ = ["best_bucket_pmf", "key_blocks"]

# below this many cells (subsets × pool size) the subsets are drawn one by one: cheaper than the tree
_DIRECT_CELLS = 1 << 14


def best_bucket_pmf(r: int, g: int, candidates: int) -> np.ndarray:
    """Pr[K* = k], k = 0 … r: the largest bucket among ``candidates`` keys, r targets hashed iid
    uniformly into g buckets (module docstring). The power of the truncated series is taken by
    repeated squaring in the variable x/g, so g up to 2³⁰ neither overflows nor underflows.

    The law of the OLH/BLH maximal gain key search (Cao, Jia & Gong, USENIX Security 2021).

    Parameters
    ----------
    r : int
        Number of targets.
    g : int
        Number of hash buckets.
    candidates : int
        Keys searched.

    Returns
    -------
    ndarray, shape (r + 1,)
        Pr[K* = k], summing to 1.

    Examples
    --------
    >>> from ldpopt import robust
    >>> robust.best_bucket_pmf(3, 4, 10).round(4).tolist()
    [0.0, 0.0001, 0.5244, 0.4755]
    """
    r, g, candidates = _check_int(r, "r", 1), _check_int(g, "g", 2), _check_int(candidates, "candidates", 1)
    cdf = np.zeros(r + 1)
    # the series in the variable x·y with x = (r!)^(1/r)/g, so that its r-th coefficient after the
    # g-th power stays near 1 (no overflow of r! nor underflow of g^−r at hundreds of targets)
    log_x = math.lgamma(r + 1) / r - math.log(g)
    j = np.arange(r + 1)
    terms = np.exp(j * log_x - np.array([math.lgamma(i + 1) for i in j]))   # x^j / j!
    for k in range(1, r + 1):
        base = np.where(j <= k, terms, 0.0)
        acc, e = np.zeros(r + 1), g
        acc[0] = 1.0
        while e:
            if e & 1:
                acc = np.convolve(acc, base)[:r + 1]
            base = np.convolve(base, base)[:r + 1]
            e >>= 1
        # Pr[every bucket ≤ k] = r!/g^r [y^r](Σ_{j≤k} y^j/j!)^g = acc[r]·r!/(x g)^r = acc[r]
        cdf[k] = min(1.0, float(acc[r]))
    cdf[r] = 1.0
    cdf = cdf ** candidates
    return np.diff(np.concatenate([[0.0], cdf]))


def _subset_sums(gen, size: int, k: int, m: int) -> np.ndarray:
    """Column sums of m iid uniform k-subsets of {0, …, size − 1} (exact either way: drawn one by one
    when small, else by Subset Selection's tree sampler)."""
    if k == 0 or m == 0:
        return np.zeros(size, dtype=np.int64)
    if k == size:
        return np.full(size, m, dtype=np.int64)
    if m * size <= _DIRECT_CELLS:  # few subsets: draw them (uniform k-subsets by random keys)
        pick = np.argpartition(gen.random((m, size)), k - 1, axis=1)[:, :k]
        return np.bincount(pick.ravel(), minlength=size).astype(np.int64)
    tc = np.zeros(size, dtype=np.int64)
    tc[0] = m
    return sample_subset_counts(gen, size, k, 0.0, tc)


def key_blocks(gen, m: int, candidates: int, cells_per_key: int, cells: int = 1 << 22):
    """(first user, keys) for the m fake users of a hash-key search, in blocks of users whose
    users × ``candidates`` × ``cells_per_key`` stay under ``cells``; keys: (b, candidates) uniform
    64-bit integers."""
    step = max(1, cells // (candidates * cells_per_key))
    lo_key, hi_key = np.iinfo(np.int64).min, np.iinfo(np.int64).max
    for u0 in range(0, m, step):
        b = min(step, m - u0)
        yield u0, gen.integers(lo_key, hi_key, size=(b, candidates), dtype=np.int64, endpoint=True)
