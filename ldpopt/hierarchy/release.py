"""A released tree's cells with their uncertainty: exact for GLS, bootstrapped through the noise
source's sampler for a non-linear release (non-negative integer leaves, or the caller's own).

Notes: docs/hierarchies.md, "Every cell with its error bar"."""

from __future__ import annotations

import numpy as np

from ..privacy import central as _central
from ..uncertainty.cells import FLAG_FLOOR, FLAG_SIGMAS, bootstrap_cells
from .gls import _node_var, gls
from .tree import Tree

__all__ = ["POSTS", "central_sampler", "clip_round", "tree_cells"]

#: the named post-processings of :func:`tree_cells`
POSTS = ("gls", "gls-clip-round")


def clip_round(tree: Tree, x) -> np.ndarray:
    """The release deployments make from a fit: every leaf rounded to an integer and clipped at 0,
    every total the sum of its leaves (non-negative, integer, consistent). Columns at once.

    Parameters
    ----------
    tree : Tree
    x : array_like, shape (N,) or (N, m)
        A fit (e.g. :func:`~ldpopt.hierarchy.gls`'s).

    Returns
    -------
    ndarray, the shape of ``x``

    Raises
    ------
    ValueError
        ``x`` without one row per node.

    Examples
    --------
    >>> from ldpopt.hierarchy import Tree
    >>> from ldpopt.hierarchy.release import clip_round
    >>> clip_round(Tree([-1, 0, 0]), [3.0, 3.6, -0.6]).tolist()
    [4.0, 4.0, 0.0]
    """
    v = np.asarray(x, dtype=np.float64)
    if v.shape[0] != tree.size or v.ndim > 2:
        raise ValueError(f"x must have one row per tree node ({tree.size}), got shape {v.shape}")
    return tree.node_totals(np.maximum(np.rint(v), 0.0))


def central_sampler(mechanism: str, scale, size: int):
    """``sampler(B, rng)`` → (size, B) noise of a central mechanism (Laplace, discrete Laplace,
    Gaussian, discrete Gaussian: :mod:`ldpopt.privacy.central`) at one scale per node (or one for all).

    Parameters
    ----------
    mechanism : str
        A name of :data:`ldpopt.privacy.central.MECHANISMS`.
    scale : float or array_like, shape (size,)
        b or σ per node, > 0.
    size : int
        The number of nodes.

    Returns
    -------
    callable

    Raises
    ------
    ValueError
        An unknown mechanism, or scales of the wrong length or not > 0.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt.hierarchy.release import central_sampler
    >>> central_sampler("laplace", [1.0, 2.0, 2.0], 3)(5, np.random.default_rng(0)).shape
    (3, 5)
    """
    mech = _central.get(mechanism)
    sc = np.broadcast_to(np.asarray(scale, dtype=np.float64), (size,)) if np.ndim(scale) == 0 else np.asarray(
        scale, dtype=np.float64)
    if sc.shape != (size,) or not np.all(sc > 0):
        raise ValueError(f"scale must be > 0, one for all nodes or one per node ({size}), got shape {sc.shape}")
    levels, inv = np.unique(sc, return_inverse=True)

    def sample(B: int, rng) -> np.ndarray:
        out = np.empty((size, B))
        for j, s in enumerate(levels):                   # one draw per distinct scale (a few levels)
            rows = np.flatnonzero(inv == j)
            out[rows] = mech.sample(rows.size * B, float(s), rng).reshape(rows.size, B)
        return out

    return sample


def tree_cells(tree: Tree, y, var, post="gls", level: float = 0.95, *, n_resamples: int = 200, rng=0,
               sampler=None, labels=None, sigmas: float = FLAG_SIGMAS, floor: float = FLAG_FLOOR,
               hull: bool = True, engine: str = "pandas", like=None):
    """One row per node of a released tree: estimate, se, ci_low, ci_high, correction_sigma, flagged.

    ``post="gls"``: the exact SE and normal interval of :meth:`GLSFit.cells` (linear). Otherwise the
    parametric bootstrap of :func:`ldpopt.uncertainty.cells.bootstrap_cells` through ``sampler`` (the
    noise source's; default Gaussian at ``var``): ``"gls-clip-round"`` (:func:`clip_round` of the
    GLS fit) or a callable ``post(Y)`` on (N, B) measurement columns. For ``"gls-clip-round"`` the
    bootstrap's interval is joined with the GLS's exact one (``hull``; the clipping biases small cells
    and their totals, and the bootstrap around the clipped release alone under-covers there:
    docs/hierarchies.md, "Every cell with its error bar").

    Parameters
    ----------
    tree : Tree
    y : array_like, shape (N,)
        The measurements.
    var : float or array_like
        Their variances (as in :func:`~ldpopt.hierarchy.gls`).
    post : "gls", "gls-clip-round" or callable
        The post-processing whose release is described.
    level : float, default 0.95
    n_resamples : int, default 200
        Bootstrap resamples (non-linear ``post`` only).
    rng : int, Generator or "secure"
    sampler : callable or None
        ``sampler(B, rng)`` → (N, B) noise (e.g. :func:`central_sampler`); None: Gaussian at ``var``.
    labels : sequence or None
        Node names.
    sigmas, floor : float
        The flag rule (:func:`ldpopt.uncertainty.cells.flag_corrections`).
    hull : bool, default True
        ``"gls-clip-round"`` only: join each cell's bootstrap interval with the GLS's exact interval.
    engine, like
        The table's dataframe engine (:func:`ldpopt.aggregate.frames.to_engine`; outside pandas the
        index is a leading ``cell`` column).

    Returns
    -------
    pandas.DataFrame, or a frame of ``engine``

    Raises
    ------
    ValueError
        An unknown ``post`` name, or what :func:`~ldpopt.hierarchy.gls` or the cell table refuses.

    Examples
    --------
    >>> from ldpopt.hierarchy import Tree
    >>> from ldpopt.hierarchy.release import tree_cells
    >>> t = tree_cells(Tree([-1, 0, 0]), [10.0, 4.0, 5.0], 1.0, "gls-clip-round", n_resamples=100)
    >>> t["estimate"].tolist()
    [9.0, 4.0, 5.0]
    """
    from ..aggregate.frames import to_engine  # pyarrow, loaded only when a table is asked for

    if post == "gls":
        return to_engine(gls(tree, y, var).cells(level, labels=labels, sigmas=sigmas, floor=floor), engine, like=like)
    join = None
    if post == "gls-clip-round":
        def fn(Y):
            return clip_round(tree, gls(tree, Y, var).x)

        if hull:
            ex = gls(tree, y, var).cells(level)
            join = (ex["ci_low"].to_numpy(), ex["ci_high"].to_numpy())
    elif callable(post):
        fn = post
    else:
        raise ValueError(f"post must be one of {POSTS} or a callable, got {post!r}")
    s = _node_var(tree, var)
    return to_engine(bootstrap_cells(fn, y, np.sqrt(s), sampler=sampler, level=level, n_resamples=n_resamples,
                                     rng=rng, labels=labels, sigmas=sigmas, floor=floor, hull=join), engine, like=like)
