"""Sketch and Bloom-filter oracles decoded as problems: RAPPOR's §4 decoder and ldpopt's constrained
decoder (:mod:`.rappor_decode`), Apple's sketch estimates with their correct variance for the
consistency methods (:mod:`.consistency`), non-negative ridge regression with a certified distance
bound, pure-ldp's RAPPOR decoder (:mod:`.ridge`)."""

from .consistency import sketch_estimate
from .rappor_decode import DecodeResult, constrained, lasso_ls, regression
from .ridge import RidgeFit, distance_bound, nonneg_ridge

__all__ = ["DecodeResult", "RidgeFit", "constrained", "distance_bound", "lasso_ls", "nonneg_ridge", "regression",
           "sketch_estimate"]
