"""Range trees over an ordered domain: the B-ary hierarchy of hierarchical-interval LDP mechanisms
(Cormode, Kulkarni & Srivastava, *Answering Range Queries Under Local Differential Privacy*, VLDB
2019, §4; Hay et al., *Boosting the Accuracy of Differentially Private Histograms Through
Consistency*, VLDB 2010, §3 for the consistency step), built for :class:`~.constraints.Hierarchy`.
Notes: docs/notes/problems.md, "ldpopt.problems.constraints.ranges".
"""

from __future__ import annotations

import numbers
from typing import ClassVar

import numpy as np
import scipy.sparse as sp

from ..registry import Kind, ValueKey, register_constraint
from .base import Constraint, Hierarchy, NonNegative, SubsetSum

__all__ = ["RangeTree", "range_tree"]


def _int(value, name: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


class RangeTree:
    """The B-ary tree of node totals over d ordered leaves (module docstring for the layout).

    Attributes: ``d`` (leaves), ``branching``, ``size`` (nodes), ``level_start`` / ``level_size``
    (node index of each level's first node, and its node count; level 0 = leaves), ``parent``
    (node → parent, −1 for the root), ``lo`` / ``hi`` (leaf range [lo, hi) of each node).
    Cormode, Kulkarni & Srivastava, VLDB 2019, §4 (the tree); Hay et al., VLDB 2010, §3 (consistency).

    Parameters
    ----------
    d : int
        The number of ordered leaves (≥ 2).
    branching : int, default 2
        B, the children per internal node (≥ 2; the last node of a level may have fewer).

    Raises
    ------
    ValueError
        ``d`` or ``branching`` not an integer ≥ 2.

    Examples
    --------
    >>> import numpy as np
    >>> import ldpopt
    >>> from ldpopt.problems import range_tree
    >>> tree = range_tree(4)
    >>> est = ldpopt.oracles.get("grr", 2.0, tree.size).estimate(np.array([1_200, 900, 500, 400, 2_000, 900, 3_000]), 8_900)
    >>> sol = ldpopt.Problem(est, constraints=tree.constraints()).solve()
    >>> sol.f.round(4), bool(np.allclose(sol.f, tree.node_totals(sol.f[:4])))
    (array([0.352 , 0.2814, 0.1951, 0.1715, 0.6334, 0.3666, 1.    ]), True)
    """

    def __init__(self, d: int, branching: int = 2):
        self.d = _int(d, "d", 2)
        self.branching = B = _int(branching, "branching", 2)
        sizes = [self.d]
        while sizes[-1] > 1:
            sizes.append(-(-sizes[-1] // B))
        self.level_size = np.array(sizes, dtype=np.int64)
        self.level_start = np.concatenate([[0], np.cumsum(self.level_size)[:-1]])
        self.size = int(self.level_size.sum())
        lo, hi = [np.arange(self.d)], [np.arange(1, self.d + 1)]
        parent = []
        for k in range(len(sizes) - 1):  # one pass per level (log_B d), vectorised within
            m, j = sizes[k + 1], np.arange(sizes[k + 1])
            lo.append(lo[k][j * B])
            hi.append(hi[k][np.minimum(j * B + B, sizes[k]) - 1])
            parent.append(self.level_start[k + 1] + np.arange(sizes[k]) // B)
            assert m == lo[-1].shape[0]
        self.lo = np.concatenate(lo)
        self.hi = np.concatenate(hi)
        self.parent = np.concatenate(parent + [[-1]]).astype(np.int64)

    @property
    def leaves(self) -> np.ndarray:
        """The leaves' node indices, 0, 1, …, d−1 (``f[:d]`` is the histogram).

        Examples
        --------
        >>> from ldpopt.problems import range_tree
        >>> range_tree(4).leaves
        array([0, 1, 2, 3])
        """
        return np.arange(self.d)

    @property
    def root(self) -> int:
        """The root's node index, ``size − 1`` (its total is the whole domain's).

        Examples
        --------
        >>> from ldpopt.problems import range_tree
        >>> range_tree(4).root
        6
        """
        return self.size - 1

    def node_totals(self, leaf_values) -> np.ndarray:
        """Every node's total: the sum of ``leaf_values[v]`` over v in [lo, hi) (prefix sums, vectorised).

        Parameters
        ----------
        leaf_values : array_like (d,)
            One value per leaf.

        Returns
        -------
        ndarray (size,)

        Raises
        ------
        ValueError
            Not one value per leaf.

        Examples
        --------
        >>> from ldpopt.problems import range_tree
        >>> range_tree(4).node_totals([0.1, 0.2, 0.3, 0.4])
        array([0.1, 0.2, 0.3, 0.4, 0.3, 0.7, 1. ])
        """
        x = np.asarray(leaf_values, dtype=np.float64)
        if x.shape != (self.d,):
            raise ValueError(f"leaf_values must have length d = {self.d}, got shape {x.shape}")
        c = np.concatenate([[0.0], np.cumsum(x)])
        return c[self.hi] - c[self.lo]

    def hierarchy(self, name: str | None = None) -> Hierarchy:
        r"""The :class:`Hierarchy` constraint :math:`f_{\mathrm{parent}} = Σ f_{\mathrm{children}}` of every internal node.

        Parameters
        ----------
        name : str or None, default None
            Its name and dual's; None: ``"hierarchy"``.

        Returns
        -------
        Hierarchy
            Its matrix built from the parent array (a problem's d must be ``size``).

        Examples
        --------
        >>> from ldpopt.problems import range_tree
        >>> range_tree(4).hierarchy().groups
        [(4, array([0, 1])), (5, array([2, 3])), (6, array([4, 5]))]
        """
        return _TreeHierarchy(self, name)

    def constraints(self) -> list:
        """What a range-tree CLS needs instead of the simplex: f ≥ 0, the leaves sum to 1 (dual
        ``"leaves"``), and the tree (dual ``"hierarchy"``, one entry per internal node, in node
        order d, d+1, …).

        Returns
        -------
        list of Constraint
            ``[NonNegative(), SubsetSum(leaves, 1.0, name="leaves"), hierarchy()]``.

        Examples
        --------
        >>> from ldpopt.problems import range_tree
        >>> [c.name for c in range_tree(4).constraints()]
        ['nonnegative', 'leaves', 'hierarchy']
        """
        return [NonNegative(), SubsetSum(self.leaves, 1.0, name="leaves"), self.hierarchy()]

    def cover(self, a: int, b: int) -> np.ndarray:
        """The minimal set of nodes whose leaf ranges partition [a, b] (inclusive), sorted.

        Parameters
        ----------
        a, b : int
            The range's first and last leaf, :math:`0 ≤ a ≤ b < d`.

        Returns
        -------
        ndarray of int64

        Raises
        ------
        ValueError
            Not :math:`0 ≤ a ≤ b < d`.

        Examples
        --------
        >>> from ldpopt.problems import range_tree
        >>> range_tree(4).cover(1, 3)   # leaf 1 and the node over leaves 2, 3
        array([1, 5])
        """
        a = _int(a, "a", 0)
        b = _int(b, "b", 0)
        if not a <= b < self.d:
            raise ValueError(f"range [a, b] must satisfy 0 <= a <= b < d = {self.d}, got [{a}, {b}]")
        B, out = self.branching, []
        lo, hi = a, b + 1  # half-open, in units of the current level's nodes
        for k, m in enumerate(self.level_size.tolist()):
            if lo >= hi:
                break
            if k == len(self.level_size) - 1:
                out.append(self.level_start[k] + np.arange(lo, hi))
                break
            up_lo = -(-lo // B)  # first parent wholly inside
            up_hi = -(-hi // B) if hi == m else hi // B  # a partial last group is whole at m
            if up_lo >= up_hi:  # no parent fits: take the nodes themselves
                out.append(self.level_start[k] + np.arange(lo, hi))
                break
            out.append(self.level_start[k] + np.arange(lo, min(up_lo * B, hi)))
            out.append(self.level_start[k] + np.arange(max(up_hi * B, lo), hi))
            lo, hi = up_lo, up_hi
        return np.sort(np.concatenate(out)).astype(np.int64)

    def query_matrix(self, ranges) -> sp.csr_matrix:
        """Q (queries × size) with Q @ f the answers of the ranges [(a, b), …] from their covers.

        Parameters
        ----------
        ranges : sequence of (int, int)
            Inclusive ranges [a, b].

        Returns
        -------
        scipy.sparse.csr_matrix (queries × size)

        Raises
        ------
        ValueError
            A range not :math:`0 ≤ a ≤ b < d`.

        Examples
        --------
        >>> from ldpopt.problems import range_tree
        >>> range_tree(4).query_matrix([(0, 1), (1, 3)]).toarray()
        array([[0., 0., 0., 0., 1., 0., 0.],
               [0., 1., 0., 0., 0., 1., 0.]])
        """
        ranges = list(ranges)
        covers = [self.cover(a, b) for a, b in ranges]  # one per query, O(B log d) each
        rows = np.repeat(np.arange(len(covers)), [c.shape[0] for c in covers])
        cols = np.concatenate(covers) if covers else np.zeros(0, dtype=np.int64)
        return sp.csr_matrix((np.ones(cols.shape[0]), (rows, cols)), shape=(len(covers), self.size))

    def answer(self, f, a: int, b: int) -> float:
        """The sum of f over ``cover(a, b)``: the range [a, b] answered from the node totals.

        Parameters
        ----------
        f : array_like (size,)
            One total per node (a solution of the range-tree problem).
        a, b : int
            The range's first and last leaf, inclusive.

        Returns
        -------
        float

        Raises
        ------
        ValueError
            ``f`` not one entry per node, or a bad range.

        Examples
        --------
        >>> from ldpopt.problems import range_tree
        >>> tree = range_tree(4)
        >>> round(tree.answer(tree.node_totals([0.1, 0.2, 0.3, 0.4]), 1, 3), 6)
        0.9
        """
        f = np.asarray(f, dtype=np.float64)
        if f.shape != (self.size,):
            raise ValueError(f"f must have one entry per node ({self.size}), got shape {f.shape}")
        return float(np.sum(f[self.cover(a, b)]))

    def __repr__(self) -> str:
        return f"RangeTree(d={self.d}, branching={self.branching}, size={self.size}, levels={len(self.level_size)})"


@register_constraint
class _TreeHierarchy(Hierarchy):
    """A :class:`Hierarchy` whose matrix is built from the tree's parent array in one vectorised step
    (no per-group validation loop: the tree is consistent by construction).

    It also owns the problem-file type ``hierarchy``, which states a tree either way: explicit groups
    (a :class:`Hierarchy`, checked to be a tree or a forest, :func:`_check_tree`) or ``branching``
    and ``leaves`` (a :func:`range_tree`'s constraints)."""

    cache_compiled = True
    file_type = "hierarchy"
    file_kind = Kind("the counts are range-tree nodes, leaves first: branching and leaves; or "
                     "label_groups | position_groups = [[parent, [children]], ...]",
                     (), ("branching", "leaves"), (ValueKey("label_groups", "position_groups", "parent", False),))
    file_example: ClassVar[dict] = {"type": "hierarchy", "position_groups": [[4, [0, 1]], [5, [2, 3]]]}

    @classmethod
    def from_file(cls, entry):
        groups = entry.named[0]
        if groups is not None:
            if "branching" in entry or "leaves" in entry:
                raise entry.error("hierarchy takes label_groups/position_groups, or branching and leaves, not both")
            _check_tree(groups, entry.error)
            return [Hierarchy(groups)]
        missing = [k for k in ("branching", "leaves") if k not in entry]
        if missing:
            raise entry.error(f"hierarchy needs label_groups/position_groups, or branching and leaves (missing "
                              f"{missing[0]!r})")
        for k in ("branching", "leaves"):
            if not isinstance(entry.get(k), int) or isinstance(entry.get(k), bool):
                raise entry.error(f"{k} must be an integer, got {entry.get(k)!r}")
        tree = range_tree(entry.get("leaves"), entry.get("branching"))
        if tree.size != entry.d:
            raise entry.error(f"a range tree over leaves = {entry.get('leaves')} with branching = "
                              f"{entry.get('branching')} has {tree.size} nodes, but the counts file has d = {entry.d} "
                              "values (one count per node, leaves first)")
        return tree.constraints()

    def __init__(self, tree: RangeTree, name: str | None = None):
        Constraint.__init__(self, name)  # Hierarchy's own __init__ would validate group by group
        self.tree = tree

    @property
    def groups(self) -> list[tuple[int, np.ndarray]]:
        t = self.tree
        child = np.arange(t.size - 1)
        order = np.argsort(t.parent[child], kind="stable")
        starts = np.searchsorted(t.parent[child][order], np.arange(t.d, t.size))
        split = np.split(child[order], starts[1:])
        return [(int(p), c) for p, c in zip(range(t.d, t.size), split)]

    def matrix(self, d: int) -> sp.csr_matrix:
        t = self.tree
        if d != t.size:
            raise ValueError(f"a range tree over {t.d} leaves has {t.size} nodes; the estimate has d = {d} "
                             f"(its values must be the tree's nodes, leaves first)")
        child = np.arange(t.size - 1)
        rows = np.concatenate([t.parent[child] - t.d, np.arange(t.size - t.d)])
        cols = np.concatenate([child, np.arange(t.d, t.size)])
        vals = np.concatenate([-np.ones(child.shape[0]), np.ones(t.size - t.d)])
        return sp.csr_matrix((vals, (rows, cols)), shape=(t.size - t.d, d))


def range_tree(d: int, branching: int = 2) -> RangeTree:
    """The B-ary range tree over d ordered leaves (:class:`RangeTree`; Cormode et al., VLDB 2019, §4).

    Parameters
    ----------
    d : int
        The number of ordered leaves (≥ 2).
    branching : int, default 2
        B, the children per internal node (≥ 2).

    Returns
    -------
    RangeTree

    Raises
    ------
    ValueError
        ``d`` or ``branching`` not an integer ≥ 2.

    Examples
    --------
    >>> from ldpopt.problems import range_tree
    >>> range_tree(4), range_tree(10, branching=4).size
    (RangeTree(d=4, branching=2, size=7, levels=3), 14)
    """
    return RangeTree(d, branching)


def _check_tree(groups, error) -> None:
    """A hierarchy's ``(parent, children)`` groups (0-based rows) must form a tree or a forest: each
    row the parent of one group at most, the child of one parent at most, and never its own ancestor.
    :class:`~ldpopt.problems.Hierarchy` takes any groups (each is one equality f[parent] = Σ
    f[children]); a problem file that repeats a parent, gives a row two parents or closes a cycle
    describes no tree, and solving it would answer a question nobody asked, so it is refused (raised
    as ``error``)."""
    parent_of: dict[int, int] = {}  # row → its parent
    parents: set[int] = set()
    for k, (parent, children) in enumerate(groups):
        if parent in parents:
            raise error(f"groups[{k}]: row {parent} is already the parent of an earlier group (a tree lists "
                        f"each parent once, with all its children)")
        parents.add(parent)
        for child in children.tolist():
            if child in parent_of:
                raise error(f"groups[{k}]: row {child} is already a child of row {parent_of[child]} (in a tree "
                            f"each row has one parent)")
            parent_of[child] = parent
    done: set = set()
    for start in parent_of:  # each row has one parent: a cycle is a walk up that meets itself
        walk, v = set(), start
        while v in parent_of and v not in done:
            if v in walk:
                raise error(f"groups: row {v} is its own ancestor (the groups close a cycle, not a tree)")
            walk.add(v)
            v = parent_of[v]
        done |= walk
