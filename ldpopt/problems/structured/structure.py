"""The constraint list of a :class:`~ldpopt.problems.Problem` in the form the dual method uses:

    l ≤ f ≤ u   (per value: NonNegative, Simplex, Box, Fixed as l = u)
    Σ_v f_v = total                         (Simplex / SumTo; multiplier λ)
    A_k f = b_k  or  A_k f ≤ b_k            (SubsetSum, PartitionTotals, Hierarchy, LinearEquality rows; multipliers y_k, y_k ≥ 0
                                             for the inequalities, a ≥ row stored negated)

Every multiplier keeps the sign convention of :mod:`ldpopt.problems.constraints`
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

from ..constraints import (
    Box,
    Constraint,
    Fixed,
    Hierarchy,
    NonNegative,
    Simplex,
    SubsetSum,
    SumTo,
    _indices,
    as_constraint,
)
from ..order import Monotone
from ..partition import LinearEquality, PartitionTotals
from .separable import NotApplicable
from .tree import Tree, tree_of, tree_upper

__all__ = ["Chain", "Structure", "compile_constraints", "compiled_for"]


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


def _names(constraints) -> list[list[str]]:
    """The dual keys each constraint produces in Problem._build, before de-duplication."""
    out = []
    for c in constraints:
        if isinstance(c, Simplex):
            out.append([c._prefix + "nonnegative", c._prefix + "sum"])
        elif isinstance(c, Box):
            out.append([f"{c.name}.{s}" for s in c.sides])
        else:
            out.append([c.name])
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


def compile_constraints(constraints, d: int, *, fast: bool = True) -> Structure:
    """Map ``constraints`` (None: the simplex) to a :class:`Structure` (``fast=False``: the general
    pass even for the plain simplex, the reference of :func:`_plain_simplex`).

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
    names = _names(constraints)
    plain = _plain_simplex(constraints, names, d) if fast else None
    if plain is not None:
        return plain
    lo = np.full(d, -np.inf)
    up = np.full(d, np.inf)
    fixed = np.full(d, np.nan)
    total, sum_name = None, None
    chain_rows: tuple[int, np.ndarray, bool] | None = None  # the Monotone chain: (block, order, flipped)
    rows, rhs, ineq = [], [], []
    duals: dict[str, tuple[Any, ...]] = {}

    def add_rows(M, b, inequality: bool, key: str, scalar: bool = False) -> int:
        """Append the row block M f (≤ if ``inequality`` else ==) b, whose dual ``key`` reads (a float
        when ``scalar``); its block number."""
        rows.append(M)
        rhs.extend(np.broadcast_to(np.asarray(b, dtype=np.float64), (M.shape[0],)).tolist())
        ineq.extend([inequality] * M.shape[0])
        duals[key] = ("row", len(rows) - 1, scalar)
        return len(rows) - 1

    lower_src: list[tuple[str, np.ndarray]] = []  # (name, bound array) in order
    upper_src: list[tuple[str, np.ndarray]] = []
    hier, subsets, fixed_src, others = [], [], [], 0  # for a tree without Σ f = total (.tree)
    for c, keys in zip(constraints, names):
        if isinstance(c, (Simplex, NonNegative)):
            lower_src.append((keys[0], np.zeros(d)))
            if isinstance(c, Simplex):
                if total is not None:
                    raise NotApplicable("more than one Σ f = total constraint")
                total, sum_name = 1.0, keys[1]
        elif isinstance(c, SumTo):
            if total is not None:
                raise NotApplicable("more than one Σ f = total constraint")
            total, sum_name = c.total, keys[0]
        elif isinstance(c, Box):
            for k, s in enumerate(c.sides):
                (lower_src if s == "lower" else upper_src).append((keys[k], _vec(getattr(c, s), d, s)))
        elif isinstance(c, Fixed):
            idx, vals = c.at(d)
            if np.any(~np.isnan(fixed[idx]) & (fixed[idx] != vals)):
                raise ValueError(f"Fixed {c.name!r}: a value is fixed twice to different numbers (infeasible)")
            fixed[idx] = vals
            duals[keys[0]] = ("fixed", idx)
            fixed_src.append((keys[0], idx))
        elif isinstance(c, SubsetSum):
            idx = _indices(c.indices, d, "indices")
            if idx.size == 0:
                raise ValueError("indices must select at least one value")
            sign = -1.0 if c.sense == ">=" else 1.0
            add_rows(sp.csr_matrix((np.full(idx.size, sign), (np.zeros(idx.size, int), idx)), shape=(1, d)),
                     sign * c.value, c.sense != "==", keys[0], scalar=True)
            subsets.append((keys[0], idx, float(c.value), c.sense))
        elif isinstance(c, Monotone):
            if c.pairs is not None:
                raise NotApplicable("Monotone(pairs=...) (a partial order) is not covered by the structured "
                                    "solver: use the cvxpy route")
            if chain_rows is not None:
                raise NotApplicable("more than one Monotone constraint")
            k = add_rows(c.matrix(d), 0.0, True, keys[0])
            a, b = c.edges(d)
            order = np.append(a, b[-1])
            flip = c.direction == "nondecreasing"
            chain_rows = (k, order[::-1] if flip else order, flip)
            others += 1
        elif isinstance(c, PartitionTotals):  # one == row per group, dual a vector (key order)
            add_rows(c.matrix(d), c.totals, False, keys[0])
            others += 1
        elif isinstance(c, LinearEquality):  # general == rows, dual a vector (row order)
            add_rows(c.matrix(d), c.rhs, False, keys[0])
            others += 1
        elif isinstance(c, Hierarchy):
            H = _cached(c, d, "matrix", lambda c=c: c.matrix(d))
            add_rows(H, 0.0, False, keys[0])
            hier.append((keys[0], H, c))
        else:
            raise NotApplicable(f"constraint {c!r} is not covered by the structured solver (user callables "
                                "need the cvxpy route)")
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
        tree, sum_name = _tree(hier, subsets, fixed_src, fixed, others, duals, d)
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
    got = getattr(problem, "_compiled", None)
    if got is None:
        try:
            got = compile_constraints(problem.constraints, problem.estimate.d)
        except ValueError:  # NotApplicable too
            got = False
        try:
            problem._compiled = got
        except AttributeError:
            pass
    return problem.constraints if got is False else got


def _cached(c, d, key, make):
    """make(), kept on a range tree's Hierarchy ``c`` per d (it is built consistent from its RangeTree
    and not mutated): the solver, the certificate and ldpopt's check each compile the same
    constraints. Other Hierarchy objects (a user's groups list may change) are not cached."""
    from ..ranges import _TreeHierarchy

    if not isinstance(c, _TreeHierarchy):
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


def _plain_simplex(constraints, names, d: int) -> Structure | None:
    """The Structure of [Simplex()] or [NonNegative(), SumTo(total > 0)] (either order) without the
    general pass, or None. The same numbers as the general pass (l = 0, u = the implied bound
    total − Σ_{w≠v} l_w = total, every upper bound implied; ``tests/test_structured_fast.py``), as
    read-only broadcast views: no full-length array is written for constant bounds (at d = 42,178
    the general pass was ~10 % of a simplex solve, mostly fresh memory for constant vectors)."""
    kinds = [type(c) for c in constraints]
    if kinds == [Simplex]:
        nn, sum_name, total = names[0][0], names[0][1], 1.0
    elif sorted(k.__name__ for k in kinds) == ["NonNegative", "SumTo"]:
        i = kinds.index(NonNegative)
        nn, sum_name, total = names[i][0], names[1 - i][0], constraints[1 - i].total
    else:
        return None
    if not total > 0:
        return None  # the general pass decides (a fixed point at 0, or infeasible)
    zero = np.broadcast_to(0.0, (d,))
    return Structure(d, zero, np.broadcast_to(float(total), (d,)), float(total), sp.csr_matrix((0, d)),
                     np.zeros(0), np.zeros(0, bool), sum_name, {nn: ("lower", zero), sum_name: ("sum",)},
                     np.ones(d, bool), None)  # a real array: & with a broadcast bool is 3x slower
