"""What every objective is: :class:`Objective` (J(f) and its cvxpy form) and :class:`BuiltObjective`
(the scaled expression handed to cvxpy). The scaling convention is :mod:`.objectives`'."""

from __future__ import annotations

import abc
from dataclasses import dataclass, field

import cvxpy as cp
import numpy as np

from ..estimate import Estimate

__all__ = ["BuiltObjective", "Objective"]


@dataclass
class BuiltObjective:
    """What an objective hands to cvxpy: minimise ``expr = multiplier·J(f) + offset`` subject to the
    problem's constraints and ``constraints`` (auxiliary epigraph cones, not reported in duals)."""

    expr: cp.Expression
    multiplier: float = 1.0
    offset: float = 0.0
    constraints: list = field(default_factory=list)


class Objective(abc.ABC):
    """Base class. Subclasses set ``name`` and implement :meth:`build`. The solver is not the
    objective's choice: ``Problem.solve()`` walks the chain of :mod:`.policy` for the problem's
    class (QP or cone program)."""

    name: str = "objective"
    #: whether :meth:`build` expects the scaled variable (s = σ); False means s = 1 (raw units)
    scaled: bool = True
    #: per-solver options overriding ``problem.DEFAULT_SOLVER_OPTIONS`` for this objective
    solver_options: dict = {}
    #: scale s = max(σ, 1/d) (True) or σ (False); see ``scaling.default_scale``
    frequency_floor: bool = True

    def check(self, estimate: Estimate) -> None:
        """Raise ``ValueError`` if this objective cannot be used with ``estimate``."""

    @abc.abstractmethod
    def build(self, f: cp.Expression, x: cp.Variable, scale: float, estimate: Estimate) -> BuiltObjective:
        """cvxpy form of the objective; ``f = scale * x`` is the frequency vector."""

    def value(self, f, estimate: Estimate) -> float:
        """J(f) evaluated with numpy."""
        raise NotImplementedError(f"objective {self.name!r} has no numpy value")

    def gradient(self, f, estimate: Estimate) -> np.ndarray:
        """∇J(f) evaluated with numpy (smooth objectives only)."""
        raise NotImplementedError(f"objective {self.name!r} has no gradient")

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"
