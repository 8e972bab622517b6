"""``Problem`` (a post-processing method as a convex problem) and ``Solution`` (what a solve returns).

>>> from ldpopt import Estimate
>>> from ldpopt.problems import Problem
>>> est = Estimate.from_counts([50, 30, 15, 5], n=100, epsilon=2.0, p=0.7, q=0.1)
>>> sol = Problem(est, "cls").solve()
>>> sol.status, round(float(sol.f.sum()), 6)
('optimal', 1.0)
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass, field

import cvxpy as cp
import numpy as np

from .._validation import check_estimate
from .constraints import Constraint, NonNegative, SumTo, as_constraint
from .errors import SolverWarning, error_for_status
from .objectives import Objective, make_objective

__all__ = ["DEFAULT_SOLVER_OPTIONS", "Problem", "Solution", "default_scale"]

#: Options ldpopt passes to a solver unless the caller overrides them (``solve(**solver_options)``).
#: Tighter than cvxpy's defaults, because the papers' comparisons (closed form vs solver) need
#: 1e-9-level agreement. OSQP 1.x spells polishing ``polishing`` (0.6 used ``polish``).
DEFAULT_SOLVER_OPTIONS: dict[str, dict] = {
    "OSQP": {"eps_abs": 1e-10, "eps_rel": 1e-10, "polishing": True, "max_iter": 200_000},
    "CLARABEL": {"tol_gap_abs": 1e-10, "tol_gap_rel": 1e-10, "tol_feas": 1e-10},
    "PIQP": {"eps_abs": 1e-10, "eps_rel": 1e-10, "eps_duality_gap_abs": 1e-10, "eps_duality_gap_rel": 1e-10},
}

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
}


@dataclass(repr=False)
class Solution:
    """Result of :meth:`Problem.solve`, read like scipy's ``OptimizeResult``.

    Attributes
    ----------
    f : ndarray (d,), float64
        The solver's frequency vector, as returned (not clipped or renormalised: it satisfies the
        constraints to the solver's feasibility tolerance). The last iterate for ``user_limit``;
        NaN when the solver returned no point (infeasible, unbounded, errors).
    status : str
        cvxpy's status string (``"optimal"``, ``"optimal_inaccurate"``, ``"infeasible"``,
        ``"unbounded"``, ``"user_limit"``, ``"solver_error"``, ...) or ldpopt's
        ``"solver_not_installed"`` when no solve was attempted.
    success : bool
        ``status == "optimal"``.
    optimal_value : float
        The documented objective J at the solution (see :mod:`ldpopt.problems.objectives`),
        from the solver's value; NaN without a solution, ±inf for infeasible / unbounded.
    duals : dict
        Constraint name → dual value (ndarray or float) of the Lagrangian J(f) + Σ y·g(f) (sign
        convention in :mod:`ldpopt.problems.constraints`); empty when the solver returned no point.
    solver : str or None
    iterations : int or None
        As reported by the solver.
    compile_time, solve_time, wall_time : float
        cvxpy's compilation (canonicalisation) time, the solver's own reported time (wall clock of
        the solver call when it reports none), and the whole ``solve`` call, in seconds.
    message : str
    objective : str
        The objective's name.
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

    def __repr__(self) -> str:
        keys = ["status", "success", "optimal_value", "solver", "iterations", "compile_time",
                "solve_time", "wall_time", "message", "objective"]
        width = max(map(len, keys + ["duals", "f"]))
        lines = [f"{k.rjust(width)}: {getattr(self, k)!r}" for k in keys]
        lines.append(f"{'duals'.rjust(width)}: {sorted(self.duals)}")
        lines.append(f"{'f'.rjust(width)}: {np.array2string(self.f, threshold=8, precision=6)}")
        return "\n".join(lines)


def default_scale(estimate) -> float:
    """The solver's unit s (its variable is x = f/s): ``max(σ, 1/d)``, σ of Wang et al. Eq. 7.

    Both sides matter (a choice the papers are silent on). x̃ = f̃/s carries noise σ/s and the
    constraints carry the total Σ x = 1/s. With s = σ alone the noise is O(1) but the total is 1/σ,
    ~10⁵–10⁷ once n is large or ε is large (σ ≪ 1/d), and the simplex rows have coefficients
    σ ≤ 1e-5: OSQP then stops at ``user_limit`` or, because its primal-infeasibility test
    ‖Aᵀδy‖ ≤ ε_inf‖δy‖ is met by any multiple of the sum row once its coefficients are below
    ε_inf = 1e-5, certifies the always-feasible simplex "infeasible" (issue 12 item 4: 37 of 216
    cases of a CLS grid). With s = max(σ, 1/d) the noise is ≤ 1 per coordinate, the mean
    coordinate ≤ 1 and the total ≤ d; when σ ≥ 1/d (small n, small ε) nothing changes.
    """
    s = max(float(estimate.sigma), 1.0 / estimate.d)
    return s if np.isfinite(s) and s > 0 else 1.0


def _default_constraints() -> list[Constraint]:
    return [NonNegative(), SumTo(1.0)]


class Problem:
    """A post-processing method stated as a convex problem over the frequency vector f.

    Parameters
    ----------
    estimate : Estimate
        The raw estimate (f̃, counts, n, p, q).
    objective : str, Objective or callable, default "cls"
        ``"cls"`` (Wang et al. §3.5), ``"weighted-mle"`` (Eq. 13), ``"multinomial"`` (GRR's exact
        likelihood), ``"binomial"`` (per-bit likelihood), ``"l1"``, ``"posterior"`` (needs
        ``mean=``, optional ``variance=``), the cautionary ``"weighted-mle-naive"``, an
        :class:`~ldpopt.problems.objectives.Objective`, or a callable
        ``objective(f, estimate) -> cvxpy expression`` to minimise.
    constraints : list or None
        ``None``: the simplex f ≥ 0, Σ f = 1 (duals ``"nonnegative"``, ``"sum"``). A list of
        :mod:`~ldpopt.problems.constraints` objects and/or callables
        ``(f, estimate) -> cvxpy constraint(s)`` replaces it. Duplicate names get ``_1``, ``_2``...
    mean, variance : array_like, optional
        For ``objective="posterior"`` only.
    scale : float, optional
        The solver's variable is x = f/scale; default :func:`default_scale` = max(σ of Eq. 7, 1/d)
        (1 for the naive objective).

    Attributes
    ----------
    f : cvxpy expression (scale·x), the frequency vector; x : the cvxpy Variable;
    cvxpy_problem : the compiled ``cvxpy.Problem``; constraint_names : names, in order.
    """

    def __init__(self, estimate, objective="cls", constraints=None, *, mean=None, variance=None,
                 scale: float | None = None):
        check_estimate(estimate)
        self.estimate = estimate
        self.objective: Objective = make_objective(objective, mean=mean, variance=variance)
        self.objective.check(estimate)
        if constraints is None:
            cons = _default_constraints()
        elif isinstance(constraints, (Constraint,)) or callable(constraints):
            cons = [as_constraint(constraints)]
        else:
            try:
                cons = [as_constraint(c) for c in constraints]
            except TypeError as e:
                if "not iterable" in str(e):
                    raise TypeError(f"constraints must be None or a list, got {type(constraints).__name__}") from None
                raise
        self.constraints = cons
        if scale is None:
            scale = default_scale(estimate) if self.objective.scaled else 1.0
        elif not (np.isfinite(scale) and scale > 0):
            raise ValueError(f"scale must be finite and > 0, got {scale!r}")
        self.scale = float(scale)
        self._build()

    # -- building --------------------------------------------------------------------------------
    def _build(self) -> None:
        est = self.estimate
        self.x = cp.Variable(est.d, name="x")
        self.f = self.x if self.scale == 1.0 else self.scale * self.x
        built = self.objective.build(self.f, self.x, self.scale, est)
        self._multiplier = float(built.multiplier)
        self._offset = float(built.offset)
        named: dict[str, cp.Constraint] = {}
        for c in self.constraints:
            for key, con in c.build(self.f, est):
                name, k = key, 0
                while name in named:
                    k += 1
                    name = f"{key}_{k}"
                named[name] = con
        self._named = named
        self.cvxpy_problem = cp.Problem(cp.Minimize(built.expr), list(built.constraints) + list(named.values()))
        if not self.cvxpy_problem.is_dcp():
            raise ValueError(f"objective {self.objective.name!r} with these constraints is not a convex (DCP) "
                             "problem: the objective must be convex and the constraints DCP")

    @property
    def constraint_names(self) -> list[str]:
        return list(self._named)

    def _pick_solver(self, solver):
        if solver is None:
            default = self.objective.default_solver
            if default == "OSQP" and not self.cvxpy_problem.is_qp():
                default = "CLARABEL"  # user constraints made it a cone program
            return default
        if not isinstance(solver, str):
            raise TypeError(f"solver must be a string, got {type(solver).__name__}")
        name = solver.upper()
        if name not in cp.settings.SOLVERS:
            raise ValueError(f"solver must be a cvxpy solver name (installed: {cp.installed_solvers()}), "
                             f"got {solver!r}")
        return name

    # -- solving ---------------------------------------------------------------------------------
    def solve(self, solver: str | None = None, strict: bool = False, verbose: bool = False,
              **solver_options) -> Solution:
        """Solve; return a :class:`Solution`.

        ``solver``: a cvxpy solver name (default: the objective's, e.g. OSQP for CLS, Clarabel for
        the cone programs). ``solver_options`` override :data:`DEFAULT_SOLVER_OPTIONS` and go to the
        solver as is (``max_iter``, ``eps_abs``, ``tol_gap_rel``, ...). ``strict=True`` raises the
        matching :class:`~ldpopt.problems.SolverError` subclass unless the status is ``"optimal"``;
        ``strict=False`` returns the Solution and emits a :class:`~ldpopt.problems.SolverWarning`.
        """
        start = time.perf_counter()
        name = self._pick_solver(solver)
        d = self.estimate.d
        nan_f = np.full(d, np.nan)
        if name is not None and name not in cp.installed_solvers():
            sol = Solution(nan_f, "solver_not_installed", False, np.nan, solver=name,
                           wall_time=time.perf_counter() - start, objective=self.objective.name,
                           message=f"solver {name!r} is not installed (installed: {cp.installed_solvers()})")
            return self._finish(sol, strict)

        opts = dict(DEFAULT_SOLVER_OPTIONS.get(name, {})) if name else {}
        opts.update(self.objective.solver_options.get(name, {}) if name else {})
        opts.update(solver_options)
        prob = self.cvxpy_problem
        error_text = ""
        t_solve = time.perf_counter()
        try:
            with warnings.catch_warnings():
                # cvxpy's generic "may be inaccurate" UserWarning; ours (SolverWarning) says more
                warnings.filterwarnings("ignore", message="Solution may be inaccurate")
                prob.solve(solver=name, verbose=verbose, **opts)
            status = prob.status
        except cp.error.SolverError as e:
            status, error_text = "solver_error", str(e)
        wall_solve = time.perf_counter() - t_solve
        stats = prob.solver_stats if status != "solver_error" else None
        solver_name = (stats.solver_name if stats is not None else None) or name

        has_point = status in cp.settings.SOLUTION_PRESENT and self.x.value is not None
        f = np.asarray(self.x.value, dtype=np.float64) * self.scale if has_point else nan_f
        if has_point:
            value = (float(prob.value) - self._offset) / self._multiplier
            duals = {}
            for k, con in self._named.items():
                dv = con.dual_value
                if dv is None:
                    duals[k] = None
                else:
                    dv = np.asarray(dv, dtype=np.float64) / self._multiplier
                    duals[k] = float(dv) if dv.ndim == 0 else dv
        else:
            value = float(prob.value) if prob.value is not None and status != "solver_error" else np.nan
            duals = {}
        compile_time = prob.compilation_time
        solve_time = stats.solve_time if stats is not None and stats.solve_time is not None else (
            wall_solve - (compile_time or 0.0))
        message = _MESSAGES.get(status, status)
        if error_text:
            message = f"{message}: {error_text}"
        sol = Solution(f, status, status == "optimal", value, duals, solver=solver_name,
                       iterations=None if stats is None else stats.num_iters, compile_time=compile_time,
                       solve_time=solve_time, wall_time=time.perf_counter() - start, message=message,
                       objective=self.objective.name)
        return self._finish(sol, strict)

    def _finish(self, sol: Solution, strict: bool) -> Solution:
        if sol.status == "optimal":
            return sol
        text = f"{sol.solver}: status {sol.status!r} ({sol.message}) for objective {sol.objective!r}"
        if strict:
            raise error_for_status(sol.status)(text, sol)
        warnings.warn(text, SolverWarning, stacklevel=3)
        return sol

    def __repr__(self) -> str:
        return (f"Problem(objective={self.objective.name!r}, d={self.estimate.d}, "
                f"constraints={self.constraint_names}, scale={self.scale:.3g})")
