"""Fused, multi-core aggregation kernels for the CPU (Numba ``parallel=True``): one pass over the
reports per oracle family, no temporaries the size of the reports.

* :func:`histogram` — c[y] = #{i : y_i = y} (GRR's counts, HR's output histogram before its FWHT,
  SS's counts over the flattened subsets);
* :func:`column_counts` — the set bits of each column of packed bit vectors (OUE, SUE);
* :func:`hash_counts` — c_v = #{i : H_{s_i}(v) = r_i} with ldpopt's keyed SplitMix64 hash (OLH, BLH).

Work split (a choice; the papers are silent): the reports are cut into ``U`` chunks of users and the
output into ``B`` blocks of values, and the U·B tasks are spread over the threads by ``prange``. A
task adds into row u of a (U, d) array of partial counts, rows summed in order at the end; counts
are integer sums, so the result is the same bit for bit whatever the split, the thread count or the
order the tasks run — and equal to the numpy aggregators' (``tests/test_kernels.py``). ``U`` is
1 whenever there are enough value blocks to keep every thread busy (no partial arrays then), and
grows to the thread count only for narrow outputs (small d), where the partials are small.

Within a task of :func:`hash_counts` the users are tiled (``_USER_TILE`` users: their keys and
reports stay in L1) and, for each value of the block, the innermost loop runs over the users of
the tile with a scalar accumulator, so it vectorises; ``mod g`` is replaced by the
multiply-and-rotate divisibility test of :mod:`.scalar` (a 64-bit division costs ~40 cycles).
When one user chunk suffices (U = 1, wide outputs) the tasks are the value blocks alone and the
tiles start at 0 (``_hash_counts_wide``): the same loop with the chunk's bounds computed per task ran
~35 % slower at g = 56 and ~2× slower at g = 4 on the reference machine (AVX2), an effect of code
generation, not of the arithmetic; measured side by side in ``benchmarks/bench_kernels.py``.
"""

from __future__ import annotations

import numpy as np

from .._extras import require
from .scalar import congruent, mix64

numba = require("numba", "kernels", "the fused CPU aggregation kernels (ldpopt.kernels.cpu)")
njit, prange = numba.njit, numba.prange

__all__ = ["histogram", "histogram_checked", "subset_counts_checked", "column_counts", "hash_counts", "threads"]

_mix64 = njit(inline="always", cache=True)(mix64)
_congruent = njit(inline="always", cache=True)(congruent)

_USER_TILE = 1024  # users per tile of hash_counts (16 KiB of keys and reports)
_VALUE_BLOCK = 64  # values per task of hash_counts
_BYTE_BLOCK = 256  # packed bytes (2048 bit columns) per task of column_counts
_FLUSH_ROWS = 255  # rows summed in 8-bit lanes before they can overflow


def threads() -> int:
    """The threads the kernels run on (``numba.get_num_threads()``; ``numba.set_num_threads`` or
    ``NUMBA_NUM_THREADS`` change it)."""
    return int(numba.get_num_threads())


def _chunks(n_items: int, n_blocks: int) -> int:
    """User chunks U for a grid of n_blocks value blocks: 1 when the blocks alone fill the threads."""
    t = threads()
    if n_blocks >= 2 * t or n_items < 2:
        return 1
    return max(1, min(t, n_items // 1024 if n_items >= 1024 else 1))


@njit(inline="always", cache=True)
def _sum_rows(part):
    """Σ_u part[u], the partial rows of the U user chunks added in order."""
    out = part[0].copy()
    for u in range(1, part.shape[0]):
        out += part[u]
    return out


# -- histogram ---------------------------------------------------------------------------------
@njit(parallel=True, cache=True)
def _histogram(y, size, U):
    n = y.shape[0]
    part = np.zeros((U, size), np.int64)
    bad = np.zeros(U, np.int64)
    for u in prange(U):
        lo, hi = n * u // U, n * (u + 1) // U
        row = part[u]
        nbad = 0
        for i in range(lo, hi):
            k = y[i]
            if 0 <= k < size:
                row[k] += 1
            else:
                nbad += 1
        bad[u] = nbad
    return _sum_rows(part), bad.sum()


def histogram_checked(y: np.ndarray, size: int) -> tuple[np.ndarray, int]:
    """(c, bad): c[k] = #{i : y[i] = k} over the entries in [0, ``size``) and the number of entries
    outside it, in one pass (the range check fused with the count). ``y``: 1-D int64. U = min(threads,
    n/size) chunks: the partial rows cost U·size int64."""
    y = np.ascontiguousarray(y, dtype=np.int64)
    U = max(1, min(threads(), y.shape[0] // max(size, 1)))
    counts, bad = _histogram(y, int(size), U)
    return counts, int(bad)


def histogram(y: np.ndarray, size: int) -> np.ndarray:
    """c[k] = #{i : y[i] = k}, k < ``size`` (int64), for values already checked to lie in [0, size)."""
    return histogram_checked(y, size)[0]


@njit(parallel=True, cache=True)
def _subset_counts(r, size, U):
    m, k = r.shape
    part = np.zeros((U, size), np.int64)
    bad = np.zeros(U, np.int64)
    for u in prange(U):
        lo, hi = m * u // U, m * (u + 1) // U
        row = part[u]
        stamp = np.full(size, -1, np.int64)  # stamp[v] = the last row that held v
        nbad = 0
        for i in range(lo, hi):
            for j in range(k):
                v = r[i, j]
                if 0 <= v < size and stamp[v] != i:
                    stamp[v] = i
                    row[v] += 1
                else:
                    nbad += 1
        bad[u] = nbad
    return _sum_rows(part), bad.sum()


def subset_counts_checked(r: np.ndarray, size: int) -> tuple[np.ndarray, int]:
    """(c, bad) for (m, k) int64 subsets: c[v] = the rows holding v, and the number of entries that
    are out of [0, ``size``) or repeat an earlier entry of their row, in one pass (SS's checks fused
    with its count; a per-thread stamp array of ``size`` int64 marks the values of the current row)."""
    r = np.ascontiguousarray(r, dtype=np.int64)
    U = max(1, min(threads(), r.size // max(size, 1)))
    counts, bad = _subset_counts(r, int(size), U)
    return counts, int(bad)


# -- packed bit columns ------------------------------------------------------------------------
_REPLICATE = np.uint64(0x0101010101010101)  # b · this: byte b in each of the 8 lanes
_LANE_BIT = np.uint64(0x0102040810204080)  # lane k keeps bit 7 − k (np.packbits order)
_LOW7 = np.uint64(0x7F7F7F7F7F7F7F7F)
_HIGH = np.uint64(0x8080808080808080)
_S7 = np.uint64(7)


@njit(inline="always", cache=True)
def _spread(b):
    """Byte b spread over the 8 one-byte lanes of a uint64, lane k = bit 7 − k of b: replicate, keep
    one bit per lane, and turn a nonzero lane into 1 (adding 0x7F sets its top bit, no carry out)."""
    x = np.uint64(b) * _REPLICATE
    return (((x & _LANE_BIT) + _LOW7) & _HIGH) >> _S7


@njit(parallel=True, cache=True)
def _column_counts(packed, U, nblk):
    m, nb = packed.shape
    part = np.zeros((U, 8 * nb), np.int64)
    for task in prange(U * nblk):
        u, b = task // nblk, task % nblk
        lo, hi = m * u // U, m * (u + 1) // U
        j0 = b * _BYTE_BLOCK
        j1 = min(nb, j0 + _BYTE_BLOCK)
        acc = np.zeros(j1 - j0, np.uint64)
        row = part[u]
        for r0 in range(lo, hi, _FLUSH_ROWS):
            r1 = min(hi, r0 + _FLUSH_ROWS)
            for i in range(r0, r1):
                for j in range(j0, j1):
                    acc[j - j0] += _spread(packed[i, j])
            for j in range(j0, j1):
                a = acc[j - j0]
                for k in range(8):
                    row[8 * j + k] += np.int64((a >> np.uint64(8 * k)) & np.uint64(0xFF))
                acc[j - j0] = 0
    return _sum_rows(part)


def column_counts(packed: np.ndarray, d: int) -> np.ndarray:
    """Set bits of each of the first ``d`` bit columns of packed (m, ⌈d/8⌉) uint8 rows (np.packbits
    order), int64. Each byte adds its 8 bits at once, as 8 one-byte lanes of a uint64 (``_spread``,
    branch-free so the loop over a row's bytes vectorises), flushed to int64 every 255 rows."""
    packed = np.ascontiguousarray(packed, dtype=np.uint8)
    nb = packed.shape[1]
    nblk = max(1, -(-nb // _BYTE_BLOCK))
    U = _chunks(packed.shape[0], nblk)
    return _column_counts(packed, U, nblk)[:d]


# -- keyed hash counts (OLH, BLH) ----------------------------------------------------------------
@njit(inline="always", cache=True)
def _tile_counts(keys, r, vg, v0, v1, t0, t1, mask, inv, rot, lim, pow2, row):
    """row[v] += #{t0 ≤ i < t1 : H_{s_i}(v) = r_i} for v0 ≤ v < v1 (one task's tile of users)."""
    for v in range(v0, v1):
        h = vg[v]
        c = 0
        if pow2:
            for i in range(t0, t1):
                c += np.int64((_mix64(keys[i] + h) & mask) == r[i])
        else:
            for i in range(t0, t1):
                c += np.int64(_congruent(_mix64(keys[i] + h), r[i], inv, rot, lim))
        row[v] += c


@njit(parallel=True, cache=True)
def _hash_counts_wide(keys, r, vg, mask, inv, rot, lim, pow2, nblk):
    """U = 1: one task per value block, every user, tiles from 0 (a separate loop nest: with the
    user chunk's bounds computed per task the inner loop ran ~35 % slower, measured at d = 42,178)."""
    n, d = keys.shape[0], vg.shape[0]
    out = np.zeros(d, np.int64)
    for b in prange(nblk):
        v0 = b * _VALUE_BLOCK
        v1 = min(d, v0 + _VALUE_BLOCK)
        for t0 in range(0, n, _USER_TILE):
            _tile_counts(keys, r, vg, v0, v1, t0, min(n, t0 + _USER_TILE), mask, inv, rot, lim, pow2, out)
    return out


@njit(parallel=True, cache=True)
def _hash_counts(keys, r, vg, mask, inv, rot, lim, pow2, U, nblk):
    n, d = keys.shape[0], vg.shape[0]
    part = np.zeros((U, d), np.int64)
    for task in prange(U * nblk):
        u, b = task // nblk, task % nblk
        lo, hi = n * u // U, n * (u + 1) // U
        v0 = b * _VALUE_BLOCK
        v1 = min(d, v0 + _VALUE_BLOCK)
        for t0 in range(lo, hi, _USER_TILE):
            _tile_counts(keys, r, vg, v0, v1, t0, min(hi, t0 + _USER_TILE), mask, inv, rot, lim, pow2, part[u])
    return _sum_rows(part)


def hash_counts(keys: np.ndarray, r: np.ndarray, d: int, g: int) -> np.ndarray:
    """c_v = #{i : mix64(s_i + (v + 1)·γ) mod g = r_i}, v < d (int64): OLH's support counts
    (``ldpopt.oracles.hashing``). ``keys``: the users' 64-bit keys (any 64-bit integer dtype, read as
    uint64 bit patterns); ``r``: their reports, already checked to lie in [0, g)."""
    from .scalar import GAMMA, divisibility_constants

    k = np.ascontiguousarray(keys).view(np.uint64) if np.asarray(keys).dtype.itemsize == 8 else \
        np.asarray(keys).astype(np.uint64)
    ru = np.ascontiguousarray(r).astype(np.uint64)
    vg = np.arange(1, d + 1, dtype=np.uint64) * GAMMA
    inv, rot, lim = divisibility_constants(g)
    pow2 = g & (g - 1) == 0
    nblk = max(1, -(-d // _VALUE_BLOCK))
    U = _chunks(k.shape[0], nblk)
    if U == 1:
        return _hash_counts_wide(k, ru, vg, np.uint64(g - 1), inv, rot, lim, pow2, nblk)
    return _hash_counts(k, ru, vg, np.uint64(g - 1), inv, rot, lim, pow2, U, nblk)
