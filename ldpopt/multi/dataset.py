"""Multi-attribute data: n users × k categorical attributes, each with its own domain size.

Stored compressed, as the distinct tuples and how many users hold each (``tuples`` (T, k),
``counts`` (T,)): the fast paths of :mod:`.split`, :mod:`.sampled` and :mod:`.fake_data` draw per
distinct tuple, never per user, and a table of 10⁶ users over a few binary attributes has at most
2^k rows. :meth:`MultiDataset.values` expands it to one row per user for the real client paths
(users in the order of ``tuples``; their order does not change any count's distribution).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .._validation import check_domain_size

__all__ = ["MultiDataset", "check_attributes"]


def _readonly(a: np.ndarray) -> np.ndarray:
    a.setflags(write=False)
    return a


def check_attributes(attrs, k: int, name: str = "attributes") -> tuple[int, ...]:
    """``attrs`` (integers) as a sorted tuple of distinct attribute indices in [0, k), at least one."""
    arr = np.atleast_1d(np.asarray(attrs))
    if arr.ndim != 1 or arr.size == 0 or arr.dtype.kind not in "iu":
        raise ValueError(f"{name} must be a non-empty list of attribute indices, got {attrs!r}")
    if np.any((arr < 0) | (arr >= k)):
        raise ValueError(f"{name} must lie in [0, {k}), got {attrs!r}")
    if np.unique(arr).size != arr.size:
        raise ValueError(f"{name} must not repeat an attribute, got {attrs!r}")
    return tuple(sorted(int(a) for a in arr))


@dataclass(frozen=True, eq=False)
class MultiDataset:
    """n users × k attributes (immutable). Build with :meth:`from_values` or :meth:`from_tuples`.

    Attributes
    ----------
    tuples : ndarray (T, k) int64
        The distinct tuples, in lexicographic order; read-only.
    counts : ndarray (T,) int64
        Users holding each tuple (all ≥ 1); read-only.
    domains : tuple of int
        Domain size of each attribute (each ≥ 2); attribute j takes values 0..domains[j]−1.
    names : tuple of str
        Attribute names (default ``"a0"``, ``"a1"``, …).
    source : str
        Where the data come from (provenance).

    Parameters
    ----------
    tuples : array_like of int, shape (T, k)
        Distinct tuples, each entry in its attribute's domain.
    counts : array_like of int, shape (T,)
        Users per tuple, each >= 1.
    domains : sequence of int
        Domain size of each attribute, each >= 2.
    names : sequence of str, optional
        k distinct attribute names.
    source : str, default ""
        Provenance.
    meta : dict, optional
        Extra facts.

    Raises
    ------
    ValueError
        A bad domain size, tuples of the wrong shape or outside their domains, counts below 1, or
        names not k distinct strings.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt.multi import MultiDataset
    >>> data = MultiDataset(np.array([[0, 1], [1, 1]]), np.array([2, 1]), (2, 2))
    >>> data, data.names
    (MultiDataset(n=3, k=2, domains=(2, 2), distinct=2), ('a0', 'a1'))
    """

    tuples: np.ndarray
    counts: np.ndarray
    domains: tuple
    names: tuple = ()
    source: str = ""
    meta: dict = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        doms = tuple(check_domain_size(d, f"domains[{j}]") for j, d in enumerate(self.domains))
        if not doms:
            raise ValueError("domains must list at least one attribute")
        t = np.asarray(self.tuples)
        if t.ndim != 2 or t.shape[1] != len(doms) or t.shape[0] == 0 or t.dtype.kind not in "iu":
            raise ValueError(f"tuples must be a non-empty integer array of shape (T, {len(doms)}), got "
                             f"{t.dtype} {t.shape}")
        t = t.astype(np.int64)
        bad = (t < 0) | (t >= np.asarray(doms)[None, :])
        if bad.any():
            r, j = (int(x[0]) for x in np.nonzero(bad))
            raise ValueError(f"tuples[{r}, {j}] = {t[r, j]} is outside attribute {j}'s domain [0, {doms[j]})")
        c = np.asarray(self.counts)
        if c.shape != (t.shape[0],) or c.dtype.kind not in "iu" or np.any(c < 1):
            raise ValueError(f"counts must be {t.shape[0]} integers >= 1 (one per tuple)")
        names = tuple(self.names) or tuple(f"a{j}" for j in range(len(doms)))
        if len(names) != len(doms) or len(set(names)) != len(names):
            raise ValueError(f"names must be {len(doms)} distinct names, got {self.names!r}")
        object.__setattr__(self, "domains", doms)
        object.__setattr__(self, "names", tuple(str(x) for x in names))
        object.__setattr__(self, "tuples", _readonly(t))
        object.__setattr__(self, "counts", _readonly(c.astype(np.int64)))
        object.__setattr__(self, "meta", dict(self.meta))

    # -- constructors -------------------------------------------------------------------------
    @classmethod
    def from_values(cls, values, domains=None, **kw) -> MultiDataset:
        """From one row per user (an (n, k) integer array); ``domains`` default max + 1 per column
        (at least 2).

        Parameters
        ----------
        values : array_like of int, shape (n, k)
            One row per user.
        domains : sequence of int, optional
            Domain sizes (default: max + 1 per column, at least 2).
        **kw
            ``names``, ``source``, ``meta`` of the dataset.

        Returns
        -------
        MultiDataset

        Raises
        ------
        ValueError
            ``values`` not a non-empty 2-D integer array, or values outside ``domains``.

        Examples
        --------
        >>> import numpy as np
        >>> from ldpopt.multi import MultiDataset
        >>> data = MultiDataset.from_values(np.array([[0, 1], [1, 1], [0, 1]]))
        >>> data.tuples.tolist(), data.counts.tolist()
        ([[0, 1], [1, 1]], [2, 1])
        """
        v = np.asarray(values)
        if v.ndim != 2 or v.shape[0] == 0 or v.dtype.kind not in "iu":
            raise ValueError(f"values must be a non-empty 2-D integer array (users × attributes), got "
                             f"{v.dtype} {v.shape}")
        if domains is None:
            domains = tuple(max(2, int(m) + 1) for m in v.max(axis=0))
        t, c = np.unique(v.astype(np.int64), axis=0, return_counts=True)
        return cls(t, c, tuple(domains), **kw)

    @classmethod
    def from_tuples(cls, tuples, counts, domains, **kw) -> MultiDataset:
        """From tuples and their user counts (repeated tuples are merged, zero counts dropped).

        Parameters
        ----------
        tuples : array_like of int, shape (T, k)
            Tuples, repeats allowed.
        counts : array_like of int, shape (T,)
            Users per row, >= 0, not all 0.
        domains : sequence of int
            Domain sizes.
        **kw
            ``names``, ``source``, ``meta`` of the dataset.

        Returns
        -------
        MultiDataset

        Raises
        ------
        ValueError
            Negative or all-zero counts, shapes that do not match, or tuples outside ``domains``.

        Examples
        --------
        >>> from ldpopt.multi import MultiDataset
        >>> MultiDataset.from_tuples([[0, 1], [0, 1], [1, 0]], [2, 1, 0], (2, 2)).counts
        array([3])
        """
        t = np.asarray(tuples)
        c = np.asarray(counts)
        if c.ndim != 1 or c.dtype.kind not in "iu" or np.any(c < 0):
            raise ValueError("counts must be a 1-D array of non-negative integers")
        if t.ndim != 2 or t.shape[0] != c.shape[0]:
            raise ValueError(f"tuples must have one row per count ({c.shape[0]}), got shape {t.shape}")
        keep = c > 0
        if not keep.any():
            raise ValueError("counts must describe at least one user")
        u, inv = np.unique(t[keep].astype(np.int64), axis=0, return_inverse=True)
        return cls(u, np.bincount(inv.ravel(), weights=c[keep]).astype(np.int64), tuple(domains), **kw)

    # -- what it holds ------------------------------------------------------------------------
    @property
    def n(self) -> int:
        """Number of users: the sum of ``counts``.

        Examples
        --------
        >>> from ldpopt import multi
        >>> multi.chain_network(5000, 3, rng=0).n
        5000
        """
        return int(self.counts.sum())

    @property
    def k(self) -> int:
        """Number of attributes.

        Examples
        --------
        >>> from ldpopt import multi
        >>> multi.chain_network(5000, 3, rng=0).k
        3
        """
        return len(self.domains)

    def values(self) -> np.ndarray:
        """One row per user, (n, k) int64, users grouped by tuple in ``tuples`` order.

        Returns
        -------
        ndarray of int64, shape (n, k)

        Examples
        --------
        >>> from ldpopt import multi
        >>> multi.chain_network(5000, 3, rng=0).values().shape
        (5000, 3)
        """
        return np.repeat(self.tuples, self.counts, axis=0)

    def cells(self, attrs, tuples=None) -> np.ndarray:
        """Cell index of each tuple (default ``self.tuples``) in the marginal on ``attrs``: the
        row-major (C order) index over the attributes in increasing order, as
        ``numpy.ravel_multi_index``.

        Parameters
        ----------
        attrs : sequence of int
            Distinct attribute indices.
        tuples : ndarray of int, shape (T, k), optional
            Tuples (default ``self.tuples``).

        Returns
        -------
        ndarray of int
            One cell index per tuple.

        Raises
        ------
        ValueError
            ``attrs`` empty, repeated or out of range.

        Examples
        --------
        >>> import numpy as np
        >>> from ldpopt.multi import MultiDataset
        >>> data = MultiDataset.from_values(np.array([[0, 1, 1], [1, 0, 1]]))
        >>> data.cells([0, 2])  # (0, 1) -> 1, (1, 1) -> 3
        array([1, 3])
        """
        a = check_attributes(attrs, self.k)
        t = self.tuples if tuples is None else tuples
        return np.ravel_multi_index(tuple(t[:, j] for j in a), tuple(self.domains[j] for j in a))

    def marginal(self, attrs, normalize: bool = True) -> np.ndarray:
        """The true marginal on ``attrs`` (cells as :meth:`cells`): frequencies, or user counts when
        ``normalize=False``.

        Parameters
        ----------
        attrs : sequence of int
            Distinct attribute indices.
        normalize : bool, default True
            Frequencies (True) or user counts (False).

        Returns
        -------
        ndarray, shape (product of the attributes' domain sizes,)

        Raises
        ------
        ValueError
            ``attrs`` empty, repeated or out of range.

        Examples
        --------
        >>> import numpy as np
        >>> from ldpopt import multi
        >>> data = multi.chain_network(5000, 3, rng=0)
        >>> data.marginal([0, 1], normalize=False)
        array([1367,  354,  639, 2640])
        """
        a = check_attributes(attrs, self.k)
        size = int(np.prod([self.domains[j] for j in a]))
        h = np.bincount(self.cells(a), weights=self.counts, minlength=size)
        return h / self.n if normalize else h.astype(np.int64)

    def __repr__(self) -> str:
        return f"MultiDataset(n={self.n}, k={self.k}, domains={self.domains}, distinct={self.tuples.shape[0]})"
