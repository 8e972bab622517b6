"""Any tree of sums (arbitrary fan-outs, leaves at any depth) from a parent array, laid out by level.

Notes: docs/hierarchies.md, "The two passes and their variances"."""

from __future__ import annotations

import numpy as np

__all__ = ["Tree"]


class Tree:
    """A forest of sums, each internal node the total of its children, from a parent array.

    The nodes are re-laid out once in breadth-first order (:attr:`order`): every depth is one
    contiguous block and the children of one node are one contiguous run inside the next block, so
    every sum over children is one ``np.add.reduceat`` and every parent look-up one gather, a loop
    over depths only. Building costs one stable sort of the parent array (linear when the array is
    already breadth-first, e.g. a range tree's or a level-by-level census geography's) and O(nodes)
    memory.

    Parameters
    ----------
    parent : array_like of int, shape (N,)
        ``parent[v]``, the parent of node ``v``, or −1 for a root (at least one).

    Attributes
    ----------
    size : int
        N, the number of nodes.
    parent : ndarray of int64
        As given.
    depth : ndarray of int64
        The depth of every node (roots 0), in the caller's numbering.
    order : ndarray of int64
        The breadth-first layout: position i holds the caller's node ``order[i]``.
    level_start : ndarray of int64
        Where each depth's block starts in the layout (length depths + 1).

    Raises
    ------
    ValueError
        ``parent`` not a 1-D integer array, an entry outside [−1, N), no root, or a cycle (a node
        no root reaches).

    Examples
    --------
    >>> from ldpopt.hierarchy import Tree
    >>> t = Tree([-1, 0, 0, 1, 1, 1])           # a root, two children, the first with three leaves
    >>> t.size, t.depth.tolist(), t.leaves.tolist()
    (6, [0, 1, 1, 2, 2, 2], [2, 3, 4, 5])
    """

    def __init__(self, parent):
        par = np.asarray(parent)
        if par.ndim != 1 or par.size == 0 or par.dtype.kind not in "iu":
            raise ValueError(f"parent must be a non-empty 1-D array of integer node indices, got shape "
                             f"{par.shape} and dtype {par.dtype}")
        par = par.astype(np.int64)
        N = par.size
        if par.min() < -1 or par.max() >= N:
            raise ValueError(f"parent entries must be -1 (a root) or a node index in [0, {N}), got "
                             f"{int(par.min())}..{int(par.max())}")
        roots = np.flatnonzero(par < 0)
        if roots.size == 0:
            raise ValueError("parent must name at least one root (an entry -1)")
        self.parent = par
        self.size = N
        child = np.flatnonzero(par >= 0)
        by_parent = child[np.argsort(par[child], kind="stable")]      # children grouped by parent
        n_children = np.bincount(par[child], minlength=N)
        first = np.concatenate(([0], np.cumsum(n_children)[:-1]))
        blocks, frontier, seen = [roots], roots, roots.size
        while True:
            cnt = n_children[frontier]
            total = int(cnt.sum())
            if total == 0:
                break
            # the children of the whole frontier, in frontier order: contiguous runs of by_parent
            base = np.repeat(first[frontier] - np.cumsum(cnt) + cnt, cnt)
            frontier = by_parent[base + np.arange(total)]
            blocks.append(frontier)
            seen += total
        if seen != N:
            raise ValueError(f"parent must describe a forest: {N - seen} node(s) lie on a cycle that no root reaches")
        self.order = np.concatenate(blocks)
        sizes = np.array([b.size for b in blocks], dtype=np.int64)
        self.level_start = np.concatenate(([0], np.cumsum(sizes)))
        pos = np.empty(N, dtype=np.int64)
        pos[self.order] = np.arange(N)
        self._pos = pos
        self.depth = np.repeat(np.arange(sizes.size, dtype=np.int64), sizes)[pos]
        # per depth k < last: the layout index of each level-(k+1) node's parent, local to block k,
        # the internal nodes of block k (local indices) and where each one's children start
        self._par_local: list[np.ndarray] = []
        self._internal: list[np.ndarray] = []
        self._starts: list[np.ndarray] = []
        nc = n_children[self.order]
        for k in range(sizes.size - 1):
            s0, s1, s2 = self.level_start[k], self.level_start[k + 1], self.level_start[k + 2]
            pl = pos[par[self.order[s1:s2]]] - s0
            self._par_local.append(pl)
            inner = np.flatnonzero(nc[s0:s1] > 0)
            self._internal.append(inner)
            self._starts.append(np.concatenate(([0], np.cumsum(nc[s0:s1][inner])[:-1])))
        self._n_children = n_children

    @classmethod
    def from_children(cls, children) -> Tree:
        """The tree of ``{parent: children}`` (or ``(parent, children)`` pairs) over nodes 0..N−1.

        Parameters
        ----------
        children : dict or sequence of (int, sequence of int)
            Each internal node with its children; N is one more than the largest index named.

        Returns
        -------
        Tree

        Raises
        ------
        ValueError
            A node listed as the child of two parents, or what :class:`Tree` refuses.

        Examples
        --------
        >>> from ldpopt.hierarchy import Tree
        >>> Tree.from_children({0: [1, 2], 1: [3, 4]}).parent.tolist()
        [-1, 0, 0, 1, 1]
        """
        items = list(children.items()) if isinstance(children, dict) else list(children)
        if not items:
            raise ValueError("children must list at least one (parent, children) pair")
        ps = np.concatenate([np.full(len(np.atleast_1d(c)), int(p), dtype=np.int64) for p, c in items])
        cs = np.concatenate([np.atleast_1d(np.asarray(c, dtype=np.int64)) for _, c in items])
        N = int(max(ps.max(), cs.max())) + 1
        if np.unique(cs).size != cs.size:
            raise ValueError("children: a node is listed as the child of more than one parent")
        par = np.full(N, -1, dtype=np.int64)
        par[cs] = ps
        return cls(par)

    @property
    def n_levels(self) -> int:
        """The number of depths (a root alone: 1).

        Examples
        --------
        >>> from ldpopt.hierarchy import Tree
        >>> Tree([-1, 0, 0, 1]).n_levels
        3
        """
        return int(self.level_start.size - 1)

    @property
    def leaves(self) -> np.ndarray:
        """The nodes with no child, ascending (the caller's numbering).

        Examples
        --------
        >>> from ldpopt.hierarchy import Tree
        >>> Tree([-1, 0, 0, 1]).leaves.tolist()
        [2, 3]
        """
        return np.flatnonzero(self._n_children == 0)

    def groups(self) -> list[tuple[int, np.ndarray]]:
        """The ``(parent, children)`` pairs of :class:`~ldpopt.problems.Hierarchy` (one per internal node).

        Returns
        -------
        list of (int, ndarray)

        Examples
        --------
        >>> from ldpopt.hierarchy import Tree
        >>> [(p, c.tolist()) for p, c in Tree([-1, 0, 0]).groups()]
        [(0, [1, 2])]
        """
        child = np.flatnonzero(self.parent >= 0)
        srt = child[np.argsort(self.parent[child], kind="stable")]
        cuts = np.cumsum(self._n_children)
        inner = np.flatnonzero(self._n_children > 0)
        return [(int(p), srt[cuts[p] - self._n_children[p]: cuts[p]]) for p in inner]

    def node_totals(self, leaf_values) -> np.ndarray:
        """Every node's total from the values at the leaves (leaves keep theirs), one pass up.

        Parameters
        ----------
        leaf_values : array_like, shape (N,) or (n_leaves,), or those with a second axis (m columns)
            One value per node (internal entries ignored) or one per leaf, in :attr:`leaves` order.

        Returns
        -------
        ndarray, shape (N,) or (N, m)

        Raises
        ------
        ValueError
            Neither length.

        Examples
        --------
        >>> from ldpopt.hierarchy import Tree
        >>> Tree([-1, 0, 0, 1, 1]).node_totals([2.0, 3.0, 4.0]).tolist()
        [9.0, 7.0, 2.0, 3.0, 4.0]
        """
        v = np.asarray(leaf_values, dtype=np.float64)
        leaves = self.leaves
        if v.ndim not in (1, 2) or v.shape[0] not in (self.size, leaves.size):
            raise ValueError(f"leaf_values must have one row per node ({self.size}) or per leaf "
                             f"({leaves.size}), got shape {v.shape}")
        x = np.zeros((self.size,) + v.shape[1:])
        x[leaves] = v[leaves] if v.shape[0] == self.size else v
        z = x[self.order]
        for k in range(self.n_levels - 2, -1, -1):
            s0 = self.level_start[k]
            z[s0 + self._internal[k]] = self.sum_children(k, z)
        return self.from_layout(z)

    # --- the per-level primitives of the passes (on arrays in the layout) -------------------------
    def block(self, k: int) -> slice:
        """The layout slice of depth ``k``.

        Parameters
        ----------
        k : int
            The depth.

        Returns
        -------
        slice

        Examples
        --------
        >>> from ldpopt.hierarchy import Tree
        >>> Tree([-1, 0, 0]).block(1)
        slice(1, 3, None)
        """
        return slice(int(self.level_start[k]), int(self.level_start[k + 1]))

    def sum_children(self, k: int, a: np.ndarray) -> np.ndarray:
        """The sum over the children of each internal node of depth ``k`` of the layout array ``a``
        (rows; 1-D or 2-D), in the order of :meth:`internal`.

        Parameters
        ----------
        k : int
            The parents' depth (< :attr:`n_levels` − 1).
        a : ndarray, shape (N,) or (N, m)
            Values in the layout.

        Returns
        -------
        ndarray
            One row per internal node of depth ``k``.

        Examples
        --------
        >>> import numpy as np
        >>> from ldpopt.hierarchy import Tree
        >>> t = Tree([-1, 0, 0])
        >>> t.sum_children(0, np.array([0.0, 2.0, 5.0])).tolist()
        [7.0]
        """
        return self.reduce_children(k, a[self.block(k + 1)])

    def reduce_children(self, k: int, block_values: np.ndarray) -> np.ndarray:
        """:meth:`sum_children` on the rows of depth ``k`` + 1 alone (``block_values``, that block's rows).

        Parameters
        ----------
        k : int
            The parents' depth.
        block_values : ndarray
            One row per node of depth ``k`` + 1.

        Returns
        -------
        ndarray
            One row per internal node of depth ``k``.

        Examples
        --------
        >>> import numpy as np
        >>> from ldpopt.hierarchy import Tree
        >>> Tree([-1, 0, 0]).reduce_children(0, np.array([2.0, 5.0])).tolist()
        [7.0]
        """
        return np.add.reduceat(block_values, self._starts[k], axis=0)

    def internal(self, k: int) -> np.ndarray:
        """Local indices (within depth ``k``'s block) of its nodes that have children.

        Parameters
        ----------
        k : int
            The depth.

        Returns
        -------
        ndarray of int64

        Examples
        --------
        >>> from ldpopt.hierarchy import Tree
        >>> Tree([-1, 0, 0, 2]).internal(1).tolist()
        [1]
        """
        return self._internal[k]

    def parent_local(self, k: int) -> np.ndarray:
        """For each node of depth ``k`` + 1, its parent's local index within depth ``k``'s block.

        Parameters
        ----------
        k : int
            The parents' depth.

        Returns
        -------
        ndarray of int64

        Examples
        --------
        >>> from ldpopt.hierarchy import Tree
        >>> Tree([-1, 0, 0, 2]).parent_local(1).tolist()
        [1]
        """
        return self._par_local[k]

    def to_layout(self, a) -> np.ndarray:
        """``a`` (one row per node, the caller's numbering) in the layout.

        Parameters
        ----------
        a : array_like, shape (N,) or (N, m)

        Returns
        -------
        ndarray

        Examples
        --------
        >>> import numpy as np
        >>> from ldpopt.hierarchy import Tree
        >>> Tree([2, 2, -1]).to_layout(np.array([1.0, 2.0, 3.0])).tolist()
        [3.0, 1.0, 2.0]
        """
        return np.asarray(a)[self.order]

    def from_layout(self, a: np.ndarray) -> np.ndarray:
        """The inverse of :meth:`to_layout`.

        Parameters
        ----------
        a : ndarray, shape (N,) or (N, m)

        Returns
        -------
        ndarray

        Examples
        --------
        >>> import numpy as np
        >>> from ldpopt.hierarchy import Tree
        >>> t = Tree([2, 2, -1])
        >>> t.from_layout(t.to_layout(np.array([1.0, 2.0, 3.0]))).tolist()
        [1.0, 2.0, 3.0]
        """
        return a[self._pos]

    def __repr__(self) -> str:
        return f"Tree(size={self.size}, leaves={int((self._n_children == 0).sum())}, depths={self.n_levels})"
