"""One solver run made into a checked :class:`~.solution.Solution`: ldpopt's dual solver
(:func:`structured_attempt`) or one cvxpy solver (:func:`cvxpy_attempt`); either way the status is
the one ldpopt's check (:func:`.checks.check_solution`) allows (:func:`.objective_check.status_after_check`).
:meth:`~.problem.Problem.solve` walks the chain of them."""

from __future__ import annotations

import time
import warnings

import cvxpy as cp
import numpy as np

from .checks import check_solution
from .objective_check import status_after_check, unverified_reason
from .policy import DEFAULT_SOLVER_OPTIONS, SCS_TIGHT
from .solution import _MESSAGES, Solution

__all__ = ["STRUCTURED", "cvxpy_attempt", "structured_attempt"]

#: the name of ldpopt's own dual solver (:func:`ldpopt.problems.structured.solve_structured`) in
#: ``Solution.solver`` and as ``solve(solver=STRUCTURED)``
STRUCTURED = "LDPOPT-STRUCTURED"


def structured_attempt(problem) -> tuple[Solution | None, str]:
    """ldpopt's dual solver (:mod:`.structured`) when the objective is separable and smooth and every
    constraint is a built-in it covers; (None, why) when it does not apply. Its Solution is
    ``"optimal"`` only when the solver's own certificate passed *and* ldpopt's check
    (:func:`.checks.check_solution`, the same as for any solver) passed; else ``"inaccurate"``."""
    from .structured import NotApplicable, solve_structured
    from .structured.structure import compiled_for

    start = time.perf_counter()
    try:
        r = solve_structured(problem.estimate, problem.objective, compiled_for(problem))
    except NotApplicable as exc:
        return None, str(exc)
    except ValueError as exc:  # infeasible bound/sum data: the cvxpy chain reports it as a status
        return None, f"{STRUCTURED} rejected the constraints: {exc}"
    checks = check_solution(problem, r.f, r.duals, certificate=r.certificate)
    # the solver's own (stricter, relative-KKT) threshold never overrides ldpopt's check
    status = status_after_check("optimal", checks)
    ok = status == "optimal"
    if ok and r.status != "optimal":
        message = (f"{STRUCTURED}'s own threshold was not met ({r.message}), but ldpopt's check passed: "
                   f"{checks.summary()}")
    elif ok:
        message = f"{r.message}; ldpopt's check: {checks.summary()}"
    elif r.status != "optimal":
        message = f"{STRUCTURED}: {r.message}"
    elif status == "optimal_unverified":
        message = f"{STRUCTURED} said optimal; {unverified_reason(checks)}"
    else:
        message = f"{STRUCTURED} said optimal; ldpopt's check failed: {'; '.join(checks.failed)}"
    its = r.iterations if isinstance(r.iterations, dict) else {}
    n_it = int(sum(v for k, v in its.items() if k.endswith("iterations") and isinstance(v, (int, np.integer))))
    return Solution(r.f, status, ok, float(r.optimal_value), dict(r.duals),
                    solver=STRUCTURED, iterations=n_it, compile_time=0.0, solve_time=r.wall_time,
                    wall_time=time.perf_counter() - start, message=message, objective=problem.objective.name,
                    checks=checks), ""


def cvxpy_attempt(problem, name: str, verbose: bool, solver_options: dict, tight_scs: bool = False) -> Solution:
    """One solver, then ldpopt's check; the status says whether the check passed."""
    start = time.perf_counter()
    d = problem.estimate.d
    nan_f = np.full(d, np.nan)
    opts = dict(DEFAULT_SOLVER_OPTIONS.get(name, {}))
    if tight_scs:
        opts.update(SCS_TIGHT)
    opts.update(problem.objective.solver_options.get(name, {}))
    opts.update(problem._clock.solver_options(name) if getattr(problem, "_clock", None) else {})
    # ``solve(SCS={...})``: options for one solver of the chain; other keywords go to every solver
    opts.update({k: v for k, v in solver_options.items() if k.upper() not in cp.settings.SOLVERS})
    for k, v in solver_options.items():
        if k.upper() == name and isinstance(v, dict):
            opts.update(v)
    prob = problem.cvxpy_problem
    error_text = ""
    problem.x.value = None  # nothing from an earlier solve may leak into this one
    try:
        with warnings.catch_warnings():
            # cvxpy's generic "may be inaccurate" UserWarning; ours (SolverWarning) says more
            warnings.filterwarnings("ignore", message="Solution may be inaccurate")
            prob.solve(solver=name, verbose=verbose, warm_start=False, **opts)
        status = prob.status
    except (cp.error.SolverError, TypeError, ValueError) as e:
        status, error_text = "solver_error", str(e)
    wall_solve = time.perf_counter() - start
    stats = prob.solver_stats if status != "solver_error" else None
    solver_name = (stats.solver_name if stats is not None else None) or name

    has_point = status in cp.settings.SOLUTION_PRESENT and problem.x.value is not None
    f = np.asarray(problem.x.value, dtype=np.float64) * problem.scale if has_point else nan_f
    duals = {}
    if has_point:
        value = (float(prob.value) - problem._offset) / problem._multiplier
        for k, con in problem._named.items():
            dv = con.dual_value
            if dv is None:
                duals[k] = None
            else:
                dv = np.asarray(dv, dtype=np.float64) / problem._multiplier
                duals[k] = float(dv) if dv.ndim == 0 else dv
    else:
        value = float(prob.value) if prob.value is not None and status != "solver_error" else np.nan
    compile_time = prob.compilation_time
    solve_time = stats.solve_time if stats is not None and stats.solve_time is not None else (
        wall_solve - (compile_time or 0.0))
    checks = check_solution(problem, f, duals) if has_point else None
    message = _MESSAGES.get(status, status)
    if error_text:
        message = f"{message}: {error_text}"
    # "optimal" only with stationarity and gap checked; "optimal_unverified" when they could not
    # be run; "optimal" contradicted by the check → "inaccurate"; "optimal_inaccurate" stays
    status = status_after_check(status, checks)
    if status == "optimal" and prob.status == "optimal_inaccurate":
        message = f"the solver stopped at its reduced tolerances, but ldpopt's check passed ({checks.summary()})"
    elif status == "optimal":
        message = f"{_MESSAGES['optimal']}; ldpopt's check: {checks.summary()}"
    elif status == "optimal_unverified":
        message = f"{solver_name} said optimal; {unverified_reason(checks)}"
    elif checks is not None and prob.status in ("optimal", "optimal_inaccurate") and not checks.passed:
        message = f"{solver_name} said {prob.status}; ldpopt's check failed: {'; '.join(checks.failed)}"
    infeasibility = None
    if status == "infeasible":  # the solver's Farkas certificate, where it gives one
        from .feasibility import solver_infeasibility
        if (infeasibility := solver_infeasibility(problem._named, solver_name)) is not None:
            message = f"{message}: {infeasibility.summary()}"
    return Solution(f, status, status == "optimal", value, duals, solver=solver_name,
                    iterations=None if stats is None else stats.num_iters, compile_time=compile_time,
                    solve_time=solve_time, wall_time=time.perf_counter() - start, message=message,
                    objective=problem.objective.name, checks=checks, infeasibility=infeasibility)
