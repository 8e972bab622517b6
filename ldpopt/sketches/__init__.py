"""Sketch and Bloom-filter oracles decoded as problems: RAPPOR's §4 decoder and ldpopt's constrained
decoder (:mod:`.rappor_decode`), Apple's sketch estimates with their correct variance for the
consistency methods (:mod:`.consistency`)."""

from .consistency import sketch_estimate
from .rappor_decode import DecodeResult, constrained, lasso_ls, regression

__all__ = ["DecodeResult", "constrained", "lasso_ls", "regression", "sketch_estimate"]
