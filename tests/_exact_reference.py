"""Exact references for the status property test (not the package's code).

A problem here is: a built-in smooth objective (its per-value derivative h_v' written out again from
the papers' formulas below, batched over many problems), per-value bounds l ≤ f ≤ u (Simplex, Box,
Fixed) and disjoint equality blocks Σ_{v∈S_k} f_v = b_k (SubsetSum "==", a SubsetSum "<="/">=" that
is active), besides Σ f = 1. Such a feasible set is a product of blocks (the values in no row are
the pool, of mass 1 − Σ b_k), so

* feasibility is decided *exactly*: block k is non-empty iff Σ_S l ≤ b_k ≤ Σ_S u, summed in
  rational arithmetic (``fractions.Fraction`` of the float data);
* the optimum is, block by block, x(λ_k) with x_v(λ) = argmin_{[l_v, u_v]} h_v + λ x (h' increasing:
  bisection on x, 80 halvings) and λ_k the root of Σ_S x(λ_k) = b_k (bisection on λ, 200 halvings,
  down to adjacent floats). Its accuracy is what the argmin bound gives for it:
  ‖x − f*‖_∞ ≤ inner bisection width + max_k |Σ_S x(λ_k) − b_k| (returned as ``err``).

A single inequality row is decided as convexity allows: if the optimum without it satisfies it, that
is the optimum; else the row is active and becomes an equality block.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np


def derivative(objective: str, x, P: dict):
    """h_v'(x) batched over problems (rows of x): ``P`` holds per-problem arrays broadcastable to x.
    cls: 2(x − f̃); posterior: 2(x − mean); weighted-mle (Wang et al. Eq. 13 with the variance of
    Eq. 2, r = c/n − q − (p − q)x, s = q(1−q) + (p−q)(1−p−q)x): (−2(p−q) r s − (p−q)(1−p−q) r²)/s²;
    multinomial: −(p−q)c/(nπ); binomial: −(p−q)(c/π − (n−c)/(1−π))/n, π = q + (p−q)x."""
    p, q = P["p"], P["q"]
    B = p - q
    if objective == "cls":
        return 2.0 * (x - P["ft"])
    if objective == "posterior":
        return 2.0 * (x - P["mean"])
    if objective == "weighted-mle":
        e = B * (1.0 - p - q)
        r = P["c"] / P["n"] - q - B * x
        s = q * (1.0 - q) + e * x
        return (-2.0 * B * r * s - e * r ** 2) / s ** 2
    pi = q + B * x
    if objective == "multinomial":
        return -B * P["c"] / (P["n"] * pi)
    if objective == "binomial":
        return -B * (P["c"] / pi - (P["n"] - P["c"]) / (1.0 - pi)) / P["n"]
    raise AssertionError(objective)


def _argmin(objective, lam, l, u, P, halvings: int = 80):
    """x_v(λ_v) by bisection on [l_v, u_v] (values with l = u stay there)."""
    lo, hi = l.copy(), u.copy()
    at_l = derivative(objective, l, P) + lam >= 0
    at_u = derivative(objective, u, P) + lam <= 0
    for _ in range(halvings):
        mid = 0.5 * (lo + hi)
        up = derivative(objective, mid, P) + lam < 0  # h' increasing: the root is right of mid
        lo = np.where(up, mid, lo)
        hi = np.where(up, hi, mid)
        if np.all(hi - lo <= 2 * np.spacing(np.maximum(np.abs(lo), np.abs(hi)))):
            break  # adjacent floats everywhere
    return np.where(at_l, l, np.where(at_u, u, 0.5 * (lo + hi))), float(np.max(hi - lo, initial=0.0))


def block_feasible(l, u, block, mass) -> bool:
    """Exact: every block's mass within [Σ l, Σ u] of its values (rational sums of the floats)."""
    for k, m in enumerate(mass):
        sel = np.flatnonzero(block == k)
        lo = sum((Fraction(float(v)) for v in l[sel]), Fraction(0))
        if np.any(np.isinf(u[sel])):
            hi = None
        else:
            hi = sum((Fraction(float(v)) for v in u[sel]), Fraction(0))
        mf = Fraction(float(m)) if not isinstance(m, Fraction) else m
        if mf < lo or (hi is not None and mf > hi):
            return False
    return True


def solve_blocks(objective, P, l, u, block, mass, halvings: int = 200):
    """(x, err) batched: ``l, u, block`` (B, d), ``mass`` (B, K) with block ids 0..K−1; every block
    must be feasible. u is capped at the block's mass + 1 (f ≤ mass is implied; capping at the mass
    itself would make Σ x(λ) flat where one value carries the whole block, and λ ambiguous)."""
    Bn, K = mass.shape
    mv = np.take_along_axis(mass, block, axis=1)
    u = np.minimum(u, np.maximum(mv, l) + 1.0)  # f ≤ mass is implied: a finite bracket that never binds
    # bracket: λ ≥ max −h'(l) puts every value at l, λ ≤ min −h'(u) at u
    with np.errstate(all="ignore"):
        g_l, g_u = -derivative(objective, l, P), -derivative(objective, u, P)
    hi = np.full((Bn, K), -np.inf)
    lo = np.full((Bn, K), np.inf)
    for k in range(K):
        sel = block == k
        hi[:, k] = np.max(np.where(sel & np.isfinite(g_l), g_l, -np.inf), axis=1)
        lo[:, k] = np.min(np.where(sel & np.isfinite(g_u), g_u, np.inf), axis=1)
    hi = np.where(np.isfinite(hi), hi, 0.0) + 1.0
    lo = np.where(np.isfinite(lo), lo, 0.0) - 1.0
    lo = np.minimum(lo, hi - 1.0)

    def mass_at(lam):
        x, w = _argmin(objective, np.take_along_axis(lam, block, axis=1), l, u, P)
        m = np.stack([np.sum(np.where(block == k, x, 0.0), axis=1) for k in range(K)], axis=1)
        return x, m, w

    for _ in range(halvings):
        if np.all(hi - lo <= 2 * np.spacing(np.maximum(np.abs(lo), np.abs(hi)))):
            break  # adjacent floats everywhere
        mid = 0.5 * (lo + hi)
        _, m, _ = mass_at(mid)
        big = m > mass  # m(λ) non-increasing: λ* is right of mid
        lo = np.where(big, mid, lo)
        hi = np.where(big, hi, mid)
    best_x, best_err, width = None, None, 0.0
    for lam in (lo, hi):
        x, m, w = mass_at(lam)
        err = np.max(np.abs(m - mass), axis=1)
        width = max(width, w)
        if best_x is None:
            best_x, best_err = x, err
        else:
            take = err < best_err
            best_x = np.where(take[:, None], x, best_x)
            best_err = np.minimum(err, best_err)
    return best_x, best_err + width
