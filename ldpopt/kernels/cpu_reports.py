"""Per-report keyed-hash kernels for the CPU (Numba ``parallel=True``): what the poisoning detection
and the maximal gain attack on local hashing (``ldpopt.robust``) compute for each report, where
:func:`.cpu.hash_counts` computes per value.

Notes: docs/notes/devices.md, "ldpopt.kernels.cpu_reports"."""

from __future__ import annotations

import numpy as np

from .._extras import require
from .scalar import GAMMA, congruent, divisibility_constants, mix64

numba = require("numba", "kernels", "the fused per-report hash kernels (ldpopt.kernels.cpu_reports)")
njit, prange = numba.njit, numba.prange

__all__ = ["best_bucket_keys", "hash_row_counts"]

_mix64 = njit(inline="always", cache=True)(mix64)
_congruent = njit(inline="always", cache=True)(congruent)

_USER_TILE = 1024  # reports per task of hash_row_counts (16 KiB of keys and reports)
_SEARCH_TILE = 16  # fake users per task of best_bucket_keys


def _as_uint64(keys) -> np.ndarray:
    k = np.asarray(keys)
    return np.ascontiguousarray(k).view(np.uint64) if k.dtype.itemsize == 8 and k.dtype.kind in "iu" else \
        np.ascontiguousarray(k.astype(np.uint64))


@njit(parallel=True, cache=True)
def _row_counts(keys, r, vg, mask, inv, rot, lim, pow2):
    n, k = keys.shape[0], vg.shape[0]
    out = np.zeros(n, np.int64)
    ntile = (n + _USER_TILE - 1) // _USER_TILE
    for t in prange(ntile):
        for i in range(t * _USER_TILE, min(n, (t + 1) * _USER_TILE)):
            s, ri = keys[i], r[i]
            c = 0
            if pow2:
                for j in range(k):
                    c += np.int64((_mix64(s + vg[j]) & mask) == ri)
            else:
                for j in range(k):
                    c += np.int64(_congruent(_mix64(s + vg[j]), ri, inv, rot, lim))
            out[i] = c
    return out


def hash_row_counts(keys: np.ndarray, r: np.ndarray, values: np.ndarray, g: int) -> np.ndarray:
    """Per report i, #{v ∈ ``values`` : mix64(s_i + (v + 1)·γ) mod g = r_i} (int64, one per report).
    ``keys``: the reports' 64-bit keys (read as uint64 bit patterns); ``r``: their buckets, already
    checked to lie in [0, g); ``values``: non-negative integers (a value listed twice counts twice)."""
    k = _as_uint64(keys)
    ru = np.ascontiguousarray(r).astype(np.uint64)
    with np.errstate(over="ignore"):
        vg = (np.asarray(values).astype(np.uint64) + np.uint64(1)) * GAMMA
    inv, rot, lim = divisibility_constants(g)
    return _row_counts(k, ru, np.ascontiguousarray(vg), np.uint64(g - 1), inv, rot, lim, g & (g - 1) == 0)


@njit(parallel=True, cache=True)
def _search(keys, ukeys, tg, g, mask, pow2):
    b, C = keys.shape
    r = tg.shape[0]
    key_out = np.empty(b, np.int64)
    bucket_out = np.empty(b, np.int64)
    ntile = (b + _SEARCH_TILE - 1) // _SEARCH_TILE
    for t in prange(ntile):
        h = np.empty(r, np.uint64)
        cnt = np.empty(r, np.int64)
        for u in range(t * _SEARCH_TILE, min(b, (t + 1) * _SEARCH_TILE)):
            best_size, best_c, best_bucket = -1, 0, np.uint64(0)
            for c in range(C):
                s = ukeys[u, c]
                for j in range(r):
                    z = _mix64(s + tg[j])
                    h[j] = (z & mask) if pow2 else (z % g)
                for j in range(r):  # bucket size of each target: the pairs i < j once
                    cnt[j] = 1
                for j in range(r):
                    hj = h[j]
                    for i in range(j + 1, r):  # branch-free: at small g most pairs collide
                        e = np.int64(h[i] == hj)
                        cnt[i] += e
                        cnt[j] += e
                size_c, bucket_c = 0, np.uint64(0)
                for j in range(r):  # the largest bucket, and the smallest bucket of that size
                    if cnt[j] > size_c or (cnt[j] == size_c and h[j] < bucket_c):
                        size_c, bucket_c = cnt[j], h[j]
                if size_c > best_size:  # strictly larger: the first best key is kept
                    best_size, best_c, best_bucket = size_c, c, bucket_c
                    if size_c == r:
                        break
            key_out[u] = keys[u, best_c]
            bucket_out[u] = np.int64(best_bucket)
    return key_out, bucket_out


def best_bucket_keys(keys: np.ndarray, targets: np.ndarray, g: int) -> tuple[np.ndarray, np.ndarray]:
    """(key, bucket) per fake user (two int64 arrays of b): ``keys`` (b, C) int64 candidate keys per
    user, ``targets`` the r target values; the first key maximising the largest bucket of the targets
    under H_s(v) = mix64(s + (v + 1)·γ) mod g, and the smallest bucket of that size (module notes)."""
    kk = np.ascontiguousarray(np.asarray(keys, dtype=np.int64))
    if kk.ndim != 2 or kk.shape[1] == 0:
        raise ValueError(f"keys must be a (users, candidates) array with candidates >= 1, got shape {kk.shape}")
    with np.errstate(over="ignore"):
        tg = (np.asarray(targets).astype(np.uint64) + np.uint64(1)) * GAMMA
    return _search(kk, kk.view(np.uint64), np.ascontiguousarray(tg), np.uint64(g), np.uint64(g - 1), g & (g - 1) == 0)
