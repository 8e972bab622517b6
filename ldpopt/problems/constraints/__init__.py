"""Constraints: the protocol and the core built-ins (:mod:`.base`), Monotone (:mod:`.order`),
PartitionTotals and LinearEquality (:mod:`.partition`), range trees (:mod:`.ranges`), Jacobians
(:mod:`.jacobians`), and infeasibility decided before any solver (:mod:`.feasibility`, :mod:`.farkas`,
:mod:`.exact_lp`)."""

from . import order, partition, ranges
from .base import (
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
    UserConstraint,
    as_constraint,
    example_function,
    warn_if_simplex_dropped,
)

__all__ = ["Box", "Constraint", "Fixed", "Hierarchy", "LinearConstraint", "NonNegative", "Simplex", "SimplexDroppedWarning", "SubsetSum",
           "SumTo", "UserConstraint", "as_constraint", "example_function", "order", "partition", "ranges",
           "warn_if_simplex_dropped"]
