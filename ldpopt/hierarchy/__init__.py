"""Range queries under LDP on an ordered domain: hierarchical histograms (Cormode,
Kulkarni & Srivastava VLDB 2019 §4) with Hay et al.'s consistency (VLDB 2010 §3) generalised to
per-level variances, their exact range variances, and the Haar-wavelet alternative (HaarHRR); any
tree of sums with any per-node variances by linear-time GLS, every released cell with its SE, CI and
correction in σ.

Notes: docs/notes/python.md, "ldpopt.hierarchy"."""

from . import attacks
from .collect import HierarchicalEstimate, collect, design
from .consistency import consistency, consistency_adjoint
from .gls import GLSFit, gls
from .haar import haar_collect, haar_leaves, haar_range_variance
from .nonneg import nonnegative_heuristic, nonnegative_qp
from .queries import cover_answers, leaf_answers, random_ranges
from .release import central_sampler, clip_round, tree_cells
from .tree import Tree
from .variance import flat_range_variance, hierarchical_range_variance

__all__ = [
           "GLSFit",
           "HierarchicalEstimate",
           "Tree",
           "attacks",
           "central_sampler",
           "clip_round",
           "collect",
           "consistency",
           "consistency_adjoint",
           "cover_answers",
           "design",
           "flat_range_variance",
           "gls",
           "haar_collect",
           "haar_leaves",
           "haar_range_variance",
           "hierarchical_range_variance",
           "leaf_answers",
           "nonnegative_heuristic",
           "nonnegative_qp",
           "random_ranges",
           "tree_cells",
]
