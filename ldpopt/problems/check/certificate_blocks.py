"""The linear argmin bound of :mod:`.certificate` for disjoint equality subset sums (product of simplices).

With equality rows Σ_{v ∈ S_k} f_v = b_k on pairwise disjoint subsets S_k (±1 indicator rows: one
:class:`~ldpopt.problems.constraints.base.SubsetSum`, several disjoint ones, a
:class:`~ldpopt.problems.constraints.partition.PartitionTotals`) besides Σ f = total and per-value bounds, the
feasible set is the product of the blocks {l ≤ f_S ≤ u, Σ f_S = b_k} and of the pool
{l ≤ f_C ≤ u, Σ f_C = total − Σ_k b_k} (C: the values in no row), and J is separable, so f*
restricted to a block is the optimum of that block alone. On a block the multiplier is one number
λ_k = λ + sign_k·y_k (λ alone on the pool), and the argument of the no-row bound applies block by
block: x(λ_k) is the exact optimum of the block with mass m_k(λ_k) = Σ_S x(λ_k), every x_v is
non-increasing in λ_k, so

    ‖f − f*‖_∞ ≤ max_v |f_v − x_v(λ_{k(v)})| + max_k |m_k(λ_k) − b_k|.

λ_k is refined from the given one by ≤ 5 Newton steps per block (:func:`.structured.simplex.newton_lambda`:
all blocks at once; a block keeps a step only if it reduces its own |m_k − b_k|). The rounding level
is that of :func:`.certificate.argmin_bound`, with t_v = λ_{k(v)} in place of λ (summed over all
values: at least each block's own). Inequality rows are not covered (whether a row is active at f*
is not known from f): such problems keep the √(2·gap/μ) bound.
"""

from __future__ import annotations

import numpy as np

from ..solvers.structured.blocks import indicator_rows
from ..solvers.structured.simplex import newton_lambda

__all__ = ["argmin_rounding", "block_argmin_bound", "block_rows", "blocks_for", "feasible_near_blocks", "project_on_rows"]

_EPS = np.finfo(float).eps


def block_rows(st):
    """(block of each value: its row, or m for the pool; each row's sign; each row's own total
    b_k·sign_k) when every row is an equality ±1 indicator row on a subset disjoint from the others'
    (:func:`.structured.blocks.indicator_rows`) and Σ f = total is a constraint; else None. Once per
    Structure."""
    if st.m == 0 or st.sum_free or bool(np.any(st.ineq)):
        return None
    return st.derived("block_rows", _block_rows)


def _block_rows(st):
    got = indicator_rows(st)
    if got is None:
        return None
    gid = np.where(got[0] < 0, st.m, got[0])
    gid.setflags(write=False)
    return gid, got[1], st.b * got[1]


def blocks_for(st, rest):
    """:func:`block_rows` of ``st`` (with ``rest``, the support certificate's summary: the full
    problem's row signs — a row whose values were all left out has no entry to read its sign from;
    None when the full problem's rows are not disjoint equality indicators)."""
    blk = block_rows(st)
    if blk is None or rest is None:
        return blk
    if rest.blocks is None:
        return None
    return blk[0], rest.block_sign, st.b * rest.block_sign


def block_argmin_bound(sep, st, f, lam: float, y, blocks, newton: int = 5, rest=None):
    """(bound, rounding, λ of the pool) of the module docstring; ``blocks`` = :func:`block_rows` of
    ``st``. With ``rest`` (values left out at their lower bound, :mod:`.certificate_support`; its
    ``blocks`` the full problem's block of each value): bound NaN when a refined λ_k would move one of them."""
    gid, sign, value = blocks
    m = st.m
    mass = np.append(value, st.total - float(np.sum(value)))
    lam_g = np.append(lam + sign * np.asarray(y, float), lam)
    lam_g, x, err = newton_lambda(sep, st.l, st.u, gid, mass, lam_g, newton)
    bound = float(np.max(np.abs(f - x), initial=0.0)) + float(np.max(np.abs(err)))
    t = lam_g[gid]
    e = argmin_rounding(sep, st, f, x, t)
    if rest is not None:  # no rows: one λ for every value left out
        lam_rest = lam_g[m] if m == 0 else (None if rest.blocks is None else lam_g[rest.blocks])
        e_rest = None if lam_rest is None else rest.argmin_rounding(lam_rest)
        if e_rest is None:
            return np.nan, np.nan, float(lam_g[m])
        e = np.concatenate([e, e_rest])
    rounding = float(np.sum(e) + (np.max(e) if e.size else 0.0))
    if not np.all(np.isfinite(f)):
        bound = np.inf
    return bound, rounding, float(lam_g[m])


def argmin_rounding(sep, st, f, x, t):
    """Rounding level of |f − x(t)| at the values where the argmin x(t) is inner or within rounding of
    a kink (8ε times |f|, |x| and h's scale over its curvature, plus the computed argmin's residual
    2|h'(x) + t|/h''(x), the distance to the root it may have stopped short of), inf where that is not finite: the
    floor under which the linear argmin bound (``certificate.argmin_bound`` and the block-wise one
    above) cannot resolve f*. ``t``: the scalar multiplier or one per value."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        s = sep.d1_scale(x) + np.abs(t)
        free = st.l < st.u
        inner = (x > st.l) & (x < st.u)
        g = np.abs(sep.d1(x) + t)
        near = free & ~inner & (g <= 8 * _EPS * s)
        cnt = inner | near
        h2 = sep.d2(x)[cnt]
        # plus the argmin's own residual: an iterative one (a user objective's bracketed Newton) may
        # stop short of the root; |x − x*| ≤ |h'(x) + t|/min h'' between them, taken as h''(x)/2
        e = 8 * _EPS * (np.abs(f[cnt]) + np.abs(x[cnt]) + s[cnt] / h2) + np.where(inner[cnt], 2.0 * g[cnt] / h2, 0.0)
    return np.where(np.isfinite(e), e, np.inf)


def feasible_near_blocks(st, f):
    """``f`` itself when it is on the constraints of ``st`` to the rounding of evaluating them (Σ f
    and the rows to 2dε·(‖f‖₁ + |total|), no value below its lower bound); else, where the
    constraints are f ≥ 0 (no other bounds), Σ f = total and pairwise disjoint equality ±1 subset
    sums (:func:`block_rows`), f̂ = max(f, 0) rescaled block by block to each block's mass (uniform
    on a block with no positive value): a feasible point near f; None otherwise."""
    f = np.asarray(f, float)
    d = st.d
    eps = np.finfo(float).eps
    res_rows = np.abs(st.A @ f - st.b) if st.m else np.zeros(0)
    off = max(abs(float(np.sum(f)) - st.total), float(np.max(res_rows, initial=0.0)))
    if off <= 2 * d * eps * (float(np.sum(np.abs(f))) + abs(st.total)) and not np.any(f < st.l):
        return f
    blocks = block_rows(st) if st.m else None
    if st.m and blocks is None:
        return None
    gid, value = (blocks[0], blocks[2]) if st.m else (np.zeros(d, np.intp), np.zeros(0))
    u = st.u if st.implied_upper is None else np.where(st.implied_upper, np.inf, st.u)
    if np.any(st.l != 0) or np.any(np.isfinite(u)):
        return None
    mass = np.append(value, st.total - float(np.sum(value)))
    if np.any(mass < 0):
        return None
    fp = np.maximum(f, 0.0)
    have = np.bincount(gid, weights=fp, minlength=st.m + 1)
    count = np.bincount(gid, minlength=st.m + 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(have[gid] > 0, fp * (mass / np.where(have > 0, have, 1.0))[gid],
                        (mass / np.maximum(count, 1))[gid])


def project_on_rows(f, A, b, ineq, lo, up, move: bool = True):
    """A point near f that meets l ≤ x ≤ u and the rows A x (≤ where ``ineq``, else =) b to the
    rounding of evaluating them (2ε·(nnz_k + 1)·(|A_k||x| + |b_k|) per row): f itself when it does;
    else (``move``) f clipped to its bounds and corrected by least squares,
    f̂ = f − Mᵀ(M Mᵀ)⁺(M f − c) over the equality rows and the violated or active ≤ rows (a ≤ row
    the correction pushes over joins them; a value it pushes past a bound is put there and stays;
    up to 8 rounds), moving only the values strictly inside their bounds, when f̂ meets them; None
    otherwise. ‖f − f̂‖₂ ≤
    ‖M⁺‖·‖M f − c‖₂ is the Hoffman-type constant of these rows, computed rather than assumed.
    Sparse products only (M Mᵀ dense, at most 2,000 rows)."""
    import scipy.sparse as sp

    A = sp.csr_matrix(A)
    absA = abs(A)
    nnz = np.diff(A.indptr)

    def meets(x):
        res = A @ x - b
        rnd = 2 * _EPS * (nnz + 1) * (absA @ np.abs(x) + np.abs(b))
        viol = np.where(ineq, np.maximum(res, 0.0), np.abs(res))
        return res, rnd, bool(np.all(viol <= rnd) and np.all(x >= lo) and np.all(x <= up))

    if meets(f)[2]:
        return f
    if not move:
        return None
    f0 = np.clip(f, lo, up)
    res, rnd, ok = meets(f0)
    if ok:
        return f0
    active = ~ineq | (res >= -rnd)
    free = (f0 > lo) & (f0 < up)
    for _ in range(8):  # a ≤ row the correction pushes over joins the active rows; a value it pushes
        rows = np.flatnonzero(active)  # past a bound is put on that bound and leaves the free ones
        cols = np.flatnonzero(free)
        if rows.size == 0 or cols.size == 0 or rows.size > 2000:
            return None
        M = A[rows][:, cols]
        step, *_ = np.linalg.lstsq((M @ M.T).toarray(), res[rows], rcond=None)
        fh = f0.copy()
        fh[cols] -= M.T @ step
        res_h, rnd_h, ok = meets(fh)
        if ok:
            return fh
        out = (fh < lo) | (fh > up)
        grow = active | (ineq & (res_h > rnd_h))
        if not np.any(out) and np.array_equal(grow, active):
            return None
        f0 = np.where(out, np.clip(fh, lo, up), f0)
        free &= ~out
        active = grow
        res = A @ f0 - b
    return None
