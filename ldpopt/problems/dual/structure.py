"""The constraint list of a :class:`~ldpopt.problems.Problem` in the form the dual method uses:

    l ≤ f ≤ u   (per value: NonNegative, Simplex, Box, Fixed as l = u)
    Σ_v f_v = total                         (Simplex / SumTo; multiplier λ)
    A_k f = b_k  or  A_k f ≤ b_k            (SubsetSum, PartitionTotals, Hierarchy, LinearEquality rows; multipliers y_k, y_k ≥ 0
                                             for the inequalities, a ≥ row stored negated)

Every multiplier keeps the sign convention of :mod:`ldpopt.problems.constraints.base`
(L = J + Σ y·g), so the structured solver's duals are the same numbers cvxpy returns. The dual names
are the ones :class:`~ldpopt.problems.Problem` gives (duplicates get ``_1``, ``_2``, ...).

Implied bound (a choice): with Σ f = total, f_v ≤ total − Σ_{w≠v} l_w holds on the feasible set, so
u is tightened to it. That leaves the problem unchanged and makes every per-value argmin and the
dual function finite (the likelihoods' h_v' are bounded on one side).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp

from ..constraints.base import Constraint, NonNegative, SumTo, as_constraint
from ..objectives.separable import NotApplicable
from .tree import Tree, tree_of, tree_upper

__all__ = ["PAIRWISE_ROW_MIN", "Chain", "Structure", "StructureRows", "compile_constraints", "compiled_for", "row_sums"]

#: rows with at least this many entries are summed pairwise by :func:`row_sums` (a choice: shorter
#: rows keep scipy's product, whose rounding is far below the check's 1e-6/d there, and with it every
#: answer of the problems that have none)
PAIRWISE_ROW_MIN = 1 << 14


def row_sums(A, x) -> np.ndarray:
    """A x for a CSR matrix, each row of at least :data:`PAIRWISE_ROW_MIN` entries summed pairwise
    (``np.add.reduceat``: rounding ~log₂(n)·ε of the row's Σ|a x|). scipy's product sums each row in
    sequence, whose rounding grows like √n·ε to n·ε: a subset sum over half of d = 10⁶ values of a
    CLS + KL answer came out 3e-13 off its total (exactly summed) with A f − b = 0 to the last bit,
    and the check's l1 over the constraints, 1e-6/d = 1e-12, refused the point."""
    out = A @ x
    nnz = np.diff(A.indptr)
    long = np.flatnonzero(nnz >= PAIRWISE_ROW_MIN)
    if long.size:
        out = np.array(out, dtype=float)
        for k in long:  # a handful at most: each holds PAIRWISE_ROW_MIN entries of A
            lo, hi = A.indptr[k], A.indptr[k + 1]
            out[k] = np.sum(A.data[lo:hi] * x[A.indices[lo:hi]])
    return out


@dataclass(frozen=True)
class Structure:
    """The compiled constraints (module docstring). Frozen, and its arrays are never written: what is
    derived from it (:meth:`derived`) is computed once and never goes stale."""

    d: int
    l: np.ndarray
    u: np.ndarray
    total: float
    A: sp.csr_matrix                      # m × d, rows in "≤ / ==" form
    b: np.ndarray
    ineq: np.ndarray                      # bool per row: A_k f ≤ b_k (else ==)
    sum_name: str
    # name → how to read its dual: ("row", slice, sign) | ("bound", kind, mask) | ...
    duals: dict = field(default_factory=dict)
    implied_upper: np.ndarray | None = None  # bool: u came from the implied bound only
    chain: Chain | None = None               # a Monotone chain (its rows are in A): .chain
    sum_free: bool = False                   # no Σ f = total row (λ ≡ 0): one tree of sums, .tree
    tree: Tree | None = None                 # that tree (total = its leaf total / root value)
    _derived: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def m(self) -> int:
        return self.A.shape[0]

    def residual(self, x) -> np.ndarray:
        """A x − b, long rows summed pairwise (:func:`row_sums`)."""
        return row_sums(self.A, x) - self.b

    def derived(self, key: str, make):
        """``make(self)``, computed on the first call for ``key`` and kept (the solver, the
        certificate and the feasibility test all read the rows' block structure of one problem)."""
        if key not in self._derived:
            self._derived[key] = make(self)
        return self._derived[key]


@dataclass
class Chain:
    """One :class:`~ldpopt.problems.Monotone` chain: ``idx`` the values in the orientation
    f[idx[0]] ≥ f[idx[1]] ≥ …, ``rows`` its rows of A (row k pairs idx[k], idx[k+1] when not
    ``flipped``; a nondecreasing constraint is the reversed chain, so its own rows are in reverse)."""

    idx: np.ndarray
    rows: slice
    flipped: bool


def dual_names(constraints) -> list[list[str]]:
    """The dual keys each constraint produces in Problem._build, before de-duplication."""
    out = [c.dual_keys() for c in constraints]
    named, result = set(), []
    for keys in out:
        got = []
        for key in keys:
            name, k = key, 0
            while name in named:
                k += 1
                name = f"{key}_{k}"
            named.add(name)
            got.append(name)
        result.append(got)
    return result


def _vec(b, d, label):
    b = np.asarray(b, float)
    if b.ndim == 1 and b.shape[0] != d:
        raise ValueError(f"{label} must have length d = {d}, got {b.shape[0]}")
    return np.broadcast_to(b, (d,))


class StructureRows:
    """What :func:`compile_constraints` gathers while each constraint states itself on it
    (``Constraint.compile_into(rows, keys, d)``): per-value bounds (:meth:`lower`, :meth:`upper`,
    :meth:`fix`), the Σ f = total row (:meth:`set_total`), row blocks (:meth:`add_rows`), a Monotone
    chain (:meth:`set_chain`) and the pieces a tree without a total row is read from (``hier``,
    ``subsets``, ``others``). :meth:`not_covered` refuses with :class:`NotApplicable`."""

    def __init__(self, d: int):
        self.d = d
        self.fixed = np.full(d, np.nan)
        self.total: float | None = None
        self.sum_name: str | None = None
        self.chain_rows: tuple[int, np.ndarray, bool] | None = None  # (block, order, flipped)
        self.rows: list = []
        self.rhs: list = []
        self.ineq: list = []
        self.duals: dict[str, tuple[Any, ...]] = {}
        self.lower_src: list[tuple[str, np.ndarray]] = []  # (name, bound array) in order
        self.upper_src: list[tuple[str, np.ndarray]] = []
        self.hier: list = []          # (name, H, constraint) of each Hierarchy
        self.subsets: list = []       # (name, idx, value, sense) of each SubsetSum
        self.fixed_src: list = []     # (name, idx) of each Fixed
        self.others = 0               # row blocks a tree without Σ f = total cannot take

    @staticmethod
    def not_covered(why: str):
        raise NotApplicable(why)

    def per_value(self, b, label: str) -> np.ndarray:
        """A scalar or length-d bound as a length-d (read-only) array."""
        return _vec(b, self.d, label)

    def lower(self, name: str, b: np.ndarray) -> None:
        self.lower_src.append((name, b))

    def upper(self, name: str, b: np.ndarray) -> None:
        self.upper_src.append((name, b))

    def set_total(self, total: float, name: str) -> None:
        if self.total is not None:
            raise NotApplicable("more than one Σ f = total constraint")
        self.total, self.sum_name = total, name

    def fix(self, name: str, idx: np.ndarray, vals: np.ndarray, label: str) -> None:
        fixed = self.fixed
        if np.any(~np.isnan(fixed[idx]) & (fixed[idx] != vals)):
            raise ValueError(f"Fixed {label!r}: a value is fixed twice to different numbers (infeasible)")
        fixed[idx] = vals
        self.duals[name] = ("fixed", idx)
        self.fixed_src.append((name, idx))

    def add_rows(self, M, b, inequality: bool, key: str, scalar: bool = False) -> int:
        """Append the row block M f (≤ if ``inequality`` else ==) b, whose dual ``key`` reads (a float
        when ``scalar``); its block number."""
        self.rows.append(M)
        self.rhs.extend(np.broadcast_to(np.asarray(b, dtype=np.float64), (M.shape[0],)).tolist())
        self.ineq.extend([inequality] * M.shape[0])
        self.duals[key] = ("row", len(self.rows) - 1, scalar)
        return len(self.rows) - 1

    def set_chain(self, block: int, order: np.ndarray, flipped: bool) -> None:
        if self.chain_rows is not None:
            raise NotApplicable("more than one Monotone constraint")
        self.chain_rows = (block, order, flipped)

    def cached(self, c, key: str, make):
        return _cached(c, self.d, key, make)


def compile_constraints(constraints, d: int, *, fast: bool = True) -> Structure:
    """Map ``constraints`` (None: the simplex) to a :class:`Structure` (``fast=False``: the general
    pass even for the plain simplex, the reference of :func:`plain_simplex_structure`). Each constraint states
    its own bounds and rows (``Constraint.compile_into``, :class:`StructureRows`).

    Raises :class:`NotApplicable` for user callables, a missing Σ f = total, or a value with no finite
    lower bound (the dual method needs a compact per-value domain for the likelihoods). A Structure
    (already compiled: :func:`compiled_for`) is returned as it is."""
    if isinstance(constraints, Structure) and constraints.d == d:
        return constraints
    if constraints is None:
        constraints = [NonNegative(), SumTo(1.0)]
    if isinstance(constraints, Constraint) or callable(constraints):
        constraints = [constraints]
    constraints = [as_constraint(c) for c in constraints]
    names = dual_names(constraints)
    plain = plain_simplex_structure(constraints, names, d) if fast else None
    if plain is not None:
        return plain
    acc = StructureRows(d)
    for c, keys in zip(constraints, names):
        c.compile_into(acc, keys, d)
    lo = np.full(d, -np.inf)
    up = np.full(d, np.inf)
    fixed, total, sum_name, chain_rows = acc.fixed, acc.total, acc.sum_name, acc.chain_rows
    rows, rhs, ineq, duals, hier = acc.rows, acc.rhs, acc.ineq, acc.duals, acc.hier
    lower_src, upper_src = acc.lower_src, acc.upper_src
    if total is None and not hier:
        raise NotApplicable("the structured solver needs a Σ f = total constraint (Simplex or SumTo), "
                            "or one Hierarchy tree with its leaf total")
    # rows were appended one block at a time: block numbers to slices of row numbers
    starts = np.cumsum([0] + [r.shape[0] for r in rows])
    for key, spec in list(duals.items()):
        if spec[0] == "row":
            duals[key] = ("row", slice(int(starts[spec[1]]), int(starts[spec[1] + 1])), spec[2])
    tree = None
    if total is None:
        tree, sum_name = _tree(hier, acc.subsets, acc.fixed_src, fixed, acc.others, duals, d)
        total = tree.total
    assert sum_name is not None  # set with the Σ f = total constraint, or by _tree
    for name, b in lower_src:
        lo = np.maximum(lo, b)
    for name, b in upper_src:
        up = np.minimum(up, b)
    isfix = ~np.isnan(fixed)
    if np.any(isfix & ((fixed < lo) | (fixed > up))):
        bad = int(np.flatnonzero(isfix & ((fixed < lo) | (fixed > up)))[0])
        raise ValueError(f"infeasible constraints: value {bad} is fixed to {fixed[bad]!r} outside its bounds")
    lo = np.where(isfix, fixed, lo)
    up = np.where(isfix, fixed, up)
    if not np.all(np.isfinite(lo)):
        raise NotApplicable("every value needs a finite lower bound (NonNegative/Simplex/Box/Fixed) for the "
                            "structured solver")
    if np.any(lo > up):
        bad = int(np.flatnonzero(lo > up)[0])
        raise ValueError(f"infeasible constraints: lower bound {lo[bad]!r} > upper bound {up[bad]!r} at value {bad}")
    summed = np.ones(d, bool) if tree is None else tree.leaf  # the values Σ f = total is over
    implied = total - (float(np.sum(lo)) - lo) if tree is None else tree_upper(tree, lo)
    implied_only = implied < up
    up = np.minimum(up, implied)
    lsum, usum = float(np.sum(lo[summed])), float(np.sum(up[summed]))
    if lsum > total * (1 + 1e-15) + 1e-300 or usum < total * (1 - 1e-15):
        raise ValueError(f"infeasible constraints: Σ f = {total!r} is outside [Σ lower, Σ upper] = "
                         f"[{lsum!r}, {usum!r}]")
    if tree is not None and not lo[tree.root] <= total <= up[tree.root]:
        raise ValueError(f"infeasible constraints: the tree's total {total!r} is outside the root's bounds "
                         f"[{lo[tree.root]!r}, {up[tree.root]!r}]")
    for name, b in lower_src:
        duals[name] = ("lower", b)
    for name, b in upper_src:
        duals[name] = ("upper", b)
    if tree is None:
        duals[sum_name] = ("sum",)
    A = sp.vstack(rows, format="csr") if rows else sp.csr_matrix((0, d))
    chain = None
    if chain_rows is not None:
        k, order, flip = chain_rows
        chain = Chain(np.ascontiguousarray(order), slice(int(starts[k]), int(starts[k + 1])), flip)
    return Structure(d, lo, up, float(total), A, np.asarray(rhs, float), np.asarray(ineq, bool), sum_name,
                     duals, implied_only & ~isfix, chain, sum_free=tree is not None, tree=tree)


def compiled_for(problem):
    """``problem``'s constraints compiled once and kept on it (a Problem's constraints are fixed when
    it is made): the structured solver, the certificate of ldpopt's check and the feasibility test
    then read one Structure and what is derived from it. The constraints themselves when they do not
    compile: the caller compiles them again and reports the error where it always did."""
    if hasattr(problem, "compiled"):  # a Problem: compiled once, kept (Problem.compiled)
        got = problem.compiled
        return problem.constraints if got is None else got
    try:
        return compile_constraints(problem.constraints, problem.estimate.d)
    except ValueError:  # NotApplicable too
        return problem.constraints


def _cached(c, d, key, make):
    """make(), kept on a range tree's Hierarchy ``c`` per d (it is built consistent from its RangeTree
    and not mutated): the solver, the certificate and ldpopt's check each compile the same
    constraints. Other Hierarchy objects (a user's groups list may change) are not cached."""
    if not c.cache_compiled:
        return make()
    got = c.__dict__.get("_ldpopt_" + key)
    if got is None or got[0] != d:
        got = (d, make())
        c.__dict__["_ldpopt_" + key] = got
    return got[1]


def _tree(hier, subsets, fixed_src, fixed, others, duals, d):
    """(Tree, name of the total's constraint) when the rows are one Hierarchy tree plus its leaf
    total (a SubsetSum == over exactly the leaves, or Fixed on the root); else NotApplicable."""
    if len(hier) != 1 or others:
        raise NotApplicable("without Σ f = total the structured solver covers one Hierarchy tree with its "
                            "leaf total and bounds only (no Monotone / PartitionTotals, one Hierarchy)")
    hname, H, con = hier[0]
    root, rows, row_of, prow, parent, depth_rows, depth_nodes = _cached(con, d, "tree", lambda: tree_of(H, d))
    leaf = row_of < 0
    rooted = not np.isnan(fixed[root])
    if len(subsets) > 1 or (subsets and rooted):
        raise NotApplicable("a Hierarchy tree takes one total: a SubsetSum over its leaves or Fixed on its root")
    if subsets:
        name, idx, value, sense = subsets[0]
        if sense != "==" or idx.size != int(leaf.sum()) or not np.array_equal(np.sort(idx), np.flatnonzero(leaf)):
            raise NotApplicable(f"SubsetSum {name!r} is not the tree's leaf total (== over exactly its "
                                f"{int(leaf.sum())} leaves): use the cvxpy route")
        total, total_row = value, duals[name][1].start
    elif rooted:
        name = next(k for k, idx in fixed_src if np.any(idx == root))
        total, total_row = float(fixed[root]), None
    else:
        raise NotApplicable("a Hierarchy tree needs its total: a SubsetSum over its leaves or Fixed on its root")
    return Tree(d, root, rows, row_of, prow, parent, leaf, depth_rows, depth_nodes, duals[hname][1],
                float(total), total_row, H), name


def plain_simplex_names(constraints, names) -> tuple[str, str, float] | None:
    """(nonnegativity dual's name, sum dual's name, total > 0) when the constraints are [Simplex()] or
    [NonNegative(), SumTo(total > 0)] (either order), else None: what :func:`plain_simplex_structure`
    reads before it builds its Structure (a caller that needs only the names builds none)."""
    parts = [c.simplex_parts() for c in constraints]  # each item states them (Constraint.simplex_parts)
    if any(p is None for p in parts):
        return None
    nonneg = [names[i][p[1]] for i, ps in enumerate(parts) for p in ps if p[0] == "nonnegative"]
    sums = [(names[i][p[1]], float(p[2])) for i, ps in enumerate(parts) for p in ps if p[0] == "sum"]
    if len(nonneg) != 1 or len(sums) != 1:
        return None
    nn, (sum_name, total) = nonneg[0], sums[0]
    if not total > 0:
        return None  # the general pass decides (a fixed point at 0, or infeasible)
    return nn, sum_name, total


def plain_simplex_structure(constraints, names, d: int) -> Structure | None:
    """The Structure of [Simplex()] or [NonNegative(), SumTo(total > 0)] (either order) without the
    general pass, or None. The same numbers as the general pass (l = 0, u = the implied bound
    total − Σ_{w≠v} l_w = total, every upper bound implied; ``tests/test_structured_fast.py``), as
    read-only broadcast views: no full-length array is written for constant bounds (at d = 42,178
    the general pass was ~10 % of a simplex solve, mostly fresh memory for constant vectors)."""
    got = plain_simplex_names(constraints, names)
    if got is None:
        return None
    nn, sum_name, total = got
    zero = np.broadcast_to(0.0, (d,))
    return Structure(d, zero, np.broadcast_to(float(total), (d,)), float(total), sp.csr_matrix((0, d)),
                     np.zeros(0), np.zeros(0, bool), sum_name, {nn: ("lower", zero), sum_name: ("sum",)},
                     np.ones(d, bool), None)  # a real array: & with a broadcast bool is 3x slower
