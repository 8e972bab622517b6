"""What an observer computes from the reports: every field as a matrix, hashed tokens of it, a naive
Bayes classifier over the tokens, and the best threshold of a score with its ε bound.

Notes: docs/notes/reliability.md, "ldpopt.audit"."""

from __future__ import annotations

import numpy as np

from .bounds import epsilon_bound

__all__ = ["NaiveBayes", "best_threshold", "report_matrix", "tokens", "ungroup"]

_M64 = np.uint64(0xFFFFFFFFFFFFFFFF)
#: hashed feature space of the learned attack: 2^18 bins
BITS = 18
#: the first columns of a round whose pairs are also tokens (a memo keyed by a public field shows there)
PAIR_COLUMNS = 4


def _mix(x: np.ndarray) -> np.ndarray:
    with np.errstate(over="ignore"):
        x = (x + np.uint64(0x9E3779B97F4A7C15)) & _M64
        x = ((x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)) & _M64
        x = ((x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)) & _M64
        return x ^ (x >> np.uint64(31))


def _as_columns(a: np.ndarray, m: int) -> list[np.ndarray]:
    a = np.asarray(a)
    if a.shape[:1] != (m,):
        raise ValueError(f"every field of the reports must have one row per user (m = {m}), got shape {a.shape}")
    a = a.reshape(m, -1)
    if a.dtype == np.uint8:  # packed bits (the unary oracles' reports): one column per bit
        return [np.unpackbits(a, axis=1).astype(np.int64)]
    if a.dtype.kind == "f":
        # a float: its bits (the low mantissa bits reveal what a textbook sampler added, Mironov 2012)
        # and a coarse value, as integer columns
        bits = np.ascontiguousarray(a, dtype=np.float64).view(np.int64)
        with np.errstate(invalid="ignore", over="ignore"):
            coarse = np.nan_to_num(np.floor(a.astype(np.float64) * 4.0), nan=0.0, posinf=1e18, neginf=-1e18)
        return [np.clip(coarse, -1e18, 1e18).astype(np.int64), bits & 0xFF, bits]
    if a.dtype.kind not in "biu":
        raise ValueError(f"every field of the reports must be numeric (bool, int, uint8 or float), got {a.dtype}")
    return [a.astype(np.int64) if a.dtype != np.uint64 else a.view(np.int64)]


def report_matrix(reports, m: int) -> np.ndarray:
    """Every field of one round's reports as one int64 matrix, a row per user: arrays as columns,
    tuples and lists of arrays (nested too) field after field, packed bits unpacked, floats as a coarse value,
    their low bits and their bit pattern.

    Parameters
    ----------
    reports
        What a client returned for ``m`` users (an array or a tuple of arrays, one row per user).
    m : int
        Number of users.

    Returns
    -------
    ndarray of int64, shape (m, K)

    Raises
    ------
    ValueError
        If a field has not one row per user or is not numeric.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt.audit import report_matrix
    >>> report_matrix((np.array([3, 1]), np.array([[True, False], [False, False]])), 2)
    array([[3, 1, 0],
           [1, 0, 0]])
    """
    fields: list = []
    stack = [reports]
    while stack:  # nested tuples and lists of arrays, flattened in order
        f = stack.pop()
        if isinstance(f, (tuple, list)):
            stack.extend(reversed(f))
        else:
            fields.append(f)
    cols = [c for f in fields for c in _as_columns(f, m)]
    return np.concatenate(cols, axis=1) if cols else np.zeros((m, 0), dtype=np.int64)


def ungroup(groups, per_group) -> np.ndarray:
    """Grouped reports (each user in one group; per group, the reports of its users in order, as
    sampling protocols send them) as one row per user: the group, then her group's report fields
    (:func:`report_matrix`), zero-padded to the widest group.

    Parameters
    ----------
    groups : array_like of int, shape (m,)
        Each user's group in [0, G).
    per_group : sequence
        G reports, the g-th with one row per user of group g.

    Returns
    -------
    ndarray of int64, shape (m, 1 + K)

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt.audit import ungroup
    >>> ungroup(np.array([1, 0, 1]), (np.array([7]), np.array([[1, 2], [3, 4]])))
    array([[1, 1, 2],
           [0, 7, 0],
           [1, 3, 4]])
    """
    g = np.asarray(groups, dtype=np.int64)
    m = g.shape[0]
    parts = []
    for k, rep in enumerate(per_group):  # a loop over groups, vectorised over their users
        rows = np.flatnonzero(g == k)
        parts.append((rows, report_matrix(rep, rows.size)))
    width = max((X.shape[1] for _, X in parts), default=0)
    out = np.zeros((m, 1 + width), dtype=np.int64)
    out[:, 0] = g
    for rows, X in parts:
        out[rows, 1:1 + X.shape[1]] = X
    return out


def tokens(rounds: list[np.ndarray], bits: int = BITS) -> np.ndarray:
    """Hashed tokens of τ rounds of report matrices (:func:`report_matrix`): per round, one token per
    (column, value) and one per pair of the first :data:`PAIR_COLUMNS` columns (column pair, values);
    the rounds share their tokens, so a value repeated over rounds counts as often as it is repeated.

    Parameters
    ----------
    rounds : list of ndarray
        τ matrices (m, K) of int64.
    bits : int
        Hash space ``2**bits``.

    Returns
    -------
    ndarray of int64, shape (m, T)
        Token ids in [0, ``2**bits``).

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt.audit import tokens
    >>> t = tokens([np.array([[1, 2], [1, 3]])])
    >>> t.shape, bool(t[0, 0] == t[1, 0]), bool(t[0, 1] == t[1, 1])
    ((2, 3), True, False)
    """
    out = []
    shift = np.uint64(64 - bits)
    for X in rounds:
        K = X.shape[1]
        U = X.view(np.uint64) if X.dtype == np.int64 else X.astype(np.int64).view(np.uint64)
        with np.errstate(over="ignore"):
            col = (np.arange(K, dtype=np.uint64) + np.uint64(1)) * np.uint64(0xD6E8FEB86659FD93)
            out.append(_mix(_mix(U) ^ col[None, :]) >> shift)
            P = min(K, PAIR_COLUMNS)
            for i in range(P):
                for j in range(i + 1, P):
                    salt = np.uint64((i * PAIR_COLUMNS + j + 1) * 0x5BD1E995)
                    out.append((_mix(_mix(U[:, i] ^ salt) ^ _mix(U[:, j] + salt)) >> shift)[:, None])
    return np.concatenate(out, axis=1).astype(np.int64)


class NaiveBayes:
    r"""Multinomial naive Bayes over hashed tokens (two classes, add-½ smoothing): the learned attack's
    score is :math:`Σ \log(\Pr[t \mid x] / \Pr[t \mid x'])` over a user's tokens t.

    Parameters
    ----------
    bits : int
        Hash space ``2**bits`` (the tokens' range).

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt.audit import NaiveBayes
    >>> nb = NaiveBayes(bits=2).fit(np.array([[0], [0], [1]]), np.array([[1], [1], [2]]))
    >>> bool(nb.score(np.array([[0]]))[0] > 0 > nb.score(np.array([[2]]))[0])
    True
    """

    def __init__(self, bits: int = BITS):
        self.bits = int(bits)
        self.weights = np.zeros(1 << self.bits)

    def fit(self, tokens_x: np.ndarray, tokens_x2: np.ndarray) -> NaiveBayes:
        """Learn the token weights from the tokens of runs on x and on x′ (rows: users).

        Parameters
        ----------
        tokens_x, tokens_x2 : ndarray of int64
            (m, T) tokens under each input.

        Returns
        -------
        NaiveBayes
            ``self``.

        Examples
        --------
        >>> import numpy as np
        >>> from ldpopt.audit import NaiveBayes
        >>> round(float(NaiveBayes(bits=1).fit(np.array([[0]]), np.array([[1]])).weights[0]), 4)
        1.0986
        """
        B = 1 << self.bits
        c1 = np.bincount(tokens_x.ravel(), minlength=B) + 0.5
        c0 = np.bincount(tokens_x2.ravel(), minlength=B) + 0.5
        self.weights = np.log(c1 / c1.sum()) - np.log(c0 / c0.sum())
        return self

    def score(self, toks: np.ndarray) -> np.ndarray:
        """Per user, the summed log-ratio of her tokens (large: x).

        Parameters
        ----------
        toks : ndarray of int64
            (m, T) tokens.

        Returns
        -------
        ndarray of float, shape (m,)

        Examples
        --------
        >>> import numpy as np
        >>> from ldpopt.audit import NaiveBayes
        >>> nb = NaiveBayes(bits=1).fit(np.array([[0]]), np.array([[1]]))
        >>> nb.score(np.array([[0, 0], [1, 1]])).round(4).tolist()
        [2.1972, -2.1972]
        """
        return self.weights[toks].sum(axis=1)


def best_threshold(s1: np.ndarray, s0: np.ndarray, alpha: float, delta: float = 0.0,
                   candidates: int = 256) -> tuple[float, int, float]:
    """The threshold and direction of a score that give the largest ε bound on these runs: events
    "score ≥ t" (direction +1) or "score ≤ t" (−1) at up to ``candidates`` quantiles of the pooled
    scores (every distinct value when fewer), each bounded by :func:`epsilon_bound`.

    Parameters
    ----------
    s1, s0 : ndarray
        Scores of runs on x and on x′.
    alpha : float
        1 − confidence of each bound.
    delta : float
        δ of the statement tested.
    candidates : int
        Most thresholds tried.

    Returns
    -------
    tuple
        ``(threshold, direction, bound)``.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt.audit import best_threshold
    >>> t, sign, eps = best_threshold(np.array([1.0] * 90 + [0.0] * 10), np.array([1.0] * 10 + [0.0] * 90), 0.05)
    >>> t, sign, eps > 1.0
    (1.0, 1, True)
    """
    s1 = np.sort(np.asarray(s1, dtype=np.float64))
    s0 = np.sort(np.asarray(s0, dtype=np.float64))
    pooled = np.unique(np.concatenate((s1, s0)))
    if pooled.size > candidates:
        pooled = np.unique(np.quantile(pooled, np.linspace(0, 1, candidates)))
    n1, n0 = s1.size, s0.size
    ge1 = n1 - np.searchsorted(s1, pooled, side="left")
    ge0 = n0 - np.searchsorted(s0, pooled, side="left")
    le1 = np.searchsorted(s1, pooled, side="right")
    le0 = np.searchsorted(s0, pooled, side="right")
    up = epsilon_bound(ge1, n1, ge0, n0, alpha, delta)
    down = epsilon_bound(le1, n1, le0, n0, alpha, delta)
    i, j = int(np.argmax(up)), int(np.argmax(down))
    if up[i] >= down[j]:
        return float(pooled[i]), 1, float(up[i])
    return float(pooled[j]), -1, float(down[j])
