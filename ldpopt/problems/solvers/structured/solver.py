"""``solve_structured``: the entry point the problem layer calls (see the package docstring)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from ...check.certificate import Certificate, certify
from ...dual.blocks import blocks_fast
from ...dual.chain import solve_chain
from ...dual.dual import solve_screened
from ...dual.grouped import evaluator, simplex_grouped
from ...dual.multipliers import duals_dict
from ...dual.row_groups import solve_row_groups
from ...dual.simplex import simplex_fast
from ...dual.structure import compile_constraints
from ...dual.tree import solve_tree
from ...objectives.builtins import Objective, make_objective
from ...objectives.separable import separable_for

__all__ = ["StructuredResult", "solve_structured"]


@dataclass(repr=False)
class StructuredResult:
    """f, the multipliers (``duals``: ``Solution.duals`` names and signs) and diagnostics.

    ``status`` is ``"optimal"`` only when the certificate (computed here, from f and the duals) shows
    f feasible to ``feas_tol`` and the relative KKT residual ≤ ``kkt_tol``; otherwise
    ``"inaccurate"`` with ``message`` saying which check failed. ``kkt_tol`` also bounds the relative
    duality gap (or the gap is within 4× its rounding floor).

    Made by :func:`solve_structured`; each parameter is an attribute of the same name.

    Parameters
    ----------
    f : ndarray (d,)
        The solution.
    status : str
        ``"optimal"`` or ``"inaccurate"``.
    success : bool
        ``status == "optimal"``.
    optimal_value : float
        J(f).
    duals : dict
        The multipliers, named and signed as ``Solution.duals``.
    kkt_residual : float
        max(primal violation, stationarity correction, dual violation·max 1/h'') / total.
    certificate : Certificate
        The certificate of (f, duals).
    iterations : dict, default {}
        Iteration counts and the fast path taken.
    wall_time, cpu_time : float, default 0.0
        Seconds.
    solver : str, default "LDPOPT-STRUCTURED"
    message : str, default ""
        Which check failed, when one did.

    Examples
    --------
    >>> import numpy as np
    >>> import ldpopt
    >>> est = ldpopt.oracles.get("grr", 1.0, 4).estimate(np.array([46_000, 30_000, 15_000, 9_000]), 100_000)
    >>> from ldpopt.problems import solve_structured
    >>> res = solve_structured(est, "cls")
    >>> res.status, res.f.round(4), sorted(res.duals)
    ('optimal', array([0.7662, 0.2338, 0.    , 0.    ]), ['nonnegative', 'sum'])
    """

    f: np.ndarray
    status: str
    success: bool
    optimal_value: float
    duals: dict
    kkt_residual: float          # max(primal violation, stationarity correction, dual violation·max 1/h'') / total
    certificate: object
    iterations: dict = field(default_factory=dict)
    wall_time: float = 0.0
    cpu_time: float = 0.0
    solver: str = "LDPOPT-STRUCTURED"
    message: str = ""

    def __repr__(self):
        return (f"StructuredResult(status={self.status!r}, optimal_value={self.optimal_value!r}, "
                f"kkt_residual={self.kkt_residual:.3g}, iterations={self.iterations}, "
                f"wall_time={self.wall_time:.3g})")


def solve_structured(estimate, objective="cls", constraints=None, *, mean=None, variance=None,
                     max_iter: int = 50, kkt_tol: float = 1e-12, feas_tol: float | None = None,
                     stop=None) -> StructuredResult:
    """Solve ``Problem(estimate, objective, constraints)`` with the dual method of :mod:`ldpopt.problems.dual.dual`.

    Covered: objectives cls, weighted-mle, multinomial, binomial, posterior (names or Objective
    instances) and :class:`~.user_separable.SeparableObjective`; constraints None (simplex), Simplex,
    NonNegative + SumTo, Box, Fixed, SubsetSum (==, <=, >=), PartitionTotals, Hierarchy (one
    multiplier per group: meant for a few hundred groups at most with :math:`Σ f` = total), and one Monotone chain with the
    simplex and common bounds on the chain but no other rows (:mod:`ldpopt.problems.dual.chain`), and, without
    Σ f = total, one Hierarchy tree with its leaf total (SubsetSum over its leaves or Fixed on its root)
    and bounds (:mod:`ldpopt.problems.dual.tree`; ``iterations["tree_newton_iterations"]``). The binomial and
    multinomial on the plain simplex are solved over their distinct counts (:mod:`ldpopt.problems.dual.grouped`;
    ``iterations["distinct_counts"]`` says so) when the counts take few values. Disjoint subset sums on
    the plain simplex go block by block (:mod:`ldpopt.problems.dual.blocks`; ``iterations["blocks"]`` says so); any fast
    path whose certificate does not pass hands over to the general dual method. Anything else raises
    :class:`~.separable.NotApplicable`; infeasible bound/sum data raise ``ValueError``.

    Parameters
    ----------
    estimate : Estimate
        The raw estimate.
    objective : str or Objective, default "cls"
        A covered objective (above).
    constraints : list or None, default None
        Covered constraints (above); None: the simplex.
    mean, variance : array_like or None, default None
        For ``objective="posterior"``.
    max_iter : int, default 50
        Newton iterations of the dual method (at least 100 for a tree).
    kkt_tol : float, default 1e-12
        The relative KKT residual and gap below which the answer is ``"optimal"``.
    feas_tol : float or None, default None
        The primal tolerance (frequency units); None: the certificate's default.
    stop : callable or None, default None
        ``stop()`` True ends the Newton loops with the point they have (``Problem.solve``'s time
        limit: :meth:`.progress.SolveContext.stop`); None: never.

    Returns
    -------
    StructuredResult

    Raises
    ------
    NotApplicable
        An objective or constraint set it does not cover.
    ValueError
        Infeasible bound or sum data, or an objective that does not apply to the estimate.

    Examples
    --------
    >>> import numpy as np
    >>> import ldpopt
    >>> est = ldpopt.oracles.get("grr", 1.0, 4).estimate(np.array([46_000, 30_000, 15_000, 9_000]), 100_000)
    >>> from ldpopt.problems import SubsetSum, Simplex, solve_structured
    >>> res = solve_structured(est, "weighted-mle", [Simplex(), SubsetSum([0, 1], 0.7)])
    >>> res.status, res.f.round(4)
    ('optimal', array([0.5732, 0.1268, 0.2777, 0.0223]))
    """
    t0, c0 = time.perf_counter(), time.process_time()
    obj = objective if isinstance(objective, Objective) else make_objective(objective, mean=mean, variance=variance)
    obj.check(estimate)
    sep = separable_for(obj, estimate)
    st = compile_constraints(constraints, estimate.d)
    if st.tree is not None:  # one tree of sums and its leaf total, no Σ over all values (.tree)
        f, lam, y, info = solve_tree(sep, st, max_iter=max(max_iter, 100), stop=stop)
        return _result(_certified(sep, st, f, lam, y, feas_tol, kkt_tol), info, t0, c0)
    # the fast paths in order: the first that applies is the only one run; certified, it is the
    # answer, else the general method decides and ``closed_form_rejected`` says why
    # (label of a rejection, method): the closed forms (the certificate rejects their rounding edge
    # cases at huge noise, ε = 20 with n = 10), the distinct counts, disjoint subset sums (.blocks;
    # not with a Monotone chain), a user's objective with rows over the values alike (.row_groups)
    fast = (("", simplex_fast), ("grouped: ", simplex_grouped), ("blocks: ", blocks_fast),
            ("row groups: ", solve_row_groups))
    rejected = ""
    for label, method in fast if st.chain is None else fast[:2]:
        got = method(sep, st)
        if got is None:
            continue
        f, lam, y, info = got
        run = _certified(sep, st, f, lam, y, feas_tol, kkt_tol)
        if not run.checks:
            return _result(run, info, t0, c0)
        rejected = label + "; ".join(run.checks)
        break
    if st.chain is not None:  # generalised PAV with λ outside (.chain)
        f, lam, y, info = solve_chain(sep, st, stop=stop)
    else:
        f, lam, y, info = solve_screened(sep, st, max_iter=max_iter, stop=stop)
        if rejected:
            info["closed_form_rejected"] = rejected
    return _result(_certified(sep, st, f, lam, y, feas_tol, kkt_tol), info, t0, c0)


@dataclass
class _Run:
    """One candidate (f, λ, y) made into an answer: f as polished, its duals, its certificate, the
    relative KKT residual and the checks it failed (none: certified)."""

    f: np.ndarray
    duals: dict
    cert: Certificate
    kkt: float
    checks: list


def _result(run: _Run, info, t0, c0):
    status = "optimal" if not run.checks else "inaccurate"
    msg = ("certified: feasible, relative KKT residual and duality gap at rounding level" if not run.checks
           else "; ".join(run.checks))
    return StructuredResult(run.f, status, status == "optimal", run.cert.primal_value, run.duals, run.kkt, run.cert, info,
                            time.perf_counter() - t0, time.process_time() - c0, message=msg)


def _sum_polished(st, f):
    """f with the rounding of Σ f spread over the values strictly inside their bounds (no rows
    only), when that keeps them inside and makes |Σ f − total| smaller. At huge noise f_v =
    f̃_v − λ/2 is formed from terms of size |f̃| ~ 10⁵ (GRR, ε = 0.05, n = 10), which leaves
    |Σ f − total| ~ 1e-10 — above ldpopt's per-constraint tolerance 1e-6/d although the point is
    within 1e-10 of f*. The residual is spread in proportion to f when the inner values are all
    positive (each moves by at most |residual|, and by a relative 1e-16 or so: a value of 1e-250 of
    a log-type objective keeps its logarithm), else evenly (each by the residual over their number)."""
    if st.m or st.sum_free:
        return f
    inner = (f > st.l) & (f < st.u)
    k = int(np.count_nonzero(inner))
    if not k:
        return f
    res = st.total - float(np.sum(f))
    if res == 0.0:
        return f
    fi = f[inner]
    if np.all(fi > 0):
        g = np.where(inner, f * (1.0 + res / float(np.sum(fi))), f)
    else:
        g = np.where(inner, f + res / k, f)
    if np.any(g[inner] <= st.l[inner]) or np.any(g[inner] >= st.u[inner]):
        return f
    return g if abs(st.total - float(np.sum(g))) < abs(res) else f


def _certified(sep, st, f, lam, y, feas_tol, kkt_tol):
    """The :class:`_Run` of a candidate (f, λ, y)."""
    t = lam + (st.A.T @ y if st.m else 0.0)
    # h'(f) and h''(f) once per distinct count when f is constant on each (.grouped: bit-identical)
    ev = evaluator(sep, f, grouped=not st.m)  # with rows f is rarely constant per count: skip the check
    with np.errstate(divide="ignore", invalid="ignore"):
        r = ev("d1") + t
    vertex = np.flatnonzero(st.implied_upper & (f >= st.u) & (r < 0))
    if vertex.size and st.m == 0:
        # f = total·e_v-like vertex: any λ in an interval is optimal; take the one for which the implied
        # bound (not a constraint of the problem) carries no multiplier. The other values' r grow.
        lam = lam - float(r[vertex[0]])
        t = lam + 0.0
        f = sep.argmin(np.full(st.d, t), st.l, st.u)  # the others now sit exactly at their bounds
        ev = evaluator(sep, f)
        with np.errstate(divide="ignore", invalid="ignore"):
            r = ev("d1") + t
    f = _sum_polished(st, f)
    duals = duals_dict(st, f, lam, y, r)
    cert = certify(sep, st, f, lam, y, duals, feas_tol, stamp=True)  # the digest of (f, duals): reused only for these bits
    # all three in units of the total mass: violation, Newton correction of stationarity, and the
    # wrong-sign multipliers turned into frequency by the largest curvature 1/h''
    inv_curv = 0.0
    if cert.dual_violation != 0:  # (0 × anything finite-or-zeroed is 0: no pass over d needed then)
        with np.errstate(divide="ignore", invalid="ignore"):
            inv_curv = float(np.nanmax(1.0 / ev("d2"), initial=0.0))
    kkt = max(cert.primal_violation, cert.stationarity * st.total,
              cert.dual_violation * (inv_curv if np.isfinite(inv_curv) else 0.0)) / max(st.total, 1e-300)
    checks = []
    if not cert.feasible:
        checks.append(f"primal violation {cert.primal_violation:.3g} > feas_tol {cert.feas_tol:.3g}")
    if not kkt <= kkt_tol:
        checks.append(f"relative KKT residual {kkt:.3g} > {kkt_tol:.3g}")
    if not (cert.relative_gap <= kkt_tol or cert.gap <= 4 * cert.gap_floor):
        checks.append(f"duality gap {cert.gap:.3g} (relative {cert.relative_gap:.3g}) above rounding level")
    return _Run(f, duals, cert, kkt, checks)
