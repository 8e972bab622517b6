"""Poisoning a two-dimensional range query on a grid of marginals (the 1-D and 2-D grids of an
HDG-like CALM collection): the fake report that moves the rectangle's answer most under each
post-processing, the marginals' agreement χ² test that detects it, and raking the blamed grid.

Notes: docs/hierarchies.md, "Attacks on grids"."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy import stats

from .. import oracles as _oracles
from .._validation import as_generator
from ..estimate import Estimate
from ..methods.normalize import project_simplex
from .calm_consistency import _plan, calm_consistency
from .marginals import MarginalEstimates

__all__ = ["GRID_POSTS", "GridAttack", "grid_gof_test", "poison_grid", "rake_blamed", "rect_answer"]

#: the post-processings :func:`rect_answer` reads a rectangle through: ``"none"`` (the 2-D grid's raw
#: cells summed), ``"norm-sub"`` (Norm-Sub of each grid, then the 2-D grid's cells), ``"consistency"``
#: (CALM's linear step: each grid's total set to one, then the weighted agreement of every shared
#: margin), ``"calm"`` (ldpopt's default: :func:`~ldpopt.multi.calm_consistency`, consistency and
#: Norm-Sub iterated)
GRID_POSTS = ("none", "norm-sub", "consistency", "calm")


def _pair_index(est: MarginalEstimates, pair) -> int:
    if not isinstance(est, MarginalEstimates):
        raise TypeError(f"est must be an ldpopt.multi.MarginalEstimates, got {type(est).__name__}")
    pair = tuple(int(j) for j in pair)
    if pair not in est.marginals.attrs:
        raise ValueError(f"pair must be the attributes of one of est's marginals {est.marginals.attrs}, got {pair}")
    return est.marginals.attrs.index(pair)


def _rect_cells(est: MarginalEstimates, i: int, rect) -> np.ndarray:
    """The cells of marginal i inside ``rect`` = ((lo, hi) per attribute of marginal i), inclusive."""
    ms = est.marginals
    attrs = ms.attrs[i]
    rect = tuple(rect)
    if len(rect) != len(attrs):
        raise ValueError(f"rect must give one (lo, hi) per attribute of {attrs}, got {rect!r}")
    axes = []
    for j, r in zip(attrs, rect):
        lo, hi = (int(v) for v in r)
        if not (0 <= lo <= hi < ms.domains[j]):
            raise ValueError(f"rect's range for attribute {j} must satisfy 0 <= lo <= hi < {ms.domains[j]}, got {r!r}")
        axes.append(np.arange(lo, hi + 1))
    grid = np.stack([g.ravel() for g in np.meshgrid(*axes, indexing="ij")], axis=1)
    tuples = np.zeros((grid.shape[0], len(ms.domains)), dtype=np.int64)
    tuples[:, list(attrs)] = grid
    return ms.cells(i, tuples)


def _linear_consistency(est: MarginalEstimates, F: np.ndarray) -> np.ndarray:
    """CALM's linear step (totals to one, then one agreement pass) on the columns of F (size × K)."""
    ms = est.marginals
    var = np.array([e.sigma2 for e in est.estimates])
    F = np.array(F, dtype=np.float64, copy=True)
    for i in range(ms.m):
        b = ms.block(i)
        F[b] += (1.0 - F[b].sum(axis=0)) / (b.stop - b.start)
    for ssize, owners in _plan(ms, var):                   # one pass per shared margin
        projs = []
        for b, p, _, _ in owners:
            P = sp.csr_matrix((np.ones(p.shape[0]), (p, np.arange(p.shape[0]))), shape=(ssize, p.shape[0]))
            projs.append(P @ F[b])
        target = sum(w * t for (_, _, _, w), t in zip(owners, projs))
        for (b, p, r, _), t in zip(owners, projs):
            F[b] += (target - t)[p] / r
    return F


def _linear_consistency_adjoint(est: MarginalEstimates, u: np.ndarray) -> np.ndarray:
    """Lᵀu for the linear part L of :func:`_linear_consistency` (the passes in reverse, then the totals'
    step), in O(cells): w with wᵀf̃ = uᵀ(the step's output) up to a constant."""
    ms = est.marginals
    var = np.array([e.sigma2 for e in est.estimates])
    g = np.array(u, dtype=np.float64, copy=True)
    for ssize, owners in reversed(_plan(ms, var)):
        # out_i = F_i + P_iᵀ(Σ_j w_j P_j F_j − P_i F_i)/r_i  ⇒  grad_j = g_j + P_jᵀ(w_j Σ_i h_i − h_j), h_i = P_i g_i / r_i
        hs = [np.bincount(p, weights=g[b], minlength=ssize) / r for b, p, r, _ in owners]
        total = sum(hs)
        for (b, p, _, w), h in zip(owners, hs):
            g[b] += (w * total - h)[p]
    for i in range(ms.m):
        b = ms.block(i)
        g[b] -= g[b].sum() / (b.stop - b.start)
    return g


def rect_answer(est: MarginalEstimates, pair, rect, post: str = "calm") -> float:
    """The answer of the rectangle ``rect`` on the 2-D grid of attributes ``pair`` under ``post``
    (:data:`GRID_POSTS`; Norm-Sub is Wang et al. arXiv §3.3's, CALM's post-processing Zhang et al.
    CCS 2018 §4).

    Parameters
    ----------
    est : MarginalEstimates
        The collection (e.g. ``multi.calm(domains, ε, attrs=[(0,), (1,), (0, 1)])``).
    pair : tuple of int
        The attributes of the grid the rectangle lies on (one of ``est.marginals.attrs``).
    rect : sequence of (lo, hi)
        One inclusive range per attribute of ``pair``.
    post : str, default "calm"

    Returns
    -------
    float
        A frequency.

    Raises
    ------
    ValueError
        An unknown post, a pair that is not a marginal, a bad rectangle.
    TypeError
        ``est`` is not a MarginalEstimates.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt import multi
    >>> from ldpopt.multi.grid_attacks import rect_answer
    >>> data = multi.dirichlet_joint(50_000, 2, domains=8, rng=0)
    >>> est = multi.calm(data.domains, 1.0, attrs=[(0,), (1,), (0, 1)]).simulate(data, rng=0)
    >>> truth = data.marginal((0, 1)).reshape(8, 8)[2:5, 1:4].sum()
    >>> bool(abs(rect_answer(est, (0, 1), [(2, 4), (1, 3)]) - truth) < 0.05)
    True
    """
    if post not in GRID_POSTS:
        raise ValueError(f"post must be one of {GRID_POSTS}, got {post!r}")
    i = _pair_index(est, pair)
    cells = _rect_cells(est, i, rect)
    b = est.marginals.block(i)
    if post == "none":
        f = est.f_tilde[b]
    elif post == "norm-sub":
        f = project_simplex(est.f_tilde[b])
    elif post == "consistency":
        f = _linear_consistency(est, est.f_tilde[:, None])[b, 0]
    else:
        f = calm_consistency(est).f[b]
    return float(f[cells].sum())


@dataclass(frozen=True)
class GridAttack:
    """A poisoned grid collection and how it was made (returned by :func:`poison_grid`).

    Parameters
    ----------
    estimate, marginal, n_fake, report, gain
        As the attributes below.

    Attributes
    ----------
    estimate : MarginalEstimates
        The estimates with the fake users' reports aggregated in.
    marginal : int or None
        The marginal every fake user reported on (None: spread over the marginals).
    n_fake : int
    report : ndarray
        The unary report each fake user sent on ``marginal`` (empty when spread).
    gain : float
        The released answer's increase per fake user in units of one user's weight 1/(n + m).

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt import multi
    >>> from ldpopt.multi.grid_attacks import poison_grid
    >>> data = multi.dirichlet_joint(50_000, 2, domains=8, rng=0)
    >>> est = multi.calm(data.domains, 1.0, attrs=[(0,), (1,), (0, 1)]).simulate(data, rng=0)
    >>> atk = poison_grid(est, (0, 1), [(2, 4), (1, 3)], 500, post="none")
    >>> atk.marginal, atk.estimate.n
    (2, 50500)
    """

    estimate: MarginalEstimates
    marginal: int | None
    n_fake: int
    report: np.ndarray
    gain: float


def _oracle(est: MarginalEstimates, i: int):
    e = est.estimates[i]
    fo = _oracles.get(e.oracle, epsilon=e.epsilon, d=int(e.d))
    if getattr(fo, "report_form", None) != "unary" or not (np.isclose(fo.p, e.p) and np.isclose(fo.q, e.q)):
        raise ValueError(f"est's marginals must come from a unary oracle (OUE, SUE), got {e.oracle!r}")
    return fo


def _with_counts(est: MarginalEstimates, plan: dict, m: int) -> MarginalEstimates:
    ests = list(est.estimates)
    for i, (mi, ci) in plan.items():
        e = ests[i]
        fo = _oracle(est, i)
        ests[i] = fo.estimate(np.asarray(e.counts, dtype=np.float64) + ci, int(e.n) + int(mi))
    return MarginalEstimates(est.marginals, tuple(ests), est.protocol, est.epsilon, est.exact_epsilon,
                             est.n + int(m), dict(est.meta))


def poison_grid(est: MarginalEstimates, pair, rect, n_fake: int, strategy: str = "optimal", *,
                post: str = "calm", rng=None) -> GridAttack:
    """Add ``n_fake`` fake users who raise the answer of ``rect`` on the grid of ``pair``.

    ``"optimal"`` (ours; the grid attack setting of Liao et al., arXiv 2503.03454, whose algorithm we
    could not read): every fake user sends one unary report on one marginal. The linear answers are
    wᵀf̃ (w: the rectangle's indicator on the 2-D grid for ``"none"`` and ``"norm-sub"``, the adjoint
    of CALM's linear step for ``"consistency"`` and ``"calm"``); a report r on marginal i adds
    Σ_c w_c (r_c − q)/((p − q) n_i), largest with r_c = 1 exactly where w_c > 0; Norm-Sub of the 2-D
    grid is monotone (up in the rectangle's cells, down in the others'), so the rectangle's report is
    the best one on that grid under ``"norm-sub"``. Under ``"norm-sub"`` and ``"calm"`` both reports (the
    rectangle's and the adjoint's signs) are candidates on every marginal: for ``"calm"`` the best found,
    not a proven optimum. The marginal and report are those that raise the released answer most on
    ``est`` (an attacker who knows the genuine estimates: the upper bound). ``"padded"``: each fake user
    sends that report's bits and sets each other bit at random, at the rate that brings the expected
    count to a genuine report's p + (d_i − 1)q (an adaptive attacker hiding from the bit-count test of
    :func:`ldpopt.robust.attack_evidence`; needs ``rng``). ``"input"``
    (a genuine user's influence): the fake users hold tuples spread evenly over the rectangle's
    cells, fall on a uniformly drawn marginal, and report honestly (needs ``rng``).

    Parameters
    ----------
    est : MarginalEstimates
        A collection whose marginals use a unary oracle (``multi.calm``'s default OUE).
    pair : tuple of int
        The 2-D grid's attributes.
    rect : sequence of (lo, hi)
    n_fake : int
        Fake users (>= 1).
    strategy : "optimal", "padded" or "input"
    post : str, default "calm"
        The released answer targeted and measured (:data:`GRID_POSTS`).
    rng : int, Generator or None
        The reports' randomness (``"input"`` and ``"padded"`` only).

    Returns
    -------
    GridAttack

    Raises
    ------
    ValueError
        A bad pair, rectangle, post, strategy or ``n_fake``; a non-unary oracle; ``"input"`` or ``"padded"`` without rng.
    TypeError
        ``est`` is not a MarginalEstimates.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt import multi
    >>> from ldpopt.multi.grid_attacks import poison_grid
    >>> data = multi.dirichlet_joint(50_000, 2, domains=8, rng=0)
    >>> est = multi.calm(data.domains, 1.0, attrs=[(0,), (1,), (0, 1)]).simulate(data, rng=0)
    >>> bool(poison_grid(est, (0, 1), [(2, 4), (1, 3)], 500).gain > 2)
    True
    """
    if isinstance(n_fake, bool) or not isinstance(n_fake, (int, np.integer)) or n_fake < 1:
        raise ValueError(f"n_fake must be an integer >= 1, got {n_fake!r}")
    if strategy not in ("optimal", "padded", "input"):
        raise ValueError(f"strategy must be 'optimal', 'padded' or 'input', got {strategy!r}")
    if post not in GRID_POSTS:
        raise ValueError(f"post must be one of {GRID_POSTS}, got {post!r}")
    if strategy in ("input", "padded") and rng is None:
        raise ValueError(f"rng must be given for strategy={strategy!r} (the fake users' reports are random)")
    i2 = _pair_index(est, pair)
    cells = _rect_cells(est, i2, rect)
    ms = est.marginals
    for i in range(ms.m):
        _oracle(est, i)
    m = int(n_fake)
    u = np.zeros(ms.size)
    u[ms.block(i2).start + cells] = 1.0
    marginal: int | None = None
    report = np.zeros(0)
    if strategy in ("optimal", "padded"):
        ws = [u]
        if post != "none":                                  # the linear step's adjoint
            ws.append(_linear_consistency_adjoint(est, u))
            if post == "consistency":                       # linear: its own weights' report is the best
                ws = ws[1:]
        best = None
        for i in range(ms.m):                               # a few candidates per marginal
            for w in ws:
                r = (w[ms.block(i)] > 1e-12).astype(np.float64)
                cand = _with_counts(est, {i: (m, m * r)}, m)
                val = rect_answer(cand, pair, rect, post)
                if best is None or val > best[0]:
                    best = (val, i, r, cand)
        assert best is not None
        _, marginal, report, new = best
        if strategy == "padded":                            # random bits up to a genuine report's count
            fo, gen = _oracle(est, marginal), as_generator(rng)
            off = report == 0
            rate = (fo.p + (report.shape[0] - 1) * fo.q - report.sum()) / max(int(off.sum()), 1)
            if rate > 0:
                c = m * report + np.where(off, gen.binomial(m, min(float(rate), 1.0), report.shape[0]), 0)
                new = _with_counts(est, {marginal: (m, c.astype(np.float64))}, m)
    else:
        gen = as_generator(rng)
        k = cells.shape[0]
        per_cell = m // k + (np.arange(k) < m % k)
        on = gen.integers(0, ms.m, m)                       # each fake user's marginal
        per = np.bincount(on, minlength=ms.m)
        left = per_cell.astype(np.int64)
        plan = {}
        for i in range(ms.m):
            take = gen.multivariate_hypergeometric(left, int(per[i])) if per[i] else np.zeros_like(left)
            left -= take
            if not per[i]:
                continue
            sub = ms.attrs[i]
            if not set(sub) <= set(ms.attrs[i2]):
                raise ValueError(f"strategy 'input' needs every marginal inside {ms.attrs[i2]}, got {sub}")
            proj2 = ms.projection(i2, sub)
            hist = np.bincount(proj2[cells], weights=take, minlength=ms.sizes[i]).astype(np.int64)
            plan[i] = (int(per[i]), _oracle(est, i).sample_counts(hist, gen).astype(np.float64))
        new = _with_counts(est, plan, m)
    gain = float((rect_answer(new, pair, rect, post) - rect_answer(est, pair, rect, post)) * (est.n + m) / m)
    return GridAttack(new, marginal, m, report, gain)


def _plugin_cov(e: Estimate) -> np.ndarray:
    """f̃'s covariance at the plug-in f (clipped, normalised): OUE's bits per cell and the group's
    multinomial sampling (conservative: the split's finite-population correction left out)."""
    f = project_simplex(np.asarray(e.f_tilde, dtype=np.float64))
    p, q = float(e.p), float(e.q)
    noise = (f * p * (1 - p) + (1 - f) * q * (1 - q)) / (e.n * (p - q) ** 2)
    return np.diag(noise) + (np.diag(f) - np.outer(f, f)) / e.n


def grid_gof_test(est: MarginalEstimates) -> tuple[float, int, float, np.ndarray]:
    """The agreement χ² test of the grids: the shared margins' disagreements D = A f̃
    (:meth:`MarginalSet.agreement`), T = Dᵀ Σ_D⁺ D with Σ_D at the plug-in covariance of each grid
    (unary bits and the group's multinomial sampling), χ² with rank(Σ_D) degrees of freedom when the
    grids agree. A poisoned grid pulls its margins away from the others'.

    Parameters
    ----------
    est : MarginalEstimates
        Marginals from a unary oracle with at least one shared margin.

    Returns
    -------
    statistic : float
    dof : int
    p_value : float
    per_margin : ndarray
        Each shared margin's own statistic's p-value (in ``est.marginals.shared()`` order).

    Raises
    ------
    ValueError
        No two marginals share an attribute (nothing to test: a lone 2-D grid, TDG's one pair).
    TypeError
        ``est`` is not a MarginalEstimates.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt import multi
    >>> from ldpopt.multi.grid_attacks import grid_gof_test
    >>> data = multi.dirichlet_joint(50_000, 2, domains=8, rng=0)
    >>> est = multi.calm(data.domains, 1.0, attrs=[(0,), (1,), (0, 1)]).simulate(data, rng=0)
    >>> T, dof, p, per = grid_gof_test(est)
    >>> dof, bool(p > 0.001)
    (16, True)
    """
    if not isinstance(est, MarginalEstimates):
        raise TypeError(f"est must be an ldpopt.multi.MarginalEstimates, got {type(est).__name__}")
    ms = est.marginals
    shared = ms.shared()
    if not shared:
        raise ValueError("est's marginals share no attribute: there is no redundancy to test")
    cov = sp.block_diag([_plugin_cov(e) for e in est.estimates]).toarray()
    f = est.f_tilde

    def stat(rows: list) -> tuple[float, int]:
        D = np.concatenate(rows, axis=0)
        d = D @ f
        S = D @ cov @ D.T
        vals, vecs = np.linalg.eigh(S)
        keep = vals > vals.max() * 1e-10
        z = vecs[:, keep].T @ d
        return float((z ** 2 / vals[keep]).sum()), int(keep.sum())

    rows_per = []
    for s, owners in shared:                                # each owner's margin minus the first owner's
        ssize = int(np.prod([ms.domains[j] for j in s]))
        rows = []
        for o in owners[1:]:
            R = np.zeros((ssize, ms.size))
            for sign, i in ((1.0, o), (-1.0, owners[0])):
                p = ms.projection(i, s)
                R[p, ms.block(i).start + np.arange(p.shape[0])] += sign
            rows.append(R)
        rows_per.append(np.concatenate(rows, axis=0))
    T, dof = stat(rows_per)
    per = np.array([float(stats.chi2.sf(*stat([R]))) for R in rows_per])
    return T, dof, float(stats.chi2.sf(T, dof)), per


def rake_blamed(est: MarginalEstimates, pair, alpha: float = 0.01) -> tuple[np.ndarray, int | None]:
    """A recovery of the 2-D grid of ``pair`` when :func:`grid_gof_test` alarms: blame one grid and
    answer without its injected mass. A 1-D grid is blamed when its margin alone disagrees (its
    per-margin p-value below α/#margins and every other margin's above); the 2-D grid when several
    margins disagree. A blamed 2-D grid is left out and rebuilt from the 1-D grids' Norm-Sub margins
    alone (iterative proportional fitting from uniform: their product, the attributes' interaction
    lost — raking the poisoned grid itself keeps the fake block's odds ratios); a blamed 1-D grid is
    left out (the 2-D grid's Norm-Sub stands). No alarm: CALM's consistency as usual.

    Parameters
    ----------
    est : MarginalEstimates
        The HDG-like layout: the 2-D grid of ``pair`` and 1-D grids of its attributes.
    pair : tuple of int
    alpha : float, default 0.01
        The test's level (overall, and α/#margins per margin).

    Returns
    -------
    f : ndarray, shape (cells of the 2-D grid,)
        The recovered 2-D grid (non-negative, total one).
    blamed : int or None
        The marginal blamed (None: no alarm).

    Raises
    ------
    ValueError
        ``alpha`` not in (0, 1), a bad pair, marginals that share nothing.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt import multi
    >>> from ldpopt.multi.grid_attacks import poison_grid, rake_blamed
    >>> data = multi.dirichlet_joint(50_000, 2, domains=8, rng=0)
    >>> est = multi.calm(data.domains, 1.0, attrs=[(0,), (1,), (0, 1)]).simulate(data, rng=0)
    >>> f, blamed = rake_blamed(poison_grid(est, (0, 1), [(2, 4), (1, 3)], 5000, post="none").estimate, (0, 1))
    >>> blamed, bool(np.isclose(f.sum(), 1.0))
    (2, True)
    """
    if not (0 < float(alpha) < 1):
        raise ValueError(f"alpha must be in (0, 1), got {alpha!r}")
    i2 = _pair_index(est, pair)
    ms = est.marginals
    _, _, p, per = grid_gof_test(est)
    if p >= alpha:
        return calm_consistency(est).f[ms.block(i2)], None
    shared = ms.shared()
    hit = per < alpha / len(shared)
    ones = {s: owners for s, owners in shared}
    if hit.sum() == 1:
        s = shared[int(np.argmax(hit))][0]
        lone = [o for o in ones[s] if o != i2]
        if lone:
            return project_simplex(est.f_tilde[ms.block(i2)]), int(lone[0])
    f = np.ones(ms.sizes[i2])
    margins = []
    for s, owners in shared:
        others = [o for o in owners if o != i2 and ms.attrs[o] == s]
        if i2 in owners and others:
            margins.append((ms.projection(i2, s), project_simplex(est.f_tilde[ms.block(others[0])])))
    for _ in range(200):                                    # IPF sweeps over the margins
        for proj, target in margins:
            cur = np.bincount(proj, weights=f, minlength=target.shape[0])
            f = f * np.where(cur[proj] > 0, target[proj] / np.where(cur[proj] > 0, cur[proj], 1.0), 0.0)
    return f / f.sum(), i2
