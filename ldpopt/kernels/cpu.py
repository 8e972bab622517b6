"""Fused, multi-core aggregation kernels for the CPU (Numba ``parallel=True``): one pass over the
reports per oracle family, no temporaries the size of the reports.

Notes: docs/notes/devices.md, "ldpopt.kernels.cpu"."""

from __future__ import annotations

import numpy as np

from .._extras import require
from .scalar import congruent, mix64

numba = require("numba", "kernels", "the fused CPU aggregation kernels (ldpopt.kernels.cpu)")
njit, prange = numba.njit, numba.prange

__all__ = ["column_counts", "hash_counts", "histogram", "histogram_checked", "subset_counts_checked", "threads"]

_mix64 = njit(inline="always", cache=True)(mix64)
_congruent = njit(inline="always", cache=True)(congruent)

_USER_TILE = 1024  # users per tile of hash_counts (16 KiB of keys and reports)
_VALUE_BLOCK = 64  # values per task of hash_counts
_WORD_BLOCK = 256  # 64-bit words (16,384 bit columns) per task of column_counts
_PLANES = 8  # planes of column_counts' vertical counter of sixteens (flushed every 255 groups)


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
# Harley–Seal carry-save counting (the positional-popcount form: Muła, Kurz & Lemire, "Faster
# population counts using AVX2 instructions", Comput. J. 61(1), 2018, §4, applied per bit column):
# the rows are read as 64-bit little-endian words, 16 rows at a time are reduced by a tree of 15
# carry-save adders into bit planes of weight 1, 2, 4, 8 (kept across groups) and one word of weight
# 16, which is added into a vertical counter of _PLANES planes (weights 16·2^p), flushed to int64
# every 2^_PLANES − 1 groups. About 6 word operations per 64 bit columns of a row, against 32 for the
# one-byte-lane form it replaced (measured 2× faster at d = 1,024 and 5× at d = 42,178 on one core,
# benchmarks/bench_kernels.py). Byte j of word w is packed byte 8w + j; its bit b (LSB 0) is bit
# column 8(8w + j) + 7 − b (np.packbits order).


@njit(inline="always", cache=True)
def _word(packed, i, w):
    """Bytes 8w..8w+7 of row i as a little-endian uint64 (the compiler fuses the eight loads)."""
    x = np.uint64(0)
    for j in range(8):
        x |= np.uint64(packed[i, 8 * w + j]) << np.uint64(8 * j)
    return x


@njit(inline="always", cache=True)
def _tail_word(packed, i, w):
    """The last, partial word of row i: bytes 8w..nb−1, the missing high bytes 0."""
    x = np.uint64(0)
    for j in range(packed.shape[1] - 8 * w):
        x |= np.uint64(packed[i, 8 * w + j]) << np.uint64(8 * j)
    return x


@njit(inline="always", cache=True)
def _ld(packed, i, w, tail):
    return _tail_word(packed, i, w) if tail else _word(packed, i, w)


@njit(inline="always", cache=True)
def _csa(a, b, c):
    """Carry-save adder: (carry, sum) of three words, bit by bit."""
    u = a ^ b
    return (a & b) | (u & c), u ^ c


@njit(inline="always", cache=True)
def _add_bits(row, w, x, weight):
    """row[column of bit t of word w] += weight for every set bit t of x."""
    for t in range(64):
        row[64 * w + 8 * (t >> 3) + 7 - (t & 7)] += weight * np.int64((x >> np.uint64(t)) & np.uint64(1))


@njit(inline="always", cache=True)
def _group(packed, i, w, j, planes, tail):
    """Rows i..i+15 of word w into the planes of slot j: ones, twos, fours, eights (rows 0–3) and
    the vertical counter of the sixteens (rows 4..)."""
    o, tw, fo, ei = planes[0, j], planes[1, j], planes[2, j], planes[3, j]
    ta, o = _csa(o, _ld(packed, i + 0, w, tail), _ld(packed, i + 1, w, tail))
    tb, o = _csa(o, _ld(packed, i + 2, w, tail), _ld(packed, i + 3, w, tail))
    fa, tw = _csa(tw, ta, tb)
    ta, o = _csa(o, _ld(packed, i + 4, w, tail), _ld(packed, i + 5, w, tail))
    tb, o = _csa(o, _ld(packed, i + 6, w, tail), _ld(packed, i + 7, w, tail))
    fb, tw = _csa(tw, ta, tb)
    ea, fo = _csa(fo, fa, fb)
    ta, o = _csa(o, _ld(packed, i + 8, w, tail), _ld(packed, i + 9, w, tail))
    tb, o = _csa(o, _ld(packed, i + 10, w, tail), _ld(packed, i + 11, w, tail))
    fa, tw = _csa(tw, ta, tb)
    ta, o = _csa(o, _ld(packed, i + 12, w, tail), _ld(packed, i + 13, w, tail))
    tb, o = _csa(o, _ld(packed, i + 14, w, tail), _ld(packed, i + 15, w, tail))
    fb, tw = _csa(tw, ta, tb)
    eb, fo = _csa(fo, fa, fb)
    c, ei = _csa(ei, ea, eb)
    planes[0, j], planes[1, j], planes[2, j], planes[3, j] = o, tw, fo, ei
    for p in range(4, 4 + _PLANES):  # ripple the sixteens into the vertical counter
        v = planes[p, j]
        planes[p, j] = v ^ c
        c = v & c


@njit(parallel=True, cache=True)
def _column_counts(packed, bounds, nblk):
    """part[u] = the column counts of rows bounds[u]..bounds[u+1] − 1 (one row per chunk of users)."""
    nb = packed.shape[1]
    U = bounds.shape[0] - 1
    nw = -(-nb // 8)
    full = nb // 8
    part = np.zeros((U, 64 * nw), np.int64)
    for task in prange(U * nblk):
        u, b = task // nblk, task % nblk
        lo, hi = bounds[u], bounds[u + 1]
        w0 = b * _WORD_BLOCK
        w1 = min(nw, w0 + _WORD_BLOCK)
        k1 = min(w1, full) - w0  # slots with a full word; a tail word, if any, is slot k1
        planes = np.zeros((4 + _PLANES, w1 - w0), np.uint64)
        row = part[u]
        groups = 0
        i = lo
        while i + 16 <= hi:
            for j in range(k1):
                _group(packed, i, w0 + j, j, planes, False)
            if w1 > full:
                _group(packed, i, full, w1 - 1 - w0, planes, True)
            i += 16
            groups += 1
            if groups == (1 << _PLANES) - 1 or i + 16 > hi:
                for j in range(w1 - w0):
                    for p in range(_PLANES):
                        _add_bits(row, w0 + j, planes[4 + p, j], np.int64(16) << np.int64(p))
                        planes[4 + p, j] = 0
                groups = 0
        for j in range(w1 - w0):
            w = w0 + j
            for p in range(4):
                _add_bits(row, w, planes[p, j], np.int64(1) << np.int64(p))
            for r in range(i, hi):  # the last < 16 rows, bit by bit
                _add_bits(row, w, _ld(packed, r, w, w == full), 1)
    return part


def column_counts(packed: np.ndarray, d: int) -> np.ndarray:
    """Set bits of each of the first ``d`` bit columns of packed (m, ⌈d/8⌉) uint8 rows (np.packbits
    order), int64, by Harley–Seal carry-save counting (the section comment above)."""
    packed = np.ascontiguousarray(packed, dtype=np.uint8)
    nw = -(-packed.shape[1] // 8)
    nblk = max(1, -(-nw // _WORD_BLOCK))
    U = _chunks(packed.shape[0], nblk)
    return _sum_rows(_column_counts(packed, np.arange(U + 1, dtype=np.int64) * packed.shape[0] // U, nblk))[:d]


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
