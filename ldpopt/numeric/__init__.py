"""Numerical (ordinal, continuous) attributes under LDP: the Square Wave mechanism with EM / EMS
(Li et al. SIGMOD 2020) and ldpopt's convex alternative, a smoothness-penalised exact likelihood.

Modules: :mod:`.square_wave` (mechanism, sampler, exact discretised channel), :mod:`.em` (EM and
EMS), :mod:`.penalized` (penalised MLE on the simplex, λ by held-out likelihood), :mod:`.metrics`
(Wasserstein-1, range-query and quantile errors), :mod:`.columns` (numeric columns: real ones derived
from the shipped transaction files, synthetic Beta(5, 2)).
"""

from .em import EMResult, em, ems
from .metrics import quantile_error, range_query_error, wasserstein1
from .penalized import PenalizedResult, choose_lambda, penalized_mle
from .square_wave import SquareWave, sw_half_width

__all__ = ["EMResult", "PenalizedResult", "SquareWave", "choose_lambda", "em", "ems", "penalized_mle",
           "quantile_error", "range_query_error", "sw_half_width", "wasserstein1"]
