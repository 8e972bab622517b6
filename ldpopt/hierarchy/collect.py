"""Hierarchical histograms under LDP: one frequency oracle per level of a B-ary range tree.

Notes: docs/notes/python.md, "ldpopt.hierarchy.collect"."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .. import oracles as _oracles
from .._validation import as_generator, check_counts
from ..problems.constraints.ranges import RangeTree, range_tree
from .consistency import consistency, level_slices

__all__ = ["HierarchicalEstimate", "collect", "design", "group_sizes", "split_users"]


@dataclass(frozen=True)
class HierarchicalEstimate:
    """Raw per-level estimates of a hierarchical histogram.

    ``y``: one unbiased frequency estimate per tree node (leaves first, root = 1); ``var``: the
    model variance of each level (root 0) used as consistency weights; ``n_level``: users per
    collected level; ``n``: all users; ``oracle``, ``epsilon``, ``oracle_params`` as given.

    Returned by :func:`collect` (Cormode, Kulkarni & Srivastava, VLDB 2019, §4).

    Parameters
    ----------
    tree : RangeTree
        The range tree over the d values.
    y : ndarray, shape (size,)
        Raw node estimates, leaves first; the root is 1.
    var : ndarray
        Model variance per level, the root's 0.
    n_level : ndarray of int
        Users per collected level.
    n : int
        All users.
    oracle : str
        The oracle's registry name.
    epsilon : float
        Each user's ε.
    oracle_params : dict
        Extra oracle parameters.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt import hierarchy
    >>> counts = np.array([400, 300, 100, 100, 50, 30, 20, 0])
    >>> est = hierarchy.collect(counts, "oue", epsilon=1.0, rng=0)
    >>> est.tree.size, est.n_level
    (15, array([334, 333, 333]))
    """

    tree: RangeTree
    y: np.ndarray
    var: np.ndarray
    n_level: np.ndarray
    n: int
    oracle: str
    epsilon: float
    oracle_params: dict = field(default_factory=dict)

    def consistent(self) -> np.ndarray:
        """Hay et al.'s constrained inference of ``y`` (:func:`.consistency.consistency`).

        Hay, Rastogi, Miklau & Suciu, VLDB 2010, §3, with the per-level variances ``var`` as weights.

        Returns
        -------
        ndarray, shape (size,)
            Consistent node totals: each parent the sum of its children, the root 1.

        Examples
        --------
        >>> import numpy as np
        >>> from ldpopt import hierarchy
        >>> counts = np.array([400, 300, 100, 100, 50, 30, 20, 0])
        >>> est = hierarchy.collect(counts, "oue", epsilon=1.0, rng=0)
        >>> x = est.consistent()
        >>> bool(np.isclose(x[:8].sum(), 1.0)), bool(np.isclose(x[8], x[0] + x[1]))
        (True, True)
        """
        return consistency(self.tree, self.y, self.var)

    def level_oracle(self, k: int):
        """The frequency oracle of tree level ``k`` (0 = leaves): the estimate's oracle over that
        level's nodes.

        Parameters
        ----------
        k : int
            The level, 0 (leaves) to the level below the root.

        Returns
        -------
        FrequencyOracle

        Examples
        --------
        >>> import numpy as np
        >>> from ldpopt import hierarchy
        >>> counts = np.array([400, 300, 100, 100, 50, 30, 20, 0])
        >>> est = hierarchy.collect(counts, "oue", epsilon=1.0, rng=0)
        >>> est.level_oracle(0), est.level_oracle(1)
        (OUE(epsilon=1, d=8), OUE(epsilon=1, d=4))
        """
        return _oracles.get(self.oracle, epsilon=self.epsilon, d=int(self.tree.level_size[k]), **self.oracle_params)


def group_sizes(n: int, h: int) -> np.ndarray:
    """Sizes of the h groups: ⌈n/h⌉ for the first n mod h, ⌊n/h⌋ for the rest."""
    return np.full(h, n // h, dtype=np.int64) + (np.arange(h) < n % h)


def split_users(true_counts, h: int, rng) -> np.ndarray:
    """Histograms (h, d) of a uniformly random partition of the users into h groups of
    :func:`group_sizes` (sequential multivariate hypergeometric draws: exact, no per-user loop)."""
    gen = as_generator(rng)
    left = np.asarray(true_counts, dtype=np.int64).copy()
    sizes = group_sizes(int(left.sum()), h)
    out = np.zeros((h, left.shape[0]), dtype=np.int64)
    for k in range(h - 1):  # one draw per level
        out[k] = gen.multivariate_hypergeometric(left, int(sizes[k]))
        left -= out[k]
    out[h - 1] = left
    return out


def design(d: int, n: int, oracle: str, epsilon: float, branching: int = 2, **oracle_params):
    """(tree, users per collected level, per-level model variances with the root's 0, level oracles)
    of a hierarchical histogram over d values with n users (no data needed).

    The protocol of :func:`collect` (Cormode, Kulkarni & Srivastava, VLDB 2019, §4); the model
    variance of level k is arXiv Eq. 7, :math:`q(1-q)/(n_k(p-q)^2)`.

    Parameters
    ----------
    d : int
        Domain size.
    n : int
        Number of users, at least one per collected level.
    oracle : str
        Registry name of the frequency oracle of every level (:func:`ldpopt.oracles.get`).
    epsilon : float
        Each user's ε.
    branching : int, default 2
        B, the tree's fan-out.
    **oracle_params
        Passed to the oracle.

    Returns
    -------
    tree : RangeTree
    n_level : ndarray of int
        Users per collected level.
    var : ndarray
        Model variance per level, the root's 0.
    oracles : list of FrequencyOracle
        One per collected level.

    Raises
    ------
    ValueError
        ``n`` below the number of collected levels, or a bad oracle parameter.

    Examples
    --------
    >>> from ldpopt import hierarchy
    >>> tree, n_level, var, oracles = hierarchy.design(8, 1000, "oue", 1.0)
    >>> tree.size, n_level, var.round(4)
    (15, array([334, 333, 333]), array([0.011 , 0.0111, 0.0111, 0.    ]))
    """
    tree = range_tree(d, branching)
    h = len(tree.level_size) - 1
    if n < h:
        raise ValueError(f"n must be at least one user per collected level ({h}), got n = {n}")
    n_level = group_sizes(n, h)
    fos = [_oracles.get(oracle, epsilon=epsilon, d=int(m), **oracle_params) for m in tree.level_size[:-1]]
    var = np.array([fo.approx_variance(int(nk)) for fo, nk in zip(fos, n_level)] + [0.0])
    return tree, n_level, var, fos


def collect(true_counts, oracle: str, epsilon: float, branching: int = 2, *, rng,
            **oracle_params) -> HierarchicalEstimate:
    """Simulate Cormode et al.'s hierarchical histogram on users with histogram ``true_counts``
    over an ordered domain (module notes for the protocol and our choices).

    Cormode, Kulkarni & Srivastava, VLDB 2019, §4: each user reports the node of one level holding
    her value; here the users are split into equal groups by a random partition, and each level's
    counts drawn by the oracle's exact fast path.

    Parameters
    ----------
    true_counts : array_like of int, shape (d,)
        Users per value of the ordered domain.
    oracle : str
        Registry name of the frequency oracle of every level (:func:`ldpopt.oracles.get`).
    epsilon : float
        Each user's ε.
    branching : int, default 2
        B, the tree's fan-out.
    rng : int or numpy.random.Generator
        Seed or generator (keyword-only).
    **oracle_params
        Passed to the oracle.

    Returns
    -------
    HierarchicalEstimate

    Raises
    ------
    ValueError
        ``true_counts`` not non-negative integers, or fewer users than collected levels.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt import hierarchy
    >>> counts = np.array([400, 300, 100, 100, 50, 30, 20, 0])
    >>> est = hierarchy.collect(counts, "oue", epsilon=1.0, rng=0)
    >>> est.y[:4].round(3)
    array([0.274, 0.287, 0.028, 0.197])
    """
    tc = check_counts(true_counts, "true_counts", integral=True)
    n = int(tc.sum())
    tree, n_level, var, fos = design(tc.shape[0], n, oracle, epsilon, branching, **oracle_params)
    gen = as_generator(rng)
    groups = split_users(tc, len(fos), gen)
    lv = level_slices(tree)
    y = np.empty(tree.size)
    for k, fo in enumerate(fos):  # one oracle per level (log_B d of them), each vectorised over its nodes
        counts = fo.sample_counts(tree.node_totals(groups[k])[lv[k]], gen)
        y[lv[k]] = fo.estimate(counts, int(n_level[k])).f_tilde
    y[tree.root] = 1.0
    return HierarchicalEstimate(tree, y, var, n_level, n, fos[0].name, float(epsilon), dict(oracle_params))
