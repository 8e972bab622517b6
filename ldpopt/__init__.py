"""ldpopt: post-processing of LDP frequency estimates, closed forms verified against cvxpy."""

from . import datasets, methods, oracles
from .estimate import Estimate
from .methods import postprocess

__version__ = "0.1.0"

__all__ = ["Estimate", "datasets", "methods", "oracles", "postprocess", "__version__"]
