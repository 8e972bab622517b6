"""Many attributes: multi-attribute collection under LDP and consistent marginals (docs/multi.md).

Notes: docs/notes/multi.md, "ldpopt.multi"."""

from .. import _deprecated
from .calm_consistency import ConsistentMarginals, calm_consistency
from .cells import linear_consistency, marginal_cells
from .dataset import MultiDataset
from .fake_data import RSFD, rsfd, rsrfd
from .generate import SYNTHETIC, chain_network, dirichlet_joint, item_presence, log_linear
from .marginals import MarginalEstimates, MarginalSet, all_k_way
from .problem import certify, consistency_problem
from .reconstruct import FittedTable, MaxEntTable, fit_table, maxent, total_variation
from .rounds import rounds_problem
from .sampled import MarginalSampling, calm, smp
from .split import SPL, spl

__all__ = [
           "RSFD",
           "SPL",
           "SYNTHETIC",
           "ConsistentMarginals",
           "FittedTable",
           "MarginalEstimates",
           "MarginalSampling",
           "MarginalSet",
           "MaxEntTable",
           "MultiDataset",
           "all_k_way",
           "calm",
           "calm_consistency",
           "certify",
           "chain_network",
           "consistency_problem",
           "dirichlet_joint",
           "fit_table",
           "item_presence",
           "linear_consistency",
           "log_linear",
           "marginal_cells",
           "maxent",
           "rounds_problem",
           "rsfd",
           "rsrfd",
           "smp",
           "spl",
           "total_variation",
]

# the names this package exported before it was cut to what a user calls: one release, with a DeprecationWarning
__getattr__ = _deprecated.unexported(__name__, {
    "COUPLINGS": "ldpopt.multi.rounds",
    "OBJECTIVES": "ldpopt.multi.problem",
    "RSRFD": "ldpopt.multi.fake_data",
    "MultiProtocol": "ldpopt.multi.protocol",
    "amplified_epsilon": "ldpopt.multi.fake_data",
    "consistency_constraints": "ldpopt.multi.problem",
    "rounds_covariance": "ldpopt.multi.rounds",
})
