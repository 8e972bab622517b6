"""Constrained inference on a range tree: Hay et al.'s two-pass closed form, per-level variances.

Notes: docs/notes/python.md, "ldpopt.hierarchy.consistency"."""

from __future__ import annotations

import numpy as np

from ..problems.constraints.ranges import RangeTree

__all__ = ["consistency", "consistency_adjoint", "level_slices", "node_variances"]


def level_slices(tree: RangeTree) -> list[slice]:
    """The node indices of each level (level 0 = leaves, the last the root) as slices."""
    return [slice(int(s), int(s + m)) for s, m in zip(tree.level_start, tree.level_size)]


def node_variances(tree: RangeTree, var) -> np.ndarray:
    """Per-node variances from one per level (length = number of levels) or one per node."""
    v = np.asarray(var, dtype=np.float64)
    nlev = len(tree.level_size)
    if v.shape == (nlev,):
        v = np.repeat(v, tree.level_size)
    elif v.shape != (tree.size,):
        raise ValueError(f"var must have one entry per level ({nlev}) or per node ({tree.size}), got shape {v.shape}")
    if np.any(np.isnan(v)) or np.any(v < 0):
        raise ValueError("var must be >= 0 (0 = fixed node, inf = unobserved), without NaN")
    return v


def _sum_children(tree, k, a):
    """The sum over the children (level k) of each level-(k+1) node, column-wise for 2-D ``a``."""
    # siblings are contiguous runs of B (the last may be shorter): one reduceat per level
    return np.add.reduceat(a, np.arange(0, int(tree.level_size[k]), tree.branching), axis=0)


def _col(v, a):
    return v if a.ndim == 1 else v[:, None]


def _passes(tree: RangeTree, s: np.ndarray):
    """The variance-only quantities of both passes: α per node, var(z) per node, T per node."""
    lv = level_slices(tree)
    alpha = np.ones(tree.size)
    vz = s.copy()
    T = np.zeros(tree.size)
    for k in range(len(lv) - 1):
        Tk = _sum_children(tree, k, vz[lv[k]])
        sk = s[lv[k + 1]]
        with np.errstate(invalid="ignore", divide="ignore"):
            a = np.where(np.isinf(sk), 0.0, np.where(sk + Tk > 0, Tk / (sk + Tk), 1.0))
            v = np.where(np.isinf(sk), Tk, np.where(sk + Tk > 0, sk * Tk / (sk + Tk), 0.0))
        if np.any(np.isinf(v)):
            raise ValueError(f"level {k + 1} has a node with no finite-variance observation below or at it")
        alpha[lv[k + 1]], vz[lv[k + 1]], T[lv[k + 1]] = a, v, Tk
    return lv, alpha, vz, T


def _beta(tree, k, lv, vz, T):
    par = np.arange(tree.level_size[k]) // tree.branching
    Tp = T[lv[k + 1]][par]
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(Tp > 0, vz[lv[k]] / Tp, 0.0), par


def consistency(tree: RangeTree, y, var) -> np.ndarray:
    """The consistent node totals x (module notes): the weighted least-squares fit of ``y``
    (one value per node, leaves first as in :class:`RangeTree`; shape (size,) or (size, m)) under
    the tree equalities, weights 1/var (``var`` per level or per node; 0 fixes, inf frees a node).

    Hay, Rastogi, Miklau & Suciu, VLDB 2010, §3 (Theorem 3), generalised to per-node variances.

    Parameters
    ----------
    tree : RangeTree
        The B-ary range tree (:class:`~ldpopt.problems.constraints.ranges.RangeTree`; ``HierarchicalEstimate.tree``).
    y : array_like, shape (size,) or (size, m)
        Raw node values, leaves first; several columns are fitted at once.
    var : array_like
        Variances per level (one per level) or per node; 0 fixes a node, inf leaves it unobserved.

    Returns
    -------
    ndarray, the shape of ``y``
        The consistent node totals.

    Raises
    ------
    ValueError
        ``y`` or ``var`` of the wrong shape, a negative or NaN variance, or a node with no
        finite-variance observation at or below it.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt import hierarchy
    >>> counts = np.array([400, 300, 100, 100, 50, 30, 20, 0])
    >>> est = hierarchy.collect(counts, "oue", epsilon=1.0, rng=0)
    >>> x = hierarchy.consistency(est.tree, est.y, est.var)
    >>> x[:4].round(3), bool(np.isclose(x[-1], 1.0))
    (array([0.316, 0.329, 0.078, 0.247]), True)
    """
    y = np.asarray(y, dtype=np.float64)
    if y.shape[0] != tree.size or y.ndim > 2:
        raise ValueError(f"y must have one row per tree node ({tree.size}), got shape {y.shape}")
    s = node_variances(tree, var)
    lv, alpha, vz, T = _passes(tree, s)
    z = np.where(_col(np.isinf(s), y), 0.0, y)  # an unobserved node's y is never used
    for k in range(len(lv) - 1):
        S = _sum_children(tree, k, z[lv[k]])
        a = _col(alpha[lv[k + 1]], y)
        z[lv[k + 1]] = a * z[lv[k + 1]] + (1 - a) * S
    x = z.copy()
    for k in range(len(lv) - 2, -1, -1):
        beta, par = _beta(tree, k, lv, vz, T)
        S = _sum_children(tree, k, z[lv[k]])
        x[lv[k]] = z[lv[k]] + _col(beta, y) * (x[lv[k + 1]][par] - S[par])
    return x


def consistency_adjoint(tree: RangeTree, xbar, var) -> np.ndarray:
    r""":math:`L^T \bar x` for the linear map :math:`x = L y` of :func:`consistency` (same ``var``): row u of a query
    matrix goes to the weights :math:`L^T u` on the raw node estimates, so :math:`\mathrm{Var}(u^T x) = (L^T u)^T \mathrm{Cov}(y) (L^T u)`.
    ``xbar``: shape (size,) or (size, m). Reverse-mode of the two passes, O(size · m).

    Parameters
    ----------
    tree : RangeTree
        The B-ary range tree (:class:`~ldpopt.problems.constraints.ranges.RangeTree`; ``HierarchicalEstimate.tree``).
    xbar : array_like, shape (size,) or (size, m)
        Weights on the consistent node totals (one column per query).
    var : array_like
        As in :func:`consistency`.

    Returns
    -------
    ndarray, the shape of ``xbar``
        The weights on the raw node values.

    Raises
    ------
    ValueError
        ``xbar`` or ``var`` of the wrong shape.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt import hierarchy
    >>> counts = np.array([400, 300, 100, 100, 50, 30, 20, 0])
    >>> est = hierarchy.collect(counts, "oue", epsilon=1.0, rng=0)
    >>> u = np.zeros(est.tree.size); u[:3] = 1.0  # the range [0, 2] from the consistent leaves
    >>> from ldpopt.hierarchy.consistency import consistency_adjoint
    >>> w = consistency_adjoint(est.tree, u, est.var)
    >>> bool(np.isclose(w @ est.y, u @ hierarchy.consistency(est.tree, est.y, est.var)))
    True
    """
    xb = np.array(xbar, dtype=np.float64)
    if xb.shape[0] != tree.size or xb.ndim > 2:
        raise ValueError(f"xbar must have one row per tree node ({tree.size}), got shape {xb.shape}")
    s = node_variances(tree, var)
    lv, alpha, vz, T = _passes(tree, s)
    zb = np.zeros_like(xb)
    for k in range(len(lv) - 1):  # the top-down pass, reversed: leaves upwards
        beta, par = _beta(tree, k, lv, vz, T)
        bx = _col(beta, xb) * xb[lv[k]]
        up = _sum_children(tree, k, bx)
        zb[lv[k]] += xb[lv[k]] - up[par]
        xb[lv[k + 1]] += up
    zb[lv[-1]] += xb[lv[-1]]
    yb = np.zeros_like(xb)
    for k in range(len(lv) - 2, -1, -1):  # the bottom-up pass, reversed: root downwards
        a = _col(alpha[lv[k + 1]], xb)
        yb[lv[k + 1]] = a * zb[lv[k + 1]]
        par = np.arange(tree.level_size[k]) // tree.branching
        zb[lv[k]] += ((1 - a) * zb[lv[k + 1]])[par]
    yb[lv[0]] = zb[lv[0]]
    return yb
