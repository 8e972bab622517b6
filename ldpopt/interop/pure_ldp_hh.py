"""Reports of pure-ldp 1.2.0's PEM heavy-hitter client (``pure_ldp.heavy_hitters.prefix_extending
.PEMClient``) read by ldpopt, and the server's search run on them (Wang, Li & Jha, IEEE TDSC 2019, §IV;
:mod:`ldpopt.heavy.pem`).

Notes: docs/notes/reliability.md, "ldpopt.interop.pure_ldp_hh"."""

from __future__ import annotations

import math

import numpy as np

from .. import oracles
from ..heavy.pem import extend
from ..heavy.result import HeavyHitters, Level
from ..heavy.rounds import top_indices
from ._common import lh_support_counts, peer_g

__all__ = ["parse_pem_reports", "peer_frequencies", "read_pem"]


def parse_pem_reports(reports, groups: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(y, seed, group) int64 arrays of ``PEMClient.privatise`` outputs ``((y, seed), group)``
    (a list as returned, or an (n, 3) integer array).

    Parameters
    ----------
    reports : list or ndarray
        The clients' outputs ``((y, seed), group)``, or an (n, 3) integer array of (y, seed, group).
    groups : int
        Number of groups G; every group must lie in [0, G).

    Returns
    -------
    y, seed, group : ndarray of int64

    Raises
    ------
    ValueError
        Reports of another form, a group out of range, or a negative y or seed.

    Examples
    --------
    >>> from ldpopt.interop.pure_ldp_hh import parse_pem_reports
    >>> reports = [((0, 11), 0), ((1, 12), 1), ((2, 13), 0), ((1, 14), 1)]  # PEMClient's ((y, seed), group)
    >>> parse_pem_reports(reports, groups=2)
    (array([0, 1, 2, 1]), array([11, 12, 13, 14]), array([0, 1, 0, 1]))
    """
    if isinstance(reports, np.ndarray) and reports.dtype.kind in "iu":
        if reports.ndim != 2 or reports.shape[1] != 3:
            raise ValueError(f"reports as an array must have shape (n, 3) of (y, seed, group), got {reports.shape}")
        arr, flat = reports, reports.astype(np.int64)
    else:
        arr, flat = np.asarray(reports, dtype=object), None
    if flat is not None:
        pass
    elif arr.ndim == 2 and arr.shape[1] == 2:
        try:
            pairs = np.array(arr[:, 0].tolist(), dtype=np.int64)
            grp = arr[:, 1].astype(np.int64)
        except (TypeError, ValueError, OverflowError):
            raise ValueError("reports must be PEMClient outputs ((y, seed), group) with integer entries") from None
        if pairs.ndim != 2 or pairs.shape[1] != 2:
            raise ValueError("reports must be PEMClient outputs ((y, seed), group)")
        flat = np.column_stack((pairs, grp))
    else:
        raise ValueError(f"reports must be a non-empty list of PEMClient outputs ((y, seed), group), got shape {arr.shape}")
    y, seed, grp = flat[:, 0], flat[:, 1], flat[:, 2]
    if np.any(grp < 0) or np.any(grp >= groups):
        raise ValueError(f"report groups must lie in [0, {groups})")
    if np.any(seed < 0) or np.any(y < 0):
        raise ValueError("report y and seed must be >= 0")
    return y, seed, grp


def read_pem(reports, *, epsilon: float, start_length: int, max_string_length: int, fragment_length: int,
             k: int) -> HeavyHitters:
    r"""The top-``k`` search of pure-ldp's ``PEMServer.find_heavy_hitters(k=k)`` on its clients'
    ``reports`` (module notes), as an ldpopt :class:`~ldpopt.heavy.HeavyHitters` whose items are
    the strings' bit codes (``int(bits, 2)``) and whose levels hold each round's OLH Estimate.

    PEM: Wang, Li & Jha, IEEE TDSC 2019, §IV (:func:`ldpopt.heavy.pem`).

    Parameters
    ----------
    reports : list or ndarray
        The clients' outputs (:func:`parse_pem_reports`).
    epsilon : float
        ε of the clients (keyword-only, as all that follow); :math:`g = \mathrm{round}(e^ε) + 1`.
    start_length : int
        pure-ldp's ``start_length``.
    max_string_length : int
        m, the strings' length in bits (≤ 56).
    fragment_length : int
        Bits added per group.
    k : int
        Heavy hitters wanted.

    Returns
    -------
    HeavyHitters

    Raises
    ------
    ValueError
        Lengths out of range, a report out of range, or a group with no report.

    Examples
    --------
    >>> from ldpopt.interop.pure_ldp_hh import read_pem
    >>> reports = [((0, 11), 0), ((1, 12), 1), ((2, 13), 0), ((1, 14), 1)]  # PEMClient's ((y, seed), group)
    >>> read_pem(reports, epsilon=1.0, start_length=2, max_string_length=6, fragment_length=2, k=2)
    HeavyHitters(protocol='pem', found=2, total_bits=6, epsilon=1, levels=2)
    """
    m, start, frag = int(max_string_length), int(start_length), int(fragment_length)
    if not (0 <= start < m and 1 <= frag <= m <= 56):
        raise ValueError(f"need 0 <= start_length < max_string_length <= 56 and fragment_length >= 1, "
                         f"got {start}, {m}, {frag}")
    G = math.ceil((m - start) / frag)
    g = peer_g(epsilon, None, True)
    y, seed, grp = parse_pem_reports(reports, G)
    if np.any(y >= g):
        raise ValueError(f"report y must lie in [0, g = {g}) (pure-ldp's OLH at epsilon = {epsilon})")
    lengths = [start + (j + 1) * frag for j in range(G)]
    cand, levels = np.arange(1 << lengths[0], dtype=np.int64), []
    for j, s in enumerate(lengths):
        mine = grp == j
        n_j = int(mine.sum())
        if n_j == 0:
            raise ValueError(f"no report of group {j}; pure-ldp's server needs every group")
        counts = lh_support_counts(y[mine], seed[mine], cand.size, g, values=cand)
        est = oracles.get("olh", epsilon, max(cand.size, 2), g=g).estimate(counts, n_j)
        kept = top_indices(est.f_tilde, int(k))
        levels.append(Level(min(s, m), cand, est, j == 0, kept))
        if j + 1 < G:
            cand = extend(cand[kept], lengths[j + 1] - s)
    last = levels[-1]
    return HeavyHitters("pem", last.candidates[last.kept], last.f_tilde[last.kept], m, float(epsilon),
                        tuple(levels), {"k": int(k), "groups": G, "g": g, "source": "pure-ldp PEMClient"})


def peer_frequencies(result: HeavyHitters) -> np.ndarray:
    r"""What pure-ldp's server reports for the found items: :math:`G n_j \tilde f` (count estimates scaled by the
    number of groups), from the last round of a :func:`read_pem` result.

    Parameters
    ----------
    result : HeavyHitters
        What :func:`read_pem` returned.

    Returns
    -------
    ndarray
        One count estimate per found item.

    Examples
    --------
    >>> from ldpopt.interop.pure_ldp_hh import peer_frequencies, read_pem
    >>> reports = [((0, 11), 0), ((1, 12), 1), ((2, 13), 0), ((1, 14), 1)]  # PEMClient's ((y, seed), group)
    >>> found = read_pem(reports, epsilon=1.0, start_length=2, max_string_length=6, fragment_length=2, k=2)
    >>> peer_frequencies(found).shape
    (2,)
    """
    return result.params["groups"] * result.levels[-1].estimate.n * result.frequencies
