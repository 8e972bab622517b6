"""Range queries under LDP on an ordered domain: hierarchical histograms (Cormode,
Kulkarni & Srivastava VLDB 2019 §4) with Hay et al.'s consistency (VLDB 2010 §3) generalised to
per-level variances, their exact range variances, and the Haar-wavelet alternative (HaarHRR); any
tree of sums with any per-node variances by linear-time GLS, every released cell with its SE, CI and
correction in σ.

Notes: docs/notes/python.md, "ldpopt.hierarchy"."""

from .. import _deprecated
from . import attacks
from .collect import HierarchicalEstimate, collect, design
from .consistency import consistency
from .gls import GLSFit, gls
from .nonneg import nonnegative_heuristic
from .release import central_sampler, tree_cells
from .tree import Tree

__all__ = [
           "GLSFit",
           "HierarchicalEstimate",
           "Tree",
           "attacks",
           "central_sampler",
           "collect",
           "consistency",
           "design",
           "gls",
           "nonnegative_heuristic",
           "tree_cells",
]

# the names this package exported before it was cut to what a user calls: one release, with a DeprecationWarning
__getattr__ = _deprecated.unexported(__name__, {
    "clip_round": "ldpopt.hierarchy.release",
    "consistency_adjoint": "ldpopt.hierarchy.consistency",
    "cover_answers": "ldpopt.hierarchy.queries",
    "flat_range_variance": "ldpopt.hierarchy.variance",
    "haar_collect": "ldpopt.hierarchy.haar",
    "haar_leaves": "ldpopt.hierarchy.haar",
    "haar_range_variance": "ldpopt.hierarchy.haar",
    "hierarchical_range_variance": "ldpopt.hierarchy.variance",
    "leaf_answers": "ldpopt.hierarchy.queries",
    "nonnegative_qp": "ldpopt.hierarchy.nonneg",
    "random_ranges": "ldpopt.hierarchy.queries",
})
