"""A cvxpy expression's value at many points of its variable: the tree walked once into a chain of
numpy calls, each atom's own ``numeric`` — the values cvxpy's ``.value`` gives, bit for bit, without
its per-call overhead (assigning the variable validates the array; each node's value walks its
arguments through cvxpy's cached properties again).

Used where ldpopt reads a user's objective at a fixed set of points before any solve (the automatic
multiplier of :class:`~.base.UserObjective`: 4 points, and 32 more where the objective is nearly
linear).

Notes: docs/notes/problems.md, "ldpopt.problems.objectives.values".
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

__all__ = ["NotCompiled", "compiled_value"]


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
    >>> from ldpopt.problems.objectives.values import compiled_value
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
