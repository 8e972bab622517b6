"""Disjoint subset sums: the feasible set is a product of scaled simplices, solved block by block.

Notes: docs/notes/problems.md, "ldpopt.problems.dual.blocks".
"""

from __future__ import annotations

from types import SimpleNamespace
from typing import TYPE_CHECKING

import numpy as np

from .dual import _d1
from .grouped import count_groups, restricted, simplex_grouped
from .simplex import closed_form, has_closed_form

if TYPE_CHECKING:
    from .structure import Structure  # annotations only

__all__ = ["blocks_fast", "indicator_rows"]

_EPS = np.finfo(float).eps
_LOOP_MAX = 64   # up to this many blocks: per-block closed forms in a Python loop; above: one Newton


def indicator_rows(st: Structure):
    """(row of each value, −1 for none; each row's sign, 1 for an empty row; which rows are empty)
    when every row of A is ±1 with one sign on a set disjoint from the other rows' (one SubsetSum,
    several disjoint ones, PartitionTotals); else None. Computed once per Structure
    (:meth:`~.structure.Structure.derived`, read-only arrays): the block solver here, the block-wise
    argmin bound (:func:`ldpopt.problems.check.certificate.block_rows`) and the feasibility test
    read it."""
    return st.derived("indicator_rows", _indicator_rows)


def _indicator_rows(st: Structure):
    if st.m == 0:
        return None
    A = st.A.tocsr()  # no sum_duplicates (it sorts): a repeated column fails the disjointness test below
    if np.any(np.abs(A.data) != 1.0):
        return None
    lens = np.diff(A.indptr)
    empty = lens == 0
    rows = np.repeat(np.arange(st.m), lens)
    sign = np.ones(st.m)
    sign[~empty] = A.data[A.indptr[:-1][~empty]]
    if np.any(A.data != sign[rows]):
        return None
    if A.nnz and int(np.bincount(A.indices, minlength=st.d).max()) > 1:  # overlapping (or repeated)
        return None
    rowof = np.full(st.d, -1, np.intp)
    rowof[A.indices] = rows
    for a in (rowof, sign, empty):
        a.setflags(write=False)
    return rowof, sign, empty


def blocks_fast(sep, st: Structure):
    """(f, λ, y, info) for the block-separable case of the module docstring, or None."""
    assert st.implied_upper is not None  # compile_constraints sets it
    if not st.total > 0 or not bool(st.implied_upper.all()) or np.any(st.l):
        return None  # bounds other than 0 and the implied upper bound
    got = indicator_rows(st)
    if got is None or got[2].any():
        return None
    rowof, sign = got[:2]
    value = st.b * sign                    # the row's own total (b was stored negated for ≥)
    ineq = st.ineq
    if not ineq.any() and np.any(value < 0):
        bad = int(np.flatnonzero(value < 0)[0])
        raise ValueError(f"infeasible constraints: subset sum row {bad} asks for a negative total {value[bad]!r} "
                         "of values that are ≥ 0")
    active = ~ineq
    info = {"blocks": 0, "active_set_rounds": 0, "block_newton_iterations": 0}
    for rnd in range(1, st.m + 3):
        out = _solve_active(sep, st, rowof, value, active, info)
        if out is None:
            return None
        f, lam_row, lam_pool = out
        info["active_set_rounds"] = rnd
        if not ineq.any():
            break
        sums = np.bincount(rowof[rowof >= 0], weights=f[rowof >= 0], minlength=st.m)
        tol = 64 * _EPS * st.total
        violated = ineq & ~active & (sign * (sums - value) > tol)
        y_act = sign * (lam_row - lam_pool)
        wrong = ineq & active & (y_act < 0)
        if not (violated.any() or wrong.any()):
            break
        active = (active | violated) & ~wrong
    else:
        return None
    y = np.where(active, sign * (lam_row - lam_pool), 0.0)
    return f, float(lam_pool), y, info


def _solve_active(sep, st, rowof, value, active, info):
    """Blocks = the active rows' subsets (mass = their value) and the pool (the rest). Returns
    (f, λ per row (NaN for inactive rows), λ of the pool) or None."""
    m = st.m
    rank = np.cumsum(active) - 1                     # active row → block number
    G_act = int(active.sum())
    in_act = (rowof >= 0) & active[np.maximum(rowof, 0)]
    gid = np.where(in_act, rank[np.maximum(rowof, 0)], G_act)
    mass = np.append(value[active], st.total - float(np.sum(value[active])))
    pool_size = int(np.count_nonzero(~in_act))
    if pool_size == 0:
        if (~active).any() or abs(mass[-1]) > 64 * _EPS * st.total:
            if not (~active).any() and not st.ineq.any():
                raise ValueError(f"infeasible constraints: the subsets cover the domain but their totals sum "
                                 f"to {float(np.sum(value))!r}, not Σ f = {st.total!r}")
            return None
        mass, G = mass[:-1], G_act
    else:
        G = G_act + 1
        if -64 * _EPS * st.total <= mass[-1] < 0:  # totals that sum to Σ f up to rounding
            mass[-1] = 0.0
        if mass[-1] < 0:
            if not st.ineq.any():
                raise ValueError(f"infeasible constraints: the subset totals {float(np.sum(value))!r} exceed "
                                 f"Σ f = {st.total!r}")
            return None
    if np.any(mass < 0):
        return None
    info["blocks"] = G
    closed = G <= _LOOP_MAX and has_closed_form(sep)
    counts = {"distinct_counts": 0, "lambda_iterations": 0}
    grouped = None if closed or G > _LOOP_MAX or count_groups(sep) is None else _per_block(sep, st, gid, mass, G,
                                                                                         grouped=counts)
    if closed:
        f, lam = _per_block(sep, st, gid, mass, G)
    elif grouped is not None:  # the binomial / multinomial: per block over its distinct counts
        f, lam = grouped
        for k, v in counts.items():
            info[k] = info.get(k, 0) + v
    else:
        got = _segmented(sep, st.l, st.u, gid, mass, G, st.total)
        if got is None:
            return None
        f, lam, its = got
        info["block_newton_iterations"] += its
    lam_row = np.full(m, np.nan)
    lam_row[active] = lam[:G_act]
    lam_pool = lam[G_act] if pool_size else 0.0
    return f, lam_row, lam_pool


def _per_block(sep, st, gid, mass, G, grouped: dict | None = None):
    """Closed forms block by block (:func:`.simplex.closed_form` with the block's mass; the values
    grouped by a stable counting sort of gid). ``grouped``: the binomial / multinomial instead, by
    Newton on the block's λ over its distinct counts (:func:`.grouped.simplex_grouped` on the block
    restricted, with the block's mass; its counters added to the dict given); None when that does
    not apply to some block."""
    small = gid.astype(np.int16 if G < 2**15 else np.int64)
    order = np.argsort(small, kind="stable")
    cuts = np.cumsum(np.bincount(gid, minlength=G))[:-1]
    f = np.zeros(st.d)
    lam = np.zeros(G)
    for g, idx in enumerate(np.split(order, cuts)):  # a loop over the few blocks (≤ _LOOP_MAX)
        if mass[g] == 0:  # the smallest λ with every value of the block at 0: max_v −h_v'(0)
            lim = -_d1(sep.restrict(idx), st.l[idx])
            lam[g] = float(lim[np.isfinite(lim)].max()) if np.isfinite(lim).any() else 0.0
            continue
        bst = SimpleNamespace(l=st.l[idx], u=st.u[idx], total=float(mass[g]), d=idx.size, m=0, chain=None)
        if grouped is not None:
            out = simplex_grouped(restricted(sep, idx), bst)
            if out is None:
                return None
            f[idx], lam[g] = out[0], out[1]
            for k in grouped:
                grouped[k] += out[3][k]
        else:
            f[idx], lam[g] = closed_form(sep.restrict(idx), idx.size, float(mass[g]), bst)
    return f, lam


def _segmented(sep, l, u, gid, mass, G, total, max_iter: int = 200):
    """λ_g with Σ_{v: gid_v = g} f_v(λ_g) = mass_g for every g at once: per-block safeguarded Newton
    (slope −Σ 1/h_v'' over the block's interior values, bisection when Newton leaves the block's
    bracket or the bracket stops halving). Returns (f, λ, iterations) or None (no finite bracket)."""
    d1l, d1u = _d1(sep, l), _d1(sep, u)
    with np.errstate(invalid="ignore"):
        gl = np.where(np.isnan(d1l), np.inf, -d1l)     # λ ≥ gl_v ⇒ f_v = l_v
        gu = np.where(np.isnan(d1u), -np.inf, -d1u)    # λ ≤ gu_v ⇒ f_v = u_v
    hi = np.full(G, -np.inf)
    np.maximum.at(hi, gid, gl)
    lo = np.full(G, np.inf)
    np.minimum.at(lo, gid, gu)
    if not (np.all(np.isfinite(hi)) and np.all(np.isfinite(lo))):
        return None
    lo, hi = np.minimum(lo, hi), np.maximum(lo, hi)
    zero = mass <= 0
    lam = np.where(zero, hi, 0.5 * (lo + hi))
    tol = 4 * _EPS * np.maximum(mass, 1e-300)  # the dual method's row tolerance; Newton gets there
    width4 = np.full(G, np.inf)
    it = 0
    for it in range(1, max_iter + 1):
        f = sep.argmin(lam[gid], l, u, d1l, d1u)
        r = np.bincount(gid, weights=f, minlength=G) - mass
        up, down = r > 0, r < 0
        lo = np.where(up, lam, lo)
        hi = np.where(down, lam, hi)
        conv = zero | (np.abs(r) <= tol) | (hi - lo <= 2 * _EPS * np.maximum(np.abs(lo), np.abs(hi)))
        if conv.all():
            break
        inner = (f > l) & (f < u)
        with np.errstate(divide="ignore", invalid="ignore"):
            curv = np.where(inner, 1.0 / sep.d2(f), 0.0)
        slope = -np.bincount(gid, weights=np.where(np.isfinite(curv), curv, 0.0), minlength=G)
        with np.errstate(divide="ignore", invalid="ignore"):
            step = np.where(slope < 0, lam - r / slope, np.nan)
        mid = 0.5 * (lo + hi)
        stall = (it % 4 == 0) & (hi - lo > 0.5 * width4)
        if it % 4 == 0:
            width4 = hi - lo
        step = np.where((lo < step) & (step < hi) & ~stall, step, mid)
        lam = np.where(conv, lam, step)
    f = sep.argmin(lam[gid], l, u, d1l, d1u)
    return f, lam, it
