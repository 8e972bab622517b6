"""Typed solver failures and the warning emitted for non-optimal solves.

``Problem.solve(strict=True)`` raises one of the :class:`SolverError` subclasses for any status but
``"optimal"``; ``strict=False`` returns the :class:`~ldpopt.problems.Solution` with its honest status
and emits a :class:`SolverWarning` (``warnings.simplefilter("error", SolverWarning)`` turns those
into exceptions; ``pytest.warns(SolverWarning)`` catches them). Every exception carries the
``Solution`` it was raised for as ``.solution`` (with ``f`` = the solver's last iterate when it
returned one, NaN otherwise).
"""

from __future__ import annotations

__all__ = [
    "InaccurateError",
    "InfeasibleError",
    "IterationLimitError",
    "MissingParameterError",
    "SolverError",
    "SolverFailedError",
    "SolverNotInstalledError",
    "SolverWarning",
    "UnboundedError",
    "UnverifiedError",
    "error_for_status",
]


class MissingParameterError(ValueError):
    """A cvxpy ``Parameter`` in the objective or a constraint has no value when ``solve()`` is called
    (the message names it); set ``parameter.value`` first."""


class SolverWarning(UserWarning):
    """A solve ended with a status other than ``"optimal"`` (strict=False)."""


class SolverError(RuntimeError):
    """Base class: a solve did not end ``"optimal"``. ``.solution`` holds what the solver returned."""

    def __init__(self, message: str, solution=None):
        super().__init__(message)
        self.solution = solution


class InfeasibleError(SolverError):
    """Status ``infeasible`` or ``infeasible_inaccurate``: the constraints contradict each other."""


class UnboundedError(SolverError):
    """Status ``unbounded`` or ``unbounded_inaccurate``: the objective decreases without limit."""


class InaccurateError(SolverError):
    """Status ``optimal_inaccurate`` (the solver stopped at its reduced tolerances) or ``inaccurate``
    (the solver said optimal, ldpopt's own check of the point failed)."""


class UnverifiedError(SolverError):
    """Status ``optimal_unverified``: the solver said optimal and f passed ldpopt's feasibility check,
    but stationarity or the duality gap could not be checked (``solution.checks.not_run`` says why),
    so optimality is not certified."""


class IterationLimitError(SolverError):
    """Status ``user_limit``: the solver hit ``max_iter`` / ``max_iters`` / a time limit."""


class SolverNotInstalledError(SolverError):
    """Status ``solver_not_installed`` (ldpopt's own status: cvxpy was never called)."""


class SolverFailedError(SolverError):
    """Status ``solver_error`` (or ``infeasible_or_unbounded``): the solver broke down or could not
    tell; cvxpy's own exception text is in the message."""


_BY_STATUS = {
    "infeasible": InfeasibleError,
    "infeasible_inaccurate": InfeasibleError,
    "unbounded": UnboundedError,
    "unbounded_inaccurate": UnboundedError,
    "optimal_inaccurate": InaccurateError,
    "inaccurate": InaccurateError,
    "optimal_unverified": UnverifiedError,
    "user_limit": IterationLimitError,
    "time_limit": IterationLimitError,
    "solver_not_installed": SolverNotInstalledError,
}


def error_for_status(status: str) -> type[SolverError]:
    """The exception class ``strict=True`` raises for a non-optimal ``status``."""
    return _BY_STATUS.get(status, SolverFailedError)
