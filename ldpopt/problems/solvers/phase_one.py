"""Phase one for a user's constraints: before the objective, a feasibility solve decides whether the
constraints that the exact pre-check (:mod:`.feasibility`) could not take have a common point.
Notes: docs/notes/problems.md, "ldpopt.problems.solvers.phase_one".
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from ..constraints.feasibility import Infeasibility
from ..errors import user_code_raised
from .isolate import solved_raw

__all__ = ["KILL_GRACE", "MAX_SECONDS", "PHASE_ONE_FLOOR", "PhaseOne", "infeasible_solution", "needs_phase_one", "phase_one",
           "pre_check"]

#: smallest dual lower bound on the smallest violation for which the constraints are called infeasible
PHASE_ONE_FLOOR = 1e-12
#: the longest the phase one runs (seconds of wall clock; less when the solve's time limit leaves less)
MAX_SECONDS = 10.0
#: seconds past Clarabel's own limit after which the phase one's child process is killed
KILL_GRACE = 0.5


@dataclass
class PhaseOne:
    """``verdict`` "infeasible" (ldpopt's check, :func:`.check.conflict.verified_conflict`, proved the
    conflict at the phase one's point), "feasible" (a point with violation ≤ 0 found) or "undecided"
    (``why``: the solver's dual bound alone is never a claim); ``primal`` and ``dual`` the phase one's
    values (s* lies in [dual, primal] up to the solver's tolerances), ``infeasibility`` the verified
    conflict when infeasible (its ``margin`` the check's lower bound, not the solver's), ``seconds``
    wall clock."""

    verdict: str
    primal: float = float("nan")
    dual: float = float("nan")
    seconds: float = 0.0
    why: str = ""
    infeasibility: Infeasibility | None = field(default=None)


def needs_phase_one(problem, decision) -> bool:
    """The rule (notes: docs/problems.md): a user constraint, and the exact pre-check not complete."""
    from ..constraints.base import UserConstraint

    user = any(isinstance(c, UserConstraint) for c in problem.constraints)
    return user and not (decision.complete and decision.feasible is not None)


def phase_one(problem, time_limit: float | None = None) -> PhaseOne:
    """Run the phase one (notes: docs/problems.md) on ``problem`` (its built cvxpy constraints)."""
    start = time.perf_counter()
    form = problem.derived("phase one", lambda: _phase_one_form(problem))
    if isinstance(form, str):
        return PhaseOne("undecided", why=form)
    prob, named = form
    limit = MAX_SECONDS if time_limit is None else max(min(MAX_SECONDS, float(time_limit)), 0.01)
    with problem.cvxpy_lock:  # the problem's x and duals are set by the solve and read below (threads)
        return _solved(problem, prob, named, limit, start)


def _phase_one_form(problem) -> tuple | str:
    """The phase one's cvxpy problem, min s over the problem's constraints with each user constraint
    relaxed by s (an inequality g ≤ s, an equality |h| ≤ s), and its named constraints; or why it
    cannot be written. Made once per problem (``Problem.derived``): it holds the problem's own cvxpy
    constraints, so a Parameter's new value reaches it, and cvxpy keeps its compilation between
    solves (a second solve pays cvxpy's parameter update, not the compilation)."""
    import cvxpy as cp

    from ..constraints.base import UserConstraint

    s = cp.Variable(name="phase_one_violation")
    cons, named = [s >= -1.0], {}
    owners = problem.owners
    for name, con in problem.named_constraints.items():
        owner = owners[name][0]
        if not isinstance(owner, UserConstraint):
            named[name] = con
        elif isinstance(con, cp.constraints.Inequality):
            named[name] = con.expr <= s
        elif isinstance(con, cp.constraints.Equality):
            named[name] = cp.abs(con.expr) <= s
        else:
            return f"constraint {name!r} is a {type(con).__name__}, not relaxed here"
    return cp.Problem(cp.Minimize(s), cons + list(named.values())), named


def _solved(problem, prob, named: dict, limit: float, start: float) -> PhaseOne:
    """:func:`phase_one` from its cvxpy problem ``prob`` on: solved, then its conflict checked."""
    import cvxpy as cp

    from ..constraints.base import UserConstraint

    try:
        data, chain, inverse = prob.get_problem_data(cp.CLARABEL)
        # in the worker's child (.isolate): a crash or a hang there decides nothing
        raw = solved_raw(chain.solver, data, {"time_limit": limit}, limit + KILL_GRACE, "Clarabel (phase one)")
        inverse[-1].solver_options = {}
        prob.unpack_results(raw, chain, inverse)
    except Exception as exc:  # noqa: BLE001 - a solver failure decides nothing: the objective is solved as before
        return PhaseOne("undecided", seconds=time.perf_counter() - start, why=f"phase one failed: {exc}")
    out = PhaseOne("undecided", float(raw.obj_val), float(raw.obj_val_dual), time.perf_counter() - start)
    if str(raw.status) not in ("Solved", "AlmostSolved"):
        out.why = f"Clarabel status {raw.status}"
        return out
    # Clarabel's dual bound is a candidate, not a proof: ldpopt's check (.check.conflict) decides from
    # the phase one's point and the user constraints' multipliers, in exact arithmetic on the linear part
    # (tried whenever either value says the violation may be positive: a primal value <= 0 is a point
    # within the solver's tolerance, not a proof of feasibility either)
    said = np.isfinite(out.dual) and out.dual > PHASE_ONE_FLOOR and out.primal - out.dual <= 0.5 * out.dual
    got = None
    if problem.x.value is not None and (out.primal > 0 or out.dual > 0):
        from ..check.conflict import verified_conflict

        weights = {n: con.dual_value for n, con in named.items()
                   if isinstance(problem.owners[n][0], UserConstraint) and con.dual_value is not None}
        try:
            got = verified_conflict(problem, np.asarray(problem.x.value, float) * problem.scale, weights)
        except Exception as exc:
            # (cvxpy's NotImplementedError from the inf-norm's gradient among them)
            if user_code_raised(exc):
                raise
            out.why = f"ldpopt's check of the phase one's conflict could not run: {exc}"
    if got is not None:
        out.verdict, out.infeasibility = "infeasible", got
    elif out.primal <= 0:
        out.verdict = "feasible"
    elif said:
        out.why = (out.why or f"the phase one's dual bound {out.dual:.1e} > 0 was not verified by ldpopt's check "
                   "(the set may be empty by less than the check resolves, or not empty): no claim")
        out.infeasibility = None
    else:
        out.why = f"smallest violation in [{out.dual:.1e}, {out.primal:.1e}]: thinner than the solver's tolerance"
    out.seconds = time.perf_counter() - start
    return out


def pre_check(problem, time_limit: float | None = None, ctx=None):
    """(Solution or None, system or None): the exact pre-check's cheap steps first
    (:func:`.feasibility.decide` with ``defer=True``). Decided: as :func:`infeasible_solution`
    (the ``"infeasible"`` Solution, or None to solve as usual) with system None. Left open by those
    steps on a system that holds every constraint (``complete``: no user non-affine row, so no phase
    one is due): (None, :func:`.feasibility.owned_system`'s tuple) — the caller solves, then proves
    feasibility from the answer (:func:`.feasibility.point_feasible`) or, failing that, calls
    :func:`infeasible_solution` (the full decision) before returning anything. Anything else: the
    full :func:`infeasible_solution` at once, as before. ``ctx``: the solve's
    :class:`~..progress.SolveContext`, where the decision is kept (``ctx.feasibility``; None: not kept)."""
    from ..constraints.feasibility import DEFERRED, Decision, decide, one_total_feasible, owned_system
    from ..progress import CheckTimedOut

    if one_total_feasible(problem.constraints):  # the simplex family: closed form, no system built
        return infeasible_solution(problem, time_limit, Decision(True, how="closed form", complete=True), ctx), None
    start = time.perf_counter()
    deadline = None if time_limit is None else start + time_limit
    try:
        system = owned_system(problem)
        got = decide(problem, deadline, defer=True, system=system)
    except (ValueError, CheckTimedOut):  # malformed data, or no time: the full path says what it says
        return infeasible_solution(problem, time_limit, None, ctx), None
    if got.how == DEFERRED and got.complete:
        _keep(ctx, "feasibility", Decision(None, how=DEFERRED, complete=True))
        return None, system
    if got.certificate is None and not got.complete and needs_phase_one(problem, got):
        # a user's non-affine constraint: the phase one (a second conic solve of the whole problem,
        # as costly as the route) deferred too, run only where the route's answer does not show the
        # constraints met (:func:`~ldpopt.problems.check.point.user_rows_met`, in :func:`.routes.settle`)
        _keep(ctx, "feasibility", Decision(None, how=DEFERRED, complete=False))
        return None, system
    left = None if deadline is None else max(deadline - time.perf_counter(), 0.0)
    return infeasible_solution(problem, left, None if got.how == DEFERRED else got, ctx), None


def _keep(ctx, what: str, value) -> None:
    """``value`` kept on the solve's context as ``what`` (no context: not kept)."""
    if ctx is not None:
        setattr(ctx, what, value)


def infeasible_solution(problem, time_limit: float | None = None, decision=None, ctx=None):
    """The ``"infeasible"`` :class:`~ldpopt.problems.Solution` of ``problem`` when the exact pre-check
    (:func:`.feasibility.decide`) proves its constraints conflict, or, where that decision is not
    complete for a user's constraints, when the phase one (:func:`phase_one`, at most ``time_limit``
    seconds) certifies that they do; else None (solve as usual). The exact pre-check stops at
    ``time_limit`` too: past it, nothing is decided and nothing claimed (None; the phase one is not
    run). ``decision``: the exact pre-check's answer when the caller has it (not decided again).
    ``ctx``: the solve's :class:`~..progress.SolveContext`, where the decision (``feasibility``) and
    the phase one's result (``phase_one``) are kept (None: not kept)."""
    import time

    from ..constraints.feasibility import Decision, decide
    from ..progress import CheckTimedOut
    from ..solution import Solution

    start = time.perf_counter()
    deadline = None if time_limit is None else start + time_limit
    try:
        got = decide(problem, deadline) if decision is None else decision
    except ValueError:  # malformed data (bad indices, ...): the solver route raises it as before
        return None
    except CheckTimedOut as exc:  # no decision: no claim either way
        _keep(ctx, "feasibility", Decision(None, how=str(exc)))
        return None
    _keep(ctx, "feasibility", got)  # a proof of feasibility keeps a solver's "infeasible" from being reported
    cert, solver = got.certificate, "LDPOPT-FEASIBILITY"
    if cert is None and needs_phase_one(problem, got):
        left = None if deadline is None else deadline - time.perf_counter()
        if left is not None and left <= 0:
            return None
        ph = phase_one(problem, left)
        _keep(ctx, "phase_one", ph)
        if ph.verdict == "infeasible" and ph.infeasibility is not None:
            cert, solver = ph.infeasibility, "LDPOPT-PHASE-ONE"
    if cert is None:
        return None
    sol = Solution.failed(problem.estimate.d, "infeasible", solver, problem.objective.name,
                          cert.summary(), np.inf, infeasibility=cert)
    sol.wall_time = time.perf_counter() - start
    sol.attempts = [{"solver": sol.solver, "status": sol.status, "checks": "", "seconds": sol.wall_time}]
    return sol
