"""Reports of OpenDP 0.16 randomized response measurements as ldpopt partial aggregates.

Notes: docs/notes/reliability.md, "ldpopt.interop.opendp"."""

from __future__ import annotations

import math

import numpy as np

from .. import oracles
from ..aggregate import Partial

__all__ = ["epsilon_bitvec", "epsilon_categorical", "read_bitvec", "read_categorical"]


def epsilon_categorical(prob: float, t: int) -> float:
    """OpenDP's privacy map for categorical RR: ln(prob·(t − 1)/(1 − prob)).

    Parameters
    ----------
    prob : float
        The probability of releasing the true category, in (1/t, 1).
    t : int
        Number of categories.

    Returns
    -------
    float
        ε of ``make_randomized_response(categories, prob)``.

    Raises
    ------
    ValueError
        ``prob`` outside (1/t, 1).

    Examples
    --------
    >>> from ldpopt.interop.opendp import epsilon_categorical
    >>> round(epsilon_categorical(0.75, 3), 4)  # ln(0.75 * 2 / 0.25) = ln 6
    1.7918
    """
    if not (1.0 / t < prob < 1.0):
        raise ValueError(f"prob must lie in (1/t, 1) = ({1 / t:g}, 1) for t = {t} categories, got {prob!r}")
    return math.log(prob * (t - 1) / (1.0 - prob))


def epsilon_bitvec(f: float) -> float:
    """OpenDP's privacy map for bit-vector RR with max_weight 1: 2·ln((2 − f)/f).

    Parameters
    ----------
    f : float
        The flip parameter (each bit XORed with Bernoulli(f/2)), in (0, 1).

    Returns
    -------
    float
        ε of the one-hot bit-vector mechanism (basic RAPPOR = SUE).

    Raises
    ------
    ValueError
        ``f`` outside (0, 1).

    Examples
    --------
    >>> from ldpopt.interop.opendp import epsilon_bitvec
    >>> round(epsilon_bitvec(0.5), 4)  # 2 ln 3
    2.1972
    """
    if not (0.0 < f < 1.0):
        raise ValueError(f"f must lie in (0, 1) (f = 1 gives ε = 0, no information), got {f!r}")
    return 2.0 * math.log((2.0 - f) / f)


def read_categorical(reports, categories, prob: float) -> Partial:
    """Released categories → GRR partial over ``categories`` (their order defines the values).

    Parameters
    ----------
    reports : iterable
        The released categories (any hashable values among ``categories``).
    categories : sequence
        The mechanism's categories, at least 2 distinct; value i is ``categories[i]``.
    prob : float
        The mechanism's ``prob``.

    Returns
    -------
    Partial
        A GRR partial with ε = :func:`epsilon_categorical` (``prob``, t).

    Raises
    ------
    ValueError
        Fewer than 2 or repeated categories, a bad ``prob``, or a report not among the categories.

    Examples
    --------
    >>> from ldpopt.interop.opendp import read_categorical
    >>> partial = read_categorical(["a", "b", "a", "c", "a"], ["a", "b", "c"], prob=0.75)
    >>> partial.counts, partial.n
    (array([3, 1, 1]), 5)
    """
    cats = list(categories)
    if len(set(cats)) != len(cats) or len(cats) < 2:
        raise ValueError("categories must hold at least 2 distinct values")
    orc = oracles.get("grr", epsilon_categorical(prob, len(cats)), len(cats))
    index = {c: i for i, c in enumerate(cats)}
    try:
        idx = np.fromiter((index[r] for r in reports), dtype=np.int64)
    except KeyError as exc:
        raise ValueError(f"reports: {exc.args[0]!r} is not one of the categories") from None
    return Partial.from_counts(orc, np.bincount(idx, minlength=orc.d), idx.shape[0])


def read_bitvec(reports, d: int, f: float) -> Partial:
    """Released packed bit vectors (``bytes`` of ⌈d/8⌉ bytes each, or a (n, ⌈d/8⌉) uint8 array) →
    SUE partial with ε = 2·ln((2 − f)/f). Padding bits beyond d are ignored (OpenDP flips them too).

    Parameters
    ----------
    reports : iterable of bytes or ndarray of uint8
        One packed bit vector per report (``np.packbits`` order).
    d : int
        Number of bits (values).
    f : float
        The mechanism's flip parameter.

    Returns
    -------
    Partial
        A SUE partial (empty when there is no report).

    Raises
    ------
    ValueError
        A report of the wrong length or type, or a bad ``f``.

    Examples
    --------
    >>> from ldpopt.interop.opendp import read_bitvec
    >>> partial = read_bitvec([bytes([0b10000000]), bytes([0b01000000])], d=3, f=0.5)
    >>> partial, partial.counts
    (Partial(oracle='sue', epsilon=2.19722, d=3, n=2), array([1, 1, 0]))
    """
    orc = oracles.get("sue", epsilon_bitvec(f), d)
    nb = (orc.d + 7) // 8
    if isinstance(reports, np.ndarray):
        arr = reports
    else:
        reps = list(reports)
        bad = next((i for i, r in enumerate(reps) if not isinstance(r, (bytes, bytearray)) or len(r) != nb), None)
        if bad is not None:
            raise ValueError(f"reports: entry {bad} is not {nb} bytes (d = {orc.d} bits, np.packbits order)")
        arr = np.frombuffer(b"".join(reps), dtype=np.uint8).reshape(len(reps), nb)
    if arr.dtype != np.uint8 or arr.ndim != 2 or arr.shape[1] != nb:
        raise ValueError(f"reports must be a (n, {nb}) uint8 array of packed bits, got {arr.dtype} {arr.shape}")
    if arr.shape[0] == 0:
        return Partial.empty(orc)
    return Partial.from_counts(orc, orc.aggregate(np.ascontiguousarray(arr)), arr.shape[0])
