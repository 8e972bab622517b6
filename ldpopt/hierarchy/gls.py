"""Generalised least squares on any tree of sums with any per-node variances, in O(nodes).

Notes: docs/hierarchies.md, "The two passes and their variances"."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..uncertainty.cells import FLAG_FLOOR, FLAG_SIGMAS, cell_frame
from .tree import Tree

__all__ = ["GLSFit", "gls"]


def _node_var(tree: Tree, var) -> np.ndarray:
    v = np.asarray(var, dtype=np.float64)
    if v.ndim == 0:
        v = np.full(tree.size, float(v))
    elif v.shape == (tree.n_levels,):
        v = v[tree.depth]
    elif v.shape != (tree.size,):
        raise ValueError(f"var must be a scalar, one entry per depth ({tree.n_levels}) or one per node "
                         f"({tree.size}), got shape {v.shape}")
    if np.any(np.isnan(v)) or np.any(v < 0):
        raise ValueError("var must be >= 0 everywhere (0: measured exactly, inf: not measured), without NaN")
    if np.any(np.isinf(v[tree.leaves])):
        raise ValueError("var must be finite at every leaf (a leaf's own measurement is its only one)")
    return v


def _col(v, a):
    return v if a.ndim == 1 else v[:, None]


@dataclass
class _Passes:
    """The variance-only quantities, in the layout: α (weight of a node's own y in its subtree
    estimate z), V = Var(z − x), T (Σ of the children's V; internal nodes only, else 0), β = V/T(parent)
    (0 at roots), P = Var(x̂ − x)."""

    s: np.ndarray
    alpha: np.ndarray
    V: np.ndarray
    T: np.ndarray
    beta: np.ndarray
    P: np.ndarray = field(repr=False)


def _variance_passes(tree: Tree, s: np.ndarray) -> _Passes:
    N = tree.size
    alpha, V, T = np.ones(N), s.copy(), np.zeros(N)
    for k in range(tree.n_levels - 2, -1, -1):             # bottom-up: subtree variances
        idx = tree.block(k).start + tree.internal(k)
        Tk = tree.sum_children(k, V)
        sk = s[idx]
        with np.errstate(invalid="ignore", divide="ignore"):
            a = np.where(np.isinf(sk), 0.0, np.where(sk + Tk > 0, Tk / (sk + Tk), 1.0))
            vk = np.where(np.isinf(sk), Tk, np.where(sk + Tk > 0, sk * Tk / (sk + Tk), 0.0))
        alpha[idx], V[idx], T[idx] = a, vk, Tk
    beta = np.zeros(N)
    P = V.copy()
    for k in range(tree.n_levels - 1):                      # top-down: β and the final variances
        b = tree.block(k + 1)
        pl = tree.block(k).start + tree.parent_local(k)
        Tp = T[pl]
        with np.errstate(invalid="ignore", divide="ignore"):
            bk = np.where(Tp > 0, V[b] / Tp, 0.0)
        beta[b] = bk
        # x̂_c − x_c = r_c + β_c (x̂_p − x_p), r_c = e_c − β_c E_p uncorrelated with the rest
        P[b] = V[b] * (1.0 - bk) + bk**2 * P[pl]
    return _Passes(s, alpha, V, T, beta, np.maximum(P, 0.0))


def _forward(tree: Tree, ps: _Passes, y: np.ndarray) -> np.ndarray:
    z = np.where(_col(np.isinf(ps.s), y), 0.0, y)          # an unmeasured node's y is never used
    S = np.zeros_like(z)
    for k in range(tree.n_levels - 2, -1, -1):
        idx = tree.block(k).start + tree.internal(k)
        Sk = tree.sum_children(k, z)
        a = _col(ps.alpha[idx], z)
        S[idx] = Sk
        z[idx] = a * z[idx] + (1 - a) * Sk
    x = z.copy()
    for k in range(tree.n_levels - 1):
        b = tree.block(k + 1)
        pl = tree.block(k).start + tree.parent_local(k)
        x[b] = z[b] + _col(ps.beta[b], z) * (x[pl] - S[pl])
    return x


def _adjoint(tree: Tree, ps: _Passes, xbar: np.ndarray) -> np.ndarray:
    xb = xbar.copy()
    zb = np.zeros_like(xb)
    for k in range(tree.n_levels - 2, -1, -1):            # the top-down pass reversed: deepest first
        b = tree.block(k + 1)
        idx = tree.block(k).start + tree.internal(k)
        u = tree.reduce_children(k, _col(ps.beta[b], xb) * xb[b])  # Σ_c β_c x̄_c per internal parent
        full = np.zeros((tree.block(k).stop - tree.block(k).start,) + xb.shape[1:])
        full[tree.internal(k)] = u
        zb[b] += xb[b] - full[tree.parent_local(k)]
        xb[idx] += u
    r = tree.block(0)
    zb[r] += xb[r]
    yb = np.zeros_like(xb)
    for k in range(tree.n_levels - 1):                     # the bottom-up pass reversed: roots first
        s = tree.block(k)
        a = _col(ps.alpha[s], zb)
        yb[s] = a * zb[s]
        b = tree.block(k + 1)
        zb[b] += ((1 - a) * zb[s])[tree.parent_local(k)]
    last = tree.block(tree.n_levels - 1)
    yb[last] = zb[last]
    return yb


@dataclass
class GLSFit:
    r"""The consistent GLS fit of a tree of noisy totals, its exact variances, and linear queries.

    Built by :func:`gls`. Arrays are in the caller's node numbering.

    Parameters
    ----------
    tree, y, var, x, variance
        As the attributes below (made by :func:`gls`, not by users).

    Attributes
    ----------
    tree : Tree
    y : ndarray
        The measurements as given.
    var : ndarray
        Per-node measurement variance (0: exact, inf: not measured).
    x : ndarray
        The consistent fit (every internal node the sum of its children).
    variance : ndarray
        :math:`\mathrm{Var}(\hat x_v - x_v)` per node, exact for independent measurement errors of the stated variances.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt.hierarchy import Tree, gls
    >>> t = Tree([-1, 0, 0])
    >>> fit = gls(t, [10.0, 4.0, 5.0], 1.0)
    >>> fit.x.round(3).tolist(), fit.variance.round(3).tolist()
    ([9.667, 4.333, 5.333], [0.667, 0.667, 0.667])
    """

    tree: Tree
    y: np.ndarray
    var: np.ndarray
    x: np.ndarray
    variance: np.ndarray
    _passes: _Passes = field(repr=False)

    @property
    def se(self) -> np.ndarray:
        """The standard error of every node's fit, the square root of :attr:`variance`.

        Examples
        --------
        >>> from ldpopt.hierarchy import Tree, gls
        >>> gls(Tree([-1, 0, 0]), [10.0, 4.0, 5.0], 3.0).se.round(3).tolist()
        [1.414, 1.414, 1.414]
        """
        return np.sqrt(self.variance)

    def weights(self, w) -> np.ndarray:
        r""":math:`L^T w`: the weights on the raw measurements of the linear query :math:`w^T \hat x` (:math:`\hat x = L y`), by the
        reverse of the two passes, O(nodes · m).

        Parameters
        ----------
        w : array_like, shape (N,) or (N, m)
            One query per column, weights on the fitted nodes.

        Returns
        -------
        ndarray, the shape of ``w``

        Raises
        ------
        ValueError
            ``w`` without one row per node.

        Examples
        --------
        >>> import numpy as np
        >>> from ldpopt.hierarchy import Tree, gls
        >>> fit = gls(Tree([-1, 0, 0]), [10.0, 4.0, 5.0], 1.0)
        >>> u = fit.weights([0.0, 1.0, 0.0])
        >>> bool(np.isclose(u @ fit.y, fit.x[1]))
        True
        """
        w = np.array(w, dtype=np.float64)
        if w.shape[0] != self.tree.size or w.ndim > 2:
            raise ValueError(f"w must have one row per tree node ({self.tree.size}), got shape {w.shape}")
        t = self.tree
        return t.from_layout(_adjoint(t, self._passes, t.to_layout(w)))

    def cells(self, level: float = 0.95, *, labels=None, sigmas: float = FLAG_SIGMAS, floor: float = FLAG_FLOOR,
              engine: str = "pandas", like=None):
        r"""One row per node: estimate, se, ci_low, ci_high (the exact normal interval x̂ ± z·se; exact
        coverage for Gaussian noise), correction_sigma (:math:`(\hat x − y)/\sqrt{\mathrm{var}}`), flagged (the rule of
        :func:`ldpopt.uncertainty.cells.flag_corrections`) and residual_z: the correction over its own
        standard deviation under the model, :math:`(\hat x − y)/\sqrt{\mathrm{var} − \mathrm{variance}}` (GLS is a projection, so
        Var(y − x̂) = var − Var(x̂ − x)); NaN where that is 0 (a node the constraints cannot check).
        A correction can be small in units of σ yet many of its own SDs (a leaf among k siblings is
        checked only through their parent: its correction shrinks about k + 1 times, its SD :math:`\sqrt{k + 1}`).

        Parameters
        ----------
        level : float, default 0.95
            Nominal coverage.
        labels : sequence or None
            Node names (the index); None: 0..N−1.
        sigmas, floor : float
            The flag rule: |x̂ − y| > max(sigmas · σ, floor), floor in the values' units (default one).
        engine, like
            The table's dataframe engine (:func:`ldpopt.aggregate.frames.to_engine`; outside pandas
            the index is a leading ``cell`` column).

        Returns
        -------
        pandas.DataFrame, or a frame of ``engine``

        Raises
        ------
        ValueError
            A fit of several columns, or what :func:`~ldpopt.uncertainty.cells.cell_frame` refuses.

        Examples
        --------
        >>> from ldpopt.hierarchy import Tree, gls
        >>> gls(Tree([-1, 0, 0]), [10.0, 4.0, 5.0], 1.0).cells().round(2)
           estimate    se  ci_low  ci_high  correction_sigma  flagged  residual_z
        0      9.67  0.82    8.07    11.27             -0.33    False       -0.58
        1      4.33  0.82    2.73     5.93              0.33    False        0.58
        2      5.33  0.82    3.73     6.93              0.33    False        0.58
        """
        if self.x.ndim != 1:
            raise ValueError("cells needs a fit of one column (fit each measurement vector by itself)")
        tab = cell_frame(self.x, self.se, self.y, np.sqrt(self.var), level=level, labels=labels,
                         sigmas=sigmas, floor=floor)
        s = np.where(np.isinf(self.var), 0.0, self.var)
        rv = s - self.variance
        ok = rv > 1e-12 * s
        with np.errstate(invalid="ignore", divide="ignore"):
            tab["residual_z"] = np.where(ok, (self.x - self.y) / np.sqrt(np.where(ok, rv, 1.0)), np.nan)
        if engine == "pandas" and like is None:
            return tab
        from ..aggregate.frames import to_engine  # pyarrow, loaded only when another engine is asked for

        return to_engine(tab, engine, like=like)

    def query_variance(self, w, covariance=None) -> float | np.ndarray:
        r""":math:`\mathrm{Var}(w^T \hat x)` for each column w: :math:`Σ_v \mathrm{var}_v (L^T w)_v^2` for independent measurements, or
        ``covariance(u)`` = :math:`u^T \mathrm{Cov}(y)\, u` (column-wise) for a noise source whose measurements
        correlate (e.g. one frequency oracle's values within a level).

        Parameters
        ----------
        w : array_like, shape (N,) or (N, m)
            Queries on the fitted nodes.
        covariance : callable or None, default None
            ``covariance(u)`` for u of shape (N, m) → (m,) quadratic forms; None: the stated
            per-node variances, independent.

        Returns
        -------
        ndarray, shape (m,) (a float for a 1-D ``w``)

        Raises
        ------
        ValueError
            As :meth:`weights`.

        Examples
        --------
        >>> import numpy as np
        >>> from ldpopt.hierarchy import Tree, gls
        >>> fit = gls(Tree([-1, 0, 0]), [10.0, 4.0, 5.0], 1.0)
        >>> bool(np.isclose(fit.query_variance(np.eye(3)[1]), fit.variance[1]))
        True
        """
        u = self.weights(w)
        u2 = u if u.ndim == 2 else u[:, None]
        if covariance is None:
            s = np.where(np.isinf(self.var), 0.0, self.var)
            out = (s[:, None] * u2**2).sum(axis=0)
        else:
            out = np.asarray(covariance(u2), dtype=np.float64).reshape(-1)
        return float(out[0]) if u.ndim == 1 else out


def gls(tree: Tree, y, var) -> GLSFit:
    r"""The generalised least-squares fit of noisy node totals under the tree's equalities (every
    internal node = the sum of its children), weights 1/var, in O(nodes) time and memory.

    Two passes over the depths (Hay, Rastogi, Miklau & Suciu, VLDB 2010, §3, generalised to any
    fan-out and any per-node variance as in Cumings-Menon, *Least Squares Estimation for
    Hierarchical Data*, arXiv 2404.13164): bottom-up, each node's subtree estimate z combines its own
    measurement with the sum S of its children's by inverse-variance weighting, with variance
    :math:`V = (1/\mathrm{var} + 1/T)^{-1}`, :math:`T = Σ_{\mathrm{children}} V`; top-down, :math:`\hat x_{\mathrm{root}} = z_{\mathrm{root}}` and each child takes
    :math:`\hat x_c = z_c + (V_c/T_p)(\hat x_p - S_p)`. The exact variances follow the same passes:
    :math:`\mathrm{Var}(\hat x_c - x_c) = V_c(1 - V_c/T_p) + (V_c/T_p)^2 \mathrm{Var}(\hat x_p - x_p)`. This is the unconstrained GLS
    (the best linear unbiased estimate for independent errors): a negative or non-integer fit is
    possible; for f ≥ 0 or integer invariants state the tree as a ``Problem`` (:meth:`Tree.groups`
    gives its :class:`~ldpopt.problems.Hierarchy`).

    Parameters
    ----------
    tree : Tree
        The layout (:class:`Tree`).
    y : array_like, shape (N,) or (N, m)
        Measurements per node (the caller's numbering); several columns are fitted at once. Entries
        of unmeasured nodes (var = inf) are ignored.
    var : float or array_like
        The measurement variance: one for every node, one per depth, or one per node; 0 = exact,
        inf = not measured (internal nodes only).

    Returns
    -------
    GLSFit

    Raises
    ------
    ValueError
        ``y`` or ``var`` of the wrong shape, a negative or NaN variance, an infinite variance at a
        leaf, or a non-finite measurement at a measured node.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt.hierarchy import Tree, gls
    >>> t = Tree([-1, 0, 0, 1, 1, 1])                # leaves at depths 1 and 2
    >>> fit = gls(t, [30.0, 22.0, 9.0, 6.0, 7.0, 8.0], [4.0, 1.0, 1.0, 2.0, 2.0, 2.0])
    >>> bool(np.isclose(fit.x[0], fit.x[1] + fit.x[2])), bool(np.isclose(fit.x[1], fit.x[3:].sum()))
    (True, True)
    """
    s = _node_var(tree, var)
    yy = np.asarray(y, dtype=np.float64)
    if yy.shape[0] != tree.size or yy.ndim > 2:
        raise ValueError(f"y must have one row per tree node ({tree.size}), got shape {yy.shape}")
    meas = _col(np.isfinite(s), yy)
    if not np.all(np.isfinite(np.where(meas, yy, 0.0))):
        raise ValueError("y must be finite at every measured node (var < inf)")
    sl = tree.to_layout(s)
    ps = _variance_passes(tree, sl)
    xl = _forward(tree, ps, tree.to_layout(yy))
    return GLSFit(tree=tree, y=yy, var=s, x=tree.from_layout(xl), variance=tree.from_layout(ps.P), _passes=ps)
