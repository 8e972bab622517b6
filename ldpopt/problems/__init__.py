"""Post-processing as constrained convex problems, solved by cvxpy (the referee of the closed forms).

>>> from ldpopt.problems import Problem, SubsetSum, Simplex
>>> # Problem(estimate, "weighted-mle", [Simplex(), SubsetSum([0, 1], 0.3)]).solve()

Notes: docs/notes/problems.md, "ldpopt.problems".
"""

from .. import _deprecated
from . import _moved, check, constraints, errors, objectives, registry, solvers
from .check.certificate import Certificate, certificate
from .check.verdict import Checks
from .constraints.base import (
    Box,
    Constraint,
    Fixed,
    Hierarchy,
    LinearConstraint,
    NonNegative,
    Simplex,
    SimplexDroppedWarning,
    SubsetSum,
    SumTo,
)
from .constraints.order import Monotone
from .constraints.partition import LinearEquality, PartitionTotals
from .constraints.ranges import RangeTree, range_tree
from .errors import (
    InaccurateError,
    InfeasibleError,
    IterationLimitError,
    MissingParameterError,
    SolverError,
    SolverFailedError,
    SolverNotInstalledError,
    SolverWarning,
    UnboundedError,
    UnverifiedError,
)
from .objectives.builtins import BuiltObjective, Objective
from .objectives.smooth import SmoothObjective
from .problem import STRUCTURED, Problem, Solution
from .registry import available_constraints, available_objectives, register_constraint, register_objective
from .solvers.structured import SeparableObjective

__all__ = ["STRUCTURED", "Box", "BuiltObjective", "Certificate", "Checks", "Constraint", "Fixed",
    "Hierarchy",
    "InaccurateError", "InfeasibleError", "IterationLimitError", "LinearConstraint", "LinearEquality", "MissingParameterError",
    "Monotone", "NonNegative", "Objective", "PartitionTotals", "Problem", "RangeTree",
    "SeparableObjective", "Simplex", "SimplexDroppedWarning", "SmoothObjective", "Solution", "SolverError",
    "SolverFailedError", "SolverNotInstalledError", "SolverWarning", "SubsetSum", "SumTo",
    "UnboundedError", "UnverifiedError", "available_constraints",
    "available_objectives", "certificate", "check", "constraints", "errors", "objectives", "range_tree", "register_constraint", "register_objective", "registry",
    "solvers",
]

_moved.install()


def __getattr__(name):
    # the module paths before the folders (ldpopt.problems.checks, .order, ...) and the names the package
    # exported before it was cut to what a user calls: one release, with a DeprecationWarning
    if name in _UNEXPORTED:
        return _unexported(name)
    return _moved.old_module(name)


_UNEXPORTED = {
    "DEFAULT_SOLVER_OPTIONS": "ldpopt.problems.problem",
    "NotApplicable": "ldpopt.problems.solvers.structured",
    "StructuredResult": "ldpopt.problems.solvers.structured",
    "solve_structured": "ldpopt.problems.solvers.structured",
    "UserConstraint": "ldpopt.problems.constraints.base",
    "UserObjective": "ldpopt.problems.objectives.builtins",
    "project_monotone_simplex": "ldpopt.problems.constraints.order",
    "isotonic": "ldpopt.problems.constraints.order",
}
_unexported = _deprecated.unexported(__name__, _UNEXPORTED, stacklevel=3)
__getattr__.names = _UNEXPORTED  # type: ignore[attr-defined]
