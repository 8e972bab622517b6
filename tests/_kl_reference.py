"""Exact reference for CLS + λ·Σ kl_div(f, p) on the simplex (not the package's code).

KKT: every f_v > 0 (kl_div's derivative log(f/p) → −∞ at 0), 2(f_v − f̃_v) + λ log(f_v/p_v) + ν = 0 and
Σ f = 1. For a given ν each f_v is the unique root of the increasing 2f + λ log f = c_v,
c_v = 2f̃_v − ν + λ log p_v (bisection in log f, 200 halvings, to adjacent floats), and Σ f(ν) is
decreasing in ν (bisection on ν, 200 halvings). Each bisection stops early once a halving leaves its
bracket unchanged: every later halving would then leave it unchanged too (each is a function of the
bracket alone), so the answer is the 200 halvings' bit for bit, in the ~60 it takes to reach
adjacent floats (d = 25,000: 14.8 s → 1.9 s of CPU)."""

from __future__ import annotations

import numpy as np


def _inner(c, lam):
    lo = np.full(c.shape, -800.0)   # log f
    hi = np.full(c.shape, 2.0)
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        g = 2.0 * np.exp(mid) + lam * mid - c
        new_lo, new_hi = np.where(g < 0, mid, lo), np.where(g < 0, hi, mid)
        if np.array_equal(new_lo, lo) and np.array_equal(new_hi, hi):
            break
        lo, hi = new_lo, new_hi
    return np.exp(0.5 * (lo + hi))


def cls_kl_simplex(f_tilde, p, lam: float) -> np.ndarray:
    """argmin Σ (f − f̃)² + λ Σ [f log(f/p) − f + p] over the simplex (λ > 0)."""
    f_tilde, p = np.asarray(f_tilde, float), np.asarray(p, float)
    base = 2.0 * f_tilde + lam * np.log(p)
    lo, hi = -1e3, 1e3
    for _ in range(200):
        nu = 0.5 * (lo + hi)
        s = float(np.sum(_inner(base - nu, lam)))
        new = (nu, hi) if s > 1.0 else (lo, nu)
        if new == (lo, hi):
            break
        lo, hi = new
    return _inner(base - 0.5 * (lo + hi), lam)
