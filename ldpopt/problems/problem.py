"""``Problem`` (a post-processing method as a convex problem); its ``Solution`` is in :mod:`.solution`.

>>> from ldpopt import Estimate
>>> from ldpopt.problems import Problem
>>> est = Estimate.from_counts([50, 30, 15, 5], n=100, epsilon=2.0, p=0.7, q=0.1)
>>> sol = Problem(est, "cls").solve()
>>> sol.status, round(float(sol.f.sum()), 6)
('optimal', 1.0)
"""

from __future__ import annotations

import copy
import threading
import time
import warnings
from types import MappingProxyType
from typing import Any

import cvxpy as cp
import numpy as np

from .._blas import one_thread
from ..estimate import check_estimate
from .check.verdict import status_after_check, unverified_reason
from .constraints.base import Constraint, NonNegative, SumTo, as_constraint
from .errors import SolverWarning, error_for_status, user_code_raised
from .objectives.base import default_scale
from .objectives.builtins import Objective, make_objective
from .objectives.finite import refuse_non_finite
from .progress import SolveContext, backstop, bounded, check_time_limit
from .solution import Solution, _attempt
from .solvers import routes
from .solvers.attempts import STRUCTURED
from .solvers.conic_format import CompiledProblem
from .solvers.isolate import fork_available
from .solvers.policy import DEFAULT_SOLVER_OPTIONS
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


def _checked_scale(scale) -> float:
    """``scale`` as a float, or a one-line error naming it: not a real number, not finite or not > 0."""
    try:
        ok = bool(np.isfinite(scale) and scale > 0) and not isinstance(scale, bool)
    except TypeError:
        ok = False
    if not ok:
        raise ValueError(f"scale must be finite and > 0, got {scale!r}")
    return float(scale)


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
        The solver's variable is x = f/scale; default :func:`default_scale` = min(max(σ of Eq. 7, 1/d), 1)
        (1 for the naive objective). Given, the cvxpy chain's Clarabel solves in it first
        (``scale_given``; :func:`~.solvers.routes.first_unit`).

    Attributes
    ----------
    f : cvxpy expression (scale·x), the frequency vector; x : the cvxpy Variable;
    cvxpy_problem : the compiled ``cvxpy.Problem``; constraint_names : names, in order;
    objective_route : the route chosen for the objective, in words (a callable: recognised or not, why);
    scale, scale_given : the solver's unit, and whether you gave it.
    For a built-in objective with only Simplex / NonNegative / SumTo, the cvxpy side (f, x, cvxpy_problem) is built
    on first access: ``solve()`` by the structured solver never needs it.
    The compiled form, read-only: named_constraints, owners, multiplier, offset, compiled (and
    derived, the facts made once from it; cvxpy_lock, held while cvxpy's own values are set). A
    Problem is read-only after construction: every fact of one solve lives in that call's
    :class:`~.progress.SolveContext`, so two threads may solve one Problem at once.

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
        with one_thread():  # recognition, the multiplier, the build: one BLAS thread at any d (.._blas)
            self._construct(estimate, objective, constraints, mean, variance, scale)

    def _construct(self, estimate, objective, constraints, mean, variance, scale) -> None:
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
            warn_if_simplex_dropped(cons, stacklevel=4)  # Problem(...) → _construct → here
        if (domain := domain_constraint(self.objective, cons)) is not None:
            cons = cons + [domain]  # the objective's implicit domain, explicit for ldpopt's own routes
        self.constraints = cons
        self.scale_given = scale is not None  # the chain's Clarabel then solves in it first (routes.first_unit)
        if scale is None:
            scale = (default_scale(estimate, floor=self.objective.frequency_floor) if self.objective.scaled
                     else 1.0)
        self.scale = _checked_scale(scale)
        # (x, f, cvxpy problem, named constraints, multiplier, offset): built on first use
        self._cvx: tuple[Any, ...] | None = None
        # the cvxpy objects' values (x.value, the constraints' dual values, cvxpy's compilation
        # cache) are state that cvxpy itself keeps on them: a Problem solved from several threads
        # sets and reads them one solve at a time (cvxpy_lock); every other per-solve fact travels in
        # the solve's own SolveContext, never on the Problem
        self._lock = threading.RLock()
        self._compiled: Any = None  # compile_constraints' Structure (False: does not compile), made once
        self._derived: dict = {}  # facts derived from the fixed data, made once (derived())
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
        # cvxpy's Problem, Clarabel's data written without cvxpy's restructuring product (.conic_format)
        prob = CompiledProblem(cp.Minimize(built.expr), list(built.constraints) + list(named.values()))
        if not prob.is_dcp():
            raise ValueError(f"objective {self.objective.name!r} with these constraints is not a convex (DCP) "
                             "problem: the objective must be convex and the constraints DCP")
        self._owners = owners
        self._cvx = (x, f, prob, named, float(built.multiplier), float(built.offset))

    def _built(self) -> tuple:
        if self._cvx is None:
            with self._lock:  # built once, whichever thread asks first
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
        """The compiled ``cvxpy.Problem`` (objective and named constraints); built on first access. A
        :class:`~.solvers.conic_format.CompiledProblem`: cvxpy's own, its chain's Clarabel data written
        without cvxpy's restructuring product (the same arrays, bit for bit).

        Examples
        --------
        >>> import cvxpy as cp
        >>> import numpy as np
        >>> import ldpopt
        >>> est = ldpopt.oracles.get("grr", 1.0, 4).estimate(np.array([46_000, 30_000, 15_000, 9_000]), 100_000)
        >>> prob = ldpopt.Problem(est).cvxpy_problem
        >>> isinstance(prob, cp.Problem), prob.is_dcp()
        (True, True)
        """
        return self._built()[2]

    # -- the compiled problem, read-only ----------------------------------------------------------
    @property
    def named_constraints(self) -> MappingProxyType:
        """Constraint name → its built cvxpy constraint, in :attr:`constraint_names`' order (a
        read-only view; the cvxpy side is built on first access).

        Examples
        --------
        >>> import numpy as np
        >>> import ldpopt
        >>> est = ldpopt.oracles.get("grr", 1.0, 4).estimate(np.array([46_000, 30_000, 15_000, 9_000]), 100_000)
        >>> {k: type(c).__name__ for k, c in ldpopt.Problem(est).named_constraints.items()}
        {'nonnegative': 'Inequality', 'sum': 'Equality'}
        """
        return MappingProxyType(self._built()[3])

    @property
    def owners(self) -> MappingProxyType:
        """Constraint name → (the ldpopt constraint that built it, its index j there): whose numpy
        ``residuals()[j]`` / ``jacobian_t`` checks it (a read-only view; no cvxpy build needed).

        Examples
        --------
        >>> import numpy as np
        >>> import ldpopt
        >>> est = ldpopt.oracles.get("grr", 1.0, 4).estimate(np.array([46_000, 30_000, 15_000, 9_000]), 100_000)
        >>> {k: (type(c).__name__, j) for k, (c, j) in ldpopt.Problem(est).owners.items()}
        {'nonnegative': ('NonNegative', 0), 'sum': ('SumTo', 0)}
        """
        return MappingProxyType(self._owners)

    @property
    def multiplier(self) -> float:
        """K of the compiled objective: cvxpy minimises K·J(f) + offset (duals divided by K give
        the problem's own; :class:`~.objectives.base.BuiltObjective`).

        Examples
        --------
        >>> import numpy as np
        >>> import ldpopt
        >>> est = ldpopt.oracles.get("grr", 1.0, 4).estimate(np.array([46_000, 30_000, 15_000, 9_000]), 100_000)
        >>> p = ldpopt.Problem(est)
        >>> bool(abs(p.multiplier * p.scale ** 2 - 1.0) < 1e-9)
        True
        """
        return self._built()[4]

    @property
    def offset(self) -> float:
        """The constant cvxpy's objective adds to K·J(f) (:attr:`multiplier`).

        Examples
        --------
        >>> import numpy as np
        >>> import ldpopt
        >>> est = ldpopt.oracles.get("grr", 1.0, 4).estimate(np.array([46_000, 30_000, 15_000, 9_000]), 100_000)
        >>> isinstance(ldpopt.Problem(est).offset, float)
        True
        """
        return self._built()[5]

    @property
    def compiled(self):
        """The constraints compiled once (:func:`~.dual.structure.compile_constraints`: the
        Structure the structured solver, the certificate and the feasibility test all read), or
        None where they do not compile (a user's callable, infeasible bound data, ...).

        Examples
        --------
        >>> import numpy as np
        >>> import ldpopt
        >>> est = ldpopt.oracles.get("grr", 1.0, 4).estimate(np.array([46_000, 30_000, 15_000, 9_000]), 100_000)
        >>> p = ldpopt.Problem(est)
        >>> p.compiled is p.compiled, p.compiled.d
        (True, 4)
        """
        if self._compiled is None:
            from .dual.structure import compile_constraints

            with self._lock:
                if self._compiled is None:
                    try:
                        self._compiled = compile_constraints(self.constraints, self.estimate.d)
                    except ValueError:  # NotApplicable too
                        self._compiled = False
        return None if self._compiled is False else self._compiled

    def rescaled(self, scale: float) -> Problem:
        """The same problem with the solver's unit ``scale`` (its variable x = f/scale): the same
        estimate, objective and constraints (and their cvxpy Parameters), its own cvxpy problem,
        multiplier and facts. What a solution of it says in frequency units (f, the duals divided by
        its multiplier) is a candidate for this problem: the chain's Clarabel retry in your
        objective's own units reads it so (:func:`~.solvers.routes.in_units_retry`), and this
        problem's check decides its status. Made once per scale by the caller
        (:meth:`derived`); this Problem is not changed.

        Parameters
        ----------
        scale : float
            The unit, finite and > 0.

        Returns
        -------
        Problem

        Raises
        ------
        ValueError
            ``scale`` not finite and > 0.

        Examples
        --------
        >>> import numpy as np
        >>> import ldpopt
        >>> est = ldpopt.oracles.get("grr", 1.0, 4).estimate(np.array([46_000, 30_000, 15_000, 9_000]), 100_000)
        >>> p = ldpopt.Problem(est, "cls", lambda f, e: f[0] <= 0.4)
        >>> q = p.rescaled(1.0)
        >>> q.scale, p.scale != 1.0, list(q.named_constraints) == list(p.named_constraints)
        (1.0, True, True)
        """
        checked = _checked_scale(scale)
        other = copy.copy(self)
        other.scale = checked
        other._lock = threading.RLock()
        other._derived = {}
        if self._cvx is not None:
            other._cvx = None
            other._build()
        return other

    def derived(self, key: str, make):
        """``make()``, a fact derived from this problem's fixed data (its constraints and estimate,
        never a solve's state: that is the :class:`~.progress.SolveContext`'s), computed on the
        first call for ``key`` and returned as kept after (thread-safe).

        Parameters
        ----------
        key : str
            The fact's name.
        make : callable
            ``make()`` computes it from the problem.

        Returns
        -------
        object
            The fact.

        Examples
        --------
        >>> import numpy as np
        >>> import ldpopt
        >>> est = ldpopt.oracles.get("grr", 1.0, 4).estimate(np.array([46_000, 30_000, 15_000, 9_000]), 100_000)
        >>> p = ldpopt.Problem(est)
        >>> p.derived("d squared", lambda: p.estimate.d ** 2), p.derived("d squared", lambda: 0)
        (16, 16)
        """
        if key not in self._derived:
            with self._lock:
                if key not in self._derived:
                    self._derived[key] = make()
        return self._derived[key]

    @property
    def cvxpy_lock(self):
        """The re-entrant lock held while a solve sets or reads the values of this problem's cvxpy
        objects (``x.value``, the constraints' dual values, cvxpy's compiled-problem cache, a point
        set for evaluation): cvxpy keeps those on the objects themselves, so two threads solving one
        Problem take turns there; everything else of a solve lives in its own context.

        Examples
        --------
        >>> import numpy as np
        >>> import ldpopt
        >>> est = ldpopt.oracles.get("grr", 1.0, 4).estimate(np.array([46_000, 30_000, 15_000, 9_000]), 100_000)
        >>> p = ldpopt.Problem(est)
        >>> with p.cvxpy_lock:
        ...     p.x.value is None
        True
        """
        return self._lock

    @property
    def structured_only(self) -> bool:
        """A declared separable objective without ``cvxpy_expr``: ldpopt's structured solver is its
        only route (no cvxpy problem is built; a cvxpy solver asked for by name is refused).

        Examples
        --------
        >>> import numpy as np
        >>> import ldpopt
        >>> est = ldpopt.oracles.get("grr", 1.0, 4).estimate(np.array([46_000, 30_000, 15_000, 9_000]), 100_000)
        >>> ldpopt.Problem(est).structured_only
        False
        """
        return self._structured_only()

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
        optimality (``"optimal_unverified"``). Every foreign solver (Clarabel, PIQP, OSQP, SCS, HiGHS)
        runs in a child process of ldpopt's worker, with or without a limit, wherever ``fork`` exists
        (:mod:`.isolate`): a crash there is a ``"solver_error"`` attempt and the chain goes on; an
        exception raised inside any solver or route is one failed attempt too, while one
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
        # this call's context, handed to every route (the Problem keeps no per-solve state); the
        # time limit counts from here
        ctx = SolveContext.make(time_limit, progress, verbose, solver_options, problem=self)
        if limit is None:
            sol = self._guarded(ctx, solver)
        else:  # the whole call bounded: a stage that overruns the limit is abandoned (.progress.bounded)
            t0 = time.perf_counter()
            done, sol = bounded(lambda: self._guarded(ctx, solver), backstop(limit))
            if not done:
                sol = self._failed("time_limit", "LDPOPT",
                                   f"time limit of {limit:g} s: the solve was stopped after "
                                   f"{time.perf_counter() - t0:.1f} s inside a stage that does not check the clock "
                                   "(a cvxpy compilation or row reading); no point was checked")
                sol.attempts = [_attempt(sol)]
        return self._deliver(sol, strict)

    def _guarded(self, ctx: SolveContext, solver) -> Solution:
        """:meth:`_solve` with ``ctx`` the thread's active context, any library exception escaping
        it one ``"solver_error"`` Solution. The solve runs on one BLAS thread at any d
        (:func:`ldpopt._blas.one_thread`; a dense system past :data:`ldpopt._blas.SMALL` rows takes the
        libraries' threads inside it): its products are vectors and small systems, which gain nothing
        from threads, and a threaded one leaves OpenBLAS's helper threads spinning after it (measured:
        docs/notes/problems.md, "ldpopt.problems"; docs/notes/devices.md, "ldpopt._blas")."""
        with ctx.active(), one_thread():
            try:
                return self._solve(ctx, solver)
            except Exception as exc:
                if not _library_failure(exc):
                    raise
                sol = self._failed("solver_error", "LDPOPT", f"the solve stopped: a library raised "
                                   f"{type(exc).__name__}: {exc} (not the user's code: one failed attempt)")
                sol.attempts = [_attempt(sol)]
                return self._finish(sol, ctx, settle=False)

    def _deliver(self, sol: Solution, strict: bool) -> Solution:
        """The Solution returned, or its typed error raised (``strict``), else a SolverWarning unless optimal."""
        if sol.status == "optimal":
            return sol
        text = f"{sol.solver}: status {sol.status!r} ({sol.message}) for objective {sol.objective!r}"
        if strict:
            raise error_for_status(sol.status)(text, sol)
        warnings.warn(text, SolverWarning, stacklevel=3)
        return sol

    def _solve(self, ctx: SolveContext, solver) -> Solution:
        """:meth:`solve`'s body: the exact pre-check, then each route of :data:`.routes.ROUTES` that
        applies, in turn, until one answers (the last, the cvxpy chain, always does); the pre-check's
        deferred steps run as soon as a route has not passed (:func:`.routes.deferred`)."""
        self._read_parameters()
        if self.structured_only and solver is not None and not (isinstance(solver, str) and solver.upper() == STRUCTURED):
            raise ValueError(f"solver: objective {self.objective.name!r} has no cvxpy_expr, so only solver=None or "
                             f"{STRUCTURED!r} can solve it, got {solver!r}")
        _worker_if_needed()
        if (pre := routes.pre_checked(self, ctx)) is not None:  # a proved conflict: no solver runs
            return self._finish(pre, ctx, settle=False)
        for route in routes.ROUTES:
            if ctx.attempts and (pre := routes.deferred(self, ctx, list(ctx.attempts))) is not None:
                return self._finish(pre, ctx, settle=False)  # a route failed, and the decision found a conflict
            plan = route.plan(self, ctx, solver)  # None: the route does not apply
            sol = None if plan is None else route.run(self, ctx, solver, plan)
            if sol is not None:
                return self._finish(sol, ctx, settle=sol is not ctx.conflict)
        raise AssertionError("the cvxpy chain, the last route, always answers")

    def _read_parameters(self) -> None:
        """Every cvxpy Parameter's value now: the objective's route made for them (recognition,
        derivatives, certificate and check read it; :class:`.user_forms.LiveRoute`), and a typed
        error naming one without a value (the cvxpy problem reads the values itself). The one
        update a solve makes to the Problem: the route for the Parameters' values (the same
        objects for the same values, from the route's cache), under the lock (threads)."""
        with self._lock:
            got = self._live.route()
            if got is not None:
                self.objective, self.objective_route = got
        if self._cvx is not None:
            missing_parameter(self._cvx[2].parameters())

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

    def _finish(self, sol: Solution, ctx: SolveContext, settle: bool = True) -> Solution:
        """The answer refereed (:meth:`_referee`) and, where the pre-check deferred steps, settled
        (:func:`.routes.settle`; not a conflict those steps proved, nor a library's failure)."""
        self._referee(sol, ctx.deadline)
        if settle and ctx.settle_due:
            sol = routes.settle(self, sol, ctx)
        _worker_if_needed()
        return sol

    def __repr__(self) -> str:
        return (f"Problem(objective={self.objective.name!r}, d={self.estimate.d}, "
                f"constraints={self.constraint_names}, scale={self.scale:.3g})")
