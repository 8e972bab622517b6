"""A user's cvxpy objective or constraint refused when its data — a constant, or a Parameter's value
— hold NaN or inf: one line naming the part, before any work reads them (at ``Problem(...)``, and at
``solve()`` for a Parameter whose value was set after)."""

from __future__ import annotations

import numpy as np

__all__ = ["not_finite", "refuse_non_finite", "refuse_non_finite_parameters"]


def not_finite(value) -> bool:
    """Whether a cvxpy leaf's ``value`` (array, scalar or sparse) holds NaN or ±inf.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt.problems.objectives.finite import not_finite
    >>> not_finite(np.array([0.5, np.inf])), not_finite(2.0)
    (True, False)
    """
    data = value.data if hasattr(value, "tocoo") else np.asarray(value)
    return data.dtype.kind in "fc" and not bool(np.all(np.isfinite(data)))


def refuse_non_finite_parameters(params, where: str = "") -> None:
    """Raise a one-line ``ValueError`` naming the first cvxpy Parameter of ``params`` whose value holds
    NaN or inf (cvxpy itself refuses NaN but takes ±inf); a Parameter without a value is left to the
    caller.

    Parameters
    ----------
    params : iterable of cvxpy Parameter
    where : str, default ""
        The part that holds them ("objective", "constraint 'rows'"), put first in the message.

    Raises
    ------
    ValueError

    Examples
    --------
    >>> import cvxpy as cp
    >>> import numpy as np
    >>> from ldpopt.problems.objectives.finite import refuse_non_finite_parameters
    >>> p = cp.Parameter(2, name="prior")
    >>> p.value = np.array([0.5, np.inf])
    >>> refuse_non_finite_parameters([p], "objective")
    Traceback (most recent call last):
    ...
    ValueError: objective: the cvxpy Parameter 'prior' holds NaN or inf (shape (2,)); every number must be finite
    """
    for p in params:
        if p.value is not None and not_finite(p.value):
            raise ValueError(f"{where + ': ' if where else ''}the cvxpy Parameter {p.name()!r} holds NaN or inf "
                             f"(shape {p.shape}); every number must be finite")


def refuse_non_finite(where: str, item) -> None:
    """Raise a one-line ``ValueError`` when the cvxpy expression or constraint ``item`` holds a constant
    or a Parameter value with NaN or inf, its message starting with ``where``.

    Parameters
    ----------
    where : str
        The part ("objective", "constraint 'user'").
    item : cvxpy Expression or Constraint

    Raises
    ------
    ValueError

    Examples
    --------
    >>> import cvxpy as cp
    >>> import numpy as np
    >>> from ldpopt.problems.objectives.finite import refuse_non_finite
    >>> f = cp.Variable(3)
    >>> refuse_non_finite("constraint 'user'", f <= np.array([0.5, np.nan, 1.0]))
    Traceback (most recent call last):
    ...
    ValueError: constraint 'user': its data hold NaN or inf (a constant of shape (3,)); every number must be finite
    """
    for c in item.constants():
        if c.value is not None and not_finite(c.value):
            raise ValueError(f"{where}: its data hold NaN or inf (a constant of shape {c.shape}); "
                             "every number must be finite")
    refuse_non_finite_parameters(item.parameters(), where)
