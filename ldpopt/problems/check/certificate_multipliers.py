"""Multipliers (λ, y) recovered from a point f, for the certificate of :mod:`.certificate`.

Derivation (KKT of the separable problem). For J(f) = Σ_v h_v(f_v) under l ≤ f ≤ u, Σ f = total
(multiplier λ) and rows A f = b / A f ≤ b (y, y ≥ 0 on ≤-rows), f is optimal iff there are (λ, y)
and bound multipliers y^lo, y^up ≥ 0 with, per value, t_v = λ + (Aᵀy)_v and

    h_v'(f_v) + t_v = y^lo_v − y^up_v,   y^lo_v (f_v − l_v) = 0,   y^up_v (u_v − f_v) = 0,

i.e. r_v = h_v'(f_v) + t_v is  = 0 where l_v < f_v < u_v,  ≥ 0 where f_v = l_v < u_v,  ≤ 0 where
f_v = u_v > l_v,  free where l_v = u_v (a ``Fixed`` value). An upper bound that is only *implied*
by Σ f = total and f ≥ 0 (f_v ≤ total; ``Structure.implied_upper``) is not a constraint: no
multiplier, so a value sitting at it (a simplex vertex, the last free value of ``Fixed`` at d = 2)
is an *inner* value, r_v = 0.

* A value within 4ε·total of a bound counts as at it (a point left 2⁻⁵⁴ above 0 by rounding would
  otherwise pin the fit to a stationarity it need not satisfy).
* Values with r_v = 0 determine (λ, y) by least squares (exact at an optimum): λ = −mean h'
  over them when there are no active rows.
* No inner value (every value at an explicit bound) and no rows: the conditions are an interval
  λ ∈ [max_{f_v = l_v} −h_v', min_{f_v = u_v} −h_v']; its middle point is taken (every λ in it
  certifies an exact vertex with gap 0 and argmin equal to f; the middle is farthest from the
  kinks, where the argmin's rounding is largest). One end infinite: the finite end moved by
  1e-6·(1 + |end|) into the interval. Empty (f is not optimal): its middle point too, and the
  certificate reports the distance.
* Rows whose least-squares system is singular (a block with no inner value) or whose fit leaves
  a sign condition violated: the small LP on the active set  min s  s.t. |r_v| ≤ s (inner),
  −r_v ≤ s (at l), r_v ≤ s (at u), y ≥ 0 on ≤-rows (scipy's HiGHS), kept when its worst
  violation is below the least-squares one. At most ``_MAX_LP_VALUES`` values (else least squares).

The papers are silent on this (they certify nothing); the choices above are ldpopt's.
"""

from __future__ import annotations

import numpy as np

__all__ = ["recover_multipliers"]

_EPS = np.finfo(float).eps
_MAX_DENSE_ROWS = 4096    # the normal equations are (k+1)² dense
_MAX_LP_VALUES = 200_000  # the active-set LP has one inequality (two for inner values) per value


def _sides(st, f, active_tol=0.0):
    """(inner, at lower, at upper) masks of the KKT conditions of the module docstring."""
    free = st.l < st.u
    u = st.u if st.implied_upper is None else np.where(st.implied_upper, np.inf, st.u)  # no implied bound
    lo = free & (f <= st.l + active_tol)
    up = free & ~lo & (f >= u - active_tol)
    return free & ~lo & ~up, lo, up


def _interval_middle(g, lo, up) -> float:
    """λ of the module docstring when no value is inner and there are no rows (g = h'(f))."""
    a = float(np.max(-g[lo & np.isfinite(g)], initial=-np.inf))
    b = float(np.min(-g[up & np.isfinite(g)], initial=np.inf))
    if np.isfinite(a) and np.isfinite(b):
        return 0.5 * (a + b)
    if np.isfinite(a):
        return a + 1e-6 * (1.0 + abs(a))
    if np.isfinite(b):
        return b - 1e-6 * (1.0 + abs(b))
    return 0.0


def _active_set_lp(g, M, inner, lo, up, ineq_cols):
    """z = (λ, y_act) minimising the worst KKT sign violation (module docstring); None on failure.
    ``M``: (k+1) × d sparse, row 0 all ones (Σ), then the active rows."""
    import scipy.sparse as sp
    from scipy.optimize import linprog

    keep = (inner | lo | up) & np.isfinite(g)
    idx = np.flatnonzero(keep)
    Mt = sp.csr_matrix(M.T)[idx]          # r = g + Mt z on the kept values
    gi = g[idx]
    k1 = M.shape[0]
    blocks, rhs = [], []
    one = sp.csr_matrix(np.ones((idx.size, 1)))
    for sign, mask in ((1.0, (inner | up)[idx]), (-1.0, (inner | lo)[idx])):
        sel = np.flatnonzero(mask)
        if sel.size:  # sign·(g + Mt z) ≤ s
            blocks.append(sp.hstack([sign * Mt[sel], -one[sel]]))
            rhs.append(-sign * gi[sel])
    if not blocks:
        return None
    bounds = [(None, None)] * k1 + [(0.0, None)]
    for j in ineq_cols:
        bounds[j] = (0.0, None)
    c = np.zeros(k1 + 1)
    c[-1] = 1.0
    try:
        res = linprog(c, A_ub=sp.vstack(blocks).tocsc(), b_ub=np.concatenate(rhs), bounds=bounds, method="highs")
    except ValueError:
        return None
    return res.x[:k1] if res.status == 0 else None


def recover_multipliers(sep, st, f, active_tol: float = 0.0):
    """(λ, y) for f by the KKT conditions of the module docstring: least squares over the
    multipliers of Σ and of the active rows (equalities; ≤-rows with |A f − b| ≤ 1e-12·total) on
    the inner values, the interval's middle point or the active-set LP where those do not
    determine them. Inactive ≤-rows get y = 0, and y is clipped to ≥ 0 on ≤-rows."""
    f = np.asarray(f, float)
    if st.tree is not None:  # one tree of sums: tree-structured normal equations, λ ≡ 0
        from ..solvers.structured.tree import recover_tree
        return 0.0, recover_tree(sep, st, f)
    # a value within rounding of a bound (≤ 4ε·total, e.g. 2⁻⁵⁴ left by a bisection) counts as at it:
    # taken as inner it would pin the fit to a stationarity it need not satisfy
    inner_m, lo, up = _sides(st, f, max(active_tol, 4 * _EPS * max(abs(st.total), 1.0)))
    # h' only where it is used (the inner values; at d = 10⁷ a few percent), through the separable
    # restricted to them: the same elementwise numbers as the full h'(f)
    cand = np.flatnonzero(inner_m)
    sub = sep.restrict(cand) if hasattr(sep, "restrict") and cand.size else None
    with np.errstate(divide="ignore", invalid="ignore"):
        gc = np.broadcast_to(sub.d1(f[cand]), cand.shape) if sub is not None else sep.d1(f)[cand]
    inner = np.zeros(f.shape, dtype=bool)
    inner[cand[np.isfinite(gc)]] = True
    gi = gc[np.isfinite(gc)]  # h' on the inner values, in index order
    y = np.zeros(st.m)
    if st.m == 0 or (st.chain is not None and st.m == st.chain.rows.stop - st.chain.rows.start):
        if inner.any():
            lam = float(-np.mean(gi))
        else:
            with np.errstate(divide="ignore", invalid="ignore"):
                lam = _interval_middle(sep.d1(f), lo, up)
        if st.m == 0:
            return lam, y
        # a Monotone chain alone: the order multipliers telescope inside each block of equal values,
        # so λ is the same as without rows and y follows from the blocks (structured.chain; the
        # normal equations would be (d−1)² dense)
        from ..solvers.structured.chain import chain_multipliers
        return lam, chain_multipliers(sep, st, f, lam)
    res = st.A @ f - st.b
    act = ~st.ineq | (np.abs(res) <= 1e-12 * max(st.total, 1.0))
    act_idx = np.flatnonzero(act)
    k = act_idx.size
    if k == 0:
        if inner.any():
            return float(-np.mean(gi)), y
        with np.errstate(divide="ignore", invalid="ignore"):
            return _interval_middle(sep.d1(f), lo, up), y
    if k > _MAX_DENSE_ROWS:  # e.g. a Monotone chain with other rows at large d: (k+1)² dense
        raise ValueError(f"cannot recover {k} row multipliers from f (over {_MAX_DENSE_ROWS}): pass the "
                         "solver's multipliers")
    A_act = st.A[act_idx]
    rows = A_act[:, np.flatnonzero(inner)]
    # M_I = [1; A_act,I]; normal equations (M_I M_Iᵀ) z = −M_I g_I
    G = np.empty((k + 1, k + 1))
    G[0, 0] = gi.shape[0]
    rs = np.asarray(rows.sum(axis=1)).ravel()
    G[0, 1:] = G[1:, 0] = rs
    G[1:, 1:] = (rows @ rows.T).toarray()
    rhs = -np.concatenate([[gi.sum()], rows @ gi])
    z, _, rank, _ = np.linalg.lstsq(G, rhs, rcond=None)
    ineq_act = st.ineq[act_idx]
    z[1:][ineq_act] = np.maximum(z[1:][ineq_act], 0.0)
    singular = rank < k + 1
    if (singular or inner.sum() < f.size) and f.size <= _MAX_LP_VALUES:
        import scipy.sparse as sp

        with np.errstate(divide="ignore", invalid="ignore"):
            g = sep.d1(f)
        M = sp.vstack([sp.csr_matrix(np.ones((1, f.size))), A_act]).tocsr()

        def worst(zz):  # the worst violation of the KKT sign conditions at z = (λ, y_act)
            with np.errstate(invalid="ignore"):
                r = g + M.T @ zz
                v = np.concatenate([np.abs(r[inner]), np.maximum(-r[lo], 0.0), np.maximum(r[up], 0.0)])
            return float(np.max(v[~np.isnan(v)], initial=0.0))

        v_ls = worst(z)
        if singular or v_ls > 0.0:
            z_lp = _active_set_lp(g, M, inner, lo, up, 1 + np.flatnonzero(ineq_act))
            if z_lp is not None and (singular or worst(z_lp) < v_ls):
                z = z_lp
    y[act_idx] = z[1:]
    y[st.ineq] = np.maximum(y[st.ineq], 0.0)
    return float(z[0]), y
