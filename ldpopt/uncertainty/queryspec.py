"""The query a user cares about, as a small value parsed from a string or given as subsets.

Notes: docs/notes/uncertainty.md, "ldpopt.uncertainty.queryspec"."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["Query", "parse_query"]


@dataclass(frozen=True)
class Query:
    """A parsed query (module notes): its kind and the numbers the kind needs.

    Parameters
    ----------
    kind : {"full", "topk", "hh", "subsets", "given"}
    k : int, default 0
        K of ``"topk"``.
    threshold : float, default 0.0
        PHI of ``"hh"``.
    size, count : int, default 0
        SIZE and COUNT of ``"subsets"``.
    subsets : object, default None
        The given subsets of ``"given"`` (anything :func:`ldpopt.queries.query_matrix` accepts).
    metric : {"mse", "mae", "f1"}, default "mse"
        The error the query is scored by (``"f1"`` for heavy hitters).

    Examples
    --------
    >>> from ldpopt.uncertainty import Query
    >>> q = Query("topk", k=3)
    >>> str(q), q.metric
    ('topk:3', 'mse')
    """

    kind: str                    # "full" | "topk" | "hh" | "subsets" | "given"
    k: int = 0
    threshold: float = 0.0
    size: int = 0
    count: int = 0
    subsets: object = None       # for "given"
    metric: str = "mse"          # "mse" | "mae" | "f1" (hh)

    def __str__(self) -> str:
        return {"full": "full", "topk": f"topk:{self.k}", "hh": f"hh:{self.threshold:g}",
                "subsets": f"subsets:{self.size}:{self.count}", "given": "given subsets"}[self.kind]


def _int(text: str, what: str, spec: str) -> int:
    try:
        v = int(text)
    except ValueError:
        raise ValueError(f"query {spec!r}: {what} must be an integer, got {text!r}") from None
    if v < 1:
        raise ValueError(f"query {spec!r}: {what} must be >= 1, got {v}")
    return v


def parse_query(query, metric: str | None = None) -> Query:
    """A :class:`Query` from a string spec (module notes), a Query, or subsets.

    Parameters
    ----------
    query : None, str, Query or subsets
        None or ``"full"``; ``"topk:K"``; ``"hh:PHI"`` (PHI in (0, 1)); ``"subsets:SIZE[:COUNT]"``
        (COUNT default 100); a :class:`Query` (returned as is); anything else is taken as given subsets.
    metric : {"mse", "mae"} or None, default None
        The error to score by (None: ``"mse"``; heavy hitters are always ``"f1"``).

    Returns
    -------
    Query

    Raises
    ------
    ValueError
        If the string is not one of the forms above, a number in it is malformed or out of range, or
        ``metric`` is not accepted.

    Examples
    --------
    >>> from ldpopt.uncertainty import parse_query
    >>> parse_query("topk:5")
    Query(kind='topk', k=5, threshold=0.0, size=0, count=0, subsets=None, metric='mse')
    >>> parse_query("hh:0.05").threshold, parse_query(None).kind
    (0.05, 'full')
    >>> parse_query("top5")
    Traceback (most recent call last):
    ...
    ValueError: query must be 'full', 'topk:K', 'hh:PHI', 'subsets:SIZE[:COUNT]' or subsets, got 'top5'
    """
    if isinstance(query, Query):
        return query
    if metric is not None and metric not in ("mse", "mae"):
        raise ValueError(f"metric must be 'mse' or 'mae', got {metric!r}")
    m = metric or "mse"
    if query is None:
        return Query("full", metric=m)
    if isinstance(query, str):
        head, _, rest = query.strip().lower().partition(":")
        if head == "full" and not rest:
            return Query("full", metric=m)
        if head == "topk":
            return Query("topk", k=_int(rest, "K", query), metric=m)
        if head == "hh":
            try:
                phi = float(rest)
            except ValueError:
                raise ValueError(f"query {query!r}: PHI must be a number, got {rest!r}") from None
            if not 0.0 < phi < 1.0:
                raise ValueError(f"query {query!r}: PHI must lie in (0, 1), got {phi}")
            return Query("hh", threshold=phi, metric="f1")
        if head == "subsets":
            size, _, count = rest.partition(":")
            return Query("subsets", size=_int(size, "SIZE", query),
                         count=_int(count, "COUNT", query) if count else 100, metric=m)
        raise ValueError(f"query must be 'full', 'topk:K', 'hh:PHI', 'subsets:SIZE[:COUNT]' or subsets, "
                         f"got {query!r}")
    return Query("given", subsets=query, metric=m)


def random_subsets(rng: np.random.Generator, d: int, size: int, count: int) -> np.ndarray:
    """(count, d) 0-1 matrix, each row a uniform SIZE-subset (vectorised: argsort of uniforms)."""
    if size > d:
        raise ValueError(f"subset size {size} is larger than the domain d = {d}")
    idx = np.argpartition(rng.random((count, d)), size - 1, axis=1)[:, :size]
    M = np.zeros((count, d))
    M[np.arange(count)[:, None], idx] = 1.0
    return M
