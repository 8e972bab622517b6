"""Reports of multi-freq-ldpy 0.2.5 clients (github.com/hharcolezi/multi-freq-ldpy,
``multi_freq_ldpy.pure_frequency_oracles``) as ldpopt partial aggregates.

Notes: docs/notes/reliability.md, "ldpopt.interop.multi_freq_ldpy"."""

from __future__ import annotations

import math

import numpy as np

from .. import oracles
from ..aggregate import Partial
from ._common import as_int_array, clip_renormalise, grr_partial, lh_support_counts, peer_g, ue_partial

__all__ = ["peer_mi", "read_grr", "read_lh", "read_ss", "read_ue", "sub_k"]


def read_grr(reports, epsilon: float, k: int) -> Partial:
    """GRR_Client reports (ints in [0, k)) as a GRR(ε, k) partial; ``finalize()`` gives the library's
    ``GRR_Aggregator`` estimate.

    Parameters
    ----------
    reports : iterable of int
        One sanitized value per user, in [0, k).
    epsilon : float
        ε of the library's client.
    k : int
        Domain size.

    Returns
    -------
    Partial

    Raises
    ------
    ValueError
        A report that is not an integer in [0, k).

    Examples
    --------
    >>> from ldpopt.interop.multi_freq_ldpy import read_grr
    >>> partial = read_grr([0, 2, 2, 1, 0, 2], epsilon=1.0, k=3)
    >>> partial, partial.counts
    (Partial(oracle='grr', epsilon=1, d=3, n=6), array([2, 1, 3]))
    """
    return grr_partial(reports, epsilon, k, "multi-freq-ldpy GRR")


def read_ue(reports, epsilon: float, k: int, optimal: bool = True) -> Partial:
    """UE_Client reports (0/1 vectors of length k) as an OUE(ε, k) partial (``optimal=False``: SUE).

    Parameters
    ----------
    reports : iterable of sequence of 0/1
        One bit vector of length k per user.
    epsilon : float
        ε of the library's client.
    k : int
        Domain size.
    optimal : bool, default True
        The client's ``optimal`` flag: OUE (True) or SUE.

    Returns
    -------
    Partial

    Raises
    ------
    ValueError
        A report that is not a 0/1 vector of length k.

    Examples
    --------
    >>> from ldpopt.interop.multi_freq_ldpy import read_ue
    >>> read_ue([[1, 0, 0], [0, 1, 1], [1, 0, 0]], epsilon=1.0, k=3).counts
    array([2, 1, 1])
    """
    return ue_partial(reports, epsilon, k, "oue" if optimal else "sue", "multi-freq-ldpy UE")


def read_lh(reports, epsilon: float, k: int, optimal: bool = True) -> Partial:
    r"""LH_Client reports ((value, seed) pairs, value in [0, g)) as an OLH(ε, k, g) partial, g as the
    library chooses it (``optimal``: :math:`\mathrm{round}(e^ε) + 1`, else 2); hashes as the library's ``xxh32``.

    Parameters
    ----------
    reports : iterable of (int, int)
        One (sanitized value, seed) pair per user.
    epsilon : float
        ε of the library's client.
    k : int
        Domain size.
    optimal : bool, default True
        The client's ``optimal`` flag (it sets g).

    Returns
    -------
    Partial
        An OLH partial with the library's g.

    Raises
    ------
    ValueError
        Reports not pairs of non-negative integers, or a value not below g.

    Examples
    --------
    >>> from ldpopt.interop.multi_freq_ldpy import read_lh
    >>> read_lh([(0, 11), (1, 12), (2, 13)], epsilon=1.0, k=4)
    Partial(oracle='olh', epsilon=1, d=4, g=4, n=3)
    """
    g = peer_g(epsilon, 2, optimal)
    orc = oracles.get("olh", epsilon, k, g=g)
    arr = as_int_array(reports, "multi-freq-ldpy LH", 2, 0, np.iinfo(np.int64).max, width=2)
    y, seeds = arr[:, 0], arr[:, 1]
    if y.size and y.max() >= g:
        raise ValueError(f"multi-freq-ldpy LH: sanitized values must lie in [0, g = {g}); found {y.max()}")
    return Partial.from_counts(orc, lh_support_counts(y, seeds, orc.d, g), y.shape[0])


def sub_k(epsilon: float, k: int) -> int:
    """The library's subset size ``int(max(1, np.rint(k / (np.exp(epsilon) + 1))))``.

    Parameters
    ----------
    epsilon : float
        ε of the library's client.
    k : int
        Domain size.

    Returns
    -------
    int

    Examples
    --------
    >>> from ldpopt.interop.multi_freq_ldpy import sub_k
    >>> sub_k(1.0, 8), sub_k(0.1, 8)
    (2, 4)
    """
    return int(max(1, np.rint(k / (math.exp(epsilon) + 1))))


def read_ss(reports, epsilon: float, k: int) -> Partial:
    """SS_Client reports (sub_k distinct values each) as an SS(ε, k, k=sub_k) partial.

    Parameters
    ----------
    reports : iterable of sequence of int
        One subset of :func:`sub_k` distinct values in [0, k) per user.
    epsilon : float
        ε of the library's client.
    k : int
        Domain size.

    Returns
    -------
    Partial

    Raises
    ------
    ValueError
        A subset of the wrong size, with repeated or out-of-range values.

    Examples
    --------
    >>> from ldpopt.interop.multi_freq_ldpy import read_ss
    >>> read_ss([[0, 1], [3, 4], [1, 7]], epsilon=1.0, k=8).counts
    array([1, 2, 0, 1, 1, 0, 0, 1])
    """
    orc = oracles.SS(epsilon, k, k=sub_k(epsilon, k))
    r = as_int_array(reports, "multi-freq-ldpy SS", 2, 0, orc.d, width=orc.k)
    if r.shape[0] == 0:
        return Partial.empty(orc)
    return Partial.from_counts(orc, orc.aggregate(r), r.shape[0])  # aggregate checks distinct entries


def peer_mi(partial: Partial) -> np.ndarray:
    """The library's ``*_Aggregator_MI`` output for the same reports: max(f̃, 0), renormalised to sum
    1 (left at 0 when every entry is clipped).

    Parameters
    ----------
    partial : Partial
        A partial from one of the readers.

    Returns
    -------
    ndarray
        The library's MI estimate.

    Raises
    ------
    ValueError
        The partial is empty.

    Examples
    --------
    >>> from ldpopt.interop.multi_freq_ldpy import peer_mi, read_grr
    >>> peer_mi(read_grr([0, 2, 2, 1, 0, 2], epsilon=1.0, k=3)).round(3)
    array([0.296, 0.   , 0.704])
    """
    return clip_renormalise(partial.finalize().f_tilde)
