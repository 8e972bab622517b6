"""Workload matrices W (queries × d) a mechanism is designed for: every value, ranges, prefixes,
k-way marginals of a product domain, the top k of a prior, a random subset, or a user's own matrix.

Notes: docs/notes/design.md, "ldpopt.design.workloads"."""

from __future__ import annotations

import itertools
import math

import numpy as np

from .._validation import check_domain_size

__all__ = ["all_ranges", "as_workload", "identity", "marginals", "prefixes", "random_subset", "top_k"]

#: the largest workload (queries × d entries) built densely
_MAX_CELLS = 1 << 28


def identity(d: int) -> np.ndarray:
    """Every single frequency: :math:`W = I_d`.

    Parameters
    ----------
    d : int
        Domain size, >= 2.

    Returns
    -------
    ndarray (d, d)

    Examples
    --------
    >>> from ldpopt.design import workloads
    >>> workloads.identity(3).sum().item()
    3.0
    """
    return np.eye(check_domain_size(d, "d"))


def prefixes(d: int) -> np.ndarray:
    """The d prefix (CDF) queries [0, b], b = 0 … d − 1: the lower-triangular matrix of ones
    (McKenna et al. PVLDB 2020, the Prefix workload).

    Parameters
    ----------
    d : int
        Domain size, >= 2.

    Returns
    -------
    ndarray (d, d)

    Examples
    --------
    >>> from ldpopt.design import workloads
    >>> workloads.prefixes(3)
    array([[1., 0., 0.],
           [1., 1., 0.],
           [1., 1., 1.]])
    """
    return np.tril(np.ones((check_domain_size(d, "d"),) * 2))


def all_ranges(d: int) -> np.ndarray:
    r"""Every range [a, b], :math:`0 ≤ a ≤ b < d`: d(d + 1)/2 rows (McKenna et al., the All Range workload).

    Only its Gram matrix :math:`W^T W` enters the design; :func:`gram` of this workload has the closed form
    :math:`(W^T W)_{uv} = (\min(u, v) + 1)(d - \max(u, v))`, which the designer uses instead for large d.

    Parameters
    ----------
    d : int
        Domain size, >= 2.

    Returns
    -------
    ndarray (d(d+1)/2, d)

    Raises
    ------
    ValueError
        If the matrix would exceed 2²⁸ entries (use its Gram matrix, :func:`range_gram`).

    Examples
    --------
    >>> from ldpopt.design import workloads
    >>> workloads.all_ranges(3).shape
    (6, 3)
    """
    d = check_domain_size(d, "d")
    rows = d * (d + 1) // 2
    if rows * d > _MAX_CELLS:
        raise ValueError(f"d = {d}: all ranges form a {rows} × {d} matrix, too large to build; "
                         f"design from its Gram matrix (range_gram(d))")
    a, b = np.triu_indices(d)
    v = np.arange(d)
    return ((v[None, :] >= a[:, None]) & (v[None, :] <= b[:, None])).astype(np.float64)


def range_gram(d: int) -> np.ndarray:
    """:math:`W^T W` of :func:`all_ranges` in closed form: the number of ranges holding both u and v,
    (min(u, v) + 1)(d − max(u, v)).

    Parameters
    ----------
    d : int
        Domain size, >= 2.

    Returns
    -------
    ndarray (d, d)

    Examples
    --------
    >>> from ldpopt.design import workloads
    >>> import numpy as np
    >>> W = workloads.all_ranges(5)
    >>> bool(np.array_equal(workloads.range_gram(5), W.T @ W))
    True
    """
    d = check_domain_size(d, "d")
    v = np.arange(d)
    lo = np.minimum(v[:, None], v[None, :])
    hi = np.maximum(v[:, None], v[None, :])
    return ((lo + 1) * (d - hi)).astype(np.float64)


def marginals(shape, k: int) -> np.ndarray:
    """Every k-way marginal of a product domain of attribute sizes ``shape`` (values in C order,
    the last attribute fastest): for each set of k attributes, one 0-1 row per cell of their joint
    table, counting the values that agree with that cell.

    Parameters
    ----------
    shape : sequence of int
        Attribute sizes, each >= 2; the domain size is their product.
    k : int
        Marginal order, 1 ≤ k ≤ len(shape).

    Returns
    -------
    ndarray (sum over attribute sets of the cells, product of shape)

    Examples
    --------
    >>> from ldpopt.design import workloads
    >>> W = workloads.marginals((2, 2, 2), 2)  # three 2-way tables of 4 cells each
    >>> W.shape, W.sum(axis=1).tolist()[:4]
    ((12, 8), [2.0, 2.0, 2.0, 2.0])
    """
    try:
        dims = tuple(int(s) for s in shape)
    except TypeError as exc:
        raise ValueError(f"shape must be a sequence of attribute sizes, got {shape!r}") from exc
    if not dims or any(s < 2 for s in dims) or any(s != float(t) for s, t in zip(dims, shape, strict=True)):
        raise ValueError(f"shape must be a non-empty sequence of integers >= 2, got {shape!r}")
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 1 <= k <= len(dims):
        raise ValueError(f"k must be an integer in [1, {len(dims)}] (the number of attributes), got {k!r}")
    d = math.prod(dims)
    idx = np.indices(dims).reshape(len(dims), d)  # (attributes, values)
    blocks = []
    for attrs in itertools.combinations(range(len(dims)), k):  # attribute sets, not values
        sub = [dims[a] for a in attrs]
        cell = np.ravel_multi_index(tuple(idx[list(attrs)]), sub)  # each value's cell of this marginal
        B = np.zeros((math.prod(sub), d))
        B[cell, np.arange(d)] = 1.0
        blocks.append(B)
    W = np.vstack(blocks)
    if W.size > _MAX_CELLS:
        raise ValueError(f"the marginals form a {W.shape[0]} × {d} matrix, too large")
    return W


def top_k(f, k: int) -> np.ndarray:
    """The frequencies of the k most frequent values under ``f``: one row :math:`e_v` per value v among
    the k largest entries of f (ties to the smaller index, a stable sort), in that order.

    The same values ``ldpopt.plan``'s ``topk:K`` query scores (the K largest frequencies of its prior,
    stably sorted): a mechanism designed for this workload is designed for that query. The set is
    declared before collection (from a prior or public data); it is not the top k of the estimate.

    Parameters
    ----------
    f : array_like (d,)
        Frequencies (or counts) ranking the values: finite, >= 0, d >= 2.
    k : int
        1 <= k <= d.

    Returns
    -------
    ndarray (k, d)

    Raises
    ------
    ValueError
        If f is not a finite non-negative 1-D array of length >= 2, or k is not an integer in [1, d].

    Examples
    --------
    >>> from ldpopt.design import workloads
    >>> workloads.top_k([0.1, 0.4, 0.1, 0.4], 3)
    array([[0., 1., 0., 0.],
           [0., 0., 0., 1.],
           [1., 0., 0., 0.]])
    """
    try:
        fv = np.asarray(f, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"f must be a 1-D array of frequencies, got {type(f).__name__}") from exc
    if fv.ndim != 1 or fv.shape[0] < 2 or not np.all(np.isfinite(fv)) or np.any(fv < 0):
        raise ValueError(f"f must be a finite non-negative 1-D array of length >= 2, got shape {fv.shape}")
    d = fv.shape[0]
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or not 1 <= k <= d:
        raise ValueError(f"k must be an integer in [1, {d}] (the domain size), got {k!r}")
    W = np.zeros((int(k), d))
    W[np.arange(int(k)), np.argsort(-fv, kind="stable")[:k]] = 1.0
    return W


def random_subset(d: int, size: int) -> np.ndarray:
    r"""The workload of one uniformly random subset of ``size`` values: a matrix W whose Gram matrix is
    the expectation :math:`E[u u^T]` over the 0-1 indicators u of the subsets,
    :math:`W^T W = a I + b 1 1^T` with :math:`b = s(s-1)/(d(d-1))`, :math:`a = s/d - b` (s = size):
    the rows :math:`\sqrt{a}\,e_v` and one row :math:`\sqrt{b}\,1`.

    A query's variance is :math:`u^T C u`, so :math:`\mathrm{tr}(C\,W^T W)` is the expected variance of
    one subset query, what ``ldpopt.plan``'s ``subsets:SIZE`` query scores; only the Gram matrix enters a
    design, so designing for W designs for that query.

    Parameters
    ----------
    d : int
        Domain size, >= 2.
    size : int
        1 <= size <= d.

    Returns
    -------
    ndarray (d + 1, d)

    Examples
    --------
    >>> import itertools
    >>> import numpy as np
    >>> from ldpopt.design import workloads
    >>> W = workloads.random_subset(4, 2)
    >>> U = np.array([[float(v in s) for v in range(4)] for s in itertools.combinations(range(4), 2)])
    >>> bool(np.allclose(W.T @ W, U.T @ U / len(U)))
    True
    """
    d = check_domain_size(d, "d")
    if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or not 1 <= size <= d:
        raise ValueError(f"size must be an integer in [1, {d}] (the domain size), got {size!r}")
    b = size * (size - 1) / (d * (d - 1))
    a = size / d - b
    return np.vstack([math.sqrt(a) * np.eye(d), np.full((1, d), math.sqrt(b))])


def as_workload(W, d: int | None = None) -> np.ndarray:
    """Check a user's query matrix: a finite 2-D float array (queries × d), no all-zero column
    problem (any W is answerable: the designs are full-rank), at least one nonzero entry.

    Parameters
    ----------
    W : array_like (queries, d)
        One linear query per row.
    d : int, optional
        The domain size it must have.

    Returns
    -------
    ndarray (queries, d), float64

    Raises
    ------
    ValueError
        If W is not a finite 2-D numeric array with d >= 2 columns (matching ``d`` when given),
        or is all zero.

    Examples
    --------
    >>> from ldpopt.design import workloads
    >>> workloads.as_workload([[1, 1, 0], [0, 1, 1]]).shape
    (2, 3)
    """
    try:
        A = np.array(W, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"workload must be a numeric matrix (queries × d), got {type(W).__name__}") from exc
    if A.ndim != 2 or A.shape[0] < 1 or A.shape[1] < 2:
        raise ValueError(f"workload must be a 2-D matrix (queries × d) with d >= 2 columns, got shape {A.shape}")
    if d is not None and A.shape[1] != d:
        raise ValueError(f"workload must have d = {d} columns, got {A.shape[1]}")
    if not np.all(np.isfinite(A)):
        raise ValueError("workload must be finite")
    if not np.any(A):
        raise ValueError("workload must have at least one nonzero entry")
    return A


__all__ += ["range_gram"]
