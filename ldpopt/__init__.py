"""ldpopt: post-processing of LDP frequency estimates, closed forms verified against cvxpy."""

from . import oracles
from .estimate import Estimate

__version__ = "0.1.0"

__all__ = ["Estimate", "oracles", "__version__"]
