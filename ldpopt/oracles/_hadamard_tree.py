"""HR's output histogram (Acharya, Sun & Zhang, AISTATS 2019) drawn by halving the Hadamard cube
bit by bit: O(K log K), no n.

Notes: docs/notes/python.md, "ldpopt.oracles._hadamard_tree"."""

from __future__ import annotations

import functools

import numpy as np

__all__ = ["binomial_half", "tree_histogram"]

_ALL_BITS = np.uint64(np.iinfo(np.uint64).max)
# bit-count Binomial(x, 1/2) up to 64 · this many words (binomial_half)
_WORDS_MAX = 16


@functools.lru_cache(maxsize=8)
def _first_word_masks(top: int) -> np.ndarray:
    """Entry x (0 ≤ x ≤ top): the ((x − 1) mod 64) + 1 lowest bits of a word, 0 at x = 0
    (``binomial_half``'s first-word masks)."""
    x = np.arange(top + 1, dtype=np.uint64)
    keep = (x - np.uint64(1)) % np.uint64(64) + np.uint64(1)  # wraps to 64 at x = 0, zeroed below
    masks = _ALL_BITS >> (np.uint64(64) - keep)
    masks[0] = 0
    masks.flags.writeable = False
    return masks


def binomial_half(x: np.ndarray, gen: np.random.Generator, words_max: int | None = None) -> np.ndarray:
    """Binomial(x, 1/2) elementwise (x int64 ≥ 0), exact: the number of ones among x iid fair bits
    for x ≤ 64·``words_max`` (uniform 64-bit words: ⌊(x − 1)/64⌋ whole ones and one masked to the
    ((x − 1) mod 64) + 1 bits left, so only the first word per cell needs a mask), numpy's
    ``binomial`` (BTPE) above.

    Costs measured on this machine (CPU per cell): a bit count ~5 ns for x ≤ 64 and ~4 ns per
    further word, against BTPE's 60–95 ns at x = 65–2,000 with a different x per cell (its set-up
    is recomputed whenever x changes) and 45–60 ns above; ``_WORDS_MAX`` = 16 (x ≤ 1,024): the
    tree's draws at n = 10⁹, d = 42,178 cost the same from 8 to 16 words and more from 24
    (BENCHMARKS.md, "HR's fast path, cheaper draws"). When most cells are above the bit-count
    range numpy draws them all (the gather/scatter of the large cells would cost more than the
    small cells save). Every choice depends on x only, so the draws are reproducible from the
    seed."""
    if words_max is None:
        words_max = _WORDS_MAX
    if not 1 <= words_max < 1024:  # the segment sums below are taken mod 2^16
        raise ValueError(f"words_max must be in [1, 1023], got {words_max}")
    top = 64 * words_max
    flat = x.reshape(-1)
    big = np.flatnonzero(flat > top)
    if 2 * big.size > flat.size:
        return gen.binomial(x, 0.5)
    # the first word keeps the bits of x not in whole further words: ((x − 1) mod 64) + 1 of them
    # (x itself for x ≤ 64, none for x = 0); cells above ``top`` clip to a full word, then are redrawn
    u = gen.integers(0, _ALL_BITS, size=flat.shape, dtype=np.uint64, endpoint=True)
    u &= np.take(_first_word_masks(top), flat, mode="clip")
    out = np.empty(flat.shape, dtype=np.int64)
    np.bitwise_count(u, out=out)  # uint8 counts written as int64, no temporary
    mid = np.flatnonzero((flat > 64) & (flat <= top))
    if mid.size:
        ends = np.cumsum((flat[mid] - 1) >> 6)  # whole further words per cell: (x − 1) // 64 ≥ 1
        words = gen.integers(0, _ALL_BITS, size=int(ends[-1]), dtype=np.uint64, endpoint=True)
        # per-cell sums as differences of one running count mod 2^16: exact, as a cell's further
        # words hold ≤ 64·(words_max − 1) < 2^16 ones
        c = np.cumsum(np.bitwise_count(words), dtype=np.uint16)[ends - 1]
        c[1:] -= c[:-1]
        out[mid] += c
    if big.size:
        out[big] = gen.binomial(flat[big], 0.5)
    return out.reshape(x.shape)


def tree_histogram(inside: np.ndarray, outside: np.ndarray, gen: np.random.Generator) -> np.ndarray:
    """Output histogram N (int64, length K) of users that are, for each row r ∈ [0, K),
    ``inside[r]`` uniform on C_r and ``outside[r]`` uniform on C̄_r (K = len(inside), a power of 2;
    ``outside[0]`` must be 0: C̄_0 is empty). Exact in joint law; see the module notes."""
    inside = np.asarray(inside, dtype=np.int64)
    outside = np.asarray(outside, dtype=np.int64)
    K = inside.shape[0]
    if inside.ndim != 1 or K < 1 or K & (K - 1) or outside.shape != inside.shape:
        raise ValueError("inside and outside must be 1-d of one power-of-2 length, "
                         f"got {inside.shape}, {outside.shape}")
    if outside[0] != 0:
        raise ValueError("outside[0] must be 0: row 0 is all +1, its complement is empty")
    if K == 1:
        return inside.copy()
    nz = np.flatnonzero(inside | outside)
    R = max(2, int(nz[-1]) + 1 if nz.size else 2)
    R += R & 1                                   # rows in use, padded to even
    S = np.stack([inside[:R], outside[:R]])[None]  # (prefix, side [+, −], row)
    prefixes = 1
    while prefixes < K // 2:
        S4 = S.reshape(prefixes, 2, R // 2, 2)   # (prefix, side σ, row r', low row bit a)
        X0 = binomial_half(S4, gen)              # users whose next output bit b is 0
        X0[:, 0, 0, 1] = S4[:, 0, 0, 1]          # r = 1: b fixed by the side
        X0[:, 1, 0, 1] = 0
        X1 = S4
        X1 -= X0                                 # S is not read again: its buffer holds b = 1
        R2 = R // 2
        Rn = max(2, R2 + (R2 & 1))               # next level's rows, padded to even
        T = np.zeros((2, prefixes, 2, Rn), dtype=np.int64)  # (b, prefix, child side, r')
        np.add(X0[..., 0], X0[..., 1], out=T[0, :, :, :R2])           # b = 0: side kept
        np.add(X1[:, 0, :, 0], X1[:, 1, :, 1], out=T[1, :, 0, :R2])   # b = 1: side flips where a = 1
        np.add(X1[:, 1, :, 0], X1[:, 0, :, 1], out=T[1, :, 1, :R2])
        prefixes *= 2
        S = T.reshape(prefixes, 2, Rn)           # new prefix = b·2^level + old prefix
        R = Rn
    # last bit (rows 0 and 1 left; the (−) side of row 0 is empty by construction): only row 0's
    # (+) users draw; row 1's (+) users all output b = 0, its (−) users b = 1
    X0 = binomial_half(S[:, 0, 0], gen)
    N = np.empty((2, prefixes), dtype=np.int64)
    np.add(X0, S[:, 0, 1], out=N[0])
    np.add(S[:, 0, 0] - X0, S[:, 1, 1], out=N[1])
    return N.reshape(-1)
