"""The exact ε of one user's key–value report, by enumeration on a small domain.

ε = max over two users' sets S, S' and every report y of ln P(y | S)/P(y | S'). The law of a report
is affine in each held value, so a ratio of two laws is largest at values ±1: enumerating every
subset of the d keys with values in {−1, +1} (3^d sets) is exact. Each protocol supplies
``report_distribution(keys, values)`` (the law over its ``outputs()``).
"""

from __future__ import annotations

import itertools

import numpy as np

__all__ = ["epsilon", "user_sets", "worst_pair"]


def user_sets(d: int):
    """Every set over d keys with values at the vertices: (keys, values) pairs, 3^d of them."""
    if isinstance(d, bool) or not isinstance(d, (int, np.integer)) or not 1 <= d <= 8:
        raise ValueError(f"d must be an integer in 1..8 for enumeration, got {d!r}")
    for state in itertools.product((0, 1, -1), repeat=d):
        s = np.asarray(state)
        keys = np.flatnonzero(s)
        yield keys, s[keys].astype(np.float64)


def epsilon(protocol) -> float:
    """The exact ε of ``protocol``'s report (module docstring); needs its d ≤ 8.

    Parameters
    ----------
    protocol : PCKV or PrivKV

    Returns
    -------
    float

    Examples
    --------
    >>> from ldpopt import keyvalue as kv
    >>> round(kv.epsilon(kv.pckv_grr(1.0, 3, ell=2)), 9)
    1.0
    """
    laws = np.array([protocol.report_distribution(k, v) for k, v in user_sets(protocol.d)])
    if np.any(laws <= 0):
        return float("inf")
    logs = np.log(laws)
    return float((logs.max(axis=0) - logs.min(axis=0)).max())


def worst_pair(protocol) -> tuple[tuple[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]:
    """The two users' sets (keys, values) whose report laws differ most: the pair attaining
    :func:`epsilon` (the first found in :func:`user_sets`' order); needs d ≤ 8.

    Parameters
    ----------
    protocol : PCKV or PrivKV

    Returns
    -------
    ((keys, values), (keys, values))
        S and S′ with max over reports y of ln P(y | S)/P(y | S′) equal to :func:`epsilon`.

    Examples
    --------
    >>> from ldpopt import keyvalue as kv
    >>> from ldpopt.keyvalue.exact import worst_pair
    >>> (k1, v1), (k2, v2) = worst_pair(kv.pckv_grr(1.0, 2))
    >>> k1.tolist(), v1.tolist(), k2.tolist(), v2.tolist()
    ([0], [1.0], [], [])
    """
    sets = list(user_sets(protocol.d))
    laws = np.array([protocol.report_distribution(k, v) for k, v in sets])
    logs = np.log(np.maximum(laws, np.finfo(float).tiny))
    y = int((logs.max(axis=0) - logs.min(axis=0)).argmax())
    return sets[int(logs[:, y].argmax())], sets[int(logs[:, y].argmin())]
