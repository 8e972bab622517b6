"""What every objective is: :class:`Objective` (J(f) and its cvxpy form) and :class:`BuiltObjective`
(the scaled expression handed to cvxpy), the solver's unit :func:`default_scale` (``Problem``'s
variable is x = f/scale), and :class:`UserObjective`, a user callable as an objective with the
curvature-measured multiplier that scales it like the built-ins. The scaling convention is
:mod:`.objectives`'. The multiplier reads a cvxpy objective at a few points through
:func:`compiled_value` (the expression's tree walked once).

Notes: docs/notes/problems.md, "ldpopt.problems.objectives.base".
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import cvxpy as cp
import numpy as np

from ...estimate import Estimate

__all__ = ["BuiltObjective", "Objective", "UserObjective", "default_scale", "unit"]


@dataclass
class BuiltObjective:
    """What an objective hands to cvxpy: minimise ``expr = multiplier·J(f) + offset`` subject to the
    problem's constraints and ``constraints`` (auxiliary epigraph cones, not reported in duals).

    Parameters
    ----------
    expr : cvxpy Expression
        The scalar to minimise, multiplier·J(f) + offset.
    multiplier : float, default 1.0
        K, divided out of ``optimal_value`` and the duals (:mod:`.objectives`' scaling convention).
    offset : float, default 0.0
        The constant subtracted back from the solver's value.
    constraints : list of cvxpy Constraint, default []
        Auxiliary constraints of the objective's own form.

    Examples
    --------
    >>> import cvxpy as cp
    >>> from ldpopt.problems import BuiltObjective
    >>> built = BuiltObjective(cp.sum_squares(cp.Variable(3)), multiplier=4.0)
    >>> built.multiplier, built.offset, built.constraints
    (4.0, 0.0, [])
    """

    expr: cp.Expression
    multiplier: float = 1.0
    offset: float = 0.0
    constraints: list = field(default_factory=list)


class Objective(abc.ABC):
    """Base class. Subclasses set ``name`` and implement :meth:`build`. The solver is not the
    objective's choice: ``Problem.solve()`` walks the chain of :mod:`.policy` for the problem's
    class (QP or cone program).

    Parameters
    ----------
    (none)
        The base class takes no arguments; a subclass's ``__init__`` states its own.

    Examples
    --------
    >>> import cvxpy as cp
    >>> import numpy as np
    >>> import ldpopt
    >>> from ldpopt.problems import BuiltObjective, Objective
    >>> class Squares(Objective):
    ...     name = "squares"
    ...     def build(self, f, x, scale, estimate):
    ...         return BuiltObjective(cp.sum_squares(f - estimate.f_tilde))
    >>> est = ldpopt.oracles.get("grr", 1.0, 4).estimate(np.array([46_000, 30_000, 15_000, 9_000]), 100_000)
    >>> ldpopt.Problem(est, Squares()).solve(solver="CLARABEL").f.round(4)
    array([0.7662, 0.2338, 0.    , 0.    ])
    """

    name: str = "objective"
    #: whether :meth:`build` expects the scaled variable (s = σ); False means s = 1 (raw units)
    scaled: bool = True
    #: per-solver options overriding ``problem.DEFAULT_SOLVER_OPTIONS`` for this objective (read, never
    #: mutated: a subclass or an instance replaces it whole)
    solver_options: Mapping[str, Mapping[str, Any]] = {}
    #: scale s = min(max(σ, 1/d), 1) (True) or min(σ, 1) (False); see :func:`default_scale`
    frequency_floor: bool = True
    #: one line naming J for problem files and ``ldpopt solve --help`` (None: a problem file cannot
    #: name it, e.g. an objective that needs arrays a file does not carry)
    file_doc: str | None = None
    #: whether ``Problem(est, name, mean=..., variance=...)`` passes ``mean``/``variance`` to it
    uses_mean: bool = False
    #: whether :meth:`build` cannot fail for a valid estimate, so ``Problem`` may defer building the
    #: cvxpy problem until a cvxpy solver needs it (the structured route never does)
    lazy_build: bool = False
    #: J(f) = ‖f − f̃‖₁: ldpopt's check uses its subgradient and the exact LP gap (:mod:`.verdict`)
    absolute_deviations: bool = False

    @classmethod
    def example(cls, estimate: Estimate) -> Objective:
        """An instance for ``estimate`` (the conformance checks run a registered class through it): made
        with no arguments unless the class needs some.

        Parameters
        ----------
        estimate : Estimate
            The raw estimate (f̃, counts, n, p, q).

        Returns
        -------
        Objective

        Examples
        --------
        >>> import numpy as np
        >>> import ldpopt
        >>> est = ldpopt.oracles.get("grr", 1.0, 4).estimate(np.array([46_000, 30_000, 15_000, 9_000]), 100_000)
        >>> from ldpopt.problems.objectives.builtins import LeastSquares, Posterior
        >>> LeastSquares.example(est), Posterior.example(est)
        (LeastSquares(), Posterior(mean=<4>, weighted=True))
        """
        return cls()

    def per_value(self, estimate: Estimate):
        r"""The per-value form :math:`J(f) = Σ_v h_v(f_v)` (a :class:`~.separable.Separable`: :math:`h_v`,
        :math:`h_v'`, :math:`h_v''`, the per-value :math:`\operatorname{argmin}` and curvature) that the structured solver and the
        certificate evaluate, or None when J is not smooth and separable.

        Parameters
        ----------
        estimate : Estimate
            The raw estimate (f̃, counts, n, p, q).

        Returns
        -------
        Separable or None

        Examples
        --------
        >>> import numpy as np
        >>> import ldpopt
        >>> est = ldpopt.oracles.get("grr", 1.0, 4).estimate(np.array([46_000, 30_000, 15_000, 9_000]), 100_000)
        >>> from ldpopt.problems.objectives.builtins import L1, LeastSquares
        >>> type(LeastSquares().per_value(est)).__name__, L1().per_value(est)
        ('Quadratic', None)
        """
        return

    def likelihood_terms(self, estimate: Estimate):
        """The per-value terms of an exact likelihood for the sequential-QP route
        (:class:`~.likelihood_terms.LikelihoodTerms`), or None.

        Parameters
        ----------
        estimate : Estimate
            The raw estimate (f̃, counts, n, p, q).

        Returns
        -------
        LikelihoodTerms or None

        Examples
        --------
        >>> import numpy as np
        >>> import ldpopt
        >>> est = ldpopt.oracles.get("grr", 1.0, 4).estimate(np.array([46_000, 30_000, 15_000, 9_000]), 100_000)
        >>> from ldpopt.problems.objectives.builtins import LeastSquares, Multinomial
        >>> type(Multinomial().likelihood_terms(est)).__name__, LeastSquares().likelihood_terms(est)
        ('LikelihoodTerms', None)
        """
        return

    def resolve(self, estimate: Estimate) -> Objective:
        """The objective ``Problem`` solves for ``estimate`` in place of this one (itself by default):
        an objective whose minimiser, for some estimates, is another objective's (``"central-mle"``:
        ``"l1"`` or ``"cls"`` by the mechanism's law; ``"weighted-mle"`` on central noise: ``"cls"``).

        Parameters
        ----------
        estimate : Estimate
            The raw estimate, after :meth:`check` accepted it.

        Returns
        -------
        Objective

        Examples
        --------
        >>> import ldpopt
        >>> from ldpopt.problems.objectives.builtins import LeastSquares, WeightedMLE
        >>> est = ldpopt.Estimate.from_central([60, 41], "gaussian", 3.0, n=100)
        >>> LeastSquares().resolve(est), WeightedMLE().resolve(est)
        (LeastSquares(), LeastSquares())
        """
        return self

    def check(self, estimate: Estimate) -> None:
        """Raise ``ValueError`` if this objective cannot be used with ``estimate`` (``Problem`` calls it).

        Parameters
        ----------
        estimate : Estimate
            The raw estimate (f̃, counts, n, p, q).

        Returns
        -------
        None

        Raises
        ------
        ValueError
            The objective does not apply (e.g. ``"multinomial"`` on counts that do not sum to n).

        Examples
        --------
        >>> import numpy as np
        >>> import ldpopt
        >>> from ldpopt.problems.objectives.builtins import Multinomial
        >>> oue = ldpopt.oracles.get("oue", 1.0, 4).estimate(np.array([50_000, 40_000, 20_000, 10_000]), 100_000)
        >>> Multinomial().check(oue)
        Traceback (most recent call last):
        ...
        ValueError: objective='multinomial' is the likelihood of single-value reports (GRR): counts must sum to n = 100000, got 120000; use 'binomial' for set-valued reports (OUE, OLH, ...)
        """

    @abc.abstractmethod
    def build(self, f: cp.Expression, x: cp.Variable, scale: float, estimate: Estimate) -> BuiltObjective:
        """cvxpy form of the objective; ``f = scale * x`` is the frequency vector.

        Parameters
        ----------
        f : cvxpy Expression
            The frequency vector, scale·x.
        x : cvxpy Variable
            The solver's variable.
        scale : float
            s in f = s·x (``Problem.scale``).
        estimate : Estimate
            The raw estimate (f̃, counts, n, p, q).

        Returns
        -------
        BuiltObjective
            K·J(f) + offset as cvxpy sees it.

        Examples
        --------
        >>> import numpy as np
        >>> import ldpopt
        >>> est = ldpopt.oracles.get("grr", 1.0, 4).estimate(np.array([46_000, 30_000, 15_000, 9_000]), 100_000)
        >>> import cvxpy as cp
        >>> from ldpopt.problems.objectives.builtins import LeastSquares
        >>> x = cp.Variable(4)
        >>> built = LeastSquares().build(x, x, 1.0, est)
        >>> built.multiplier, built.expr.shape
        (1.0, ())
        """

    def value(self, f, estimate: Estimate) -> float:
        """:math:`J(f)` evaluated with numpy: by default the sum of the per-value form (:meth:`per_value`,
        :math:`Σ_v h_v(f_v)` plus its ``offset``); an objective without one writes its own.

        Parameters
        ----------
        f : array_like (d,)
            The point.
        estimate : Estimate
            The raw estimate (f̃, counts, n, p, q).

        Returns
        -------
        float

        Raises
        ------
        NotImplementedError
            The objective has no per-value form and writes no value of its own.

        Examples
        --------
        >>> import numpy as np
        >>> import ldpopt
        >>> est = ldpopt.oracles.get("grr", 1.0, 4).estimate(np.array([46_000, 30_000, 15_000, 9_000]), 100_000)
        >>> from ldpopt.problems.objectives.builtins import L1, LeastSquares
        >>> round(LeastSquares().value(np.full(4, 0.25), est), 4), round(L1().value(np.full(4, 0.25), est), 4)
        (0.9104, 1.7305)
        """
        sep = self.per_value(estimate)
        if sep is None:
            raise NotImplementedError(f"objective {self.name!r} has no numpy value")
        return float(np.sum(sep.value(np.asarray(f, float)))) + sep.offset

    def gradient(self, f, estimate: Estimate) -> np.ndarray:
        r""":math:`\nabla J(f)` evaluated with numpy (smooth objectives only): by default :math:`h_v'(f_v)` of the per-value
        form (:meth:`per_value`).

        Parameters
        ----------
        f : array_like (d,)
            The point.
        estimate : Estimate
            The raw estimate (f̃, counts, n, p, q).

        Returns
        -------
        ndarray (d,)

        Raises
        ------
        NotImplementedError
            The objective is not smooth (``"l1"``), or has no per-value form and writes no gradient.

        Examples
        --------
        >>> import numpy as np
        >>> import ldpopt
        >>> est = ldpopt.oracles.get("grr", 1.0, 4).estimate(np.array([46_000, 30_000, 15_000, 9_000]), 100_000)
        >>> from ldpopt.problems.objectives.builtins import LeastSquares
        >>> LeastSquares().gradient(np.full(4, 0.25), est).round(4)
        array([-1.3977, -0.3328,  0.6656,  1.0649])
        """
        sep = self.per_value(estimate)
        if sep is None:
            raise NotImplementedError(f"objective {self.name!r} has no gradient")
        return np.asarray(sep.d1(np.asarray(f, float)), dtype=np.float64)

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


class UserObjective(Objective):
    r"""A user callable ``objective(f, estimate) -> scalar cvxpy expression`` to minimise (convex,
    DCP). ``f`` is a cvxpy affine expression of length d (s·x, s = ``Problem.scale``). Solved along
    the same chain as the built-ins (QP or cone); ``optimal_value`` and duals are in the callable's
    own units (the solver's multiplier K is divided out, as for the built-ins).

    Handed to the solver as written (a choice; the papers are silent). A callable ldpopt does not
    recognise goes to cvxpy's chain as you wrote it, as plain cvxpy hands it to its solver: the
    solver's variable is f itself (``Problem.scale`` = 1) and its objective J itself (K = 1), unless
    you give ``multiplier=`` or ``scale=``. Measured on the grammar's 100 random families at d = 100
    and 1,000, side by side with ldpopt's unit and the measured K
    (``benchmarks/bench_random_families.py``; ``results/random_families_summary.md``, "The callable
    as written"): at d = 100 the worst ratio to the best valid plain cvxpy call rose from 0.075 to
    0.41 (a family that had failed at ldpopt's unit, then run SCS, solved at once) and three more
    answers were ``optimal``; at 1,000 the medians moved within the runs' noise. Against Clarabel
    at 1e-12 in both forms the answers were equally accurate. Clarabel's absolute tolerances then
    apply in your J's own units: a J of order 10⁵ (CLS on estimates down to −10⁵) ended
    ``optimal_unverified`` 8.6e-5 from the optimum in both forms.

    A callable ldpopt recognises (a separable, smooth, 2-norm or polyhedral form, solved on its own
    routes: :func:`~ldpopt.problems.solvers.user_forms.route_objective`) is scaled like the
    built-ins, which hand the solver K·J with K chosen so that each coordinate's term has curvature
    O(1) in x = f/s: CLS has :math:`K = 1/s^2` (:math:`J = \lVert f − \tilde f \rVert^2`, curvature
    2 per coordinate → 2 in x). Where such a callable reaches the cvxpy chain, its Clarabel is
    handed it as written first (unit 1, :attr:`as_written_first`), and in ldpopt's unit only where
    that attempt gives no answer that passes ldpopt's check (measured at d = 10² to 10⁵:
    ``results/random_families_summary.md``, "Clarabel as written first").

    A callable is a black box, so ``multiplier="auto"`` (those forms' default; on any callable when
    given) measures its curvature κ per coordinate along the all-ones
    direction u at the uniform point f₀ = 1/d, by central second differences of cvxpy's own
    evaluation: :math:`κ = (J(f_0 + hu) + J(f_0 − hu) − 2J(f_0))/(d·h^2)`, h = 1/(4d) (f₀ ± hu stays > 0, so
    logs are defined; a log's curvature changes by < 2× over [f₀, f₀ + 2h], so it passes the
    test below), and sets :math:`K = 2/(κ s^2)`, which is exactly the built-in K for a user-written
    CLS. The estimate is used only when it is a curvature at all: κ finite, > 0 and within a factor
    2 of the same difference taken one step over (J(f₀), J(f₀ + hu), J(f₀ + 2hu)); otherwise
    (linear objectives, parameters without values, domain errors) K = 1, the callable's own units.
    For an L1-type objective the "curvature" measured is the density of its kinks near f₀ (the
    built-in L1 uses K = 1/s instead; measured at d = 200, OUE ε = 1, the auto K was 614 against
    165, the same order). ``multiplier=`` a positive number fixes K instead (with ``"auto"`` or a
    number the unit s is ldpopt's default, :func:`default_scale`, unless ``scale=`` is given).

    Checked like the built-ins (:mod:`.verdict`): stationarity and the duality gap with :math:`\nabla J` from
    cvxpy's ``grad`` of the expression at f (:mod:`~ldpopt.problems.check.verdict`); no :math:`\lVert f − f^* \rVert` bound (a
    callable declares no curvature: a :class:`~.structured.SeparableObjective` does, and so does a
    callable recognised as smooth, :class:`~.user_forms.SmoothUserObjective`, from its exact form).

    Parameters
    ----------
    func : callable
        ``func(f, estimate)`` returning a scalar convex cvxpy expression.
    name : str or None, default None
        Its name in the Solution; None: the function's name (``"user"`` for a lambda).
    multiplier : None, "auto" or float, default None
        K as above: None, ldpopt's choice (1, the callable as written, where the cvxpy chain solves
        it; ``"auto"`` for a recognised form); ``"auto"``, measured; or a finite number > 0.

    Raises
    ------
    TypeError
        ``func`` not callable; at :meth:`build`, a result that is not a cvxpy Expression.
    ValueError
        A bad ``multiplier``; at :meth:`build`, an expression that is not scalar.

    Examples
    --------
    >>> import cvxpy as cp
    >>> import numpy as np
    >>> import ldpopt
    >>> from ldpopt.problems import UserObjective
    >>> est = ldpopt.oracles.get("grr", 1.0, 4).estimate(np.array([46_000, 30_000, 15_000, 9_000]), 100_000)
    >>> obj = UserObjective(lambda f, e: cp.sum(cp.abs(f - e.f_tilde)), name="lad")
    >>> sol = ldpopt.Problem(est, obj).solve()
    >>> sol.objective, sol.status, round(sol.optimal_value, 4)
    ('lad', 'optimal', 0.7305)
    """

    #: K where the caller gave none (``multiplier=None``): 1.0, the callable as written, with the unit
    #: s = 1 (``scaled`` False); the recognised forms ldpopt solves on its own routes measure it ("auto")
    default_multiplier: str | float = 1.0
    #: the cvxpy Parameters of the expression, when recognition built it and the objective stays on the
    #: cvxpy chain as written (:func:`~ldpopt.problems.solvers.user_forms.route_objective`; read instead
    #: of building it again)
    _parameters_seen: tuple | None = None

    def __init__(self, func: Callable, name: str | None = None, multiplier=None):
        if not callable(func):
            raise TypeError(f"objective must be a name or a callable, got {type(func).__name__}")
        self.func = func
        fname = getattr(func, "__name__", "user")
        self.name = name or ("user" if fname == "<lambda>" else fname)
        if multiplier is not None and multiplier != "auto" and not (
                isinstance(multiplier, (int, float)) and not isinstance(multiplier, bool)
                and np.isfinite(multiplier) and multiplier > 0):
            raise ValueError(f"multiplier must be None, 'auto' or a finite number > 0, got {multiplier!r}")
        self.multiplier = multiplier
        # as written (K = 1 by default): the solver's unit is f's own too; else ldpopt's (default_scale)
        self.scaled = multiplier is not None or self.default_multiplier != 1.0

    @property
    def as_written_first(self) -> bool:
        """Whether the cvxpy chain's Clarabel is handed this callable in your objective's own unit
        first (the solver's variable f itself, :func:`~ldpopt.problems.solvers.routes.first_unit`),
        then, where it stops without an answer, in ldpopt's unit: where the unit is ldpopt's choice
        (``multiplier=None``) and the chain is ldpopt's (``solve()`` without ``solver=``). A
        recognised form is solved in ldpopt's unit on ldpopt's own routes (its ``Problem.scale``);
        this is the order of the cvxpy chain only.

        Examples
        --------
        >>> from ldpopt.problems import UserObjective
        >>> UserObjective(lambda f, e: f[0]).as_written_first, UserObjective(lambda f, e: f[0], multiplier="auto").as_written_first
        (True, False)
        """
        return self.multiplier is None

    def build(self, f, x, scale, estimate):
        expr = self.func(f, estimate)
        if not isinstance(expr, cp.Expression):
            raise TypeError(f"objective callable must return a cvxpy Expression, got {type(expr).__name__}")
        if expr.size != 1:
            raise ValueError(f"objective callable must return a scalar expression, got shape {expr.shape}")
        expr = cp.reshape(expr, ()) if expr.shape != () else expr
        chosen = self.default_multiplier if self.multiplier is None else self.multiplier
        k = float(chosen) if chosen != "auto" else _auto_multiplier(
            expr, x, scale, estimate.d, _form_total(getattr(self, "form", None)))
        return BuiltObjective(expr if k == 1.0 else k * expr, multiplier=k)

    def __repr__(self):
        return f"UserObjective({self.name!r})"


class NotCompiled(ValueError):
    """The expression holds a node the compiled value does not read (another variable, a Parameter
    without a value, a node that is neither a leaf nor an atom): ask cvxpy's ``.value``."""


def compiled_value(expr, x) -> Callable[[np.ndarray], np.ndarray]:
    """``value(v)``: the value of the cvxpy expression ``expr`` at ``x = v`` (an array of ``x``'s
    size, read in ``x``'s shape, column-major as cvxpy stores it), as ``x.value = v; expr.value``
    gives it, without setting ``x``.

    The same calls in the same order as cvxpy's ``Atom._value_impl``: each atom's ``numeric`` of its
    arguments' values. A subtree without a variable or a Parameter is read once, here (cvxpy reads
    the same constant at every call); a Parameter is read at each call, so a value set later is the
    one used.

    Parameters
    ----------
    expr : cvxpy Expression
        Any expression cvxpy can evaluate, in the one variable ``x``.
    x : cvxpy Variable

    Returns
    -------
    callable
        v ↦ the expression's value (a numpy array or scalar, as cvxpy's ``.value``).

    Raises
    ------
    NotCompiled
        ``expr`` holds another variable, a Parameter without a value, or a node neither a leaf nor an
        atom; raised here, before any point is read.

    Examples
    --------
    >>> import cvxpy as cp
    >>> import numpy as np
    >>> from ldpopt.problems.objectives.base import compiled_value
    >>> x = cp.Variable(3)
    >>> expr = cp.sum_squares(x - 1) + cp.norm1(cp.cumsum(x))
    >>> value = compiled_value(expr, x)
    >>> v = np.array([0.5, -1.0, 2.0])
    >>> x.value = v
    >>> float(value(v)) == float(expr.value)
    True
    """
    return _node(expr, x, x.shape)[0]


def _node(node, x, shape) -> tuple[Callable, bool]:
    """(value function, whether it is a constant read once) of ``node``, its arguments first."""
    from cvxpy.atoms.atom import Atom
    from cvxpy.expressions.constants.parameter import Parameter
    from cvxpy.expressions.leaf import Leaf
    from cvxpy.expressions.variable import Variable

    if node is x:
        return (lambda v: np.reshape(v, shape, order="F")), False
    if isinstance(node, Variable):
        raise NotCompiled(f"the expression holds another variable, {node.name()}")
    if isinstance(node, Parameter):
        if node.value is None:
            raise NotCompiled(f"Parameter {node.name()} has no value")
        return (lambda v, p=node: p.value), False
    if isinstance(node, Leaf):
        value = node.value
        return (lambda v, value=value: value), True
    if not isinstance(node, Atom):
        raise NotCompiled(f"a node that is not an atom: {type(node).__name__}")
    if 0 in node.shape:  # as cvxpy: an empty shape's value is an empty array
        return (lambda v: np.array([])), True
    parts = [_node(a, x, shape) for a in node.args]
    numeric = node.numeric  # type: ignore[attr-defined]  # every concrete atom defines it
    if all(constant for _, constant in parts):
        value = numeric([fn(None) for fn, _ in parts])
        return (lambda v, value=value: value), True
    args = [fn for fn, _ in parts]
    if len(args) == 1:
        only = args[0]
        return (lambda v: numeric([only(v)])), False
    return (lambda v: numeric([a(v) for a in args])), False


def _form_total(form):
    """J(f) in numpy from a recognised form (its smooth part's ``total`` plus its polyhedral terms'
    ``kink_value``), or None when there is none."""
    if form is None or not hasattr(form, "total"):
        return None
    if not getattr(form, "kinks", None):
        return form.total
    return lambda f: form.total(f) + form.kink_value(f)


def _auto_multiplier(expr, x, scale: float, d: int, total=None) -> float:
    """K = 2/(κ s²) from the curvature κ of ``expr`` along the all-ones direction at 1/d (see
    :class:`UserObjective`), capped where that makes J nearly linear (:func:`_slope_capped`); 1.0
    when κ is not a curvature. ``total``: J(f) in numpy where the expression was recognised (its
    form's ``total``, the same J), read at the same points instead of cvxpy's evaluation of the
    expression tree (~0.2 ms each at d = 100); cvxpy's values where it raises, read through
    :func:`compiled_value` (the same values, the tree walked once). Any K > 0 is a valid
    multiplier (the problem is J·K, the duals are divided by it)."""
    h = 1.0 / (4 * d)
    centre = np.full(d, 1.0 / d)
    if total is not None:
        try:
            with np.errstate(all="ignore"):
                total(centre)
            return _measured(lambda f: float(total(f)), centre, h, d, scale)
        except Exception:  # noqa: BLE001, S110 - cvxpy's evaluation below decides
            pass
    try:
        value = compiled_value(expr, x)  # cvxpy's own values, the tree walked once

        return _measured(lambda f: float(value(f / scale)), centre, h, d, scale)
    # whatever cvxpy cannot evaluate at a point raises (parameters without values, ...): K = 1
    except Exception:  # noqa: BLE001 - any failure to evaluate means no curvature to measure
        return 1.0


def _measured(J, centre: np.ndarray, h: float, d: int, scale: float) -> float:
    """K from J (frequency units) at the centre 1/d + t·h·1, t = −1, 0, 1, 2, then capped
    (:func:`_slope_capped`)."""
    with np.errstate(all="ignore"):
        jm, j0, jp, j2 = (J(centre + t * h) for t in (-1.0, 0.0, 1.0, 2.0))
        k = _multiplier_from(jm, j0, jp, j2, d, h, scale)
        return _slope_capped(k, J, centre, h, d, scale)


#: K·s² above which the slope is read too (:func:`_slope_capped`): a user-written CLS has 1, the
#: built-ins 1 to d
NEARLY_LINEAR = 1e3
#: the largest root-mean-square slope per coordinate of x that a capped K leaves (:func:`_slope_capped`)
MAX_SLOPE = 100.0
#: the sign patterns along which :func:`_slope_capped` reads the slope (fixed: the same K every time)
SLOPE_DIRECTIONS = 16


def _slope_capped(k: float, J, centre: np.ndarray, h: float, d: int, scale: float) -> float:
    r"""K at most :data:`MAX_SLOPE` over J's root-mean-square slope per coordinate of x at the
    centre, where the curvature alone gives :math:`K s^2 >` :data:`NEARLY_LINEAR`.

    A nearly linear objective (a linear term plus a faint curvature, e.g. ``c @ f + 1e-3 *
    log_sum_exp(f)``) has a tiny κ, and :math:`2/(κ s^2)` then multiplies its linear part into
    slopes of 10⁷ and more per coordinate of x, where Clarabel fails and the chain falls to SCS
    (measured at d = 100: K = 8·10⁹ failed; K from 1 to 10⁵, slopes up to 3·10³, all solved by
    Clarabel at once). The slope is read from J alone, by central differences along
    :data:`SLOPE_DIRECTIONS` fixed random sign patterns v (entries ±1, from seed 0):
    :math:`D_k = (J(c + h v_k) - J(c - h v_k))/(2h) = \nabla J \cdot v_k` up to :math:`O(h^2)`, and
    :math:`G = \sqrt{\mathrm{mean}_k D_k^2 / d}` estimates the gradient's root-mean-square entry
    (:math:`D_k^2` has expectation :math:`\lVert \nabla J \rVert_2^2` over the signs; for a gradient
    spread over many values :math:`\mathrm{mean}_k D_k^2` is about a :math:`\chi^2_{16}/16` multiple of
    it, so G is within a factor 3 of that entry but for about 4 draws in 10⁶). No gradient is built,
    so any atom cvxpy can evaluate is read the same way (cvxpy's ``grad`` of a long ``cumsum`` is a dense triangle, that of
    ``norm_inf`` raises). The cap leaves :math:`K s G \le 100`, the slope of the built-in CLS where
    the estimate lies 50 units s from the centre; where G is not finite and positive, K is left as
    the curvature gives it."""
    if not (k * scale * scale > NEARLY_LINEAR):
        return k
    signs = np.random.default_rng(0).integers(0, 2, size=(SLOPE_DIRECTIONS, d)) * 2.0 - 1.0
    slopes = np.array([(J(centre + h * v) - J(centre - h * v)) / (2 * h) for v in signs])
    g = float(np.sqrt(np.mean(slopes * slopes) / d))
    return min(k, MAX_SLOPE / (scale * g)) if np.isfinite(g) and g > 0 else k


def _multiplier_from(jm: float, j0: float, jp: float, j2: float, d: int, h: float, scale: float) -> float:
    """K from J at 1/d + t·h, t = −1, 0, 1, 2 (:func:`_auto_multiplier`)."""
    k1 = (jp + jm - 2 * j0) / (d * h * h)
    k2 = (j2 + j0 - 2 * jp) / (d * h * h)
    if not (np.isfinite(k1) and np.isfinite(k2) and k1 > 0 and k2 > 0 and 0.5 <= k2 / k1 <= 2.0):
        return 1.0
    return 2.0 / (k1 * scale * scale)


def default_scale(estimate, floor: bool = True) -> float:
    """The solver's unit s (its variable is x = f/s): ``min(max(σ, 1/d), 1)``, σ of Wang et al. Eq. 7
    (``floor=False``: ``min(σ, 1)``, for the weighted MLE, see below); :func:`unit` of the
    estimate's σ and d.

    Both sides matter (a choice the papers are silent on). x̃ = f̃/s carries noise σ/s and the
    constraints carry the total Σ x = 1/s. With s = σ alone the noise is O(1) but the total is 1/σ,
    ~10⁵–10⁷ once n is large or ε is large (σ ≪ 1/d), and the simplex rows have coefficients
    σ ≤ 1e-5: OSQP then stops at ``user_limit`` or, because its primal-infeasibility test
    ‖Aᵀδy‖ ≤ ε_inf‖δy‖ is met by any multiple of the sum row once its coefficients are below
    ε_inf = 1e-5, certifies the always-feasible simplex "infeasible" (37 of 216
    cases of a CLS grid). With s = max(σ, 1/d) the noise is ≤ 1 per coordinate, the mean
    coordinate ≤ 1 and the total ≤ d; when σ ≥ 1/d (small n, small ε) nothing changes.

    The weighted MLE's cone form divides each residual by its own variance (y_v = 1 + βx_v), which
    is what keeps it well scaled; measured, s = σ passes ldpopt's check where s = 1/d does not
    (OUE, ε = 10, d = 10, n = 10⁹), so it keeps s = σ (``Objective.frequency_floor = False``).

    Never above 1, your objective's own unit: with σ > 1 (an estimate that is noise, n small) x = f/σ
    would be smaller than the frequencies themselves, the total Σ x = 1/σ below 1, and an objective
    made O(1) in curvature there varies by less over the whole set than Clarabel's absolute
    tolerances. Measured on the grammar's families with huge negative estimates (σ = 632 and 6,325):
    at s = σ Clarabel's answers ended ``optimal_unverified`` up to 5.5 % above the optimum (maximum
    entropy under a ``log_sum_exp`` row at d = 10³: J = −6.433 against −6.808), where at s = 1 they
    lay within 1e-6 of plain Clarabel's (benchmarks/results/random_families_summary.md, "The
    solver's unit at most 1").
    """
    return unit(float(estimate.sigma), estimate.d, floor)


def unit(sigma: float, d: int, floor: bool = True) -> float:
    """The solver's unit for noise level ``sigma`` and ``d`` values (:func:`default_scale`):
    ``min(max(sigma, 1/d), 1)`` (``floor=False``: ``min(sigma, 1)``); 1.0 where that is not finite
    and positive.

    Examples
    --------
    >>> from ldpopt.problems.objectives.base import unit
    >>> unit(0.01, 1000), unit(1e-5, 1000), unit(632.0, 1000), unit(1e-5, 1000, floor=False)
    (0.01, 0.001, 1.0, 1e-05)
    """
    s = max(sigma, 1.0 / d) if floor else sigma
    s = min(s, 1.0)
    return s if np.isfinite(s) and s > 0 else 1.0
