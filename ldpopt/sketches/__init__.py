"""Sketch and Bloom-filter oracles decoded as problems: RAPPOR's §4 decoder and ldpopt's constrained
decoder (:mod:`.rappor_decode`), Apple's sketch estimates with their correct variance for the
consistency methods (:mod:`.consistency`), non-negative ridge regression with a certified distance
bound, pure-ldp's RAPPOR decoder (:mod:`.ridge`)."""

from .. import _deprecated
from .consistency import sketch_estimate
from .rappor_decode import DecodeResult, constrained, lasso_ls, regression
from .ridge import RidgeFit, nonneg_ridge

__all__ = ["DecodeResult", "RidgeFit", "constrained", "lasso_ls", "nonneg_ridge", "regression",
           "sketch_estimate"]

# the names this package exported before it was cut to what a user calls: one release, with a DeprecationWarning
__getattr__ = _deprecated.unexported(__name__, {
    "distance_bound": "ldpopt.sketches.ridge",
})
