"""``Solution``: what :meth:`ldpopt.problems.Problem.solve` returns (read like scipy's
``OptimizeResult``), with the status texts and the attempt bookkeeping of the solver chain.

:func:`best_checked`: which of several checked answers to keep when no route of
:meth:`~ldpopt.problems.Problem.solve` passed ldpopt's check (:mod:`.verdict`): the one the check says
least against. Order (a choice; the papers are silent): a point whose check passed; then a point within the
constraint tolerances (per constraint and aggregate) before one outside them; among those the
smallest certified error bound ``Checks.error_bound`` (∞ when none was computed); among passed
points at an equal bound, one its solver called optimal before one it stalled at (CLS + 10⁻³·KL in a
ball touching the simplex: the sequential QP's stalled point, 2e-16 off the set, had displaced
Clarabel's optimal one, 2e-10 off, neither certifiable); then the smallest constraint violation. A Solution without a check (no point) comes last. So a route that stops on
its own stricter threshold cannot displace a better point found earlier: weighted MLE + Box at
d = 3 keeps the structured answer 5e-11 from the optimum rather than a later solver's 1e-2.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from .check.verdict import Checks  # annotations only: the verdict sits above the answer it fills

__all__ = ["Solution", "best_checked", "within_tolerance"]

_MESSAGES = {
    "optimal": "solved to the solver's tolerances",
    "optimal_inaccurate": "the solver stopped at its reduced tolerances; the solution may be inaccurate",
    "infeasible": "the constraints are infeasible",
    "infeasible_inaccurate": "the constraints are probably infeasible (inaccurate certificate)",
    "unbounded": "the objective is unbounded below on the constraint set",
    "unbounded_inaccurate": "the objective is probably unbounded (inaccurate certificate)",
    "infeasible_or_unbounded": "the problem is infeasible or unbounded (the solver cannot tell which)",
    "user_limit": "the solver hit its iteration or time limit; f is its last iterate",
    "solver_error": "the solver failed",
    "solver_not_installed": "the requested solver is not installed",
    "inaccurate": "the solver's point failed ldpopt's own check",
    "optimal_unverified": "feasible to ldpopt's check, but its stationarity and gap checks could not be run",
    "time_limit": "solve(time_limit=...) ran out; f is the best point checked, and it did not pass the check",
}


@dataclass(repr=False)
class Solution:
    r"""Result of :meth:`Problem.solve`, read like scipy's ``OptimizeResult``.

    Made by :meth:`Problem.solve` (and :meth:`failed`); each parameter is an attribute of the same name.

    Parameters
    ----------
    f : ndarray (d,), float64
        The solver's frequency vector, as returned (not clipped or renormalised: it satisfies the
        constraints to the solver's feasibility tolerance). The last iterate for ``user_limit``;
        NaN when the solver returned no point (infeasible, unbounded, errors).
    status : str
        ``"optimal"`` only when ldpopt's own check (``checks``) passed with every part of it run that
        decides optimality — feasibility, stationarity and the duality gap (and the :math:`\lVert f - f^* \rVert_∞` bound
        where the objective's curvature gives one), for every objective: built-in, ``l1`` (subgradient
        check, exact LP gap), a user callable (cvxpy's gradient) or a ``SeparableObjective``;
        ``"optimal_unverified"`` when the solver said optimal and f passed the checks that ran but
        stationarity or the gap could not be run (``checks.not_run`` and ``message`` say why: no duals,
        a constraint cvxpy cannot differentiate, an objective not differentiable at f) — only
        feasibility was certified; ``"inaccurate"`` when the
        solver said optimal and the check failed (``message`` names the check); otherwise cvxpy's
        status (``"optimal_inaccurate"``, ``"infeasible"``, ``"unbounded"``, ``"user_limit"``,
        ``"solver_error"``, ...) or ``"solver_not_installed"`` when no solve was attempted;
        ``"time_limit"`` when ``solve(time_limit=...)`` ran out before a point passed the check (f is
        the best point checked, NaN when none was returned).
        ``"infeasible"`` never for a problem with a known feasible point (then ``"solver_error"``),
        and only with a certificate ldpopt's own check verified (``infeasibility.verified``: exact for
        linear constraints, :mod:`~ldpopt.problems.check.conflict` for a user's non-affine ones); a
        solver's unverified claim is ``"infeasible_inaccurate"``. Every status is decided by ldpopt's
        check of the returned f and duals themselves (``checks.computed_on`` is their digest).
    success : bool
        ``status == "optimal"``.
    optimal_value : float
        The documented objective J at the solution (see :mod:`ldpopt.problems.objectives.builtins`),
        from the solver's value; NaN without a solution, ±inf for infeasible / unbounded.
    duals : dict
        Constraint name → dual value (ndarray or float) of the Lagrangian :math:`J(f) + Σ y \cdot g(f)` (sign
        convention in :mod:`ldpopt.problems.constraints.base`); empty when the solver returned no point.
        On the direct QP route with a recognised objective's polyhedral terms, also
        ``"objective.kinks"``: those terms' multipliers (ldpopt's check certifies with them).
    solver : str
        The solver that produced ``f`` (always named, also for user objectives);
        ``"LDPOPT-STRUCTURED"`` for ldpopt's dual solver (the default where it applies); ``"SQP(PIQP)"``
        for the sequential-QP route of the exact likelihoods (the QP solvers it used in brackets).
    checks : Checks or None
        ldpopt's check of f (:class:`~ldpopt.problems.check.verdict.Checks`: max_violation, stationarity,
        gap, tolerance, passed, failed, not_run); None when no point was returned.
    attempts : list of dict
        Every solver tried, in order: ``solver``, ``status``, ``checks`` (summary), ``seconds``.
        For the sequential-QP route, one entry per QP: also ``iteration``, ``step`` (the line
        search's step length) and ``qp_attempts`` (the QP chain's statuses). A Clarabel attempt that
        ldpopt stopped where it stalled (:mod:`~ldpopt.problems.solvers.stall`): also ``stopped``
        (the iteration, in words); one at ldpopt's options that ran watched: also
        ``default_tolerances_met_at`` (the first iteration whose iterate met Clarabel's own default
        tolerances, None where none did).
    iterations : int or None
        As reported by the solver; the number of QPs for the sequential-QP route.
    compile_time, solve_time, wall_time : float
        cvxpy's compilation (canonicalisation) time, the solver's own reported time (wall clock of
        the solver call when it reports none), and the whole ``solve`` call, in seconds.
    message : str
        What happened, in words (the status's meaning, the check that failed, the route taken).
    objective : str
        The objective's name.
    infeasibility : Infeasibility or None
        For ``"infeasible"``: the Farkas certificate and the conflicting constraints
        (:class:`~ldpopt.problems.constraints.feasibility.Infeasibility`), from ldpopt's exact pre-check or from
        the solver's certificate; None otherwise.

    Examples
    --------
    >>> import numpy as np
    >>> import ldpopt
    >>> est = ldpopt.oracles.get("grr", 1.0, 4).estimate(np.array([46_000, 30_000, 15_000, 9_000]), 100_000)
    >>> sol = ldpopt.Problem(est, constraints=[ldpopt.problems.Simplex(), ldpopt.problems.SubsetSum([0, 1], 0.7)]).solve()
    >>> sol.status, sol.solver, sol.f.round(4)
    ('optimal', 'LDPOPT-STRUCTURED', array([0.6162, 0.0838, 0.2498, 0.0502]))
    >>> sorted(sol.duals), sol.checks.passed
    (['nonnegative', 'subset_sum', 'sum'], True)
    """

    f: np.ndarray
    status: str
    success: bool
    optimal_value: float
    duals: dict = field(default_factory=dict)
    solver: str | None = None
    iterations: int | None = None
    compile_time: float | None = None
    solve_time: float | None = None
    wall_time: float | None = None
    message: str = ""
    objective: str = ""
    checks: Checks | None = None
    attempts: list = field(default_factory=list)
    infeasibility: object | None = None

    @property
    def not_unique(self) -> str:
        """Empty when f is the unique optimum (or nothing was certified); else the set of optima in
        words — ``"optimal"`` then certifies the objective value and that f is *one* optimum (Huber's
        linear part, ``l1``, a value with no reports in a likelihood): ``checks.not_unique``.

        Examples
        --------
        >>> import numpy as np
        >>> import ldpopt
        >>> est = ldpopt.oracles.get("grr", 1.0, 4).estimate(np.array([46_000, 30_000, 15_000, 9_000]), 100_000)
        >>> ldpopt.Problem(est, "cls").solve().not_unique
        ''
        >>> ldpopt.Problem(est, "l1").solve().not_unique.startswith("the optimum need not be unique")
        True
        """
        return self.checks.not_unique if self.checks is not None and self.success else ""

    @classmethod
    def failed(cls, d: int, status: str, solver: str, objective: str, message: str, value: float = np.nan,
               **kw) -> Solution:
        """A Solution without a point: f is NaN, ``success`` False, ``optimal_value`` ``value``.

        Parameters
        ----------
        d : int
            The domain size (length of the NaN f).
        status : str
            The status (``"infeasible"``, ``"solver_error"``, ...).
        solver : str
            The solver (or route) that failed.
        objective : str
            The objective's name.
        message : str
            What happened, in words.
        value : float, default NaN
            The ``optimal_value`` (the callers give inf for ``"infeasible"``).
        **kw
            Further fields of :class:`Solution` (``attempts``, ``infeasibility``, ...).

        Returns
        -------
        Solution

        Examples
        --------
        >>> import numpy as np
        >>> from ldpopt.problems import Solution
        >>> sol = Solution.failed(3, "infeasible", "CLARABEL", "cls", "no point", value=np.inf)
        >>> sol.success, sol.f, sol.optimal_value
        (False, array([nan, nan, nan]), inf)
        """
        return cls(np.full(d, np.nan), status, False, value, solver=solver, objective=objective,
                   message=message, **kw)

    def __repr__(self) -> str:
        keys = ["status", "success", "optimal_value", "solver", "iterations", "compile_time",
                "solve_time", "wall_time", "message", "objective", "checks", "attempts"]
        width = max(map(len, keys + ["duals", "f"]))
        lines = [f"{k.rjust(width)}: {getattr(self, k)!r}" for k in keys]
        lines.append(f"{'duals'.rjust(width)}: {sorted(self.duals)}")
        lines.append(f"{'f'.rjust(width)}: {np.array2string(self.f, threshold=8, precision=6)}")
        return "\n".join(lines)


def _attempt(sol: Solution) -> dict:
    return {"solver": sol.solver, "status": sol.status, "seconds": sol.wall_time,
            "checks": sol.checks.summary() if sol.checks is not None else sol.message}


def _key(sol) -> tuple:
    ch = sol.checks
    if ch is None:
        return (3, np.inf, np.inf)
    if ch.passed:  # at an equal bound, a point its solver called optimal before one it stalled at
        return (0, ch.error_bound if ch.error_bound is not None else np.inf,
                0 if sol.status in ("optimal", "optimal_unverified") else 1, ch.max_violation)
    tol = ch.tolerance.get("violation", 0.0)
    agg = ch.aggregate_violation
    within = bool(ch.max_violation <= tol) and (agg is None or agg <= tol or not any(
        t.startswith("aggregate") for t in ch.failed)) and not any("admit no point" in t for t in ch.failed)
    eb = ch.error_bound if ch.error_bound is not None and np.isfinite(ch.error_bound) else np.inf
    return (1 if within else 2, eb, ch.max_violation if np.isfinite(ch.max_violation) else np.inf)


def best_checked(solutions):
    """The Solution of ``solutions`` (None entries ignored) ranked first by the module docstring's
    order; the earlier one on ties. None when there is none."""
    cands = [s for s in solutions if s is not None]
    if not cands:
        return None
    return min(cands, key=_key)  # min keeps the first of equal keys


def within_tolerance(sol) -> bool:
    """Whether ``sol`` holds a point that ldpopt's check passed, or one within its feasibility
    tolerance of every constraint (the first two ranks of :func:`best_checked`'s order): the
    constraints then have a point to the check's resolution.

    Parameters
    ----------
    sol : Solution or None
        A checked answer (None: none).

    Returns
    -------
    bool

    Examples
    --------
    >>> import numpy as np
    >>> import ldpopt
    >>> from ldpopt.problems.solution import within_tolerance
    >>> est = ldpopt.oracles.get("grr", 1.0, 4).estimate(np.array([46_000, 30_000, 15_000, 9_000]), 100_000)
    >>> within_tolerance(ldpopt.Problem(est).solve()), within_tolerance(None)
    (True, False)
    """
    return sol is not None and _key(sol)[0] <= 1
