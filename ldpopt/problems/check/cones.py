"""A user's cvxpy constraint of any cone, measured at a point in numpy: its violation and whether the
check reads it as rows (g = 0, g ≤ 0) or as a cone (PSD, second-order, exponential, power).

Notes: docs/problems.md, "The violation of a cone constraint".
"""

from __future__ import annotations

import cvxpy as cp
import numpy as np

__all__ = ["cone_violation", "dual_array", "is_cone", "is_equality", "row_expression", "save_dual_array"]

_ROWS = (cp.constraints.Zero, cp.constraints.Equality, cp.constraints.NonNeg, cp.constraints.NonPos,
         cp.constraints.Inequality)


def is_cone(con) -> bool:
    """True for a constraint that is not rows g = 0 or g ≤ 0 (PSD, SOC, exponential, power cones).

    Parameters
    ----------
    con : cvxpy Constraint

    Returns
    -------
    bool

    Examples
    --------
    >>> from ldpopt.problems.check.cones import is_cone
    >>> import cvxpy as cp
    >>> x = cp.Variable(3)
    >>> is_cone(x <= 1), is_cone(cp.constraints.SOC(x[0], x[1:]))
    (False, True)
    """
    return not isinstance(con, _ROWS)


def is_equality(con) -> bool:
    """True for g = 0 (``Zero``, ``Equality``).

    Parameters
    ----------
    con : cvxpy Constraint

    Returns
    -------
    bool

    Examples
    --------
    >>> from ldpopt.problems.check.cones import is_equality
    >>> import cvxpy as cp
    >>> x = cp.Variable(2)
    >>> is_equality(x == 1), is_equality(x >= 0)
    (True, False)
    """
    return isinstance(con, (cp.constraints.Zero, cp.constraints.Equality))


def row_expression(con):
    """g of a row constraint written g = 0 or g ≤ 0 (``NonNeg``'s x ≥ 0 as −x ≤ 0), None for a cone.

    Parameters
    ----------
    con : cvxpy Constraint

    Returns
    -------
    cvxpy Expression or None

    Examples
    --------
    >>> from ldpopt.problems.check.cones import row_expression
    >>> import cvxpy as cp
    >>> x = cp.Variable(2)
    >>> row_expression(cp.constraints.NonNeg(x)).is_affine(), row_expression(cp.diag(x) >> 0) is None
    (True, True)
    """
    if isinstance(con, cp.constraints.NonNeg):
        return -con.args[0]
    if isinstance(con, (cp.constraints.NonPos, cp.constraints.Zero)):
        return con.args[0]
    if isinstance(con, (cp.constraints.Inequality, cp.constraints.Equality)):
        return con.expr
    return None


def _value(expr) -> np.ndarray:
    v = expr.value
    if v is None:
        raise ValueError("a constraint's expression has no value at the point")
    return np.asarray(v, dtype=np.float64)


def cone_violation(con) -> float:
    """The largest violation of cvxpy constraint ``con`` at the value its variables hold, in numpy
    (docs/problems.md, "The violation of a cone constraint"):

    * g = 0: max |g|; g ≤ 0 (``Inequality``, ``NonPos``, ``NonNeg`` as −x ≤ 0): max(0, max g);
    * ``A >> B`` (PSD of A − B): max(0, −λ_min((A − B + (A − B)ᵀ)/2)), cvxpy's own measure;
    * ``SOC(t, X)`` (‖x‖₂ ≤ t per cone along ``axis``): max(0, ‖x‖₂ − t), the number
      ``cp.norm(x, 2) <= t`` gets — between cvxpy's distance to the cone and √2 times it;
    * ``ExpCone(x, y, z)`` (y·e^{x/y} ≤ z, y > 0, or x ≤ 0, y = 0, z ≥ 0) and ``PowCone3D(x, y, z, α)``
      (x^α·y^{1−α} ≥ |z|, x, y ≥ 0): the Euclidean distance to one point of the cone — (x, y,
      max(z, y·e^{x/y})) for y > 0, (min(x, 0), 0, max(z, 0)) for y ≤ 0; (x⁺, y⁺, z clipped to
      ±(x⁺)^α(y⁺)^{1−α}) — so zero exactly on the cone and never below cvxpy's distance to it.

    Choice where cvxpy differs: cvxpy measures SOC, exponential and power cones by the distance to
    the cone (a projection; a small convex solve for the exponential and power cones); the bounds
    above cost O(size) in numpy and are zero on the same set. Another cone (cvxpy's ``PowConeND``,
    relative-entropy cones): cvxpy's own ``violation()``.

    Parameters
    ----------
    con : cvxpy Constraint
        With its variables' values set (the point judged).

    Returns
    -------
    float
        ≥ 0; ``inf`` where a value overflows.

    Examples
    --------
    >>> from ldpopt.problems.check.cones import cone_violation
    >>> import cvxpy as cp
    >>> import numpy as np
    >>> x = cp.Variable(2)
    >>> x.value = np.array([3.0, 4.0])
    >>> cone_violation(cp.constraints.SOC(cp.Constant(4.0), x))
    1.0
    >>> X = cp.Variable((2, 2))
    >>> X.value = np.array([[1.0, 2.0], [2.0, 1.0]])  # eigenvalues 3 and -1
    >>> round(cone_violation(X >> 0), 12)
    1.0
    """
    with np.errstate(over="ignore", invalid="ignore"):
        out = _violation(con)
    return float(out) if np.isfinite(out) else float("inf")


def _violation(con) -> float:
    g = row_expression(con)
    if g is not None:
        v = _value(g)
        if not v.size:
            return 0.0
        return float(np.max(np.abs(v))) if is_equality(con) else max(float(np.max(v)), 0.0)
    if isinstance(con, cp.constraints.PSD):
        A = np.atleast_2d(_value(con.args[0]))
        return max(-float(np.linalg.eigvalsh((A + A.T) / 2.0)[0]), 0.0)
    if isinstance(con, cp.constraints.SOC):
        t = np.atleast_1d(_value(con.args[0])).ravel(order="F")
        X = _value(con.args[1])
        if X.ndim <= 1:
            norms = np.atleast_1d(np.linalg.norm(X))
        else:  # axis 0: the columns are the cones' x; axis 1: the rows
            norms = np.linalg.norm(X, axis=0 if con.axis == 0 else 1)
        return max(float(np.max(norms - t)), 0.0) if t.size else 0.0
    if isinstance(con, cp.constraints.ExpCone):
        x, y, z = (np.atleast_1d(_value(a)).ravel(order="F") for a in con.args)
        pos = y > 0
        yp = np.where(pos, y, 1.0)
        top = np.where(pos, yp * np.exp(x / yp), 0.0)
        inside = np.maximum(top - z, 0.0)  # y > 0: to (x, y, max(z, y·e^{x/y}))
        edge = np.sqrt(y ** 2 + np.maximum(x, 0.0) ** 2 + np.maximum(-z, 0.0) ** 2)  # y ≤ 0
        v = np.where(pos, inside, edge)
        return float(np.max(v)) if v.size else 0.0
    if isinstance(con, cp.constraints.PowCone3D):
        x, y, z = (np.atleast_1d(_value(a)).ravel(order="F") for a in con.args[:3])
        alpha = np.atleast_1d(_value(con.alpha)).ravel(order="F")
        xp, yp = np.maximum(x, 0.0), np.maximum(y, 0.0)
        r = xp ** alpha * yp ** (1.0 - alpha)
        v = np.sqrt((x - xp) ** 2 + (y - yp) ** 2 + np.maximum(np.abs(z) - r, 0.0) ** 2)
        return float(np.max(v)) if v.size else 0.0
    v = np.atleast_1d(np.asarray(con.violation(), dtype=np.float64))
    return float(np.max(v)) if v.size else 0.0


def dual_array(con) -> np.ndarray | None:
    """cvxpy's multiplier of ``con`` as one float64 array: as cvxpy gives it for one dual variable,
    and for a cone with several (SOC, exponential and power cones: one part per argument) the parts
    flattened column-major and concatenated in cvxpy's order (``dual_variables``). None: no dual.

    Parameters
    ----------
    con : cvxpy Constraint

    Returns
    -------
    ndarray or None

    Examples
    --------
    >>> from ldpopt.problems.check.cones import dual_array
    >>> import cvxpy as cp
    >>> import numpy as np
    >>> c = cp.constraints.SOC(cp.Variable(), cp.Variable(2))
    >>> c.save_dual_value(np.array([1.0, 0.6, 0.8]))
    >>> dual_array(c)
    array([1. , 0.6, 0.8])
    """
    dv = con.dual_value
    if dv is None:
        return None
    if isinstance(dv, (list, tuple)):
        if any(p is None for p in dv):
            return None
        return np.concatenate([np.ravel(np.asarray(p, dtype=np.float64), order="F") for p in dv])
    return np.asarray(dv, dtype=np.float64)


def save_dual_array(con, value) -> None:
    """The inverse of :func:`dual_array`: ``value`` set as ``con``'s multiplier (a cone's parts split
    by its dual variables' sizes, each reshaped column-major).

    Parameters
    ----------
    con : cvxpy Constraint
    value : array_like
        As :func:`dual_array` returns it.

    Examples
    --------
    >>> from ldpopt.problems.check.cones import save_dual_array
    >>> import cvxpy as cp
    >>> import numpy as np
    >>> c = cp.constraints.SOC(cp.Variable(), cp.Variable(2))
    >>> save_dual_array(c, np.array([1.0, 0.6, 0.8]))
    >>> [np.asarray(p).tolist() for p in c.dual_value]
    [[1.0], [0.6, 0.8]]
    """
    parts = con.dual_variables
    if len(parts) <= 1:
        con.save_dual_value(value)
        return
    flat, at = np.ravel(np.asarray(value, dtype=np.float64)), 0
    for var in parts:
        var.save_value(np.reshape(flat[at:at + var.size], var.shape, order="F"))
        at += var.size
