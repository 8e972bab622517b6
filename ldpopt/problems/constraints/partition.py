"""Known totals of disjoint groups of values, given as dicts keyed by the group's name.

The NDSS 2020 Emoji experiment's category totals (Wang et al., arXiv §6 / NDSS §V) are one
:class:`~.constraints.SubsetSum` per category; :class:`PartitionTotals` states them all at once,
``A f = t`` with one row per group, and checks what a list of SubsetSums cannot: that no value is
in two groups (an error naming both keys and the value). :class:`LinearEquality` states general
equality rows A f = rhs given as data, the same kind of row block without the named groups.
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np
import scipy.sparse as sp

from ..registry import Kind, ValueKey, register_constraint
from .base import LinearConstraint, _real

__all__ = ["LinearEquality", "PartitionTotals"]


@register_constraint
class PartitionTotals(LinearConstraint):
    r""":math:`Σ_{v ∈ G_k} f_v = t_k` for every key k (G = ``groups``, t = ``totals``); the groups must be disjoint (they need not
    cover the domain).

    ``groups``: dict key → integer indices (non-empty, no repeats); ``totals``: dict key → number,
    with the same keys. ``d`` (optional) checks the indices at once instead of when the problem is
    built. The dual ``"<name>"`` (default ``"partition"``) is a vector in the order of ``keys``;
    :meth:`by_key` turns it into a dict. Residual: :math:`\max_k |Σ_{v ∈ G_k} f_v - t_k|`.

    Parameters
    ----------
    groups : dict
        Key → integer indices (non-empty, no repeats, disjoint across keys).
    totals : dict
        Key → total, the same keys as ``groups``.
    d : int or None, default None
        The domain size, to check the indices now (None: at :meth:`build`).
    name : str or None, default None
        The name of its constraint and dual; None: ``"partition"``.

    Raises
    ------
    ValueError
        ``groups`` or ``totals`` not a dict, keys that do not match, a group empty, negative,
        repeating a value or overlapping another, or an index outside [0, d).

    Examples
    --------
    >>> import numpy as np
    >>> import ldpopt
    >>> from ldpopt.problems import NonNegative, PartitionTotals
    >>> est = ldpopt.oracles.get("grr", 1.0, 4).estimate(np.array([46_000, 30_000, 15_000, 9_000]), 100_000)
    >>> pt = PartitionTotals({"low": [0, 1], "high": [2, 3]}, {"low": 0.7, "high": 0.3})
    >>> sol = ldpopt.Problem(est, constraints=[NonNegative(), pt]).solve()
    >>> sol.f.round(4), {k: round(v, 3) for k, v in pt.by_key(sol.duals["partition"]).items()}
    (array([0.6162, 0.0838, 0.2498, 0.0502]), {'low': 0.665, 'high': -0.665})
    """

    default_name = "partition"
    states_total = True
    file_type = "partition"
    file_kind = Kind("disjoint groups with known totals: label_groups | position_groups = {name = [values]}, "
                     "totals = {name = total}", ("totals",), (), (ValueKey("label_groups", "position_groups", "table", True),))
    file_example: ClassVar[dict] = {"type": "partition", "position_groups": {"low": [0, 1], "high": [2, 3]},
                    "totals": {"low": 0.3, "high": 0.2}}
    @classmethod
    def from_file(cls, entry):
        totals = entry.get("totals")
        if not isinstance(totals, dict):
            raise entry.error(f"totals must be a table/object keyed by group name, got {totals!r}")
        numbers = {}
        for k, v in totals.items():
            if not isinstance(v, (int, float)) or isinstance(v, bool):
                raise entry.error(f"totals.{k} must be a number, got {v!r}")
            numbers[k] = float(v)
        return [cls(entry.named[0], numbers, d=entry.d)]

    def rows(self, d):
        return self.matrix(d), self.totals, "=="  # one == row per group, dual in key order

    def __init__(self, groups: dict, totals: dict, d: int | None = None, name: str | None = None):
        super().__init__(name)
        if not isinstance(groups, dict) or not groups:
            raise ValueError(f"groups must be a non-empty dict key -> indices, got {type(groups).__name__}")
        if not isinstance(totals, dict):
            raise ValueError(f"totals must be a dict key -> total, got {type(totals).__name__}")
        missing = [k for k in groups if k not in totals]
        extra = [k for k in totals if k not in groups]
        if missing:
            raise ValueError(f"totals has no entry for group {missing[0]!r}")
        if extra:
            raise ValueError(f"totals[{extra[0]!r}] names no group (groups: {list(groups)})")
        self.keys = list(groups)
        self.totals = np.array([_real(totals[k], f"totals[{k!r}]") for k in self.keys])
        self.groups = {}
        for k in self.keys:
            arr = np.atleast_1d(np.asarray(groups[k]))
            if arr.ndim != 1 or arr.size == 0 or arr.dtype.kind not in "iu":
                raise ValueError(f"groups[{k!r}] must be a non-empty list of integer indices, got {groups[k]!r}")
            if np.any(arr < 0):
                raise ValueError(f"groups[{k!r}]: index {int(arr[arr < 0][0])} is negative")
            u, c = np.unique(arr, return_counts=True)
            if np.any(c > 1):
                raise ValueError(f"groups[{k!r}] lists value {int(u[c > 1][0])} twice")
            self.groups[k] = arr.astype(np.int64)
        allidx = np.concatenate(list(self.groups.values()))
        owner = np.repeat(np.arange(len(self.keys)), [g.shape[0] for g in self.groups.values()])
        order = np.argsort(allidx, kind="stable")
        dup = np.flatnonzero(np.diff(allidx[order]) == 0)
        if dup.size:
            i, j = order[dup[0]], order[dup[0] + 1]
            raise ValueError(f"groups overlap: value {int(allidx[i])} is in groups[{self.keys[owner[i]]!r}] "
                             f"and groups[{self.keys[owner[j]]!r}] (partition totals need disjoint groups)")
        if d is not None:
            self._check_range(int(d))

    def _check_range(self, d: int) -> None:
        for k, g in self.groups.items():
            if np.any(g >= d):
                raise ValueError(f"groups[{k!r}]: index {int(g[g >= d][0])} is out of range [0, {d})")

    def matrix(self, d: int) -> sp.csr_matrix:
        """A (groups × d), one row of ones per group, in the order of ``keys``.

        Parameters
        ----------
        d : int
            The domain size.

        Returns
        -------
        scipy.sparse.csr_matrix (groups × d)

        Raises
        ------
        ValueError
            An index outside [0, d).

        Examples
        --------
        >>> from ldpopt.problems import PartitionTotals
        >>> PartitionTotals({"low": [0, 1], "high": [2, 3]}, {"low": 0.7, "high": 0.3}).matrix(4).toarray()
        array([[1., 1., 0., 0.],
               [0., 0., 1., 1.]])
        """
        self._check_range(d)
        gs = list(self.groups.values())
        rows = np.repeat(np.arange(len(gs)), [g.shape[0] for g in gs])
        cols = np.concatenate(gs)
        return sp.csr_matrix((np.ones(cols.shape[0]), (rows, cols)), shape=(len(gs), d))

    def by_key(self, values) -> dict:
        """A vector in the order of ``keys`` (e.g. ``Solution.duals[name]``) as a dict key → value.

        Parameters
        ----------
        values : array_like (groups,)
            One value per group.

        Returns
        -------
        dict
            Key → float.

        Raises
        ------
        ValueError
            Not one value per group.

        Examples
        --------
        >>> from ldpopt.problems import PartitionTotals
        >>> PartitionTotals({"low": [0, 1], "high": [2, 3]}, {"low": 0.7, "high": 0.3}).by_key([1.5, -2.0])
        {'low': 1.5, 'high': -2.0}
        """
        v = np.atleast_1d(np.asarray(values, dtype=np.float64))
        if v.shape != (len(self.keys),):
            raise ValueError(f"values must have one entry per group ({len(self.keys)}), got shape {v.shape}")
        return dict(zip(self.keys, v.tolist()))

    def __repr__(self) -> str:
        return f"PartitionTotals({len(self.keys)} groups: {self.keys[:3]}{'...' if len(self.keys) > 3 else ''})"


@register_constraint
class LinearEquality(LinearConstraint):
    """A f == rhs for a sparse matrix A (rows × d) given as data: general equality rows that no
    named constraint states, e.g. "two marginals agree on the attributes they share" over a vector
    that concatenates marginals (:mod:`ldpopt.multi`). ``matrix``: a scipy sparse matrix or a dense
    2-D array with d columns; ``rhs``: a scalar or one number per row (default 0). One dual vector,
    one entry per row, in row order. Residual: max_k |(A f)_k − rhs_k| (the structured solver, the
    certificate and the feasibility test read it as rows, like :class:`Hierarchy`'s H f = 0).

    Parameters
    ----------
    matrix : scipy sparse matrix or array_like (rows × d)
        A, finite, at least one row.
    rhs : float or array_like (rows,), default 0.0
        The right-hand side.
    name : str or None, default None
        The name of its constraint and dual; None: ``"linear"``.

    Raises
    ------
    ValueError
        A not 2-D, empty or not finite; ``rhs`` not finite or not one per row; at :meth:`build`,
        A without d columns.

    Examples
    --------
    >>> import numpy as np
    >>> import ldpopt
    >>> from ldpopt.problems import LinearEquality, Simplex
    >>> est = ldpopt.oracles.get("grr", 1.0, 4).estimate(np.array([46_000, 30_000, 15_000, 9_000]), 100_000)
    >>> ldpopt.Problem(est, constraints=[Simplex(), LinearEquality([[1, -1, 0, 0]])]).solve().f.round(4)   # f_0 = f_1
    array([0.5, 0.5, 0. , 0. ])
    """

    default_name = "linear"
    file_type = "linear"
    file_kind = Kind("A f = rhs, general equality rows (e.g. marginals that must agree): matrix = [[...], ...] (one row "
                     "per equation, one column per row of the counts file) or matrix_file = \"A.npz\" "
                     "(scipy.sparse.save_npz, or a numpy .npy; relative to the problem file's folder); rhs a number "
                     "or one per row (default 0)", (), ("matrix", "matrix_file", "rhs", "name"))
    file_example: ClassVar[dict] = {"type": "linear", "matrix": [[1, -1, 0, 0, 0, 0]], "rhs": 0.0}
    @classmethod
    def from_file(cls, entry):
        """An entry's matrix inline (``matrix``) or from a file next to the problem file (``matrix_file``).

        Parameters
        ----------
        entry : FileEntry
            The ``[[constraints]]`` entry of type ``"linear"``.

        Returns
        -------
        list of LinearEquality
            One constraint.

        Raises
        ------
        Exception
            ``entry.error`` with a one-line message: neither or both of ``matrix`` and
            ``matrix_file``, rows of the wrong length, a file that cannot be read, or ``rhs`` not one per row.

        Examples
        --------
        >>> from pathlib import Path
        >>> from ldpopt.problems import LinearEquality
        >>> from ldpopt.problems.registry import FileEntry
        >>> LinearEquality.from_file(FileEntry({"type": "linear", "matrix": [[1, -1, 0, 0]]}, 4, [], Path("."),
        ...                                    lambda key: "", ValueError))
        [LinearEquality(1 rows, name='linear')]
        """
        d = entry.d
        if ("matrix" in entry) == ("matrix_file" in entry):
            raise entry.error("linear needs exactly one of matrix (rows inline) and matrix_file (a .npz or .npy file)")
        if "matrix" in entry:
            rows = entry.get("matrix")
            if (not isinstance(rows, list) or not rows or not all(isinstance(r, list) for r in rows)
                    or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for r in rows for v in r)):
                raise entry.error(f"matrix must be a non-empty list of rows of numbers, got {rows!r}")
            bad = [i for i, r in enumerate(rows) if len(r) != d]
            if bad:
                raise entry.error(f"matrix row {bad[0]} has {len(rows[bad[0]])} entries; every row needs one per row "
                                  f"of the counts file (d = {d})")
            A = np.asarray(rows, dtype=np.float64)
        else:
            A = _matrix_file(entry.get("matrix_file"), entry)
            if A.shape[1] != d:
                raise entry.error(f"matrix_file {entry.get('matrix_file')!r} has {A.shape[1]} columns; it needs one per "
                                  f"row of the counts file (d = {d})")
        rhs = entry.number("rhs", 0.0, per_value=True)
        if isinstance(rhs, np.ndarray) and rhs.shape[0] != A.shape[0]:
            raise entry.error(f"rhs has {rhs.shape[0]} entries for {A.shape[0]} matrix rows: give one number, or one "
                              "per row")
        return [cls(A, rhs, name=entry.get("name"))]

    def rows(self, d):
        return self.matrix(d), self.rhs, "=="  # general == rows, dual in row order

    def __init__(self, matrix, rhs=0.0, name: str | None = None):
        super().__init__(name)
        if not sp.issparse(matrix):
            arr = np.asarray(matrix, dtype=np.float64)
            if arr.ndim != 2:
                raise ValueError(f"matrix must be 2-D (rows × d), got shape {arr.shape}")
            matrix = arr
        A = sp.csr_matrix(matrix, dtype=np.float64)
        if A.shape[0] < 1:
            raise ValueError("matrix must have at least one row")
        if not np.all(np.isfinite(A.data)):
            raise ValueError("matrix must be finite")
        b = np.broadcast_to(np.asarray(rhs, dtype=np.float64), (A.shape[0],)) if np.ndim(rhs) == 0 else \
            np.asarray(rhs, dtype=np.float64)
        if b.shape != (A.shape[0],) or not np.all(np.isfinite(b)):
            raise ValueError(f"rhs must be a finite scalar or one number per row ({A.shape[0]}), got shape {b.shape}")
        self._A, self.rhs = A, np.array(b)

    def matrix(self, d: int) -> sp.csr_matrix:
        """A, after checking it has d columns.

        Parameters
        ----------
        d : int
            The domain size.

        Returns
        -------
        scipy.sparse.csr_matrix (rows × d)

        Raises
        ------
        ValueError
            A does not have d columns.

        Examples
        --------
        >>> from ldpopt.problems import LinearEquality
        >>> LinearEquality([[1, -1, 0, 0]]).matrix(4).toarray()
        array([[ 1., -1.,  0.,  0.]])
        """
        if self._A.shape[1] != d:
            raise ValueError(f"matrix must have d = {d} columns, got {self._A.shape[1]}")
        return self._A

    def __repr__(self) -> str:
        return f"LinearEquality({self._A.shape[0]} rows, name={self.name!r})"


def _matrix_file(name, entry):
    """A matrix stored next to the problem file: scipy.sparse.save_npz (.npz) or numpy (.npy)."""
    if not isinstance(name, str) or not name.endswith((".npz", ".npy")):
        raise entry.error(f"matrix_file must name a .npz (scipy.sparse.save_npz) or .npy file, got {name!r}")
    path = entry.base / name
    if not path.is_file():
        raise entry.error(f"matrix_file {name!r}: no such file next to the problem file ({path})")
    try:
        A = sp.load_npz(path) if name.endswith(".npz") else np.load(path, allow_pickle=False)
    except (OSError, ValueError) as exc:
        raise entry.error(f"matrix_file {name!r} could not be read ({exc})") from None
    if np.ndim(A) != 2:
        raise entry.error(f"matrix_file {name!r} must hold a 2-D matrix, got shape {np.shape(A)}")
    return A
