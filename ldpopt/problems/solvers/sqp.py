"""Exact likelihoods and smooth objectives over any cvxpy constraints by sequential QP (damped Newton).
Notes: docs/notes/problems.md, "ldpopt.problems.solvers.sqp".
"""

from __future__ import annotations

import time
import warnings

import cvxpy as cp
import numpy as np
import scipy.sparse as sp

from ..check.cones import dual_array
from ..check.verdict import check_outcome, check_solution, status_after_check
from ..objectives.likelihood_terms import LikelihoodTerms, terms_for
from ..objectives.smooth import smooth_terms
from ..progress import CONIC_TIME_LIMIT, OWN_TIME_LIMIT, SolveContext
from ..solution import Solution
from .isolate import ChildError, SolverCrashed, SolverTimedOut, runs_isolated, solved_in_worker, user_code_raised
from .policy import CONE_CHAIN, DEFAULT_SOLVER_OPTIONS, QP_CHAIN, QP_OPTIONS, installed_solvers

__all__ = ["MAX_ITER", "converged", "newton_terms", "solve_sqp"]

MAX_ITER = 40
_ARMIJO = 1e-4
_MIN_STEP = 1e-10
_FRACTION = 0.9
_CURVATURE_FLOOR = 1e-6
_TARGET_STATIONARITY = 1e-9
_TARGET_BOUND = 1e-8


def newton_terms(objective, estimate):
    """What the loop reads from ``objective`` (gradient, Hessian, change of J, domain): the exact
    likelihoods' :class:`.likelihood_terms.LikelihoodTerms` or a smooth objective's
    :class:`.smooth.SmoothTerms`; None when the route does not apply."""
    return terms_for(objective, estimate) or smooth_terms(objective, estimate)


def _model(h, s: float):
    """(a, m): the QP's Hessian in x = f/s over m, with m = mean positive diagonal of s²∇²J (O(1)
    coefficients). A diagonal h (a 1-D array) gives a = max(s²h/m, floor); a sparse ∇²J gives
    a = s²∇²J/m + diag(max(floor − its diagonal, 0)) — still positive semidefinite, the same floor."""
    if isinstance(h, np.ndarray):
        sh = s * s * h
        m = float(np.mean(sh[sh > 0])) if np.any(sh > 0) else 1.0
        return np.maximum(sh / m, _CURVATURE_FLOOR), m
    P = sp.csr_array(h) * (s * s)
    dg = P.diagonal()
    m = float(np.mean(dg[dg > 0])) if np.any(dg > 0) else 1.0
    P = P / m
    return (P + sp.diags(np.maximum(_CURVATURE_FLOOR - dg / m, 0.0))).tocsr(), m


def converged(ch, d: int) -> bool:
    """Stop iterating: ldpopt's check passed (the caller knows) and the point is at the QP solver's
    own accuracy, far inside the check's tolerances (Newton converges quadratically, so this costs
    one or two more QPs): relative stationarity and gap ≤ 1e-9, or a certified ‖f − f*‖ ≤ 1e-8/d."""
    return (ch.stationarity <= _TARGET_STATIONARITY and ch.gap <= _TARGET_STATIONARITY) or (
        ch.error_bound is not None and ch.error_bound <= _TARGET_BOUND / d)


def _domain_implied(problem, terms: LikelihoodTerms) -> bool:
    """True when the built-in constraints imply q ≤ π ≤ p (0 < q < p < 1): f ≥ 0 and Σ f ≤ 1."""
    if not (terms.a > 0 and terms.q > 0 and terms.q + terms.a < 1):
        return False
    owners = [o for o, _ in problem.owners.values()]
    nonneg = any(o.implies_nonnegative for o in owners)
    if not terms.binomial:
        return nonneg
    total = any(o.implies_at_most_one for o in owners)
    return nonneg and total


class _QP:
    """The Newton QP over the problem's constraints, compiled by cvxpy once per QP solver; each QP only
    replaces the quadratic and linear terms (P, q) of the compiled data.

    The constraints are the problem's own cvxpy objects, so cvxpy's own ``unpack_results`` puts their
    duals where the check reads. The domain box (``domain_bounds``) enters as constraints on cvxpy
    Parameters (a DPP right-hand side: cvxpy's cached parameter map applies them without recompiling).
    P and q are *not* parameters: cvxpy's quadratic-coefficient extraction densifies a parameter map for
    them, (d + 1) × 2d floats (26.5 GiB at d = 42,178, measured); the compiled problem's objective is
    ½‖x‖², and P, q are written into its data at x's offset in the solver's variable vector. Before
    (each QP compiled anew) cvxpy took ~0.15 s of every QP at Retail, d = 16,470 (cProfile).
    """

    def __init__(self, problem, terms, domain_box: bool, ctx: SolveContext):
        self.problem, self.terms, self.domain_box, self.ctx = problem, terms, domain_box, ctx
        self.cons = list(problem.named_constraints.values())
        self.is_qp = cp.Problem(cp.Minimize(cp.sum_squares(problem.x)), self.cons).is_qp()
        # (solver, box pattern) -> (cvxpy problem, lower parameter, upper parameter)
        self._compiled: dict[tuple[str, tuple[bytes, bytes] | None],
                             tuple[cp.Problem, cp.Parameter | None, cp.Parameter | None]] = {}
        self.box = (None, None, None, None)  # (ilo, lo, ihi, hi) in the solver's x = f/s
        self.a = self.b = None

    def set(self, a, b, f, fraction=None):
        """The model ½ xᵀ a x + b·x (a: a (d,) diagonal or a sparse PSD matrix) and, with the domain box,
        the bounds a ``fraction`` of the way from f to the domain's edge."""
        self.a, self.b = a, np.asarray(b, dtype=np.float64)
        if self.domain_box:
            fraction = getattr(self.terms, "fraction", _FRACTION) if fraction is None else fraction
            lo, hi = self.terms.domain_bounds(f, fraction)
            ilo, ihi = np.flatnonzero(np.isfinite(lo)), np.flatnonzero(np.isfinite(hi))
            s = self.problem.scale
            self.box = (ilo, lo[ilo] / s, ihi, hi[ihi] / s)

    def _compile(self, name):
        ilo, _, ihi, _ = self.box
        key = (name, None if ilo is None else (ilo.tobytes(), ihi.tobytes()))
        if key not in self._compiled:
            x, cons = self.problem.x, list(self.cons)
            plo = cp.Parameter(ilo.size) if ilo is not None and ilo.size else None
            phi = cp.Parameter(ihi.size) if ihi is not None and ihi.size else None
            if plo is not None:
                cons.append(x[ilo] >= plo)
            if phi is not None:
                cons.append(x[ihi] <= phi)
            self._compiled = {k: v for k, v in self._compiled.items() if k[0] != name}  # one per solver
            self._compiled[key] = (cp.Problem(cp.Minimize(0.5 * cp.sum_squares(x)), cons), plo, phi)
        return self._compiled[key]

    def solve(self, name, verbose, opts):
        """Solve the QP with solver ``name``: (cvxpy's status, x or None, the problem's constraints'
        duals by name). ``compile`` seconds are cvxpy's."""
        prob, plo, phi = self._compile(name)
        if plo is not None:
            plo.value = self.box[1]
        if phi is not None:
            phi.value = self.box[3]
        t0 = time.perf_counter()
        data, chain, inv = prob.get_problem_data(name, verbose=False, solver_opts=opts)
        x = self.problem.x
        offset = next((i.var_offsets[x.id] for i in inv if hasattr(i, "var_offsets") and x.id in i.var_offsets), None)
        if offset is None:
            raise ValueError("the compiled QP has no block for x")
        lin = "c" if "c" in data else "q"
        n, d = data[lin].shape[0], x.size
        P = sp.diags(self.a) if isinstance(self.a, np.ndarray) else sp.csr_array(self.a)
        if n != d or offset != 0:
            P = sp.block_diag([sp.csr_array((offset, offset)), P, sp.csr_array((n - offset - d, n - offset - d))])
        q = np.zeros(n)
        q[offset:offset + d] = self.b
        data = {**data, "P": sp.csc_array(P), lin: q}
        self.compile_time = time.perf_counter() - t0

        def read():
            xv = self.problem.x.value
            return (prob.status, None if xv is None else np.asarray(xv, dtype=np.float64),
                    {k: dual_array(con) for k, con in self.problem.named_constraints.items()})

        if not runs_isolated(name, name in OWN_TIME_LIMIT, self.ctx.limited):
            with self.problem.cvxpy_lock:  # one cvxpy solve of this problem's objects at a time (threads)
                prob.unpack_results(chain.solver.solve_via_data(data, False, verbose, opts), chain, inv)
                return read()
        # every QP solver in the worker's child (.isolate), killed at the limit
        left = self.ctx.left()
        try:
            with self.problem.cvxpy_lock:
                solved_in_worker(prob, data, chain, inv, verbose, opts,
                                 CONIC_TIME_LIMIT if left is None else max(left, 1e-3), name)
                return read()
        except SolverTimedOut as e:
            return f"user_limit: {e}", None, {}
        except (SolverCrashed, ChildError) as e:
            return f"solver_error: {e}", None, {}


def _solve_qp(qp: _QP, problem, chain, opts_for, verbose):
    """Walk the QP chain; (f, duals-in-QP-units, record) of the first solver returning a point."""
    records = []
    for name in chain:
        if name not in installed_solvers():
            continue
        if qp.ctx.expired():  # no QP solver starts past the time limit (each was compiled, forked, killed)
            records.append({"solver": name, "status": "time_limit: not started", "seconds": 0.0, "cpu": 0.0,
                            "compile": 0.0})
            break
        t0, c0 = time.perf_counter(), time.process_time()
        with problem.cvxpy_lock:
            problem.x.value = None
        qp.compile_time = 0.0
        xv = None
        try:
            with warnings.catch_warnings():
                warnings.filterwarnings("ignore", message="Solution may be inaccurate")
                status, xv, duals = qp.solve(name, verbose, opts_for(name))
        except Exception as e:  # the QP solver failed: the next one of the chain
            if user_code_raised(e):
                raise
            status = f"solver_error: {type(e).__name__}: {e}"[:200]
        rec = {"solver": name, "status": status[:200], "seconds": time.perf_counter() - t0,
               "cpu": time.process_time() - c0, "compile": qp.compile_time}
        records.append(rec)
        if status in ("optimal", "optimal_inaccurate") and xv is not None:
            return xv * problem.scale, duals, records
    return None, None, records


def solve_sqp(problem, verbose: bool = False, solver_options: dict | None = None, chain=None,
              max_iter: int = MAX_ITER, ctx: SolveContext | None = None):
    """Solve ``problem`` (a built-in exact likelihood or a smooth objective, :func:`newton_terms`) by
    sequential QP; a checked ``Solution``.

    ``chain``: the QP solvers, in order (default ``policy.QP_CHAIN``, or ``policy.CONE_CHAIN`` when a
    user constraint is not QP-representable). ``solver_options`` as for ``Problem.solve``. ``ctx``:
    the solve's :class:`~ldpopt.problems.progress.SolveContext` (time limit, progress, and then its
    own verbosity and options in place of ``verbose`` and ``solver_options``).
    ``Solution.iterations`` counts QPs; ``Solution.attempts`` lists each QP (solver, status, step
    length, ldpopt's check of its point); ``Solution.solver`` is ``"SQP(<QP solvers used>)"``.

    ``Problem.solve`` runs the interior-point method of :mod:`.ipm` before it for a smooth objective
    (:mod:`ldpopt.problems.problem`, the Newton route).
    """
    start = time.perf_counter()
    est, obj = problem.estimate, problem.objective
    terms = newton_terms(obj, est)
    if terms is None:
        raise ValueError(f"the sequential-QP route solves the exact likelihoods ('binomial', 'multinomial') and "
                         f"smooth objectives (SmoothObjective, recognised smooth callables), not objective={obj.name!r}")
    likelihood = isinstance(terms, LikelihoodTerms)
    if ctx is None:
        ctx = SolveContext.make(verbose=verbose, solver_options=solver_options)
    verbose, given = ctx.verbose, ctx.solver_options

    def opts_for(name):
        opts = dict(DEFAULT_SOLVER_OPTIONS.get(name, {}))
        opts.update(getattr(terms, "qp_options", QP_OPTIONS).get(name, {}))
        opts.update(ctx.clock.solver_options(name))  # a QP solver's own limit: the time left (.progress)
        opts.update({k: v for k, v in given.items() if k.upper() not in cp.settings.SOLVERS})
        for k, v in given.items():
            if k.upper() == name and isinstance(v, dict):
                opts.update(v)
        return opts

    s = problem.scale
    domain_box = not _domain_implied(problem, terms) if likelihood else terms.needs_box(problem)
    qp = _QP(problem, terms, domain_box, ctx)
    if chain is None:
        chain = getattr(terms, "chain", QP_CHAIN) if qp.is_qp else CONE_CHAIN
    if likelihood:
        f = est.f_tilde.copy()
        if terms.q > 0 and terms.q + terms.a < 1 and terms.a > 0:
            f = np.clip(f, 0.0, 1.0)
    else:
        f = terms.start()
    attempts, used = [], []
    compile_time = solve_time = 0.0
    best = None  # (f, duals, checks)
    status, message = "user_limit", f"no KKT certificate after {max_iter} QPs"
    feasible = False  # f₀ is only the model's centre; f₁ onwards satisfy the constraints
    restarted = False  # a smooth objective's one restart at a stalled QP point (below)
    k = 0
    for k in range(1, max_iter + 1):
        g, h = terms.gradient(f), terms.hessian(f)
        a, m = _model(h, s)
        b = s * g / m - (a * (f / s) if isinstance(a, np.ndarray) else a @ (f / s))
        qp.set(a, b, f)
        fhat, dqp, recs = _solve_qp(qp, problem, chain, opts_for, verbose)
        if fhat is None and domain_box:
            # the 90% box may cut off every feasible point (a Fixed value far below π(f)): retry
            # with the box at the domain's edge (a fraction 1 − 1e-9 of the way there)
            qp.set(a, b, f, fraction=1.0 - 1e-9)
            fhat, dqp, more = _solve_qp(qp, problem, chain, opts_for, verbose)
            recs += more
        for r in recs:
            compile_time += r["compile"]
            solve_time += r["seconds"] - r["compile"]
        rec = {"iteration": k, "solver": recs[-1]["solver"] if recs else None,
               "status": recs[-1]["status"] if recs else "solver_not_installed",
               "seconds": sum(r["seconds"] for r in recs), "qp_attempts": [r["status"] for r in recs]}
        attempts.append(rec)
        if fhat is None:
            if status != "optimal":  # else keep the certified point of an earlier QP
                said = {r["status"] for r in recs}
                # the QP's feasible set is the problem's own (without the domain box): its infeasibility
                # certificate is the problem's; ``Problem.solve`` overrides it for a known-feasible set
                status = "infeasible" if said == {"infeasible"} and not domain_box else "solver_error"
                message = f"QP {k}: no solver of {list(chain)} returned a point ({rec['qp_attempts']})"
            break
        used.append(rec["solver"])
        duals: dict[str, float | np.ndarray | None] = {}
        for name, dv in dqp.items():
            if dv is None:
                duals[name] = None
            else:
                dv = np.asarray(dv, dtype=np.float64) * m
                duals[name] = float(dv) if dv.ndim == 0 else dv
        ch = check_solution(problem, fhat, duals, deadline=ctx.deadline)
        rec["checks"] = ch.summary()
        clock = ctx.clock  # Problem.solve's time limit and progress (.progress)
        clock.note(f"SQP({rec['solver']})", k, stationarity=ch.stationarity, gap=ch.gap,
                   violation=ch.max_violation)
        if status != "optimal" and (best is None or (ch.passed, -ch.max_violation) >= (
                best[2].passed, -best[2].max_violation)):
            best = (fhat, duals, ch)
        if status_after_check("optimal", ch) == "optimal":  # the one status rule
            status = "optimal"
            what = "exact likelihood" if likelihood else "smooth objective (exact gradient and sparse Hessian)"
            kind = "diagonal" if likelihood else "Newton"
            message = (f"{what} solved by sequential QP ({k} {kind} QPs over the constraints, "
                       f"no exponential cones); ldpopt's check: {ch.summary()}")
            best = (fhat, duals, ch)
            if converged(ch, est.d):
                rec["step"] = 1.0
                break
        if status != "optimal" and clock.expired():
            status, message = "time_limit", f"time limit reached after QP {k}; f is the best point checked"
            break
        delta = fhat - f
        if not feasible:
            f, step, feasible = fhat, 1.0, True
        else:
            slope = float(g @ delta)
            if not slope < 0 and not likelihood and not restarted and status != "optimal":
                # a smooth objective: the QP point is feasible and as good as f to the QP's accuracy
                # (its slope is rounding); once, restart the model there instead of stopping — at
                # Retail a Monotone chain stalled with stationarity 1.3e-5 after 9 QPs (measured)
                f, restarted = fhat, True
                rec["step"] = "restart"
                continue
            if not slope < 0:  # no descent left: the model's minimiser is f itself
                if status == "optimal":
                    break
                status, message = "inaccurate", (f"sequential QP stalled at QP {k} (no descent direction); "
                                                  f"{check_outcome(ch)}")
                break
            step = 1.0
            while step >= _MIN_STEP and not terms.change(f, step * delta) <= _ARMIJO * step * slope:
                step *= 0.5
            if step < _MIN_STEP:
                if status == "optimal":
                    break
                status, message = "inaccurate", f"sequential QP line search failed at QP {k}; {check_outcome(ch)}"
                break
            f = f + step * delta
        rec["step"] = step
    fbest, dbest, chbest = best if best is not None else (np.full(est.d, np.nan), {}, None)
    if status != "optimal" and chbest is not None and status == "user_limit":
        message += f"; {check_outcome(chbest)}"
    value = obj.value(fbest, est) if chbest is not None else np.nan
    solvers = "+".join(dict.fromkeys(u for u in used if u)) or "none"
    sol = Solution(fbest, status, status == "optimal", value, dbest if chbest is not None else {},
                   solver=f"SQP({solvers})", iterations=k, compile_time=compile_time, solve_time=solve_time,
                   wall_time=time.perf_counter() - start, message=message, objective=obj.name,
                   checks=chbest, attempts=attempts)
    return sol
