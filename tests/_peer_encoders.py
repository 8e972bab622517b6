"""Encoders that write reports in the peers' formats without the peer packages, following the
peers' client code line by line (vectorised over users), and an independent scalar XXH32.

Used by tests/test_interop_formats.py (always run) and benchmarks/interop_table.py."""

from __future__ import annotations

import math

import numpy as np

_M32 = 0xFFFFFFFF
_P1, _P2, _P3, _P4, _P5 = 0x9E3779B1, 0x85EBCA77, 0xC2B2AE3D, 0x27D4EB2F, 0x165667B1


def xxh32_ref(data: bytes, seed: int) -> int:
    """Plain-Python XXH32 (xxHash spec), any length: the independent reference."""
    seed &= _M32
    rotl = lambda x, r: ((x << r) | (x >> (32 - r))) & _M32  # noqa: E731
    n, p = len(data), 0
    if n >= 16:
        v = [(seed + _P1 + _P2) & _M32, (seed + _P2) & _M32, seed, (seed - _P1) & _M32]
        while p + 16 <= n:
            for i in range(4):
                lane = int.from_bytes(data[p:p + 4], "little")
                v[i] = (rotl((v[i] + lane * _P2) & _M32, 13) * _P1) & _M32
                p += 4
        h = (rotl(v[0], 1) + rotl(v[1], 7) + rotl(v[2], 12) + rotl(v[3], 18)) & _M32
    else:
        h = (seed + _P5) & _M32
    h = (h + n) & _M32
    while p + 4 <= n:
        h = (rotl((h + int.from_bytes(data[p:p + 4], "little") * _P3) & _M32, 17) * _P4) & _M32
        p += 4
    while p < n:
        h = (rotl((h + data[p] * _P5) & _M32, 11) * _P1) & _M32
        p += 1
    h ^= h >> 15
    h = (h * _P2) & _M32
    h ^= h >> 13
    h = (h * _P3) & _M32
    h ^= h >> 16
    return h


def grr(values, eps, d, rng):
    """DEClient / GRR_Client: keep w.p. e^ε/(e^ε+d−1), else uniform among the d−1 others."""
    p = math.exp(eps) / (math.exp(eps) + d - 1)
    other = rng.integers(0, d - 1, len(values))
    other += other >= values
    return np.where(rng.random(len(values)) < p, values, other)


def ue(values, eps, d, rng, oue):
    """UEClient / UE_Client: bit v w.p. p, other bits w.p. q (float vectors, as the peers return)."""
    p, q = (0.5, 1 / (math.exp(eps) + 1)) if oue else (math.exp(eps / 2) / (math.exp(eps / 2) + 1),
                                                        1 / (math.exp(eps / 2) + 1))
    bits = rng.random((len(values), d)) < q
    bits[np.arange(len(values)), values] = rng.random(len(values)) < p
    return bits.astype(float)


def lh(values, eps, d, g, rng, seed_high=2**63 - 1, hasher=None):
    """LHClient._perturb / LH_Client: seed uniform, x = xxh32(str(v), seed) % g, then GRR on [g]
    (pure-ldp's "keep w.p. p − q else uniform on [g]" has the same law). Rows (y, seed)."""
    seeds = rng.integers(0, seed_high, len(values), dtype=np.int64)
    if hasher is None:
        x = np.array([xxh32_ref(str(int(v)).encode(), int(s)) % g for v, s in zip(values, seeds)])
    else:
        x = hasher(seeds, values, g)
    y = grr(x, eps, g, rng)
    return np.stack((y, seeds), axis=1)


def hr_pure_ldp(values, eps, d, rng):
    """Hadamard_Rand_high_priv.encode_symbol: out1 uniform on [K]; out2 = out1 with the *leftmost*
    set bit of v+1 flipped; return the one in C_v (parity((v+1)&y) = 0) w.p. 1/(1+e^−ε)."""
    K = 1 << int(math.ceil(math.log2(d + 1)))
    row = values + 1
    out1 = rng.integers(0, K, len(values))
    msb = 1 << (np.floor(np.log2(row)).astype(np.int64))
    out2 = out1 ^ msb
    check = np.bitwise_count(row & out1) & 1
    inside = np.where(check == 0, out1, out2)
    outside = np.where(check == 0, out2, out1)
    flip = rng.random(len(values)) <= 1 / (1 + math.exp(eps))
    return np.where(flip, outside, inside)


def ss(values, eps, d, rng):
    """SS_Client: v first w.p. p_v then sub_k − 1 others, else sub_k values of D∖{v} (rows)."""
    k = int(max(1, np.rint(d / (np.exp(eps) + 1))))
    p = k * math.exp(eps) / (k * math.exp(eps) + d - k)
    keys = rng.random((len(values), d))
    keys[np.arange(len(values)), values] = np.inf  # never among the random picks
    order = np.argsort(keys, axis=1)
    incl = rng.random(len(values)) <= p
    out = np.where(incl[:, None], np.concatenate([values[:, None], order[:, :k - 1]], axis=1), order[:, :k])
    return out
