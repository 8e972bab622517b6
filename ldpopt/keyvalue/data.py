"""Key–value data: each user holds a set of keys, each with a value in [−1, 1] (ratings, usage).

:class:`KVData` stores n users' sets in compressed rows (``offsets``, ``keys``, ``values``) and
answers the truth the protocols estimate: the key frequency f_k (the fraction of users holding k)
and the per-key mean m_k (the mean value among those users). :func:`power_law` draws the synthetic
setting of the key–value papers' experiments (key popularity ∝ k^−α; PCKV, Gu et al. USENIX
Security 2020, §6; PrivKV, Ye et al. S&P 2019, §VI). :func:`ratings_like` is a synthetic stand-in
for a rating dataset (labelled as such wherever it is used; nothing is downloaded).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._validation import as_generator

__all__ = ["KVData", "power_law", "ratings_like"]


@dataclass(frozen=True)
class KVData:
    """n users' key–value sets in compressed rows.

    Parameters
    ----------
    offsets : ndarray (n + 1,)
        User u holds ``keys[offsets[u]:offsets[u+1]]`` with ``values[...]``; non-decreasing, from 0.
    keys : ndarray (nnz,)
        Keys in 0..d−1, distinct within a user.
    values : ndarray (nnz,)
        Values in [−1, 1].
    d : int
        The key domain size, ≥ 2.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt.keyvalue import KVData
    >>> kv = KVData(np.array([0, 2, 3]), np.array([0, 1, 1]), np.array([0.5, -1.0, 1.0]), 3)
    >>> kv.n, kv.frequencies().tolist(), kv.means().tolist()
    (2, [0.5, 1.0, 0.0], [0.5, 0.0, 0.0])
    """

    offsets: np.ndarray
    keys: np.ndarray
    values: np.ndarray
    d: int

    def __post_init__(self):
        off = np.asarray(self.offsets, dtype=np.int64)
        keys = np.asarray(self.keys, dtype=np.int64)
        vals = np.asarray(self.values, dtype=np.float64)
        if isinstance(self.d, bool) or not isinstance(self.d, (int, np.integer)) or self.d < 2:
            raise ValueError(f"d must be an integer >= 2, got {self.d!r}")
        if off.ndim != 1 or off.size < 2 or off[0] != 0 or np.any(np.diff(off) < 0) or off[-1] != keys.size:
            raise ValueError("offsets must be non-decreasing from 0 to len(keys), with at least one user")
        if keys.shape != vals.shape:
            raise ValueError(f"keys and values must have one shape, got {keys.shape} and {vals.shape}")
        if keys.size and (keys.min() < 0 or keys.max() >= self.d):
            raise ValueError(f"keys must lie in 0..d-1 = 0..{self.d - 1}")
        if not np.all(np.isfinite(vals)) or np.any(np.abs(vals) > 1):
            raise ValueError("values must be finite and lie in [-1, 1]")
        users = np.repeat(np.arange(off.size - 1), np.diff(off))
        pair = users * self.d + keys
        if np.unique(pair).size != pair.size:
            raise ValueError("keys must be distinct within each user")
        object.__setattr__(self, "offsets", off)
        object.__setattr__(self, "keys", keys)
        object.__setattr__(self, "values", vals)
        object.__setattr__(self, "d", int(self.d))

    @property
    def n(self) -> int:
        """The number of users.

        Examples
        --------
        >>> from ldpopt import keyvalue as kv
        >>> kv.power_law(50, 4, rng=0).n
        50
        """
        return self.offsets.size - 1

    @property
    def sizes(self) -> np.ndarray:
        """:math:`|S_u|` for every user.

        Examples
        --------
        >>> from ldpopt import keyvalue as kv
        >>> kv.power_law(3, 4, items=2, rng=0).sizes.tolist()
        [2, 2, 2]
        """
        return np.diff(self.offsets)

    @property
    def users(self) -> np.ndarray:
        """The user of every stored pair (length nnz).

        Examples
        --------
        >>> from ldpopt import keyvalue as kv
        >>> kv.power_law(2, 4, items=2, rng=0).users.tolist()
        [0, 0, 1, 1]
        """
        return np.repeat(np.arange(self.n), self.sizes)

    def frequencies(self) -> np.ndarray:
        """:math:`f_k` = (users holding k) / n.

        Returns
        -------
        ndarray (d,)

        Examples
        --------
        >>> import numpy as np
        >>> from ldpopt.keyvalue import KVData
        >>> KVData(np.array([0, 2, 3]), np.array([0, 1, 1]), np.array([0.5, -1.0, 1.0]), 3).frequencies().tolist()
        [0.5, 1.0, 0.0]
        """
        return np.bincount(self.keys, minlength=self.d) / self.n

    def means(self) -> np.ndarray:
        """:math:`m_k` = mean value among the users holding k; 0 for a key nobody holds.

        Returns
        -------
        ndarray (d,)

        Examples
        --------
        >>> import numpy as np
        >>> from ldpopt.keyvalue import KVData
        >>> KVData(np.array([0, 2, 3]), np.array([0, 1, 1]), np.array([0.5, -1.0, 1.0]), 3).means().tolist()
        [0.5, 0.0, 0.0]
        """
        cnt = np.bincount(self.keys, minlength=self.d)
        tot = np.bincount(self.keys, weights=self.values, minlength=self.d)
        return np.divide(tot, cnt, out=np.zeros(self.d), where=cnt > 0)

    def user(self, u: int) -> tuple[np.ndarray, np.ndarray]:
        """User u's (keys, values).

        Parameters
        ----------
        u : int
            The user, 0..n−1.

        Returns
        -------
        (ndarray, ndarray)

        Examples
        --------
        >>> import numpy as np
        >>> from ldpopt.keyvalue import KVData
        >>> keys, values = KVData(np.array([0, 2, 3]), np.array([0, 1, 1]), np.array([0.5, -1.0, 1.0]), 3).user(0)
        >>> keys.tolist(), values.tolist()
        ([0, 1], [0.5, -1.0])
        """
        a, b = self.offsets[u], self.offsets[u + 1]
        return self.keys[a:b], self.values[a:b]

    @classmethod
    def from_dense(cls, rows) -> KVData:
        """Users from dense rows: row u, column k holds user u's value for key k, NaN where she does
        not hold k (d = the number of columns).

        Parameters
        ----------
        rows : array_like, shape (n, d)
            Values in [−1, 1] or NaN; d ≥ 2, n ≥ 1.

        Returns
        -------
        KVData

        Raises
        ------
        ValueError
            If ``rows`` is not a 2-D array of at least one row and two columns, or a value is outside
            [−1, 1].

        Examples
        --------
        >>> import numpy as np
        >>> from ldpopt.keyvalue import KVData
        >>> kv = KVData.from_dense([[0.5, np.nan, -1.0], [np.nan, np.nan, np.nan]])
        >>> kv.offsets.tolist(), kv.keys.tolist(), kv.values.tolist()
        ([0, 2, 2], [0, 2], [0.5, -1.0])
        """
        a = np.asarray(rows, dtype=np.float64)
        if a.ndim != 2 or a.shape[0] < 1 or a.shape[1] < 2:
            raise ValueError(f"rows must be a 2-D array (n >= 1 users, d >= 2 keys), got shape {a.shape}")
        held = ~np.isnan(a)
        if np.any(np.abs(a[held]) > 1):
            raise ValueError("rows must hold values in [-1, 1] (NaN: key not held)")
        users, keys = np.nonzero(held)
        offsets = np.concatenate([[0], np.cumsum(held.sum(axis=1))])
        return cls(offsets, keys, a[users, keys], a.shape[1])


def _draw_sets(n, d, sizes, weights, rng):
    """Distinct keys per user, drawn without replacement ∝ weights (Gumbel top-s, vectorised in blocks)."""
    logw = np.log(weights)
    smax = int(sizes.max())
    keys = np.empty((n, smax), dtype=np.int64)
    block = max(1, 2_000_000 // d)
    for lo in range(0, n, block):  # memory blocks of users, not a loop over users
        g = logw - np.log(-np.log(rng.random((min(block, n - lo), d))))
        keys[lo:lo + block] = np.argpartition(-g, smax - 1, axis=1)[:, :smax] if smax < d else np.argsort(-g, axis=1)
    mask = np.arange(smax) < sizes[:, None]
    return keys[mask], np.concatenate([[0], np.cumsum(sizes)])


def power_law(n: int, d: int = 100, *, alpha: float = 1.0, items: int = 1, sigma: float = 0.3, rng=None) -> KVData:
    """Synthetic key–value data with power-law key popularity.

    Key k (0-based) is drawn :math:`∝ (k + 1)^{-α}` (without replacement within a user); each user holds
    ``items`` keys; key k has a centre :math:`μ_k` uniform on [−1, 1] (drawn once) and a user's value is
    :math:`N(μ_k, σ^2)` clipped to [−1, 1]. The key–value papers' synthetic setting (PCKV §6 uses power-law
    and Gaussian key laws with one pair per user; PrivKV §VI power-law keys); the value law is a
    choice where they differ.

    Parameters
    ----------
    n : int
        Users, ≥ 1.
    d : int, default 100
        Keys, ≥ 2.
    alpha : float, default 1.0
        The power-law exponent, ≥ 0.
    items : int, default 1
        Keys per user, 1..d.
    sigma : float, default 0.3
        The value spread, ≥ 0.
    rng : seed, Generator or None

    Returns
    -------
    KVData

    Examples
    --------
    >>> from ldpopt import keyvalue as kv
    >>> data = kv.power_law(10_000, 20, alpha=1.0, items=2, rng=0)
    >>> bool(data.frequencies()[0] > data.frequencies()[-1]), data.n
    (True, 10000)
    """
    for name, v, lo in (("n", n, 1), ("d", d, 2)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < lo:
            raise ValueError(f"{name} must be an integer >= {lo}, got {v!r}")
    if isinstance(items, bool) or not isinstance(items, (int, np.integer)) or not 1 <= items <= d:
        raise ValueError(f"items must be an integer in 1..d={d}, got {items!r}")
    if not np.isfinite(alpha) or alpha < 0:
        raise ValueError(f"alpha must be finite and >= 0, got {alpha!r}")
    if not np.isfinite(sigma) or sigma < 0:
        raise ValueError(f"sigma must be finite and >= 0, got {sigma!r}")
    rng = as_generator(rng)
    centre = rng.uniform(-1, 1, d)
    keys, off = _draw_sets(n, d, np.full(n, items), (np.arange(1, d + 1)) ** -float(alpha), rng)
    vals = np.clip(centre[keys] + sigma * rng.standard_normal(keys.size), -1, 1)
    return KVData(off, keys, vals, d)


def ratings_like(n: int = 20_000, d: int = 200, *, rng=None) -> KVData:
    r"""A SYNTHETIC stand-in for a real rating dataset (MovieLens/clothing-rating-like; not real data).

    Items :math:`∝ \mathrm{rank}^{-0.8}`; a user rates 1 + Poisson(2) items (at most d); ratings 1..5 with a per-item
    quality, mapped to [−1, 1] as (r − 3)/2. Used where the papers use a real rating set, which no
    installed package ships; results on it are labelled synthetic.

    Parameters
    ----------
    n : int, default 20000
        Users, ≥ 1.
    d : int, default 200
        Items, ≥ 2.
    rng : seed, Generator or None

    Returns
    -------
    KVData

    Examples
    --------
    >>> from ldpopt import keyvalue as kv
    >>> data = kv.ratings_like(1000, 50, rng=0)
    >>> bool(abs(data.values).max() <= 1), sorted(set((2 * data.values + 3).tolist()))
    (True, [1.0, 2.0, 3.0, 4.0, 5.0])
    """
    for name, v, lo in (("n", n, 1), ("d", d, 2)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < lo:
            raise ValueError(f"{name} must be an integer >= {lo}, got {v!r}")
    rng = as_generator(rng)
    quality = rng.normal(3.5, 0.6, d)
    sizes = np.minimum(1 + rng.poisson(2.0, n), d)
    keys, off = _draw_sets(n, d, sizes, np.arange(1, d + 1) ** -0.8, rng)
    r = np.clip(np.rint(quality[keys] + rng.normal(0, 1.0, keys.size)), 1, 5)
    return KVData(off, keys, (r - 3) / 2, d)
