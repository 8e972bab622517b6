"""Range answers of every estimator: flat leaves, hierarchical covers (raw or consistent), Haar.

A range [a, b] (inclusive) is answered

* from leaf estimates (flat, consistent tree, Haar reconstruction) as a prefix-sum difference;
* from a raw (inconsistent) hierarchy as the sum over its greedy cover, the O(B log_B d) nodes of
  :meth:`~ldpopt.problems.ranges.RangeTree.cover` (Cormode et al. VLDB 2019 §4.1). A consistent
  tree gives the same answer from any decomposition, so the leaves are used.
"""

from __future__ import annotations

import numpy as np

from ..problems.ranges import RangeTree

__all__ = ["cover_answers", "leaf_answers", "random_ranges"]


def _ab(a, b, d):
    a = np.atleast_1d(np.asarray(a, dtype=np.int64))
    b = np.atleast_1d(np.asarray(b, dtype=np.int64))
    if a.shape != b.shape or np.any(a < 0) or np.any(b < a) or np.any(b >= d):
        raise ValueError(f"ranges must satisfy 0 <= a <= b < d = {d} elementwise, with a and b the same shape")
    return a, b


def leaf_answers(leaves, a, b) -> np.ndarray:
    """Σ_{v=a_i}^{b_i} leaves[v] for each range (prefix sums; ``leaves`` (d,) or (d, m))."""
    x = np.asarray(leaves, dtype=np.float64)
    a, b = _ab(a, b, x.shape[0])
    c = np.concatenate([np.zeros((1,) + x.shape[1:]), np.cumsum(x, axis=0)])
    return c[b + 1] - c[a]


def cover_answers(tree: RangeTree, nodes, a, b) -> np.ndarray:
    """Σ of ``nodes`` (one value per tree node) over each range's greedy cover."""
    a, b = _ab(a, b, tree.d)
    return tree.query_matrix(zip(a.tolist(), b.tolist())) @ np.asarray(nodes, dtype=np.float64)


def random_ranges(d: int, length: int, count: int, rng) -> tuple[np.ndarray, np.ndarray]:
    """``count`` ranges of ``length`` values with uniformly random starts (a, b inclusive)."""
    if not 1 <= length <= d:
        raise ValueError(f"length must be in [1, d = {d}], got {length}")
    a = rng.integers(0, d - length + 1, size=count)
    return a, a + length - 1
