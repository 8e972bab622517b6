"""Hierarchical histograms under LDP: one frequency oracle per level of a B-ary range tree.

Cormode, Kulkarni & Srivastava, *Answering Range Queries Under Local Differential Privacy*, VLDB
2019, §4 ("hierarchical histograms", HH): the ordered domain {0, …, d−1} is the leaf level of a
B-ary tree (:class:`~ldpopt.problems.ranges.RangeTree`); each user is assigned one level and
reports the node of that level containing her value through an ordinary ε-LDP frequency oracle
over that level's nodes (no budget splitting: each user spends all of ε on one level). The root is
not collected: its frequency is 1.

Choices where the paper is silent or that we made differently (all documented, all parameters):

* levels: every level except the root is collected (h = levels − 1 groups of users);
* split: the paper samples a level per user uniformly at random. We split the n users into h groups
  of sizes ⌊n/h⌋ or ⌈n/h⌉ by a uniformly random partition (simulated exactly as a sequence of
  multivariate hypergeometric draws of each group's histogram). The sizes are then fixed, so each
  level's f̃ = (c/n_k − q)/(p − q) is unbiased for the population frequencies, and the variance is
  exact in closed form (:mod:`.variance`): the oracle's covariance at n_k users plus the sampling
  covariance (N − n_k)/((N − 1) n_k) · (diag f − f fᵀ) of a group drawn without replacement;
* the counts of a level are drawn by the oracle's exact fast path (``sample_counts``, joint law of
  the real protocol) on that group's level histogram;
* consistency weights: level k's model variance is the oracle's σ² = q(1−q)/(n_k(p−q)²) (Wang et
  al. arXiv Eq. 7, the f-free part of the variance, since the true f is unknown), the root's 0.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .. import oracles as _oracles
from .._validation import as_generator, check_counts
from ..problems.ranges import RangeTree, range_tree
from .consistency import consistency, level_slices

__all__ = ["HierarchicalEstimate", "collect", "design", "group_sizes", "split_users"]


@dataclass(frozen=True)
class HierarchicalEstimate:
    """Raw per-level estimates of a hierarchical histogram.

    ``y``: one unbiased frequency estimate per tree node (leaves first, root = 1); ``var``: the
    model variance of each level (root 0) used as consistency weights; ``n_level``: users per
    collected level; ``n``: all users; ``oracle``, ``epsilon``, ``oracle_params`` as given.
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
        """Hay et al.'s constrained inference of ``y`` (:func:`.consistency.consistency`)."""
        return consistency(self.tree, self.y, self.var)

    def level_oracle(self, k: int):
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
    of a hierarchical histogram over d values with n users (no data needed)."""
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
    over an ordered domain (module docstring for the protocol and our choices)."""
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
