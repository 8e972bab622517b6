"""Post-processing as constrained convex problems, solved by cvxpy (the referee of the closed forms).

>>> from ldpopt.problems import Problem, SubsetSum, Simplex
>>> # Problem(estimate, "weighted-mle", [Simplex(), SubsetSum([0, 1], 0.3)]).solve()

``Problem.solve()`` uses ldpopt's own dual solver (:func:`solve_structured`, solver name
``"LDPOPT-STRUCTURED"``) where it applies — separable smooth objectives with built-in linear
constraints — and otherwise, or when its answer does not pass, a documented cvxpy solver chain
(:mod:`.policy`). Every Solution is checked by ldpopt (:mod:`.checks`) with the one solver-free
certificate (:func:`certificate`). Objectives (:mod:`.objectives`): ``"cls"``, ``"weighted-mle"``, ``"multinomial"``, ``"binomial"``,
``"l1"``, ``"posterior"`` and user callables. Constraints (:mod:`.constraints`): the simplex by
default, :class:`Box`, :class:`SubsetSum`, :class:`Hierarchy`, :class:`Fixed`, :class:`NonNegative`,
:class:`SumTo`, user callables. Failures (:mod:`.errors`): typed exceptions with ``strict=True``,
:class:`SolverWarning` otherwise.
"""

from . import checks, constraints, errors, objectives, policy
from .checks import Checks
from .constraints import (Box, Constraint, Fixed, Hierarchy, NonNegative, Simplex, SubsetSum, SumTo,
                          UserConstraint)
from .errors import (InaccurateError, InfeasibleError, IterationLimitError, SolverError,
                     SolverFailedError, SolverNotInstalledError, SolverWarning, UnboundedError)
from .objectives import Objective, UserObjective
from .objectives import available as available_objectives
from .problem import DEFAULT_SOLVER_OPTIONS, STRUCTURED, Problem, Solution
from .certificate import Certificate, certificate
from .structured import NotApplicable, SeparableObjective, StructuredResult, solve_structured

__all__ = [
    "DEFAULT_SOLVER_OPTIONS", "STRUCTURED", "Box", "Certificate", "Checks", "Constraint", "NotApplicable",
    "SeparableObjective", "StructuredResult", "certificate", "solve_structured", "Fixed", "Hierarchy", "InaccurateError",
    "InfeasibleError", "IterationLimitError", "NonNegative", "Objective", "Problem", "Simplex",
    "Solution", "SolverError", "SolverFailedError", "SolverNotInstalledError", "SolverWarning",
    "SubsetSum", "SumTo", "UnboundedError", "UserConstraint", "UserObjective", "available_objectives",
    "checks", "constraints", "errors", "objectives", "policy",
]
