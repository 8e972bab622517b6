"""Typed solver failures and the warning emitted for non-optimal solves.

``Problem.solve(strict=True)`` raises one of the :class:`SolverError` subclasses for any status but
``"optimal"``; ``strict=False`` returns the :class:`~ldpopt.problems.Solution` with its honest status
and emits a :class:`SolverWarning` (``warnings.simplefilter("error", SolverWarning)`` turns those
into exceptions; ``pytest.warns(SolverWarning)`` catches them). Every exception carries the
``Solution`` it was raised for as ``.solution`` (with ``f`` = the solver's last iterate when it
returned one, NaN otherwise).
"""

from __future__ import annotations

import os
import sys
import sysconfig
from functools import lru_cache

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
    (the message names it); set ``parameter.value`` first.

    Examples
    --------
    >>> import cvxpy as cp
    >>> import numpy as np
    >>> import ldpopt
    >>> est = ldpopt.oracles.get("grr", 1.0, 4).estimate(np.array([46_000, 30_000, 15_000, 9_000]), 100_000)
    >>> from ldpopt.problems import MissingParameterError, Simplex
    >>> limit = cp.Parameter(name="limit")
    >>> prob = ldpopt.Problem(est, constraints=[Simplex(), lambda f, e: f[0] <= limit])
    >>> try:
    ...     prob.solve()
    ... except MissingParameterError as exc:
    ...     print(exc)
    cvxpy Parameter 'limit' has no value: set limit.value before solve() (Parameters are read at each solve)
    >>> limit.value = 0.5
    >>> prob.solve().f.round(4).tolist()
    [0.5, 0.4996, 0.0004, 0.0]
    """


class SolverWarning(UserWarning):
    """A solve ended with a status other than ``"optimal"`` (strict=False).

    Examples
    --------
    >>> import warnings
    >>> import numpy as np
    >>> import ldpopt
    >>> est = ldpopt.oracles.get("grr", 1.0, 4).estimate(np.array([46_000, 30_000, 15_000, 9_000]), 100_000)
    >>> from ldpopt.problems import Simplex, SubsetSum
    >>> impossible = [Simplex(), SubsetSum([0, 1], 1.5)]   # two values cannot hold 1.5 of a total of 1
    >>> from ldpopt.problems import SolverWarning
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     sol = ldpopt.Problem(est, constraints=impossible).solve()
    >>> sol.status, [w.category is SolverWarning for w in caught]
    ('infeasible', [True])
    """


class SolverError(RuntimeError):
    """Base class: a solve did not end ``"optimal"``. ``.solution`` holds what the solver returned.

    Parameters
    ----------
    message : str
        The one-line message.
    solution : Solution or None, default None
        The Solution the solve returned (``.solution``).

    Examples
    --------
    >>> import numpy as np
    >>> import ldpopt
    >>> est = ldpopt.oracles.get("grr", 1.0, 4).estimate(np.array([46_000, 30_000, 15_000, 9_000]), 100_000)
    >>> from ldpopt.problems import Simplex, SubsetSum
    >>> impossible = [Simplex(), SubsetSum([0, 1], 1.5)]   # two values cannot hold 1.5 of a total of 1
    >>> from ldpopt.problems import SolverError
    >>> try:
    ...     ldpopt.Problem(est, constraints=impossible).solve(strict=True)
    ... except SolverError as exc:
    ...     print(type(exc).__name__, exc.solution.status)
    InfeasibleError infeasible
    """

    def __init__(self, message: str, solution=None):
        super().__init__(message)
        self.solution = solution


class InfeasibleError(SolverError):
    """Status ``infeasible`` or ``infeasible_inaccurate``: the constraints contradict each other.

    Examples
    --------
    >>> import numpy as np
    >>> import ldpopt
    >>> est = ldpopt.oracles.get("grr", 1.0, 4).estimate(np.array([46_000, 30_000, 15_000, 9_000]), 100_000)
    >>> from ldpopt.problems import Simplex, SubsetSum
    >>> impossible = [Simplex(), SubsetSum([0, 1], 1.5)]   # two values cannot hold 1.5 of a total of 1
    >>> from ldpopt.problems import InfeasibleError
    >>> try:
    ...     ldpopt.Problem(est, constraints=impossible).solve(strict=True)
    ... except InfeasibleError as exc:
    ...     print(exc.solution.solver, exc.solution.infeasibility is not None)
    LDPOPT-FEASIBILITY True
    """


class UnboundedError(SolverError):
    """Status ``unbounded`` or ``unbounded_inaccurate``: the objective decreases without limit.

    Examples
    --------
    >>> from ldpopt.problems import SolverError, UnboundedError
    >>> from ldpopt.problems.errors import error_for_status
    >>> error_for_status("unbounded") is UnboundedError, issubclass(UnboundedError, SolverError)
    (True, True)
    """


class InaccurateError(SolverError):
    """Status ``optimal_inaccurate`` (the solver stopped at its reduced tolerances) or ``inaccurate``
    (the solver said optimal, ldpopt's own check of the point failed).

    Examples
    --------
    >>> from ldpopt.problems import InaccurateError
    >>> from ldpopt.problems.errors import error_for_status
    >>> error_for_status("optimal_inaccurate") is InaccurateError, error_for_status("inaccurate") is InaccurateError
    (True, True)
    """


class UnverifiedError(SolverError):
    """Status ``optimal_unverified``: the solver said optimal and f passed ldpopt's feasibility check,
    but stationarity or the duality gap could not be checked (``solution.checks.not_run`` says why),
    so optimality is not certified.

    Examples
    --------
    >>> from ldpopt.problems import UnverifiedError
    >>> from ldpopt.problems.errors import error_for_status
    >>> error_for_status("optimal_unverified") is UnverifiedError
    True
    """


class IterationLimitError(SolverError):
    """Status ``user_limit`` (or ``time_limit``): the solver hit ``max_iter`` / ``max_iters`` / a time limit.

    Examples
    --------
    >>> from ldpopt.problems import IterationLimitError
    >>> from ldpopt.problems.errors import error_for_status
    >>> error_for_status("user_limit") is IterationLimitError, error_for_status("time_limit") is IterationLimitError
    (True, True)
    """


class SolverNotInstalledError(SolverError):
    """Status ``solver_not_installed`` (ldpopt's own status: cvxpy was never called).

    Examples
    --------
    >>> from ldpopt.problems import SolverNotInstalledError
    >>> from ldpopt.problems.errors import error_for_status
    >>> error_for_status("solver_not_installed") is SolverNotInstalledError
    True
    """


class SolverFailedError(SolverError):
    """Status ``solver_error`` (or ``infeasible_or_unbounded``): the solver broke down or could not
    tell; cvxpy's own exception text is in the message.

    Examples
    --------
    >>> from ldpopt.problems import SolverFailedError
    >>> from ldpopt.problems.errors import error_for_status
    >>> error_for_status("solver_error") is SolverFailedError, error_for_status("infeasible_or_unbounded") is SolverFailedError
    (True, True)
    """


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
    """The exception class ``strict=True`` raises for a non-optimal ``status``.

    Parameters
    ----------
    status : str
        A Solution's status.

    Returns
    -------
    type
        A :class:`SolverError` subclass; :class:`SolverFailedError` for a status not listed.

    Examples
    --------
    >>> from ldpopt.problems.errors import error_for_status
    >>> error_for_status("infeasible").__name__, error_for_status("something else").__name__
    ('InfeasibleError', 'SolverFailedError')
    """
    return _BY_STATUS.get(status, SolverFailedError)


@lru_cache(maxsize=1)
def _library_dirs() -> tuple[str, ...]:
    """The folders whose code is not the user's: ldpopt's package and the interpreter's and its
    installed packages' (stdlib, site-packages)."""
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # ldpopt/
    dirs = {here}
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        path = sysconfig.get_paths().get(key)
        if path:
            dirs.add(os.path.abspath(path))
    dirs.update(os.path.abspath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix))
    return tuple(sorted(dirs))


def user_code_raised(exc: BaseException) -> bool:
    """True when ``exc`` passed through the user's own code on its way up: a frame whose file is
    outside ldpopt and outside the interpreter's and installed packages' folders (a callable
    objective's or constraint's function, wherever ldpopt or a solver called it). ``solve()`` lets
    such an exception propagate unchanged, as documented; any other exception raised inside a
    solver (Clarabel's ``RuntimeError``, a factorisation's) becomes that solver's failed attempt.
    A choice: a file named ``<...>`` (``python -c``, a doctest, ``exec``) counts as the user's,
    except the interpreter's own ``<frozen ...>`` modules."""
    tb = exc.__traceback__
    lib = _library_dirs()
    while tb is not None:
        name = tb.tb_frame.f_code.co_filename
        if name.startswith("<"):
            if not name.startswith("<frozen"):
                return True
        elif not os.path.abspath(name).startswith(lib):
            return True
        tb = tb.tb_next
    return False
