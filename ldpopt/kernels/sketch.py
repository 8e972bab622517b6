"""Fused CPU kernels of the sketch and Bloom-filter oracles (Numba): one pass over the reports, no
sort, no packing, no temporaries the size of the reports.

Notes: docs/notes/devices.md, "ldpopt.kernels.sketch"."""

from __future__ import annotations

import numpy as np

from .._extras import require

numba = require("numba", "kernels", "the fused sketch kernels (ldpopt.kernels.sketch)")
njit = numba.njit

__all__ = ["fwht_rows", "grouped_bit_sums", "signed_cell_sums"]

_FLUSH = 255  # reports per group between flushes of its 8-bit counters


@njit(cache=True)
def _grouped_bit_sums(groups, bits, size):
    n, T = bits.shape
    S = np.zeros((size, T), np.int64)
    N = np.zeros(size, np.int64)
    acc = np.zeros((size, T), np.uint8)
    since = np.zeros(size, np.int64)
    bad = 0
    for i in range(n):
        g = groups[i]
        if g < 0 or g >= size:
            bad += 1
            continue
        a = acc[g]
        b = bits[i]
        for t in range(T):
            a[t] += b[t]
        N[g] += 1
        since[g] += 1
        if since[g] == _FLUSH:
            s = S[g]
            for t in range(T):
                s[t] += a[t]
                a[t] = 0
            since[g] = 0
    for g in range(size):
        for t in range(T):
            S[g, t] += acc[g, t]
    return S, N, bad


def grouped_bit_sums(groups: np.ndarray, bits: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray, int]:
    """(S, N, bad): S int64 (size, T) the set bits per column of each group's rows, N int64 (size,)
    the group sizes, ``bad`` the number of rows whose group lies outside [0, size) (skipped).
    ``groups``: 1-D integers; ``bits``: (n, T) bool or 0/1 uint8 (read as bytes, not copied when
    C-contiguous)."""
    g = np.ascontiguousarray(groups, dtype=np.int64)
    b = np.ascontiguousarray(bits)
    if b.dtype == np.bool_:
        b = b.view(np.uint8)
    elif b.dtype != np.uint8:
        raise ValueError(f"bits must be bool or uint8 0/1, got dtype {b.dtype}")
    if b.ndim != 2 or b.shape[0] != g.shape[0]:
        raise ValueError(f"bits must be (n = {g.shape[0]}, T), got shape {b.shape}")
    S, N, bad = _grouped_bit_sums(g, b, int(size))
    return S, N, int(bad)


@njit(cache=True)
def _signed_cell_sums(r, k, m):
    z = np.zeros(k * m, np.int64)
    N = np.zeros(k, np.int64)
    bad = 0
    for i in range(r.shape[0]):
        j, l, y = r[i, 0], r[i, 1], r[i, 2]
        # one unsigned comparison per bound and no short-circuit: 3x faster than `or` chains here
        ok = (np.uint64(j) < np.uint64(k)) & (np.uint64(l) < np.uint64(m)) & ((y == 1) | (y == -1))
        if not ok:
            bad += 1
            continue
        z[j * m + l] += y
        N[j] += 1
    return z.reshape(k, m), N, bad


def signed_cell_sums(rows: np.ndarray, k: int, m: int) -> tuple[np.ndarray, np.ndarray, int]:
    """(z, N, bad) of HCMS rows (j, l, y), int64 (n, 3): z[j, l] = Σ y, N[j] the row sizes, ``bad``
    the rows with j ∉ [0, k), l ∉ [0, m) or y ∉ {−1, +1} (skipped)."""
    r = np.ascontiguousarray(rows, dtype=np.int64)
    if r.ndim != 2 or r.shape[1] != 3:
        raise ValueError(f"rows must be (n, 3) (j, l, y), got shape {r.shape}")
    z, N, bad = _signed_cell_sums(r, int(k), int(m))
    return z, N, int(bad)


@njit(cache=True)
def _fwht_rows(a):
    k, K = a.shape
    for r in range(k):
        h = 1
        while h < K:
            for i in range(0, K, 2 * h):
                for j in range(i, i + h):
                    x, y = a[r, j], a[r, j + h]
                    a[r, j] = x + y
                    a[r, j + h] = x - y
            h *= 2
    return a


def fwht_rows(x) -> np.ndarray:
    """H_K · x_r for every row r of an integer (k, K) table, K a power of 2 (a new int64 array; the
    same integers as :func:`ldpopt.oracles.hadamard.fwht`, exact)."""
    a = np.array(x, dtype=np.int64, copy=True, order="C")
    if a.ndim != 2 or a.shape[1] < 1 or a.shape[1] & (a.shape[1] - 1):
        raise ValueError(f"x must be a (k, K) table with K a power of 2, got shape {a.shape}")
    return _fwht_rows(a)
