"""The registry of post-processing methods: one record per method carrying what ldpopt knows about it.

Notes: docs/notes/python.md, "ldpopt.methods.registry"."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..estimate import Estimate, check_estimate

__all__ = ["FAMILIES", "MethodInfo", "ProblemStatement", "available", "get", "names", "parameters",
           "postprocess", "register", "resolve", "unregister"]

#: the families a method may declare (``None``: not declared, e.g. a plain callable)
FAMILIES = ("closed-form", "fitted", "iterative")


@dataclass(frozen=True)
class ProblemStatement:
    """The convex problem a method claims to solve, as the problem layer states it.

    ``name``: the problem's short name (the claim is ``"<method>=<name>"``, e.g. ``"norm-sub=cls"``);
    ``statement``: one sentence with its source (paper, section, equation); ``build(estimate)`` →
    a dict with ``objective`` (a name :class:`ldpopt.problems.Problem` accepts, e.g. ``"cls"``,
    ``"weighted-mle"``, ``"multinomial"``) and optionally ``mean`` (the objective's centre where it
    has one, e.g. the posterior mean of ``"posterior"``), ``closed`` (the method's answer when it is
    cheaper from ``mean`` than from a second call), ``extra`` (numbers recorded with the claim) and
    ``constraints`` (None: the probability simplex).

    Parameters
    ----------
    name : str
        Short name of the problem (the part after ``=`` in the claim).
    statement : str
        One sentence stating the claim, with its source.
    build : callable
        ``build(estimate) -> dict`` as above.

    Examples
    --------
    >>> from ldpopt import methods
    >>> claim = methods.get("norm-sub").problem
    >>> claim.name
    'cls'
    >>> claim.statement[:28]
    'Norm-Sub is the CLS solution'
    """

    name: str
    statement: str
    build: Callable[[Estimate], dict] = field(repr=False)

    @staticmethod
    def fixed(name: str, statement: str, objective: str, constraints=None) -> ProblemStatement:
        """A statement whose objective does not depend on the estimate (``objective`` on the simplex
        when ``constraints`` is None).

        Parameters
        ----------
        name : str
            Short name of the problem.
        statement : str
            The claim in one sentence, with its source.
        objective : str
            An objective name :class:`ldpopt.problems.Problem` accepts (``"cls"``, ...).
        constraints : optional
            The constraints passed to the problem; None (default) is the probability simplex.

        Returns
        -------
        ProblemStatement
            Whose ``build`` returns ``{"objective": objective, "constraints": constraints}`` for any
            estimate.

        Examples
        --------
        >>> from ldpopt.methods import ProblemStatement
        >>> ps = ProblemStatement.fixed("cls", "the Euclidean projection onto the simplex", "cls")
        >>> ps.build(None)
        {'objective': 'cls', 'constraints': None}
        """
        return ProblemStatement(name, statement, lambda est: {"objective": objective, "constraints": constraints})


@dataclass(frozen=True)
class MethodInfo:
    r"""What ldpopt knows about a method (module notes).

    ``non_negative`` / ``sums_to_one``: ``"yes"``, ``"no"`` or ``"almost"`` (Table 1's wording;
    ``"almost"`` comes with ``notes`` saying exactly when the property fails).
    ``order_preserving``: ``"yes"``, ``"no"`` or ``"weak"`` (ties may be created: :math:`\tilde f_a < \tilde f_b` only
    gives :math:`f'_a \le f'_b`), with ``notes`` giving the counterexample where it is not ``"yes"``.
    Records are made by :func:`register` (or by :func:`resolve` for a plain callable, with
    ``declared=False``); calling a record runs the method (:func:`postprocess`).

    Parameters
    ----------
    name : str
        Registry name (lower-case).
    func : callable
        The method ``func(estimate, **params) -> ndarray``.
    description, complexity, reference, notes : str
        Table-1 texts (``notes`` default ""); formulas in them are MyST maths, ``$...$``, which the
        method pages typeset.
    non_negative, sums_to_one, order_preserving : str
        Table-1 properties, see above.
    label : str, default ""
        Display name; the empty default becomes ``name``.
    family : {"closed-form", "fitted", "iterative"} or None
        See :data:`FAMILIES`.
    applies, batched, prepare_batch, pivot_scale : callable or None
        Optional capabilities (module notes).
    problem : ProblemStatement or None
        The convex problem the method claims to solve.
    linear : Centring or None, default None
        The method's linear form (:class:`ldpopt.methods.linear.Centring`): a linear method declares
        it, and the exact analytic intervals follow from it (:attr:`analytic`).
    variant_of : str or None
        Name of the method whose answer this one computes another way.
    derived_from : tuple or None
        ``(method, g)``: the output is ``g`` of that method's output.
    needs_order : bool, default False
        The method assumes an ordered domain (:attr:`ldpopt.Estimate.ordered`).
    declared : bool, default True
        False for a record wrapping a plain callable (nothing declared).
    param_examples : mapping, default {}
        One value per keyword parameter, other than its default where it has one: what the tests
        and the command line's checks pass to reach every parameter.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt import methods, oracles
    >>> info = methods.get("norm-sub")
    >>> info.label, info.family, info.sums_to_one
    ('Norm-Sub', 'closed-form', 'yes')
    >>> est = oracles.get("grr", 1.0, 4).estimate(np.array([46_000, 30_000, 15_000, 9_000]), 100_000)
    >>> info(est).round(4)
    array([0.7662, 0.2338, 0.    , 0.    ])
    """

    name: str
    func: Callable[..., np.ndarray] = field(repr=False)
    description: str
    non_negative: str
    sums_to_one: str
    order_preserving: str
    complexity: str
    reference: str
    notes: str = ""
    label: str = ""
    family: str | None = None
    applies: Callable[..., str | None] | None = field(default=None, repr=False)
    batched: Callable[..., np.ndarray] | None = field(default=None, repr=False)
    prepare_batch: Callable[[list, dict], None] | None = field(default=None, repr=False)
    problem: ProblemStatement | None = field(default=None, repr=False)
    linear: Any = field(default=None, repr=False)
    variant_of: str | None = None
    pivot_scale: Callable[[np.ndarray], np.ndarray] | None = field(default=None, repr=False)
    derived_from: tuple | None = field(default=None, repr=False)
    declared: bool = True
    needs_order: bool = False
    param_examples: Mapping[str, Any] = field(default_factory=dict, repr=False)

    def __post_init__(self):
        if not self.label:
            object.__setattr__(self, "label", self.name)

    @property
    def analytic(self) -> bool:
        """Whether exact analytic intervals exist: the method declared its linear form.

        Examples
        --------
        >>> from ldpopt import methods
        >>> methods.get("norm").analytic, methods.get("norm-sub").analytic
        (True, False)
        """
        return self.linear is not None

    def why_not(self, estimate: Estimate, **params) -> str | None:
        """``None`` when the method (with ``params``) applies to ``estimate``, else the method's
        one-line reason.

        Parameters
        ----------
        estimate : Estimate
            The raw estimate the method would run on.
        **params
            The keyword parameters the method would get.

        Returns
        -------
        str or None
            None for a method without an ``applies`` test.

        Examples
        --------
        >>> from ldpopt import Estimate, methods
        >>> est = Estimate.from_frequencies([0.6, 0.4], 100, epsilon=1.0, p=1.0, q=0.0)
        >>> methods.get("norm-sub").why_not(est) is None
        True
        >>> methods.get("mle-apx").why_not(est)[:30]
        'MLE-Apx needs 0 < q and p < 1 '
        """
        if self.needs_order and not getattr(estimate, "ordered", False):
            return (f"{self.label} assumes an ordered domain; declare one (ordered=True, Estimate.as_ordered, "
                    f"or --ordered on the command line) if the values' order is meaningful")
        return None if self.applies is None else self.applies(estimate, **params)

    def __call__(self, estimate: Estimate, /, **params) -> np.ndarray:
        """The method on ``estimate`` (:func:`postprocess`)."""
        return postprocess(estimate, self, **params)


_METHODS: dict[str, MethodInfo] = {}
_TRI = {"yes", "no", "almost", "weak"}


def _check_record(name, family, non_negative, sums_to_one, order_preserving) -> None:
    if not isinstance(name, str) or not name or name != name.strip():
        raise ValueError(f"name must be a non-empty string without surrounding spaces, got {name!r}")
    for label, value in (("non_negative", non_negative), ("sums_to_one", sums_to_one),
                         ("order_preserving", order_preserving)):
        if value not in _TRI:
            raise ValueError(f"{label} must be one of {sorted(_TRI)}, got {value!r}")
    if family is not None and family not in FAMILIES:
        raise ValueError(f"family must be one of {list(FAMILIES)} or None, got {family!r}")


def register(name: str, *, description: str, non_negative: str, sums_to_one: str,
             order_preserving: str, complexity: str, reference: str, notes: str = "", label: str = "",
             family: str | None = None, applies=None, batched=None, prepare_batch=None,
             problem: ProblemStatement | None = None, linear=None, variant_of: str | None = None,
             pivot_scale=None, derived_from: tuple | None = None, needs_order: bool = False,
             param_examples: Mapping[str, Any] | None = None):
    """Decorator adding a method to the registry under ``name`` (lower-case, e.g. ``"norm-sub"``),
    with its Table-1 metadata and optional capabilities (module notes). Returns the function
    unchanged.

    Parameters
    ----------
    name : str
        Registry name, non-empty without surrounding spaces; stored lower-case.
    description, complexity, reference : str
        Table-1 texts (:func:`available`); write a formula as MyST maths, ``$...$``, which the method
        pages typeset.
    non_negative, sums_to_one, order_preserving : {"yes", "no", "almost", "weak"}
        Table-1 properties (:class:`MethodInfo`).
    notes : str, default ""
        When a property fails, exactly.
    label : str, default ""
        Display name (default: ``name``).
    family : {"closed-form", "fitted", "iterative"} or None, default None
    applies, batched, prepare_batch, pivot_scale : callable or None, default None
        Optional capabilities (module notes).
    problem : ProblemStatement or None, default None
        The convex problem the method claims to solve.
    linear : Centring or None, default None
        The method's linear form, from which its exact analytic intervals follow (:class:`MethodInfo`).
    variant_of : str or None, default None
        The registered method whose answer this one computes another way.
    derived_from : tuple or None, default None
        ``(method, g)``: the output is ``g`` of that method's output.
    needs_order : bool, default False
        The method assumes an ordered domain (:class:`MethodInfo`).
    param_examples : mapping or None, default None
        A value per keyword parameter (:class:`MethodInfo`).

    Returns
    -------
    callable
        The decorator; applied to ``func(estimate, **params)`` it registers and returns ``func``.

    Raises
    ------
    ValueError
        If ``name`` is empty or padded, a property or ``family`` is not an accepted value, or the
        name is already registered (when the decorator is applied).
    TypeError
        If ``problem`` is not a :class:`ProblemStatement`, or the decorated object is not a function
        of one required positional argument.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt import methods, oracles, postprocess
    >>> @methods.register("halfway", description="halfway between f~ and Norm-Sub", non_negative="no",
    ...                   sums_to_one="yes", order_preserving="yes", complexity="O(d)", reference="none")
    ... def halfway(est):
    ...     return 0.5 * est.f_tilde + 0.5 * postprocess(est, "norm-sub")
    >>> est = oracles.get("grr", 1.0, 4).estimate(np.array([46_000, 30_000, 15_000, 9_000]), 100_000)
    >>> postprocess(est, "halfway").round(4)
    array([ 0.8575,  0.3251, -0.0414, -0.1412])
    >>> methods.unregister("halfway")
    """
    _check_record(name, family, non_negative, sums_to_one, order_preserving)
    if problem is not None and not isinstance(problem, ProblemStatement):
        raise TypeError(f"problem must be a ProblemStatement, got {type(problem).__name__}")

    def deco(func):
        _check_signature(func, f"method {name!r}")
        if name.lower() in _METHODS:
            raise ValueError(f"method {name!r} is registered twice")
        _METHODS[name.lower()] = MethodInfo(name.lower(), func, description, non_negative, sums_to_one,
                                            order_preserving, complexity, reference, notes, label, family,
                                            applies, batched, prepare_batch, problem, linear, variant_of,
                                            pivot_scale, derived_from, needs_order=bool(needs_order),
                                            param_examples=dict(param_examples or {}))
        return func

    return deco


def unregister(name: str) -> None:
    """Remove a registered method (a notebook cell run twice, a test's toy method).

    Parameters
    ----------
    name : str or MethodInfo
        What :func:`get` accepts.

    Raises
    ------
    ValueError
        If no such method is registered.

    Examples
    --------
    >>> from ldpopt import methods
    >>> ident = methods.register("ident", description="f~ itself", non_negative="no", sums_to_one="no",
    ...                          order_preserving="yes", complexity="O(d)", reference="none")(lambda est: est.f_tilde)
    >>> "ident" in methods.names()
    True
    >>> methods.unregister("ident")
    >>> "ident" in methods.names()
    False
    """
    _METHODS.pop(get(name).name)


def _check_signature(func, where: str) -> None:
    """``func`` must take the estimate as its one required positional argument."""
    if not callable(func):
        raise TypeError(f"{where}: a method is a function f(estimate, **params), got a {type(func).__name__}")
    try:
        sig = inspect.signature(func)
    except (TypeError, ValueError):
        return  # a builtin without a signature: called as it is
    pos = [p for p in sig.parameters.values()
           if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.VAR_POSITIONAL)]
    required = [p for p in pos if p.default is p.empty and p.kind != p.VAR_POSITIONAL]
    if not pos or len(required) > 1:
        raise TypeError(f"{where}: a method is a function f(estimate, **params) with one required "
                        f"positional argument, got {getattr(func, '__name__', func)}{sig}")


def names(family: str | None = None, *, variants: bool = True) -> list[str]:
    """Registered method names in registration order; ``family``: only that family; ``variants=False``
    leaves out the methods that are another method's answer computed another way (``variant_of``).

    Parameters
    ----------
    family : {"closed-form", "fitted", "iterative"} or None, default None
        Keep only the methods of this family (None: all).
    variants : bool, default True
        Include the methods that declare ``variant_of``.

    Returns
    -------
    list of str

    Raises
    ------
    ValueError
        If ``family`` is not one of :data:`FAMILIES`.

    Examples
    --------
    >>> from ldpopt import methods
    >>> methods.names()[:4]
    ['base', 'base-pos', 'base-cut', 'norm']
    >>> methods.names("iterative")
    ['mle-apx-paper', 'em']
    """
    if family is not None and family not in FAMILIES:
        raise ValueError(f"family must be one of {list(FAMILIES)}, got {family!r}")
    return [m.name for m in _METHODS.values()
            if (family is None or m.family == family) and (variants or m.variant_of is None)]


def get(name) -> MethodInfo:
    """The :class:`MethodInfo` registered as ``name`` (a record or a callable: :func:`resolve`).

    Parameters
    ----------
    name : str, MethodInfo, callable or "FILE.py:NAME"
        A registered name (any case), or anything :func:`resolve` accepts.

    Returns
    -------
    MethodInfo

    Raises
    ------
    ValueError
        If a string is neither a registered name nor a file reference (the message lists the names).

    Examples
    --------
    >>> from ldpopt import methods
    >>> methods.get("Norm-Cut").name
    'norm-cut'
    >>> methods.get("norm-cutt")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: method must be one of [...], got 'norm-cutt'
    """
    if isinstance(name, str) and name.lower() in _METHODS:
        return _METHODS[name.lower()]
    if isinstance(name, str) and not _is_file_reference(name):
        raise ValueError(f"method must be one of {sorted(_METHODS)}, got {name!r}")
    return resolve(name)


def _is_file_reference(spec: str) -> bool:
    from .._userfunc import is_reference

    return is_reference(spec)


def _wrap(func, name: str | None = None) -> MethodInfo:
    """A record for a plain callable: nothing declared beyond its name and its own docstring."""
    for info in _METHODS.values():
        if info.func is func:
            return info
    shown: str = name if name else getattr(func, "__name__", type(func).__name__)
    doc = (inspect.getdoc(func) or "").split("\n\n")[0].replace("\n", " ")
    return MethodInfo(shown, func, doc or "a function of the user's own", "no", "no", "no", "not declared",
                      "not declared", declared=False)


def resolve(spec, *, base=None, where: str = "method") -> MethodInfo:
    """The method ``spec`` names, as a :class:`MethodInfo`: a registered name (any case), a record,
    a callable ``f(estimate, **params)`` (a registered function gives its record; any other is
    wrapped, nothing declared), or ``"FILE.py:NAME"`` / ``"MODULE:NAME"`` (FILE relative to ``base``,
    default the current directory; NAME a registered record, a function registered by decorator in
    the file, or a plain function, which is then registered under NAME with nothing declared, so that
    every feature keyed by name finds it). ``where`` names the argument in every error (one line). A
    plain callable passed as an object is wrapped, not registered.

    Parameters
    ----------
    spec : str, MethodInfo or callable
        The method, as above.
    base : path-like or None, default None
        Directory a relative ``FILE.py`` is read from (None: the current directory).
    where : str, default "method"
        Name of the argument, at the head of every error message.

    Returns
    -------
    MethodInfo
        ``declared=False`` for a wrapped plain function.

    Raises
    ------
    ValueError
        If a name is unknown, a function does not take one required positional argument, or a file's
        NAME clashes with another registered method.
    TypeError
        If ``spec`` is none of the accepted kinds, or ``"FILE:NAME"`` names something not callable.

    Examples
    --------
    >>> from ldpopt import methods
    >>> methods.resolve("NORM-SUB").name
    'norm-sub'
    >>> def clip(est):
    ...     return est.f_tilde.clip(0, None)
    >>> info = methods.resolve(clip)
    >>> info.name, info.declared
    ('clip', False)
    """
    from .._userfunc import is_reference, load_attribute, plugins_from_env

    if isinstance(spec, MethodInfo):
        return spec
    if isinstance(spec, str):
        if spec.lower() in _METHODS:
            return _METHODS[spec.lower()]
        if not is_reference(spec) and plugins_from_env() and spec.lower() in _METHODS:  # ldpopt --plugin
            return _METHODS[spec.lower()]
        if not is_reference(spec):
            raise ValueError(f"{where}: method must be one of {sorted(_METHODS)}, a function, or "
                             f"FILE.py:NAME, got {spec!r}")
        obj = load_attribute(spec, base, where)
        if isinstance(obj, MethodInfo):
            return obj
        if not callable(obj):
            raise TypeError(f"{where}: {spec} is a {type(obj).__name__}, not a function")
        _check_signature_as(obj, f"{where}: {spec}")
        info = _wrap(obj, spec.rpartition(":")[2])
        if not info.declared:  # a plain function from a file: registered under its name, so every
            # feature that keys by name (experiment tables, --param, choose's ranking) finds it
            held = _METHODS.get(info.name)
            if held is not None and held.func is not obj:
                raise ValueError(f"{where}: {spec}: another method is already registered as {info.name!r}")
            info = _METHODS.setdefault(info.name, info)
        return info
    if callable(spec):
        _check_signature_as(spec, where)
        return _wrap(spec)
    raise TypeError(f"{where}: a method is a registered name, a function or FILE.py:NAME, "
                    f"got {type(spec).__name__}")


def _check_signature_as(func, where: str) -> None:
    try:
        _check_signature(func, where)
    except TypeError as exc:
        raise ValueError(str(exc)) from None


def available():
    """All registered methods with their Table-1 metadata, label and family, as a pandas DataFrame
    indexed by name (a :class:`~ldpopt._table.WholeTable`: ``print`` shows every column and every
    note whole).

    Returns
    -------
    pandas.DataFrame
        One row per method, sorted by name; columns ``label``, ``family``, ``description``,
        ``non_negative``, ``sums_to_one``, ``order_preserving``, ``complexity``, ``reference``,
        ``notes``.

    Examples
    --------
    >>> from ldpopt import methods
    >>> table = methods.available()
    >>> table.loc["norm-sub", ["non_negative", "sums_to_one", "order_preserving"]].tolist()
    ['yes', 'yes', 'weak']
    """
    from .._table import WholeTable

    columns = ["name", "label", "family", "description", "non_negative", "sums_to_one", "order_preserving",
               "complexity", "reference", "notes"]
    rows = [{c: getattr(info, c) for c in columns} for info in _METHODS.values()]
    return WholeTable(rows, columns=columns).set_index("name").sort_index()


def parameters(name) -> dict[str, inspect.Parameter]:
    """The keyword parameters of method ``name`` (everything after the estimate), by name.

    Parameters
    ----------
    name : str, MethodInfo or callable
        What :func:`get` accepts.

    Returns
    -------
    dict of str to inspect.Parameter
        Positional-or-keyword and keyword-only parameters after the first, in signature order.

    Raises
    ------
    ValueError
        If the method is unknown.

    Examples
    --------
    >>> from ldpopt import methods
    >>> methods.parameters("base-cut")["alpha"].default
    2.0
    >>> methods.parameters("norm-sub")
    {}
    """
    sig = inspect.signature(get(name).func)
    return {k: v for k, v in list(sig.parameters.items())[1:]
            if v.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)}


def postprocess(estimate: Estimate, method, /, **params) -> np.ndarray:
    """Run ``method`` (a registered name, a record, a callable or ``"FILE.py:NAME"``: :func:`resolve`)
    on ``estimate`` and return the post-processed frequencies.

    ``estimate`` and ``method`` are positional-only, so every keyword in ``params`` goes to the
    method, including parameters that are themselves called ``method`` (MLE-Apx's
    ``method="brentq"``, EM's ``method="iterative"``) or ``estimate``. A keyword the method does
    not have is a ``TypeError`` naming it and listing the method's parameters (:func:`parameters`).
    A method that does not apply to the estimate (:meth:`MethodInfo.why_not`) is a ``ValueError``
    with its reason; an output that is not a finite float vector of length d is a ``ValueError``.

    Parameters
    ----------
    estimate : Estimate
        The raw estimate (positional only).
    method : str, MethodInfo, callable or "FILE.py:NAME"
        The method (positional only), see :func:`resolve` and :func:`names`.
    **params
        The method's keyword parameters (:func:`parameters`).

    Returns
    -------
    ndarray, shape (d,)
        The post-processed frequencies (float64).

    Raises
    ------
    TypeError
        If ``estimate`` is not an :class:`~ldpopt.Estimate` or a keyword is not a parameter of the
        method.
    ValueError
        If the method is unknown or does not apply, or a user function returns something that is not
        a finite vector of length d.
    ldpopt._userfunc.UserCodeError
        If a user's function (``declared=False``) raises; the original is chained.

    Examples
    --------
    >>> import numpy as np
    >>> import ldpopt
    >>> est = ldpopt.oracles.get("grr", 1.0, 4).estimate(np.array([46_000, 30_000, 15_000, 9_000]), 100_000)
    >>> est.f_tilde.round(4)
    array([ 0.9489,  0.4164, -0.0828, -0.2825])
    >>> ldpopt.postprocess(est, "norm-sub").round(4)
    array([0.7662, 0.2338, 0.    , 0.    ])
    """
    est = check_estimate(estimate)
    info = resolve(method)
    known = parameters(info)
    takes_any = any(p.kind == p.VAR_KEYWORD for p in inspect.signature(info.func).parameters.values())
    unknown = [k for k in params if k not in known]
    if unknown and not takes_any:
        raise TypeError(f"method {info.name!r} has no parameter {unknown[0]!r}; "
                        f"its parameters are {sorted(known)}")
    why = info.why_not(est, **params)
    if why is not None:
        raise ValueError(f"method {info.name!r} does not apply to this estimate: {why}")
    if info.declared:
        return info.func(est, **params)
    from .._userfunc import UserCodeError

    try:
        out = info.func(est, **params)
    except Exception as exc:  # the user's code: one line naming it, their traceback chained
        raise UserCodeError(f"method {info.name!r} raised {type(exc).__name__}: {exc}") from exc
    return _checked_output(out, est, info.name)


def _checked_output(out, est: Estimate, name: str) -> np.ndarray:
    """A user function's output as float64 (d,), refused if it is not one (a silent wrong shape would
    broadcast in every metric)."""
    try:
        arr = np.asarray(out, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"method {name!r} returned {type(out).__name__}, not a frequency vector ({exc})") from None
    if arr.shape != (est.d,):
        raise ValueError(f"method {name!r} returned shape {arr.shape}, expected ({est.d},)")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"method {name!r} returned non-finite values")
    return arr
