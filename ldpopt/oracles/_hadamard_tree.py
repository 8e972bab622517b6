"""HR's output histogram drawn by halving the Hadamard cube bit by bit (issue 16): O(K log K), no n.

Acharya, Sun, Zhang (AISTATS 2019, arXiv:1802.04705): a user of value v outputs y uniform on
C_r = {y : H[r, y] = +1}, r = v + 1, with probability p, else uniform on its complement C̄_r. Users
are independent, so the output histogram N is, exactly, the sum over the classes (r, side) of
independent Multinomial(count, uniform on that side's K/2 outputs). Two classes asking for the same
uniform law merge (a sum of independent multinomials with one probability vector is one
multinomial), and the Sylvester recursion H_{2m}[a·m + r', b·m + y'] = (−1)^{a·b} H_m[r', y'] lets
us keep the number of classes at 2K while fixing y's bits from the top:

Take a class "uniform on {y' ∈ [2m) : H_{2m}[r, y'] = σ}" of count x, r = a·m + r'' (a the top bit).
The top bit b of y' and the rest y'' satisfy H_m[r'', y''] = σ·(−1)^{a·b}:

* r'' ≠ 0, or a = 0: both halves hold m/2 (resp. m) targets, so b ~ Bernoulli(1/2) per user and
  x splits as Binomial(x, 1/2) into child classes (prefix·2 + b, r'', σ·(−1)^{a·b});
* r'' = 0 and a = 1: H_m[0, ·] = +1, so b is fixed by σ (b = 0 for +1, 1 for −1), child side +1.

Conditionally on the current level, the classes are independent uniform multinomials on their sets
(induction on the level), so after log2 K levels the count of class (prefix = y, r'' = 0, +) is N_y
with the exact joint law of the per-user simulation. Each level draws 2K binomials (all classes;
empty ones cost nothing but a call slot), the last K/2 (only row 0 is split there): about
2K·(log2 K − 3/4) draws whatever n is, by ``binomial_half``.
"""

from __future__ import annotations

import numpy as np

__all__ = ["tree_histogram", "binomial_half"]

_ALL_BITS = np.iinfo(np.uint64).max


def binomial_half(x: np.ndarray, gen: np.random.Generator) -> np.ndarray:
    """Binomial(x, 1/2) elementwise (x int64 ≥ 0), exact: for x ≤ 64 the number of ones among x bits
    of a uniform 64-bit word (iid fair bits; ~5 ns a cell against numpy's inversion sampler's
    20–110 ns), numpy's ``binomial`` (BTPE) above. When most cells are above 64 numpy draws them all
    (the gather/scatter of the large cells would cost more than the small cells save); the choice
    depends on x only, so the draws are reproducible from the seed."""
    big = np.flatnonzero(x > 64)
    if 2 * big.size > x.size:
        return gen.binomial(x, 0.5)
    u = gen.integers(0, _ALL_BITS, size=x.shape, dtype=np.uint64, endpoint=True)
    # 1 << x is 0 for x ≥ 64 in numpy, so the mask is all ones at x = 64; x > 64 is redrawn below
    u &= np.left_shift(np.uint64(1), x.astype(np.uint64)) - np.uint64(1)
    out = np.bitwise_count(u).astype(np.int64)
    if big.size:
        out.flat[big] = gen.binomial(x.flat[big], 0.5)
    return out


def tree_histogram(inside: np.ndarray, outside: np.ndarray, gen: np.random.Generator) -> np.ndarray:
    """Output histogram N (int64, length K) of users that are, for each row r ∈ [0, K),
    ``inside[r]`` uniform on C_r and ``outside[r]`` uniform on C̄_r (K = len(inside), a power of 2;
    ``outside[0]`` must be 0: C̄_0 is empty). Exact in joint law; see the module docstring."""
    inside = np.asarray(inside, dtype=np.int64)
    outside = np.asarray(outside, dtype=np.int64)
    K = inside.shape[0]
    if inside.ndim != 1 or K < 1 or K & (K - 1) or outside.shape != inside.shape:
        raise ValueError(f"inside and outside must be 1-d of one power-of-2 length, got {inside.shape}, {outside.shape}")
    if outside[0] != 0:
        raise ValueError("outside[0] must be 0: row 0 is all +1, its complement is empty")
    if K == 1:
        return inside.copy()
    S = np.stack([inside, outside])[None]  # (prefix, side [+, −], row) with row ∈ [0, m)
    m = K
    while m > 2:
        half = m // 2
        S4 = S.reshape(S.shape[0], 2, 2, half)  # (prefix, side σ, top row bit a, row r'')
        X0 = binomial_half(S4, gen)             # users whose next output bit b is 0
        X0[:, 0, 1, 0] = S4[:, 0, 1, 0]         # r = m/2 exactly: b fixed by the side
        X0[:, 1, 1, 0] = 0
        X1 = S4
        X1 -= X0                                # S is not read again: its buffer holds b = 1
        T = np.empty_like(S4)                   # (prefix, b, child side, r'')
        np.add(X0[:, :, 0], X0[:, :, 1], out=T[:, 0])  # b = 0: side kept for a = 0 and a = 1
        np.add(X1[:, 0, 0], X1[:, 1, 1], out=T[:, 1, 0])  # b = 1: side flips where a = 1
        np.add(X1[:, 1, 0], X1[:, 0, 1], out=T[:, 1, 1])
        S = T.reshape(S.shape[0] * 2, 2, half)
        m = half
    # last bit (m = 2, rows 0 and 1; the (−) side of row 0 is empty by construction): only row 0's
    # (+) users draw; row 1's (+) users all output b = 0, its (−) users b = 1
    X0 = binomial_half(S[:, 0, 0], gen)
    N = np.empty((S.shape[0], 2), dtype=np.int64)
    np.add(X0, S[:, 0, 1], out=N[:, 0])
    np.add(S[:, 0, 0] - X0, S[:, 1, 1], out=N[:, 1])
    return N.reshape(-1)
