"""Subset queries on a frequency vector, Post-Pos, and error metrics.

A subset query asks for :math:`f(A) = Σ_{v∈A} f_v` (Wang et al. arXiv §4.3 "set-value" queries). A batch of
queries is a 0-1 matrix Q (n_queries × d) and the answers are Q @ f, computed as one sparse product.

Post-Pos (arXiv §3.1, NDSS §IV-A) post-processes query *answers*, not the frequency vector: each
negative answer becomes 0. On single-value queries it equals Base-Pos; answers to disjoint A, B need
not add up to the answer for A ∪ B (NDSS §IV-A).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ._validation import check_domain_size, check_float_array

__all__ = ["answer", "mae", "mse", "post_pos", "query_matrix"]


def query_matrix(queries, d: int) -> sp.csr_matrix:
    """A batch of subset queries as a sparse 0-1 matrix of shape (n_queries, d).

    ``queries`` is one of

    * a 2-D 0-1 array or scipy sparse matrix with d columns (returned as CSR, entries must be 0/1);
    * a 1-D boolean mask of length d, or a 1-D integer index array (one query);
    * a sequence of boolean masks and/or index arrays (one query each).

    Repeated indices within a query count once (a query is a set). An empty query is allowed
    (answer 0).

    Parameters
    ----------
    queries : array_like, sparse matrix or sequence
        As above.
    d : int
        Domain size, >= 2.

    Returns
    -------
    scipy.sparse.csr_matrix, shape (n_queries, d)

    Raises
    ------
    ValueError
        If ``d`` is out of range, a matrix has the wrong width or entries other than 0/1, a mask has
        the wrong length, an index is outside [0, d), or there is no query.
    TypeError
        If ``queries`` is not one of the accepted kinds.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt.queries import query_matrix
    >>> query_matrix([np.array([0, 2]), np.array([True, True, False, False])], d=4).toarray()
    array([[1., 0., 1., 0.],
           [1., 1., 0., 0.]])
    """
    d = check_domain_size(d, "d")
    if sp.issparse(queries):
        m = sp.csr_matrix(queries, dtype=np.float64)
        return _check_01(m, d)
    if isinstance(queries, np.ndarray) and queries.ndim == 2:
        if queries.dtype == bool:
            queries = queries.astype(np.float64)
        return _check_01(sp.csr_matrix(np.asarray(queries, dtype=np.float64)), d)
    if isinstance(queries, np.ndarray) and queries.ndim == 1:
        queries = [queries]
    try:
        items = list(queries)
    except TypeError:
        raise TypeError("queries must be a 0-1 matrix, a mask, an index array or a sequence of them") from None
    if not items:
        raise ValueError("queries must contain at least one query")
    rows, cols = [], []
    for i, qry in enumerate(items):
        idx = _query_indices(qry, d, i)
        rows.append(np.full(idx.shape[0], i, dtype=np.int64))
        cols.append(idx)
    r, c = np.concatenate(rows), np.concatenate(cols)
    return sp.csr_matrix((np.ones(r.shape[0]), (r, c)), shape=(len(items), d))


def _query_indices(qry, d: int, i: int) -> np.ndarray:
    a = np.asarray(qry)
    if a.ndim != 1:
        raise ValueError(f"query {i} must be a 1-D boolean mask or index array, got shape {a.shape}")
    if a.dtype == bool:
        if a.shape[0] != d:
            raise ValueError(f"query {i}: a boolean mask must have length d = {d}, got {a.shape[0]}")
        return np.flatnonzero(a)
    if a.size == 0:
        return np.zeros(0, dtype=np.int64)
    if a.dtype.kind not in "iu":
        raise ValueError(f"query {i} must be a boolean mask or integer indices, got dtype {a.dtype}")
    if a.min() < 0 or a.max() >= d:
        raise ValueError(f"query {i}: indices must lie in [0, {d})")
    return np.unique(a.astype(np.int64))


def _check_01(m: sp.csr_matrix, d: int) -> sp.csr_matrix:
    if m.ndim != 2 or m.shape[1] != d:
        raise ValueError(f"query matrix must have shape (n_queries, {d}), got {m.shape}")
    m.eliminate_zeros()
    if m.nnz and not np.all(m.data == 1.0):
        raise ValueError("query matrix entries must be 0 or 1")
    return m


def answer(f, queries) -> np.ndarray:
    """Answers :math:`f(A) = Σ_{v∈A} f_v` to each query (see :func:`query_matrix`), float64 (n_queries,).

    ``f`` is a frequency vector of length d (raw, post-processed or true).

    Parameters
    ----------
    f : array_like, shape (d,)
        Frequencies, finite, d >= 2.
    queries
        What :func:`query_matrix` accepts.

    Returns
    -------
    ndarray, shape (n_queries,)

    Raises
    ------
    ValueError
        If ``f`` is not a finite vector of length >= 2, or the queries are malformed.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt.queries import answer
    >>> answer([0.5, 0.3, 0.15, 0.05], [np.array([0, 1]), np.array([2, 3])]).round(3)
    array([0.8, 0.2])
    """
    fv = check_float_array(f, "f", min_length=2)
    return np.asarray(query_matrix(queries, fv.shape[0]) @ fv, dtype=np.float64)


def post_pos(answers) -> np.ndarray:
    """Post-Pos (arXiv §3.1): each negative query answer becomes 0.

    On single-value queries this is Base-Pos; it is not a post-processing of f and is not additive
    over disjoint queries (NDSS §IV-A).

    Parameters
    ----------
    answers : array_like, shape (m,)
        Query answers, finite.

    Returns
    -------
    ndarray, shape (m,)

    Raises
    ------
    ValueError
        If ``answers`` is not a finite 1-D array.

    Examples
    --------
    >>> from ldpopt.queries import post_pos
    >>> post_pos([0.4, -0.1, 0.0])
    array([0.4, 0. , 0. ])
    """
    return np.maximum(check_float_array(answers, "answers"), 0.0)


def _pair(estimated, true):
    e = np.asarray(estimated, dtype=np.float64)
    t = np.asarray(true, dtype=np.float64)
    if e.shape != t.shape:
        raise ValueError(f"estimated and true must have the same shape, got {e.shape} and {t.shape}")
    if e.size == 0:
        raise ValueError("estimated and true must not be empty")
    if not (np.all(np.isfinite(e)) and np.all(np.isfinite(t))):
        raise ValueError("estimated and true must be finite")
    return e, t


def mse(estimated, true, axis=None):
    """Mean squared error over queries (arXiv §4.1: :math:`(1/|Q|) Σ_Q (f'(A) - f(A))^2`).

    Parameters
    ----------
    estimated, true : array_like
        Same shape, finite, not empty.
    axis : int or None, default None
        Axis to average over (None: all).

    Returns
    -------
    float or ndarray

    Raises
    ------
    ValueError
        If the shapes differ, either is empty or not finite.

    Examples
    --------
    >>> from ldpopt.queries import mse
    >>> round(float(mse([0.5, 0.3, 0.2], [0.4, 0.4, 0.2])), 6)
    0.006667
    """
    e, t = _pair(estimated, true)
    return np.mean((e - t) ** 2, axis=axis)


def mae(estimated, true, axis=None):
    """Mean absolute error over queries: :math:`(1/|Q|) Σ_Q |f'(A) - f(A)|`.

    Parameters
    ----------
    estimated, true : array_like
        Same shape, finite, not empty.
    axis : int or None, default None
        Axis to average over (None: all).

    Returns
    -------
    float or ndarray

    Raises
    ------
    ValueError
        If the shapes differ, either is empty or not finite.

    Examples
    --------
    >>> from ldpopt.queries import mae
    >>> round(float(mae([0.5, 0.3, 0.2], [0.4, 0.4, 0.2])), 6)
    0.066667
    """
    e, t = _pair(estimated, true)
    return np.mean(np.abs(e - t), axis=axis)
