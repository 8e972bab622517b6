"""Named, linear constraints on the frequency vector f (and user callables).
Notes: docs/notes/problems.md, "ldpopt.problems.constraints.base".
"""

from __future__ import annotations

import itertools
import math
import numbers
from collections.abc import Callable
from typing import ClassVar

import cvxpy as cp
import numpy as np
import scipy.sparse as sp

# Σ v correctly rounded (math.fsum's value), so a residual of 1e-15 is not rounding; vectorised
from ..._fsum import fsum as _fsum
from ..objectives.polyhedral import affine_bound
from ..registry import VALUES, FileEntry, Kind, register_constraint

__all__ = [
    "Box",
    "Constraint",
    "Fixed",
    "Hierarchy",
    "LinearConstraint",
    "NonNegative",
    "Simplex",
    "SimplexDroppedWarning",
    "SubsetSum",
    "SumTo",
    "UserConstraint",
    "as_constraint",
    "example_function",
    "warn_if_simplex_dropped",
]


def _real(value, name: str) -> float:
    # math.isfinite takes any Real (a Fraction too, which np.isfinite rejects with a TypeError)
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value):
        raise ValueError(f"{name} must be a finite real number, got {value!r}")
    return float(value)


def _neg(v: np.ndarray) -> float:
    """Largest amount by which v goes below 0."""
    return float(max(0.0, -float(np.min(v)))) if np.size(v) else 0.0


def _indices(indices, d: int, name: str) -> np.ndarray:
    """Integer indices or a boolean mask of length d → sorted unique int64 indices in [0, d)."""
    arr = np.asarray(indices)
    if arr.ndim == 0:
        arr = arr.reshape(1)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D indices or a boolean mask, got shape {arr.shape}")
    if arr.dtype.kind == "b":
        if arr.shape[0] != d:
            raise ValueError(f"{name} as a boolean mask must have length d = {d}, got {arr.shape[0]}")
        return np.flatnonzero(arr)
    if arr.size and arr.dtype.kind not in "iu":
        raise ValueError(f"{name} must be integer indices or a boolean mask, got dtype {arr.dtype}")
    arr = arr.astype(np.int64)
    if np.any((arr < 0) | (arr >= d)):
        bad = int(arr[(arr < 0) | (arr >= d)][0])
        raise ValueError(f"{name} must lie in [0, {d}), got {bad}")
    if arr.size and int(np.bincount(arr, minlength=d).max()) > 1:  # O(d): no sort (d = 10⁶ rows)
        raise ValueError(f"{name} must not repeat an index")
    return arr


class Constraint:
    """Base class: ``build(f, estimate)`` returns a list of ``(name, cvxpy constraint)``.

    What a constraint knows besides its cvxpy form, each optional (the defaults say "unknown": the
    caller then uses cvxpy, or the cvxpy route):

    * ``dual_keys()``: the names :meth:`build` gives, without building;
    * ``residuals(f, estimate)``, ``g(k, f, d)``: its violation and its g(f) in numpy;
    * ``jacobian_t(k, y, d)`` / ``add_jacobian_t``: :math:`∇g_k^T y` for ldpopt's stationarity check;
    * ``compile_into(rows, keys, d)``: its bounds and rows in the structured solver's form
      (:class:`~ldpopt.problems.dual.structure.StructureRows`);
    * ``implies_nonnegative``, ``implies_at_most_one``, ``states_total``: what it implies about f;
    * ``lazy_build``: :meth:`build` cannot fail, so ``Problem`` may defer it;
    * ``file_type``, ``file_kind``, ``from_file``, ``file_example``: its problem-file entry
      (registered types only, :func:`~.registry.register_constraint`).

    Parameters
    ----------
    name : str or None, default None
        The name of its cvxpy constraint(s) and dual(s); None: the class's ``default_name``.

    Raises
    ------
    ValueError
        ``name`` given but not a non-empty string.

    Examples
    --------
    >>> import cvxpy as cp
    >>> from ldpopt.problems import SumTo
    >>> c = SumTo(0.5, name="half")
    >>> c.name, c.dual_keys(), [key for key, _ in c.build(cp.Variable(4), None)]
    ('half', ['half'], ['half'])
    """

    default_name = "constraint"
    #: whether :meth:`build` cannot fail and its names do not depend on the estimate (``Problem``
    #: then builds cvxpy's problem only when a cvxpy solver needs it)
    lazy_build = False
    #: the problem-file ``type`` and the keys an entry gives (registered types)
    file_type: str | None = None
    file_kind: Kind | None = None
    #: an entry of this type for a domain of 6 values (the docs and the conformance checks)
    file_example: ClassVar[dict | None] = None

    @classmethod
    def from_file(cls, entry: FileEntry) -> list:
        """The constraint objects one problem-file entry of this type states.

        Parameters
        ----------
        entry : FileEntry
            The ``[[constraints]]`` entry (:class:`~.registry.FileEntry`: its keys, d, the rows it names).

        Returns
        -------
        list of Constraint

        Raises
        ------
        NotImplementedError
            The type has no problem-file form (the base class; a user type that is not registered).
        Exception
            ``entry.error`` (the problem file's error class) for a bad key, with a one-line message.

        Examples
        --------
        >>> from pathlib import Path
        >>> from ldpopt.problems import SumTo
        >>> from ldpopt.problems.registry import FileEntry
        >>> SumTo.from_file(FileEntry({"type": "sum", "total": 0.5}, 4, [], Path("."), lambda key: "", ValueError))
        [SumTo(name='sum')]
        """
        raise NotImplementedError(f"{cls.__name__} has no problem-file form")

    @property
    def implies_nonnegative(self) -> bool:
        """Whether it implies f ≥ 0 everywhere.

        Examples
        --------
        >>> from ldpopt.problems import Box, SumTo
        >>> Box(lower=0.0).implies_nonnegative, Box(lower=-1.0).implies_nonnegative, SumTo().implies_nonnegative
        (True, False, False)
        """
        return False

    def is_nonnegativity(self, k: int) -> bool:
        """Whether the k-th constraint :meth:`build` gives is f ≥ 0 itself (g = −f).

        Parameters
        ----------
        k : int
            The position in the list :meth:`build` returns.

        Returns
        -------
        bool

        Examples
        --------
        >>> from ldpopt.problems import Simplex
        >>> Simplex().is_nonnegativity(0), Simplex().is_nonnegativity(1)
        (True, False)
        """
        return False

    @property
    def implies_at_most_one(self) -> bool:
        """Whether, together with f ≥ 0, it implies :math:`f_v ≤ 1` for every value.

        Examples
        --------
        >>> from ldpopt.problems import Box, SumTo
        >>> SumTo(1.0).implies_at_most_one, SumTo(2.0).implies_at_most_one, Box(upper=0.5).implies_at_most_one
        (True, False, True)
        """
        return False

    @property
    def states_total(self) -> bool:
        """Whether it fixes a total of f (the simplex-dropped warning looks for one); a subclass that
        always does sets ``states_total = True``.

        Examples
        --------
        >>> from ldpopt.problems import NonNegative, Simplex, SubsetSum
        >>> Simplex().states_total, SubsetSum([0, 1], 0.4).states_total, SubsetSum([0], 0.4, "<=").states_total
        (True, True, False)
        >>> NonNegative().states_total
        False
        """
        return False

    def __init__(self, name: str | None = None):
        if name is not None and (not isinstance(name, str) or not name):
            raise ValueError(f"name must be a non-empty string, got {name!r}")
        self.name = name or self.default_name

    def build(self, f: cp.Expression, estimate) -> list[tuple[str, cp.Constraint]]:
        """Its named cvxpy constraints on the frequency vector.

        Parameters
        ----------
        f : cvxpy Expression
            The frequency vector (length d), in frequency units.
        estimate : Estimate
            The raw estimate (a user callable may read it; the built-ins read only d).

        Returns
        -------
        list of (str, cvxpy Constraint)
            Name and constraint, in order; the duals' sign convention: docs/problems.md.

        Raises
        ------
        NotImplementedError
            The base class (a subclass states its constraints).
        ValueError
            Its indices or bounds do not fit the estimate's domain.

        Examples
        --------
        >>> import cvxpy as cp
        >>> from ldpopt.problems import Simplex
        >>> [(name, type(con).__name__) for name, con in Simplex().build(cp.Variable(4), None)]
        [('nonnegative', 'Inequality'), ('sum', 'Equality')]
        """
        raise NotImplementedError

    def residuals(self, f: np.ndarray, estimate) -> list[float] | None:
        """Max violation of each built constraint at the numpy point f (same order as
        :meth:`build`), in frequency units; None: let cvxpy evaluate the expressions.

        Parameters
        ----------
        f : ndarray (d,)
            The point.
        estimate : Estimate
            The raw estimate (as for :meth:`build`).

        Returns
        -------
        list of float or None
            One violation ≥ 0 per constraint of :meth:`build` (sums are compensated: exact rounding).

        Examples
        --------
        >>> import numpy as np
        >>> from ldpopt.problems import Simplex
        >>> [round(r, 12) for r in Simplex().residuals(np.array([0.5, 0.6, -0.2, 0.0]), None)]
        [0.2, 0.1]
        """
        return None

    def dual_keys(self) -> list[str]:
        """The names :meth:`build` gives its cvxpy constraints, in order (before ``Problem`` makes
        duplicates unique).

        Returns
        -------
        list of str

        Examples
        --------
        >>> from ldpopt.problems import Box, Simplex
        >>> Simplex().dual_keys(), Box(0.0, 0.5, name="b").dual_keys()
        (['nonnegative', 'sum'], ['b.lower', 'b.upper'])
        """
        return [self.name]

    def g(self, k: int, f: np.ndarray, d: int):
        """(g(f), is_equality) of the k-th constraint :meth:`build` gives, written as cvxpy writes it
        (:mod:`.jacobians`), or None: the caller evaluates cvxpy's expression.

        Parameters
        ----------
        k : int
            The position in the list :meth:`build` returns.
        f : ndarray (d,)
            The point.
        d : int
            The domain size.

        Returns
        -------
        (ndarray, bool) or None
            g_k(f) (``a <= b`` as a − b, ``a == b`` as a − b) and whether it is an equality.

        Examples
        --------
        >>> import numpy as np
        >>> from ldpopt.problems import Simplex
        >>> g, equality = Simplex().g(1, np.array([0.5, 0.3, 0.1, 0.0]), 4)
        >>> g.round(12), equality
        (array([-0.1]), True)
        """
        return

    def jacobian_t(self, k: int, y: np.ndarray, d: int) -> np.ndarray | None:
        """:math:`∇_f g_k(f)^T y` (length d) of the k-th constraint :meth:`build` gives, or None: the caller
        uses cvxpy's ``grad``.

        Parameters
        ----------
        k : int
            The position in the list :meth:`build` returns.
        y : ndarray
            The dual of that constraint (its shape).
        d : int
            The domain size.

        Returns
        -------
        ndarray (d,) or None

        Examples
        --------
        >>> import numpy as np
        >>> from ldpopt.problems import Simplex
        >>> Simplex().jacobian_t(1, np.array(2.0), 4), Simplex().jacobian_t(0, np.arange(4.0), 4)
        (array([2., 2., 2., 2.]), array([-0., -1., -2., -3.]))
        """
        return None

    def add_jacobian_t(self, k: int, y: np.ndarray, d: int, out: np.ndarray) -> np.ndarray | None:
        """``out +=`` :math:`∇_f g_k(f)^T y` in place (returned), or None when :meth:`jacobian_t` is unknown.

        Parameters
        ----------
        k : int
            The position in the list :meth:`build` returns.
        y : ndarray
            The dual of that constraint.
        d : int
            The domain size.
        out : ndarray (d,)
            The sum so far, updated in place.

        Returns
        -------
        ndarray (d,) or None
            ``out``; None (``out`` untouched) when the Jacobian is unknown.

        Examples
        --------
        >>> import numpy as np
        >>> from ldpopt.problems import SumTo
        >>> SumTo().add_jacobian_t(0, np.array(2.0), 4, np.ones(4))
        array([3., 3., 3., 3.])
        """
        got = self.jacobian_t(k, y, d)
        if got is None:
            return None
        out += got
        return out

    def linear_pieces(self, d: int, max_rows: int):
        """Its linear pieces for the exact feasibility decision (:mod:`.feasibility`), or None when it
        does not state them (a user callable: its affine rows are then read from cvxpy). Returns
        ``(pieces, whole)``: each piece is ``("bound", "lower" | "upper", values, index or None, j)``
        (per-value bounds; index None: every value) or ``("row", M, rhs, is_inequality, j)`` (sparse
        rows M f ≤ rhs or M f = rhs), ``j`` the index of the cvxpy constraint it belongs to; ``whole``
        False when a part was left out (more than ``max_rows`` rows).

        Parameters
        ----------
        d : int
            The domain size.
        max_rows : int
            The most rows to state (the decision's budget).

        Returns
        -------
        (list, bool) or None

        Examples
        --------
        >>> from ldpopt.problems import Simplex
        >>> pieces, whole = Simplex().linear_pieces(4, 10)
        >>> pieces[0], pieces[1][0], pieces[1][1].toarray(), whole
        (('bound', 'lower', 0.0, None, 0), 'row', array([[1., 1., 1., 1.]]), True)
        """
        return

    def simplex_parts(self):
        """Its parts when it is made only of :math:`f ≥ 0` and :math:`Σ f` = total, stated without building an array
        (the structured solver's fast path for the simplex family), or None.

        Returns
        -------
        list of tuple or None
            ``("nonnegative", j)`` and ``("sum", j, total)`` items, ``j`` the index of the cvxpy
            constraint each is; None for any other constraint.

        Examples
        --------
        >>> from ldpopt.problems import Box, Simplex, SumTo
        >>> Simplex().simplex_parts(), SumTo(0.5).simplex_parts(), Box(upper=0.3).simplex_parts()
        ([('nonnegative', 0), ('sum', 1, 1.0)], [('sum', 0, 0.5)], None)
        """
        return

    def compile_into(self, rows, keys: list[str], d: int) -> None:
        """State its bounds and rows on ``rows`` (:class:`~ldpopt.problems.dual.structure.StructureRows`;
        ``keys``: its dual names); the default: not covered by the structured solver.

        Parameters
        ----------
        rows : StructureRows
            What the structured solver gathers (:class:`~ldpopt.problems.dual.structure.StructureRows`).
        keys : list of str
            Its dual names, as ``Problem`` made them unique.
        d : int
            The domain size.

        Returns
        -------
        None
            It states itself on ``rows``.

        Raises
        ------
        NotApplicable
            It is not covered by the structured solver (the default; ``Problem.solve`` then takes
            the cvxpy route).

        Examples
        --------
        >>> from ldpopt.problems import SumTo
        >>> from ldpopt.problems.dual.structure import StructureRows
        >>> rows = StructureRows(4)
        >>> SumTo(0.5).compile_into(rows, ["sum"], 4)
        >>> rows.total
        0.5
        """
        rows.not_covered(f"constraint {self!r} is not covered by the structured solver (user callables "
                         "need the cvxpy route)")

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"


def _ones_row(d: int):
    """The row Σ f as a 1 × d sparse matrix (no index array of length d beyond its own)."""
    return sp.csr_matrix((np.ones(d), np.arange(d), np.array([0, d])), shape=(1, d))


def _per_value_jacobian_t(sign: float, y, d: int) -> np.ndarray:
    return sign * np.broadcast_to(np.asarray(y).ravel(), (d,)).astype(np.float64)


_SENSES = ("<=", "==", ">=")
#: row counts up to which a residual sums each row exactly (math.fsum's value, as SubsetSum and
#: PartitionTotals always did); a larger block is one sparse product (rounding ~1e-16 per row)
_EXACT_ROWS = 64


class LinearConstraint(Constraint):
    """A linear constraint stated once, as its rows: a subclass defines :meth:`rows` and ldpopt derives
    everything else a constraint answers from them — its cvxpy form (:meth:`build`), its violation
    (:meth:`residuals`), g(f) and :math:`∇g^T y` (:meth:`g`, :meth:`jacobian_t`), its pieces for the exact
    feasibility decision (:meth:`linear_pieces`) and its row block for the structured solver
    (:meth:`compile_into`). One cvxpy constraint, one dual named ``name``: a number when ``b`` is a
    number (one row), else one entry per row. A subclass overrides a derived form only to say more
    than rows say (Fixed: per-value bounds; Hierarchy: a tree) or where measured faster.

    Written as cvxpy writes it: ``A f <= b`` and ``A f == b`` have g = A f − b, ``A f >= b`` has
    g = b − A f (its dual ≥ 0, like ``<=``'s).

    Parameters
    ----------
    name : str or None, default None
        The name of its cvxpy constraint and dual; None: the class's ``default_name``.

    Examples
    --------
    >>> import numpy as np
    >>> import ldpopt
    >>> from ldpopt.problems import LinearConstraint, Simplex
    >>> class FirstTwo(LinearConstraint):   # f_0 + f_1 <= 0.5
    ...     default_name = "first_two"
    ...     def rows(self, d):
    ...         return np.r_[1.0, 1.0, np.zeros(d - 2)], 0.5, "<="
    >>> est = ldpopt.oracles.get("grr", 1.0, 4).estimate(np.array([46_000, 30_000, 15_000, 9_000]), 100_000)
    >>> sol = ldpopt.Problem(est, constraints=[Simplex(), FirstTwo()]).solve()
    >>> sol.f.round(4), sol.solver, round(float(sol.duals["first_two"]), 4)
    (array([0.5   , 0.    , 0.3498, 0.1502]), 'LDPOPT-STRUCTURED', 1.763)
    """

    default_name = "linear"

    def rows(self, d: int):
        """The constraint as rows: ``(A, b, sense)``, A f (sense) b.

        Parameters
        ----------
        d : int
            The domain size.

        Returns
        -------
        (A, b, sense)
            A: an m × d numpy array or scipy sparse matrix (a 1-D array of length d is one row); b: a
            number (one row, its dual a number) or m numbers; sense: ``"<="``, ``"=="`` or ``">="``.

        Raises
        ------
        NotImplementedError
            The base class (a subclass states its rows).
        ValueError
            The rows do not fit a domain of d values (a subclass's own check).

        Examples
        --------
        >>> from ldpopt.problems import SubsetSum
        >>> A, b, sense = SubsetSum([0, 2], 0.4, ">=").rows(4)
        >>> A.toarray(), b, sense
        (array([[1., 0., 1., 0.]]), 0.4, '>=')
        """
        raise NotImplementedError(f"{type(self).__name__} states no rows(d)")

    def _checked(self, d: int):
        """:meth:`rows` checked: (A as CSR, b one number per row, sense, whether the dual is a number)."""
        A, b, sense = self.rows(d)
        if sense not in _SENSES:
            raise ValueError(f"{self!r}: rows() sense must be one of {_SENSES}, got {sense!r}")
        if not sp.issparse(A):
            A = np.asarray(A, dtype=np.float64)
            A = A.reshape(1, -1) if A.ndim == 1 else A
        A = sp.csr_matrix(A, dtype=np.float64)
        if A.ndim != 2 or A.shape[1] != d:
            raise ValueError(f"{self!r}: rows() A must have d = {d} columns, got shape {A.shape}")
        scalar = np.ndim(b) == 0
        rhs = np.full(A.shape[0], float(b)) if scalar else np.asarray(b, dtype=np.float64).ravel()
        if (scalar and A.shape[0] != 1) or rhs.shape != (A.shape[0],):
            raise ValueError(f"{self!r}: rows() b must be one number per row of A ({A.shape[0]}), or a number "
                             f"for one row, got shape {np.shape(b)}")
        if not (np.all(np.isfinite(A.data)) and np.all(np.isfinite(rhs))):
            raise ValueError(f"{self!r}: rows() A and b must be finite")
        return A, rhs, sense, scalar

    def _signed_rows(self, d: int):
        """(M, rhs, inequality, scalar): g = M f − rhs as cvxpy writes it (a ``">="`` block negated)."""
        A, rhs, sense, scalar = self._checked(d)
        if sense == ">=":
            A, rhs = -A, -rhs
        return A, rhs, sense != "==", scalar

    def build(self, f, estimate):
        A, b, sense, scalar = self._checked(estimate.d)
        expr = A @ f
        if scalar:
            expr, b = cp.sum(expr), float(b[0])
        return [(self.name, expr <= b if sense == "<=" else expr >= b if sense == ">=" else expr == b)]

    def _g(self, f, d, exact=False):
        M, rhs, inequality, _ = self._signed_rows(d)
        f = np.asarray(f, dtype=np.float64)
        if exact and M.shape[0] <= _EXACT_ROWS:  # each row's sum correctly rounded
            start, idx, val = M.indptr, M.indices, M.data
            r = np.array([_fsum(val[a:b] * f[idx[a:b]]) for a, b in itertools.pairwise(start)]) - rhs
        else:
            r = M @ f - rhs
        return r, inequality

    def residuals(self, f, estimate):
        r, inequality = self._g(f, estimate.d, exact=True)
        if not r.size:
            return [0.0]
        return [float(max(np.max(r), 0.0)) if inequality else float(np.max(np.abs(r)))]

    def g(self, k, f, d):
        r, inequality = self._g(f, d)
        return r, not inequality

    def jacobian_t(self, k, y, d):
        M = self._signed_rows(d)[0]
        return np.asarray(M.T @ np.asarray(y, dtype=np.float64).ravel(), dtype=np.float64).ravel()

    def linear_pieces(self, d, max_rows):
        M, rhs, inequality, _ = self._signed_rows(d)
        if M.shape[0] > max_rows:  # a large block is left out (the feasibility module's docstring)
            return [], False
        return [("row", M, rhs, inequality, 0)], True

    def _add_rows(self, rows, key: str, d: int) -> int:
        """Append its signed rows to ``rows`` (StructureRows) under the dual name ``key``; the block number."""
        M, rhs, inequality, scalar = self._signed_rows(d)
        return rows.add_rows(M, rhs, inequality, key, scalar=scalar)

    def compile_into(self, rows, keys, d):
        self._add_rows(rows, keys[0], d)
        rows.others += 1  # a row block a tree without Σ f = total cannot take


@register_constraint
class Simplex(Constraint):
    """Wang et al.'s consistency constraints: :math:`f ≥ 0` and :math:`Σ f = 1` (Eq. 13 / §3.5; f ≤ 1 is implied).

    Duals ``"nonnegative"`` and ``"sum"`` (or ``"<name>.nonnegative"``, ``"<name>.sum"`` when named).

    Parameters
    ----------
    name : str or None, default None
        A prefix for its two dual names; None: ``"nonnegative"`` and ``"sum"``.

    Raises
    ------
    ValueError
        ``name`` given but not a non-empty string.

    Examples
    --------
    >>> import numpy as np
    >>> import ldpopt
    >>> from ldpopt.problems import Simplex
    >>> est = ldpopt.oracles.get("grr", 1.0, 4).estimate(np.array([46_000, 30_000, 15_000, 9_000]), 100_000)
    >>> sol = ldpopt.Problem(est, constraints=[Simplex()]).solve()
    >>> sol.f.round(4), sorted(sol.duals)
    (array([0.7662, 0.2338, 0.    , 0.    ]), ['nonnegative', 'sum'])
    >>> Simplex(name="s").dual_keys()
    ['s.nonnegative', 's.sum']
    """

    states_total = True
    lazy_build = True
    implies_nonnegative = True
    implies_at_most_one = True
    file_type = "simplex"
    file_kind = Kind("f >= 0, sum f = 1 (the default when the file has no constraints list)")
    file_example: ClassVar[dict] = {"type": "simplex"}

    def __init__(self, name: str | None = None):
        super().__init__(name)
        self._prefix = "" if name is None else name + "."

    @classmethod
    def from_file(cls, entry):
        return [cls()]

    def build(self, f, estimate):
        return [(self._prefix + "nonnegative", f >= 0), (self._prefix + "sum", cp.sum(f) == 1.0)]

    def residuals(self, f, estimate):
        return [_neg(f), abs(_fsum(f) - 1.0)]

    def dual_keys(self):
        return [self._prefix + "nonnegative", self._prefix + "sum"]

    # k = 0: f >= 0 (g = −f); k = 1: Σ f = 1 (g = Σ f − 1)
    def is_nonnegativity(self, k):
        return k == 0

    def g(self, k, f, d):
        return (-f, False) if k == 0 else (np.array([float(np.sum(f)) - 1.0]), True)

    def jacobian_t(self, k, y, d):
        return _per_value_jacobian_t(-1.0, y, d) if k == 0 else np.full(d, float(np.asarray(y).reshape(-1)[0]))

    def add_jacobian_t(self, k, y, d, out):
        if k == 0:
            return np.subtract(out, np.asarray(y).ravel(), out=out)
        out += float(np.asarray(y).reshape(-1)[0])
        return out

    def linear_pieces(self, d, max_rows):
        return [("bound", "lower", 0.0, None, 0), ("row", _ones_row(d), 1.0, False, 1)], True

    def simplex_parts(self):
        return [("nonnegative", 0), ("sum", 1, 1.0)]

    def compile_into(self, rows, keys, d):
        rows.lower(keys[0], np.zeros(d))
        rows.set_total(1.0, keys[1])


@register_constraint
class NonNegative(Constraint):
    """:math:`f ≥ 0` (dual: length-d vector :math:`y ≥ 0`; :math:`y_v > 0` only where :math:`f_v = 0`).

    Parameters
    ----------
    name : str or None, default None
        The name of its cvxpy constraint and dual; None: ``"nonnegative"``.

    Raises
    ------
    ValueError
        ``name`` given but not a non-empty string.

    Examples
    --------
    >>> import numpy as np
    >>> import ldpopt
    >>> from ldpopt.problems import NonNegative, SumTo
    >>> est = ldpopt.oracles.get("grr", 1.0, 4).estimate(np.array([46_000, 30_000, 15_000, 9_000]), 100_000)
    >>> ldpopt.Problem(est, constraints=[NonNegative(), SumTo(1.0)]).solve().f.round(4)
    array([0.7662, 0.2338, 0.    , 0.    ])
    """

    default_name = "nonnegative"
    lazy_build = True
    implies_nonnegative = True
    file_type = "nonnegative"
    file_kind = Kind("f >= 0")
    file_example: ClassVar[dict] = {"type": "nonnegative"}

    @classmethod
    def from_file(cls, entry):
        return [cls()]

    def build(self, f, estimate):
        return [(self.name, f >= 0)]

    def residuals(self, f, estimate):
        return [_neg(f)]

    def is_nonnegativity(self, k):
        return True

    def g(self, k, f, d):
        return -f, False

    def jacobian_t(self, k, y, d):
        return _per_value_jacobian_t(-1.0, y, d)

    def add_jacobian_t(self, k, y, d, out):
        return np.subtract(out, np.asarray(y).ravel(), out=out)

    def linear_pieces(self, d, max_rows):
        return [("bound", "lower", 0.0, None, 0)], True

    def simplex_parts(self):
        return [("nonnegative", 0)]

    def compile_into(self, rows, keys, d):
        rows.lower(keys[0], np.zeros(d))


@register_constraint
class SumTo(Constraint):
    """:math:`Σ f` = total (default 1; dual: scalar, the μ of Wang et al. Appendix B up to sign/scale).

    Parameters
    ----------
    total : float, default 1.0
        The total (a sub-population's share, for example).
    name : str or None, default None
        The name of its cvxpy constraint and dual; None: ``"sum"``.

    Raises
    ------
    ValueError
        ``total`` not a finite real number, or a bad ``name``.

    Examples
    --------
    >>> import numpy as np
    >>> import ldpopt
    >>> from ldpopt.problems import NonNegative, SumTo
    >>> est = ldpopt.oracles.get("grr", 1.0, 4).estimate(np.array([46_000, 30_000, 15_000, 9_000]), 100_000)
    >>> ldpopt.Problem(est, constraints=[NonNegative(), SumTo(0.5)]).solve().f.round(4)
    array([0.5, 0. , 0. , 0. ])
    """

    default_name = "sum"
    states_total = True
    lazy_build = True
    file_type = "sum"
    file_kind = Kind("sum f = total (default 1)", optional=("total",))
    file_example: ClassVar[dict] = {"type": "sum", "total": 1.0}

    def __init__(self, total: float = 1.0, name: str | None = None):
        super().__init__(name)
        self.total = _real(total, "total")

    @classmethod
    def from_file(cls, entry):
        return [cls(entry.number("total", 1.0))]

    @property
    def implies_at_most_one(self) -> bool:
        return self.total <= 1.0

    def build(self, f, estimate):
        return [(self.name, cp.sum(f) == self.total)]

    def residuals(self, f, estimate):
        return [abs(_fsum(f) - self.total)]

    def g(self, k, f, d):
        return np.array([float(np.sum(f)) - self.total]), True

    def jacobian_t(self, k, y, d):
        return np.full(d, float(np.asarray(y).reshape(-1)[0]))

    def add_jacobian_t(self, k, y, d, out):
        out += float(np.asarray(y).reshape(-1)[0])
        return out

    def linear_pieces(self, d, max_rows):
        return [("row", _ones_row(d), self.total, False, 0)], True

    def simplex_parts(self):
        return [("sum", 0, self.total)]

    def compile_into(self, rows, keys, d):
        rows.set_total(self.total, keys[0])


@register_constraint
class Box(Constraint):
    """lower ≤ f ≤ upper, each a scalar or a length-d array (None: no bound on that side).
    Duals ``"<name>.lower"`` and ``"<name>.upper"``.

    Parameters
    ----------
    lower, upper : float, array_like (d,) or None, default None
        The bounds; at least one must be given.
    name : str or None, default None
        The prefix of its dual names; None: ``"box"``.

    Raises
    ------
    ValueError
        Neither bound given, a bound not finite or not 1-D, ``lower > upper`` somewhere, or a
        per-value bound whose length is not d (at :meth:`build`).

    Examples
    --------
    >>> import numpy as np
    >>> import ldpopt
    >>> from ldpopt.problems import Box, Simplex
    >>> est = ldpopt.oracles.get("grr", 1.0, 4).estimate(np.array([46_000, 30_000, 15_000, 9_000]), 100_000)
    >>> sol = ldpopt.Problem(est, constraints=[Simplex(), Box(upper=0.5)]).solve()
    >>> sol.f.round(4).tolist(), sorted(sol.duals)
    ([0.5, 0.4996, 0.0004, 0.0], ['box.upper', 'nonnegative', 'sum'])
    """

    default_name = "box"
    file_type = "box"
    file_kind = Kind("lower <= f <= upper (a number, or one per value)", optional=("lower", "upper"))
    file_example: ClassVar[dict] = {"type": "box", "lower": 0.0, "upper": 0.5}

    def __init__(self, lower=None, upper=None, name: str | None = None):
        super().__init__(name)
        if lower is None and upper is None:
            raise ValueError("Box needs lower= or upper= (or both)")
        self.lower = None if lower is None else np.asarray(lower, dtype=np.float64)
        self.upper = None if upper is None else np.asarray(upper, dtype=np.float64)
        for label, b in (("lower", self.lower), ("upper", self.upper)):
            if b is not None and (b.ndim > 1 or not np.all(np.isfinite(b))):
                raise ValueError(f"{label} must be a finite scalar or 1-D array")
        if self.lower is not None and self.upper is not None and np.any(self.lower > self.upper):
            raise ValueError("Box needs lower <= upper everywhere")

    @classmethod
    def from_file(cls, entry):
        if "lower" not in entry and "upper" not in entry:
            raise entry.error("box needs lower or upper (or both)")
        lo, hi = (entry.number(k, per_value=True) if k in entry else None for k in ("lower", "upper"))
        for k, b in (("lower", lo), ("upper", hi)):
            if isinstance(b, np.ndarray) and b.shape[0] != entry.d:
                raise entry.error(f"{k} must be a number or have one entry per value (d = {entry.d}), got "
                                  f"{b.shape[0]}")
        return [cls(lo, hi)]

    @property
    def implies_nonnegative(self) -> bool:
        return self.lower is not None and bool(np.all(self.lower >= 0))

    @property
    def implies_at_most_one(self) -> bool:
        return self.upper is not None and bool(np.all(self.upper <= 1.0))

    def dual_keys(self):
        return [f"{self.name}.{s}" for s in self.sides]

    def g(self, k, f, d):
        return ((self.lower - f) if self.sides[k] == "lower" else (f - self.upper)), False

    def jacobian_t(self, k, y, d):
        return _per_value_jacobian_t(-1.0 if self.sides[k] == "lower" else 1.0, y, d)

    def linear_pieces(self, d, max_rows):
        return [("bound", which, getattr(self, which), None, j) for j, which in enumerate(self.sides)], True

    def compile_into(self, rows, keys, d):
        for k, s in enumerate(self.sides):
            (rows.lower if s == "lower" else rows.upper)(keys[k], rows.per_value(getattr(self, s), s))

    @property
    def sides(self) -> list[str]:
        """The bounds given, in the order :meth:`build` states them: ``"lower"``, ``"upper"`` or both.

        Examples
        --------
        >>> from ldpopt.problems import Box
        >>> Box(0.0, 0.5).sides, Box(upper=0.5).sides
        (['lower', 'upper'], ['upper'])
        """
        return [s for s in ("lower", "upper") if getattr(self, s) is not None]

    def build(self, f, estimate):
        d = estimate.d
        out = []
        for label in self.sides:
            b = getattr(self, label)
            if b.ndim == 1 and b.shape[0] != d:
                raise ValueError(f"{label} must have length d = {d}, got {b.shape[0]}")
            out.append((f"{self.name}.{label}", f >= b if label == "lower" else f <= b))
        return out

    def residuals(self, f, estimate):
        return [_neg(f - self.lower) if s == "lower" else _neg(self.upper - f) for s in self.sides]


@register_constraint
class SubsetSum(LinearConstraint):
    """:math:`Σ_{v ∈ S} f_v` (sense) value, sense ∈ {"==", "<=", ">="}: a known category total, e.g. the
    NDSS 2020 Emoji experiment's category queries. ``indices``: integer indices or a boolean mask.

    Parameters
    ----------
    indices : array_like of int, or bool mask (d,)
        The subset S.
    value : float
        The total of S.
    sense : {"==", "<=", ">="}, default "=="
        The relation.
    name : str or None, default None
        The name of its cvxpy constraint and dual; None: ``"subset_sum"``.

    Raises
    ------
    ValueError
        An unknown ``sense``, ``value`` not finite, or (at :meth:`build`) indices outside [0, d),
        repeated, or a mask whose length is not d.

    Examples
    --------
    >>> import numpy as np
    >>> import ldpopt
    >>> from ldpopt.problems import Simplex, SubsetSum
    >>> est = ldpopt.oracles.get("grr", 1.0, 4).estimate(np.array([46_000, 30_000, 15_000, 9_000]), 100_000)
    >>> sol = ldpopt.Problem(est, constraints=[Simplex(), SubsetSum([0, 1], 0.7)]).solve()
    >>> sol.f.round(4), round(float(sol.f[:2].sum()), 6)
    (array([0.6162, 0.0838, 0.2498, 0.0502]), 0.7)
    """

    default_name = "subset_sum"
    _SENSES = ("==", "<=", ">=")
    file_type = "subset_sum"
    file_kind = Kind("sum of the named values (sense: ==, <=, >=) value", ("value",), ("sense",), (VALUES,))
    file_example: ClassVar[dict] = {"type": "subset_sum", "positions": [0, 1], "value": 0.4, "sense": "<="}

    @classmethod
    def from_file(cls, entry):
        return [cls(entry.named[0], entry.number("value"), entry.get("sense", "=="))]

    def rows(self, d):
        idx = _indices(self.indices, d, "indices")
        if idx.size == 0:
            raise ValueError("indices must select at least one value")
        # one CSR row as it is stored (no COO sort): O(|S|)
        return sp.csr_matrix((np.ones(idx.size), idx, np.array([0, idx.size])), shape=(1, d)), self.value, self.sense

    def compile_into(self, rows, keys, d):
        self._add_rows(rows, keys[0], d)  # not an "other" block: a tree may take it as its leaf total
        rows.subsets.append((keys[0], _indices(self.indices, d, "indices"), float(self.value), self.sense))

    def __init__(self, indices, value: float, sense: str = "==", name: str | None = None):
        super().__init__(name)
        if sense not in self._SENSES:
            raise ValueError(f"sense must be one of {self._SENSES}, got {sense!r}")
        self.indices = indices
        self.value = _real(value, "value")
        self.sense = sense

    @property
    def states_total(self) -> bool:
        return self.sense == "=="


@register_constraint
class Fixed(LinearConstraint):
    """f[indices] == values (known frequencies; ``values`` a scalar or one per index).

    Parameters
    ----------
    indices : array_like of int, or bool mask (d,)
        The values whose frequency is known.
    values : float or array_like
        Their frequencies: one for all, or one per index.
    name : str or None, default None
        The name of its cvxpy constraint and dual; None: ``"fixed"``.

    Raises
    ------
    ValueError
        ``values`` not finite or not 1-D, or (at :meth:`build`) not one per index, or bad indices.

    Examples
    --------
    >>> import numpy as np
    >>> import ldpopt
    >>> from ldpopt.problems import Fixed, Simplex
    >>> est = ldpopt.oracles.get("grr", 1.0, 4).estimate(np.array([46_000, 30_000, 15_000, 9_000]), 100_000)
    >>> sol = ldpopt.Problem(est, constraints=[Simplex(), Fixed([3], 0.1)]).solve()
    >>> sol.f.round(4), sorted(sol.duals)
    (array([0.7162, 0.1838, 0.    , 0.1   ]), ['fixed', 'nonnegative', 'sum'])
    """

    default_name = "fixed"
    file_type = "fixed"
    file_kind = Kind("the named values = frequency (a number, or one per named value)", ("frequency",), (),
                     (VALUES,))
    file_example: ClassVar[dict] = {"type": "fixed", "positions": [2], "frequency": 0.1}

    @classmethod
    def from_file(cls, entry):
        freq = entry.number("frequency", per_value=True)
        bad = np.asarray(freq, dtype=np.float64)[~((np.asarray(freq) >= 0) & (np.asarray(freq) <= 1))]
        if bad.size:  # a frequency is a share of the users: a file's 2.0 is a typo, not a constraint
            raise entry.error(f"frequency must be in [0, 1] (a share of the users), got {float(bad.ravel()[0])!r}")
        if isinstance(freq, np.ndarray) and freq.shape[0] != entry.named[0].shape[0]:
            raise entry.error(f"frequency has {freq.shape[0]} entries for {entry.named[0].shape[0]} named values: "
                              "give one number for all, or one per value")
        return [cls(entry.named[0], freq)]

    def rows(self, d):
        idx, vals = self.at(d)
        return sp.csr_matrix((np.ones(idx.size), idx, np.arange(idx.size + 1)), shape=(idx.size, d)), vals, "=="

    # per-value bounds, not rows, for the exact decision and the structured solver
    def linear_pieces(self, d, max_rows):
        idx, vals = self.at(d)
        return [("bound", "lower", vals, idx, 0), ("bound", "upper", vals, idx, 0)], True

    def compile_into(self, rows, keys, d):
        rows.fix(keys[0], *self.at(d), self.name)

    def __init__(self, indices, values, name: str | None = None):
        super().__init__(name)
        self.indices = indices
        self.values = np.atleast_1d(np.asarray(values, dtype=np.float64))
        if self.values.ndim != 1 or not np.all(np.isfinite(self.values)):
            raise ValueError("values must be a finite scalar or 1-D array")

    def at(self, d: int) -> tuple[np.ndarray, np.ndarray]:
        """(indices, one value per index) on a domain of d values (a scalar value repeated).

        Parameters
        ----------
        d : int
            The domain size.

        Returns
        -------
        (ndarray of int64, ndarray of float64)

        Raises
        ------
        ValueError
            Bad indices for d, or ``values`` not one per index.

        Examples
        --------
        >>> from ldpopt.problems import Fixed
        >>> Fixed([1, 3], 0.1).at(4)
        (array([1, 3]), array([0.1, 0.1]))
        """
        idx = _indices(self.indices, d, "indices")
        if self.values.shape[0] not in (1, idx.shape[0]):
            raise ValueError(f"values must have one entry per index ({idx.shape[0]}), got {self.values.shape[0]}")
        return idx, np.broadcast_to(self.values, idx.shape)


class Hierarchy(LinearConstraint):
    r"""Tree consistency over a domain that lists internal nodes as values of their own:
    :math:`f_{\mathrm{parent}} = Σ f_{\mathrm{children}}` for each ``(parent, children)`` group (a hierarchical histogram's
    "parent = sum of children"). One sparse equality H f = 0 with a row per group; the dual has one
    entry per group, in the order given. ``groups``: a sequence of ``(parent, children)`` pairs or a
    dict ``{parent: children}``. The default simplex does not fit a tree domain (the levels each sum
    to one): pass e.g. ``[NonNegative(), SubsetSum(leaves, 1), Hierarchy(groups)]``.

    Parameters
    ----------
    groups : sequence of (int, sequence of int), or dict
        The ``(parent, children)`` pairs, or ``{parent: children}``.
    name : str or None, default None
        The name of its cvxpy constraint and dual; None: ``"hierarchy"``.

    Raises
    ------
    ValueError
        No group, a group that is not a pair, empty or non-integer children, a non-integer parent,
        or a parent among its own children; indices outside [0, d) at :meth:`build`.

    Examples
    --------
    >>> import numpy as np
    >>> import ldpopt
    >>> from ldpopt.problems import Fixed, Hierarchy, NonNegative
    >>> est = ldpopt.oracles.get("grr", 1.0, 3).estimate(np.array([1000, 600, 300]), 1900)
    >>> cons = [NonNegative(), Fixed([0], 1.0), Hierarchy([(0, [1, 2])])]   # value 0 is the root of 1 and 2
    >>> ldpopt.Problem(est, constraints=cons).solve().f.round(4)
    array([1.    , 0.7168, 0.2832])
    """

    default_name = "hierarchy"
    #: whether its compiled matrix and tree may be kept on it (a range tree's: built consistent and
    #: never mutated; a user's groups list may change)
    cache_compiled = False

    def linear_pieces(self, d, max_rows):
        n_rows = self.tree.size - self.tree.d if hasattr(self, "tree") else len(self.groups)
        if n_rows > max_rows:  # a large tree is left out (the feasibility module's docstring)
            return [], False
        return [("row", self.matrix(d), 0.0, False, 0)], True

    def rows(self, d):
        H = self.matrix(d)
        return H, np.zeros(H.shape[0]), "=="

    def compile_into(self, rows, keys, d):
        H = rows.cached(self, "matrix", lambda: self.matrix(d))
        rows.add_rows(H, 0.0, False, keys[0])
        rows.hier.append((keys[0], H, self))

    def __init__(self, groups, name: str | None = None):
        super().__init__(name)
        items = list(groups.items()) if isinstance(groups, dict) else list(groups)
        if not items:
            raise ValueError("groups must contain at least one (parent, children) pair")
        self._groups: list[tuple[int, np.ndarray]] = []
        for k, g in enumerate(items):
            try:
                parent, children = g
            except (TypeError, ValueError):
                raise ValueError(f"groups[{k}] must be a (parent, children) pair, got {g!r}") from None
            children = np.atleast_1d(np.asarray(children))
            if children.size == 0 or children.dtype.kind not in "iu":
                raise ValueError(f"groups[{k}] children must be a non-empty list of integer indices")
            if isinstance(parent, bool) or not isinstance(parent, numbers.Integral):
                raise ValueError(f"groups[{k}] parent must be an integer index, got {parent!r}")
            if int(parent) in set(children.tolist()):
                raise ValueError(f"groups[{k}]: a parent cannot be its own child")
            self._groups.append((int(parent), children.astype(np.int64)))

    @property
    def groups(self) -> list[tuple[int, np.ndarray]]:
        """The ``(parent, children)`` pairs, validated, in the order given (children int64).

        Examples
        --------
        >>> from ldpopt.problems import Hierarchy
        >>> Hierarchy({0: [1, 2]}).groups
        [(0, array([1, 2]))]
        """
        return self._groups

    def matrix(self, d: int) -> sp.csr_matrix:
        """H (groups × d): +1 at the parent, −1 at each child, so H f = 0 is the constraint.

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
        >>> from ldpopt.problems import Hierarchy
        >>> Hierarchy([(0, [1, 2])]).matrix(3).toarray()
        array([[ 1., -1., -1.]])
        """
        rows, cols, vals = [], [], []
        for k, (parent, children) in enumerate(self.groups):
            idx = _indices(np.concatenate([[parent], children]), d, f"groups[{k}]")
            rows.append(np.full(idx.shape[0], k))
            cols.append(idx)
            vals.append(np.concatenate([[1.0], -np.ones(children.shape[0])]))
        return sp.csr_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                             shape=(len(self.groups), d))


def example_function(f, estimate, limit: float = 0.5):
    """A constraint function as a problem file names one (``function = "MODULE:NAME"``): the first
    two values sum to at most ``limit``. :attr:`UserConstraint.file_example` uses it.

    Parameters
    ----------
    f : cvxpy Expression
        The frequency vector.
    estimate : Estimate
        The raw estimate (not read).
    limit : float, default 0.5
        The bound on :math:`f_0 + f_1`.

    Returns
    -------
    cvxpy Constraint

    Examples
    --------
    >>> import cvxpy as cp
    >>> from ldpopt.problems.constraints.base import example_function
    >>> type(example_function(cp.Variable(4), None, limit=0.4)).__name__
    'Inequality'
    """
    return cp.sum(f[:2]) <= limit


@register_constraint
class UserConstraint(Constraint):
    """A user callable ``(f, estimate) -> cvxpy constraint | list of them | dict name → constraint``.
    Names: the dict's keys, or ``"<name>[i]"`` for a list (``name`` defaults to the function's name,
    ``"user"`` for a lambda).

    Parameters
    ----------
    func : callable
        ``func(f, estimate)`` returning the cvxpy constraint(s) on the cvxpy expression f.
    name : str or None, default None
        The name (prefix) of its duals; None: the function's name.

    Raises
    ------
    TypeError
        ``func`` not callable; at :meth:`build`, a result that is not cvxpy constraints.

    Examples
    --------
    >>> import numpy as np
    >>> import ldpopt
    >>> from ldpopt.problems import Simplex, UserConstraint
    >>> est = ldpopt.oracles.get("grr", 1.0, 4).estimate(np.array([46_000, 30_000, 15_000, 9_000]), 100_000)
    >>> sol = ldpopt.Problem(est, constraints=[Simplex(), UserConstraint(lambda f, e: f[0] <= 0.5)]).solve()
    >>> sol.f.round(4).tolist(), sorted(sol.duals)
    ([0.5, 0.4996, 0.0004, 0.0], ['nonnegative', 'sum', 'user'])
    """

    file_type = "function"
    file_kind = Kind("a function of your own, FILE.py:NAME (relative to the problem file's folder) or "
                     "MODULE:NAME: function(f, estimate, **params) -> cvxpy constraint(s)", ("function",),
                     ("params", "name"))
    file_example: ClassVar[dict] = {"type": "function", "function": "ldpopt.problems.constraints.base:example_function",
                    "params": {"limit": 0.4}}

    @classmethod
    def from_file(cls, entry):
        from ..._userfunc import load_function

        func = load_function(entry.get("function"), entry.get("params"), entry.base, entry.where("function"),
                             error=entry.error)
        return [cls(func, name=entry.get("name"))]

    def __init__(self, func: Callable, name: str | None = None):
        if not callable(func):
            raise TypeError(f"constraint must be a Constraint or a callable, got {type(func).__name__}")
        fname = getattr(func, "__name__", "user")
        super().__init__(name or ("user" if fname == "<lambda>" else fname))
        self.func = func

    def build(self, f, estimate):
        out = self.func(f, estimate)
        if isinstance(out, cp.Constraint):
            pairs = [(self.name, out)]
        elif isinstance(out, dict):
            pairs = [(str(k), c) for k, c in out.items()]
        elif isinstance(out, (list, tuple)):
            pairs = [(f"{self.name}[{i}]", c) for i, c in enumerate(out)]
        else:
            raise TypeError(f"constraint callable {self.name!r} must return a cvxpy constraint, a list or "
                            f"a dict of them, got {type(out).__name__}")
        for key, c in pairs:
            if not isinstance(c, cp.Constraint):
                raise TypeError(f"constraint callable {self.name!r} returned {type(c).__name__} for {key!r}, "
                                "not a cvxpy constraint")
        # a polyhedral bound (‖u‖∞ <= r, max(u) <= r, |u| <= r, ...) as its affine rows: the exact
        # pre-check, the conflict proof and the KKT check read it as any linear row (its dual: one per row)
        return [(key, c if (rows := affine_bound(c)) is None else rows) for key, c in pairs]


def as_constraint(c) -> Constraint:
    """A :class:`Constraint` as is; a callable wrapped in :class:`UserConstraint`.

    Parameters
    ----------
    c : Constraint or callable
        What a ``constraints`` list of :class:`~ldpopt.problems.Problem` holds.

    Returns
    -------
    Constraint

    Raises
    ------
    TypeError
        ``c`` is neither.

    Examples
    --------
    >>> from ldpopt.problems import Simplex
    >>> from ldpopt.problems.constraints.base import as_constraint
    >>> as_constraint(lambda f, estimate: f >= 0), as_constraint(Simplex()).dual_keys()
    (UserConstraint(name='user'), ['nonnegative', 'sum'])
    """
    if isinstance(c, Constraint):
        return c
    if callable(c):
        return UserConstraint(c)
    raise TypeError(f"constraints must contain Constraint objects or callables, got {type(c).__name__}")


class SimplexDroppedWarning(UserWarning):
    """A constraint list without f ≥ 0 or without a total (notes: docs/problems.md).

    Examples
    --------
    >>> import warnings
    >>> import numpy as np
    >>> import ldpopt
    >>> from ldpopt.problems import NonNegative, SimplexDroppedWarning
    >>> est = ldpopt.oracles.get("grr", 1.0, 4).estimate(np.array([46_000, 30_000, 15_000, 9_000]), 100_000)
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     _ = ldpopt.Problem(est, constraints=[NonNegative()])
    >>> [w.category is SimplexDroppedWarning for w in caught]
    [True]
    """


def warn_if_simplex_dropped(constraints: list, stacklevel: int = 3) -> None:
    """One :class:`SimplexDroppedWarning` when ``constraints`` (already :func:`as_constraint`-ed) keep
    neither half of the simplex or only one, naming what is missing and how to add it back.

    Parameters
    ----------
    constraints : list of Constraint
        The list as ``Problem`` holds it.
    stacklevel : int, default 3
        Passed to :func:`warnings.warn` (the caller's line).

    Examples
    --------
    >>> import warnings
    >>> from ldpopt.problems import NonNegative, Simplex
    >>> from ldpopt.problems.constraints.base import warn_if_simplex_dropped
    >>> with warnings.catch_warnings(record=True) as caught:
    ...     warnings.simplefilter("always")
    ...     warn_if_simplex_dropped([Simplex()])
    ...     warn_if_simplex_dropped([NonNegative()])
    >>> len(caught), "no sum(f) == 1" in str(caught[0].message)
    (1, True)
    """
    nonneg = any(c.implies_nonnegative for c in constraints)
    total = any(c.states_total for c in constraints)
    if nonneg and total:
        return
    missing = " and ".join(m for m, ok in (("f >= 0", nonneg), ("sum(f) == 1", total)) if not ok)
    users = [c.name for c in constraints if isinstance(c, UserConstraint)]
    note = f" (ldpopt cannot see inside the callables {users})" if users else ""
    import warnings

    warnings.warn(f"the constraint list replaces the default simplex and has no {missing}{note}: add Simplex() "
                  "(or NonNegative() / SumTo(1.0)) to the list to keep it; if dropping it is intended (a Box-only "
                  "variant), silence this with warnings.filterwarnings('ignore', category=SimplexDroppedWarning)",
                  SimplexDroppedWarning, stacklevel=stacklevel)
