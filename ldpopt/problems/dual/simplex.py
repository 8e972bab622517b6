"""The simplex-only case in expected O(d): the closed forms' pivot search instead of Newton on λ.

Notes: docs/notes/problems.md, "ldpopt.problems.dual.simplex".
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ..objectives.separable import WeightedMLESep

if TYPE_CHECKING:
    from .structure import Structure  # annotations only

__all__ = ["closed_form", "has_closed_form", "newton_lambda", "simplex_fast"]


def _plain_simplex(st: Structure) -> bool:
    """Σ f = total > 0, f ≥ 0, no rows, no bound other than 0 and the implied upper bound."""
    assert st.implied_upper is not None  # compile_constraints sets it
    return (st.m == 0 and st.total > 0 and bool(st.implied_upper.all())
            and not np.any(st.l))


def simplex_fast(sep, st: Structure):
    """(f, λ, y, info) by the expected-O(d) closed forms of the module docstring, or None when they
    do not apply; one closed-form pass (the pivot search for λ): Solution.iterations counts it as 1."""
    if not _plain_simplex(st) or not (has_closed_form(sep) and (sep.quadratic or st.total == 1.0)):
        return None
    f, lam = closed_form(sep, st.d, st.total, st)
    return f, lam, np.zeros(0), {"closed_form": sep.name, "closed_form_iterations": 1, "lambda_iterations": 0,
                                 "newton_iterations": 0, "line_search_failures": 0}


def has_closed_form(sep) -> bool:
    """cls with one scalar weight, or the weighted MLE (B > 0): :func:`closed_form` applies (what the
    per-value form says, ``Separable.has_closed_form``)."""
    return sep.has_closed_form()


def closed_form(sep, d: int, mass: float, st):
    """(f, λ) on {f ≥ 0, Σ f = mass} (d values; ``st``: their bounds, for the polish): Norm-Sub
    with that mass for cls, MLE-Apx with that mass for the weighted MLE (module docstring). Also
    the per-block solve of :mod:`.blocks`."""
    if sep.quadratic:
        from ...methods.normalize import shift_support

        m = np.broadcast_to(sep.m, (d,))
        tau, pool = shift_support(m, mass)
        if pool is None:
            f = np.maximum(m - tau, 0.0)
        else:
            f = np.zeros(d)  # calloc: the support lies in the pool
            f[pool] = np.maximum(m[pool] - tau, 0.0)
        return f, 2.0 * float(sep.w) * tau
    f, lam = _mle_apx(sep, mass)
    return _polish(sep, st, f, lam)


def _polish(sep, st: Structure, f, lam: float, steps: int = 3):
    """f_v = f_v(λ) on the support and Newton steps on λ there (:func:`newton_lambda`, the pool alone):
    Eq. 14's f sums to 1 only to ~k·eps (k the support size; 3e-14 at d = 42,178), above the
    certificate's 1e-9/d feasibility tolerance; the dual method stops at |Σ f − total| ≤ 16 eps.
    Values off the support stay 0 (the certificate checks that they still may)."""
    sup = np.flatnonzero(f > 0)
    if sup.size == 0:
        return f, lam
    # f(λ) itself, then the steps: Eq. 14's f differs from it by ~eps per value
    lam_g, x, _ = newton_lambda(sep.restrict(sup), st.l[sup], st.u[sup], np.zeros(sup.size, np.intp),
                                np.array([st.total]), np.array([lam]), steps)
    out = np.zeros(st.d)
    out[sup] = x
    return out, float(lam_g[0])


def newton_lambda(sep, l, u, gid, mass, lam, newton: int, weights=None, x0=None):
    """(λ per block, x = the per-value argmin at it, Σ_block x − mass): up to ``newton`` Newton steps
    on every block's m_k(λ_k) = Σ_{gid = k} x_v(λ_k) = mass_k at once (slope Σ 1/h_v'' over the
    block's values inside their bounds, finite terms only), each block keeping a step only when it
    reduces its own |m_k − mass_k|, stopping at 4 eps·|mass_k|. The polish of the closed forms here
    and the argmin bound of :func:`ldpopt.problems.check.certificate.block_argmin_bound` (per-block sums by
    ``np.bincount``). ``weights``: each entry stands for that many values (the distinct-count groups of
    :mod:`.grouped`); None: once each. ``x0``: the argmin at ``lam`` if the caller has it."""
    G = mass.shape[0]
    x = sep.argmin(lam[gid], l, u) if x0 is None else x0
    err = _sums(gid, x, None, G, weights) - mass
    tol = 4 * np.finfo(float).eps * np.maximum(np.abs(mass), 1e-300)
    for _ in range(newton):
        todo = np.abs(err) > tol
        if not todo.any():
            break
        inner = (x > l) & (x < u)
        with np.errstate(divide="ignore", invalid="ignore"):
            w = 1.0 / sep.d2(x)
        slope = _sums(gid, w, inner & np.isfinite(w), G, weights)
        step = todo & np.isfinite(slope) & (slope > 0)
        if not step.any():
            break
        lam_new = np.where(step, lam + err / np.where(step, slope, 1.0), lam)
        x_new = sep.argmin(lam_new[gid], l, u)
        err_new = _sums(gid, x_new, None, G, weights) - mass
        keep = step & (np.abs(err_new) < np.abs(err))  # m_k(λ) is non-increasing: dm/dλ = −slope
        if not keep.any():
            break
        lam = np.where(keep, lam_new, lam)
        x = np.where(keep[gid], x_new, x)
        err = np.where(keep, err_new, err)
    return lam, x, err


def _sums(gid, w, mask, G: int, weights=None) -> np.ndarray:
    """Σ of ``w`` (where ``mask``) over each block: ``np.bincount`` for several blocks, ``np.sum``
    (pairwise: its rounding grows like log d, a running sum's like d) for one; each entry counted
    ``weights`` times where given."""
    if weights is not None:
        wm = weights if mask is None else np.where(mask, weights, 0.0)
        with np.errstate(invalid="ignore"):  # 0·inf where masked out: masked again below
            prod = np.where(wm != 0, wm * w, 0.0)
        return np.array([np.sum(prod)]) if G == 1 else np.bincount(gid, weights=prod, minlength=G)
    if G == 1:
        return np.array([np.sum(w if mask is None else w[mask])])
    return np.bincount(gid, weights=w if mask is None else np.where(mask, w, 0.0), minlength=G)


def _mle_apx(sep: WeightedMLESep, mass: float = 1.0):
    """MLE-Apx on (a, B, s, C) by the pivot search of :func:`ldpopt.methods.mle._mle_apx_pivot`,
    written on a = c/n − q (the separable's own data) instead of on the counts. With Σ f = ``mass``
    the support equation Σ (a_v − s x)/(B + C x) = mass gives x = (Σa − mass·B)/(mass·p(1 − p) +
    (k − mass)·s); f is then Eq. 14 itself (the cancellation-free :func:`f_on_support` is written
    for mass 1, which keeps MLE-Apx's own numbers there)."""
    from ...methods.mle import denominator, f_on_support, polish_x
    from ...methods.threshold import top_support

    a, B, s, C, p, q = sep.a, sep.B, sep.s, sep.C, sep.p, sep.q

    def theta(S, k):  # a_v is in the support of the top set T iff a_v > s·x_T
        return s * ((S - mass * B) / denominator(k, p, s, mass))

    S, k, pool = top_support(a, theta)
    av = a if pool is None else a[pool]
    x = ((S - mass * B) / denominator(k, p, s, mass) if k
         else (float(np.max(av)) - mass * B) / denominator(1, p, s, mass))
    x = polish_x(av, B, s, p, x, mass)
    sup = av > s * x
    if not sup.any():
        sup = av == av.max()
    if mass == 1.0:
        fv = f_on_support(av + q, p, q, s, sup)
    else:
        fv = np.where(sup, np.maximum((av - s * x) / (B + C * x), 0.0), 0.0)
    if pool is None:
        f = fv
    else:
        f = np.zeros(a.shape[0])
        f[pool] = fv
    return f, float(x * (2.0 * B + C * x))
