"""Non-negative consistent hierarchies: the exact constrained least squares, and a cheap heuristic.

Notes: docs/notes/python.md, "ldpopt.hierarchy.nonneg"."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..methods.normalize import project_simplex
from ..problems.constraints.ranges import RangeTree
from .consistency import consistency, node_variances

__all__ = ["cover_matrix", "nonnegative_heuristic", "nonnegative_qp"]


def cover_matrix(tree: RangeTree) -> sp.csr_matrix:
    """A (size × d): A[v, ℓ] = 1 when node v's range [lo_v, hi_v) contains leaf ℓ."""
    lens = tree.hi - tree.lo
    rows = np.repeat(np.arange(tree.size), lens)
    cols = np.arange(lens.sum()) - np.repeat(np.cumsum(lens) - lens, lens) + np.repeat(tree.lo, lens)
    return sp.csr_matrix((np.ones(cols.shape[0]), (rows, cols)), shape=(tree.size, tree.d))


def nonnegative_heuristic(tree: RangeTree, y, var) -> np.ndarray:
    """Node totals of Norm-Sub(consistent leaves) (heuristic; module notes).

    Norm-Sub is the Euclidean projection onto the simplex (Wang et al. arXiv §3.3); not the
    weighted optimum of :func:`nonnegative_qp`.

    Parameters
    ----------
    tree : RangeTree
        The B-ary range tree (:class:`~ldpopt.problems.constraints.ranges.RangeTree`; ``HierarchicalEstimate.tree``).
    y : array_like, shape (size,)
        One raw estimate per tree node, leaves first.
    var : array_like
        Variances per level (one per level) or per node; 0 fixes a node, inf leaves it unobserved.

    Returns
    -------
    ndarray, shape (size,)
        Consistent, non-negative node totals.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt import hierarchy
    >>> counts = np.array([400, 300, 100, 100, 50, 30, 20, 0])
    >>> est = hierarchy.collect(counts, "oue", epsilon=1.0, rng=0)
    >>> x = hierarchy.nonnegative_heuristic(est.tree, est.y, est.var)
    >>> bool((x >= 0).all()), bool(np.isclose(x[:8].sum(), 1.0))
    (True, True)
    """
    x = consistency(tree, y, var)
    return tree.node_totals(project_simplex(x[: tree.d]))


def nonnegative_qp(tree: RangeTree, y, var, **solver_options) -> np.ndarray:
    """Node totals of the exact non-negative weighted least squares (module notes).

    Our addition (neither Hay et al. 2010 nor Cormode et al. 2019): minimise
    :math:`Σ_v ((A ℓ)_v - y_v)^2/s_v` over leaves :math:`ℓ ≥ 0, Σ ℓ = 1`, with cvxpy (Clarabel).

    Parameters
    ----------
    tree : RangeTree
        The B-ary range tree (:class:`~ldpopt.problems.constraints.ranges.RangeTree`; ``HierarchicalEstimate.tree``).
    y : array_like, shape (size,)
        One raw estimate per tree node, leaves first.
    var : array_like
        Variances per level (one per level) or per node; 0 fixes a node, inf leaves it unobserved.
    **solver_options
        Passed to ``cvxpy.Problem.solve`` (default ``solver=CLARABEL``).

    Returns
    -------
    ndarray, shape (size,)
        Consistent, non-negative node totals.

    Raises
    ------
    ValueError
        ``y`` or ``var`` of the wrong shape.
    RuntimeError
        The solver's status is not optimal.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt import hierarchy
    >>> counts = np.array([400, 300, 100, 100, 50, 30, 20, 0])
    >>> est = hierarchy.collect(counts, "oue", epsilon=1.0, rng=0)
    >>> hierarchy.nonneg.nonnegative_qp(est.tree, est.y, est.var)[:8].round(3)
    array([0.308, 0.321, 0.07 , 0.239, 0.   , 0.062, 0.   , 0.   ])
    """
    import cvxpy as cp

    y = np.asarray(y, dtype=np.float64)
    if y.shape != (tree.size,):
        raise ValueError(f"y must have one entry per tree node ({tree.size}), got shape {y.shape}")
    s = node_variances(tree, var)
    obs = np.isfinite(s) & (s > 0)
    A = cover_matrix(tree)[obs]
    w = np.sqrt(np.mean(s[obs]) / s[obs])  # relative weights: O(1) whatever n (cf. objectives.Posterior)
    leaf = cp.Variable(tree.d)
    prob = cp.Problem(cp.Minimize(cp.sum_squares(cp.multiply(w, A @ leaf - y[obs]))), [leaf >= 0, cp.sum(leaf) == 1])
    opts = {"solver": cp.CLARABEL, **solver_options}
    prob.solve(**opts)
    if prob.status != cp.OPTIMAL:
        raise RuntimeError(f"non-negative hierarchy QP: solver {opts['solver']} returned status {prob.status!r}")
    assert leaf.value is not None  # cvxpy sets it when the status is optimal
    return tree.node_totals(np.maximum(leaf.value, 0.0))
