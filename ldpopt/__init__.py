"""ldpopt: post-processing of LDP frequency estimates, closed forms verified against cvxpy."""

from . import datasets, methods, oracles, problems
from .estimate import Estimate
from .methods import postprocess
from .problems import Problem, Solution, SolverError, SolverWarning

__version__ = "0.1.0"

__all__ = ["Estimate", "Problem", "Solution", "SolverError", "SolverWarning", "datasets", "methods",
           "oracles", "postprocess", "problems", "__version__"]
