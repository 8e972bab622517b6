"""Reports of users routed to one of several oracles (a heavy-hitter round, a pooled group): what the
server receives — the route and the oracle's report, one row per user — and each part's native
reports for the likelihood ratio.

Notes: docs/notes/python.md, "ldpopt.oracles.routed"."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from .base import FrequencyOracle

__all__ = ["RoutedReports", "report_fields", "routed", "support_score"]


class RoutedReports(tuple):
    """Routed users' reports: a tuple of fields, one row per user — the route of each user, then each
    channel's report fields (:func:`report_fields`, padded with −1 to one width) — with ``parts``: the
    (channel, users, oracle, native reports) that made them."""

    parts: list


def report_fields(oracle: FrequencyOracle, reports, m: int) -> np.ndarray:
    """Every field of ``m`` reports of ``oracle`` as an int64 matrix, a row per user: the oracle's
    report columns (``reports_to_columns``), packed bit columns unpacked.

    Parameters
    ----------
    oracle : FrequencyOracle
    reports
        What ``oracle.perturb`` returned.
    m : int
        The number of reports.

    Returns
    -------
    ndarray of int64, shape (m, K)

    Examples
    --------
    >>> from ldpopt import oracles
    >>> from ldpopt.oracles.routed import report_fields
    >>> olh = oracles.get("olh", 1.0, 4)
    >>> report_fields(olh, olh.perturb([0, 1, 2], rng=0), 3).shape
    (3, 2)
    """
    cols = []
    for c in oracle.reports_to_columns(reports):
        a = np.asarray(c)
        if a.dtype == np.uint8:
            a = np.unpackbits(a.reshape(m, -1), axis=1)
        cols.append(a.reshape(m, -1).astype(np.int64))
    return np.concatenate(cols, axis=1) if cols else np.zeros((m, 0), dtype=np.int64)


def routed(route: np.ndarray, parts: Sequence[tuple[int, np.ndarray, FrequencyOracle, object]]) -> RoutedReports:
    """Assemble the reports of routed users.

    Parameters
    ----------
    route : ndarray of int, shape (m,)
        Each user's route (public: the server reads it to pick the channel).
    parts : sequence of (channel, users, oracle, reports)
        ``reports``: ``oracle.perturb`` of the users ``users`` (indices into the m); channel 0 holds
        the routed round, further channels what every user also sends (a word report).

    Returns
    -------
    RoutedReports
        (route, channel 0's fields, channel 1's fields, …).

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt import oracles
    >>> from ldpopt.oracles.routed import routed
    >>> a, b = oracles.get("grr", 1.0, 3), oracles.get("olh", 1.0, 3)
    >>> route = np.array([0, 1, 0])
    >>> reps = routed(route, [(0, np.array([0, 2]), a, a.perturb([1, 2], rng=0)),
    ...                       (0, np.array([1]), b, b.perturb([0], rng=1))])
    >>> reps[1].shape, int(reps[1][0, 1])
    ((3, 2), -1)
    """
    route = np.asarray(route)
    m = route.shape[0]
    fields: list[np.ndarray] = [route]
    for ch in sorted({p[0] for p in parts}):
        mats = [(users, report_fields(o, rep, users.size)) for c, users, o, rep in parts if c == ch]
        width = max(X.shape[1] for _, X in mats)
        M = np.full((m, width), -1, dtype=np.int64)
        for users, X in mats:  # the channel's parts (routes and memory chunks), not users
            M[users, :X.shape[1]] = X
        fields.append(M)
    out = RoutedReports(fields)
    out.parts = list(parts)
    return out


def support_score(reports: RoutedReports, index: Callable[[int], tuple[int, int]],
                  weight: Callable[[FrequencyOracle], float] | None = None) -> np.ndarray:
    """Σ over each user's reports of S(y)[i] − S(y)[i′] (the oracle's support of the two inputs'
    positions ``index(part, ·)`` in that part's domain): for pure (p, q) oracles at one ε, the log
    likelihood ratio of the two inputs up to the factor ln(p/q).

    Parameters
    ----------
    reports : RoutedReports
    index : callable
        ``index(part number)`` → (i, i′): the two inputs' positions in that part's oracle domain.
    weight : callable, optional
        ``weight(oracle)`` multiplies that part's difference (parts at different ε: their ε makes
        the exact log ratio of GRR and the local-hashing oracles); 1 by default.

    Returns
    -------
    ndarray of float64, shape (m,)
    """
    s = np.zeros(reports[0].shape[0])
    for j, (_, users, o, rep) in enumerate(reports.parts):  # parts, not users
        i1, i2 = index(j)
        S = o.support_columns(rep, [i1, i2])
        w = 1.0 if weight is None else float(weight(o))
        s[users] += w * (S[:, 0].astype(np.float64) - S[:, 1])
    return s
