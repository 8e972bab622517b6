"""Range queries from LDP estimates of Haar wavelet coefficients (Cormode, Kulkarni & Srivastava,
VLDB 2019, §5, "HaarHRR"; cited from memory of the paper: the PDF is not in the repository).

Notes: docs/notes/python.md, "ldpopt.hierarchy.haar"."""

from __future__ import annotations

import numpy as np

from .._validation import as_generator, check_counts, check_epsilon
from .collect import group_sizes, split_users
from .variance import range_matrix

__all__ = ["haar_collect", "haar_leaves", "haar_range_variance", "sylvester"]


def sylvester(m: int) -> np.ndarray:
    """The m × m Sylvester–Hadamard matrix, H[r, j] = (−1)^popcount(r & j) (m a power of 2)."""
    r = np.arange(m)
    x = r[:, None] & r[None, :]
    bits = np.zeros_like(x)
    while np.any(x):
        bits ^= x & 1
        x >>= 1
    return 1 - 2 * bits


def _levels(d: int) -> int:
    return max(1, int(np.ceil(np.log2(d))))


def _children(counts_pad: np.ndarray, level: int) -> np.ndarray:
    """Totals of the 2^(ℓ+1) nodes just below level ℓ."""
    return counts_pad.reshape(2 ** (level + 1), -1).sum(axis=1)


def haar_collect(true_counts, epsilon: float, *, rng) -> tuple[list[np.ndarray], int]:
    """(θ̂ per level, d) from simulated HaarHRR reports of users with histogram ``true_counts``.

    Cormode, Kulkarni & Srivastava, VLDB 2019, §5 (HaarHRR); the domain padded to :math:`2^J` and the users
    split into J equal groups (module notes).

    Parameters
    ----------
    true_counts : array_like of int, shape (d,)
        Users per value.
    epsilon : float
        Each user's ε.
    rng : int or numpy.random.Generator
        Seed or generator (keyword-only).

    Returns
    -------
    theta : list of ndarray
        Level ℓ's :math:`2^ℓ` estimated coefficients, ℓ = 0 … J − 1.
    d : int
        The domain size.

    Raises
    ------
    ValueError
        Bad counts or ε, or fewer users than levels.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt import hierarchy
    >>> from ldpopt.hierarchy.haar import haar_collect
    >>> theta, d = haar_collect(np.array([400, 300, 100, 100, 50, 30, 20, 0]), 1.0, rng=0)
    >>> [t.shape for t in theta], d
    ([(1,), (2,), (4,)], 8)
    """
    tc = check_counts(true_counts, "true_counts", integral=True)
    eps = check_epsilon(epsilon, "epsilon")
    d, J = tc.shape[0], _levels(tc.shape[0])
    n = int(tc.sum())
    if n < J:
        raise ValueError(f"true_counts must describe at least one user per Haar level ({J}), got n = {n}")
    gen = as_generator(rng)
    p = np.exp(eps) / (np.exp(eps) + 1)
    groups = split_users(np.concatenate([tc, np.zeros(2**J - d, dtype=np.int64)]), J, gen)
    theta = []
    for lev in range(J):  # one pass per level, vectorised over its 2^ℓ coefficients
        m, n_l = 2**lev, int(groups[lev].sum())
        g = _children(groups[lev], lev)  # class (j, +) = node 2j, (j, −) = node 2j + 1
        rows = gen.multinomial(g, np.full(m, 1.0 / m))  # (2m, m): users of each class per row r
        H = sylvester(m)
        sign = H.T  # bit of class (j, +) at row r is H[r, j]
        true_bit = np.empty((2 * m, m), dtype=np.int64)
        true_bit[0::2], true_bit[1::2] = sign, -sign
        plus = np.where(true_bit > 0, rows, 0).sum(axis=0)
        minus = rows.sum(axis=0) - plus
        plus_rep = gen.binomial(plus, p) + gen.binomial(minus, 1 - p)
        bit_sum = 2 * plus_rep - rows.sum(axis=0)
        phi = m / (n_l * (2 * p - 1)) * bit_sum
        theta.append(H @ phi / m)
    return theta, d


def haar_leaves(theta: list[np.ndarray], d: int) -> np.ndarray:
    """The leaf frequencies reconstructed from the total 1 and the coefficients (first d of :math:`2^J`).

    Level by level, left = (parent + θ)/2 and right = (parent − θ)/2 (Cormode, Kulkarni &
    Srivastava, VLDB 2019, §5).

    Parameters
    ----------
    theta : list of ndarray
        Coefficients per level, as :func:`haar_collect` returns them.
    d : int
        The domain size.

    Returns
    -------
    ndarray, shape (d,)
        Leaf frequencies (summing to 1 over the padded domain; may be negative).

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt import hierarchy
    >>> from ldpopt.hierarchy.haar import haar_leaves
    >>> haar_leaves([np.array([0.5]), np.array([0.0, 0.25])], 4)  # the exact f = (.375, .375, .25, 0)
    array([0.375, 0.375, 0.25 , 0.   ])
    """
    node = np.ones(1)
    for th in theta:
        node = np.stack([(node + th) / 2, (node - th) / 2], axis=1).ravel()
    return node[:d]


def _adjoint(u_pad: np.ndarray, J: int) -> list[np.ndarray]:
    """The weights on each level's θ̂ of the answers u_padᵀ x (u_pad: (2^J, Q)), reverse of haar_leaves."""
    bar, out = u_pad, []
    for _ in range(J):
        left, right = bar[0::2], bar[1::2]
        out.append((left - right) / 2)
        bar = (left + right) / 2
    return out[::-1]


def haar_range_variance(f, n: int, epsilon: float, a, b) -> np.ndarray:
    """Exact Var of HaarHRR's answers to the ranges :math:`[a_i, b_i]` (true leaf frequencies ``f``, n users).

    The covariance of each level's coefficients given the group plus the sampling of the group
    (module notes), pushed through the reconstruction's adjoint.

    Parameters
    ----------
    f : array_like, shape (d,)
        True leaf frequencies.
    n : int
        Number of users.
    epsilon : float
        Each user's ε.
    a, b : array_like of int
        Range ends, inclusive, ``0 <= a <= b < d``.

    Returns
    -------
    ndarray
        One variance per range.

    Raises
    ------
    ValueError
        Bad ε or ranges.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt import hierarchy
    >>> f = np.array([400, 300, 100, 100, 50, 30, 20, 0]) / 1000
    >>> from ldpopt.hierarchy.haar import haar_range_variance
    >>> haar_range_variance(f, 1000, 1.0, [0, 0], [3, 7]).round(6)
    array([0.002936, 0.      ])
    """
    f = np.asarray(f, dtype=np.float64)
    eps = check_epsilon(epsilon, "epsilon")
    d, J = f.shape[0], _levels(f.shape[0])
    p = np.exp(eps) / (np.exp(eps) + 1)
    fp = np.concatenate([f, np.zeros(2**J - d)])
    U = np.zeros((2**J, np.atleast_1d(a).shape[0]))
    U[:d] = range_matrix(d, a, b).T.toarray()
    total = np.zeros(U.shape[1])
    for lev, (W, n_l) in enumerate(zip(_adjoint(U, J), group_sizes(n, J))):
        g = _children(fp, lev)
        w, th = g[0::2] + g[1::2], g[0::2] - g[1::2]
        total += (W**2).sum(axis=0) / (n_l * (2 * p - 1) ** 2) - w @ W**2 / n_l
        if n_l < n:
            total += (n - n_l) / ((n - 1) * n_l) * (w @ W**2 - (th @ W) ** 2)
    return total
