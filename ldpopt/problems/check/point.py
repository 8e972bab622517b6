"""A problem's cvxpy variable set to a point for the duration of a block: how ldpopt's check and its
conflict proof evaluate the cvxpy expressions of constraints that have no numpy form (a user's
callables), at the point they judge; whether a point meets a user's constraints that the exact
linear system leaves out (:func:`user_rows_met`), a candidate one least-norm step from an answer
inside them (:func:`pulled_in`), read by the same test before the phase one is skipped, and an answer
moved onto its per-value bounds and its total (:func:`onto_bounds_and_total`), which ldpopt's check
judges afresh."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np

__all__ = ["HELD_BAND", "MET_WITHIN", "ONTO_MAX_MOVE", "PULL_MAX_ROWS", "SYSTEM_ROWS", "at_point", "onto_bounds_and_total",
           "pulled_in", "user_rows_met"]

#: the most a user's left-out constraint g(f) ≤ 0 may read above 0 at the point and still count as
#: met (:func:`user_rows_met`): the phase one's own floor (``solvers.phase_one.PHASE_ONE_FLOOR``; it
#: claims a conflict only with a verified smallest violation above it, which such a point refutes up
#: to rounding). An active constraint reads 1e-13–1e-12 above 0 at an interior point's answer
MET_WITHIN = 1e-12
#: the most rows of one constraint the exact linear system holds (``constraints.feasibility.MAX_LP``,
#: not imported here: this module sits below the pre-check's chain of imports)
SYSTEM_ROWS = 10**7
#: the most rows (the linear system's active ones and the user's entries to pull in) of the least-norm
#: step of :func:`pulled_in`; past it no step is tried (the phase one decides, as without one)
PULL_MAX_ROWS = 2_000
#: the entries and rows :func:`pulled_in` holds in place besides those it moves: within this many τ
#: of their bound (the step, about τ / ‖∇g‖ long, would push a closer one out where its gradient is
#: larger: an entry 3e-11 inside a constraint read 3.9e-10 outside after a step that held none)
HELD_BAND = 1e3
#: the farthest :func:`onto_bounds_and_total` moves a value, in units of the check's accuracy
#: tolerance (``verdict.accuracy_tol``, 1e-2/d): a solver's rounding, not another point
ONTO_MAX_MOVE = 1e-2


@contextmanager
def at_point(problem, f: np.ndarray) -> Iterator[None]:
    """cvxpy's variable of ``problem`` set to the point f (frequency units) inside the block, and back
    to what it was after it (also when the block raises); the problem's ``cvxpy_lock`` is held
    meanwhile (another thread's solve of it sets the same variable).

    Parameters
    ----------
    problem : Problem
        Its ``x`` (the cvxpy variable, in units of ``problem.scale``) is set.
    f : ndarray (d,)
        The point, in frequency units.

    Examples
    --------
    >>> import numpy as np
    >>> import ldpopt
    >>> from ldpopt.problems.check.point import at_point
    >>> est = ldpopt.oracles.get("grr", 1.0, 3).estimate(np.array([500, 300, 200]), 1000)
    >>> prob = ldpopt.Problem(est)
    >>> with at_point(prob, np.array([0.5, 0.3, 0.2])):
    ...     float(np.sum(prob.x.value) * prob.scale)
    1.0
    >>> prob.x.value is None
    True
    """
    from ..objectives.recognise import set_value

    x = problem.x
    with problem.cvxpy_lock:  # x's value is shared by every thread solving this problem
        saved = x.value
        set_value(x, np.asarray(f, dtype=np.float64) / problem.scale)
        try:
            yield
        finally:
            set_value(x, saved)


def user_rows_met(problem, f: np.ndarray, complete: bool) -> bool:
    """Whether the point f (frequency units) meets, in floating point, every constraint of a user's
    callable that the exact linear system (:func:`~ldpopt.problems.constraints.feasibility.owned_system`,
    ``complete`` its flag) leaves out: each a ``<=`` whose g(f) = lhs − rhs is ≤ :data:`MET_WITHIN` at f,
    entry by entry. True at once where the system holds every constraint. With the linear system proved
    non-empty at the same f (:func:`~ldpopt.problems.constraints.feasibility.point_feasible`), this
    is the evidence that lets the phase one (:mod:`~ldpopt.problems.solvers.phase_one`, a second
    conic solve of the whole problem) be skipped: the phase one claims a conflict only with a
    verified margin above 1e-12, which a point with g(f) ≤ that floor contradicts up to the rounding of g's
    evaluation. An equality or a cone constraint left out (a ``>>``, an exponential cone written as
    a constraint object) is not decided here: False, and the phase one runs as before.

    Parameters
    ----------
    problem : Problem
        The problem whose user constraints are read (its built cvxpy constraints).
    f : ndarray (d,)
        The point, in frequency units.
    complete : bool
        The linear system's own flag: True when it holds every constraint.

    Returns
    -------
    bool

    Examples
    --------
    >>> import cvxpy as cp
    >>> import numpy as np
    >>> import ldpopt
    >>> from ldpopt.problems import Problem, Simplex
    >>> from ldpopt.problems.check.point import user_rows_met
    >>> est = ldpopt.oracles.get("grr", 1.0, 3).estimate(np.array([500, 300, 200]), 1000)
    >>> prob = Problem(est, "cls", [Simplex(), lambda f, e: cp.norm(f - 1 / 3, 2) <= 0.1])
    >>> user_rows_met(prob, np.array([0.4, 0.3, 0.3]), False), user_rows_met(prob, np.array([1.0, 0.0, 0.0]), False)
    (True, False)
    """
    from ..constraints.base import UserConstraint

    if complete:
        return True
    f = np.asarray(f, dtype=np.float64)
    if f.shape != (problem.estimate.d,) or not np.all(np.isfinite(f)):
        return False
    left_out = _left_out(problem)
    if left_out is None:
        return False
    try:
        with at_point(problem, f):
            for con in left_out:
                g = con.expr.value
                if g is None or not np.all(np.asarray(g, dtype=np.float64) <= MET_WITHIN):
                    return False
    except Exception:  # noqa: BLE001 - cvxpy cannot evaluate it here: not decided, the phase one runs
        return False
    # an affine equality is in the system unless it has more rows than the exact LP takes
    return all(con.size <= SYSTEM_ROWS for name, con in problem.named_constraints.items()
               if isinstance(problem.owners[name][0], UserConstraint) and con.expr.is_affine())


def pulled_in(problem, f: np.ndarray, system) -> np.ndarray | None:
    """A candidate point near the answer f (frequency units) that meets the user's left-out
    constraints with room to spare, or None where no step is tried.

    An interior-point answer meets an active curved constraint of a user's, g(f) ≤ 0, only to its
    tolerance: g(f) reads 1e-12–1e-9 above 0, more than :data:`MET_WITHIN`, and the phase one (a
    second conic solve of the whole problem) would run to rule out a set empty by that little. One
    least-norm step usually moves the answer inside: δ with ∇g_e(f)·δ = −(g_e(f) + τ) for every entry
    e of a left-out curved inequality, and a_i·δ = −(r_i + τ) for every inequality row of the linear
    system (a user's affine ``<=`` among them), whose value g_e(f) or r_i = a_i·f − b_i is above −τ
    (τ = the largest of them, at least 1e-11); every equality row, every other entry or inequality
    row within :data:`HELD_BAND` τ of its bound (or 1e-9 of its right side) and every value within
    1e-9 of a bound kept where it is, f first clipped onto its per-value bounds (the system's: f ≥ 0
    and a user's rows of one value, such as ``f[i] <= c``, which a grammar family's answer read
    8.5e-12 past c at d = 100, held there out of the step's reach); a held row's δ undoes what the
    clip moved it by, so it keeps the answer's value (δ zero there where nothing was clipped). scipy's ``lsqr`` from δ = 0 gives the least-norm solution of that system. Where the set
    has a point strictly inside those constraints near f, g(f + δ) ≈ −τ < 0 to first order, with ‖δ‖
    about τ / ‖∇g‖.

    The candidate is evidence, not a proof: the caller proves it (the linear system non-empty at
    it, :func:`~ldpopt.problems.constraints.feasibility.point_feasible`, and :func:`user_rows_met`
    at it), as for the answer itself. The answer returned is f, never the candidate.

    Parameters
    ----------
    problem : Problem
        The problem whose user constraints are read (its built cvxpy constraints).
    f : ndarray (d,)
        The answer, in frequency units.
    system : tuple
        :func:`~ldpopt.problems.constraints.feasibility.owned_system`'s tuple for ``problem``.

    Returns
    -------
    ndarray (d,) or None
        None where the system holds every constraint, a left-out constraint is not an inequality,
        no entry reads above −τ, a gradient is not available (cvxpy has none at f), the step's
        system has more than :data:`PULL_MAX_ROWS` rows or ``lsqr`` gives no finite step.

    Examples
    --------
    >>> import cvxpy as cp
    >>> import numpy as np
    >>> import ldpopt
    >>> from ldpopt.problems import Problem, Simplex
    >>> from ldpopt.problems.constraints.feasibility import owned_system
    >>> from ldpopt.problems.check.point import pulled_in, user_rows_met
    >>> est = ldpopt.oracles.get("grr", 1.0, 3).estimate(np.array([500, 300, 200]), 1000)
    >>> prob = Problem(est, "cls", [Simplex(), lambda f, e: cp.norm(f - 1 / 3, 2) <= 0.1])
    >>> f = np.array([1 / 3 + 0.1 / np.sqrt(2) + 1e-10, 1 / 3 - 0.1 / np.sqrt(2) - 1e-10, 1 / 3])  # 1e-10 outside
    >>> g = pulled_in(prob, f, owned_system(prob))
    >>> user_rows_met(prob, f, False), user_rows_met(prob, g, False), bool(abs(g.sum() - 1) < 1e-15)
    (False, True, True)
    """
    import scipy.sparse as sp
    from scipy.sparse.linalg import lsqr

    from ..objectives.recognise import cvxpy_grad, numpy_grad

    lo, up, _, _, A, b, ineq, _, _, complete = system
    f = np.asarray(f, dtype=np.float64)
    if complete or f.shape != (problem.estimate.d,) or not np.all(np.isfinite(f)):
        return None
    answer = f
    f = np.clip(f, lo, up)  # onto the per-value bounds first: a value held within 1e-9 of one is never moved below
    left_out = _left_out(problem)
    if left_out is None:
        return None
    # an affine one is a row of the system, moved with the system's rows (a second row for it would
    # contradict that one)
    curved = [con for con in left_out if not con.expr.is_affine()]
    r = np.asarray(A @ f).ravel() - b if A.shape[0] else np.zeros(0)  # each row's value, ≤ 0 or = 0
    clipped = np.asarray(A @ (f - answer)).ravel() if A.shape[0] else np.zeros(0)  # what the clip moved each row by
    x = problem.x
    memo: dict = {}  # this call's constant Jacobians of the affine nodes (cvxpy_grad)
    rows: list = []
    rhs: list = []
    n_rows = 0
    try:
        with at_point(problem, f):
            values = [np.asarray(con.expr.value, dtype=np.float64).ravel(order="F") for con in curved]
            top = max([float(np.max(v, initial=-np.inf)) for v in values] + [float(np.max(r[ineq], initial=-np.inf))])
            if not np.isfinite(top):
                return None
            tau = max(top, 1e-11)
            band = HELD_BAND * tau  # an entry this close is held, lest the step push it out
            for con, v in zip(curved, values):
                near = np.flatnonzero(v > -band)
                if near.size == 0:
                    continue
                n_rows += near.size
                if n_rows > PULL_MAX_ROWS:
                    return None
                grad = None
                if con.expr.size == 1:
                    grad = numpy_grad(con.expr, x, np.asarray(x.value, dtype=np.float64))
                    grad = None if grad is None else grad[None, :]
                if grad is None:
                    got = cvxpy_grad(con.expr, memo)
                    jac = None if got is None else got.get(x)
                    if jac is None:
                        return None
                    grad = sp.csr_matrix(jac).T[near] if not sp.issparse(jac) else jac.T.tocsr()[near]
                rows.append(sp.csr_matrix(grad) / problem.scale)  # ∂g/∂f = ∂g/∂x / s
                rhs.append(-np.maximum(v[near] + tau, 0.0))  # above -τ: to -τ; the others held
    except Exception:  # noqa: BLE001 - cvxpy cannot evaluate or differentiate it here: no step
        return None
    # the system's rows as the curved entries: an inequality above -τ moved to -τ, equalities and the
    # other inequalities within the band (or 1e-9 of their right side) held where they are
    moving = ineq & (r > -tau)
    active = np.flatnonzero(~ineq | moving | (r >= -np.maximum(band, 1e-9 * np.maximum(1.0, np.abs(b)))))
    if not rows and not np.any(moving):
        return None
    n_rows += active.size
    if n_rows > PULL_MAX_ROWS:
        return None
    free = (f - lo > 1e-9) & (up - f > 1e-9)
    M = sp.vstack([A[active]] + rows, format="csr")[:, np.flatnonzero(free)]
    # (a held row back where the answer had it: the clip's move undone by the free values)
    target = np.concatenate([np.where(moving[active], -(r[active] + tau), -clipped[active])] + rhs)
    step = lsqr(M, target, atol=1e-14, btol=1e-14, iter_lim=10 * n_rows + 100)[0]
    if not np.all(np.isfinite(step)):
        return None
    out = f.copy()
    out[free] += step
    return out


def _left_out(problem) -> list | None:
    """The user's cvxpy constraints that the exact linear system does not hold as equalities: every
    ``<=`` of a user's callable (its affine ones are in the system too; a floating-point reading of
    them costs nothing), or None where a user constraint is neither an affine equality nor an
    inequality (a cone, a non-affine equality: not read at a point here)."""
    import cvxpy as cp

    from ..constraints.base import UserConstraint

    left_out = []
    for name, con in problem.named_constraints.items():
        if not isinstance(problem.owners[name][0], UserConstraint):
            continue
        if isinstance(con, cp.constraints.Equality) and con.expr.is_affine():
            continue  # in the linear system (the caller proves it at the point) unless too large
        if not isinstance(con, cp.constraints.Inequality):
            return None
        left_out.append(con)
    return left_out


def onto_bounds_and_total(f: np.ndarray, lo: np.ndarray, up: np.ndarray, total: float,
                          max_move: float) -> np.ndarray | None:
    """The point f (frequency units) moved onto l ≤ f ≤ u and Σ f = total, or None where that takes a
    move of more than ``max_move`` in some value. An interior-point answer meets f ≥ 0 and Σ f = 1 to its
    own tolerance in its own unit: at d = 10³ a grammar family's Clarabel answer read −3e-8 on a value,
    Σ f − 1 = 5e-8, or 8e-9 of negative mass spread over the values, over ldpopt's 1e-9 — the only
    failures of its check on 8 of the 100. Clipped onto the bounds, then the values off their lower
    bound scaled about it, g = l + (f − l)·(total − Σ l)/Σ(f − l) (a value at its bound stays there, so
    complementary slackness is kept), a value that reaches u held there and the rest scaled again (at
most four passes; a sum still off by more than its rounding: None). The candidate is not a proof: the
    caller's check judges it with the answer's multipliers (user constraints, stationarity, the gap),
    and the answer is the candidate only where that check passes.

    Parameters
    ----------
    f : ndarray (d,)
        The answer.
    lo, up : ndarray (d,)
        The per-value bounds (lo finite).
    total : float
        The Σ f = total row's right side.
    max_move : float
        The largest move allowed in any value.

    Returns
    -------
    ndarray (d,) or None

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt.problems.check.point import onto_bounds_and_total
    >>> g = onto_bounds_and_total(np.array([0.5, 0.5 + 4e-9, -1e-9]), np.zeros(3), np.full(3, np.inf), 1.0, 1e-6)
    >>> bool(np.all(g >= 0)), float(np.sum(g)), float(g[2])
    (True, 1.0, 0.0)
    """
    import math

    f = np.asarray(f, dtype=np.float64)
    if not (np.all(np.isfinite(f)) and np.all(np.isfinite(lo)) and np.isfinite(total)):
        return None
    g = np.clip(f, lo, up)
    held = np.zeros(g.shape, bool)  # values put on their upper bound by a scaling up
    for _ in range(4):
        room = np.where(held, 0.0, g - lo)
        free = math.fsum(room)
        want = total - math.fsum(np.where(held, g, lo))
        if not (free > 0 and want >= 0):
            return None
        g = np.where(held, g, np.minimum(lo + room * (want / free), up))
        over = ~held & (g >= up)
        if not np.any(over) or want <= free:
            break
        held |= over
    if abs(math.fsum(g) - total) > 4 * g.size * np.finfo(float).eps * max(abs(total), 1.0):
        return None
    moved = float(np.max(np.abs(g - f), initial=0.0))
    return g if moved <= max_move else None
