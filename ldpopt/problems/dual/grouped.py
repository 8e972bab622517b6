"""Per-value work once per distinct count, for the exact likelihoods on the plain simplex.

Notes: docs/notes/problems.md, "ldpopt.problems.dual.grouped".
"""

from __future__ import annotations

import numpy as np

from ..objectives.groups import Groups, count_groups, groups_of, per_group, restricted, uniform
from .dual import _d1, solve_lambda

__all__ = ["Groups", "count_groups", "evaluate", "evaluator", "groups_of", "per_group", "restricted", "simplex_grouped",
           "simplex_started", "uniform"]


def simplex_grouped(sep, st):
    """(f, λ, y = [], info) for the plain simplex by Newton on λ over the distinct counts, or None when
    that does not apply (see the module docstring). Without groups: Newton on λ over every value from
    the separable's own start where it has one (:func:`simplex_started`; ``distinct_counts``
    0), else None."""

    if st.m or st.chain is not None:
        return None
    g = count_groups(sep)
    if g is None:  # no groups (a block of .blocks with too many counts): from the separable's own start
        got = simplex_started(sep, st)
        if got is not None:
            got[3]["distinct_counts"] = 0
        return got
    l0, u0 = uniform(st.l), uniform(st.u)
    if l0 is None or u0 is None or not l0 < u0:
        return None
    lk, uk = np.full(g.k, l0), np.full(g.k, u0)
    rep = g.rep
    d1l, d1u = _d1(rep, lk), _d1(rep, uk)
    piece, evals = _support_piece(rep, l0, u0, d1l, d1u, g.weights, st.total)
    # no piece (h'(l) infinite: a KL or entropy term): the separable's own first λ where it states one
    lam0 = piece[0] if piece is not None else sep.lambda_start(st.total)
    lam, table, it = solve_lambda(rep, lk, uk, st.total, d1l=d1l, d1u=d1u, weights=g.weights, bracket=piece,
                                  lam0=lam0)
    f = table[g.inv]
    # Σ f over d values rounds differently from the weighted sum over K: accept what the certificate
    # accepts by default (its feasibility floor); beyond that (e.g. the multinomial's flat terms,
    # whose mass the general method spreads) hand over
    if not abs(float(np.sum(f)) - st.total) <= max(1e-9 / st.d, 1e-14) * max(abs(st.total), 1.0):
        return None
    info = {"lambda_iterations": it, "newton_iterations": 0, "line_search_failures": 0,
            "distinct_counts": g.k, "support_search": evals}
    return f, lam, np.zeros(0), info


def simplex_started(sep, st):
    """(f, λ, y = [], info) with no rows by the dual method's Newton on λ (:func:`.dual.solve_lambda`)
    started at the separable's own first λ (``Separable.lambda_start``: a recognised CLS + KL's
    quadratic model, Norm-Sub's shift of it), or None where it has none; :func:`simplex_grouped` runs
    it where there are no distinct-count groups (the whole domain, or a block of :mod:`.blocks`).
    The dual method alone starts in the middle of the whole range of λ: at d = 1,000, 12 passes of the
    per-value argmin instead of 7 (measured)."""
    if st.m or st.chain is not None or getattr(st, "sum_free", False):  # (a block of .blocks: no sum_free)
        return None
    lam0 = sep.lambda_start(st.total)
    if lam0 is None or not np.isfinite(lam0):
        return None

    lam, f, it = solve_lambda(sep, st.l, st.u, st.total, lam0=lam0)
    return f, lam, np.zeros(0), {"lambda_iterations": it, "newton_iterations": 0, "line_search_failures": 0,
                                 "lambda_start": lam0}


def _support_piece(rep, l0: float, u0: float, d1l, d1u, w, total):
    """((lo, hi, S(lo), S(hi)), evaluations): an interval of λ holding the root of
    S(λ) = Σ_k w_k f_k(λ) = total over which at most 4 groups change from l to above it, or (None, n)
    when the root is beyond the last breakpoint or S is not monotone as expected.

    Group k leaves its lower bound l0 below the breakpoint λ_k = −h_k'(l0) (:mod:`.separable`);
    sorted decreasingly, S at the j-th breakpoint involves the first j groups only and grows with j.
    The first breakpoint j* where S ≥ total is guessed from the tangent model
    f_k(λ) ≈ l0 + (λ_k − λ)/h_k''(l0) (its S at every breakpoint in one cumulative sum), then
    bracketed by a doubling search around the guess and bisected, each step one argmin over the
    first j groups (j*: the groups on the support, a few hundred for Zipf data) — where Newton from
    the whole range's mid point took ~20 over all K groups (it falls into the long flat tail of S,
    where only a few values are positive, and crawls back). Inside the piece the support is
    (nearly) fixed and S is smooth, so Newton converges in a few steps."""
    with np.errstate(invalid="ignore"):
        bp = -d1l
    if not np.all(np.isfinite(bp)):
        return None, 0
    order = np.argsort(-bp, kind="stable")
    srt = rep.restrict(order)
    bps, ws, d1s, d1us = bp[order], w[order], d1l[order], d1u[order]
    base = l0 * float(np.sum(w))
    k = bps.shape[0]
    evals = 0

    def mass(j):  # S at the j-th breakpoint (0-based): only the first j groups may be above l0
        nonlocal evals
        if j == 0:
            return base
        evals += 1
        sub = srt.restrict(slice(0, j))
        f = sub.argmin(bps[j], np.full(j, l0), np.full(j, u0), d1s[:j], d1us[:j])
        return base + float((f - l0) @ ws[:j])

    # the tangent model's S at every breakpoint: base + Σ_{i<j} w_i (λ_i − λ_j)/h_i''
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        h2 = np.broadcast_to(srt.d2(np.full(k, l0)), (k,))
        a = np.concatenate([[0.0], np.cumsum(ws * bps / h2)[:-1]])
        b = np.concatenate([[0.0], np.cumsum(ws / h2)[:-1]])
        model = base + a - bps * b
    ok = np.isfinite(model)
    guess = int(np.argmax(ok & (model >= total))) if np.any(ok & (model >= total)) else k - 1
    guess = min(max(guess, 1), k - 1)
    # one exact S at the guess; the model shifted by its error there gives the second guess (the
    # model's error comes mostly from the largest values, nearly the same at nearby breakpoints)
    s = mass(guess)
    corrected = model + (s - model[guess])
    hit = ok & (corrected >= total)
    second = min(max(int(np.argmax(hit)) if hit.any() else k - 1, 1), k - 1)
    if second != guess:
        guess, s = second, mass(second)
    # gallop from the guess to a bracket lo_j < hi_j with S(lo_j) < total ≤ S(hi_j)
    if s >= total:
        hi_j, s_hi, step = guess, s, 1
        while True:
            j = max(hi_j - step, 0)
            s = mass(j)
            if s < total:
                lo_j, s_lo = j, s
                break
            hi_j, s_hi, step = j, s, 2 * step
            if j == 0:
                return None, evals  # S(λ_0) = Σ l ≥ total: nothing to solve here
    else:
        lo_j, s_lo, step = guess, s, 1
        while True:
            if lo_j == k - 1:
                return None, evals  # the root lies beyond the last breakpoint
            j = min(lo_j + step, k - 1)
            s = mass(j)
            if s >= total:
                hi_j, s_hi = j, s
                break
            lo_j, s_lo, step = j, s, 2 * step
    while hi_j - lo_j > 4:
        mid = (lo_j + hi_j) // 2
        s = mass(mid)
        if s >= total:
            hi_j, s_hi = mid, s
        else:
            lo_j, s_lo = mid, s
    # λ at hi_j is the left end (S ≥ total), at lo_j the right end (S < total)
    lam_lo, lam_hi = float(bps[hi_j]), float(bps[lo_j])
    if not lam_lo < lam_hi:
        return None, evals
    return (lam_lo, lam_hi, s_hi, s_lo), evals


def evaluator(sep, *xs, grouped: bool = True):
    """``ev(method, *positions)`` = ``getattr(sep, method)(*(xs[i] for i in positions))`` (per-value
    arrays of length d; no positions: all of them), computed once per distinct count and gathered
    when every x is constant on every group (:func:`per_group`, checked once here), else
    elementwise (always, with ``grouped=False``). Bit-identical either way."""
    g = count_groups(sep) if grouped else None
    tables = [per_group(g, x) for x in xs] if g is not None else [None]
    grouped = not any(tb is None for tb in tables)

    def ev(method: str, *positions):
        pos = positions if positions else range(len(xs))
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            if not grouped:
                return getattr(sep, method)(*(xs[i] for i in pos))
            assert g is not None  # grouped: the tables were made from g
            out = np.broadcast_to(getattr(g.rep, method)(*(tables[i] for i in pos)), (g.k,))
        return out[g.inv]

    return ev


def evaluate(sep, method: str, *xs):
    """One :func:`evaluator` call."""
    return evaluator(sep, *xs)(method)
