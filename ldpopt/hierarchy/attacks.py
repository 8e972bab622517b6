"""Poisoning a hierarchical histogram's range answer: the fake report that moves a range answer most
under each post-processing (none, Norm-Sub per level, GLS, GLS then Norm-Sub, ldpopt's clip-and-round
release), the GLS goodness-of-fit test that detects it, and refitting without the attacked level.

Notes: docs/hierarchies.md, "Attacks on trees"."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

from .. import oracles as _oracles
from .._validation import as_generator
from ..methods.normalize import project_simplex
from .collect import HierarchicalEstimate
from .consistency import consistency, consistency_adjoint, level_slices
from .gls import gls
from .tree import Tree

__all__ = ["POSTS", "TreeAttack", "answer_from_fit", "gof_test", "poison", "range_answer", "range_weights",
           "refit_without_worst_level"]

#: the post-processings :func:`range_answer` reads a range through: ``"none"`` (the raw estimates of
#: the range's cover nodes summed, the hierarchical-interval answer), ``"norm-sub"`` (Norm-Sub of each
#: level's raw estimates, then the cover), ``"gls"`` (the consistent answer), ``"gls-norm-sub"``
#: (Norm-Sub of the consistent leaves, :func:`~ldpopt.hierarchy.nonnegative_heuristic`),
#: ``"gls-clip-round"`` (ldpopt's release: the consistent counts' leaves rounded and clipped at 0)
POSTS = ("none", "norm-sub", "gls", "gls-norm-sub", "gls-clip-round")
_LINEAR_GLS = ("gls", "gls-norm-sub", "gls-clip-round")      # read through the consistent leaves


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
    a, b = _check_range(est.tree.d, a, b)
    u = np.zeros(est.tree.size)
    u[int(a): int(b) + 1] = 1.0
    return consistency_adjoint(est.tree, u, est.var)


def _check_post(post) -> str:
    if post not in POSTS:
        raise ValueError(f"post must be one of {POSTS}, got {post!r}")
    return str(post)


def _check_range(d: int, a, b) -> tuple[int, int]:
    if not (0 <= int(a) <= int(b) < d):
        raise ValueError(f"the range [a, b] must satisfy 0 <= a <= b < d = {d}, got [{a}, {b}]")
    return int(a), int(b)


def answer_from_fit(tree, x, a: int, b: int, post: str, n: int = 1) -> float:
    """The answer of the range [a, b] from *consistent* node values ``x`` (a fit, e.g.
    :func:`refit_without_worst_level`'s) under ``post``: the leaves' sum for ``"none"`` and ``"gls"``,
    of their Norm-Sub for the two Norm-Sub posts, of :func:`~ldpopt.hierarchy.clip_round` of n·x over n
    for ``"gls-clip-round"``.

    Parameters
    ----------
    tree : RangeTree
    x : array_like, shape (size,)
        Consistent node frequencies, leaves first.
    a, b : int
        The range (inclusive).
    post : str
        One of :data:`POSTS`.
    n : int, default 1
        Users (the clip-and-round release rounds counts).

    Returns
    -------
    float

    Raises
    ------
    ValueError
        A bad range or an unknown ``post``.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt import hierarchy
    >>> from ldpopt.hierarchy.attacks import answer_from_fit
    >>> est = hierarchy.collect(np.array([400, 300, 100, 100, 50, 30, 20, 0]), "oue", 1.0, rng=0)
    >>> x = est.consistent()
    >>> bool(np.isclose(answer_from_fit(est.tree, x, 2, 5, "gls"), x[2:6].sum()))
    True
    """
    post = _check_post(post)
    a, b = _check_range(tree.d, a, b)
    v = np.asarray(x, dtype=np.float64)
    leaves = v[: tree.d]
    if post in ("norm-sub", "gls-norm-sub"):
        leaves = project_simplex(leaves)
    elif post == "gls-clip-round":
        return float(np.maximum(np.rint(leaves[a: b + 1] * n), 0.0).sum() / n)
    return float(leaves[a: b + 1].sum())


def range_answer(est: HierarchicalEstimate, a: int, b: int, post: str = "gls") -> float:
    """The answer of the range [a, b] the server releases from the raw node estimates under ``post``
    (:data:`POSTS`): the cover's raw sum (``"none"``), the cover's sum after Norm-Sub of each level
    (``"norm-sub"``, Wang et al. arXiv §3.3 per level as hierarchical-interval protocols post-process),
    the consistent answer (``"gls"``), Norm-Sub of the consistent leaves (``"gls-norm-sub"``) or the
    clip-and-round release of the consistent counts (``"gls-clip-round"``, leaves rounded and clipped).

    Parameters
    ----------
    est : HierarchicalEstimate
    a, b : int
        The range (inclusive).
    post : str, default "gls"

    Returns
    -------
    float
        A frequency (a share of the users).

    Raises
    ------
    ValueError
        A bad range or an unknown ``post``.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt import hierarchy
    >>> from ldpopt.hierarchy.attacks import range_answer
    >>> est = hierarchy.collect(np.full(16, 500), "oue", 1.0, rng=0)
    >>> [round(range_answer(est, 0, 7, p), 2) for p in ("none", "gls")]
    [0.53, 0.48]
    """
    post = _check_post(post)
    a, b = _check_range(est.tree.d, a, b)
    tree = est.tree
    if post in ("none", "norm-sub"):
        y = est.y
        if post == "norm-sub":
            lv = level_slices(tree)
            y = y.copy()
            for k in range(len(lv) - 1):                   # one projection per level (levels, not users)
                y[lv[k]] = project_simplex(y[lv[k]])
        return float(y[tree.cover(a, b)].sum())
    return answer_from_fit(tree, consistency(tree, est.y, est.var), a, b, post, est.n)


def _cover_indicator(tree, a: int, b: int) -> np.ndarray:
    w = np.zeros(tree.size)
    w[tree.cover(a, b)] = 1.0
    return w


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
        The released range answer's increase per fake user, in units of one user's weight 1/(n + m),
        under the post-processing the attack was made for (exact on ``estimate``, not first-order).

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


def poison(est: HierarchicalEstimate, a: int, b: int, n_fake: int, strategy: str = "optimal", *,
           post: str = "gls", rng=None) -> TreeAttack:
    r"""Add ``n_fake`` fake users who raise the answer of the range [a, b] under ``post``.

    ``"optimal"`` (ours; the tree attack setting of Liao et al., *Data Poisoning Attacks to Locally
    Differentially Private Range Query Protocols*, arXiv 2503.03454, whose algorithm we could not
    read: docs/hierarchies.md, "Attacks on trees"): every fake user sends the same unary report at
    one level. For the linear answers the answer is :math:`w^T y` — w the adjoint of the two passes
    (:func:`range_weights`) for the posts read through the consistent leaves, the indicator of the
    range's cover for ``"none"`` and ``"norm-sub"`` — and one report r at level k adds
    :math:`\sum_{v \in k} w_v (r_v − q)/((p − q) n_k)`, largest with :math:`r_v = 1` exactly where :math:`w_v > 0`. Norm-Sub is
    monotone (a level's projected cover sum rises with the cover's raw estimates and falls with the
    others'), so the cover's report is the best one at a level under ``"norm-sub"`` too. For the
    non-linear posts read through the consistent leaves (``"gls-norm-sub"``, ``"gls-clip-round"``) both
    reports (the adjoint's signs and the cover's) are candidates at every level: the best found, not a
    proven optimum. The level and report are those that raise the released answer most, evaluated on
    ``est`` (an attacker who knows the genuine estimates: the upper bound; for the linear answers it
    is the first-order choice up to the :math:`n_k + m` dilution). ``"padded"``: each fake user sends the optimal report's
    bits and sets each other bit of its level at random, at the rate that brings the expected count to
    the :math:`p + (d_k − 1)q` bits of a genuine report — an adaptive attacker hiding from the bit-count test of
    :func:`ldpopt.robust.attack_evidence` (ours; Liao et al.'s adaptive attack could not be read; needs
    ``rng``).
    ``"consistent"``: the fake users are spread evenly over the levels and each
    sets the bits of its level's nodes inside [a, b]. ``"input"`` (the baseline of a genuine user's
    influence): the fake users hold values spread evenly over [a, b] and report them honestly at a
    uniformly drawn level (needs ``rng``).

    Parameters
    ----------
    est : HierarchicalEstimate
        The genuine users' estimate (:func:`~ldpopt.hierarchy.collect`; a unary oracle).
    a, b : int
        The target range (inclusive).
    n_fake : int
        Fake users (>= 1).
    strategy : "optimal", "padded", "consistent" or "input"
    post : str, default "gls"
        The released answer the optimal (and padded) attack targets and ``predicted_gain`` measures (:data:`POSTS`).
    rng : int, Generator or None
        The reports' randomness (``"input"`` and ``"padded"`` only).

    Returns
    -------
    TreeAttack

    Raises
    ------
    ValueError
        A bad range, ``n_fake`` < 1, an unknown strategy or post, an oracle without unary reports,
        or ``"input"`` or ``"padded"`` without ``rng``.

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
    if strategy not in ("optimal", "padded", "consistent", "input"):
        raise ValueError(f"strategy must be 'optimal', 'padded', 'consistent' or 'input', got {strategy!r}")
    post = _check_post(post)
    if strategy in ("input", "padded") and rng is None:
        raise ValueError(f"rng must be given for strategy={strategy!r} (the fake users' reports are random)")
    a, b = _check_range(est.tree.d, a, b)
    tree, lv = est.tree, level_slices(est.tree)
    h = len(lv) - 1                                        # collected levels (the root is not)
    oracles = [_level_oracle(est, k) for k in range(h)]
    m = int(n_fake)

    def with_counts(plan: dict) -> HierarchicalEstimate:
        """The estimate with, per level k, m_k fake users whose summed reports are c_k."""
        y, n_level = est.y.copy(), est.n_level.copy()
        for k, (mk, ck) in plan.items():
            fo, nk = oracles[k], int(est.n_level[k])
            y[lv[k]] = (nk * est.y[lv[k]] + (ck - mk * fo.q) / (fo.p - fo.q)) / (nk + mk)
            n_level[k] = nk + mk
        return HierarchicalEstimate(tree, y, est.var, n_level, est.n + m, est.oracle, est.epsilon,
                                    dict(est.oracle_params))

    level: int | None = None
    report = np.zeros(0)
    if strategy in ("optimal", "padded"):
        ws = [range_weights(est, a, b), _cover_indicator(tree, a, b)]
        if post in ("gls", "none"):                        # linear: its own weights' report is the best
            ws = ws[:1] if post == "gls" else ws[1:]
        best = None
        for k in range(h):                                 # a few candidates per level
            for w in ws:
                r = (w[lv[k]] > 0).astype(np.float64)
                cand = with_counts({k: (m, m * r)})
                val = range_answer(cand, a, b, post)
                if best is None or val > best[0]:
                    best = (val, k, r, cand)
        assert best is not None
        _, level, report, new = best
        if strategy == "padded":                           # random bits up to a genuine report's count
            fo, gen = oracles[level], as_generator(rng)
            off = report == 0
            rate = (fo.p + (report.shape[0] - 1) * fo.q - report.sum()) / max(int(off.sum()), 1)
            if rate > 0:
                c = m * report + np.where(off, gen.binomial(m, min(float(rate), 1.0), report.shape[0]), 0)
                new = with_counts({level: (m, c.astype(np.float64))})
    elif strategy == "consistent":
        per = np.full(h, m // h) + (np.arange(h) < m % h)
        plan = {}
        for k in range(h):
            inside = ((tree.lo[lv[k]] >= a) & (tree.hi[lv[k]] - 1 <= b)).astype(np.float64)
            if per[k] > 0:
                plan[k] = (int(per[k]), per[k] * inside)
                report = inside
        new = with_counts(plan)
    else:
        gen = as_generator(rng)
        width = b - a + 1
        leaves = np.zeros(tree.d, dtype=np.int64)
        leaves[a: b + 1] = m // width + (np.arange(width) < m % width)
        levels = gen.integers(0, h, m)                      # each fake user's level, uniformly
        per = np.bincount(levels, minlength=h)
        left = leaves.copy()
        plan = {}
        for k in range(h):                                  # one hypergeometric split per level
            take = gen.multivariate_hypergeometric(left, int(per[k])) if per[k] else np.zeros_like(left)
            left -= take
            if per[k]:
                counts = tree.node_totals(take.astype(np.float64))[lv[k]].astype(np.int64)
                plan[k] = (int(per[k]), oracles[k].sample_counts(counts, gen).astype(np.float64))
        new = with_counts(plan)
    gain = float((range_answer(new, a, b, post) - range_answer(est, a, b, post)) * (est.n + m) / m)
    return TreeAttack(new, level, m, report, gain)


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
