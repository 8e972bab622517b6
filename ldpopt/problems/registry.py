"""The registries of objectives and constraint types: an item defined in one module, registered
with :func:`register_objective` / :func:`register_constraint`, appears wherever the built-ins of its
kind do — ``Problem(est, "my-name")``, :func:`available_objectives` / :func:`available_constraints`,
problem files (``objective = "my-name"``, ``[[constraints]] type = "my-type"`` with the keys its
:class:`Kind` declares), ``ldpopt solve --problem`` and its generated ``--help``.
Notes: docs/notes/problems.md, "ldpopt.problems.registry".
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["FileEntry", "Kind", "ValueKey", "available_constraints", "available_objectives", "constraint_type",
           "constraint_types", "file_objectives", "objective_factory", "register_constraint", "register_objective",
           "unregister"]

_OBJECTIVES: dict[str, Any] = {}    # name → Objective subclass or instance
_CONSTRAINTS: dict[str, Any] = {}  # file type → Constraint subclass with file_kind and from_file
#: what an Objective has (objectives/base.py): the methods register_objective looks for
_OBJECTIVE_METHODS = ("build", "value", "gradient", "check", "per_value", "likelihood_terms")


@dataclass(frozen=True)
class ValueKey:
    """A problem-file key naming values, in its two spellings: ``labels`` or ``positions`` (shape
    ``list``, ``pairs`` ([[a, b], …]), ``parent`` ([[parent, [children…]], …]) or ``table``
    ({name = [values…]})); ``required``: an entry must give one of the two.

    Parameters
    ----------
    label : str
        The key naming values by their labels.
    position : str
        The key naming values by their 0-based positions.
    shape : {"list", "pairs", "parent", "table"}
        How the values are arranged.
    required : bool
        Whether an entry must give one of the two keys.

    Examples
    --------
    >>> from ldpopt.problems.registry import Kind, ValueKey
    >>> key = ValueKey("labels", "positions", "list", True)
    >>> sorted(Kind("values to bound", values=(key,)).keys())
    ['labels', 'positions', 'type']
    """

    label: str
    position: str
    shape: str
    required: bool


#: the common value family: the values a constraint is over, a list
VALUES = ValueKey("labels", "positions", "list", True)


@dataclass(frozen=True)
class Kind:
    """What a problem-file entry of one constraint type says: ``doc`` (one line, for ``ldpopt solve
    --help`` and docs/cli.md), the ``required`` and ``optional`` keys, and the value-key families
    (:class:`ValueKey`, at most one spelling of each).

    Parameters
    ----------
    doc : str
        One line naming what the entry states.
    required, optional : tuple of str, default ()
        The keys an entry must / may give.
    values : tuple of ValueKey, default ()
        The value-key families.

    Examples
    --------
    >>> from ldpopt.problems import Box
    >>> Box.file_kind.required, Box.file_kind.optional
    ((), ('lower', 'upper'))
    """

    doc: str
    required: tuple = ()
    optional: tuple = ()
    values: tuple = ()

    def keys(self) -> set:
        """Every key an entry of this type may give (``type`` included).

        Returns
        -------
        set of str

        Examples
        --------
        >>> from ldpopt.problems import Box
        >>> sorted(Box.file_kind.keys())
        ['lower', 'type', 'upper']
        """
        out = {"type", *self.required, *self.optional}
        for v in self.values:
            out |= {v.label, v.position}
        return out


class FileEntry:
    """One ``[[constraints]]`` entry as its type's ``from_file`` receives it: ``entry`` (the keys as
    written), ``d`` (rows of the counts file), ``named`` (one per :attr:`Kind.values` family: the
    0-based rows the entry names, or None when it gives neither spelling), ``base`` (the problem
    file's folder), ``where(key)`` (the location prefix of a message) and ``error`` (the exception
    class a one-line message is raised as).

    Parameters
    ----------
    entry : dict
        The entry's keys as written.
    d : int
        The rows of the counts file (the domain size).
    named : list
        One per value-key family: the 0-based rows the entry names, or None.
    base : pathlib.Path
        The problem file's folder.
    where : callable
        ``where(key)``: the location prefix of a message about ``key``.
    error : type
        The exception class its one-line messages are raised as.

    Examples
    --------
    >>> from pathlib import Path
    >>> from ldpopt.problems.registry import FileEntry
    >>> entry = FileEntry({"type": "sum", "total": 0.5}, 4, [], Path("."), lambda key: "", ValueError)
    >>> "total" in entry, entry.get("total"), entry.d
    (True, 0.5, 4)
    """

    def __init__(self, entry: dict, d: int, named: list, base: Path, where: Callable[[str], str], error: type):
        self.entry, self.d, self.named, self.base, self.where, self.error = entry, d, named, base, where, error

    def __contains__(self, key: str) -> bool:
        return key in self.entry

    def get(self, key: str, default=None):
        """The entry's ``key`` as written, or ``default``.

        Parameters
        ----------
        key : str
            The key.
        default : object, default None
            What an absent key gives.

        Returns
        -------
        object

        Examples
        --------
        >>> from pathlib import Path
        >>> from ldpopt.problems.registry import FileEntry
        >>> entry = FileEntry({"type": "box", "upper": 0.5}, 4, [], Path("."), lambda key: "", ValueError)
        >>> entry.get("upper"), entry.get("lower", 0.0)
        (0.5, 0.0)
        """
        return self.entry.get(key, default)

    def number(self, key: str, default=None, *, per_value: bool = False):
        """The entry's ``key`` as a float (``per_value``: or a list of numbers, as an array); ``default``
        when absent (None: the key is required).

        Parameters
        ----------
        key : str
            The key.
        default : float or None, default None
            The value of an absent key; None: the key is required.
        per_value : bool, default False
            Accept a non-empty list of numbers too (returned as an array).

        Returns
        -------
        float or ndarray

        Raises
        ------
        Exception
            ``error`` (the entry's exception class): not a number (or list of numbers), or absent
            without a default.

        Examples
        --------
        >>> from pathlib import Path
        >>> from ldpopt.problems.registry import FileEntry
        >>> entry = FileEntry({"type": "box", "upper": [0.5, 0.2]}, 2, [], Path("."), lambda key: "", ValueError)
        >>> entry.number("upper", per_value=True), entry.number("lower", 0.0)
        (array([0.5, 0.2]), 0.0)
        >>> entry.number("upper")
        Traceback (most recent call last):
        ...
        ValueError: upper must be a number, got [0.5, 0.2]
        """
        x = self.entry.get(key, default)
        ok = lambda v: isinstance(v, (int, float)) and not isinstance(v, bool)
        if ok(x):
            return float(x)
        if per_value and isinstance(x, list) and x and all(ok(v) for v in x):
            return np.asarray(x, dtype=np.float64)
        raise self.error(f"{key} must be a number{' or a list of numbers' if per_value else ''}, got {x!r}")


def _key_of(item, attr: str, what: str) -> str:
    key = getattr(item, attr, None)
    if not isinstance(key, str) or not key:
        raise ValueError(f"a registered {what} needs a non-empty string {attr}, got {key!r}")
    return key


def _put(table: dict, key: str, item, what: str) -> None:
    old = table.get(key)
    same = old is item or (isinstance(old, type) and isinstance(item, type) and old.__qualname__ == item.__qualname__
                           and old.__module__ == item.__module__)
    if old is not None and not same:
        raise ValueError(f"{what} {key!r} is already registered ({old!r})")
    table[key] = item


def register_objective(item=None, *, name: str | None = None):
    """Register an objective: an :class:`~ldpopt.problems.Objective` subclass (made with no arguments
    when named) or an instance, under ``name`` (default: its ``name``). Usable as a decorator
    (``@register_objective`` or ``@register_objective(name="...")``); returns the item.

    Parameters
    ----------
    item : Objective subclass or instance, optional
        What to register; omitted: a decorator is returned.
    name : str or None, default None
        The lower-case name to register it under; None: its ``name`` attribute.

    Returns
    -------
    Objective subclass or instance, or a decorator
        ``item`` itself (so the class stays usable), or the decorator when ``item`` is None.

    Raises
    ------
    TypeError
        ``item`` is not an Objective subclass or instance.
    ValueError
        A name that is empty or not lower-case, or already registered with another item.

    Examples
    --------
    >>> import cvxpy as cp
    >>> import numpy as np
    >>> import ldpopt
    >>> from ldpopt.problems import BuiltObjective, Objective, available_objectives, register_objective
    >>> from ldpopt.problems.registry import unregister
    >>> @register_objective
    ... class Squares(Objective):
    ...     name = "my-squares"
    ...     def build(self, f, x, scale, estimate):
    ...         return BuiltObjective(cp.sum_squares(f - estimate.f_tilde))
    >>> est = ldpopt.oracles.get("grr", 1.0, 4).estimate(np.array([46_000, 30_000, 15_000, 9_000]), 100_000)
    >>> "my-squares" in available_objectives(), ldpopt.Problem(est, "my-squares").solve().f.round(4)
    (True, array([0.7662, 0.2338, 0.    , 0.    ]))
    >>> unregister("objective", "my-squares")
    """
    def deco(obj):
        # an Objective subclass or instance, read by what it has (as register_constraint reads a
        # Constraint): objectives/ registers its own classes with this, so this module, one floor
        # below the items, imports nothing of theirs
        if not all(callable(getattr(obj, a, None)) for a in _OBJECTIVE_METHODS):
            raise TypeError(f"register_objective takes an Objective subclass or instance, got {obj!r}")
        key = name if name is not None else _key_of(obj, "name", "objective")
        if not isinstance(key, str) or not key or key != key.lower():
            raise ValueError(f"name must be a non-empty lower-case string, got {key!r}")
        _put(_OBJECTIVES, key, obj, "objective")
        return obj
    return deco if item is None else deco(item)


def register_constraint(cls):
    """Register a constraint type (decorator on a :class:`~ldpopt.problems.Constraint` subclass) under
    its ``file_type``, with its ``file_kind`` (:class:`Kind`) and its ``from_file(entry: FileEntry) ->
    list of constraints`` classmethod. Returns the class.

    Parameters
    ----------
    cls : type
        The Constraint subclass, with ``file_type``, ``file_kind`` and ``from_file``.

    Returns
    -------
    type
        ``cls`` itself.

    Raises
    ------
    TypeError
        Not a Constraint subclass, no ``file_kind = Kind(...)`` or no ``from_file``.
    ValueError
        No ``file_type``, or that type already registered with another class.

    Examples
    --------
    >>> import cvxpy as cp
    >>> from ldpopt.problems import Constraint, available_constraints, register_constraint
    >>> from ldpopt.problems.registry import Kind, unregister
    >>> @register_constraint
    ... class FirstAtMost(Constraint):
    ...     file_type = "first_at_most"
    ...     file_kind = Kind("f_0 <= value", ("value",))
    ...     def __init__(self, value):
    ...         super().__init__("first_at_most")
    ...         self.value = value
    ...     @classmethod
    ...     def from_file(cls, entry):
    ...         return [cls(entry.number("value"))]
    ...     def build(self, f, estimate):
    ...         return [(self.name, f[0] <= self.value)]
    >>> "first_at_most" in available_constraints()
    True
    >>> unregister("constraint", "first_at_most")
    """
    # a Constraint subclass (read by what it has: constraints/base.py registers its own classes with this)
    if not (isinstance(cls, type) and all(callable(getattr(cls, a, None)) for a in ("build", "compile_into"))):
        raise TypeError(f"register_constraint takes a Constraint subclass, got {cls!r}")
    key = _key_of(cls, "file_type", "constraint")
    if not isinstance(getattr(cls, "file_kind", None), Kind):
        raise TypeError(f"constraint type {key!r} needs file_kind = Kind(...) (the keys a problem file gives)")
    if not callable(getattr(cls, "from_file", None)):
        raise TypeError(f"constraint type {key!r} needs a from_file(entry) classmethod")
    _put(_CONSTRAINTS, key, cls, "constraint type")
    return cls


def unregister(kind: str, name: str) -> None:
    """Remove the ``kind`` (``"objective"`` or ``"constraint"``) registered under ``name`` (tests).

    Parameters
    ----------
    kind : {"objective", "constraint"}
        Which registry.
    name : str
        The name (objective) or file type (constraint); an unknown one is ignored.

    Raises
    ------
    ValueError
        An unknown ``kind``.

    Examples
    --------
    >>> from ldpopt.problems import available_objectives, register_objective
    >>> from ldpopt.problems.objectives.builtins import LeastSquares
    >>> from ldpopt.problems.registry import unregister
    >>> _ = register_objective(LeastSquares(), name="cls-again")
    >>> unregister("objective", "cls-again")
    >>> "cls-again" in available_objectives()
    False
    """
    table = {"objective": _OBJECTIVES, "constraint": _CONSTRAINTS}.get(kind)
    if table is None:
        raise ValueError(f"kind must be 'objective' or 'constraint', got {kind!r}")
    table.pop(name, None)


def available_objectives() -> list[str]:
    """Names accepted by ``Problem(objective=...)``: the built-ins and every registered objective.

    Returns
    -------
    list of str
        Sorted.

    Examples
    --------
    >>> from ldpopt.problems import available_objectives
    >>> available_objectives()[:3]
    ['binomial', 'central-mle', 'cls']
    """
    return sorted(_OBJECTIVES)


def objective_factory(name: str):
    """The registered item under ``name`` (a class or an instance), or None.

    Parameters
    ----------
    name : str
        The objective's name.

    Returns
    -------
    Objective subclass, Objective instance or None

    Examples
    --------
    >>> from ldpopt.problems.registry import objective_factory
    >>> objective_factory("cls").__name__, objective_factory("no-such-objective")
    ('LeastSquares', None)
    """
    return _OBJECTIVES.get(name)


def file_objectives() -> dict[str, str]:
    """name → one line, for the objectives a problem file may name (those with a ``file_doc``),
    built-ins first (in registration order), then the user's.

    Returns
    -------
    dict of str to str

    Examples
    --------
    >>> from ldpopt.problems.registry import file_objectives
    >>> file_objectives()["cls"], "posterior" in file_objectives()
    ('constrained least squares ||f - f~||^2', False)
    """
    return {k: o.file_doc for k, o in _OBJECTIVES.items() if getattr(o, "file_doc", None)}


def available_constraints() -> list[str]:
    """The constraint types a problem file may give (``type = ...``), built-in and registered.

    Returns
    -------
    list of str
        Sorted.

    Examples
    --------
    >>> from ldpopt.problems import available_constraints
    >>> {"simplex", "box", "subset_sum"} <= set(available_constraints())
    True
    """
    return sorted(_CONSTRAINTS)


def constraint_types() -> dict[str, Any]:
    """file type → class, in registration order (the built-ins first).

    Returns
    -------
    dict of str to type
        A copy.

    Examples
    --------
    >>> from ldpopt.problems.registry import constraint_types
    >>> list(constraint_types())[:3]
    ['simplex', 'nonnegative', 'sum']
    """
    return dict(_CONSTRAINTS)


def constraint_type(name: str):
    """The class registered under the file type ``name``, or None.

    Parameters
    ----------
    name : str
        The problem file's ``type``.

    Returns
    -------
    type or None

    Examples
    --------
    >>> from ldpopt.problems.registry import constraint_type
    >>> constraint_type("sum").__name__, constraint_type("no-such-type")
    ('SumTo', None)
    """
    return _CONSTRAINTS.get(name)
