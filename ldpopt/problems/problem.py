"""``Problem`` (a post-processing method as a convex problem); its ``Solution`` is in :mod:`.solution`.

>>> from ldpopt import Estimate
>>> from ldpopt.problems import Problem
>>> est = Estimate.from_counts([50, 30, 15, 5], n=100, epsilon=2.0, p=0.7, q=0.1)
>>> sol = Problem(est, "cls").solve()
>>> sol.status, round(float(sol.f.sum()), 6)
('optimal', 1.0)
"""

from __future__ import annotations

import threading
import time
import warnings
from typing import Any

import cvxpy as cp
import numpy as np

from ..estimate import check_estimate
from .check.verdict import feasible_point, status_after_check, unverified_reason, violation_tol
from .constraints.base import Constraint, NonNegative, SumTo, as_constraint
from .errors import SolverWarning, error_for_status, user_code_raised
from .objectives.base import default_scale
from .objectives.builtins import Objective, make_objective
from .objectives.finite import refuse_non_finite
from .objectives.likelihood_terms import LikelihoodTerms
from .progress import SolveContext, backstop, bounded, check_time_limit, timed_out
from .solution import Solution, _attempt, best_checked
from .solvers.attempts import STRUCTURED, cvxpy_attempt, options_for, structured_attempt
from .solvers.direct_qp import SUFFIX as DIRECT
from .solvers.direct_qp import solve_direct_qp
from .solvers.ipm import solve_ipm
from .solvers.isolate import fork_available
from .solvers.policy import (
    DEFAULT_SOLVER_OPTIONS,
    EXP_CONE_CHAIN,
    EXP_CONE_CLARABEL_MAX_D,
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
from .solvers.sqp import converged, newton_terms, solve_sqp
from .solvers.user_forms import LiveRoute, domain_constraint, missing_parameter, route_objective
from .worker import clean as worker_clean
from .worker import start_in_background

__all__ = ["DEFAULT_SOLVER_OPTIONS", "STRUCTURED", "Problem", "Solution", "default_scale"]


def _worker_if_needed() -> None:
    """The isolated worker (:mod:`.worker`) started in the background once this process holds a
    foreign thread pool (an in-process solver's: :func:`.worker.clean` False), so that the next
    isolated call finds it running; while the process is clean, isolated calls fork it directly."""
    if fork_available() and not worker_clean():
        start_in_background()


def _refuse_foreign_data(x, built, named: dict) -> None:
    """Refused when the problem is built (``Problem(...)``), one line naming the part: a cvxpy
    Variable other than f in the objective or a constraint (ldpopt solves over f alone; the
    objective's own epigraph variables, declared with its constraints, are its own), or a NaN or an
    inf in the objective's or a constraint's data, constants and Parameter values
    (:mod:`.objectives.finite`; as :class:`~.constraints.base.Box` refuses an infinite bound: a side
    without a bound is left out)."""
    own = {x.id} | {v.id for c in built.constraints for v in c.variables()}
    parts = [("objective", built.expr)] + [(f"constraint {name!r}", con) for name, con in named.items()]
    for where, item in parts:
        for v in item.variables():
            if v.id not in own:
                raise ValueError(f"{where}: holds the cvxpy Variable {v.name()!r} (shape {v.shape}) besides f; "
                                 "ldpopt solves over f alone: write it in f")
        refuse_non_finite(where, item)


def _library_failure(exc: BaseException) -> bool:
    """Whether ``exc``, escaping a solve, is a library's failure that :meth:`Problem.solve` makes one
    failed attempt: not raised through the user's own code (:func:`.errors.user_code_raised`), not a
    typed solver error (``strict=True``'s), and not a ``ValueError`` / ``TypeError`` that ldpopt
    raised itself (a bad argument named in its message). Anything a library outside ldpopt raised
    (cvxpy's ``NotImplementedError``, a solver's, scipy's) is one."""
    import os

    from .errors import SolverError

    if not isinstance(exc, Exception) or isinstance(exc, SolverError) or user_code_raised(exc):
        return False
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # ldpopt/
    own = tb is not None and os.path.abspath(tb.tb_frame.f_code.co_filename).startswith(here + os.sep)
    return not (own and isinstance(exc, (ValueError, TypeError)))


def _lazy(objective: Objective, constraints: list) -> bool:
    """True when :class:`Problem` may defer building its cvxpy problem: an objective and constraints
    that each declare ``lazy_build`` (their ``build`` cannot fail and the dual names do not depend on
    it: the structured solver's built-in objectives, Simplex / NonNegative / SumTo). Anything else is
    built at once, so that a non-DCP user objective or a malformed constraint still raises in
    ``Problem(...)``."""
    return objective.lazy_build and all(c.lazy_build for c in constraints)


def _newton_route(problem, ctx: SolveContext) -> Solution:
    """The Newton route (:mod:`.solvers.sqp`'s objectives): a smooth objective is first solved by the
    interior-point method of :mod:`.solvers.ipm` (where its constraints are linear rows over f); its
    Solution is returned when ldpopt's check certifies it or the time limit has passed, else sequential
    QP (:func:`.solvers.sqp.solve_sqp`) follows, and its answer is returned unless the interior point
    passed ldpopt's check (then the better checked of the two, :func:`.solution.best_checked`). An exact
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


#: interior-point solvers of the chains (:mod:`.policy`), and the first-order ones after them
_INTERIOR, _FIRST_ORDER = frozenset({"CLARABEL", "PIQP"}), frozenset({"SCS", "OSQP"})


def _first_order_cannot_do_better(sol: Solution, rest, problem) -> str:
    """Why the chain may stop after ``sol`` though it did not pass ("" where it may not): only
    first-order solvers (SCS, OSQP: less accurate points, the same check) are left in ``rest``, ``sol``
    is an interior-point solver's point, and either

    - ldpopt's check found it feasible, its only failure the KKT test, with the duality gap within
      :data:`~.check.verdict.GAP_TOL` — stationarity is what failed. Measured: CLS − 10⁻³·geo_mean(f)
      at d = 100, Clarabel's point (gap 2e-10, stationarity 3.7e-2) then 9 s of SCS to a point that
      failed the same test and the feasibility one (the whole call 22 s where plain Clarabel took 5 s);
    - or the check found it feasible and the KKT test could not certify it with a user constraint
      that is not affine (:func:`.check.conflict.non_affine`: there the test certifies and never
      refutes, so a first-order point is no likelier to pass). Measured on the route grid's generated classes: CLS on the simplex with a
      ball that only touches it (d = 100), Clarabel ``optimal_inaccurate`` in 8 ms, then SCS to its
      200,000-iteration limit (2.2 s) and a point that failed feasibility; with a quadratic energy
      constraint at d = 10⁴, SCS was still running after 29 minutes.

    The answer returned is the same (:func:`.solution.best_checked`)."""
    from .check.conflict import non_affine
    from .check.verdict import GAP_TOL

    ch = sol.checks
    if sol.solver not in _INTERIOR or not rest or not set(rest) <= _FIRST_ORDER or ch is None:
        return ""
    if (len(ch.failed) == 1 and ch.failed[0].startswith("KKT not certified") and ch.gap is not None
            and ch.gap <= GAP_TOL):
        return "this interior point is feasible with its duality gap certified (its stationarity is what failed)"
    if not ch.failed and np.isfinite(ch.max_violation) and ch.stationarity is None and (names := non_affine(problem)):
        return (f"this interior point is feasible, and no KKT test certified it (constraint {names[0]!r} "
                f"is not affine: its test certifies, never refutes)")
    return ""


class Problem:
    """A post-processing method stated as a convex problem over the frequency vector f.

    Parameters
    ----------
    estimate : Estimate
        The raw estimate (f̃, counts, n, p, q).
    objective : str, Objective or callable, default "cls"
        ``"cls"`` (Wang et al. §3.5), ``"weighted-mle"`` (Eq. 13), ``"multinomial"`` (GRR's exact
        likelihood), ``"binomial"`` (per-bit likelihood; both exact likelihoods are solved by
        sequential QP from d = 300 on, not as exponential-cone programs: see :meth:`solve`),
        ``"l1"``, ``"central-mle"`` (central noise's exact likelihood), ``"posterior"`` (needs
        ``mean=``, optional ``variance=``), the cautionary ``"weighted-mle-naive"``, the name of an
        objective registered with :func:`~ldpopt.problems.register_objective` (docs/extending.md), an
        :class:`~ldpopt.problems.objectives.builtins.Objective`, or a callable
        ``objective(f, estimate) -> cvxpy expression`` to minimise. A callable is routed by what it is
        (:mod:`.user_forms`, :mod:`.recognise`): recognised as a strictly convex sum of per-value
        terms (KL or entropy to a prior, powers, CLS, …) it is solved by the structured solver and
        certified like the built-ins; recognised as smooth (quadratic forms such as a smoothness
        penalty, or Huber) it goes to the Newton / sequential-QP route of :mod:`.sqp` with its exact
        sparse Hessian (an interior-point method, :mod:`.ipm`, then sequential QP, then the cvxpy
        chain if neither certifies), each with an exact
        gradient for ldpopt's check; otherwise the cvxpy chain as written. A
        :class:`~ldpopt.problems.objectives.smooth.SmoothObjective` (declared value, gradient and Hessian) takes
        the Newton route. cvxpy ``Parameter`` objects in a callable are read at every :meth:`solve`
        (the route is made again when a value changed; one without a value is a
        :class:`~ldpopt.problems.errors.MissingParameterError`).
    constraints : list or None
        ``None``: the simplex :math:`f ≥ 0, Σ f = 1` (duals ``"nonnegative"``, ``"sum"``). A list of
        :mod:`~ldpopt.problems.constraints.base` objects and/or callables
        ``(f, estimate) -> cvxpy constraint(s)`` replaces it. Duplicate names get ``_1``, ``_2``...
    mean, variance : array_like, optional
        For ``objective="posterior"`` only.
    scale : float, optional
        The solver's variable is x = f/scale; default :func:`default_scale` = max(σ of Eq. 7, 1/d)
        (1 for the naive objective).

    Attributes
    ----------
    f : cvxpy expression (scale·x), the frequency vector; x : the cvxpy Variable;
    cvxpy_problem : the compiled ``cvxpy.Problem``; constraint_names : names, in order;
    objective_route : the route chosen for the objective, in words (a callable: recognised or not, why).
    For a built-in objective with only Simplex / NonNegative / SumTo, the cvxpy side (f, x, cvxpy_problem) is built
    on first access: ``solve()`` by the structured solver never needs it.

    Raises
    ------
    ValueError
        A bad estimate, an unknown objective name, ``scale`` not finite and > 0, or a problem that
        is not convex (DCP).
    TypeError
        ``constraints`` neither None nor a list of constraints / callables.

    Examples
    --------
    >>> import numpy as np
    >>> import ldpopt
    >>> est = ldpopt.oracles.get("grr", 1.0, 4).estimate(np.array([46_000, 30_000, 15_000, 9_000]), 100_000)
    >>> prob = ldpopt.Problem(est, objective="cls", constraints=[ldpopt.problems.Simplex()])
    >>> sol = prob.solve()
    >>> sol.f.round(4), bool(np.abs(sol.f - ldpopt.postprocess(est, "norm-sub")).max() < 1e-9)
    (array([0.7662, 0.2338, 0.    , 0.    ]), True)
    """

    def __init__(self, estimate, objective="cls", constraints=None, *, mean=None, variance=None,
                 scale: float | None = None):
        check_estimate(estimate)
        self.estimate = estimate
        self.objective: Objective = make_objective(objective, mean=mean, variance=variance)
        self.objective.check(estimate)
        # a user's cvxpy callable: recognised as separable / smooth, or left to the cvxpy chain (.user_forms)
        user = self.objective
        self.objective, self.objective_route = route_objective(self.objective, estimate)
        self._live = LiveRoute(user, estimate, (self.objective, self.objective_route))  # its cvxpy Parameters
        if constraints is None:
            cons = [NonNegative(), SumTo(1.0)]  # the simplex
        elif isinstance(constraints, (Constraint,)) or callable(constraints):
            cons = [as_constraint(constraints)]
        else:
            try:
                cons = [as_constraint(c) for c in constraints]
            except TypeError as e:
                if "not iterable" in str(e):
                    raise TypeError(f"constraints must be None or a list, got {type(constraints).__name__}") from None
                raise
        if constraints is not None:  # one warning, pointing at the caller's line
            from .constraints.base import warn_if_simplex_dropped
            warn_if_simplex_dropped(cons, stacklevel=3)
        if (domain := domain_constraint(self.objective, cons)) is not None:
            cons = cons + [domain]  # the objective's implicit domain, explicit for ldpopt's own routes
        self.constraints = cons
        if scale is None:
            scale = (default_scale(estimate, floor=self.objective.frequency_floor) if self.objective.scaled
                     else 1.0)
        elif not (np.isfinite(scale) and scale > 0):
            raise ValueError(f"scale must be finite and > 0, got {scale!r}")
        self.scale = float(scale)
        # (x, f, cvxpy problem, named constraints, multiplier, offset): built on first use
        self._cvx: tuple[Any, ...] | None = None
        # one in-process cvxpy solve of this problem's objects at a time (their values are shared
        # state: a Problem solved from several threads; each solve's limit and options travel in
        # its own SolveContext, never on the Problem)
        self._solving = threading.RLock()
        if self._structured_only():  # nothing for cvxpy to build: refused here if that route cannot take it
            from .dual.structure import compile_constraints
            from .objectives.separable import NotApplicable

            try:
                self._compiled = compile_constraints(cons, estimate.d)
            except NotApplicable as exc:
                raise ValueError(f"objective: {self.objective.name!r} has no cvxpy_expr, so only {STRUCTURED} can "
                                 f"solve it, and it does not cover these constraints ({exc})") from None
            except ValueError:  # infeasible bound/sum data: solve() reports it (the exact pre-check)
                pass
        if self._structured_only() or _lazy(self.objective, cons):
            # the simplex family with a built-in objective: names known without cvxpy, nothing to
            # validate (DCP by construction); cvxpy's problem (~1 ms at d = 42,178, 5x the structured
            # solve) is built on first use, which the structured route never needs
            from .dual.structure import dual_names

            self._owners = {name: (c, j) for c, keys in zip(cons, dual_names(cons)) for j, name in enumerate(keys)}
        else:
            self._build()
        if self._cvx is None and not user.lazy_build:
            # a user's cvxpy expression routed to a form that builds no cvxpy problem here: its data
            # and variables checked all the same (:func:`_refuse_foreign_data`)
            probe = cp.Variable(estimate.d, name="x")
            _refuse_foreign_data(probe, user.build(probe, probe, 1.0, estimate), {})

    def _structured_only(self) -> bool:
        """A declared separable objective without ``cvxpy_expr``: ldpopt's structured solver is its only
        route (no cvxpy problem is built; a cvxpy solver asked for by name is refused)."""
        from .objectives.user_separable import SeparableObjective

        return isinstance(self.objective, SeparableObjective) and self.objective.cvxpy_expr is None

    # -- building --------------------------------------------------------------------------------
    def _build(self) -> None:
        est = self.estimate
        x = cp.Variable(est.d, name="x")
        f = x if self.scale == 1.0 else self.scale * x
        built = self.objective.build(f, x, self.scale, est)
        named: dict[str, cp.Constraint] = {}
        owners: dict[str, tuple[Constraint, int]] = {}
        for c in self.constraints:
            for j, (key, con) in enumerate(c.build(f, est)):
                name, k = key, 0
                while name in named:
                    k += 1
                    name = f"{key}_{k}"
                named[name] = con
                owners[name] = (c, j)  # whose numpy ``residuals()[j]`` checks it
        _refuse_foreign_data(x, built, named)
        prob = cp.Problem(cp.Minimize(built.expr), list(built.constraints) + list(named.values()))
        if not prob.is_dcp():
            raise ValueError(f"objective {self.objective.name!r} with these constraints is not a convex (DCP) "
                             "problem: the objective must be convex and the constraints DCP")
        self._owners = owners
        self._cvx = (x, f, prob, named, float(built.multiplier), float(built.offset))

    def _built(self) -> tuple:
        if self._cvx is None:
            self._build()
        assert self._cvx is not None  # _build sets it
        return self._cvx

    # the cvxpy side, built on first use (see __init__)
    @property
    def x(self):
        """The cvxpy Variable the solvers see, x = f/scale (length d); built on first access.

        Examples
        --------
        >>> import numpy as np
        >>> import ldpopt
        >>> est = ldpopt.oracles.get("grr", 1.0, 4).estimate(np.array([46_000, 30_000, 15_000, 9_000]), 100_000)
        >>> ldpopt.Problem(est).x.shape
        (4,)
        """
        return self._built()[0]

    @property
    def f(self):
        """scale·x, the frequency vector as a cvxpy expression (length d); built on first access.

        Examples
        --------
        >>> import numpy as np
        >>> import ldpopt
        >>> est = ldpopt.oracles.get("grr", 1.0, 4).estimate(np.array([46_000, 30_000, 15_000, 9_000]), 100_000)
        >>> ldpopt.Problem(est).f.shape
        (4,)
        """
        return self._built()[1]

    @property
    def cvxpy_problem(self):
        """The compiled ``cvxpy.Problem`` (objective and named constraints); built on first access.

        Examples
        --------
        >>> import numpy as np
        >>> import ldpopt
        >>> est = ldpopt.oracles.get("grr", 1.0, 4).estimate(np.array([46_000, 30_000, 15_000, 9_000]), 100_000)
        >>> prob = ldpopt.Problem(est).cvxpy_problem
        >>> type(prob).__name__, prob.is_dcp()
        ('Problem', True)
        """
        return self._built()[2]

    _named = property(lambda self: self._built()[3])
    _multiplier = property(lambda self: self._built()[4])
    _offset = property(lambda self: self._built()[5])

    @property
    def constraint_names(self) -> list[str]:
        """The names of the cvxpy constraints, in order: the keys of ``Solution.duals`` (a name
        given twice gets ``_1``, ``_2``, ...).

        Examples
        --------
        >>> import numpy as np
        >>> import ldpopt
        >>> est = ldpopt.oracles.get("grr", 1.0, 4).estimate(np.array([46_000, 30_000, 15_000, 9_000]), 100_000)
        >>> ldpopt.Problem(est).constraint_names
        ['nonnegative', 'sum']
        """
        return list(self._owners)

    def _chain(self, solver) -> tuple[str, ...]:
        if solver is None:
            return default_chain(self)
        if getattr(self.objective, "cvxpy_expr", True) is None and solver not in ("SQP", "sqp", ["SQP"]):
            raise ValueError(f"solver: objective {self.objective.name!r} has no cvxpy_expr, so only solver=None "
                             f"or 'SQP' can solve it, got {solver!r}")
        names = [solver] if isinstance(solver, str) else solver
        if isinstance(names, (list, tuple)) and names and all(isinstance(n, str) for n in names):
            out = []
            for n in names:
                up = n.upper()
                if up not in cp.settings.SOLVERS and not (up == "SQP" and sqp_applies(self)):
                    raise ValueError(f"solver must be a cvxpy solver name (installed: {installed_solvers()}), "
                                     f"got {n!r}")
                out.append(up)
            return tuple(out)
        raise TypeError(f"solver must be a string or a list of strings, got {type(solver).__name__}")

    # -- solving ---------------------------------------------------------------------------------
    def solve(self, solver=None, strict: bool = False, verbose: bool = False, *, time_limit: float | None = None,
              progress: bool = True, **solver_options) -> Solution:
        """Solve; return a :class:`Solution` checked by ldpopt itself (:mod:`.verdict`).

        First, before any solver: linear constraints (built-in, and the affine rows of a user's
        callable) that have no common point in exact arithmetic, by any margin, give status
        ``"infeasible"`` at once, with the conflicting constraints named and the exact Farkas
        certificate in ``Solution.infeasibility`` (:mod:`.feasibility`).

        ``solver``: None — ldpopt's own dual solver ``"LDPOPT-STRUCTURED"`` where it applies (the
        objective has a per-value form and every constraint compiles to its rows: ``Objective.per_value``,
        ``Constraint.compile_into``; where exactly: docs/problems.md, "Where the structured solver
        applies"), then, where it does not or its answer fails its certificate or ldpopt's check, the
        route :mod:`.policy` chooses for the problem's class (a cvxpy chain of installed solvers, or the
        sequential-QP route of :mod:`.sqp`), each attempt recorded in ``attempts``;
        ``"LDPOPT-STRUCTURED"`` (that solver only: ``"solver_error"`` saying why when it does not
        apply), ``"SQP"`` (that route at any d), a cvxpy solver name (that solver only), or a list of
        names (that chain).

        Each answer is checked in frequency units (constraint residuals with numpy; stationarity and
        the duality gap from f and the duals). The first that passes with stationarity and gap run is
        returned ``"optimal"``; the first whose check passed without certifying it
        (``"optimal_unverified"``) ends the chain too, and so does an interior-point solver's
        feasible point with its duality gap certified when only first-order solvers are left (the
        default chain only). Otherwise: ``"optimal_unverified"``
        (``checks.not_run`` says why), ``"inaccurate"`` (a solver said optimal, the check failed), or
        the last solver's own status, with the best *checked* point of all routes
        (:func:`.solution.best_checked`). A problem with a known feasible point
        (:func:`.verdict.feasible_point`) is never ``"infeasible"``: that is ``"solver_error"``;
        ``"infeasible"`` needs a certificate ldpopt verified (the exact pre-check, or
        :mod:`.check.conflict` for a user's non-affine constraints), a solver's own is
        ``"infeasible_inaccurate"``. The status returned is decided by ldpopt's check of the returned
        f and duals themselves (:func:`.verdict.refereed`), whatever route produced them.

        ``time_limit`` (seconds of wall clock, default None: none) bounds the whole call: it goes to
        every route and solver in this call's own :class:`~.progress.SolveContext` (Clarabel's and
        SCS's and OSQP's own limits with the time left, and each foreign solver in a child process
        killed at the limit; ldpopt's routes check their clock; no solver starts after it), and
        ldpopt's check stops at it too, keeping what it verified (feasibility) and claiming no
        optimality (``"optimal_unverified"``). PIQP, which has no limit of its own, always runs in a
        child process (:mod:`.isolate`): a crash there is a ``"solver_error"`` attempt and the chain
        goes on; an exception raised inside any solver or route is one failed attempt too, while one
        raised by the user's own code (a callable objective, a declared derivative) propagates. The
        ``Problem`` keeps no per-solve state: it may be solved from several threads at once, each
        call with its own limit. On time-out the best point checked is returned with status
        ``"time_limit"``, or ``"optimal"`` only when ldpopt's check of it passed (:mod:`.progress`).
        ``progress`` (default True): a line on stderr (route, iteration, residuals) for each route
        event and every 2 s while a solver runs, once the solve has taken 2 s; silent before that.

        ``solver_options`` override :data:`DEFAULT_SOLVER_OPTIONS` for every solver tried and go to
        the solver as is (``max_iter``, ``eps_abs``, ``tol_gap_rel``, ...); a keyword named after a
        solver with a dict value (``SCS={"eps_abs": 1e-9}``) applies to that solver only. No state is
        carried between calls (cvxpy's warm start is off), so the answer does not depend on what was
        solved before.

        Parameters
        ----------
        solver : str, list of str or None, default None
            None: the default route above (structured solver, then the :mod:`.policy` chain);
            ``"LDPOPT-STRUCTURED"``, ``"SQP"``, a cvxpy solver name, or a list of names (that chain).
        strict : bool, default False
            Raise the matching :class:`~ldpopt.problems.SolverError` subclass unless the status is
            ``"optimal"`` (False: return the Solution and emit a :class:`~ldpopt.problems.SolverWarning`).
        verbose : bool, default False
            Passed to cvxpy's solvers (their own logs).
        time_limit : float or None, default None
            Seconds of wall clock for the whole solve, every route and solver; None: no limit.
        progress : bool, default True
            A progress line on stderr once the solve has taken 2 s.
        **solver_options
            Override :data:`DEFAULT_SOLVER_OPTIONS` for every solver tried; ``NAME={...}`` for one solver.

        Returns
        -------
        Solution
            f, status, duals, ldpopt's ``checks`` and every attempt (:class:`~ldpopt.problems.Solution`).

        Raises
        ------
        SolverError
            With ``strict=True``, a status other than ``"optimal"`` (its subclass names the status).
        ValueError
            An unknown solver name, a solver the objective cannot use, a bad ``time_limit`` or option.
        MissingParameterError
            A cvxpy Parameter of a callable objective or constraint has no value.

        Examples
        --------
        >>> import numpy as np
        >>> import ldpopt
        >>> est = ldpopt.oracles.get("oue", 1.0, 6).simulate(np.array([400, 250, 150, 100, 60, 40]) * 50, rng=0)
        >>> sol = ldpopt.Problem(est, objective="weighted-mle").solve()
        >>> sol.solver, sol.status
        ('LDPOPT-STRUCTURED', 'optimal')
        >>> ref = ldpopt.Problem(est, objective="weighted-mle").solve(solver="CLARABEL")   # the same on cvxpy
        >>> ref.solver, ref.status, bool(np.abs(ref.f - sol.f).max() < 1e-6)
        ('CLARABEL', 'optimal', True)
        """
        limit = check_time_limit(time_limit)
        if limit is None:
            sol = self._guarded(solver, verbose, time_limit, progress, solver_options)
        else:  # the whole call bounded: a stage that overruns the limit is abandoned (.progress.bounded)
            t0 = time.perf_counter()
            done, sol = bounded(lambda: self._guarded(solver, verbose, time_limit, progress, solver_options),
                                backstop(limit))
            if not done:
                sol = self._failed("time_limit", "LDPOPT",
                                   f"time limit of {limit:g} s: the solve was stopped after "
                                   f"{time.perf_counter() - t0:.1f} s inside a stage that does not check the clock "
                                   "(a cvxpy compilation or row reading); no point was checked")
                sol.attempts = [_attempt(sol)]
        return self._deliver(sol, strict)

    def _guarded(self, solver, verbose: bool, time_limit, progress: bool, solver_options: dict) -> Solution:
        """:meth:`_solve`, any library exception escaping it one ``"solver_error"`` Solution."""
        try:
            return self._solve(solver, verbose, time_limit, progress, solver_options)
        except Exception as exc:
            if not _library_failure(exc):
                raise
            sol = self._failed("solver_error", "LDPOPT", f"the solve stopped: a library raised "
                               f"{type(exc).__name__}: {exc} (not the user's code: one failed attempt)")
            sol.attempts = [_attempt(sol)]
            return self._finish(sol)

    def _deliver(self, sol: Solution, strict: bool) -> Solution:
        """The Solution returned, or its typed error raised (``strict``), else a SolverWarning unless optimal."""
        if sol.status == "optimal":
            return sol
        text = f"{sol.solver}: status {sol.status!r} ({sol.message}) for objective {sol.objective!r}"
        if strict:
            raise error_for_status(sol.status)(text, sol)
        warnings.warn(text, SolverWarning, stacklevel=3)
        return sol

    def _solve(self, solver, verbose: bool, time_limit, progress: bool, solver_options: dict) -> Solution:
        """:meth:`solve`'s body (its every library exception one failed Solution there)."""
        from .solvers.phase_one import pre_check
        self._read_parameters()
        if self._structured_only() and solver is not None and not (isinstance(solver, str) and solver.upper() == STRUCTURED):
            raise ValueError(f"solver: objective {self.objective.name!r} has no cvxpy_expr, so only solver=None or "
                             f"{STRUCTURED!r} can solve it, got {solver!r}")
        # this call's context, handed to every route (the Problem keeps no per-solve state);
        # time_limit validated first; the pre-check counts against it
        ctx = SolveContext.make(time_limit, progress, verbose, solver_options)
        clock = ctx.clock
        self._affine_cache: dict | None = {}  # a user constraint's affine rows, read once in this solve (.feasibility.affine_rows)
        _worker_if_needed()
        try:
            pre, system = pre_check(self, clock.left())  # its cheap steps; the rest after the route (system)
        except Exception as exc:  # a library's failure in the pre-check decides nothing: solved as usual
            if user_code_raised(exc):
                raise
            from .constraints.feasibility import Decision
            self._feasibility = Decision(None, how=f"the pre-check raised {type(exc).__name__}: {exc}")
            pre = system = None
        if pre is not None:  # a proved conflict: no solver runs
            return self._finish(pre, ctx.deadline)
        lazy = {"system": system, "timed_out": False}  # the pre-check's deferred steps, until they run
        settle = None if system is None else (lambda s: self._settle(s, lazy, ctx))
        start = time.perf_counter()
        first: list[dict] = []  # the structured solver's attempt, when it ran and did not pass
        kept = sqp_point = None  # the structured route's / a smooth objective's Newton point, when it ran and did not pass
        named_structured = isinstance(solver, str) and solver.upper() == STRUCTURED
        if solver is None or named_structured:
            with clock.running(STRUCTURED):
                sol, why = structured_attempt(self, ctx)
            if sol is not None and (sol.success or named_structured):
                sol.attempts = [_attempt(sol)]
                sol.wall_time = time.perf_counter() - start
                return self._finish(sol, ctx.deadline, settle)
            if self._structured_only():  # no cvxpy form to fall back on: its checked point, or why not
                if sol is None:
                    raise ValueError(f"objective: {self.objective.name!r} has no cvxpy_expr, so only {STRUCTURED} "
                                     f"can solve it, and it does not apply: {why}")
                sol.attempts = [_attempt(sol)]
                sol.message += f" | objective {self.objective.name!r} has no cvxpy_expr: no cvxpy solver to fall back on"
                sol.wall_time = time.perf_counter() - start
                return self._finish(sol, ctx.deadline, settle)
            if named_structured:  # not applicable: say why, no fallback when asked for by name
                sol = self._failed("solver_error", STRUCTURED, f"{STRUCTURED} does not apply: {why}")
                sol.attempts = [_attempt(sol)]
                return self._finish(sol, ctx.deadline, settle)
            first = [_attempt(sol)] if sol is not None else []  # not applicable: nothing was tried
            kept = sol  # its checked point competes with the later routes' (best_checked)
        if first and (pre := self._deferred(lazy, ctx, first)) is not None:  # a route failed: decide now
            return self._finish(pre, ctx.deadline)
        direct = direct_qp_solver(self, clock.limit is not None) if solver is None else None
        if direct is not None:
            with clock.running(direct + DIRECT):
                dq, _ = solve_direct_qp(self, direct, options_for(self, direct, ctx, direct_qp_options(self, direct)),
                                        ctx)
            if dq is not None and dq.success:
                dq.attempts = first + [_attempt(dq)]
                dq.wall_time = time.perf_counter() - start
                return self._finish(dq, ctx.deadline, settle)
            if dq is not None:  # its checked point competes with the chain's (best_checked)
                first, kept = first + [_attempt(dq)], best_checked([kept, dq])
        if first and (pre := self._deferred(lazy, ctx, first)) is not None:
            return self._finish(pre, ctx.deadline)
        if (solver is None and uses_sqp(self)) or (isinstance(solver, str) and solver.upper() == "SQP"):
            with clock.running("SQP"):
                sq = _newton_route(self, ctx)
            sol = best_checked([sq, kept])
            sol.attempts = first + list(sq.attempts or [])
            if first:
                sol.message += f" | {STRUCTURED} first: {first[0]['status']} ({first[0]['checks']})"
            if solver is None and is_likelihood(self):
                sol.message = (f"d = {self.estimate.d} >= {SQP_MIN_D}: the exact likelihood is solved by sequential "
                               "QP instead of as an exponential-cone program (conic solvers fail it at this d; "
                               "ldpopt.problems.solvers.policy) — " + sol.message)
            if (sol.success or solver is not None or is_likelihood(self) or clock.expired()
                    or getattr(self.objective, "cvxpy_expr", True) is None):
                self._not_infeasible_if_known_feasible(sol)
                timed_out(sol, clock)
                sol.wall_time = time.perf_counter() - start
                return self._finish(sol, ctx.deadline, settle)
            # a smooth objective the Newton route did not certify: its cvxpy expression on the chain
            first, sqp_point = first + [_attempt(sol)], sol
        chain = self._chain(solver)
        explicit = solver is not None
        attempts: list[dict] = []
        best = sqp_point  # a smooth objective's Newton point, when that route ran and did not certify
        interior_point = False  # an interior-point solver of the chain has returned a point
        for name in chain:
            if (first or attempts) and (pre := self._deferred(lazy, ctx, first + attempts)) is not None:
                return self._finish(pre, ctx.deadline)
            if clock.expired():  # no solver starts past the time limit
                attempts.append({"solver": name, "status": "time_limit", "checks": "not started", "seconds": 0.0})
                continue
            if name != "SQP" and name not in installed_solvers():
                attempts.append({"solver": name, "status": "solver_not_installed", "checks": "", "seconds": 0.0})
                if explicit and len(chain) == 1:
                    best = self._failed("solver_not_installed", name,
                                        f"solver {name!r} is not installed (installed: {installed_solvers()})")
                continue
            with clock.running(name):
                if name == "SQP":  # ldpopt's route for the likelihoods (policy.LIKELIHOOD_CHAIN)
                    sol = _newton_route(self, ctx)
                    sol.attempts = []
                else:
                    # a first-order fallback after an interior point's answer gets a budget of its own
                    # (an answer it rarely improves is already in hand), within the solve's limit
                    cap = fallback_budget(clock.elapsed()) if not explicit and name in _FIRST_ORDER and interior_point else None
                    sol = cvxpy_attempt(self, name, ctx, not explicit and name == "SCS", cap)
                    if cap is not None:
                        left = clock.left()
                        sol.message += (f" | {name} ran as the chain's fallback under a budget of "
                                        f"{cap if left is None else min(cap, max(left, 0.0)):.3g} s (policy.fallback_budget)")
            assert sol.solver is not None  # both routes name their solver
            clock.note(sol.solver, sol.iterations, status=sol.status,
                       **({"violation": sol.checks.max_violation} if sol.checks is not None else {}))
            attempts.append(_attempt(sol))  # without a point, the solver's message (a crash, a limit)
            # (answered or failed: SCS after Clarabel's solver_error ran 600 s uncapped at d = 10³)
            interior_point = interior_point or sol.solver in _INTERIOR
            if sol.success:
                best = sol
                break
            best = best_checked([best, sol])
            if sol.status == "optimal_unverified":
                # the first answer that passes the check ends the chain: a later solver meets the same
                # unverifiable objective (a kink, no gradient), and ran to its limits here before
                # (total variation + CLS at d = 1,000: PIQP's point, then 30 s more of Clarabel and OSQP)
                break
            if not explicit and (why := _first_order_cannot_do_better(sol, chain[chain.index(name) + 1:], self)):
                sol.message += f" | the chain stops here: only first-order solvers are left, and {why}"
                break
        if best is None or not (best.success or best.status.startswith("infeasible")):
            best = best_checked([best, kept])  # every route failed: the best checked point of all of them
        if best is None and clock.expired():
            best = self._failed("time_limit", chain[0], "no solver started within the time limit")
        if best is None:  # nothing installed
            best = self._failed("solver_not_installed", chain[0],
                                f"none of {list(chain)} is installed (installed: {installed_solvers()})")
        self._not_infeasible_if_known_feasible(best)
        if explicit and not best.success and uses_sqp(self) and is_likelihood(self):
            best.message += (f" | at d = {self.estimate.d} >= {SQP_MIN_D} conic solvers are known to fail this "
                             "exact likelihood: solve() without a solver (or solver='SQP') uses sequential QP")
        if not explicit and chain == EXP_CONE_CHAIN:
            best.message = (f"d = {self.estimate.d} > {EXP_CONE_CLARABEL_MAX_D} with exponential cones in a user objective: "
                            "SCS only (Clarabel was measured failing or slow past it; ldpopt.problems.solvers.policy) — "
                            + best.message)
        attempts = first + attempts
        timed_out(best, clock)
        if len(attempts) > 1:
            best.message += " | attempts: " + "; ".join(f"{a['solver']}: {a['status']}" for a in attempts)
        best.attempts = attempts
        best.wall_time = time.perf_counter() - start
        return self._finish(best, ctx.deadline, settle)

    def _read_parameters(self) -> None:
        """Every cvxpy Parameter's value now: the objective's route made for them (recognition,
        derivatives, certificate and check read it; :class:`.user_forms.LiveRoute`), and a typed
        error naming one without a value (the cvxpy problem reads the values itself)."""
        got = self._live.route()
        if got is not None:
            self.objective, self.objective_route = got
        if self._cvx is not None:
            missing_parameter(self._cvx[2].parameters())

    def _not_infeasible_if_known_feasible(self, best: Solution) -> None:
        if best.status in ("infeasible", "infeasible_inaccurate", "infeasible_or_unbounded"):
            proved = getattr(self, "_feasibility", None)  # the exact pre-check's decision (.feasibility)
            if proved is not None and proved.feasible and proved.complete:
                best.status, best.success, best.infeasibility = "solver_error", False, None
                best.message = ("every solver tried said the constraints are infeasible, but ldpopt has a "
                                "feasible point checked in exact arithmetic: a solver failure")
            elif feasible_point(self) is not None:
                best.status, best.success, best.infeasibility = "solver_error", False, None
                best.message = ("every solver tried said the constraints are infeasible, but ldpopt knows a "
                                "feasible point (it satisfies every constraint to "
                                f"{violation_tol(self.estimate.d):.0e}): a solver failure")
            elif best.status == "infeasible" and not getattr(best.infeasibility, "verified", False):
                # a solver's certificate is its own word: "infeasible" needs ldpopt's check of one
                # (the exact pre-check, or .check.conflict at the phase one's point), else the weaker status
                best.status = "infeasible_inaccurate"
                best.message += (" | not verified by ldpopt's check (the exact pre-check does not decide these "
                                 "constraints and the phase one's conflict was not proved): infeasible_inaccurate")

    def _referee(self, sol: Solution, deadline: float | None = None) -> None:
        """The returned status decided by ldpopt's check of the returned (f, duals) themselves
        (:func:`.verdict.refereed`: a route's ``checks`` stand only when their digest is that of these
        bits, else the check is computed afresh): ``"optimal"`` / ``"optimal_unverified"`` that the
        check of these bits does not pass become ``"inaccurate"``. An ``"optimal"`` without a distance
        bound says why in ``checks.not_run["error_bound"]``."""
        from .check.verdict import refereed

        if sol.checks is None and sol.status not in ("optimal", "optimal_unverified"):
            return
        checks = refereed(self, sol.f, sol.duals, sol.checks, deadline)
        if checks is not sol.checks:
            sol.checks = checks
            if sol.status in ("optimal", "optimal_unverified") and checks is not None:
                ok = status_after_check("optimal", checks)
                if ok != sol.status and ok != "optimal":
                    sol.message += (f" | ldpopt's check of the returned point and multipliers: {ok} "
                                    f"({'; '.join(checks.failed) or unverified_reason(checks)})")
                    sol.status = ok
        if sol.status in ("optimal", "optimal_unverified") and (sol.checks is None or not sol.checks.passed):
            sol.status = "inaccurate"  # no point checked, or its check failed
        sol.success = sol.status == "optimal"
        if sol.success and sol.checks.error_bound is None and "error_bound" not in sol.checks.not_run:
            sol.checks.not_run["error_bound"] = "no distance bound was computed for this objective and these constraints"

    def _failed(self, status: str, solver: str, message: str) -> Solution:
        return Solution.failed(self.estimate.d, status, solver, self.objective.name, message)

    def _deferred(self, lazy: dict, ctx: SolveContext, attempts: list) -> Solution | None:
        """The exact pre-check's deferred steps (:func:`.solvers.phase_one.pre_check`), run now and
        once: the ``"infeasible"`` Solution when they prove a conflict (``attempts``, the routes
        tried so far, kept before it), else None. Called as soon as a route has not passed, so an
        infeasible problem costs one route more than before, never the whole chain."""
        from .solvers.phase_one import infeasible_solution

        if lazy["system"] is None:
            return None
        lazy["system"] = None
        t0 = time.perf_counter()
        left = ctx.clock.left()
        if left is not None and left <= 0:
            lazy["timed_out"] = True
            return None
        try:
            pre = infeasible_solution(self, left, None)
        except Exception as exc:  # a library's failure in the decision: nothing decided
            if user_code_raised(exc):
                raise
            from .constraints.feasibility import Decision
            self._feasibility = Decision(None, how=f"the feasibility decision raised {type(exc).__name__}: {exc}")
            lazy["raised"] = f"{type(exc).__name__}: {exc}"
            pre = None
        decision = getattr(self, "_feasibility", None)
        lazy["timed_out"] = (pre is None and decision is not None and decision.feasible is None
                             and ctx.clock.expired())
        if pre is None:
            return None
        pre.attempts = list(attempts) + list(pre.attempts or [])
        pre.message += " (decided after " + ", ".join(f"{a['solver']}: {a['status']}" for a in attempts) + ")"
        pre.wall_time = time.perf_counter() - t0
        return pre

    def _settle(self, sol: Solution, lazy: dict, ctx: SolveContext) -> Solution:
        """The end of a solve whose exact pre-check was deferred (:func:`.solvers.phase_one.pre_check`),
        after ldpopt's check of the answer: a returned point that passed the check and is made exact
        on its active set (:func:`.feasibility.point_feasible`) proves the constraints non-empty, so
        no certificate of a conflict exists and the answer stands; otherwise the deferred steps run
        now (:meth:`_deferred`, if a failed route has not run them already) and a verified conflict
        replaces the answer (status ``"infeasible"``). Where that decision could not finish within
        the time limit, an ``"optimal"`` answer becomes ``"time_limit"``: a set empty by less than
        the check's tolerance is never returned as optimal."""
        from .check.point import user_rows_met
        from .constraints.feasibility import Decision, point_feasible
        from .progress import CheckTimedOut

        system = lazy["system"]
        passed = (sol.status in ("optimal", "optimal_unverified") and sol.checks is not None and sol.checks.passed
                  and sol.f is not None)
        if system is not None and passed:
            try:
                if point_feasible(system, sol.f, ctx.deadline) and user_rows_met(self, sol.f, system[-1]):
                    lazy["system"] = None
                    self._feasibility = Decision(True, how="the returned point, made exact on its active set",
                                                 complete=True)
                    return sol
            except CheckTimedOut:
                pass
            except Exception as exc:  # a library's failure: the full decision below says what it says
                if user_code_raised(exc):
                    raise
        pre = self._deferred(lazy, ctx, list(sol.attempts or [_attempt(sol)]))
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
        self._not_infeasible_if_known_feasible(sol)
        return sol

    def _finish(self, sol: Solution, deadline: float | None = None, settle=None) -> Solution:
        self._referee(sol, deadline)
        if settle is not None:
            sol = settle(sol)
        _worker_if_needed()
        self._affine_cache = None  # this solve's rows: a later check or decision outside a solve reads afresh
        return sol

    def __repr__(self) -> str:
        return (f"Problem(objective={self.objective.name!r}, d={self.estimate.d}, "
                f"constraints={self.constraint_names}, scale={self.scale:.3g})")
