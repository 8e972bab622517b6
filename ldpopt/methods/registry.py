"""The registry of post-processing methods and their Table-1 metadata (Wang et al. arXiv Table 1).

A method is a function ``f(estimate: Estimate, **params) -> ndarray`` returning the post-processed
frequency vector (float64, length d). Register it with :func:`register`; look it up with
:func:`get`, list all with :func:`available`, run one with :func:`postprocess`.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from ..estimate import Estimate, check_estimate

__all__ = ["MethodInfo", "available", "get", "parameters", "postprocess", "register"]


@dataclass(frozen=True)
class MethodInfo:
    """What the registry knows about a method.

    ``non_negative`` / ``sums_to_one``: ``"yes"``, ``"no"`` or ``"almost"`` (Table 1's wording;
    ``"almost"`` comes with ``notes`` saying exactly when the property fails).
    ``order_preserving``: ``"yes"``, ``"no"`` or ``"weak"`` (ties may be created: f̃_a < f̃_b only
    gives f'_a <= f'_b), with ``notes`` giving the counterexample where it is not ``"yes"``.
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


_METHODS: dict[str, MethodInfo] = {}
_TRI = {"yes", "no", "almost", "weak"}


def register(name: str, *, description: str, non_negative: str, sums_to_one: str,
             order_preserving: str, complexity: str, reference: str, notes: str = ""):
    """Decorator adding a method to the registry under ``name`` (lower-case, e.g. ``"norm-sub"``)."""
    for label, value in (("non_negative", non_negative), ("sums_to_one", sums_to_one),
                         ("order_preserving", order_preserving)):
        if value not in _TRI:
            raise ValueError(f"{label} must be one of {sorted(_TRI)}, got {value!r}")

    def deco(func):
        if name in _METHODS:
            raise ValueError(f"method {name!r} is registered twice")
        _METHODS[name] = MethodInfo(name, func, description, non_negative, sums_to_one,
                                    order_preserving, complexity, reference, notes)
        return func

    return deco


def get(name: str) -> MethodInfo:
    """The :class:`MethodInfo` registered as ``name``."""
    if not isinstance(name, str) or name.lower() not in _METHODS:
        raise ValueError(f"method must be one of {sorted(_METHODS)}, got {name!r}")
    return _METHODS[name.lower()]


def available():
    """All registered methods with their Table-1 metadata, as a pandas DataFrame indexed by name
    (a :class:`~ldpopt._table.WholeTable`: ``print`` shows every column and every note whole)."""
    from .._table import WholeTable

    columns = ["name", "description", "non_negative", "sums_to_one", "order_preserving",
               "complexity", "reference", "notes"]
    rows = [{c: getattr(info, c) for c in columns} for info in _METHODS.values()]
    return WholeTable(rows, columns=columns).set_index("name").sort_index()


def parameters(name: str) -> dict[str, inspect.Parameter]:
    """The keyword parameters of method ``name`` (everything after the estimate), by name."""
    sig = inspect.signature(get(name).func)
    return {k: v for k, v in list(sig.parameters.items())[1:]
            if v.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)}


def postprocess(estimate: Estimate, method: str, /, **params) -> np.ndarray:
    """Run the registered ``method`` on ``estimate`` and return the post-processed frequencies.

    ``estimate`` and ``method`` are positional-only, so every keyword in ``params`` goes to the
    method, including parameters that are themselves called ``method`` (MLE-Apx's
    ``method="brentq"``, EM's ``method="iterative"``) or ``estimate``. A keyword the method does
    not have is a ``TypeError`` naming it and listing the method's parameters (:func:`parameters`).
    """
    check_estimate(estimate)
    info = get(method)
    known = parameters(info.name)
    unknown = [k for k in params if k not in known]
    if unknown:
        raise TypeError(f"method {info.name!r} has no parameter {unknown[0]!r}; "
                        f"its parameters are {sorted(known)}")
    return info.func(estimate, **params)
