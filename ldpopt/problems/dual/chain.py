"""A :class:`~ldpopt.problems.Monotone` chain in the structured solver: generalised PAV, λ outside.

Notes: docs/notes/problems.md, "ldpopt.problems.dual.chain".
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.optimize import isotonic_regression

from ..objectives.separable import NotApplicable, Quadratic
from .dual import illinois_step, solve_lambda
from .simplex import closed_form

__all__ = ["chain_multipliers", "solve_chain"]

_EPS = np.finfo(float).eps


def _check(st):
    ch = st.chain
    if st.m != ch.rows.stop - ch.rows.start:
        raise NotApplicable("Monotone with other linear rows (SubsetSum, Hierarchy) is not covered by the "
                            "structured solver: use the cvxpy route")
    c = ch.idx
    lc, uc = float(st.l[c[0]]), float(st.u[c[0]])
    if np.any(st.l[c] != lc) or np.any(st.u[c] != uc):
        raise NotApplicable("Monotone in the structured solver needs the same lower and upper bound on every "
                            "value of the chain (no Fixed value or per-value Box on it)")
    return c, lc, uc


class _Model:
    """argmin Σ w(x − m)² + λ Σ x over the order and the bounds, for any λ (module docstring)."""

    def __init__(self, st, c, lc, uc):
        self.st, self.c, self.lc, self.uc = st, c, lc, uc
        off = np.ones(st.d, bool)
        off[c] = False
        self.off = np.flatnonzero(off)

    def solve(self, m, w, lam0=None, max_iter=200):
        """(x, λ, iterations) with Σ x = total."""
        st, c, off = self.st, self.c, self.off
        m, w = np.broadcast_to(m, (st.d,)), np.broadcast_to(w, (st.d,))
        wc, mc, wo, mo = w[c], m[c], w[off], m[off]
        lo_o, up_o = st.l[off], st.u[off]
        x = np.empty(st.d)

        def mass(lam):
            res = isotonic_regression(mc - lam / (2.0 * wc), weights=wc, increasing=False)
            xc = np.clip(res.x, self.lc, self.uc)
            xo = np.clip(mo - lam / (2.0 * wo), lo_o, up_o)
            starts = res.blocks[:-1]
            bw = np.add.reduceat(wc, starts)
            bn = np.diff(res.blocks)
            bx = xc[starts]
            inner = (bx > self.lc) & (bx < self.uc)
            io = (xo > lo_o) & (xo < up_o)
            slope = -float(np.sum(bn[inner] ** 2 / (2.0 * bw[inner]))) - float(np.sum(1.0 / (2.0 * wo[io])))
            return xc, xo, float(np.sum(xc)) + float(np.sum(xo)), slope

        # λ ≤ lo: every value at its upper bound; λ ≥ hi: at its lower bound
        lo = float(np.min(2.0 * w * (m - st.u)))
        hi = float(np.max(2.0 * w * (m - st.l)))
        total = st.total
        tol = 8 * _EPS * max(abs(total), 1e-300)
        r_lo, r_hi = float(np.sum(st.u)) - total, float(np.sum(st.l)) - total  # ≥ 0, ≤ 0
        lam = float(np.clip(lam0, lo, hi)) if lam0 is not None and np.isfinite(lam0) else 0.5 * (lo + hi)
        it, side = 0, 0
        for it in range(1, max_iter + 1):
            xc, xo, s, slope = mass(lam)
            r = s - total
            if abs(r) <= tol:
                break
            if r > 0:
                lo, r_lo = lam, r
                side = side - 1 if side <= 0 else -1
            else:
                hi, r_hi = lam, r
                side = side + 1 if side >= 0 else 1
            if hi - lo <= 2 * _EPS * max(abs(lo), abs(hi)):
                break
            step = lam - r / slope if slope < 0 else np.nan
            if not lo < step < hi:
                step = illinois_step(lo, hi, r_lo, r_hi, side)  # tiny model weights: steep S
            lam = step
        x[c], x[off] = xc, xo
        return x, lam, it


def _line_search(sep, f, step, g0):
    """α ∈ (0, 1] minimising the convex J(f + α·step) (g0 = J'(f)·step < 0)."""
    def dphi(a):
        with np.errstate(divide="ignore", invalid="ignore"):
            return float(np.sum(sep.d1(f + a * step) * step))

    d1 = dphi(1.0)
    if not d1 > 0:
        return 1.0
    a0, a1, p0, p1 = 0.0, 1.0, g0, d1
    a = 1.0
    for _ in range(60):
        a = (a0 * p1 - a1 * p0) / (p1 - p0) if p1 > p0 else 0.5 * (a0 + a1)
        if not a0 < a < a1:
            a = 0.5 * (a0 + a1)
        p = dphi(a)
        if p > 0:
            a1, p1 = a, p
        elif p < 0:
            a0, p0 = a, p
        else:
            break
        if a1 - a0 <= 1e-12:
            break
    return max(a, 1e-12)


def solve_chain(sep, st, max_iter: int = 100, stop=None):
    """(f, λ, y, info) for a compiled structure with one Monotone chain (``st.chain``)."""
    c, lc, uc = _check(st)
    model = _Model(st, c, lc, uc)
    info: dict[str, Any] = {"lambda_iterations": 0, "newton_iterations": 0, "line_search_failures": 0}
    if sep.quadratic:
        w = np.broadcast_to(np.asarray(sep.w, float), (st.d,))
        if np.ndim(sep.w) == 0 and float(sep.w) > 0 and not np.any(st.l) and st.implied_upper.all() and st.total > 0:
            # one scalar weight, lower bounds 0: the simplex projection (Norm-Sub's) of the isotonic regression
            g = np.array(np.broadcast_to(sep.m, (st.d,)), float)
            g[c] = isotonic_regression(g[c], increasing=False).x
            f, lam = closed_form(Quadratic(g, sep.w, sep.name), st.d, st.total, st)
            info["closed_form"] = "isotonic + simplex projection"
        else:
            f, lam, it = model.solve(sep.m, w)
            info["lambda_iterations"] = it
        return f, lam, chain_multipliers(sep, st, f, lam), info
    lam, f, it = solve_lambda(sep, st.l, st.u, st.total)  # the order-free optimum: the first model's point
    info["lambda_iterations"] += it
    first = True
    for k in range(1, max_iter + 1):
        if k > 1 and stop is not None and stop():  # solve(time_limit=...): the point so far
            break
        with np.errstate(divide="ignore", invalid="ignore"):
            g, h2 = sep.d1(f), sep.d2(f)
        # model weights h''/2, kept positive and finite (a flat value, h'' = 0, gets a tiny weight)
        w = 0.5 * np.asarray(h2, float)
        fin = np.isfinite(w) & (w > 0)
        top = float(np.max(w[fin])) if fin.any() else 1.0
        w = np.where(np.isfinite(w), np.maximum(w, 1e-14 * top), 1e14 * top)
        x, lam, it = model.solve(f - g / (2.0 * w), w, lam0=lam)
        info["lambda_iterations"] += it
        info["newton_iterations"] = k
        step = x - f
        size = float(np.max(np.abs(step)))
        if first:  # the order-free point may violate the order: the model's solution is feasible
            f, first = x, False
            continue
        if size <= 4 * _EPS * max(float(np.max(np.abs(f))), st.total / st.d):
            f = x
            break
        g0 = float(np.sum(g * step))
        if not g0 < 0:  # no descent left at rounding level: take the model point
            f = x
            break
        a = _line_search(sep, f, step, g0)
        f = x if a == 1.0 else f + a * step
    return f, lam, chain_multipliers(sep, st, f, lam), info


def chain_multipliers(sep, st, f, lam) -> np.ndarray:
    """The rows' multipliers y (length st.m, the constraint's own row order) from f and λ (module
    docstring, "Order multipliers")."""
    ch = st.chain
    c = ch.idx
    lc, uc = float(st.l[c[0]]), float(st.u[c[0]])
    fc = f[c]
    with np.errstate(divide="ignore", invalid="ignore"):
        r = sep.d1(f)[c] + lam
    n = fc.size
    new = np.empty(n, bool)
    new[0] = True
    new[1:] = fc[1:] != fc[:-1]
    starts = np.flatnonzero(new)
    seg = np.cumsum(new) - 1
    size = np.diff(np.append(starts, n))
    inner_blk = (fc[starts] > lc) & (fc[starts] < uc)
    # interior blocks: remove the mean residual, then within-block prefix sums
    mean = np.add.reduceat(r, starts) / size
    rr = np.where(inner_blk[seg], r - mean[seg], r)
    cs = np.cumsum(rr)
    base = np.concatenate([[0.0], cs[starts[1:] - 1]])
    P = cs - base[seg]
    y = np.zeros(max(n - 1, 0))
    if n > 1:
        y[:] = np.where(new[1:], 0.0, P[:-1])
        low = np.flatnonzero(fc <= lc)
        if low.size and lc < uc:  # a suffix: y = P − suffix-min of P (the rest on y^lo)
            s = int(low[0])
            Pl = np.cumsum(r[s:])
            L = np.minimum.accumulate(Pl[::-1])[::-1]
            y[s:] = (Pl - L)[:-1]
        up = np.flatnonzero(fc >= uc)
        if up.size and lc < uc:  # a prefix: mirrored, Q_k = −Σ_{j=k}^{e} r_j, y_{k−1} = Q_k − min_{j≤k} Q
            e = int(up[-1])
            Q = -np.cumsum(r[: e + 1][::-1])[::-1]
            V = np.minimum.accumulate(Q)
            y[:e] = (Q - V)[1:]
    y = np.maximum(y, 0.0)
    out = np.zeros(st.m)
    out[ch.rows] = y[::-1] if ch.flipped else y
    return out
