"""One tree of sums (a range tree's :class:`~ldpopt.problems.Hierarchy`): a tree-structured Newton pass.

Notes: docs/notes/problems.md, "ldpopt.problems.dual.tree".
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from ..objectives.separable import NotApplicable
from .dual import backtrack, damping, inverse_curvature

__all__ = ["Tree", "recover_tree", "solve_tree", "tree_of", "tree_upper"]

_EPS = np.finfo(float).eps
# Levenberg weight's ceiling (dual.py lets it reach 1): measured on 216 solves (ε ∈ {0.01, 1, 6, 20} ×
# n ∈ {10, 10⁴, 10⁹} × d ∈ {2, 100, 3000} × B ∈ {2, 4} × cls / weighted MLE / binomial), 1e-4 left one
# fewer uncertified than 1 (16 vs 17; all 16 at n = 10 or ε = 20, where Problem.solve falls back to cvxpy).
# With the near-kink rule of the docstring, on those solves × 3 seeds: 1e-4 → 55 of 648, 1e-2 and 1 → 49
# (the same corners; no change on the heavy-hitter trees or benchmarks/bench_structured_tree.py's); kept
MU_MAX = 1e-4
# the share of the model's curvature along a step, Σ_v J_v Δt_v², that near-kink values pushed into their
# bound may carry before the step is solved again without them (module docstring). Measured on the
# 648 range-tree solves and 80 heavy-hitter trees of the docstring: 0 → 57 uncertified (80 of 80 heavy
# certified, 749 steps in all), 0.1 → 55 (80 of 80, 756), 0.3 → 57 (80 of 80, 796); at 0.1 two to five
# of a solve's 10–17 steps are solved twice on benchmarks/bench_structured_tree.py's trees
KINK_SHARE = 0.1


@dataclass
class Tree:
    """A single tree from a Hierarchy matrix. ``rows[k]``: the node of row k; ``row_of``: node → its row
    (−1 at a leaf); ``prow``: node → its parent's row (−1 at the root); ``depth_rows``: the row numbers
    by depth of their node, deepest first, root last; ``depth_nodes``: the same for all nodes."""

    d: int
    root: int
    rows: np.ndarray
    row_of: np.ndarray
    prow: np.ndarray
    parent: np.ndarray
    leaf: np.ndarray
    depth_rows: list
    depth_nodes: list
    hier: slice                # the Hierarchy rows in the Structure's A
    total: float               # T
    total_row: int | None      # the leaf SubsetSum's row in A (None: Fixed on the root)
    H: sp.csr_matrix           # the Hierarchy rows (+1 at the parent, −1 at each child), row k = rows[k]

    def __post_init__(self):
        self.kids = np.flatnonzero(self.prow >= 0)   # every node but the root
        self.kid_row = self.prow[self.kids]           # its parent's row
        # H f, Hᵀ y and their |H| forms by scipy's compiled products (3–6× numpy's bincount / scatter at
        # d = 10⁵; measured)
        H = sp.csr_matrix(self.H, dtype=np.float64)
        H.sum_duplicates()
        self.H, self.Habs = H, abs(H)
        self.HT, self.HabsT = H.T, self.Habs.T  # (views; made once, not per product)


def tree_of(H: sp.csr_matrix, d: int) -> tuple:
    """(root, rows, row_of, prow, parent, depth_rows, depth_nodes) of the Hierarchy matrix ``H``
    (rows × d), or :class:`NotApplicable` saying why it is not one tree over the whole domain."""
    H = sp.csr_matrix(H, copy=True)
    H.sum_duplicates()
    n = H.shape[0]
    rid = np.repeat(np.arange(n), np.diff(H.indptr))
    pos, neg = H.data == 1.0, H.data == -1.0
    if not np.all(pos | neg):
        raise NotApplicable("a Hierarchy group lists a child twice: not a tree")
    if np.any(np.bincount(rid[pos], minlength=n) != 1):
        raise NotApplicable("every Hierarchy group needs exactly one parent")
    rows = np.empty(n, np.int64)
    rows[rid[pos]] = H.indices[pos]
    if np.any(np.bincount(rows, minlength=d) > 1):
        raise NotApplicable("a node is the parent of two Hierarchy groups: not one tree")
    kids, krow = H.indices[neg], rid[neg]
    if np.any(np.bincount(kids, minlength=d) > 1):
        raise NotApplicable("a node has two parents in the Hierarchy: not a tree")
    row_of = np.full(d, -1, np.int64)
    row_of[rows] = np.arange(n)
    prow = np.full(d, -1, np.int64)
    prow[kids] = krow
    parent = np.where(prow >= 0, rows[np.maximum(prow, 0)], -1)
    roots = np.flatnonzero((row_of >= 0) & (prow < 0))
    if roots.size != 1:
        raise NotApplicable(f"the Hierarchy groups form a forest of {roots.size} trees, not one tree")
    if np.any((row_of < 0) & (prow < 0)):
        raise NotApplicable("some values are in no Hierarchy group: the tree must cover the whole domain")
    # children lists (CSR of the −1 entries) for a breadth-first pass from the root
    order = np.argsort(krow, kind="stable")
    cptr = np.concatenate([[0], np.cumsum(np.bincount(krow, minlength=n))])
    ckids = kids[order]
    depth_nodes, frontier, seen = [], np.array([roots[0]]), 1
    while frontier.size:
        depth_nodes.append(frontier)
        r = row_of[frontier]
        r = r[r >= 0]
        if not r.size:
            break
        lens = cptr[r + 1] - cptr[r]
        start = np.repeat(cptr[r] - np.concatenate([[0], np.cumsum(lens)[:-1]]), lens)
        frontier = ckids[start + np.arange(int(lens.sum()))]
        seen += frontier.size
    if seen != d:  # a cycle apart from the root's tree
        raise NotApplicable("the Hierarchy groups contain a cycle: not a tree")
    depth_nodes = depth_nodes[::-1]
    depth_rows = [row_of[nd][row_of[nd] >= 0] for nd in depth_nodes]
    depth_rows = [r for r in depth_rows if r.size]
    return int(roots[0]), rows, row_of, prow, parent, depth_rows, depth_nodes


def tree_upper(tr: Tree, lo: np.ndarray) -> np.ndarray:
    """The implied upper bound of every node: f_v = Σ_{leaves under v} f ≤ T − Σ_{other leaves} l."""
    sub = np.where(tr.leaf, lo, 0.0)
    for nodes in tr.depth_nodes[:-1]:  # deepest first; the root has no parent
        np.add.at(sub, tr.parent[nodes], sub[nodes])
    return tr.total - (float(np.sum(lo[tr.leaf])) - sub)


def _t(tr: Tree, y, sign: float = -1.0):
    """t = Hᵀ y: y_v at an internal node, minus its parent's y (``sign`` = +1: |H|ᵀ y)."""
    return (tr.HT if sign < 0 else tr.HabsT) @ y


def _rowsum(tr: Tree, x, sign: float = 1.0):
    """x at each internal node plus the sum of x over its children (|H| x; ``sign`` = −1: minus, H x)."""
    return (tr.H if sign < 0 else tr.Habs) @ x


def _newton(tr: Tree, D, g):
    """Δ solving (H D Hᵀ) Δ = g: eliminate leaves → root, back-substitute root → leaves."""
    n = tr.rows.shape[0]
    diag = _rowsum(tr, D)
    floor = 1e-14 * float(np.max(diag, initial=0.0)) + 1e-300
    gg = g.copy()
    steps = []
    for ks in tr.depth_rows[:-1]:  # deepest first; the root's row is last and has no parent row
        off = D[tr.rows[ks]]           # |off-diagonal| between row k and its parent's row
        kp = tr.prow[tr.rows[ks]]
        piv = np.maximum(diag[ks], floor)
        np.add.at(diag, kp, -off * off / piv)
        np.add.at(gg, kp, off * gg[ks] / piv)
        steps.append((ks, kp, off, piv))
    delta = np.zeros(n)
    kr = tr.depth_rows[-1]
    delta[kr] = gg[kr] / np.maximum(diag[kr], floor)
    for ks, kp, off, piv in reversed(steps):
        delta[ks] = (gg[ks] + off * delta[kp]) / piv
    return delta


def solve_tree(sep, st, max_iter: int = 100, stop=None):
    """(f, λ = 0, y of the Structure's rows, info) by the module docstring's Newton pass."""
    tr = st.tree
    l, u = st.l.copy(), st.u.copy()
    l[tr.root] = u[tr.root] = tr.total
    free = l < u
    with np.errstate(divide="ignore", invalid="ignore"):
        d1l, d1u = sep.d1(l), sep.d1(u)
        flat = free & (sep.d2(l) == 0) & (sep.d2(u) == 0)
        span = np.maximum(np.abs(d1u), np.abs(d1l))
    if flat.any():
        # h_v ≡ linear on [l_v, u_v] (a multinomial value with no reports): its argmin jumps from l to u
        # at one t and Newton on the tree's multipliers cannot place it inside (dual.py spreads such mass
        # over the Σ f row; a tree has none). The choice: leave it to the cvxpy route.
        raise NotApplicable(f"{int(flat.sum())} value(s) with a flat objective term (e.g. a multinomial count of "
                            "0): the tree pass needs h'' > 0; use the cvxpy route")
    span = span[np.isfinite(span)]
    # |t_v| beyond max |h'| pins every value at a bound, and t_v = y_v − y_parent: along a path from the
    # root the y's reach at most depth × that (a cap on the step, not on y)
    radius = 2.0 * len(tr.depth_nodes) * float(span.max()) if span.size and span.max() > 0 else np.inf
    n = tr.rows.shape[0]
    y = np.zeros(n)

    def at(yv):
        t = _t(tr, yv)
        f = sep.argmin(t, l, u, d1l, d1u)
        with np.errstate(invalid="ignore"):
            # φ(y) (b = 0); np.sum of products, not BLAS dot (its threads cost more than the product here)
            hv, tf = sep.value(f), t * f
            val = float(np.sum(hv)) + float(np.sum(tf))
            mag = float(np.sum(np.abs(hv))) + float(np.sum(np.abs(tf)))  # its rounding scale
        return f, t, val, mag

    f, t, phi, mag = at(y)
    info = {"tree_newton_iterations": 0, "line_search_failures": 0, "tree_depth": len(tr.depth_nodes),
            "tree_steps_solved_twice": 0}
    mu, best, stalled = 1e-10, np.inf, 0
    for it in range(1, max_iter + 1):
        if it > 1 and stop is not None and stop():  # solve(time_limit=...): the point so far
            break
        g = _rowsum(tr, f, -1.0)
        inner = (f > l) & (f < u)
        D_all = inverse_curvature(sep, f) * free  # (finite: 0 at a fixed value)
        top = float(np.max(np.abs(g), initial=0.0))
        near = False
        if top <= 1e-6 * max(abs(tr.total), 1e-300):
            # rounding of each row: its values and the terms an interior argmin is formed from (|t|/h'',
            # t's own rounding from |y_v| + |y_parent|)
            scale = _rowsum(tr, np.abs(f) + np.where(inner, _t(tr, np.abs(y), 1.0) * D_all, 0.0))
            if np.all(np.abs(g) <= 4 * _EPS * scale + 1e-300) or stalled >= 3:
                break
            near = bool(top <= 4e4 * _EPS * float(np.max(scale, initial=0.0)))
        # near rounding level (within 1e4 of it) and no more progress: stop
        stalled = stalled + 1 if near and top > 0.5 * best else 0
        best = min(best, top)
        info["tree_newton_iterations"] = it
        # values at a bound within the current residual of leaving it (in frequency units, |h' + t|/h'')
        # count as free; those the step then pushes into their bound have no curvature along it: when
        # theirs is over KINK_SHARE of the model's, the step is taken again without them (module
        # docstring, "Near-kink values")
        with np.errstate(invalid="ignore"):
            r = sep.d1(f) + t  # ≥ 0 at a lower bound, ≤ 0 at an upper one
            close = free & ~inner & (np.abs(r) * D_all <= top)
        J = D_all * ((inner | close) + mu)  # (a product by the mask: np.where on a ragged mask costs ~5×)
        delta = _newton(tr, J, g)
        # pushed into its bound: r_v Δt_v > 0 (r_v = 0: at the kink itself, kept; Δt_v = 0: no curvature
        # to count); the model's curvature along Δ is Σ_v J_v Δt_v² = Δᵀ H J Hᵀ Δ = gᵀΔ
        dt = _t(tr, delta)
        inward = close & (r * dt > 0)
        curv = J * dt
        curv *= dt
        if float(np.sum(curv * inward)) > KINK_SHARE * float(np.sum(g * delta)):
            info["tree_steps_solved_twice"] += 1
            delta = _newton(tr, D_all * ((inner | (close & ~inward)) + mu), g)
        if not np.all(np.isfinite(delta)):
            break
        step = float(np.max(np.abs(delta)))
        if step > radius:  # beyond the range of h' every value is pinned at a bound
            delta *= radius / step
        # Armijo, up to φ's own rounding (its terms' size: at 1e-12 residuals the gain is ~1e-24). Called
        # by backtrack in this iteration only; the defaults bind its values
        def trial(alpha, y=y, delta=delta, phi=phi, g=g, mag=mag):
            y_new = y + alpha * delta
            f_new, t_new, phi_new, mag_new = at(y_new)
            ok = phi_new >= phi + 1e-4 * alpha * float(np.sum(g * delta)) - 8 * _EPS * max(mag, mag_new)
            return (y_new, f_new, t_new, phi_new, mag_new) if ok else None

        alpha, got = backtrack(trial, 40)
        if got is None or np.array_equal(got[0], y):
            info["line_search_failures"] += int(got is None)
            break
        mu = damping(mu, alpha, MU_MAX)
        y, f, t, phi, mag = got
    f[tr.root] = tr.total
    # the user's rows: ν' = −(h'_root(T) + t_root) for the root total; hierarchy multipliers y + ν'
    return f, 0.0, _to_user(sep, st, f, y), info


def _to_user(sep, st, f, y):
    """The Structure's row multipliers from the root-fixed ones (module docstring)."""
    tr = st.tree
    y_out = np.zeros(st.m)
    if tr.total_row is None:
        y_out[tr.hier] = y
        return y_out
    with np.errstate(divide="ignore", invalid="ignore"):
        nu = -float(np.broadcast_to(sep.d1(f), f.shape)[tr.root] + _t(tr, y)[tr.root])
    y_out[tr.hier] = y + nu
    y_out[tr.total_row] = nu
    return y_out


def recover_tree(sep, st, f):
    """Row multipliers fitting stationarity h_v'(f_v) + t_v = 0 by least squares on the values strictly
    inside their bounds (:func:`ldpopt.problems.certificate.recover_multipliers` for a tree): the
    normal equations (H I Hᵀ) y = −H I h', I the inner values but the root, are tree-structured and
    solved by :func:`_newton`'s elimination in O(size) (a dense solve would be (size/B)³)."""
    tr = st.tree
    f = np.asarray(f, float)
    inner = (f > st.l) & (f < st.u)
    inner[tr.root] = False
    with np.errstate(divide="ignore", invalid="ignore"):
        g = np.broadcast_to(sep.d1(f), f.shape)
    use = inner & np.isfinite(g)
    y = _newton(tr, use.astype(float), -_rowsum(tr, np.where(use, g, 0.0), -1.0))
    return _to_user(sep, st, f, y)
