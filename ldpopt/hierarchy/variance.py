"""Exact variance of range answers: flat, hierarchical (raw or consistent), from the true histogram.

Notes: docs/notes/python.md, "ldpopt.hierarchy.variance"."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..uncertainty.analytic import pair_parameters
from .collect import design
from .consistency import consistency_adjoint, level_slices
from .queries import _ab

__all__ = ["flat_range_variance", "fo_quadform", "hierarchical_range_variance", "range_matrix"]


def range_matrix(d: int, a, b) -> sp.csr_matrix:
    """R (queries × d) with row i the indicator of the inclusive range :math:`[a_i, b_i]`."""
    a, b = _ab(a, b, d)
    lens = b - a + 1
    rows = np.repeat(np.arange(a.shape[0]), lens)
    cols = np.arange(lens.sum()) - np.repeat(np.cumsum(lens) - lens, lens) + np.repeat(a, lens)
    return sp.csr_matrix((np.ones(cols.shape[0]), (rows, cols)), shape=(a.shape[0], d))


def fo_quadform(fo, f, n_k: int, N: int, W) -> np.ndarray:
    """Var(wᵀf̃) for each column w of W (m × Q) when ``fo`` collects n_k of N users (module notes)."""
    f = np.asarray(f, dtype=np.float64)
    W = np.asarray(W, dtype=np.float64).reshape(f.shape[0], -1)
    ab = pair_parameters(fo.estimate(np.zeros(fo.d), n_k))
    if ab is None:
        raise ValueError(f"oracle {fo.name!r}: the count covariance is not of the analytic form; no exact variance")
    a, b = ab
    p, q = fo.p, fo.q
    kap = 1.0 / (n_k * (p - q) ** 2)
    g = q * (1 - q) + f * (p - q) * (1 - p - q) - a - 2 * b * f
    w1, wf = W.sum(axis=0), f @ W
    out = kap * (g @ W**2 + a * w1**2 + 2 * b * w1 * wf)
    if n_k < N:
        out += (N - n_k) / ((N - 1) * n_k) * (f @ W**2 - wf**2)
    return out


def flat_range_variance(f, n: int, oracle: str, epsilon: float, a, b, **oracle_params) -> np.ndarray:
    r"""Var of the flat answer :math:`Σ_{v=a}^{b} \tilde f_v` (one oracle over the d leaves, all n users).

    Exact: the oracle's count covariance at n users (module notes), not only its diagonal.

    Parameters
    ----------
    f : array_like, shape (d,)
        True frequencies.
    n : int
        Number of users.
    oracle : str
        Registry name of the frequency oracle of every level (:func:`ldpopt.oracles.get`).
    epsilon : float
        Each user's ε.
    a, b : array_like of int
        Range ends, inclusive.
    **oracle_params
        Passed to the oracle.

    Returns
    -------
    ndarray
        One variance per range.

    Raises
    ------
    ValueError
        Bad ranges, or an oracle whose count covariance is not of the analytic form.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt import hierarchy
    >>> f = np.array([400, 300, 100, 100, 50, 30, 20, 0]) / 1000
    >>> from ldpopt.hierarchy.variance import flat_range_variance
    >>> flat_range_variance(f, 1000, "oue", 1.0, [0], [7]).round(6)
    array([0.030462])
    """
    from .. import oracles as _oracles

    f = np.asarray(f, dtype=np.float64)
    fo = _oracles.get(oracle, epsilon=epsilon, d=f.shape[0], **oracle_params)
    R = range_matrix(f.shape[0], a, b)
    return fo_quadform(fo, f, n, n, R.T.toarray())


def hierarchical_range_variance(f, n: int, oracle: str, epsilon: float, branching: int, a, b,
                                consistent: bool = True, **oracle_params) -> np.ndarray:
    """Var of the hierarchical histogram's answers to the ranges :math:`[a_i, b_i]` (true leaf frequencies
    ``f``, n users, :func:`.collect.collect`'s protocol): from the raw node estimates of each
    range's cover (``consistent=False``) or from the consistent estimate (any decomposition).

    Per level, the oracle's exact covariance at :math:`n_k` users plus the sampling covariance of the
    group (module notes), through :func:`consistency_adjoint` when ``consistent``.

    Parameters
    ----------
    f : array_like, shape (d,)
        True leaf frequencies.
    n : int
        Number of users.
    oracle : str
        Registry name of the frequency oracle of every level (:func:`ldpopt.oracles.get`).
    epsilon : float
        Each user's ε.
    branching : int
        B, the tree's fan-out.
    a, b : array_like of int
        Range ends, inclusive.
    consistent : bool, default True
        Answer from the consistent tree (True) or from the raw cover (False).
    **oracle_params
        Passed to the oracle.

    Returns
    -------
    ndarray
        One variance per range.

    Raises
    ------
    ValueError
        Bad ranges, too few users, or an oracle without the analytic covariance.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt import hierarchy
    >>> f = np.array([400, 300, 100, 100, 50, 30, 20, 0]) / 1000
    >>> from ldpopt.hierarchy.variance import hierarchical_range_variance
    >>> hierarchical_range_variance(f, 1000, "oue", 1.0, 2, [0, 0], [7, 3]).round(6)  # the whole domain is the root: 0
    array([0.      , 0.003557])
    """
    f = np.asarray(f, dtype=np.float64)
    tree, n_level, var, fos = design(f.shape[0], n, oracle, epsilon, branching, **oracle_params)
    a = np.atleast_1d(a)
    b = np.atleast_1d(b)
    U = tree.query_matrix(zip(a.tolist(), b.tolist())).T.toarray()
    W = consistency_adjoint(tree, U, var) if consistent else U
    ftree = tree.node_totals(f)
    lv = level_slices(tree)
    # sum() starts from the int 0, which the checker keeps in the type; the result is an array
    return np.asarray(sum(fo_quadform(fo, ftree[lv[k]], int(n_level[k]), n, W[lv[k]]) for k, fo in enumerate(fos)))
