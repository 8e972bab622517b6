"""One solver run made into a checked :class:`~.solution.Solution`: ldpopt's dual solver
(:func:`structured_attempt`) or one cvxpy solver (:func:`cvxpy_attempt`); either way the status is
the one ldpopt's check (:func:`.verdict.check_solution`) allows (:func:`.objective_check.status_after_check`).
:meth:`~.problem.Problem.solve` walks the chain of them."""

from __future__ import annotations

import time
import warnings
from typing import Any

import cvxpy as cp
import numpy as np

from ..check.cones import dual_array, save_dual_array
from ..check.point import ONTO_MAX_MOVE, onto_bounds_and_total
from ..check.verdict import accuracy_tol, check_solution, status_after_check, unverified_reason
from ..progress import CONIC_TIME_LIMIT as NO_LIMIT_BUDGET
from ..progress import OWN_TIME_LIMIT, SolveContext
from ..solution import _MESSAGES, Solution, _attempt
from .isolate import SolverTimedOut, runs_isolated, solved_in_worker, user_code_raised
from .policy import CLARABEL_MAX_ITER_MAX_D, CLARABEL_RETRY, DEFAULT_SOLVER_OPTIONS, SCS_TIGHT, size_options
from .stall import STALL_FACTOR, STALL_WINDOW

__all__ = ["RETRY_MET", "STOP_SOLVED", "STRUCTURED", "clarabel_configured", "cvxpy_attempt", "options_for", "structured_attempt"]

#: the name of ldpopt's own dual solver (:func:`ldpopt.problems.solvers.structured.solve_structured`) in
#: ``Solution.solver`` and as ``solve(solver=STRUCTURED)``
STRUCTURED = "LDPOPT-STRUCTURED"
#: the key, in the record ``Solution.attempts`` keeps of Clarabel's attempt at ldpopt's options, of the
#: first iteration whose iterate met the tolerances of the chain's retry (``policy.CLARABEL_RETRY``,
#: :func:`.stall.meets`); None where none did; absent where Clarabel ran without its watch (in this
#: process, where there is no ``fork``, or a Clarabel before 0.11)
RETRY_MET = "default_tolerances_met_at"
#: the key, in the same record where that attempt stopped short of ``Solved`` (stopped by ldpopt's watch,
#: :mod:`.stall`, or by Clarabel itself), of whether the iterate Clarabel returned passes its own test
#: for ``Solved`` at the retry's tolerances (:func:`.stall.solved`); absent where it ended ``Solved`` or
#: ran without the watch
STOP_SOLVED = "default_tolerances_solved_where_stopped"


def structured_attempt(problem, ctx: SolveContext | None = None) -> tuple[Solution | None, str]:
    """ldpopt's dual solver (:mod:`.structured`) when the objective is separable and smooth and every
    constraint is a built-in it covers; (None, why) when it does not apply. Its Solution is
    ``"optimal"`` only when the solver's own certificate passed *and* ldpopt's check
    (:func:`.verdict.check_solution`, the same as for any solver) passed; else ``"inaccurate"``.
    ``ctx``: the solve's context (its Newton loops stop at the time limit, and so does the check; past
    the limit it does not start: a ``"time_limit"`` Solution without a point);
    an exception inside the solver that is not the user's own code's (:func:`.isolate.user_code_raised`)
    is a ``"solver_error"`` attempt."""
    ctx = ctx or SolveContext()
    from ..dual.structure import compiled_for
    from ..objectives.separable import NotApplicable
    from .structured.solver import solve_structured

    if ctx.expired():  # nothing starts past the time limit (the exact pre-check may have used it up)
        return Solution.failed(problem.estimate.d, "time_limit", STRUCTURED, problem.objective.name,
                               f"{STRUCTURED} not started: the time limit ran out before it"), ""
    start = time.perf_counter()
    try:
        r = solve_structured(problem.estimate, problem.objective, compiled_for(problem), stop=ctx.stop)
    except NotApplicable as exc:
        return None, str(exc)
    except ValueError as exc:  # infeasible bound/sum data: the cvxpy chain reports it as a status
        if user_code_raised(exc):
            raise
        return None, f"{STRUCTURED} rejected the constraints: {exc}"
    except Exception as exc:  # the solver failed: one attempt, the chain goes on
        if user_code_raised(exc):
            raise
        return Solution.failed(problem.estimate.d, "solver_error", STRUCTURED, problem.objective.name,
                               f"{STRUCTURED} raised {type(exc).__name__}: {exc}"), ""
    checks = check_solution(problem, r.f, r.duals, certificate=r.certificate, deadline=ctx.deadline)
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


def options_for(problem, name: str, ctx: SolveContext, route: dict | None = None, cap: float | None = None) -> dict:
    """The options solver ``name`` runs with, each layer over the one before: ldpopt's defaults
    (``policy.DEFAULT_SOLVER_OPTIONS``, and ``policy.size_options``: Clarabel's iteration limit up to
    d = 1,000), the route's own (``route``: SCS tightened as a fallback, the
    direct QP's PIQP), the objective's, the solve's time limit (:meth:`.progress.Clock.solver_options`
    of ``ctx.clock``; ``cap``: a fallback's own budget where the solve has none), then the caller's
    (``ctx.solver_options``) — ``solve(SCS={...})`` for one solver of the chain, any other keyword for
    every solver."""
    solver_options = ctx.solver_options
    opts = dict(DEFAULT_SOLVER_OPTIONS.get(name, {}))
    opts.update(size_options(name, problem.estimate.d))
    opts.update(route or {})
    opts.update(problem.objective.solver_options.get(name, {}))
    opts.update(ctx.clock.solver_options(name, cap))
    opts.update({k: v for k, v in solver_options.items() if k.upper() not in cp.settings.SOLVERS})
    for k, v in solver_options.items():
        if k.upper() == name and isinstance(v, dict):
            opts.update(v)
    return opts


def clarabel_configured(problem, ctx: SolveContext) -> bool:
    """Whether the caller or the objective gave Clarabel options of its own: a ``CLARABEL={...}``
    dict (the objective's ``solver_options`` or the solve's), or a tolerance of
    :data:`.policy.CLARABEL_RETRY` or ``max_iter`` for every solver. Clarabel configured so runs as
    configured: no retry of the chain's (:func:`.routes.clarabel_stopped`), no stop where it stalls
    (:mod:`.stall`)."""
    if problem.objective.solver_options.get("CLARABEL"):
        return True
    return any(k.upper() == "CLARABEL" or k in CLARABEL_RETRY or k == "max_iter" for k in ctx.solver_options)


def cvxpy_attempt(problem, name: str, ctx: SolveContext | None = None, tight_scs: bool = False,
                  cap: float | None = None, route: dict | None = None, judge=None) -> Solution:
    """One solver, then ldpopt's check; the status says whether the check passed. ``ctx``: the
    solve's context (time limit, verbosity, options; none: no limit). A crash, a time-out or an
    exception of the solver (not the user's own code's: :func:`.isolate.user_code_raised`) is this
    attempt's ``"solver_error"`` / ``"user_limit"``. ``cap``: the solver's own time limit where the
    solve has none (a fallback's budget, :func:`.policy.fallback_budget`). ``route``: options over
    ldpopt's defaults (:func:`options_for`; the chain's Clarabel retry, :data:`.policy.CLARABEL_RETRY`).
    ``judge``: the problem whose check decides the status (default ``problem``): the solve's own
    Problem where ``problem`` is it at another unit (:meth:`~..problem.Problem.rescaled`), whose f
    and duals in frequency units are candidates for it."""
    ctx = ctx or SolveContext()
    judge = problem if judge is None else judge
    start = time.perf_counter()
    d = problem.estimate.d
    nan_f = np.full(d, np.nan)
    opts = options_for(problem, name, ctx, route if route is not None else SCS_TIGHT if tight_scs else None, cap)
    # stopped where it stalls (.stall), within ldpopt's own iteration limit's sizes; at ldpopt's
    # options, whether its iterates met the chain's retry's tolerances recorded (.routes.retry_retraces)
    ours = name == "CLARABEL" and not clarabel_configured(problem, ctx)
    stall = ours and problem.estimate.d <= CLARABEL_MAX_ITER_MAX_D
    retry_watch = CLARABEL_RETRY if ours and route is None else None
    problem.cvxpy_problem  # noqa: B018 - the cvxpy problem built here, before a child process would build its own copy
    error_text = ""
    out: Any = None  # the solve's plain data (_solve_collect), None after a failure
    try:
        if runs_isolated(name, name in OWN_TIME_LIMIT, ctx.limited):
            # every foreign solver: a child process, killed at the limit (CONIC_TIME_LIMIT without
            # one); a crash there is this attempt's solver_error (:mod:`.isolate`)
            # (its answer is unpacked into this problem's cvxpy objects: one solve at a time, threads)
            with problem.cvxpy_lock:
                left = ctx.left()
                out = _solve_collect(problem, name, ctx.verbose, opts,
                                     NO_LIMIT_BUDGET if left is None else max(left, 1e-3), stall, retry_watch)
        else:
            with problem.cvxpy_lock:  # one cvxpy solve of this problem's objects at a time (threads)
                out = _solve_collect(problem, name, ctx.verbose, opts)
        status = out["status"]
    except SolverTimedOut as e:
        status, error_text, out = "user_limit", str(e), None
    except Exception as e:  # the solver failed: one attempt, the chain goes on
        if user_code_raised(e):
            raise
        status, error_text, out = "solver_error", f"{type(e).__name__}: {e}", None
    wall_solve = time.perf_counter() - start
    stats = out["stats"] if out is not None and status != "solver_error" else None
    solver_name = (stats["solver_name"] if stats is not None else None) or name

    has_point = status in cp.settings.SOLUTION_PRESENT and out is not None and out["x"] is not None
    f = np.asarray(out["x"], dtype=np.float64) * problem.scale if has_point else nan_f
    duals: dict[str, float | np.ndarray | None] = {}
    if has_point:
        value = (float(out["value"]) - problem.offset) / problem.multiplier
        for k, dv in out["duals"].items():
            if dv is None:
                duals[k] = None
            else:
                dv = np.asarray(dv, dtype=np.float64) / problem.multiplier
                duals[k] = float(dv) if dv.ndim == 0 else dv
    else:
        value = float(out["value"]) if out is not None and out["value"] is not None and status != "solver_error" \
            else np.nan
    compile_time = out["compile_time"] if out is not None else None
    solve_time = stats["solve_time"] if stats is not None and stats["solve_time"] is not None else (
        wall_solve - (compile_time or 0.0))
    checks = check_solution(judge, f, duals, deadline=ctx.deadline) if has_point else None
    moved = None
    if checks is not None and not checks.passed:
        got = onto_bounds(judge, f, duals, checks, ctx)
        if got is not None:
            f, checks, moved = got
    message = _MESSAGES.get(status, status)
    if error_text:
        message = f"{message}: {error_text}"
    # "optimal" only with stationarity and gap checked; "optimal_unverified" when they could not
    # be run; "optimal" contradicted by the check → "inaccurate"; "optimal_inaccurate" stays
    said = status
    status = status_after_check(status, checks)
    if status == "optimal":
        assert checks is not None  # a solver's optimal comes with its point, which was checked
        if said == "optimal_inaccurate":
            message = f"the solver stopped at its reduced tolerances, but ldpopt's check passed ({checks.summary()})"
        else:
            message = f"{_MESSAGES['optimal']}; ldpopt's check: {checks.summary()}"
    elif status == "optimal_unverified":
        message = f"{solver_name} said optimal; {unverified_reason(checks)}"
    elif checks is not None and said in ("optimal", "optimal_inaccurate") and not checks.passed:
        message = f"{solver_name} said {said}; ldpopt's check failed: {'; '.join(checks.failed)}"
    if stats is not None and stats.get("stalled_at") is not None:
        message += (f" | Clarabel stopped at iteration {stats['stalled_at']}: its residuals and gap fell less than "
                    f"{STALL_FACTOR:g}x in {STALL_WINDOW} iterations (solvers.stall)")
    if moved is not None:
        message += (f" | the solver's point moved onto its bounds and total by at most {moved:.1e} per value, "
                    "where ldpopt's check passed it (check.point.onto_bounds_and_total)")
    infeasibility = None
    if status == "infeasible":  # the solver's Farkas certificate, where it gives one
        from ..constraints.feasibility import solver_infeasibility
        with problem.cvxpy_lock:  # the certificate is read from the constraints' dual values
            if out is not None and out["named_duals_set"]:
                _restore_duals(problem, out)
            infeasibility = solver_infeasibility(problem.named_constraints, solver_name)
        if infeasibility is not None:
            message = f"{message}: {infeasibility.summary()}"
    sol = Solution(f, status, status == "optimal", value, duals, solver=solver_name,
                   iterations=None if stats is None else stats["num_iters"], compile_time=compile_time,
                   solve_time=solve_time, wall_time=time.perf_counter() - start, message=message,
                   objective=judge.objective.name, checks=checks, infeasibility=infeasibility)
    # this attempt's own record (what the chain lists in ``Solution.attempts``): where ldpopt stopped
    # the solver, it says so, whatever the answer's check then said
    sol.attempts = [{**_attempt(sol), **({"stopped": f"at iteration {stats['stalled_at']}, where its residuals and "
                                                     "gap had stalled (solvers.stall)"}
                                         if stats is not None and stats.get("stalled_at") is not None else {}),
                     **({RETRY_MET: stats["retry_met_at"]} if stats is not None and "retry_met_at" in stats else {}),
                     **({STOP_SOLVED: stats["stop_solved"]} if stats is not None and stats.get("stop_solved") is not None
                        else {})}]
    return sol


def onto_bounds(problem, f: np.ndarray, duals: dict, checks, ctx: SolveContext):
    """(g, its checks, the largest move) where an answer whose check failed on the built-in
    constraints alone — a per-value residual of f ≥ 0, a Box, Σ f = total, or the aggregate over them,
    every constraint of yours met — passes ldpopt's check, with the same multipliers, once moved onto
    its per-value bounds and its total (:func:`..check.point.onto_bounds_and_total`, at most
    ``ONTO_MAX_MOVE`` × the accuracy tolerance per value); else None. The bounds are the exact
    decision's (:func:`..constraints.feasibility.owned_system`: the built-ins' and a user's rows of one
    value); the total is the one Σ f = total a constraint states (``simplex_parts``)."""
    from ..constraints.base import UserConstraint
    from ..constraints.feasibility import owned_system

    tol = checks.tolerance["violation"]
    mine = {name for name, (owner, _) in problem.owners.items() if isinstance(owner, UserConstraint)}
    if any(not v <= tol for name, v in checks.violations.items() if name in mine):
        return None
    agg = checks.aggregate_violation
    if all(v <= tol for v in checks.violations.values()) and (agg is None or agg <= tol):
        return None  # feasible to the check: a failure elsewhere, which moving f would not mend
    totals = [p[2] for c in problem.constraints for p in (c.simplex_parts() or ()) if p[0] == "sum"]
    if len(totals) != 1:
        return None
    try:
        lo, up = owned_system(problem)[:2]
    except Exception as exc:  # a user's callable failing here: no candidate
        if user_code_raised(exc):
            raise
        return None
    g = onto_bounds_and_total(f, lo, up, float(totals[0]), ONTO_MAX_MOVE * accuracy_tol(f.size))
    if g is None:
        return None
    again = check_solution(problem, g, duals, deadline=ctx.deadline)
    return (g, again, float(np.max(np.abs(g - f)))) if again.passed else None


def _solve_collect(problem, name: str, verbose: bool, opts: dict, seconds: float | None = None,
                   stall: bool = False, retry: dict | None = None) -> dict:
    """cvxpy's solve of ``problem``'s compiled problem with solver ``name``; what the attempt reads of
    it as plain data. ``seconds``: the solver runs in the worker (:func:`.isolate.solved_in_worker`:
    compiled here, solved in a child killed after ``seconds``, its answer unpacked here; ``stall``:
    Clarabel stopped there where it stalls, ``retry``: the tolerances whose first meeting its watch
    records, :mod:`.stall`); None: here, as cvxpy runs it."""
    problem.x.value = None  # nothing from an earlier solve may leak into this one
    prob = problem.cvxpy_problem
    compile_time = None
    watch: dict = {}
    with warnings.catch_warnings():
        # cvxpy's generic "may be inaccurate" UserWarning; ours (SolverWarning) says more
        warnings.filterwarnings("ignore", message="Solution may be inaccurate")
        if seconds is None:
            prob.solve(solver=name, verbose=verbose, warm_start=False, **opts)
            compile_time = prob.compilation_time
        else:
            t0 = time.perf_counter()
            data, chain, inverse = prob.get_problem_data(name, verbose=verbose, solver_opts=opts)
            compile_time = time.perf_counter() - t0
            watch = solved_in_worker(prob, data, chain, inverse, verbose, opts,
                                     max(seconds - compile_time, 1e-3), name, stall, retry) or {}
    st = prob.solver_stats
    x = problem.x.value
    return {"status": prob.status, "x": None if x is None else np.asarray(x, dtype=np.float64),
            "value": None if prob.value is None else float(prob.value),
            "duals": {k: dual_array(con) for k, con in problem.named_constraints.items()},
            "named_duals_set": any(con.dual_value is not None for con in problem.named_constraints.values()),
            "compile_time": compile_time,
            "stats": None if st is None else {"solver_name": st.solver_name, "solve_time": st.solve_time,
                                              "num_iters": st.num_iters, "stalled_at": watch.get("stalled_at"),
                                              **{k: v for k, v in watch.items() if k in ("retry_met_at", "stop_solved")}}}


def _restore_duals(problem, out: dict) -> None:
    """The duals a child process computed, set on the parent's cvxpy constraints (the infeasibility
    certificate reads them there)."""
    for k, con in problem.named_constraints.items():
        dv = out["duals"].get(k)
        if dv is not None and con.dual_value is None:
            save_dual_array(con, dv)
