"""Numerical (ordinal, continuous) attributes under LDP: the Square Wave mechanism with EM / EMS
(Li et al. SIGMOD 2020) and ldpopt's convex alternative, a smoothness-penalised exact likelihood.

Modules: :mod:`.square_wave` (mechanism, sampler, exact discretised channel), :mod:`.em` (EM and
EMS), :mod:`.penalized` (penalised MLE on the simplex, λ by held-out likelihood), :mod:`.metrics`
(Wasserstein-1, range-query and quantile errors), :mod:`.columns` (numeric columns: real ones derived
from the shipped transaction files, synthetic Beta(5, 2)).
"""

from .. import _deprecated
from .em import EMResult, em, ems
from .penalized import PenalizedResult, choose_lambda, penalized_mle
from .square_wave import SquareWave

__all__ = ["EMResult", "PenalizedResult", "SquareWave", "choose_lambda", "em", "ems", "penalized_mle"]

# the names this package exported before it was cut to what a user calls: one release, with a DeprecationWarning
__getattr__ = _deprecated.unexported(__name__, {
    "quantile_error": "ldpopt.numeric.metrics",
    "range_query_error": "ldpopt.numeric.metrics",
    "sw_half_width": "ldpopt.numeric.square_wave",
    "wasserstein1": "ldpopt.numeric.metrics",
})
