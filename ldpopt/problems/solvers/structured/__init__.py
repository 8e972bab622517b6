"""ldpopt's own solver for separable objectives on the simplex plus linear constraints.

:func:`solve_structured` solves ``Problem(estimate, objective, constraints)`` for the built-in smooth
objectives (cls, weighted-mle, multinomial, binomial, posterior) and :class:`SeparableObjective`, with
constraints Simplex / NonNegative + SumTo, Box, Fixed, SubsetSum (==, <=, >=), PartitionTotals and Hierarchy, by
Newton on the Lagrange multipliers of the linear rows (:mod:`ldpopt.problems.dual.dual`) with per-value argmins in closed
form (:mod:`ldpopt.problems.objectives.separable`); on the simplex alone, cls and the weighted MLE by the closed forms'
expected-O(d) pivot search (:mod:`ldpopt.problems.dual.simplex`), the binomial and multinomial likelihoods by Newton on
the simplex multiplier over their distinct counts (:mod:`ldpopt.problems.dual.grouped`), with disjoint subset sums /
partition totals block by block (:mod:`ldpopt.problems.dual.blocks`: each block a simplex of its own mass), and one
Monotone chain by
generalised PAV with the simplex multiplier outside (:mod:`ldpopt.problems.dual.chain`), each certified like any answer.
It returns f, the multipliers in ``Solution.duals`` form and the
certificate of :mod:`ldpopt.problems.check.certificate`. Other objectives/constraints raise
:class:`NotApplicable` (use the cvxpy route).
"""

from ...dual.structure import compile_constraints
from ...objectives.separable import NotApplicable, separable_for
from ...objectives.user_separable import SeparableObjective
from .solver import StructuredResult, solve_structured

__all__ = ["NotApplicable", "SeparableObjective", "StructuredResult", "compile_constraints",
           "separable_for", "solve_structured"]
