"""XXH32 of short byte strings, vectorised over seeds and strings with numpy (no xxhash package).

The local-hashing clients of pure-ldp and multi-freq-ldpy (and the authors' own code,
github.com/vvv214/LDP_Protocols olh.py) hash a value v as ``xxhash.xxh32(str(v), seed=s) % g``. Their
aggregators evaluate that for every (report, value) pair in Python; here the same function is
computed on (users × values) blocks of uint32 arrays.

Notes: docs/notes/reliability.md, "ldpopt.interop._xxh32"."""

from __future__ import annotations

import numpy as np

__all__ = ["hash_values", "xxh32_short"]

_P1, _P2, _P3, _P4, _P5 = (np.uint32(x) for x in (0x9E3779B1, 0x85EBCA77, 0xC2B2AE3D, 0x27D4EB2F, 0x165667B1))
_MASK32 = (1 << 32) - 1


def _rotl(x: np.ndarray, r: int) -> np.ndarray:
    return (x << np.uint32(r)) | (x >> np.uint32(32 - r))


def seeds32(seeds) -> np.ndarray:
    """Seeds as python-xxhash uses them for XXH32: the low 32 bits of a non-negative integer."""
    s = np.asarray(seeds)
    if s.dtype.kind not in "iu":
        raise ValueError(f"seeds must be integers, got dtype {s.dtype}")
    if s.dtype.kind == "i" and s.size and s.min() < 0:
        raise ValueError("seeds must be >= 0 (python-xxhash refuses negative seeds)")
    return (s.astype(np.uint64) & np.uint64(_MASK32)).astype(np.uint32)


def xxh32_short(data: np.ndarray, seeds: np.ndarray) -> np.ndarray:
    """XXH32 of byte strings of one common length L < 16: ``data`` is a uint8 array of shape
    (..., L) (broadcast against ``seeds``' shape (...)), ``seeds`` uint32. Returns uint32."""
    data = np.asarray(data, dtype=np.uint8)
    length = data.shape[-1]
    if length >= 16:
        raise ValueError("xxh32_short handles inputs shorter than 16 bytes only")
    with np.errstate(over="ignore"):
        acc = np.asarray(seeds, dtype=np.uint32) + _P5 + np.uint32(length)
        acc = np.broadcast_to(acc, np.broadcast_shapes(acc.shape, data.shape[:-1])).copy()
        pos = 0
        while pos + 4 <= length:
            lane = data[..., pos:pos + 4].astype(np.uint32)
            lane = lane[..., 0] | (lane[..., 1] << np.uint32(8)) | (lane[..., 2] << np.uint32(16)) | (lane[..., 3] << np.uint32(24))
            acc = _rotl(acc + lane * _P3, 17) * _P4
            pos += 4
        while pos < length:
            acc = _rotl(acc + data[..., pos].astype(np.uint32) * _P5, 11) * _P1
            pos += 1
        acc ^= acc >> np.uint32(15)
        acc *= _P2
        acc ^= acc >> np.uint32(13)
        acc *= _P3
        acc ^= acc >> np.uint32(16)
    return acc


def _digits(values: np.ndarray, length: int) -> np.ndarray:
    """ASCII decimal digits of non-negative integers that all have ``length`` digits: (m, length) uint8."""
    powers = 10 ** np.arange(length - 1, -1, -1, dtype=np.int64)
    return ((values[:, None] // powers[None, :]) % 10 + ord("0")).astype(np.uint8)


def hash_values(seeds, values, g: int) -> np.ndarray:
    """``xxh32(str(v), seed=s) % g`` for every seed (rows) and value (columns): shape (len(seeds),
    len(values)), int64. Values are non-negative integers; grouped by their number of digits so each
    group is one broadcast XXH32 call."""
    s = seeds32(seeds)
    v = np.asarray(values, dtype=np.int64)
    if v.size and v.min() < 0:
        raise ValueError("values must be >= 0")
    out = np.empty((s.shape[0], v.shape[0]), dtype=np.int64)
    ndig = np.char.str_len(v.astype(str)) if v.size else np.zeros(0, int)
    for length in np.unique(ndig):
        cols = np.flatnonzero(ndig == length)
        h = xxh32_short(_digits(v[cols], int(length))[None, :, :], s[:, None])
        out[:, cols] = (h % np.uint32(g)).astype(np.int64)
    return out
