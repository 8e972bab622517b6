"""What every objective is: :class:`Objective` (J(f) and its cvxpy form) and :class:`BuiltObjective`
(the scaled expression handed to cvxpy), and the solver's unit :func:`default_scale` (``Problem``'s
variable is x = f/scale). The scaling convention is :mod:`.objectives`'."""

from __future__ import annotations

import abc
from dataclasses import dataclass, field

import cvxpy as cp
import numpy as np

from ..estimate import Estimate

__all__ = ["BuiltObjective", "Objective", "default_scale"]


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
    #: scale s = max(σ, 1/d) (True) or σ (False); see :func:`default_scale`
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


def default_scale(estimate, floor: bool = True) -> float:
    """The solver's unit s (its variable is x = f/s): ``max(σ, 1/d)``, σ of Wang et al. Eq. 7
    (``floor=False``: σ alone, for the weighted MLE, see below).

    Both sides matter (a choice the papers are silent on). x̃ = f̃/s carries noise σ/s and the
    constraints carry the total Σ x = 1/s. With s = σ alone the noise is O(1) but the total is 1/σ,
    ~10⁵–10⁷ once n is large or ε is large (σ ≪ 1/d), and the simplex rows have coefficients
    σ ≤ 1e-5: OSQP then stops at ``user_limit`` or, because its primal-infeasibility test
    ‖Aᵀδy‖ ≤ ε_inf‖δy‖ is met by any multiple of the sum row once its coefficients are below
    ε_inf = 1e-5, certifies the always-feasible simplex "infeasible" (37 of 216
    cases of a CLS grid). With s = max(σ, 1/d) the noise is ≤ 1 per coordinate, the mean
    coordinate ≤ 1 and the total ≤ d; when σ ≥ 1/d (small n, small ε) nothing changes.

    The weighted MLE's cone form divides each residual by its own variance (y_v = 1 + βx_v), which
    is what keeps it well scaled; measured, s = σ passes ldpopt's check where s = 1/d does not
    (OUE, ε = 10, d = 10, n = 10⁹), so it keeps s = σ (``Objective.frequency_floor = False``).
    """
    s = max(float(estimate.sigma), 1.0 / estimate.d) if floor else float(estimate.sigma)
    return s if np.isfinite(s) and s > 0 else 1.0
