"""The scalar arithmetic the aggregation kernels share, written once in plain Python on numpy uint64
scalars and compiled twice: for the CPU (``numba.njit``, inlined) by :mod:`.cpu` and as CUDA device
functions (``numba.cuda.jit(device=True)``) by :mod:`.cuda`. Imports numpy only.

* :func:`mix64` — SplitMix64's output function (Steele, Lea & Flood, OOPSLA 2014; Stafford's
  "variant 13" constants), the same arithmetic as ``ldpopt.oracles.hashing._mix64_inplace``.
* :func:`congruent` — whether z ≡ r (mod g) for 0 ≤ r < g, without a 64-bit division (the one
  instruction that would dominate OLH's kernel): with g = 2^t·g₀, g₀ odd, an integer x ≥ 0 is a
  multiple of g iff rotr(x·g₀⁻¹ mod 2^64, t) ≤ ⌊(2^64 − 1)/g⌋ (Granlund & Montgomery, PLDI 1994, §9;
  Warren, *Hacker's Delight*, 2nd ed., §10-17), where g₀⁻¹ is the inverse of g₀ modulo 2^64. The
  test is applied to x = z − r mod 2^64. For z ≥ r that is z − r and the test is exact. For z < r
  (true answer: no) x = 2^64 − (r − z) with 1 ≤ r − z < g, a multiple of g iff r − z ≡ 2^64
  (mod g), i.e. iff r − z = m := 2^64 mod g: the one wrapped false positive is z = r − m (when
  m ≥ 1 and r ≥ m). So z ≡ r ⇔ divisible(x) and z ≠ b_r, with the per-report guard
  b_r = r − m there, and b_r = r + 1 elsewhere (x = 1 is never a multiple of g ≥ 2, so that guard
  rejects nothing): :func:`wrap_guard`. *Why not* the plain z ≥ r test: an unsigned 64-bit
  comparison of two variables costs three AVX2 instructions (no unsigned compare: two sign flips
  and a signed compare), an equality one; measured on the reference machine (AVX2, no AVX-512) OLH
  at g = 56 went from ~2.0 to ~1.4 ns per user·value on one core (``benchmarks/bench_kernels.py``).
  When g is a power of two (g₀ = 1) the test reduces to the mask z & (g − 1) = r, and
  :func:`divisibility_constants` lets the kernels use that instead.
"""

from __future__ import annotations

import numpy as np

__all__ = ["GAMMA", "mix64", "congruent", "wrap_guard", "divisibility_constants"]

GAMMA = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_S27, _S30, _S31 = np.uint64(27), np.uint64(30), np.uint64(31)
_S63, _S64 = np.uint64(63), np.uint64(64)
_ZERO, _ONE = np.uint64(0), np.uint64(1)


def mix64(z):
    """SplitMix64's output function of a uint64 (wrap-around mod 2^64 intended)."""
    z = (z ^ (z >> _S30)) * _MIX1
    z = (z ^ (z >> _S27)) * _MIX2
    return z ^ (z >> _S31)


def congruent(z, r, guard, inv, rot, lim):
    """z ≡ r (mod g) for uint64 z and 0 ≤ r < g, given ``guard`` = ``wrap_guard(r, m)`` and
    ``divisibility_constants(g)`` = (inv, rot, lim, m) (module docstring). The rotation amount is
    masked so that rot = 0 shifts by 0, not 64."""
    x = (z - r) * inv
    x = (x >> rot) | (x << ((_S64 - rot) & _S63))
    return (x <= lim) & (z != guard)


def wrap_guard(r, m):
    """The z that :func:`congruent` must reject for report r although z − r mod 2^64 is a multiple
    of g: r − m when 1 ≤ m ≤ r (m = 2^64 mod g), else r + 1, which the divisibility test rejects
    anyway (module docstring). uint64 scalars."""
    return r - m if (m != _ZERO and r >= m) else r + _ONE


def divisibility_constants(g: int) -> tuple[np.uint64, np.uint64, np.uint64, np.uint64]:
    """(g₀⁻¹ mod 2^64, t, ⌊(2^64 − 1)/g⌋, 2^64 mod g) for g = 2^t·g₀ ≥ 2 with g₀ odd (module
    docstring)."""
    g = int(g)
    if g < 2:
        raise ValueError(f"g must be an integer >= 2, got {g}")
    t = (g & -g).bit_length() - 1
    g0 = g >> t
    inv = pow(g0, -1, 1 << 64)
    return np.uint64(inv), np.uint64(t), np.uint64(((1 << 64) - 1) // g), np.uint64((1 << 64) % g)
