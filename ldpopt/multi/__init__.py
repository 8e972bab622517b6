"""Many attributes: multi-attribute collection under LDP and consistent marginals (docs/multi.md).

* data: :class:`MultiDataset` (n users × k attributes), :func:`item_presence` (Retail / BMS items as
  binary attributes), :func:`chain_network`, :func:`log_linear` (tunable 3-way interactions) and
  :func:`dirichlet_joint` (synthetic data with known laws, ``SYNTHETIC`` by name);
* collection (each protocol with a real client path and a fast path exact in law, and the exact ε of
  one user's report): :func:`spl`, :func:`smp`, :func:`rsfd` (RS+FD[GRR], RS+FD[OUE-z]),
  :func:`rsrfd` (RS+RFD: fake data from a public prior) and
  :func:`calm` (each user one k-way marginal through any ldpopt oracle) → :class:`MarginalEstimates`;
* consistency: :func:`consistency_problem` (an ldpopt Problem: CLS, weighted, exact likelihood) and
  :func:`calm_consistency` (CALM's consistency and non-negativity steps, iterated);
* reconstruction: :func:`maxent` (the maximum-entropy table given consistent marginals, by IPF) and
  :func:`fit_table` (the best-fitting table of the same family for any marginals, Private-PGM's
  estimator) answer marginals that were not collected; :func:`total_variation` scores them.
"""

from .calm_consistency import ConsistentMarginals, calm_consistency
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
           "log_linear",
           "maxent",
           "rounds_covariance",
           "rounds_problem",
           "rsfd",
           "rsrfd",
           "smp",
           "spl",
           "total_variation",
]
