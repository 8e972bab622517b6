"""Maximum likelihood from the exact likelihood of the support counts (EM / IBU), one idea per module:

``ibu``      the method: EM / IBU iterations and the exact solve behind ``em`` and ``solve_mle``
``exact``    the exact maximum-likelihood solves (the binomial dual's per-value roots, GRR's multinomial)
``loglik``   the two log-likelihoods and their gradients
"""

from __future__ import annotations

from .exact import ConvergenceError, ConvergenceWarning
from .ibu import MLEResult, em, ibu_step, kkt_residual, likelihood_for, solve_mle
from .loglik import loglik_binomial, loglik_binomial_grad, loglik_multinomial, loglik_multinomial_grad

__all__ = ["ConvergenceError", "ConvergenceWarning", "MLEResult", "em", "ibu_step", "kkt_residual", "likelihood_for",
           "loglik_binomial", "loglik_binomial_grad", "loglik_multinomial", "loglik_multinomial_grad", "solve_mle"]
