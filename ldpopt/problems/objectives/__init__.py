"""Objectives: the protocol (:mod:`.base`), the built-ins (:mod:`.builtins`), per-value forms
(:mod:`.separable`, :mod:`.user_separable`), likelihood and smooth terms (:mod:`.likelihood_terms`,
:mod:`.smooth`) and the recognition of a user's cvxpy callable (:mod:`.recognise`)."""

from .builtins import (
    L1,
    Binomial,
    BuiltObjective,
    CentralMLE,
    LeastSquares,
    Multinomial,
    Objective,
    Posterior,
    UserObjective,
    WeightedMLE,
    WeightedMLENaive,
    available,
    make_objective,
)

__all__ = ["L1", "Binomial", "BuiltObjective", "CentralMLE", "LeastSquares", "Multinomial", "Objective", "Posterior", "UserObjective",
           "WeightedMLE", "WeightedMLENaive", "available", "make_objective"]
