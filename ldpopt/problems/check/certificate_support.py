""":func:`ldpopt.problems.certificate.certify` at large d: certify the support, summarise the rest.

A value v with f_v = l_v that the per-value argmin at its multiplier t_v = λ + (Aᵀy)_v also puts at
l_v (h_v'(l_v) + t_v ≥ 0, or l_v = u_v) adds exactly 0 to the duality gap (rows: its A_{:,v} l_v
moves to the right-hand side of the sub-problem), is not inside its
bounds (no stationarity term) and has slack 0 on its lower bound. What it does contribute is
summarised here in a few vectorised passes: Σ h_v(l_v) (to J and to the relative gap's scale),
Σ |l_v| (to the default feasibility tolerance's rounding term), its bound multipliers' sign and
complementarity, min μ_v (the distance bounds), and, for the argmin bound at the refined λ, its
rounding terms — or "moved" when the refined λ would take it off l_v, and then the caller
certifies in full. The values left are usually the support plus a few (a few hundred of 42,178 for
Zipf data), so the certificate costs ~10 passes over the domain instead of ~150. The full
computation is the reference (``tests/test_certificate_support.py``).
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

import numpy as np
import scipy.sparse as sp

from ..solvers.structured.grouped import groups_of
from ..solvers.structured.multipliers import bounds_from_dict, free_values
from ..solvers.structured.structure import Structure

if TYPE_CHECKING:
    from ..objectives.separable import Separable

__all__ = ["MIN_D", "Rest", "support_problem"]

MIN_D = 4096  # below this the full certificate is as fast
_EPS = np.finfo(float).eps


@dataclasses.dataclass
class Rest:
    """What the values left out contribute (see the module docstring). The arrays are full-length;
    ``left`` marks the values left out."""

    d: int              # the full domain size
    total: float        # the full Σ f = total
    abs_f: float        # Σ |l_v|
    h_sum: float        # Σ h_v(l_v)
    abs_h: float        # Σ |h_v(l_v)|
    dual_viol: float    # max wrong-sign bound multiplier among them
    comp: float         # max |multiplier × slack| among them
    mu_min: float       # min μ_v among the free ones (∞ if none)
    left: np.ndarray    # bool: left out
    l: np.ndarray       # lower bounds
    d1l: np.ndarray     # h_v'(l_v)
    u: np.ndarray       # upper bounds
    sep: Separable      # the separable (for h'' at l)
    d1_scale_l: np.ndarray  # the size of the terms of h_v'(l_v) (Separable.d1_scale)

    scale_max: float = np.inf  # max of d1_scale_l (NaN ignored): bounds every threshold below
    blocks: np.ndarray | None = None      # disjoint equality rows: each value's block in the full
    block_sign: np.ndarray | None = None  # problem and each row's sign (:mod:`.certificate_blocks`)

    def argmin_rounding(self, lam: float):
        """Their rounding terms in the argmin bound at λ (:func:`~.certificate.argmin_bound`), or
        None when some of them would leave l at λ. Decided exactly as the reference that tests every
        value (``tests/test_certificate_support.py``): g = h'(l) + λ is formed once, and only the
        values with g <= 8 eps (max scale + |λ|) — a bound on every value's threshold, float rounding
        being monotone — are tested in full (3 passes over the domain instead of ~12)."""
        with np.errstate(invalid="ignore"):
            g = np.broadcast_to(self.d1l + lam, self.left.shape)
            neg = np.flatnonzero(g < 0)
            if neg.size and self.left[neg].any():
                return None
            # λ may be per value (disjoint blocks, :mod:`.certificate_blocks`): its largest |λ_v|
            # bounds every value's threshold
            lam_abs = np.abs(lam)
            thr = 8 * _EPS * (self.scale_max + float(np.max(lam_abs, initial=0.0)))
            cand = np.flatnonzero(g <= thr) if not np.isnan(thr) else np.arange(g.size)
        if not cand.size:
            return np.zeros(0)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            gc = g[cand]
            scale = np.broadcast_to(self.d1_scale_l, g.shape)[cand] + np.broadcast_to(lam_abs, g.shape)[cand]
            near = self.left[cand] & (self.l[cand] < self.u[cand]) & (np.abs(gc) <= 8 * _EPS * scale)
        if not near.any():
            return np.zeros(0)
        cand, scale = cand[near], scale[near]
        lv = self.l[cand]
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            d2 = np.broadcast_to(self.sep.restrict(cand).d2(lv), lv.shape)
            return 8 * _EPS * (2.0 * np.abs(lv) + scale / d2)


class _AtLower:
    """The f-independent terms at the lower bounds: h'(l), h(l), Σ h(l), Σ |h(l)|, min μ over the free
    values, Σ l, Σ |l| and the d1 scale at l. Kept on the separable (``_at_lower``) for the structure
    it was computed for, so that certifying several points of one problem (``ldpopt verify`` certifies
    four weighted-MLE closed forms per instance) pays these full passes once."""

    def __init__(self, sep, st, group: bool = True):
        grp = _groups(sep, st) if group else None
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            self.free = free_values(st)
            if self.free is True:
                self.free = np.ones(st.d, bool)
            if grp is None:
                self.d1l = sep.d1(st.l)
                self.hl = np.broadcast_to(sep.value(st.l), (st.d,))
                mu = np.broadcast_to(sep.mu(st.l, st.u), (st.d,))
                self.d1_scale_l = sep.d1_scale(st.l)
            else:  # once per group of equal values, gathered: the same numbers (see _groups)
                rep, inv, k = grp
                lr, ur = np.broadcast_to(st.l[0], (k,)), np.broadcast_to(st.u[0], (k,))
                self.d1l = np.broadcast_to(rep.d1(lr), (k,))[inv]
                self.hl = np.broadcast_to(rep.value(lr), (k,))[inv]
                mu = np.broadcast_to(rep.mu(lr, ur), (k,))  # min over the groups = min over the values
                self.d1_scale_l = np.broadcast_to(rep.d1_scale(lr), (k,))[inv]
            self.h_sum = float(np.sum(self.hl))
            self.abs_h = float(np.sum(np.abs(self.hl)))
            self.mu_min = float(np.min(mu if self.free.all() else np.where(self.free, mu, np.inf), initial=np.inf))
            sc = np.asarray(self.d1_scale_l, float)
            self.scale_max = float(np.max(sc, initial=-np.inf, where=~np.isnan(sc)))
        self.has_l = bool(st.l.any())
        self.lsum = float(np.sum(st.l)) if self.has_l else 0.0
        self.abs_l = float(np.sum(np.abs(st.l))) if self.has_l else 0.0


GROUP_MIN_D = 1 << 17  # below this the grouping's own passes cost about what it saves


def _groups(sep, st):
    """(the separable on one representative value per group, inverse, number of groups): the
    distinct-count groups of ``sep`` (:func:`.structured.grouped.groups_of`, which checks that every
    per-value array is a function of the count) when the bounds are one constant pair (the plain
    simplex), d ≥ ``GROUP_MIN_D`` and there are at most d/8 groups; else None.

    The likelihoods' and the weighted MLE's h, h', h'', μ and d1 scale at l are elementwise functions
    of (c_v, l_v, u_v) and scalars: evaluated once per distinct count and gathered, they are the
    same operations on the same operands, so the same floats (as EM's dual in
    :mod:`ldpopt.methods.distinct`; ``tests/test_certificate_support.py`` compares bit for bit).
    At d = 10⁷ the counts take a few hundred to a few thousand values, and the terms cost ~30 passes
    over the domain each (log, cbrt) against ~8 for the grouping."""
    if st.d < GROUP_MIN_D or st.l.strides != (0,) or st.u.strides != (0,) or not st.l[0] < st.u[0]:
        return None
    g = groups_of(sep)
    if g is None or g.k > st.d // 8:
        return None
    return g.rep, g.inv, g.k


def _at_lower(sep, st) -> _AtLower:
    cached = getattr(sep, "_at_lower", None)
    if cached is not None and cached[0] is st:
        return cached[1]
    out = _AtLower(sep, st)
    sep._at_lower = (st, out)
    return out


def support_problem(sep, st, f, lam, y, duals):
    """The values off their lower bound as a problem of their own: (separable, Structure and f on
    them, their bound multipliers or None, :class:`Rest`, the per-value multiplier t), or None when
    that does not apply (small d, most values off l, ...). :func:`.certificate.certify_on_support`
    certifies it."""
    d = st.d
    if d < MIN_D or lam is None or not np.isfinite(lam) or not hasattr(sep, "restrict"):
        return None
    f = np.asarray(f, float)
    if f.shape != (d,):
        return None
    # with rows each value's multiplier is t_v = λ + (Aᵀy)_v; a value left out at l adds 0 to the
    # rows' residuals beyond A_{:,left} l, which moves to the right-hand side of the sub-problem
    t = lam + st.A.T @ np.asarray(y, float) if st.m else lam
    low = _at_lower(sep, st)
    d1l, free = low.d1l, low.free
    with np.errstate(divide="ignore", invalid="ignore"):
        # left out: f at l and the argmin at t at l too (NaN counts as l, as in Separable.argmin)
        left = (f == st.l) & (~(d1l + t < 0) | ~free)
    idx = np.flatnonzero(~left)
    if idx.size == 0 or idx.size > d // 4:
        return None
    sub = sep.restrict(idx)
    if sub is None:
        return None
    # Aggregates over the values left out, as whole-array reductions minus the few values kept
    # (masked reductions cost several passes each). Where the sub-certificate takes the max/min over
    # the kept values anyway, the whole array's max/min gives the same combined number.
    if duals is not None:
        ylo, yup = bounds_from_dict(st, duals)
        bounds = (ylo[idx], yup[idx])
        with np.errstate(invalid="ignore"):
            # max(−y, initial 0) as 0 − min(y, initial 0): the same number (NaN too), no negated copy
            dual_viol = max(0.0 - float(np.min(ylo, initial=0.0)), 0.0 - float(np.min(yup, initial=0.0)))
            comp = 0.0 if not yup.any() else float(np.max(
                np.abs(yup * np.where(np.isfinite(st.u), st.u - st.l, 0.0)), where=left, initial=0.0))
    else:  # bound_multipliers: y^lo = r = h'(l) + λ ≥ 0 at the lower bound of a free value, y^up = 0
        bounds, comp = None, 0.0
        with np.errstate(invalid="ignore"):
            dual_viol = float(np.max(-(d1l + t), where=left & free, initial=0.0))
    with np.errstate(invalid="ignore", over="ignore"):
        h_sum = low.h_sum - float(np.sum(low.hl[idx]))
        abs_h = low.abs_h - float(np.sum(np.abs(low.hl[idx])))
    if low.has_l:
        lsum = low.lsum - float(np.sum(st.l[idx]))
        abs_l = low.abs_l - float(np.sum(np.abs(st.l[idx])))
    else:
        lsum = abs_l = 0.0
    rest = Rest(d, st.total, abs_l, h_sum, abs_h, dual_viol, comp, low.mu_min, left, st.l, d1l, st.u, sep,
                low.d1_scale_l, low.scale_max)
    if st.m:
        from .certificate_blocks import block_rows
        full = block_rows(st)  # disjointness is a property of the full rows, not of the kept columns
        if full is not None:
            rest.blocks, rest.block_sign = full[0], full[1]
        A_sub = st.A[:, idx].tocsr()
        b_sub = st.b - (st.A @ np.where(left, st.l, 0.0) if low.has_l else 0.0)
    else:
        A_sub, b_sub = sp.csr_matrix((0, idx.size)), st.b
    sub_st = Structure(idx.size, st.l[idx], st.u[idx], st.total - lsum, A_sub, b_sub, st.ineq, st.sum_name, {},
                       st.implied_upper[idx], sum_free=st.sum_free)
    return sub, sub_st, f[idx], bounds, rest, t
