"""The scalar arithmetic the aggregation kernels share, written once in plain Python on numpy uint64
scalars and compiled twice: for the CPU (``numba.njit``, inlined) by :mod:`.cpu` and as CUDA device
functions (``numba.cuda.jit(device=True)``) by :mod:`.cuda`. Imports numpy only.

Notes: docs/notes/devices.md, "ldpopt.kernels.scalar"."""

from __future__ import annotations

import numpy as np

__all__ = ["GAMMA", "congruent", "divisibility_constants", "mix64"]

GAMMA = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_S27, _S30, _S31 = np.uint64(27), np.uint64(30), np.uint64(31)
_S63, _S64 = np.uint64(63), np.uint64(64)


def mix64(z):
    """SplitMix64's output function of a uint64 (wrap-around mod 2^64 intended)."""
    z = (z ^ (z >> _S30)) * _MIX1
    z = (z ^ (z >> _S27)) * _MIX2
    return z ^ (z >> _S31)


def congruent(z, r, inv, rot, lim):
    """z ≡ r (mod g) for uint64 z and 0 ≤ r < g, given ``divisibility_constants(g)`` = (inv, rot,
    lim) (module notes). The rotation amount is masked so that rot = 0 shifts by 0, not 64."""
    x = (z - r) * inv
    x = (x >> rot) | (x << ((_S64 - rot) & _S63))
    return (z >= r) & (x <= lim)


def divisibility_constants(g: int) -> tuple[np.uint64, np.uint64, np.uint64]:
    """(g₀⁻¹ mod 2^64, t, ⌊(2^64 − 1)/g⌋) for g = 2^t·g₀ ≥ 1 with g₀ odd (module notes)."""
    g = int(g)
    if g < 1:
        raise ValueError(f"g must be an integer >= 1, got {g}")
    t = (g & -g).bit_length() - 1
    g0 = g >> t
    inv = pow(g0, -1, 1 << 64)
    return np.uint64(inv), np.uint64(t), np.uint64(((1 << 64) - 1) // g)
