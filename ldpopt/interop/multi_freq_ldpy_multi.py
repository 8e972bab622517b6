"""Multi-attribute reports of multi-freq-ldpy 0.2.5 (``multi_freq_ldpy.mdim_freq_est``: SPL, SMP,
RS+FD) in the report formats of :mod:`ldpopt.multi`'s protocols.

Notes: docs/notes/reliability.md, "ldpopt.interop.multi_freq_ldpy_multi"."""

from __future__ import annotations

import numpy as np

from ._common import as_bit_matrix, as_int_array, clip_renormalise

__all__ = ["INNER", "peer_mi_marginals", "read_rsfd", "read_smp", "read_spl"]

INNER = ("grr", "oue")


def _check(domains, inner: str) -> tuple[int, ...]:
    if inner not in INNER:
        raise ValueError(f"inner must be one of {INNER}, got {inner!r}")
    doms = tuple(int(d) for d in domains)
    if len(doms) < 1 or any(d < 2 for d in doms):
        raise ValueError(f"domains must list each attribute's domain size (>= 2), got {domains!r}")
    return doms


def _column(values, d: int, inner: str, name: str, packed: bool) -> np.ndarray:
    """One attribute's reports of all users: GRR ints (n,), or OUE bits (n, d) — packed with
    ``np.packbits`` (ldpopt's OUE report) or as bool."""
    if inner == "grr":
        return as_int_array(values, name, 1, 0, d)
    bits = as_bit_matrix(values, name, d) if len(values) else np.zeros((0, d), dtype=np.uint8)
    return np.packbits(bits, axis=1) if packed else bits.astype(bool)


def _per_attribute(reports, doms, what: str) -> list:
    rows = list(reports)
    if not rows:
        raise ValueError(f"{what}: reports must hold at least one user")
    if any(len(r) != len(doms) for r in rows):
        raise ValueError(f"{what}: every report must hold {len(doms)} entries (one per attribute)")
    return [[r[j] for r in rows] for j in range(len(doms))]


def read_spl(reports, domains, inner: str = "grr") -> tuple:
    """``SPL_GRR_Client`` / ``SPL_UE_Client`` reports → the reports ``multi.spl(domains, ε, inner)``
    aggregates (one array per attribute).

    Parameters
    ----------
    reports : iterable of sequence
        One report per user: one sanitized value (GRR) or bit vector (OUE) per attribute.
    domains : sequence of int
        Each attribute's domain size (>= 2).
    inner : {"grr", "oue"}, default "grr"
        The client's inner protocol.

    Returns
    -------
    tuple of ndarray
        One report array per attribute (OUE bits packed).

    Raises
    ------
    ValueError
        An unknown ``inner``, bad domains, no report, or a report of the wrong form.

    Examples
    --------
    >>> from ldpopt import multi
    >>> from ldpopt.interop.multi_freq_ldpy_multi import read_spl
    >>> reports = read_spl([(0, 1), (1, 2), (0, 0)], domains=(2, 3))
    >>> reports
    (array([0, 1, 0]), array([1, 2, 0]))
    >>> multi.spl((2, 3), 1.0).aggregate(reports).n
    3
    """
    doms = _check(domains, inner)
    cols = _per_attribute(reports, doms, "multi-freq-ldpy SPL")
    return tuple(_column(c, d, inner, f"multi-freq-ldpy SPL attribute {j}", True)
                 for j, (c, d) in enumerate(zip(cols, doms)))


def read_smp(reports, domains, inner: str = "grr") -> tuple:
    """``SMP_GRR_Client`` / ``SMP_UE_Client`` reports ``(j, report)`` → the ``(choice, per-attribute
    reports)`` that ``multi.smp(domains, ε, inner)`` aggregates (users in their order).

    Parameters
    ----------
    reports : iterable of (int, report)
        One (attribute, sanitized report) pair per user.
    domains : sequence of int
        Each attribute's domain size (>= 2).
    inner : {"grr", "oue"}, default "grr"
        The client's inner protocol.

    Returns
    -------
    choice : ndarray of int
        Each user's attribute.
    per_attribute : tuple
        Each attribute's reports (None where no user chose it).

    Raises
    ------
    ValueError
        An unknown ``inner``, bad domains, no report, or a report of the wrong form.

    Examples
    --------
    >>> from ldpopt.interop.multi_freq_ldpy_multi import read_smp
    >>> read_smp([(0, 1), (1, 2), (1, 0), (0, 0)], domains=(2, 3))
    (array([0, 1, 1, 0]), (array([1, 0]), array([2, 0])))
    """
    doms = _check(domains, inner)
    rows = list(reports)
    if not rows:
        raise ValueError("multi-freq-ldpy SMP: reports must hold at least one user")
    if any(len(r) != 2 for r in rows):
        raise ValueError("multi-freq-ldpy SMP: every report must be a pair (attribute, sanitized value)")
    choice = as_int_array([r[0] for r in rows], "multi-freq-ldpy SMP attribute", 1, 0, len(doms))
    per = []
    for j, d in enumerate(doms):
        mine = [rows[u][1] for u in np.flatnonzero(choice == j)]
        per.append(_column(mine, d, inner, f"multi-freq-ldpy SMP attribute {j}", True) if mine else None)
    return choice, tuple(per)


def read_rsfd(reports, domains, inner: str = "grr"):
    """``RSpFD_GRR_Client`` / ``RSpFD_UE_zero_Client`` reports → what ``multi.rsfd(domains, ε, inner)``
    aggregates: an (n, k) int array (GRR) or one bool :math:`(n, d_j)` array per attribute (OUE-z).

    Parameters
    ----------
    reports : iterable of sequence
        One report per user: a value (GRR) or bit vector (OUE-z) for every attribute.
    domains : sequence of int
        Each attribute's domain size (>= 2).
    inner : {"grr", "oue"}, default "grr"
        The client's inner protocol.

    Returns
    -------
    ndarray or tuple of ndarray

    Raises
    ------
    ValueError
        An unknown ``inner``, bad domains, no report, or a report of the wrong form.

    Examples
    --------
    >>> from ldpopt.interop.multi_freq_ldpy_multi import read_rsfd
    >>> read_rsfd([(0, 1), (1, 2), (0, 0)], domains=(2, 3)).tolist()
    [[0, 1], [1, 2], [0, 0]]
    >>> [bits.shape for bits in read_rsfd([([1, 0], [0, 0, 1]), ([0, 1], [1, 0, 0])], (2, 3), inner="oue")]
    [(2, 2), (2, 3)]
    """
    doms = _check(domains, inner)
    cols = _per_attribute(reports, doms, "multi-freq-ldpy RS+FD")
    got = [_column(c, d, inner, f"multi-freq-ldpy RS+FD attribute {j}", False)
           for j, (c, d) in enumerate(zip(cols, doms))]
    return np.stack(got, axis=1) if inner == "grr" else tuple(got)


def peer_mi_marginals(f_tildes) -> list[np.ndarray]:
    """The library's ``*_Aggregator_MI`` output from the unbiased estimates (one f̃ per attribute):
    each max(f̃, 0) renormalised to sum 1 (left at 0 when every entry is clipped).

    Parameters
    ----------
    f_tildes : iterable of array_like
        One unbiased estimate per attribute.

    Returns
    -------
    list of ndarray

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt.interop.multi_freq_ldpy_multi import peer_mi_marginals
    >>> [f.round(3) for f in peer_mi_marginals([np.array([0.7, 0.4, -0.1]), np.array([-0.2, 1.2])])]
    [array([0.636, 0.364, 0.   ]), array([0., 1.])]
    """
    return [clip_renormalise(f) for f in f_tildes]
