"""The ``Dataset`` value object: a true histogram over a domain 0..d−1 plus what the values mean.

Every loader and generator in :mod:`ldpopt.datasets` returns one. The histogram is the ground truth
the experiments of Wang et al. (arXiv §4, App. C; NDSS 2020 §VI) and Jia & Gong (INFOCOM 2019 §IV-A)
perturb with a frequency oracle and compare against.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from .._validation import as_generator, check_counts, check_domain_size

__all__ = ["Dataset"]


def _readonly(a: np.ndarray) -> np.ndarray:
    a.setflags(write=False)
    return a


def _check_partition(part, d: int, label: str) -> dict[str, np.ndarray]:
    """Return ``part`` as {name: sorted read-only int64 index array}; indices must lie in [0, d)."""
    if not isinstance(part, Mapping):
        raise TypeError(f"{label} must be a mapping of group name -> index array, got {type(part).__name__}")
    out: dict[str, np.ndarray] = {}
    for key, idx in part.items():
        arr = np.asarray(idx)
        if arr.ndim != 1 or (arr.size and arr.dtype.kind not in "iu"):
            raise ValueError(f"{label}[{key!r}] must be a 1-D integer index array")
        arr = np.sort(arr.astype(np.int64))
        if arr.size and (arr[0] < 0 or arr[-1] >= d):
            raise ValueError(f"{label}[{key!r}] has indices outside [0, {d})")
        out[str(key)] = _readonly(arr)
    return out


@dataclass(frozen=True, eq=False)
class Dataset:
    """A true histogram over the domain ``0..d−1`` (immutable).

    Attributes
    ----------
    name : str
        Registry name (``"retail"``, ``"zipf"``, ...), see :func:`ldpopt.datasets.available`.
    counts : ndarray of int64, shape (d,)
        Number of users holding each value. Read-only. Zero counts are allowed (e.g. an item no
        transaction's random draw picked keeps its place in the domain).
    labels : ndarray, shape (d,)
        The original value names in domain order: item ids (int64) for transaction data, ``str``
        for emoji / names / cities and the AOL prefixes. Read-only.
    groups : dict[str, ndarray] or None
        The primary partition of the domain into named groups (emoji Unicode groups, US states,
        baby-name sex), each an index array; used for the fixed category queries of NDSS Fig. 8 and
        the IPUMS state/region case study (arXiv §4). ``None`` when the dataset has none.
    partitions : dict[str, dict[str, ndarray]]
        Every available partition by level name (e.g. ``{"group": ..., "subgroup": ..., "block":
        ...}`` for emoji, ``{"state": ..., "division": ..., "region": ...}`` for US cities). ``groups``
        is one of them.
    source : str
        Where the data came from and how it was preprocessed (file, mode, seed, citation).
    meta : dict
        Extra facts (e.g. number of transactions, item occurrences, generator parameters).

    ``n`` (number of users, the sum of counts) and ``d`` (domain size) are derived.

    Parameters
    ----------
    name : str
        Non-empty registry name.
    counts : array_like of int, shape (d,)
        Non-negative counts summing to at least 1.
    labels : array_like, shape (d,)
        Unique value names; ``str``/``bytes`` arrays are stored as object arrays.
    groups : mapping of str to array_like of int, optional
        Primary partition, each group an index array into ``0..d−1``.
    source : str, default ""
        Provenance text.
    partitions : mapping of str to mapping, optional
        Partitions by level name, each like ``groups``.
    meta : dict, optional
        Extra facts (copied).

    Raises
    ------
    TypeError
        ``name`` is not a non-empty string, or a partition is not a mapping.
    ValueError
        ``counts`` is not a 1-D array of non-negative integers summing to at least 1, ``labels``
        has the wrong length or repeats a name, or a group has indices outside ``[0, d)``.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt.datasets import Dataset
    >>> ds = Dataset("toy", counts=np.array([3, 1, 0]), labels=np.array(["a", "b", "c"]),
    ...              groups={"ab": [0, 1], "c": [2]})
    >>> ds
    Dataset(name='toy', n=4, d=3, groups=2 groups)
    >>> ds.group_counts()
    {'ab': 4, 'c': 0}
    """

    name: str
    counts: np.ndarray
    labels: np.ndarray
    groups: dict | None = None
    source: str = ""
    partitions: dict = field(default_factory=dict, repr=False)
    meta: dict = field(default_factory=dict, repr=False)

    def __post_init__(self):
        if not isinstance(self.name, str) or not self.name:
            raise TypeError("name must be a non-empty string")
        counts = check_counts(self.counts, "counts")
        d = check_domain_size(counts.shape[0], "d (length of counts)")
        if counts.sum() < 1:
            raise ValueError("counts must sum to at least 1 user, got 0")
        labels = np.asarray(self.labels)
        if labels.dtype.kind == "U" or labels.dtype.kind == "S":
            # object arrays keep str/bytes exactly (fixed-width numpy strings strip trailing NULs)
            labels = labels.astype(object)
        if labels.ndim != 1 or labels.shape[0] != d:
            raise ValueError(f"labels must be 1-D with one entry per value (length {d}), got shape {labels.shape}")
        n_unique = np.unique(labels).size if labels.dtype != object else len(set(labels.tolist()))
        if n_unique != d:
            raise ValueError(f"labels must be unique (one name per value), got {d - n_unique} repeated")
        parts = {}
        for level, part in dict(self.partitions).items():
            parts[str(level)] = _check_partition(part, d, f"partitions[{level!r}]")
        groups = None
        if self.groups is not None:
            groups = _check_partition(self.groups, d, "groups")
        object.__setattr__(self, "counts", _readonly(counts))
        object.__setattr__(self, "labels", _readonly(labels.copy()))
        object.__setattr__(self, "groups", groups)
        object.__setattr__(self, "partitions", parts)
        object.__setattr__(self, "meta", dict(self.meta))

    # -- derived quantities --------------------------------------------------------------------
    @property
    def n(self) -> int:
        """Number of users: the sum of ``counts``.

        Examples
        --------
        >>> from ldpopt.datasets import zipf
        >>> zipf(1000, 8, rng=0).n
        1000
        """
        return int(self.counts.sum())

    @property
    def d(self) -> int:
        """Domain size: the length of ``counts``.

        Examples
        --------
        >>> from ldpopt.datasets import zipf
        >>> zipf(1000, 8, rng=0).d
        8
        """
        return int(self.counts.shape[0])

    @property
    def frequencies(self) -> np.ndarray:
        """True frequencies :math:`f_v = c_v / n`, c = ``counts`` (float64, sums to 1).

        Examples
        --------
        >>> from ldpopt.datasets import zipf
        >>> zipf(1000, 4, rng=0).frequencies.round(3)
        array([0.578, 0.221, 0.114, 0.087])
        """
        return self.counts / float(self.n)

    def values(self, rng) -> np.ndarray:
        """Per-user values: each value v repeated counts_v times, in a random order.

        Vectorised (``np.repeat`` then ``Generator.permutation``); same ``rng`` seed, same order.

        Parameters
        ----------
        rng : int or numpy.random.Generator
            Seed or generator for the random order.

        Returns
        -------
        ndarray of int64, shape (n,)
            One value in ``[0, d)`` per user; ``np.bincount(values, minlength=d)`` equals ``counts``.

        Examples
        --------
        >>> import numpy as np
        >>> from ldpopt.datasets import zipf
        >>> ds = zipf(1000, 8, rng=0)
        >>> v = ds.values(rng=1)
        >>> v.shape, bool((np.bincount(v, minlength=8) == ds.counts).all())
        ((1000,), True)
        """
        gen = as_generator(rng)
        return gen.permutation(np.repeat(np.arange(self.d, dtype=np.int64), self.counts))

    def top(self, k: int) -> np.ndarray:
        """Indices of the ``k`` most frequent values (ties broken by lower index), most frequent first.

        Parameters
        ----------
        k : int
            How many values, ``1 <= k <= d``.

        Returns
        -------
        ndarray of int64, shape (k,)
            Value indices, most frequent first.

        Raises
        ------
        ValueError
            ``k`` is not an integer in ``[1, d]``.

        Examples
        --------
        >>> import numpy as np
        >>> from ldpopt.datasets import Dataset
        >>> Dataset("toy", counts=np.array([1, 5, 5, 2]), labels=np.arange(4)).top(3)
        array([1, 2, 3])
        """
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 1 <= k <= self.d:
            raise ValueError(f"k must be an integer in [1, {self.d}], got {k!r}")
        return np.lexsort((np.arange(self.d), -self.counts))[:k]

    def group_counts(self, level: str | None = None) -> dict[str, int]:
        """Total count per group of the primary partition (``level=None``) or of ``partitions[level]``.

        Parameters
        ----------
        level : str, optional
            A key of ``partitions``; ``None`` (default) uses ``groups``.

        Returns
        -------
        dict of str to int
            Group name to the sum of its values' counts.

        Raises
        ------
        ValueError
            ``level`` names no partition (or the dataset has no ``groups`` when ``level`` is None).

        Examples
        --------
        >>> from ldpopt.datasets import emoji
        >>> ds = emoji()
        >>> len(ds.group_counts()), sum(ds.group_counts("subgroup").values()) == ds.n
        (10, True)
        """
        part = self.groups if level is None else self.partitions.get(level)
        if part is None:
            have = sorted(self.partitions) or "none"
            raise ValueError(f"level must name a partition of dataset {self.name!r} (have: {have}), got {level!r}")
        return {g: int(self.counts[idx].sum()) for g, idx in part.items()}

    def __repr__(self) -> str:
        groups = "None" if self.groups is None else f"{len(self.groups)} groups"
        return f"Dataset(name={self.name!r}, n={self.n}, d={self.d}, groups={groups})"
