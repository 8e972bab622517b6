"""Clarabel watched as it runs: the chain's Clarabel runs with a termination callback that ends the
solve once its progress toward its own tolerances has stalled (:func:`stalled`), the stop read as
Clarabel reads its iteration limit (:func:`stopped_status`), and that records whether its iterates
ever met the tolerances of the chain's retry (:func:`meets`: Clarabel's own defaults,
``policy.CLARABEL_RETRY``), which the chain reads before it runs the retry. The stop runs from
iteration :data:`STALL_START` where ldpopt's own limit does (``policy.CLARABEL_MAX_ITER_MAX_D``), the
record at every size; neither where you configured Clarabel. Where Clarabel stops short of
``Solved``, the watch also says whether the iterate it returned passes Clarabel's own test for
``Solved`` at the retry's tolerances (:func:`solved`), which the chain reads instead of running the
retry. How the rule was chosen, and where it was not safe: docs/notes/problems.md,
"ldpopt.problems.solvers.stall".
"""

from __future__ import annotations

import math
from types import SimpleNamespace

__all__ = ["STALL_FACTOR", "STALL_START", "STALL_WINDOW", "StallWatch", "meets", "solve_clarabel", "solved",
           "stalled", "stopped_status"]

#: iterations over which Clarabel must make progress (:func:`stalled`)
STALL_WINDOW = 15
#: the least factor by which the best of m must fall over :data:`STALL_WINDOW` iterations
STALL_FACTOR = 2.0
#: the first iteration at which Clarabel may be stopped so
STALL_START = 60


def stalled(best: list[float], m: float, window: int = STALL_WINDOW, factor: float = STALL_FACTOR,
            start: int = STALL_START) -> bool:
    """Whether the solve has stalled at this iteration: ``best`` the least m of each iteration so far
    (this one's last), ``m`` this iteration's (module docstring). Not before iteration ``start`` (nor
    before ``window`` iterations), nor where m ≤ 1 (Clarabel stops there itself)."""
    k = len(best) - 1
    return k >= max(start, window) and m > 1.0 and best[k] > best[k - window] / factor


def meets(info, tol: dict) -> bool:
    """Whether Clarabel's iterate ``info`` (its ``DefaultInfo``) meets the tolerances ``tol``
    (``tol_feas``, ``tol_gap_abs``, ``tol_gap_rel``) as Clarabel's own test for ``Solved`` reads them:
    both residuals within ``tol_feas`` and either gap within its own. Clarabel's test also asks
    κ/τ ≤ ``tol_ktratio``; that part is left out, so an iterate is said to meet them at least as
    often as Clarabel would say ``Solved`` there."""
    return (info.res_primal <= tol["tol_feas"] and info.res_dual <= tol["tol_feas"]
            and (info.gap_abs <= tol["tol_gap_abs"] or info.gap_rel <= tol["tol_gap_rel"]))


def solved(last: dict, tol: dict) -> bool:
    """Whether an iterate whose residuals, gaps and κ/τ are ``last`` (the fields :class:`StallWatch`
    keeps) passes Clarabel's own test for ``Solved`` at the tolerances ``tol`` (``tol_feas``,
    ``tol_gap_abs``, ``tol_gap_rel``), as Clarabel writes it (``DefaultInfo::check_convergence``,
    0.11): κ/τ ≤ 1, both residuals below ``tol_feas`` and either gap below its own, each
    comparison strict. Unlike :func:`meets`, nothing is left out: where this holds, Clarabel run at
    ``tol`` would have said ``Solved`` at this iterate had it reached it."""
    return (last["ktratio"] <= 1.0 and last["res_primal"] < tol["tol_feas"] and last["res_dual"] < tol["tol_feas"]
            and (last["gap_abs"] < tol["tol_gap_abs"] or last["gap_rel"] < tol["tol_gap_rel"]))


class StallWatch:
    """Clarabel's termination callback: records each iteration's progress measure and says stop
    where :func:`stalled` (``stop``; False: it only records); ``stopped_at`` the iteration it stopped
    (None: it did not), ``last`` that iteration's entry of ``recent``; ``retry_met_at`` the first
    iteration whose iterate :func:`meets` the tolerances ``retry`` (None: none did, or no ``retry``
    was given); ``recent`` the last two iterations' costs, residuals, gaps and κ/τ (Clarabel's
    ``DefaultInfo`` fields), from which :meth:`returned_solved` reads the iterate Clarabel returned."""

    #: the ``DefaultInfo`` fields kept for the last two iterations (``recent``)
    FIELDS = ("cost_primal", "cost_dual", "res_primal", "res_dual", "gap_abs", "gap_rel", "ktratio")

    def __init__(self, settings, stop: bool = True, retry: dict | None = None):
        self.tol = (float(settings.tol_feas), float(settings.tol_gap_abs), float(settings.tol_gap_rel))
        self.stop, self.retry = stop, retry
        self.best: list[float] = []
        self.stopped_at: int | None = None
        self.retry_met_at: int | None = None
        self.recent: list[dict] = []

    def returned_solved(self, raw) -> bool | None:
        """Whether the iterate Clarabel returned as ``raw`` (its ``DefaultSolution``) passes its test
        for ``Solved`` at the tolerances ``retry`` (:func:`solved`); None without ``retry``. That
        iterate is one of the last two the callback saw: the last where the callback stopped the solve
        (it runs after the iterate's residuals are read and before any step, and a stop breaks the
        loop), where Clarabel reached its iteration limit (tested after the callback) or stopped on a
        failed step; the one before where it stopped for insufficient progress, which restores the
        previous iterate with its costs and residuals (``solver.rs``, ``info.rs``, 0.11). It is found
        by its costs and residuals, which Clarabel's answer copies (``obj_val``, ``obj_val_dual``,
        ``r_prim``, ``r_dual``): False where neither matches, or where one that matches fails the test."""
        if self.retry is None:
            return None
        key = (raw.obj_val, raw.obj_val_dual, raw.r_prim, raw.r_dual)
        same = [e for e in self.recent if (e["cost_primal"], e["cost_dual"], e["res_primal"], e["res_dual"]) == key]
        return bool(same) and all(solved(e, self.retry) for e in same)

    def __call__(self, info) -> bool:
        feas, gap_abs, gap_rel = self.tol
        m = max(info.res_primal / feas, info.res_dual / feas, min(info.gap_abs / gap_abs, info.gap_rel / gap_rel))
        m = float("inf") if math.isnan(m) else m  # a NaN residual: no progress
        self.best.append(min(m, self.best[-1]) if self.best else m)
        if self.retry is not None and self.retry_met_at is None and meets(info, self.retry):
            self.retry_met_at = int(info.iterations)
        self.recent = [*self.recent[-1:], {k: float(getattr(info, k)) for k in self.FIELDS}]
        if not (self.stop and stalled(self.best, m)):
            return False
        self.stopped_at = int(info.iterations)
        return True

    @property
    def last(self) -> dict | None:
        """The entry of ``recent`` for the iteration the watch stopped at (None: it did not stop)."""
        return self.recent[-1] if self.stopped_at is not None else None


def stopped_status(last: dict, settings) -> str:
    """The status Clarabel gives at its iteration limit for a solve stopped at ``last``'s residuals:
    ``"AlmostSolved"`` where they meet its reduced tolerances (both residuals and a gap, absolute or
    relative, each below its reduced tolerance, and κ/τ ≤ 1: Clarabel's own test), else
    ``"MaxIterations"``."""
    feas = last["res_primal"] < settings.reduced_tol_feas and last["res_dual"] < settings.reduced_tol_feas
    gap = last["gap_abs"] < settings.reduced_tol_gap_abs or last["gap_rel"] < settings.reduced_tol_gap_rel
    return "AlmostSolved" if feas and gap and last["ktratio"] <= 1.0 else "MaxIterations"


def solve_clarabel(solver, data: dict, verbose: bool, opts: dict, stop: bool = True, retry: dict | None = None):
    """cvxpy's ``CLARABEL.solve_via_data`` on the compiled ``data`` (the same matrices, cones and
    settings, no warm start), with :class:`StallWatch` (``stop``, ``retry``) as Clarabel's termination
    callback: Clarabel's own answer, its status replaced by :func:`stopped_status` where the watch
    stopped it, ``stalled_at`` (the iteration, or None), ``retry_met_at`` (the watch's) and
    ``watched`` (whether this Clarabel takes a termination callback: before 0.11 it does not, and
    nothing was recorded) and ``stop_solved``: where Clarabel stopped short of ``Solved`` (the watch's
    stop, its iteration limit, a failed or insufficient step), whether the iterate it returned passes
    its test for ``Solved`` at ``retry`` (:meth:`StallWatch.returned_solved`); None where it ended
    ``Solved``, without ``retry``, or without the watch."""
    import clarabel
    import scipy.sparse as sp
    from cvxpy.reductions.solvers.conic_solvers.clarabel_conif import dims_to_solver_cones
    from cvxpy.reductions.solvers.conic_solvers.conic_solver import ConicSolver

    q = data["c"]
    P = sp.triu(data["P"]).tocsc() if "P" in data else sp.csc_array((q.size, q.size))
    settings = solver.parse_solver_opts(verbose, opts)
    clar = clarabel.DefaultSolver(P, q, data["A"], data["b"], dims_to_solver_cones(data[ConicSolver.DIMS]), settings)
    watch = StallWatch(settings, stop, retry)
    watched = hasattr(clar, "set_termination_callback")  # Clarabel >= 0.11; before it, run to its own limit
    if watched:
        clar.set_termination_callback(watch)
    raw = clar.solve()
    status = str(raw.status)
    if watch.last is not None and status == "CallbackTerminated":
        status = stopped_status(watch.last, settings)
    out = SimpleNamespace(**{k: getattr(raw, k, None) for k in ("x", "z", "s", "obj_val", "obj_val_dual",
                                                                  "solve_time", "iterations")})
    out.status, out.stalled_at, out.retry_met_at, out.watched = status, watch.stopped_at, watch.retry_met_at, watched
    out.stop_solved = watch.returned_solved(raw) if watched and status != "Solved" else None
    return out
