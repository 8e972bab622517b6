"""Many attributes: multi-attribute collection under LDP and consistent marginals (docs/multi.md).

Notes: docs/notes/multi.md, "ldpopt.multi"."""

from .calm_consistency import ConsistentMarginals, calm_consistency
from .cells import linear_consistency, marginal_cells
from .dataset import MultiDataset
from .fake_data import RSFD, RSRFD, amplified_epsilon, rsfd, rsrfd
from .generate import SYNTHETIC, chain_network, dirichlet_joint, item_presence, log_linear
from .marginals import MarginalEstimates, MarginalSet, all_k_way
from .problem import OBJECTIVES, certify, consistency_constraints, consistency_problem
from .protocol import MultiProtocol
from .reconstruct import FittedTable, MaxEntTable, fit_table, maxent, total_variation
from .rounds import COUPLINGS, rounds_covariance, rounds_problem
from .sampled import MarginalSampling, calm, smp
from .split import SPL, spl

__all__ = [
           "COUPLINGS",
           "OBJECTIVES",
           "RSFD",
           "RSRFD",
           "SPL",
           "SYNTHETIC",
           "ConsistentMarginals",
           "FittedTable",
           "MarginalEstimates",
           "MarginalSampling",
           "MarginalSet",
           "MaxEntTable",
           "MultiDataset",
           "MultiProtocol",
           "all_k_way",
           "amplified_epsilon",
           "calm",
           "calm_consistency",
           "certify",
           "chain_network",
           "consistency_constraints",
           "consistency_problem",
           "dirichlet_joint",
           "fit_table",
           "item_presence",
           "linear_consistency",
           "log_linear",
           "marginal_cells",
           "maxent",
           "rounds_covariance",
           "rounds_problem",
           "rsfd",
           "rsrfd",
           "smp",
           "spl",
           "total_variation",
]
