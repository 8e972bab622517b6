"""The sort-based projections as ldpopt had them before the expected-O(d) pivot search (copies of
its previous ``normalize._shift`` / ``project_simplex`` and ``mle._x_star_sorted`` with their helpers):
the "previous implementation" that bench_projection.py times side by side. Not a test reference: a
copy of the code it would check is not independent of it (tests/test_projection_pivot.py checks the
pivot search against exact rationals and a textbook sort-and-scan written from the papers)."""

from __future__ import annotations

import numpy as np

from ldpopt._validation import check_float_array


def _shift(y: np.ndarray, total: float) -> float:
    """τ with Σ max(y − τ, 0) = total (total > 0, y finite, non-empty). Exact up to rounding."""
    d = y.shape[0]
    # Two lower bounds on τ: Σ(y − τ) ≤ Σ max(y − τ, 0) = total, and max(y) − τ ≤ total.
    # Everything at or below a lower bound is outside the support, so only the rest is sorted.
    # In floating point a bound can round up to max(y) when total is below its rounding unit; so
    # keep every value ≥ the bound (max(y) always survives: the top value is always in the support).
    lo = min(max((float(np.sum(y)) - total) / d, float(np.max(y)) - total), float(np.max(y)))
    cand = y[y >= lo]
    # A few Michelot (1986) steps shrink the candidates cheaply: for any set S containing the
    # support, (Σ_S y − total)/|S| is again a lower bound on τ. Stop when they stop paying off.
    for _ in range(8):
        if cand.shape[0] <= 4096:
            break
        lo_new = (float(np.sum(cand)) - total) / cand.shape[0]
        nxt = cand[cand > lo_new]
        if nxt.shape[0] == 0:  # lo_new rounded up to max(cand) (tiny total): keep what we have
            break
        shrunk = nxt.shape[0] < 0.5 * cand.shape[0]
        cand = nxt
        if not shrunk:
            break
    u = np.sort(cand)[::-1]
    css = np.cumsum(u) - total
    k = np.arange(1, u.shape[0] + 1, dtype=np.float64)
    # The support is the top-ρ values, ρ the last k with u_k > (Σ_{i≤k} u_i − total)/k
    # (the condition holds exactly for k ≤ ρ). k = 1 always holds in exact arithmetic since
    # total > 0; in floating point it can fail when total is below the rounding unit of u_1.
    hits = np.flatnonzero(u * k > css)
    rho = int(hits[-1]) + 1 if hits.size else 1
    tau = css[rho - 1] / rho
    # Polish: recompute τ from the support with pairwise summation (cumsum's error grows with d).
    for _ in range(2):
        s = y > tau
        if not s.any():  # τ rounded to max(y): total is below its rounding unit
            break
        tau_new = (float(np.sum(y[s])) - total) / int(np.count_nonzero(s))
        if tau_new == tau:
            break
        tau = tau_new
    return tau


def project_simplex_sort(x, total=1.0):
    """The previous project_simplex (validation copy + sort path)."""
    y = check_float_array(x, "x")
    t = float(total)
    if t == 0.0:
        return np.zeros_like(y)
    out = np.maximum(y - _shift(y, t), 0.0)
    if not out.any():
        top = y == np.max(y)
        out[top] = t / int(np.count_nonzero(top))
    return out


def simplex_shift_sort(x, total=1.0):
    y = check_float_array(x, "x")
    return float(np.max(y)) if total == 0 else float(_shift(y, float(total)))


def _params(est: Estimate):
    """(a, B, s, C) of the module docstring, after checking 0 < q and p < 1."""
    p, q = est.p, est.q
    if not (q > 0.0 and p < 1.0):
        raise ValueError(f"MLE-Apx needs 0 < q and p < 1 (Eq. 13's variance q(1-q) + f(p-q)(1-p-q) "
                         f"must be > 0 on [0, 1]), got p={p!r}, q={q!r}")
    a = est.counts / est.n - q
    return a, p - q, q * (1.0 - q), (p - q) * (1.0 - p - q)


def _denominator(k, p: float, s: float):
    """C + k·s written as p(1 − p) + (k − 1)·s: a sum of non-negative terms. The direct form
    cancels when p + q > 1 and p → 1 (BLH/HR at large ε: C ≈ −s), losing all digits of 1 − p."""
    return p * (1.0 - p) + (k - 1) * s


def _kappa(r, p: float, q: float):
    """K_v/(p − q) = r_v(1 − p − q) + p q written as (1 − r_v) p q + r_v (1 − p)(1 − q) (r_v = c_v/n
    ∈ [0, 1]): non-negative terms, so no cancellation whatever the sign of 1 − p − q."""
    return (1.0 - r) * (p * q) + r * ((1.0 - p) * (1.0 - q))


def _x_star_sorted(a: np.ndarray, B: float, s: float, C: float, p: float, q: float) -> float:
    """x* by the breakpoint scan (module docstring, 'Exact solution without iteration')."""
    d = a.shape[0]
    amax = float(np.max(a))
    # Lower bounds on x*: x_D (S = D ⊇ S*) and x_{1} (S = {argmax} ⊆ S*). a_v ≤ s·x_lo ⇒ v ∉ S*.
    x_lo = max((float(np.sum(a)) - B) / _denominator(d, p, s), (amax - B) / _denominator(1, p, s))
    cand = a[a > s * x_lo]
    # A few steps of the paper's iteration on the candidates (each x_S, S ⊇ S*, is a lower bound
    # on x*, step 1 of the proof above) shrink the set cheaply before sorting.
    for _ in range(8):
        if cand.shape[0] <= 4096:
            break
        x_new = (float(np.sum(cand)) - B) / _denominator(cand.shape[0], p, s)
        nxt = cand[cand > s * x_new]
        shrunk = nxt.shape[0] < 0.5 * cand.shape[0]
        cand = nxt
        if not shrunk:
            break
    u = np.sort(cand)[::-1]  # argmax survives in exact arithmetic (amax > s x* ≥ s x_lo)
    if u.shape[0] == 0:  # only by rounding: scan everything
        u = np.sort(a)[::-1]
    # k is in the support iff K_(k) > s Σ_{i<k}(a_(i) − a_(k)) (module docstring). Both sides in a
    # cancellation-free form: K from _kappa, the differences shifted by a_(1) (exact for ties).
    t = u - u[0]
    k = np.arange(1, u.shape[0] + 1, dtype=np.float64)
    below = np.concatenate(([0.0], np.cumsum(t)[:-1])) - (k - 1) * t  # Σ_{i<k}(t_i − t_k) ≥ 0
    rho = int(np.flatnonzero(B * _kappa(u + q, p, q) > s * below)[-1]) + 1
    x = (float(np.sum(u[:rho])) - B) / _denominator(rho, p, s)
    return _polish_x(a, B, s, p, x)


def _polish_x(a, B, s, p, x: float) -> float:
    """Recompute x from the support {a > s x} with pairwise summation (exact if the support is)."""
    for _ in range(3):
        sup = a > s * x
        x_new = (float(np.sum(a[sup])) - B) / _denominator(int(np.count_nonzero(sup)), p, s)
        if x_new == x:
            break
        x = x_new
    return x


def _f_on_support(r: np.ndarray, p: float, q: float, s: float, sup: np.ndarray) -> np.ndarray:
    """Eq. 14 on the support S, rewritten without cancellation, 0 off S.

    With x = x_S, a_v − s x = (K_v + s Σ_{i∈S}(a_v − a_i))/(C + k s) and B + C x = Σ_S K_i/(C + k s),
    so f_v = (K_v + s(k a_v − Σ_S a))/Σ_S K_i: Σ_S f = 1 by construction, every K ≥ 0 is summed, not
    differenced, and the a-differences are taken from the largest supported a (exact for ties).
    Rounding may leave a boundary value at −1e-17; it is clipped to 0.
    """
    out = np.zeros(r.shape[0])
    rs = r[sup]
    k = rs.shape[0]
    t = rs - rs.max()
    kap = _kappa(rs, p, q)
    out[sup] = np.maximum((kap + (s / (p - q)) * (k * t - float(np.sum(t)))) / float(np.sum(kap)), 0.0)
    return out


def _f_of_x(a, B, s, C, x: float, p: float, q: float) -> np.ndarray:
    sup = a > s * x
    if not sup.any():  # x rounded past a_max/s: the support always holds the largest a
        sup = a == a.max()
    return _f_on_support(a + q, p, q, s, sup)


def mle_apx_sort(est):
    """The previous mle_apx (method="sort")."""
    a, B, s, C = _params(est)
    x = _x_star_sorted(a, B, s, C, est.p, est.q)
    return _f_of_x(a, B, s, C, x, est.p, est.q)
