"""Ordinal domains: the :class:`Monotone` constraint and its closed form with CLS on the simplex.
Notes: docs/notes/problems.md, "ldpopt.problems.constraints.order".
"""

from __future__ import annotations

import numbers
from typing import ClassVar

import numpy as np
import scipy.sparse as sp

from ..registry import Kind, ValueKey, register_constraint
from .base import LinearConstraint, _indices

__all__ = ["Monotone", "isotonic", "project_monotone_simplex"]

_DIRECTIONS = ("nonincreasing", "nondecreasing")


def _direction(direction) -> str:
    if direction not in _DIRECTIONS:
        raise ValueError(f"direction must be one of {_DIRECTIONS}, got {direction!r}")
    return direction


def isotonic(y, direction: str = "nonincreasing") -> np.ndarray:
    r"""Least-squares isotonic regression of y along its index (pool-adjacent-violators, scipy's
    compiled ``scipy.optimize.isotonic_regression``): :math:`\mathrm{argmin}_g \lVert g - y \rVert_2` over g monotone.

    Parameters
    ----------
    y : array_like (d,)
        Finite values.
    direction : {"nonincreasing", "nondecreasing"}, default "nonincreasing"

    Returns
    -------
    ndarray (d,)

    Raises
    ------
    ValueError
        ``y`` not a finite 1-D array, or an unknown ``direction``.

    Examples
    --------
    >>> from ldpopt.problems import isotonic
    >>> isotonic([0.3, 0.1, 0.2, 0.4]).round(4), isotonic([0.3, 0.1, 0.2, 0.4], "nondecreasing")
    (array([0.3   , 0.2333, 0.2333, 0.2333]), array([0.2, 0.2, 0.2, 0.4]))
    """
    from scipy.optimize import isotonic_regression

    y = np.asarray(y, dtype=np.float64)
    if y.ndim != 1 or not np.all(np.isfinite(y)):
        raise ValueError("y must be a finite 1-D array")
    if y.size == 0:
        return y.copy()
    return isotonic_regression(y, increasing=_direction(direction) == "nondecreasing").x


def project_monotone_simplex(y, direction: str = "nonincreasing", order=None) -> np.ndarray:
    r""":math:`\mathrm{argmin}_f \lVert f - y \rVert_2` s.t. :math:`f ≥ 0, Σ f = 1` and f monotone along ``order`` (None: 0, 1, …, d−1;
    else a list of distinct indices, a chain over part of the domain; the other values are free).

    This is CLS (Wang et al. §3.5) with an extra :class:`Monotone` constraint: the simplex projection
    of the isotonic regression (module docstring). O(d log d): PAV is O(d), the projection sorts.

    Parameters
    ----------
    y : array_like (d,)
        The point to project (the raw estimate f̃ for CLS).
    direction : {"nonincreasing", "nondecreasing"}, default "nonincreasing"
    order : array_like of int or None, default None
        The chain; None: the whole domain in index order.

    Returns
    -------
    ndarray (d,)
        On the simplex and monotone along ``order``.

    Raises
    ------
    ValueError
        ``y`` not a finite 1-D array, an unknown ``direction``, or bad indices in ``order``.

    Examples
    --------
    >>> from ldpopt.problems import project_monotone_simplex
    >>> project_monotone_simplex([0.5, 0.1, 0.3, 0.1]).round(4)
    array([0.5, 0.2, 0.2, 0.1])
    """
    from ...methods.normalize import project_simplex

    y = np.asarray(y, dtype=np.float64)
    if y.ndim != 1 or not np.all(np.isfinite(y)):
        raise ValueError("y must be a finite 1-D array")
    g = y.copy()
    if order is None:
        g = isotonic(y, direction)
    else:
        idx = _indices(order, y.shape[0], "order")
        g[idx] = isotonic(y[idx], direction)
    return project_simplex(g)


@register_constraint
class Monotone(LinearConstraint):
    r"""f monotone over an order on the domain (ordinal data), one linear inequality per cover pair.

    ``order``: None (the natural order 0 < 1 < … < d−1), or a list of distinct indices [a₀, a₁, …]
    (a chain; values not listed are unconstrained). ``pairs``: a partial order instead, a list of
    (a, b) meaning "a comes before b". ``direction="nonincreasing"``: :math:`f_a ≥ f_b` for each pair
    (a before b); ``"nondecreasing"``: :math:`f_a ≤ f_b`.

    Built as :math:`D f ≤ 0` with one row per pair (row :math:`e_b - e_a` for nonincreasing, :math:`e_a - e_b` for
    nondecreasing); the dual ``"<name>"`` is y ≥ 0 with one entry per pair, in the order given (for
    a chain: pair i is :math:`(a_i, a_{i+1})`). Residual: :math:`\max (D f)_+` in frequency units.

    :meth:`project` is the closed form of CLS on the simplex with this constraint for a chain
    (:func:`project_monotone_simplex`).

    Parameters
    ----------
    direction : {"nonincreasing", "nondecreasing"}, default "nonincreasing"
    order : array_like of int or None, default None
        A chain of distinct indices; None: 0 < 1 < … < d−1.
    pairs : array_like (m, 2) of int or None, default None
        A partial order instead of ``order``: (a, b) means a comes before b.
    name : str or None, default None
        The name of its constraint and dual; None: ``"monotone"``.

    Raises
    ------
    ValueError
        Both ``order`` and ``pairs``, an unknown ``direction``, pairs not (m, 2) integers or
        relating a value to itself, or (at :meth:`build`) indices outside [0, d).

    Examples
    --------
    >>> import numpy as np
    >>> import ldpopt
    >>> from ldpopt.problems import Monotone, Simplex
    >>> est = ldpopt.oracles.get("grr", 1.0, 4).estimate(np.array([30_000, 20_000, 35_000, 15_000]), 100_000)
    >>> sol = ldpopt.Problem(est, constraints=[Simplex(), Monotone()]).solve()
    >>> sol.f.round(4), bool(np.abs(sol.f - Monotone().project(est.f_tilde)).max() < 1e-8)
    (array([0.3888, 0.3056, 0.3056, 0.    ]), True)
    """

    default_name = "monotone"
    file_type = "monotone"
    file_kind = Kind("f ordered along a chain (labels | positions) or pairs a before b (label_pairs | position_pairs); "
                     "direction nonincreasing (default) or nondecreasing; default chain: the table's order", (),
                     ("direction",), (ValueKey("labels", "positions", "list", False),
                                      ValueKey("label_pairs", "position_pairs", "pairs", False)))
    file_example: ClassVar[dict] = {"type": "monotone", "positions": [0, 1, 2], "direction": "nonincreasing"}
    @classmethod
    def from_file(cls, entry):
        chain, pairs = entry.named
        pairs = None if pairs is None else np.asarray(pairs, dtype=np.int64).reshape(-1, 2)
        return [cls(entry.get("direction", "nonincreasing"), order=chain, pairs=pairs)]

    def linear_pieces(self, d, max_rows):
        n_rows = (self.pairs.shape[0] if self.pairs is not None else
                  d - 1 if self.order is None else np.size(self.order) - 1)
        if n_rows > max_rows:  # a long chain is left out (the feasibility module's docstring)
            return [], False
        return [("row", self.matrix(d), 0.0, True, 0)], True

    def rows(self, d):
        D = self.matrix(d)
        return D, np.zeros(D.shape[0]), "<="

    def compile_into(self, rows, keys, d):
        if self.pairs is not None:
            rows.not_covered("Monotone(pairs=...) (a partial order) is not covered by the structured solver: use "
                             "the cvxpy route")
        a, b = self.edges(d)
        order = np.append(a, b[-1])
        flip = self.direction == "nondecreasing"
        rows.set_chain(self._add_rows(rows, keys[0], d), order[::-1] if flip else order, flip)
        rows.others += 1

    def __init__(self, direction: str = "nonincreasing", order=None, pairs=None, name: str | None = None):
        super().__init__(name)
        self.direction = _direction(direction)
        if order is not None and pairs is not None:
            raise ValueError("give order= (a chain) or pairs= (a partial order), not both")
        self.order = order
        self.pairs = None
        if pairs is not None:
            arr = np.asarray(pairs)
            if arr.ndim != 2 or arr.shape[1] != 2 or arr.shape[0] == 0 or arr.dtype.kind not in "iu":
                raise ValueError(f"pairs must be a non-empty list of (a, b) integer index pairs, got shape "
                                 f"{arr.shape} and dtype {arr.dtype}")
            same = np.flatnonzero(arr[:, 0] == arr[:, 1])
            if same.size:
                raise ValueError(f"pairs[{int(same[0])}] = {tuple(arr[same[0]].tolist())} relates a value to itself")
            self.pairs = arr.astype(np.int64)
        if order is not None and (isinstance(order, numbers.Integral) or np.ndim(order) != 1):
            raise ValueError(f"order must be a list of indices, got {order!r}")

    def edges(self, d: int) -> tuple[np.ndarray, np.ndarray]:
        """(a, b) arrays: a comes before b, one entry per inequality.

        Parameters
        ----------
        d : int
            The domain size.

        Returns
        -------
        (ndarray of int, ndarray of int)

        Raises
        ------
        ValueError
            Pairs outside [0, d), or an order of fewer than 2 values.

        Examples
        --------
        >>> from ldpopt.problems import Monotone
        >>> Monotone().edges(4)
        (array([0, 1, 2]), array([1, 2, 3]))
        """
        if self.pairs is not None:
            if np.any((self.pairs < 0) | (self.pairs >= d)):
                bad = int(self.pairs[(self.pairs < 0) | (self.pairs >= d)][0])
                raise ValueError(f"pairs must lie in [0, {d}), got {bad}")
            return self.pairs[:, 0], self.pairs[:, 1]
        chain = np.arange(d) if self.order is None else _indices(self.order, d, "order")
        if chain.shape[0] < 2:
            raise ValueError("order must list at least 2 values")
        return chain[:-1], chain[1:]

    def matrix(self, d: int) -> sp.csr_matrix:
        """D (pairs × d) with D f ≤ 0 the constraint (see the class docstring).

        Parameters
        ----------
        d : int
            The domain size.

        Returns
        -------
        scipy.sparse.csr_matrix (pairs × d)

        Examples
        --------
        >>> from ldpopt.problems import Monotone
        >>> Monotone().matrix(3).toarray()
        array([[-1.,  1.,  0.],
               [ 0., -1.,  1.]])
        """
        a, b = self.edges(d)
        m = a.shape[0]
        sign = 1.0 if self.direction == "nonincreasing" else -1.0
        rows = np.concatenate([np.arange(m), np.arange(m)])
        cols = np.concatenate([b, a])
        vals = np.concatenate([np.full(m, sign), np.full(m, -sign)])
        return sp.csr_matrix((vals, (rows, cols)), shape=(m, d))

    def project(self, y) -> np.ndarray:
        """The CLS-on-the-simplex solution with this constraint (a chain only):
        :func:`project_monotone_simplex`.

        Parameters
        ----------
        y : array_like (d,)
            The point to project.

        Returns
        -------
        ndarray (d,)

        Raises
        ------
        ValueError
            The constraint was given ``pairs=`` (a partial order), or ``y`` is bad.

        Examples
        --------
        >>> from ldpopt.problems import Monotone
        >>> Monotone(order=[1, 2]).project([0.5, 0.1, 0.3, 0.1]).round(4)
        array([0.5, 0.2, 0.2, 0.1])
        """
        if self.pairs is not None:
            raise ValueError("Monotone.project needs a total order (order=), not pairs=: solve a partial "
                             "order with Problem(estimate, 'cls', [Simplex(), Monotone(pairs=...)])")
        return project_monotone_simplex(y, self.direction, self.order)

    def __repr__(self) -> str:
        what = "natural order" if self.order is None and self.pairs is None else (
            f"{len(self.pairs)} pairs" if self.pairs is not None else "a chain")
        return f"Monotone({self.direction}, {what}, name={self.name!r})"
