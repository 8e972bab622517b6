"""The routes of ``Problem.solve`` (:data:`ROUTES`, in order: a linear objective over the simplex
and per-value bounds in closed form, ldpopt's structured dual solver, the direct QP, the Newton / sequential-QP
route, the cvxpy chain), each a :class:`Route` that says whether it applies and runs with the solve's
:class:`~..progress.SolveContext`; and the stages around them: the exact pre-check, its deferred steps
between routes, and the settling of an answer.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import cvxpy as cp
import numpy as np

from ..check.conflict import non_affine
from ..check.point import pulled_in, user_rows_met
from ..check.verdict import (
    GAP_TOL,
    STATIONARITY_TOL,
    feasible_point,
    status_after_check,
    unverified_reason,
    violation_tol,
)
from ..constraints import feasibility
from ..constraints.feasibility import Decision
from ..errors import user_code_raised
from ..objectives.likelihood_terms import LikelihoodTerms
from ..progress import CheckTimedOut, SolveContext, timed_out
from ..solution import Solution, _attempt, best_checked, within_tolerance
from . import phase_one
from .attempts import (
    RETRY_MET,
    STOP_SOLVED,
    STRUCTURED,
    clarabel_configured,
    cvxpy_attempt,
    options_for,
    structured_attempt,
)
from .direct_qp import SUFFIX as DIRECT
from .direct_qp import solve_direct_qp
from .ipm import solve_ipm
from .policy import (
    CLARABEL_OWN_UNIT_NAME,
    CLARABEL_RETRY,
    CLARABEL_RETRY_NAME,
    CLARABEL_UNITS,
    CLARABEL_UNITS_NAME,
    SQP_MIN_D,
    default_chain,
    direct_qp_options,
    direct_qp_solver,
    fallback_budget,
    installed_solvers,
    is_likelihood,
    sqp_applies,
    uses_sqp,
)
from .simplex_lp import SOLVER as SIMPLEX_LP
from .simplex_lp import simplex_lp, solve_simplex_lp
from .sqp import converged, newton_terms, solve_sqp

__all__ = ["ROUTES", "Route", "chain_for", "clarabel_retries", "clarabel_stopped", "deferred", "first_unit", "in_units_retry", "not_infeasible_if_known_feasible", "pre_checked", "refuted_in_one_unit", "retry_retraces", "settle"]

#: interior-point solvers of the chains (:mod:`.policy`), and the first-order ones after them
INTERIOR, FIRST_ORDER = frozenset({"CLARABEL", "PIQP"}), frozenset({"SCS", "OSQP"})


@dataclass(frozen=True)
class Route:
    """One way to solve: ``plan(problem, ctx, solver)`` says whether it applies (None: it does not;
    anything else is handed to ``run``), ``run(problem, ctx, solver, plan)`` solves and returns the
    answer (a :class:`~..solution.Solution`) or None to let the next route try, having recorded
    its attempt and its checked point in ``ctx`` (``attempts``, ``kept``, ``newton_point``).

    Parameters
    ----------
    name : str
        The route, in words.
    plan, run : callable
        As above; ``solver`` is ``solve``'s argument.

    Examples
    --------
    >>> from ldpopt.problems.solvers.routes import ROUTES
    >>> [r.name for r in ROUTES]
    ['simplex LP', 'structured', 'direct QP', 'Newton / SQP', 'cvxpy chain']
    """

    name: str
    plan: Callable[[Any, SolveContext, Any], Any]
    run: Callable[[Any, SolveContext, Any, Any], Solution | None]


def _failed(problem, status: str, solver: str, message: str) -> Solution:
    return Solution.failed(problem.estimate.d, status, solver, problem.objective.name, message)


def _named_structured(solver) -> bool:
    return isinstance(solver, str) and solver.upper() == STRUCTURED


# ---- the stages around the routes

def pre_checked(problem, ctx: SolveContext) -> Solution | None:
    """The exact pre-check's cheap steps (:func:`.phase_one.pre_check`): the ``"infeasible"``
    Solution when they prove a conflict (no route runs), else None, its deferred steps kept in
    ``ctx.deferred`` until a route has not passed (:func:`deferred`) or an answer is settled
    (:func:`settle`). A library's failure here decides nothing: solved as usual."""
    try:
        pre, system = phase_one.pre_check(problem, ctx.clock.left(), ctx)
    except Exception as exc:
        if user_code_raised(exc):
            raise
        ctx.feasibility = Decision(None, how=f"the pre-check raised {type(exc).__name__}: {exc}")
        pre = system = None
    ctx.deferred = {"system": system, "timed_out": False}
    ctx.settle_due = system is not None
    ctx.start = time.perf_counter()
    return pre


def deferred(problem, ctx: SolveContext, attempts: list) -> Solution | None:
    """The exact pre-check's deferred steps, run now and once: the ``"infeasible"`` Solution when
    they prove a conflict (``attempts``, the routes tried so far, kept before it; also
    ``ctx.conflict``), else None. Called as soon as a route has not passed, so an infeasible problem
    costs one route more than before, never the whole chain."""
    lazy = ctx.deferred
    if lazy["system"] is None:
        return None
    lazy["system"] = None
    t0 = time.perf_counter()
    left = ctx.clock.left()
    if left is not None and left <= 0:
        lazy["timed_out"] = True
        return None
    try:
        pre = phase_one.infeasible_solution(problem, left, None, ctx)
    except Exception as exc:  # a library's failure in the decision: nothing decided
        if user_code_raised(exc):
            raise
        ctx.feasibility = Decision(None, how=f"the feasibility decision raised {type(exc).__name__}: {exc}")
        lazy["raised"] = f"{type(exc).__name__}: {exc}"
        pre = None
    decision = ctx.feasibility
    lazy["timed_out"] = (pre is None and decision is not None and decision.feasible is None
                         and ctx.clock.expired())
    if pre is None:
        return None
    pre.attempts = list(attempts) + list(pre.attempts or [])
    pre.message += " (decided after " + ", ".join(f"{a['solver']}: {a['status']}" for a in attempts) + ")"
    pre.wall_time = time.perf_counter() - t0
    ctx.conflict = pre
    return pre


def settle(problem, sol: Solution, ctx: SolveContext) -> Solution:
    """The end of a solve whose exact pre-check was deferred, after ldpopt's check of the answer: a
    returned point that passed the check and is made exact on its active set
    (:func:`.feasibility.point_feasible`) proves the constraints non-empty, so no certificate of a
    conflict exists and the answer stands; otherwise the deferred steps run now (:func:`deferred`,
    if a failed route has not run them already) and a verified conflict replaces the answer (status
    ``"infeasible"``). Where that decision could not finish within the time limit, an ``"optimal"``
    answer becomes ``"time_limit"``: a set empty by less than the check's tolerance is never
    returned as optimal."""
    lazy = ctx.deferred
    system = lazy["system"]
    passed = (sol.status in ("optimal", "optimal_unverified") and sol.checks is not None and sol.checks.passed
              and sol.f is not None)
    if system is not None and passed:
        try:
            if _met_at(problem, system, sol.f, ctx):
                lazy["system"] = None
                return sol
        except CheckTimedOut:
            pass
        except Exception as exc:  # a library's failure: the full decision below says what it says
            if user_code_raised(exc):
                raise
    pre = deferred(problem, ctx, list(sol.attempts or [_attempt(sol)]))
    if pre is not None:
        return pre
    if sol.status == "optimal" and lazy.get("raised"):
        sol.status, sol.success = "optimal_unverified", False
        sol.message += (f" | the exact feasibility decision raised ({lazy['raised']}): the set's being "
                        "non-empty beyond the check's tolerance is not proved, so optimality is not claimed")
    if sol.status == "optimal" and lazy["timed_out"]:
        sol.status, sol.success = "time_limit", False
        sol.message += (" | the exact feasibility decision did not finish within the time limit: not "
                        "claimed optimal")
    not_infeasible_if_known_feasible(problem, ctx, sol)
    return sol


def _met_at(problem, system, f: np.ndarray, ctx: SolveContext) -> bool:
    """Whether the answer f proves the constraints non-empty (kept in ``ctx.feasibility``): the
    linear system made exact on its active set at f (:func:`.feasibility.point_feasible`) and the
    user's left-out constraints met at f (:func:`~..check.point.user_rows_met`) — or both at the
    point one least-norm step from f moves inside them (:func:`~..check.point.pulled_in`), where an
    interior-point answer meets an active curved constraint only to its tolerance. Measured over the
    grammar's 100 families at d = 100 (seeds 1000 + i): the phase one ran after 15 answers that
    passed ldpopt's check, 8–21 ms each (a fifth to a half of the whole call); with the step, after
    none."""
    if not feasibility.point_feasible(system, f, ctx.deadline):
        return False
    how = "the returned point, made exact on its active set"
    if not user_rows_met(problem, f, system[-1]):
        inner = pulled_in(problem, f, system)
        if inner is None or not (feasibility.point_feasible(system, inner, ctx.deadline)
                                 and user_rows_met(problem, inner, system[-1])):
            return False
        how = "a point one step from the returned one inside the user's constraints, made exact on its active set"
    ctx.feasibility = Decision(True, how=how, complete=True)
    return True


def not_infeasible_if_known_feasible(problem, ctx: SolveContext, best: Solution) -> None:
    """A solver's "infeasible" on constraints ldpopt knows feasible (this solve's exact decision,
    ``ctx.feasibility``, or a known feasible point) becomes ``"solver_error"``; a solver's own
    certificate that ldpopt did not verify, ``"infeasible_inaccurate"``."""
    if best.status in ("infeasible", "infeasible_inaccurate", "infeasible_or_unbounded"):
        proved = ctx.feasibility  # the exact pre-check's decision (.feasibility)
        if proved is not None and proved.feasible and proved.complete:
            best.status, best.success, best.infeasibility = "solver_error", False, None
            best.message = ("every solver tried said the constraints are infeasible, but ldpopt has a "
                            "feasible point checked in exact arithmetic: a solver failure")
        elif feasible_point(problem) is not None:
            best.status, best.success, best.infeasibility = "solver_error", False, None
            best.message = ("every solver tried said the constraints are infeasible, but ldpopt knows a "
                            "feasible point (it satisfies every constraint to "
                            f"{violation_tol(problem.estimate.d):.0e}): a solver failure")
        elif best.status == "infeasible" and not getattr(best.infeasibility, "verified", False):
            # a solver's certificate is its own word: "infeasible" needs ldpopt's check of one
            # (the exact pre-check, or .check.conflict at the phase one's point), else the weaker status
            best.status = "infeasible_inaccurate"
            best.message += (" | not verified by ldpopt's check (the exact pre-check does not decide these "
                             "constraints and the phase one's conflict was not proved): infeasible_inaccurate")


# ---- a linear objective over the simplex and per-value bounds: its closed form

def _simplex_lp_plan(problem, ctx: SolveContext, solver):
    return simplex_lp(problem) if solver is None else None


def _simplex_lp_run(problem, ctx: SolveContext, solver, plan) -> Solution | None:
    """The closed form (:mod:`.simplex_lp`): its answer when ldpopt's check passes it, else its
    attempt and checked point kept for the later routes."""
    with ctx.clock.running(SIMPLEX_LP):
        sol = solve_simplex_lp(problem, ctx, plan)
    if sol.success:
        sol.attempts = ctx.attempts + [_attempt(sol)]
        sol.wall_time = time.perf_counter() - ctx.start
        return sol
    ctx.attempts.append(_attempt(sol))
    ctx.kept = best_checked([ctx.kept, sol])
    return None


# ---- the structured dual solver

def _structured_plan(problem, ctx: SolveContext, solver):
    return True if solver is None or _named_structured(solver) else None


def _structured_run(problem, ctx: SolveContext, solver, _plan) -> Solution | None:
    """ldpopt's dual solver (:func:`.attempts.structured_attempt`): its answer when it passes (or
    was asked for by name, or is the only route); else its attempt and checked point kept."""
    named = _named_structured(solver)
    with ctx.clock.running(STRUCTURED):
        sol, why = structured_attempt(problem, ctx)
    if sol is not None and (sol.success or named):
        sol.attempts = [_attempt(sol)]
        sol.wall_time = time.perf_counter() - ctx.start
        return sol
    if problem.structured_only:  # no cvxpy form to fall back on: its checked point, or why not
        if sol is None:
            raise ValueError(f"objective: {problem.objective.name!r} has no cvxpy_expr, so only {STRUCTURED} "
                             f"can solve it, and it does not apply: {why}")
        sol.attempts = [_attempt(sol)]
        sol.message += f" | objective {problem.objective.name!r} has no cvxpy_expr: no cvxpy solver to fall back on"
        sol.wall_time = time.perf_counter() - ctx.start
        return sol
    if named:  # not applicable: say why, no fallback when asked for by name
        sol = _failed(problem, "solver_error", STRUCTURED, f"{STRUCTURED} does not apply: {why}")
        sol.attempts = [_attempt(sol)]
        return sol
    if sol is not None:  # not applicable: nothing was tried
        ctx.attempts.append(_attempt(sol))
    ctx.kept = sol  # its checked point competes with the later routes' (best_checked)
    return None


# ---- a small user QP straight to PIQP / Clarabel

def _direct_plan(problem, ctx: SolveContext, solver):
    return direct_qp_solver(problem, ctx.limited) if solver is None else None


def _direct_run(problem, ctx: SolveContext, solver, direct: str) -> Solution | None:
    """The direct QP route (:func:`.direct_qp.solve_direct_qp`) with the solver ``direct``: its
    answer when ldpopt's check passes it, ``optimal`` or ``optimal_unverified``; else its attempt and
    checked point kept for the chain.

    An ``optimal_unverified`` answer ends the solve, as it ends the chain (:func:`_chain_run`): the
    check found the point feasible and could not certify its optimality for a reason of the objective
    at the optimum (a kink, an atom without a gradient), which the chain's solvers meet again, with
    fewer multipliers to read (this route hands the check its kink terms' own as well, the chain only
    those it fits). Measured on the 28 grammar families the route ran on (19 of seeds 1000-1399 at
    d = 100, 9 of 4000-4199 at d = 10³): three ended here so, and the chain after each ended
    ``optimal_unverified`` too; the whole call of each, without that chain, took 0.37-0.59 of its CPU
    (docs/problems.md, "The retry at Clarabel's own tolerances")."""
    with ctx.clock.running(direct + DIRECT):
        dq, _ = solve_direct_qp(problem, direct, options_for(problem, direct, ctx, direct_qp_options(problem, direct)),
                                ctx)
    if dq is not None and dq.checks is not None and dq.checks.passed and dq.status in ("optimal", "optimal_unverified"):
        dq.attempts = ctx.attempts + [_attempt(dq)]
        dq.wall_time = time.perf_counter() - ctx.start
        return dq
    if dq is not None:  # its checked point competes with the chain's (best_checked)
        ctx.attempts.append(_attempt(dq))
        ctx.kept = best_checked([ctx.kept, dq])
    return None


# ---- Newton: the interior point, then sequential QP

def newton_route(problem, ctx: SolveContext) -> Solution:
    """The Newton route (:mod:`.sqp`'s objectives): a smooth objective is first solved by the
    interior-point method of :mod:`.ipm` (where its constraints are linear rows over f); its
    Solution is returned when ldpopt's check certifies it or the time limit has passed, else sequential
    QP (:func:`.sqp.solve_sqp`) follows, and its answer is returned unless the interior point
    passed ldpopt's check (then the better checked of the two, :func:`..solution.best_checked`). An exact
    likelihood goes to sequential QP directly. ``ctx``: the solve's context (time limit, options)."""
    start = time.perf_counter()
    est = problem.estimate
    terms = newton_terms(problem.objective, est)
    first = None  # the interior-point route's Solution, when it ran and did not certify
    if terms is not None and not isinstance(terms, LikelihoodTerms):
        first, _ = solve_ipm(problem, terms, lambda ch: converged(ch, est.d), ctx=ctx)
        if first is not None and (first.success or first.status == "time_limit"):
            return first
    sol = solve_sqp(problem, ctx=ctx)
    sol.wall_time = time.perf_counter() - start  # the interior point's time included
    if first is None:
        return sol
    sol.attempts = [{"iteration": 0, "solver": first.solver, "status": first.status, "seconds": first.wall_time,
                     "checks": first.checks.summary() if first.checks is not None else first.message}] + list(sol.attempts or [])
    sol.message += f" | {first.solver} first: {first.status} ({first.message})"
    # the interior point only where ldpopt's check passed it (an infeasible user constraint: the QP
    # loop's "infeasible" stands, not the interior-point method's stalled point)
    return best_checked([sol, first]) if first.checks is not None and first.checks.passed else sol


def _newton_plan(problem, ctx: SolveContext, solver):
    return True if (solver is None and uses_sqp(problem)) or (isinstance(solver, str) and solver.upper() == "SQP") \
        else None


def _newton_run(problem, ctx: SolveContext, solver, _plan) -> Solution | None:
    """:func:`newton_route`: its answer, unless a smooth user objective was not certified (then its
    point is kept and the objective's cvxpy expression goes on to the chain)."""
    first = ctx.attempts
    with ctx.clock.running("SQP"):
        sq = newton_route(problem, ctx)
    sol = best_checked([sq, ctx.kept])
    sol.attempts = first + list(sq.attempts or [])
    if first:
        sol.message += f" | {STRUCTURED} first: {first[0]['status']} ({first[0]['checks']})"
    if solver is None and is_likelihood(problem):
        sol.message = (f"d = {problem.estimate.d} >= {SQP_MIN_D}: the exact likelihood is solved by sequential "
                       "QP instead of as an exponential-cone program (conic solvers fail it at this d; "
                       "ldpopt.problems.solvers.policy) — " + sol.message)
    if (sol.success or solver is not None or is_likelihood(problem) or ctx.clock.expired()
            or getattr(problem.objective, "cvxpy_expr", True) is None):
        not_infeasible_if_known_feasible(problem, ctx, sol)
        timed_out(sol, ctx.clock)
        sol.wall_time = time.perf_counter() - ctx.start
        return sol
    # a smooth objective the Newton route did not certify: its cvxpy expression on the chain
    ctx.attempts.append(_attempt(sol))
    ctx.newton_point = sol
    return None


# ---- the cvxpy chain

def chain_for(problem, solver) -> tuple[str, ...]:
    """The solvers the chain tries: :func:`.policy.default_chain` for ``solver=None``, else the
    names given (upper case), each a cvxpy solver or ``"SQP"`` where it applies; a clear error
    otherwise."""
    if solver is None:
        return default_chain(problem)
    if getattr(problem.objective, "cvxpy_expr", True) is None and solver not in ("SQP", "sqp", ["SQP"]):
        raise ValueError(f"solver: objective {problem.objective.name!r} has no cvxpy_expr, so only solver=None "
                         f"or 'SQP' can solve it, got {solver!r}")
    names = [solver] if isinstance(solver, str) else solver
    if isinstance(names, (list, tuple)) and names and all(isinstance(n, str) for n in names):
        out = []
        for n in names:
            up = n.upper()
            if up not in cp.settings.SOLVERS and not (up == "SQP" and sqp_applies(problem)):
                raise ValueError(f"solver must be a cvxpy solver name (installed: {installed_solvers()}), "
                                 f"got {n!r}")
            out.append(up)
        return tuple(out)
    raise TypeError(f"solver must be a string or a list of strings, got {type(solver).__name__}")


#: a Clarabel attempt ending so is retried at Clarabel's own defaults (:func:`clarabel_retries`)
RETRIED = frozenset({"solver_error", "optimal_inaccurate", "user_limit"})


def clarabel_stopped(problem, ctx: SolveContext, sol: Solution) -> bool:
    """Whether ``sol`` is a Clarabel attempt at ldpopt's options that stopped without an answer
    (:data:`RETRIED`: an error, its reduced tolerances, its iteration limit), with the time limit, if
    any, not passed: the chain then runs Clarabel once more (:func:`clarabel_retries`,
    :func:`in_units_retry`). Not where the caller or the objective gave Clarabel an option of its
    own, nor every solver a tolerance or an iteration limit: a Clarabel configured so is run as
    configured. A point it returned that ldpopt's check refuted (``inaccurate``) is not retried: a
    looser solve is no likelier to pass the same check."""
    if sol.solver != "CLARABEL" or sol.status not in RETRIED or ctx.clock.expired():
        return False
    return not clarabel_configured(problem, ctx)


def clarabel_retries(problem, ctx: SolveContext, sol: Solution) -> bool:
    """Whether the chain runs Clarabel once more at its own default tolerances
    (:data:`.policy.CLARABEL_RETRY`) after ``sol``: Clarabel stopped without an answer
    (:func:`clarabel_stopped`) at a point within the constraints to the check's tolerance
    (:func:`..solution.within_tolerance`) — it stalled on its gap near the optimum, where the looser
    tolerances end the solve. Where it failed (an error) or stopped off the constraints, the retry
    at its defaults, on the same problem, helped on no grammar family: at d = 10² and 10³ (200
    families, seeds 1000 + i and 4000 + i) nine chains reached it so, five after Clarabel's error
    (each erred again at 1e-8) and four after a point off a constraint (each ended off it again, as
    did seed 5008 at d = 10⁴), where seven of the eleven after a point within the constraints ended
    ``optimal`` or ``optimal_unverified``. Those go on in your objective's units at once
    (:func:`in_units_retry`)."""
    return clarabel_stopped(problem, ctx, sol) and within_tolerance(sol)


def retry_retraces(sol: Solution) -> bool:
    """Whether the chain's retry at Clarabel's own default tolerances (:data:`.policy.CLARABEL_RETRY`)
    after ``sol`` would only retrace it: Clarabel's watch (:mod:`.stall`) saw every iterate of this
    attempt and none met those tolerances (:data:`.attempts.RETRY_MET` None in its record).
    Clarabel's iterates do not depend on its tolerances, which decide only where it stops; the retry
    runs under the same iteration limit, and its stall stop reads the same progress scaled by a
    constant. So it would follow the same iterates, never to ``Solved``: where the watch stopped this
    attempt, to its last iterate or an earlier one; where Clarabel itself stopped it short (its own
    test of progress), it may run on past it (a grammar family at d = 40, seed 692694: 15
    iterations, then 17 at the retry's tolerances, ``AlmostSolved`` both; tests/test_clarabel_stall.py).
    Where the watch did not run (no record), the retry runs as before. Measured on 19 grammar families whose chain reached the retry
    (d = 10², 10³, 10⁴: docs/notes/problems.md, "ldpopt.problems.solvers.stall"): on the 6 whose
    first attempt never met the tolerances, the retry ended with the first attempt's status and
    ldpopt's verdict each time, after 0.02–1.8 s."""
    own = sol.attempts[0] if sol.attempts else {}
    return RETRY_MET in own and own[RETRY_MET] is None


def solved_where_stopped(problem, ctx: SolveContext, sol: Solution) -> bool:
    """Whether the chain reads ``sol`` as Clarabel's answer at its own default tolerances
    (:data:`.policy.CLARABEL_RETRY`) instead of running the retry at them: the retry is due
    (:func:`clarabel_retries`: Clarabel stopped short of ``Solved`` at a point within the
    constraints, stopped by ldpopt's watch where it stalled or by itself), the iterate it returned
    passes Clarabel's own test for ``Solved`` at those tolerances (:func:`.stall.solved`, every part
    of it, κ/τ included: the record's :data:`.attempts.STOP_SOLVED`), and ldpopt's check passed that
    point. The retry would walk the same iterates (its tolerances enter only Clarabel's termination
    test) and stop, ``Solved``, at the first that passes that test (:data:`.attempts.RETRY_MET`): an
    earlier iterate of the same path, where this one passes the same test and ldpopt's check. Not
    where a user constraint is not affine (:func:`..check.conflict.non_affine`): there the KKT test
    certifies some points and refutes none, so the retry's point may earn ``optimal`` where this one
    did not (grammar family 1014 at d = 100: this point's stationarity 5.7e-3, the retry's 7.5e-6,
    certified). Its status is then what Clarabel's ``Solved`` earns from the check
    (:func:`~..check.verdict.status_after_check`: ``optimal_unverified`` where the KKT test could not
    run; an answer it certified is ``optimal`` already). Measured on the grammar families whose
    chain ran the retry: benchmarks/results/random_families_summary.md, "The iterate Clarabel was
    stopped at, read at its own tolerances"."""
    own = sol.attempts[0] if sol.attempts else {}
    return (own.get(STOP_SOLVED) is True and sol.checks is not None and sol.checks.passed and sol.f is not None
            and clarabel_retries(problem, ctx, sol) and not non_affine(problem))


def in_units_retry(problem, ctx: SolveContext) -> bool:
    """Whether the chain runs Clarabel once more, at ldpopt's options, on the problem in the other
    unit — your objective's own (:data:`.policy.CLARABEL_UNITS`, :meth:`~..problem.Problem.rescaled`)
    where Clarabel first ran at ldpopt's, ldpopt's where it first ran at yours (:func:`first_unit`) — after
    the retry of :func:`clarabel_retries` gave no answer that passed ldpopt's check and did not end
    the chain (:func:`first_order_cannot_do_better`), or at once where Clarabel stopped without a
    point within the constraints (:func:`clarabel_stopped`, not :func:`clarabel_retries`): the
    problem's unit is not f's own (there is another unit) and the time limit, if any, has not
    passed. Clarabel's path depends on the unit of its variable (its scaling and its tolerances are
    relative to it), so a problem that fails at one unit may solve at the other; the answer's f and
    duals, in frequency units, are judged by this problem's check."""
    return problem.scale != CLARABEL_UNITS and not ctx.clock.expired()


def refuted_in_one_unit(problem, ctx: SolveContext, sol: Solution) -> bool:
    """Whether the chain runs Clarabel once more in the other unit (:func:`in_units_retry`) after its
    first attempt, at ldpopt's options, returned a point that ldpopt's check refuted
    (``inaccurate``): a looser solve in the same unit is no likelier to pass the check
    (:func:`clarabel_stopped`), but Clarabel's path, and where it stops, depend on the unit.
    Measured on the grammar families at d = 10³ whose callable Clarabel first solves as written
    (:func:`first_unit`): seed 4047, refuted as written and then ``inaccurate`` after SCS, is
    ``optimal`` in ldpopt's unit (benchmarks/results/random_families_summary.md, "Clarabel as
    written first")."""
    return (sol.solver == "CLARABEL" and sol.status == "inaccurate" and not clarabel_configured(problem, ctx)
            and in_units_retry(problem, ctx))


def first_order_cannot_do_better(sol: Solution, rest, problem) -> str:
    """Why the chain may stop after ``sol`` though it did not pass ("" where it may not): only
    first-order solvers (SCS, OSQP: less accurate points, the same check) are left in ``rest``, ``sol``
    is an interior-point solver's point, and either

    - ldpopt's check found it feasible, its only failure the KKT test, with the duality gap within
      :data:`~..check.verdict.GAP_TOL` — stationarity is what failed. Measured: CLS − 10⁻³·geo_mean(f)
      at d = 100, Clarabel's point (gap 2e-10, stationarity 3.7e-2) then 9 s of SCS to a point that
      failed the same test and the feasibility one (the whole call 22 s where plain Clarabel took 5 s);
    - or the same with its stationarity within :data:`~..check.verdict.STATIONARITY_TOL` — the gap
      (or the distance bound) is what failed. Measured: CLS + 10⁻³‖·‖₃ at d = 10⁴ (a grammar family,
      seed 5002), Clarabel's point (stationarity 6.7e-7, gap 2.5e-4) then 11.9 s of SCS to a point off
      the simplex by 3.9e-3, where plain Clarabel took 1.5 s;
    - or the check found it feasible and the KKT test could not certify it with a user constraint
      that is not affine (:func:`..check.conflict.non_affine`: there the test certifies and never
      refutes, so a first-order point is no likelier to pass). Measured on the route grid's generated classes: CLS on the simplex with a
      ball that only touches it (d = 100), Clarabel ``optimal_inaccurate`` in 8 ms, then SCS to its
      200,000-iteration limit (2.2 s) and a point that failed feasibility; with a quadratic energy
      constraint at d = 10⁴, SCS was still running after 29 minutes.

    The answer returned is the same (:func:`..solution.best_checked`)."""
    ch = sol.checks
    if sol.solver not in INTERIOR or not rest or not set(rest) <= FIRST_ORDER or ch is None:
        return ""
    if len(ch.failed) == 1 and ch.failed[0].startswith("KKT not certified"):
        if ch.gap is not None and ch.gap <= GAP_TOL:
            return "this interior point is feasible with its duality gap certified (its stationarity is what failed)"
        if ch.stationarity is not None and ch.stationarity <= STATIONARITY_TOL:
            return "this interior point is feasible and stationary (its duality gap is what failed)"
    if not ch.failed and np.isfinite(ch.max_violation) and ch.stationarity is None and (names := non_affine(problem)):
        return (f"this interior point is feasible, and no KKT test certified it (constraint {names[0]!r} "
                f"is not affine: its test certifies, never refutes)")
    return ""


def first_unit(problem) -> float:
    """The unit of the chain's first Clarabel attempt (its variable x = f/unit): your objective's own,
    :data:`.policy.CLARABEL_UNITS` (the callable as written, as plain cvxpy hands it over), where
    the objective is your callable with ldpopt's choice of unit (:attr:`~..objectives.base.UserObjective.
    as_written_first`) and you gave no ``scale``; else the problem's own (``Problem.scale``). The
    other unit, where the two differ, is the chain's retry (:func:`in_units_retry`)."""
    if getattr(problem.objective, "as_written_first", False) and not problem.scale_given:
        return CLARABEL_UNITS
    return problem.scale


def unit_name(unit: float) -> str:
    """How ``Solution.attempts`` and the messages name a Clarabel attempt at ``unit`` that is the
    chain's retry in the other unit."""
    return CLARABEL_UNITS_NAME if unit == CLARABEL_UNITS else CLARABEL_OWN_UNIT_NAME


def _chain_run(problem, ctx: SolveContext, solver, chain: tuple) -> Solution:
    """The cvxpy chain (and ``"SQP"`` in it): each solver in turn (:func:`.attempts.cvxpy_attempt`)
    until one passes ldpopt's check, else the best checked point of every route; always an answer.
    In the default chain Clarabel's first attempt is at :func:`first_unit`; every other attempt, and
    every attempt of a chain you named (``solver=``), at the problem's own unit."""
    clock = ctx.clock
    explicit = solver is not None
    attempts = ctx.attempts
    best = ctx.newton_point  # a smooth objective's Newton point, when that route ran and did not certify
    interior_point = False  # an interior-point solver of the chain has returned a point
    retried = ""  # "ran": Clarabel ran at its default tolerances (policy.CLARABEL_RETRY); "retraced": it
    # was not run, its first attempt having shown that it would only retrace it (retry_retraces)
    first = first_unit(problem)
    # (solver, options over the defaults, its unit, what it is: "first", "retry" at Clarabel's own
    # tolerances, "units" in the other unit)
    plan: list[tuple[str, dict | None, float, str]] = [
        (name, None, first if name == "CLARABEL" and not explicit else problem.scale, "first") for name in chain]
    i = 0
    while i < len(plan):
        name, retry, unit, kind = plan[i]
        i += 1
        # the pre-check's deferred steps before the next solver, unless a point within the check's
        # tolerance is in hand (the set has a point to its resolution; a thinner conflict is still
        # decided when the answer is settled): 7-19 ms per family where Clarabel's first answer
        # failed only its KKT test (random grammar families at d = 100)
        if attempts and not within_tolerance(best) and (pre := deferred(problem, ctx, list(attempts))) is not None:
            return pre
        if clock.expired():  # no solver starts past the time limit
            attempts.append({"solver": name, "status": "time_limit", "checks": "not started", "seconds": 0.0})
            continue
        if name != "SQP" and name not in installed_solvers():
            attempts.append({"solver": name, "status": "solver_not_installed", "checks": "", "seconds": 0.0})
            if explicit and len(chain) == 1:
                best = _failed(problem, "solver_not_installed", name,
                               f"solver {name!r} is not installed (installed: {installed_solvers()})")
            continue
        with clock.running(name):
            if name == "SQP":  # ldpopt's route for the likelihoods (policy.LIKELIHOOD_CHAIN)
                sol = newton_route(problem, ctx)
                sol.attempts = []
            else:
                # a first-order fallback after an interior point's answer gets a budget of its own
                # (an answer it rarely improves is already in hand), within the solve's limit
                cap = fallback_budget(clock.elapsed()) if not explicit and name in FIRST_ORDER and interior_point else None
                solved = problem if unit == problem.scale else problem.derived(
                    f"rescaled {unit!r}", lambda unit=unit: problem.rescaled(unit))
                sol = cvxpy_attempt(solved, name, ctx, not explicit and name == "SCS", cap, retry, judge=problem)
                if kind == "units":
                    before = "your objective's units" if first == CLARABEL_UNITS else "ldpopt's unit"
                    sol.message += (f" | {unit_name(unit)} (" + (
                        "the solver's variable f itself" if unit == CLARABEL_UNITS else
                        f"the solver's variable f/{unit:.3g}, the objective times K = {solved.multiplier:.3g}")
                                    + "), after "
                                    + {"ran": f"both attempts at {before} gave no answer that passed",
                                       "retraced": f"Clarabel at {before} gave no answer that passed, and at "
                                                   "its default tolerances would have retraced it",
                                       "refuted": f"Clarabel's answer at {before} failed ldpopt's check"}.get(
                                        retried, f"Clarabel at {before} stopped without a point within the "
                                                 "constraints")
                                    + " (policy.CLARABEL_UNITS)")
                elif kind == "retry":
                    sol.message += (f" | {CLARABEL_RETRY_NAME} (1e-8), after ldpopt's tighter defaults "
                                    "gave no answer (policy.CLARABEL_RETRY)")
                if cap is not None:
                    left = clock.left()
                    sol.message += (f" | {name} ran as the chain's fallback under a budget of "
                                    f"{cap if left is None else min(cap, max(left, 0.0)):.3g} s (policy.fallback_budget)")
        assert sol.solver is not None  # both routes name their solver
        if kind == "first" and solved_where_stopped(problem, ctx, sol):
            assert sol.checks is not None  # solved_where_stopped asks for a passed check
            sol.status = status_after_check("optimal", sol.checks)
            sol.success = sol.status == "optimal"
            stopped = sol.attempts[0].get("stopped")
            how = f"by ldpopt {stopped}" if stopped else f"short of ldpopt's tolerances after {sol.iterations} iterations"
            sol.message = (f"{sol.solver} stopped {how}, at an iterate that passes Clarabel's own test for Solved "
                           f"at its default tolerances (1e-8): read as its answer at them, where {CLARABEL_RETRY_NAME} "
                           "would stop at an earlier iterate of the same path (routes.solved_where_stopped); "
                           + (unverified_reason(sol.checks) if sol.status == "optimal_unverified"
                              else f"ldpopt's check: {sol.checks.summary()}"))
        clock.note(sol.solver, sol.iterations, status=sol.status,
                   **({"violation": sol.checks.max_violation} if sol.checks is not None else {}))
        named = unit_name(unit) if kind == "units" else CLARABEL_RETRY_NAME if kind == "retry" else None
        record = _attempt(sol)  # (after the messages above), with what a cvxpy attempt's own record adds
        record.update({k: v for own in sol.attempts[:1] for k, v in own.items() if k not in record})
        attempts.append({**record, **({"solver": named} if named is not None else {})})
        # (without a point, the solver's message: a crash, a limit)
        # (answered or failed: SCS after Clarabel's solver_error ran 600 s uncapped at d = 10³)
        interior_point = interior_point or sol.solver in INTERIOR
        if sol.success:
            best = sol
            break
        best = best_checked([best, sol])
        if sol.status == "optimal_unverified":
            # the first answer that passes the check ends the chain: a later solver meets the same
            # unverifiable objective (a kink, no gradient), and ran to its limits here before
            # (total variation + CLS at d = 1,000: PIQP's point, then 30 s more of Clarabel and OSQP)
            break
        after_retry = kind == "retry"  # the chain goes on as after the retry (its own, or one it skipped)
        other = problem.scale if first == CLARABEL_UNITS else CLARABEL_UNITS  # the retry's unit
        if kind == "first" and clarabel_stopped(problem, ctx, sol):
            if clarabel_retries(problem, ctx, sol):
                if not retry_retraces(sol):
                    plan.insert(i, (name, CLARABEL_RETRY, unit, "retry"))  # one more attempt, named in ``attempts``
                    retried = "ran"
                    continue
                retried, after_retry = "retraced", True
                sol.message += (f" | not run again as {CLARABEL_RETRY_NAME} (1e-8): none of its iterates met "
                                "them, and at them it would retrace the same iterates (routes.retry_retraces)")
            elif in_units_retry(problem, ctx):  # an error, or a point off the constraints: the unit at once
                plan.insert(i, (name, None, other, "units"))
                continue
        elif kind == "first" and refuted_in_one_unit(problem, ctx, sol):  # its answer refuted: the other unit
            retried = "refuted"
            plan.insert(i, (name, None, other, "units"))
            continue
        if not explicit and (why := first_order_cannot_do_better(sol, [n for n, _, _, _ in plan[i:]], problem)):
            sol.message += f" | the chain stops here: only first-order solvers are left, and {why}"
            break
        if after_retry and in_units_retry(problem, ctx):
            plan.insert(i, (name, None, other, "units"))  # and one in the other unit
            continue
    if best is None or not (best.success or best.status.startswith("infeasible")):
        best = best_checked([best, ctx.kept])  # every route failed: the best checked point of all of them
    if best is None and clock.expired():
        best = _failed(problem, "time_limit", chain[0], "no solver started within the time limit")
    if best is None:  # nothing installed
        best = _failed(problem, "solver_not_installed", chain[0],
                       f"none of {list(chain)} is installed (installed: {installed_solvers()})")
    not_infeasible_if_known_feasible(problem, ctx, best)
    if explicit and not best.success and uses_sqp(problem) and is_likelihood(problem):
        best.message += (f" | at d = {problem.estimate.d} >= {SQP_MIN_D} conic solvers are known to fail this "
                         "exact likelihood: solve() without a solver (or solver='SQP') uses sequential QP")
    timed_out(best, clock)
    if len(attempts) > 1:
        best.message += " | attempts: " + "; ".join(f"{a['solver']}: {a['status']}" for a in attempts)
    best.attempts = list(attempts)
    best.wall_time = time.perf_counter() - ctx.start
    return best


#: the routes ``Problem.solve`` tries, in order; the last (the cvxpy chain) always answers
ROUTES = (
    Route("simplex LP", _simplex_lp_plan, _simplex_lp_run),
    Route("structured", _structured_plan, _structured_run),
    Route("direct QP", _direct_plan, _direct_run),
    Route("Newton / SQP", _newton_plan, _newton_run),
    Route("cvxpy chain", lambda problem, ctx, solver: chain_for(problem, solver), _chain_run),
)
