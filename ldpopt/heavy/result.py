"""What a heavy-hitter protocol returns, and how it is scored.

:class:`HeavyHitters` holds the items found (bit codes, largest estimate first), their estimated
frequencies, and every prefix level the server went through (:class:`Level`: the prefix length, the
candidates, the round's :class:`~ldpopt.Estimate` over them and the ones kept) — the levels are what
:mod:`.consistency` makes consistent as a tree.

Notes: docs/notes/sketches.md, "ldpopt.heavy.result"."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

import numpy as np

from ..estimate import Estimate
from .rounds import top_indices
from .strings import decode

__all__ = ["HeavyHitters", "Level", "frequency_mse", "precision_recall_f1", "true_top"]


@dataclass(frozen=True)
class Level:
    """One prefix level: ``bits`` (prefix length), ``candidates`` (sorted int64 prefixes), ``estimate``
    (the round's Estimate over the candidates, then "other" when ``full`` is False), ``kept`` (indices
    into ``candidates`` of the prefixes extended at the next level; all final candidates at the last).

    Parameters
    ----------
    bits : int
        The prefix length.
    candidates : ndarray of int64
        The level's candidate prefixes, sorted.
    estimate : Estimate
        The round's estimate over the candidates (then "other" when ``full`` is False).
    full : bool
        Whether the candidates are every prefix of that length.
    kept : ndarray of int
        Indices into ``candidates`` kept.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt.heavy import encode, pem
    >>> codes = encode(["hi", "ok", "yo", "no", "ab", "zz"], nbytes=2)
    >>> counts = np.array([4000, 3000, 1000, 800, 700, 500])
    >>> level = pem(codes, counts, total_bits=16, epsilon=4.0, k=2, rng=0).levels[0]
    >>> level.bits, level.candidates.size, level.kept.size
    (7, 128, 2)
    """

    bits: int
    candidates: np.ndarray
    estimate: Estimate
    full: bool
    kept: np.ndarray

    @property
    def f_tilde(self) -> np.ndarray:
        """The round's estimates of the candidates (the "other" entry left out).

        Examples
        --------
        >>> import numpy as np
        >>> from ldpopt.heavy import encode, pem
        >>> codes = encode(["hi", "ok", "yo", "no", "ab", "zz"], nbytes=2)
        >>> counts = np.array([4000, 3000, 1000, 800, 700, 500])
        >>> pem(codes, counts, total_bits=16, epsilon=4.0, k=2, rng=0).levels[0].f_tilde.shape
        (128,)
        """
        return self.estimate.f_tilde[: self.candidates.size]

    @property
    def sigma2(self) -> float:
        """The round's noise variance per candidate (arXiv Eq. 7 of its oracle and group size).

        Examples
        --------
        >>> import numpy as np
        >>> from ldpopt.heavy import encode, pem
        >>> codes = encode(["hi", "ok", "yo", "no", "ab", "zz"], nbytes=2)
        >>> counts = np.array([4000, 3000, 1000, 800, 700, 500])
        >>> level = pem(codes, counts, total_bits=16, epsilon=4.0, k=2, rng=0).levels[0]
        >>> level.sigma2 == float(level.estimate.sigma2)
        True
        """
        return float(self.estimate.sigma2)


@dataclass(frozen=True)
class HeavyHitters:
    """Items found (``items``: int64 codes of ``total_bits`` bits, largest estimate first), their
    estimated ``frequencies``, the prefix ``levels``, the ``protocol`` and its parameters.

    Returned by :func:`~ldpopt.heavy.pem`, :func:`~ldpopt.heavy.treehist` and :func:`~ldpopt.heavy.sfp`.

    Parameters
    ----------
    protocol : str
        ``"pem"``, ``"treehist"`` or ``"sfp"``.
    items : ndarray of int64
        Codes found, largest estimate first.
    frequencies : ndarray of float64
        Their estimated frequencies.
    total_bits : int
        The codes' length in bits.
    epsilon : float
        Each user's ε.
    levels : tuple of Level
        The rounds the server went through.
    params : dict
        The protocol's parameters.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt.heavy import encode, pem
    >>> codes = encode(["hi", "ok", "yo", "no", "ab", "zz"], nbytes=2)
    >>> counts = np.array([4000, 3000, 1000, 800, 700, 500])
    >>> found = pem(codes, counts, total_bits=16, epsilon=4.0, k=2, rng=0)
    >>> found.frequencies.round(2)
    array([0.41, 0.3 ])
    """

    protocol: str
    items: np.ndarray
    frequencies: np.ndarray
    total_bits: int
    epsilon: float
    levels: tuple = ()
    params: dict = field(default_factory=dict)

    def strings(self) -> list[str]:
        """The items as strings (``total_bits`` must be a whole number of bytes).

        Returns
        -------
        list of str
            :func:`~ldpopt.heavy.decode` of the items.

        Raises
        ------
        ValueError
            ``total_bits`` is not a multiple of 8.

        Examples
        --------
        >>> import numpy as np
        >>> from ldpopt.heavy import encode, pem
        >>> codes = encode(["hi", "ok", "yo", "no", "ab", "zz"], nbytes=2)
        >>> counts = np.array([4000, 3000, 1000, 800, 700, 500])
        >>> pem(codes, counts, total_bits=16, epsilon=4.0, k=2, rng=0).strings()
        ['hi', 'ok']
        """
        if self.total_bits % 8:
            raise ValueError(f"total_bits = {self.total_bits} is not a whole number of bytes")
        return decode(self.items, self.total_bits // 8)

    def with_frequencies(self, items, frequencies, **params) -> HeavyHitters:
        """A copy with other items/frequencies (re-sorted, largest first) and more params.

        Parameters
        ----------
        items : array_like of int
            Codes.
        frequencies : array_like of float
            Their frequencies (same length).
        **params
            Added to ``params``.

        Returns
        -------
        HeavyHitters

        Examples
        --------
        >>> import numpy as np
        >>> from ldpopt.heavy import encode, pem
        >>> codes = encode(["hi", "ok", "yo", "no", "ab", "zz"], nbytes=2)
        >>> counts = np.array([4000, 3000, 1000, 800, 700, 500])
        >>> found = pem(codes, counts, total_bits=16, epsilon=4.0, k=2, rng=0)
        >>> found.with_frequencies(found.items, [0.1, 0.5], note="swapped").strings()
        ['ok', 'hi']
        """
        fr = np.asarray(frequencies, dtype=np.float64)
        order = top_indices(fr, fr.size)
        return replace(self, items=np.asarray(items, dtype=np.int64)[order], frequencies=fr[order],
                       params={**self.params, **params})

    def __repr__(self) -> str:
        return (f"HeavyHitters(protocol={self.protocol!r}, found={self.items.size}, total_bits={self.total_bits}, "
                f"epsilon={self.epsilon:g}, levels={len(self.levels)})")


def true_top(codes, counts, k: int) -> np.ndarray:
    """The ``k`` most frequent codes (ties: the smaller code first).

    Parameters
    ----------
    codes : array_like of int
        Distinct codes.
    counts : array_like of int
        Users per code.
    k : int
        How many.

    Returns
    -------
    ndarray of int64
        At most ``k`` codes, most frequent first.

    Examples
    --------
    >>> from ldpopt.heavy import true_top
    >>> true_top([10, 11, 12], [5, 9, 9], 2)
    array([11, 12])
    """
    c = np.asarray(codes, dtype=np.int64)
    w = np.asarray(counts, dtype=np.int64)
    order = np.lexsort((c, -w))
    return c[order[: int(k)]]


def precision_recall_f1(found, truth) -> tuple[float, float, float]:
    """(precision, recall, F1) of the set ``found`` against the set ``truth`` (module notes).

    PEM's measure (Wang, Li & Jha, IEEE TDSC 2019, §VI-A); an empty ``found`` has precision NaN
    and F1 0.

    Parameters
    ----------
    found : array_like of int
        Codes found.
    truth : array_like of int
        The true set (e.g. :func:`true_top`), non-empty.

    Returns
    -------
    tuple of float
        (precision, recall, F1).

    Raises
    ------
    ValueError
        ``truth`` is empty.

    Examples
    --------
    >>> from ldpopt.heavy import precision_recall_f1
    >>> precision_recall_f1([1, 2, 3], [2, 3, 4, 5])
    (0.6666666666666666, 0.5, 0.5714285714285715)
    """
    f = np.unique(np.asarray(found, dtype=np.int64))
    t = np.unique(np.asarray(truth, dtype=np.int64))
    if t.size == 0:
        raise ValueError("truth must hold at least one item")
    tp = np.intersect1d(f, t).size
    prec = tp / f.size if f.size else float("nan")
    rec = tp / t.size
    if np.isnan(prec):
        return prec, rec, 0.0
    return prec, rec, (2 * prec * rec / (prec + rec) if prec + rec else 0.0)


def frequency_mse(result: HeavyHitters, codes, counts) -> float:
    """Mean squared error of the found items' estimated frequencies against their true ones.

    A found code not in ``codes`` has true frequency 0; NaN when nothing was found.

    Parameters
    ----------
    result : HeavyHitters
        What a protocol found.
    codes, counts : array_like of int
        The population's histogram.

    Returns
    -------
    float

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt.heavy import encode, frequency_mse, pem
    >>> codes = encode(["hi", "ok", "yo", "no", "ab", "zz"], nbytes=2)
    >>> counts = np.array([4000, 3000, 1000, 800, 700, 500])
    >>> found = pem(codes, counts, total_bits=16, epsilon=4.0, k=2, rng=0)
    >>> bool(frequency_mse(found, codes, counts) < 1e-3)
    True
    """
    c = np.asarray(codes, dtype=np.int64)
    w = np.asarray(counts, dtype=np.float64)
    order = np.argsort(c)
    pos = np.searchsorted(c[order], result.items)
    pos = np.minimum(pos, c.size - 1)
    hit = c[order][pos] == result.items
    true = np.where(hit, w[order][pos], 0.0) / w.sum()
    return float(np.mean((result.frequencies - true) ** 2)) if result.items.size else float("nan")
