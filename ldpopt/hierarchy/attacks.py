"""Poisoning a hierarchical histogram's range answer: the fake report that moves a consistent range
answer most, the GLS goodness-of-fit test that detects it, and refitting without the attacked level.

Notes: docs/hierarchies.md, "Attacks on trees"."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

from .. import oracles as _oracles
from .collect import HierarchicalEstimate
from .consistency import consistency, consistency_adjoint, level_slices
from .gls import gls
from .tree import Tree

__all__ = ["TreeAttack", "gof_test", "poison", "range_weights", "refit_without_worst_level"]


def range_weights(est: HierarchicalEstimate, a: int, b: int) -> np.ndarray:
    """w with :math:`w^T y` = the consistent answer of the range [a, b] (inclusive) from the raw node
    estimates y: the adjoint of the two passes applied to the range's leaf indicator.

    Parameters
    ----------
    est : HierarchicalEstimate
    a, b : int
        The target range, 0 <= a <= b < d.

    Returns
    -------
    ndarray, shape (size,)

    Raises
    ------
    ValueError
        A range outside [0, d).

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt import hierarchy
    >>> from ldpopt.hierarchy.attacks import range_weights
    >>> est = hierarchy.collect(np.array([400, 300, 100, 100, 50, 30, 20, 0]), "oue", 1.0, rng=0)
    >>> w = range_weights(est, 2, 5)
    >>> bool(np.isclose(w @ est.y, hierarchy.consistency(est.tree, est.y, est.var)[2:6].sum()))
    True
    """
    d = est.tree.d
    if not (0 <= int(a) <= int(b) < d):
        raise ValueError(f"the range [a, b] must satisfy 0 <= a <= b < d = {d}, got [{a}, {b}]")
    u = np.zeros(est.tree.size)
    u[int(a): int(b) + 1] = 1.0
    return consistency_adjoint(est.tree, u, est.var)


@dataclass(frozen=True)
class TreeAttack:
    """A poisoned hierarchical estimate and how it was made (returned by :func:`poison`).

    Parameters
    ----------
    estimate, level, n_fake, report, predicted_gain
        As the attributes below.

    Attributes
    ----------
    estimate : HierarchicalEstimate
        The raw estimates with the fake users' reports aggregated in (their level's n grown by them).
    level : int or None
        The collected level every fake user reported at (None: spread over the levels).
    n_fake : int
        The number of fake users.
    report : ndarray
        The unary report each fake user sent at ``level`` (1 = the bit set).
    predicted_gain : float
        The range answer's increase per fake user, in units of one user's weight 1/n, of the linear
        (consistent) answer to first order.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt import hierarchy
    >>> from ldpopt.hierarchy.attacks import poison
    >>> atk = poison(hierarchy.collect(np.full(16, 500), "oue", 1.0, rng=0), 2, 5, 80)
    >>> atk.n_fake, atk.estimate.n
    (80, 8080)
    """

    estimate: HierarchicalEstimate
    level: int | None
    n_fake: int
    report: np.ndarray
    predicted_gain: float


def _level_oracle(est: HierarchicalEstimate, k: int):
    fo = _oracles.get(est.oracle, epsilon=est.epsilon, d=int(est.tree.level_size[k]), **est.oracle_params)
    if getattr(fo, "report_form", None) != "unary":
        raise ValueError(f"est.oracle must report a unary vector (OUE, SUE) for this attack, got {est.oracle!r}")
    return fo


def poison(est: HierarchicalEstimate, a: int, b: int, n_fake: int, strategy: str = "optimal") -> TreeAttack:
    r"""Add ``n_fake`` fake users who raise the consistent answer of the range [a, b].

    ``"optimal"`` (ours, for the linear consistent answer; the tree attack setting of Liao et al.,
    *Data Poisoning Attacks to Locally Differentially Private Range Query Protocols*, arXiv
    2503.03454): the answer is :math:`w^T y` (:func:`range_weights`) and one fake unary report r at level k adds
    :math:`Σ_{v \in k} w_v (r_v - q)/((p - q) n_k)` to it, so every fake user reports at the level k maximising
    :math:`Σ_v \max(w_v, 0) - q Σ_v w_v` (over :math:`(p - q) n_k`) the report r_v = 1 exactly where w_v > 0 — the
    largest first-order gain any report can have. ``"consistent"``: the fake users are spread evenly
    over the levels and each sets the bits of its level's nodes that lie inside [a, b] (what users
    holding values in the range would most likely send: the levels stay consistent).

    Parameters
    ----------
    est : HierarchicalEstimate
        The genuine users' estimate (:func:`~ldpopt.hierarchy.collect`; a unary oracle).
    a, b : int
        The target range (inclusive).
    n_fake : int
        Fake users (>= 1).
    strategy : "optimal" or "consistent"

    Returns
    -------
    TreeAttack

    Raises
    ------
    ValueError
        A bad range, ``n_fake`` < 1, an unknown strategy, or an oracle without unary reports.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt import hierarchy
    >>> from ldpopt.hierarchy.attacks import poison
    >>> est = hierarchy.collect(np.full(64, 1000), "oue", 1.0, branching=4, rng=0)
    >>> atk = poison(est, 10, 20, 640)
    >>> atk.level, atk.predicted_gain > 1
    (0, True)
    """
    if isinstance(n_fake, bool) or not isinstance(n_fake, (int, np.integer)) or n_fake < 1:
        raise ValueError(f"n_fake must be an integer >= 1, got {n_fake!r}")
    if strategy not in ("optimal", "consistent"):
        raise ValueError(f"strategy must be 'optimal' or 'consistent', got {strategy!r}")
    w = range_weights(est, a, b)
    tree, lv = est.tree, level_slices(est.tree)
    h = len(lv) - 1                                        # collected levels (the root is not)
    oracles = [_level_oracle(est, k) for k in range(h)]
    y = est.y.copy()
    n_level = est.n_level.copy()
    if strategy == "optimal":
        score = np.array([(np.maximum(w[lv[k]], 0).sum() - oracles[k].q * w[lv[k]].sum())
                          / ((oracles[k].p - oracles[k].q) * est.n_level[k]) for k in range(h)])
        k = int(np.argmax(score))
        plan = {k: (int(n_fake), (w[lv[k]] > 0).astype(np.float64))}
        level: int | None = k
    else:
        per = np.full(h, n_fake // h) + (np.arange(h) < n_fake % h)
        plan = {}
        for k in range(h):
            inside = ((tree.lo[lv[k]] >= a) & (tree.hi[lv[k]] - 1 <= b)).astype(np.float64)
            if per[k] > 0:
                plan[k] = (int(per[k]), inside)
        level = None
    before = w @ est.y
    report = np.zeros(0)
    for k, (m, r) in plan.items():
        fo = oracles[k]
        nk = int(est.n_level[k])
        y[lv[k]] = (nk * est.y[lv[k]] + m * (r - fo.q) / (fo.p - fo.q)) / (nk + m)
        n_level[k] = nk + m
        report = r
    new = HierarchicalEstimate(tree, y, est.var, n_level, est.n + int(n_fake), est.oracle, est.epsilon,
                               dict(est.oracle_params))
    gain = float((w @ y - before) * (est.n + n_fake) / n_fake)
    return TreeAttack(new, level, int(n_fake), report, gain)


def gof_test(est: HierarchicalEstimate) -> tuple[float, int, float, np.ndarray]:
    r"""The GLS goodness-of-fit test of the tree: :math:`T = Σ_v (y_v - \hat x_v)^2/\mathrm{var}_v` over the measured nodes,
    :math:`χ^2` with one degree of freedom per redundant measurement (the internal nodes) when the levels
    agree; a poisoned level pulls them apart.

    Parameters
    ----------
    est : HierarchicalEstimate

    Returns
    -------
    statistic : float
    dof : int
    p_value : float
    per_level : ndarray
        Each collected level's share of T (the level to suspect first: the largest).

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt import hierarchy
    >>> from ldpopt.hierarchy.attacks import gof_test
    >>> est = hierarchy.collect(np.full(256, 1000), "oue", 1.0, branching=4, rng=0)
    >>> T, dof, p, share = gof_test(est)
    >>> dof, bool(p > 0.001)
    (85, True)
    """
    tree = est.tree
    s = np.repeat(est.var, tree.level_size)
    x = consistency(tree, est.y, est.var)
    pos = s > 0
    z2 = np.where(pos, (est.y - x) ** 2 / np.where(pos, s, 1.0), 0.0)
    dof = int(tree.size - tree.d)                          # one per internal node (the root's fixed total included)
    T = float(z2.sum())
    lv = level_slices(tree)
    per = np.array([z2[lv[k]].sum() for k in range(len(lv) - 1)]) / max(T, 1e-300)
    return T, dof, float(stats.chi2.sf(T, dof)), per


def refit_without_worst_level(est: HierarchicalEstimate) -> tuple[np.ndarray, int]:
    """The consistent node values with one collected level left out — the level whose removal leaves
    the best-fitting tree (the smallest goodness-of-fit statistic per degree of freedom) — by
    :func:`~ldpopt.hierarchy.gls`. Without the leaves the tree is fitted down to level 1 and each
    parent's total split evenly over its leaves (nothing else says how it splits). A recovery for an
    attack concentrated on one level; it costs that level's information.

    Parameters
    ----------
    est : HierarchicalEstimate

    Returns
    -------
    x : ndarray, shape (size,)
        Node values in the range tree's order (leaves first).
    level : int
        The level left out.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt import hierarchy
    >>> from ldpopt.hierarchy.attacks import poison, refit_without_worst_level
    >>> est = hierarchy.collect(np.full(64, 1000), "oue", 1.0, branching=4, rng=0)
    >>> x, k = refit_without_worst_level(poison(est, 10, 20, 3000).estimate)
    >>> k, bool(abs(x[10:21].sum() - 11 / 64) < 0.05)
    (0, True)
    """
    tree = est.tree
    t = Tree(tree.parent)
    lv = level_slices(tree)
    base = np.repeat(est.var, tree.level_size)
    d = tree.d
    upper = Tree(tree.parent[d:] - np.where(tree.parent[d:] >= 0, d, 0))   # the tree without its leaves
    kids = np.bincount(tree.parent[:d] - d, minlength=tree.size - d)
    best = None
    for k in range(len(lv) - 1):
        s = base.copy()
        if k == 0:
            xu = gls(upper, est.y[d:], s[d:]).x
            x = np.concatenate([xu[tree.parent[:d] - d] / kids[tree.parent[:d] - d], xu])
            s[:d] = np.inf
        else:
            s[lv[k]] = np.inf
            x = gls(t, est.y, s).x
        keep = np.isfinite(s) & (s > 0)
        T = float((((est.y - x) ** 2)[keep] / s[keep]).sum())
        dof = int(tree.size - tree.d) - int(tree.level_size[k if k > 0 else 1])
        score = T / max(dof, 1)
        if best is None or score < best[0]:
            best = (score, k, x)
    assert best is not None
    return best[2], best[1]
