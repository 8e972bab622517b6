"""Range answers of every estimator: flat leaves, hierarchical covers (raw or consistent), Haar.

A range [a, b] (inclusive) is answered

* from leaf estimates (flat, consistent tree, Haar reconstruction) as a prefix-sum difference;
* from a raw (inconsistent) hierarchy as the sum over its greedy cover, the O(B log_B d) nodes of
  :meth:`~ldpopt.problems.constraints.ranges.RangeTree.cover` (Cormode et al. VLDB 2019 §4.1). A consistent
  tree gives the same answer from any decomposition, so the leaves are used.
"""

from __future__ import annotations

import numpy as np

from ..problems.constraints.ranges import RangeTree

__all__ = ["cover_answers", "leaf_answers", "random_ranges"]


def _ab(a, b, d):
    a = np.atleast_1d(np.asarray(a, dtype=np.int64))
    b = np.atleast_1d(np.asarray(b, dtype=np.int64))
    if a.shape != b.shape or np.any(a < 0) or np.any(b < a) or np.any(b >= d):
        raise ValueError(f"ranges must satisfy 0 <= a <= b < d = {d} elementwise, with a and b the same shape")
    return a, b


def leaf_answers(leaves, a, b) -> np.ndarray:
    """:math:`Σ_{v=a_i}^{b_i}` ``leaves[v]`` for each range (prefix sums; ``leaves`` (d,) or (d, m)).

    Parameters
    ----------
    leaves : array_like, shape (d,) or (d, m)
        Leaf values (several columns answered at once).
    a, b : array_like of int
        Range ends, inclusive.

    Returns
    -------
    ndarray
        One answer per range (per column).

    Raises
    ------
    ValueError
        Not ``0 <= a <= b < d`` elementwise, or ``a`` and ``b`` of different shapes.

    Examples
    --------
    >>> from ldpopt import hierarchy
    >>> from ldpopt.hierarchy.queries import leaf_answers
    >>> leaf_answers([0.1, 0.2, 0.3, 0.4], [0, 1], [1, 3])
    array([0.3, 0.9])
    """
    x = np.asarray(leaves, dtype=np.float64)
    a, b = _ab(a, b, x.shape[0])
    c = np.concatenate([np.zeros((1,) + x.shape[1:]), np.cumsum(x, axis=0)])
    return c[b + 1] - c[a]


def cover_answers(tree: RangeTree, nodes, a, b) -> np.ndarray:
    """The sum of ``nodes`` (one value per tree node) over each range's greedy cover.

    The cover is the O(B log_B d) nodes of :meth:`~ldpopt.problems.constraints.ranges.RangeTree.cover`
    (Cormode et al. VLDB 2019 §4.1); for a consistent tree it equals :func:`leaf_answers`.

    Parameters
    ----------
    tree : RangeTree
        The B-ary range tree (:class:`~ldpopt.problems.constraints.ranges.RangeTree`; ``HierarchicalEstimate.tree``).
    nodes : array_like, shape (size,)
        One value per tree node.
    a, b : array_like of int
        Range ends, inclusive.

    Returns
    -------
    ndarray
        One answer per range.

    Raises
    ------
    ValueError
        Bad ranges (see :func:`leaf_answers`).

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt import hierarchy
    >>> counts = np.array([400, 300, 100, 100, 50, 30, 20, 0])
    >>> est = hierarchy.collect(counts, "oue", epsilon=1.0, rng=0)
    >>> x = est.consistent()
    >>> from ldpopt.hierarchy.queries import cover_answers, leaf_answers
    >>> cover_answers(est.tree, x, [0, 2], [3, 7]).round(3), leaf_answers(x[:8], [0, 2], [3, 7]).round(3)
    (array([0.97 , 0.355]), array([0.97 , 0.355]))
    """
    a, b = _ab(a, b, tree.d)
    return tree.query_matrix(zip(a.tolist(), b.tolist())) @ np.asarray(nodes, dtype=np.float64)


def random_ranges(d: int, length: int, count: int, rng) -> tuple[np.ndarray, np.ndarray]:
    """``count`` ranges of ``length`` values with uniformly random starts (a, b inclusive).

    Parameters
    ----------
    d : int
        Domain size.
    length : int
        Values per range, ``1 <= length <= d``.
    count : int
        Number of ranges.
    rng : numpy.random.Generator
        The generator.

    Returns
    -------
    a, b : ndarray of int
        Range starts and (inclusive) ends.

    Raises
    ------
    ValueError
        ``length`` outside ``[1, d]``.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt import hierarchy
    >>> from ldpopt.hierarchy.queries import random_ranges
    >>> random_ranges(8, 3, 2, np.random.default_rng(0))
    (array([5, 3]), array([7, 5]))
    """
    if not 1 <= length <= d:
        raise ValueError(f"length must be in [1, d = {d}], got {length}")
    a = rng.integers(0, d - length + 1, size=count)
    return a, a + length - 1
