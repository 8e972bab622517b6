"""A convex cvxpy expression that is a maximum of affine pieces (‖u‖∞, max, |u|, maximum, their
positive multiples and affine shifts): its pieces, so that an objective term is one polyhedral kink
and a bound ``e <= h`` is the affine rows ``P_j − h <= 0`` (derivation: docs/problems.md,
"Polyhedral terms")."""

from __future__ import annotations

from typing import Any, cast

import cvxpy as cp
import numpy as np
from cvxpy.atoms.affine.add_expr import AddExpression
from cvxpy.atoms.affine.binary_operators import DivExpression, MulExpression, multiply

__all__ = ["MAX_PIECES", "affine_bound", "affine_tree", "max_pieces"]

#: the most pieces one expression is read into (a maximum of maxima multiplies nothing, it adds; the
#: limit keeps a pathological nesting from building a huge list)
MAX_PIECES = 64


def affine_tree(e) -> bool:
    """Whether the cvxpy expression ``e`` is affine by its form: a constant, a variable or a
    parameter, or an affine atom (``AffAtom``: sums, products by constants, indexing, stacks, …) of
    such. A sufficient test of cvxpy's ``is_affine``, which holds wherever this does; it is not
    necessary — ``quad_form(x, 0)`` is affine to cvxpy and not here — so a caller reads "not affine"
    as curved, the conservative side. It asks no atom its curvature: cvxpy's ``is_affine`` asks for
    both, and for ``quad_form`` that is two eigenvalue problems of P (7–9 ms each at d = 100 for a
    dense P), where cvxpy's own DCP test needs one.

    Parameters
    ----------
    e : cvxpy Expression

    Returns
    -------
    bool

    Examples
    --------
    >>> import cvxpy as cp
    >>> import numpy as np
    >>> from ldpopt.problems.objectives.polyhedral import affine_tree
    >>> x = cp.Variable(3)
    >>> affine_tree(cp.hstack([2 * x[:2], cp.sum(x)]) - 1), affine_tree(cp.quad_form(x, np.eye(3)))
    (True, False)
    """
    from cvxpy.atoms.affine.affine_atom import AffAtom
    from cvxpy.expressions.leaf import Leaf

    stack = [e]
    while stack:
        node = stack.pop()
        if isinstance(node, Leaf):
            continue
        if not isinstance(node, AffAtom):
            if node.variables():
                return False
            continue  # a constant subtree
        stack.extend(node.args)
    return True


def _nonnegative(e) -> np.ndarray | None:
    """The value of a constant ``e`` when every entry is finite and ≥ 0, else None."""
    if not (isinstance(e, cp.Expression) and e.is_constant()):
        return None
    raw = e.value
    if raw is None:
        return None
    v = np.asarray(raw.toarray() if hasattr(raw, "toarray") else raw, float)
    return v if bool(np.all(np.isfinite(v))) and bool(np.all(v >= 0)) else None


def max_pieces(e) -> list | None:
    """Affine cvxpy expressions P_1, …, P_k with e = max_j P_j: entry by entry when e is not a scalar
    (each P_j then has e's shape), over every entry of every P_j when e is a scalar — or None when e
    is not read as such a maximum.

    Read: an affine e (itself); ``abs(u)`` and ``norm_inf(u)`` (= ``norm(u, "inf")`` =
    ``pnorm(u, "inf")``), u affine (u, −u); ``maximum(a, b, …)`` (the pieces of each); ``max(u)`` over
    all entries, u affine, read, or a stack (``hstack``, ``vstack``) of read parts; a reshape of a read
    expression; c·e and e/c with a constant c ≥ 0 (one number, or entry by entry; c > 0 for a
    quotient); e + a with a affine.
    A sum of two non-affine maxima (its pieces multiply), a maximum along an axis, a negation of a
    non-affine expression are not read.

    Parameters
    ----------
    e : cvxpy Expression

    Returns
    -------
    list of cvxpy Expression, or None

    Examples
    --------
    >>> import cvxpy as cp
    >>> import numpy as np
    >>> from ldpopt.problems.objectives.polyhedral import max_pieces
    >>> x = cp.Variable(3)
    >>> x.value = np.array([0.2, -0.7, 0.1])
    >>> P = max_pieces(2 * cp.norm(x - 0.1, "inf") + 1)
    >>> len(P), round(max(float(np.max(p.value)) for p in P), 12)
    (2, 2.6)
    """
    out = _pieces(e)
    return None if out is None or len(out) > MAX_PIECES else out


def _same(P, shape):
    """P broadcast to ``shape`` (a scalar piece of an entrywise maximum), or None."""
    if P.shape == shape:
        return P
    if P.size == 1:
        return cp.multiply(np.ones(shape), P)
    return None


def _pieces(e: Any) -> list | None:
    if not isinstance(e, cp.Expression):
        return None
    e = cast(Any, e)  # an atom: its args
    if affine_tree(e):
        return [e]
    name = type(e).__name__
    if name == "abs":
        u = e.args[0]
        return [u, -u] if affine_tree(u) else None
    if name == "norm_inf" and getattr(e, "axis", None) is None:
        u = e.args[0]
        return [u, -u] if affine_tree(u) else None
    if name == "max" and getattr(e, "axis", None) is None:
        u = e.args[0]
        if type(u).__name__ in ("Hstack", "Vstack", "Concatenate") and not affine_tree(u):
            out = []  # max over the stacked entries: over every entry of every piece of each part
            for part in u.args:
                got = _pieces(part)
                if got is None:
                    return None
                out += got
            return out
        return _pieces(u)  # e scalar: over every entry of every piece of u
    if name == "reshape":
        u = e.args[0]
        got = _pieces(u)
        if got is None or e.size == 1:
            return got  # one entry: the maximum over every entry of every piece, as for a scalar
        if any(P.shape != u.shape for P in got):
            return None
        return [cp.reshape(P, e.shape, order=getattr(e, "order", "F")) for P in got]
    if name == "maximum":
        out = []
        for a in e.args:
            got = _pieces(a)
            if got is None or (e.size > 1 and a.size > 1 and a.shape != e.shape):
                return None
            if e.size > 1 and a.size == 1 and any(P.size != 1 for P in got):
                return None  # a scalar maximum inside an entrywise one: not entry by entry
            got = [_same(P, e.shape) for P in got] if e.size > 1 else got
            out += got
        return out
    if isinstance(e, (multiply, MulExpression)) and len(e.args) == 2:
        left, right = e.args
        k, other = (left, right) if left.is_constant() else (right, left)
        c = _nonnegative(k)
        if c is None or (e.size > 1 and other.shape != e.shape) or (type(e) is not multiply and c.size != 1):
            return None  # (a matrix product is not read)
        got = _pieces(other)
        if got is None:
            return None
        if np.unique(c).size <= 1:  # one factor (a scalar, or one promoted)
            return [float(c.reshape(-1)[0]) * P for P in got] if c.size else None
        return [cp.multiply(c, P) for P in got] if e.size > 1 else None  # entry by entry, c ≥ 0 of e's shape
    if isinstance(e, DivExpression):
        left, right = e.args
        c = _nonnegative(right)
        if c is None or np.unique(c).size != 1 or float(c.reshape(-1)[0]) == 0 or (e.size > 1 and left.shape != e.shape):
            return None
        got = _pieces(left)
        return None if got is None else [P / float(c.reshape(-1)[0]) for P in got]
    if isinstance(e, AddExpression):
        bent = [a for a in e.args if not affine_tree(a)]
        if len(bent) != 1 or (e.size > 1 and bent[0].shape != e.shape):
            return None
        flat = [a for a in e.args if affine_tree(a)]
        got = _pieces(bent[0])
        if got is None or not flat:
            return got
        shift = sum(flat[1:], flat[0])  # e scalar: a scalar shift of every entry of every piece
        return [P + shift for P in got]
    return None


def affine_bound(con):
    """The affine cvxpy constraint equivalent to a bound ``e <= h`` (``con``, a cvxpy ``Inequality``)
    whose ``e − h`` :func:`max_pieces` reads, with its pieces stacked: ``[vec(P_1); …; vec(P_k)] <= 0``
    (one row per entry of each piece, column-major as cvxpy's ``vec``) — or None when ``con`` is
    affine already, not an inequality, or not read.

    Parameters
    ----------
    con : cvxpy Constraint

    Returns
    -------
    cvxpy Inequality or None

    Examples
    --------
    >>> import cvxpy as cp
    >>> from ldpopt.problems.objectives.polyhedral import affine_bound
    >>> x = cp.Variable(4)
    >>> rows = affine_bound(cp.norm(x - 0.25, "inf") <= 0.1)
    >>> rows.is_dcp(), rows.expr.is_affine(), rows.size
    (True, True, 8)
    >>> affine_bound(cp.norm(x, 2) <= 1) is None
    True
    """
    if not isinstance(con, cp.constraints.Inequality) or affine_tree(con.expr):
        return None
    pieces = max_pieces(con.expr)
    if pieces is None:
        return None
    flat = [P if P.ndim <= 1 else cp.vec(P, order="F") for P in pieces]
    flat = [cp.reshape(P, (1,), order="F") if P.ndim == 0 else P for P in flat]
    return (flat[0] if len(flat) == 1 else cp.hstack(flat)) <= 0
