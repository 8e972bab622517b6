"""Optimality certificates without a solver: (objective, constraints, estimate, f, multipliers) →
primal feasibility, dual feasibility, duality gap and a bound on ‖f − f*‖.

For a separable objective J(f) = Σ_v h_v(f_v) (every built-in smooth objective, see
:mod:`ldpopt.problems.objectives.separable`) and the linear constraints of
:mod:`ldpopt.problems.solvers.structured.structure` (box l ≤ f ≤ u, Σ f = total with multiplier λ, rows
A f = b / A f ≤ b with y), the Lagrangian dual of the rows is a sum of per-value conjugates,

    g(λ, y) = Σ_v min_{l_v ≤ x ≤ u_v} [h_v(x) + t_v x] − λ·total − b·y,    t = λ1 + Aᵀy,

evaluated *exactly* through the closed-form per-value argmin. For any λ and y ≥ 0 on the ≤-rows,
g(λ, y) ≤ J* (weak duality), so for a feasible f

    gap = J(f) − g(λ, y) ≥ J(f) − J* ≥ Σ_v (μ_v/2)(f_v − f*_v)²,

μ_v = min_{[l_v, u_v]} h_v'' (first-order optimality of f* on the convex feasible set). Bounds
reported: ``distance_linf`` = max_v √(2·gap/μ_v) (each term of the sum is at most gap) and
``distance_l2`` = √(2·gap/min_v μ_v); ∞ when some μ_v = 0 (e.g. a multinomial value with no
reports), NaN when f is not feasible to ``feas_tol`` (the inequality needs f feasible). The gap used
in the bounds is max(gap, rounding floor), the floor being 16·eps·(Σ_{v: f_v ≠ fz_v} |h_v(f_v)| + |t_v f_v|)
plus the rounding of the linear term: the gap is summed per value as
Σ_v [h_v(f_v) − h_v(fz_v) + t_v(f_v − fz_v)] − λ(Σf − total) − y·(A f − b), fz the per-value argmin at
(λ, y), so values where f and fz agree add exactly 0 (the likelihoods' large constant parts cancel).

Where J is flat in some values (μ_v = 0: a multinomial value with no reports) the optimum need not
be unique: ``flat_values`` counts them and ``distance_nonflat`` = max over the others of √(2·gap/μ_v)
bounds |f_v − f*_v| there for *every* minimiser f* (the inequality above holds at each of them), so a
feasible f with a gap at rounding level is *an* optimum, all optima agreeing with it on those values.

A second, linear bound when there are no rows (Σ f = total and per-value bounds only — Norm-Sub,
MLE-Apx, EM, PowerNS): x(λ) = argmin over the box of Σ_v h_v + λ·Σf is the exact optimum of the
same problem with total mass m(λ) = Σ x(λ), and every x_v(λ) is non-increasing in λ, so moving the
mass from m(λ) to total moves every coordinate the same way by at most |m(λ) − total| in all:

    ‖f − f*‖_∞ ≤ max_v |f_v − x_v(λ)| + |m(λ) − total|        (any λ; f need not be feasible)

(``distance_argmin``; with disjoint equality subset sums the same bound block by block,
:mod:`.certificate_blocks`; λ refined from the given/recovered one by ≤ 5 Newton steps on
m(λ) = total, slope Σ 1/h_v'' over values inside their bounds). It is linear in the error, where √(2·gap/μ) is
quadratic — the square root of the gap's rounding floor is ~1e-8 at d = 42,178, this one's rounding
~1e-13 — so it is what resolves errors of 1e-4/d. ``distance_linf`` is the one of the two
bounds that resolves f* best (smaller max(bound, its rounding level)), and ``distance_rounding``
is the float64 rounding level of the one taken: for the argmin
bound Σ_v e_v + max_v e_v, e_v = 8·eps·(|f_v| + |x_v| + (s_v + |λ|)/h_v''(x_v)) over values inside
their bounds or within rounding of a bound's switch, s_v the size of the terms h_v' is computed from
(:meth:`~ldpopt.problems.objectives.separable.Separable.d1_scale`); for √(2·gap/μ) the same bound at
gap = 4× its floor, and never below the argmin rounding level at the given multipliers (the same
Σ_v e_v + max_v e_v with x = fz: f is that argmin to rounding, so a gap of exactly 0 does not mean
f = f*). (This was ``ldpopt.verify``'s own certificate, merged here.)

Where the multipliers are not given they are recovered from f
(:func:`.certificate_multipliers.recover_multipliers`, derived there from the KKT conditions): the
least-squares fit of stationarity h_v'(f_v) + t_v = 0 on the values inside their explicit bounds (a
value at the bound f_v ≤ total implied by the simplex is inside: that bound has no multiplier) — for
Norm-Sub that is λ = 2τ, τ the common shift, for MLE-Apx λ = −h'(f_v) on the support (the x of
Eq. 14), for PowerNS the projection's shift — and where every value sits at a bound, the interval of
λ the bound conditions allow, or a small LP on the active set. So any closed form can be certified
with no solver.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import numpy as np
import scipy.sparse as sp

from ..objectives.builtins import Objective, make_objective
from ..objectives.separable import Separable, separable_for
from ..solvers.structured.multipliers import bound_multipliers, bounds_from_dict, duals_dict, multipliers_from_dict
from ..solvers.structured.structure import Structure, compile_constraints
from .certificate_blocks import argmin_rounding, block_argmin_bound, blocks_for, feasible_near_blocks, project_on_rows
from .certificate_multipliers import recover_multipliers
from .certificate_support import support_problem

__all__ = ["Certificate", "argmin_bound", "certificate", "certify", "recover_multipliers"]

_EPS = np.finfo(float).eps


@dataclass
class Certificate:
    """What :func:`certificate` found. Units: frequency units for violations and distances, the
    objective's units (J of :mod:`ldpopt.problems.objectives.builtins`) for values and the gap.

    Made by :func:`certificate`; each parameter is an attribute of the same name (the comments in
    the class body say what each holds).

    Parameters
    ----------
    primal_violation, violations, dual_violation, complementarity, stationarity : float, dict
        The KKT residuals (``violations`` per kind: ``"bounds"``, ``"sum"``, ``"rows"``).
    primal_value, dual_value, gap, gap_floor, relative_gap : float
        J(f), the dual's lower bound g on J*, their difference and its rounding level.
    distance_linf, distance_l2 : float
        Bounds on ‖f − f*‖∞ and ‖f − f*‖₂ (module docstring).
    feas_tol : float
        The primal tolerance used.
    multipliers : dict, default {}
        The multipliers certified.
    note : str, default ""
        What was assumed or left out.
    distance_argmin, distance_rounding, multiplier_refined, flat_values, distance_nonflat
        The refinements of the distance bound (module docstring).

    Examples
    --------
    >>> import numpy as np
    >>> import ldpopt
    >>> est = ldpopt.oracles.get("grr", 1.0, 4).estimate(np.array([46_000, 30_000, 15_000, 9_000]), 100_000)
    >>> from ldpopt.problems import certificate
    >>> cert = certificate("cls", None, est, ldpopt.postprocess(est, "norm-sub"))
    >>> cert.feasible, cert.passes(1e-6), cert.distance_linf < 1e-9
    (True, True, True)
    """

    primal_violation: float       # max constraint violation (bounds, Σ, rows)
    violations: dict              # per kind: "bounds", "sum", "rows"
    dual_violation: float         # max wrong-sign inequality / bound multiplier
    complementarity: float        # max |multiplier × slack| (frequency × objective units)
    stationarity: float           # max |h_v'(f_v) + t_v|/h_v''(f_v) on interior values (frequency units) / total
    primal_value: float           # J(f)
    dual_value: float             # g(λ, y), a lower bound on J*
    gap: float                    # J(f) − g
    gap_floor: float              # rounding level of the gap
    relative_gap: float           # gap / (Σ|h_v(f_v)| + |λ|·total)
    distance_linf: float          # bound on max_v |f_v − f*_v| (see module docstring)
    distance_l2: float            # bound on ‖f − f*‖₂
    feas_tol: float
    multipliers: dict = field(default_factory=dict)
    note: str = ""
    distance_argmin: float = np.nan   # linear bound (no rows only; see module docstring)
    distance_rounding: float = np.nan  # float64 rounding level of distance_linf
    multiplier_refined: float = np.nan  # λ at which the argmin bound was taken
    flat_values: int = 0               # values where J is flat (μ_v = 0, e.g. a multinomial value with no reports)
    distance_nonflat: float = np.nan   # max over the other values of √(2·gap/μ_v) (+ its rounding level): ≥ |f_v − f*_v| for every optimum f*

    @property
    def feasible(self) -> bool:
        """Whether the primal violation is within ``feas_tol``.

        Examples
        --------
        >>> import numpy as np
        >>> import ldpopt
        >>> est = ldpopt.oracles.get("grr", 1.0, 4).estimate(np.array([46_000, 30_000, 15_000, 9_000]), 100_000)
        >>> from ldpopt.problems import certificate
        >>> certificate("cls", None, est, np.array([0.7, 0.3, 0.0, 0.0])).feasible
        True
        """
        return bool(self.primal_violation <= self.feas_tol)

    def passes(self, distance_tol: float) -> bool:
        """Feasible, dual-feasible (to ``feas_tol`` in the multipliers' scale) and f within
        ``distance_tol`` of the optimum (in frequency units, max norm).

        Parameters
        ----------
        distance_tol : float
            The largest ‖f − f*‖∞ accepted.

        Returns
        -------
        bool

        Examples
        --------
        >>> import numpy as np
        >>> import ldpopt
        >>> est = ldpopt.oracles.get("grr", 1.0, 4).estimate(np.array([46_000, 30_000, 15_000, 9_000]), 100_000)
        >>> from ldpopt.problems import certificate
        >>> cert = certificate("cls", None, est, np.array([0.7, 0.3, 0.0, 0.0]))   # Norm-Sub gives 0.766, 0.234
        >>> cert.passes(1e-6), round(cert.distance_linf, 4)
        (False, 0.0662)
        """
        return bool(self.feasible and self.distance_linf <= distance_tol)

    def as_dict(self) -> dict:
        """The residuals, values, gap and distances as a plain dict (for reports and JSON).

        Returns
        -------
        dict

        Examples
        --------
        >>> import numpy as np
        >>> import ldpopt
        >>> est = ldpopt.oracles.get("grr", 1.0, 4).estimate(np.array([46_000, 30_000, 15_000, 9_000]), 100_000)
        >>> from ldpopt.problems import certificate
        >>> d = certificate("cls", None, est, ldpopt.postprocess(est, "norm-sub")).as_dict()
        >>> sorted(d)[:4]
        ['complementarity', 'distance_argmin', 'distance_l2', 'distance_linf']
        """
        return {k: getattr(self, k) for k in ("primal_violation", "violations", "dual_violation",
                                              "complementarity", "stationarity", "primal_value",
                                              "dual_value", "gap", "gap_floor", "relative_gap",
                                              "distance_linf", "distance_l2", "feas_tol", "distance_argmin",
                                              "distance_rounding", "multiplier_refined", "note")}


def argmin_bound(sep: Separable, st: Structure, f, lam: float, newton: int = 5, rest=None):
    """(bound, rounding, λ): the linear ℓ∞ bound of the module docstring (no rows only): the
    block-wise bound of :mod:`.certificate_blocks` with the pool as the one block. With ``rest``
    (values left out at their lower bound, :mod:`.certificate_support`): bound NaN when the refined
    λ would move one of them."""
    pool = (np.zeros(st.d, np.intp), np.zeros(0), np.zeros(0))
    return block_argmin_bound(sep, st, f, lam, np.zeros(0), pool, newton, rest)


def certify(sep: Separable, st: Structure, f, lam, y, duals: dict | None = None,
            feas_tol: float | None = None, *, with_multipliers: bool = True) -> Certificate:
    """The certificate for the compiled problem (the solver calls this directly).

    At large d the values that sit at their lower bound both in f and in the argmin at
    λ are summarised in a few vectorised passes and the rest is certified as a problem of its own
    (:mod:`.certificate_support`: the same numbers, to rounding, in a fraction of the time; there,
    ``with_multipliers=False`` leaves ``Certificate.multipliers`` empty instead of building them)."""
    out = certify_on_support(sep, st, f, lam, y, duals, feas_tol, with_multipliers)
    if out is None:
        out = _certify_full(sep, st, f, lam, y, duals, feas_tol)
        assert out is not None  # None only with values left out (rest)
    return out


def certify_on_support(sep: Separable, st: Structure, f, lam, y, duals: dict | None, feas_tol: float | None,
                       with_multipliers: bool = True) -> Certificate | None:
    """The certificate of :func:`certify`, computed on the values off their lower bound
    (:func:`.certificate_support.support_problem`); None when that does not apply.
    ``with_multipliers=False``: leave ``multipliers`` empty instead of building the full-length
    bound-multiplier arrays (two more passes; ``ldpopt verify`` reads the numbers only)."""
    split = support_problem(sep, st, f, lam, y, duals)
    if split is None:
        return None
    sub, sub_st, f_sub, bounds, rest, t = split
    cert = _certify_full(sub, sub_st, f_sub, lam, y, duals, feas_tol, bounds=bounds, rest=rest)
    if cert is None:
        return None
    if duals is None and with_multipliers:  # the multipliers of the whole problem, from r = h'(f) + λ
        with np.errstate(divide="ignore", invalid="ignore"):
            r = sep.d1(np.asarray(f, float)) + t
        cert = dataclasses.replace(cert, multipliers=duals_dict(st, np.asarray(f, float), lam, y, r))
    elif duals is None:
        cert = dataclasses.replace(cert, multipliers={})
    return cert


def _certify_full(sep: Separable, st: Structure, f, lam, y, duals: dict | None = None,
                  feas_tol: float | None = None, *, bounds=None, rest=None) -> Certificate | None:
    """:func:`certify` on all of ``st``; ``bounds`` = (y^lo, y^up) given, ``rest`` the summary of
    the values left out (:class:`.certificate_support.Rest`; None: nothing left out). None (with
    ``rest`` only) when the refined λ would move a value left out."""
    f = np.asarray(f, float)
    d = st.d
    d_full, total_full = (d, st.total) if rest is None else (rest.d, rest.total)
    if f.shape != (st.d,):
        raise ValueError(f"f must have shape ({st.d},), got {f.shape}")
    y = np.asarray(y, float).copy()
    if feas_tol is None:
        # 1e-9 of the frequency scale total/d, but not below the rounding of Σ f (≈ 1e-14 at d = 1e7)
        # nor below the rounding of the per-value argmins themselves: f_v is formed from terms of
        # size |f_v| and |t_v|/h_v'' (e.g. f̃_v − λ/2 for cls), which at huge noise (ε = 0.01, n = 10:
        # |f̃| ~ 10³) exceed the frequencies by orders of magnitude
        t_ = np.broadcast_to(lam + (st.A.T @ y if st.m else 0.0), (d,))
        inner_ = (f > st.l) & (f < st.u)
        with np.errstate(divide="ignore", invalid="ignore"):
            terms = np.abs(t_[inner_]) / sep.d2(f)[inner_]
        terms = terms[np.isfinite(terms)]
        abs_f = float(np.sum(np.abs(f))) + (0.0 if rest is None else rest.abs_f)
        rounding = 4 * _EPS * (abs_f + float(np.sum(terms)))
        feas_tol = max(max(1e-9 / d_full, 1e-14) * max(total_full, 1.0), rounding)
    dual_viol = float(np.max(np.maximum(-y[st.ineq], 0.0), initial=0.0))
    y_dual = y.copy()
    y_dual[st.ineq] = np.maximum(y_dual[st.ineq], 0.0)  # a valid dual point
    # primal feasibility (the implied upper bound is not a constraint of its own)
    u_real = st.u if st.implied_upper is None else np.where(st.implied_upper, np.inf, st.u)
    with np.errstate(invalid="ignore"):
        vb = float(np.max(np.maximum(st.l - f, f - u_real), initial=0.0))
    vs = 0.0 if st.sum_free else abs(float(np.sum(f)) - st.total)  # a tree's total is one of its rows
    res = st.A @ f - st.b if st.m else np.zeros(0)
    vr = float(np.max(np.where(st.ineq, np.maximum(res, 0.0), np.abs(res)), initial=0.0))
    if not np.all(np.isfinite(f)):
        vb = np.inf
    viol = max(vb, vs, vr)
    abs_f_all = float(np.sum(np.abs(f))) + (0.0 if rest is None else rest.abs_f)
    # dual function at (λ, y⁺) through the per-value argmin
    t = lam + (st.A.T @ y_dual if st.m else 0.0)
    fz = sep.argmin(t, st.l, st.u)
    hv = sep.value(f)
    J = float(np.sum(hv)) + (0.0 if rest is None else rest.h_sum)
    # gap = J(f) − g = Σ_v e_v − [λ(Σf − total) + y·(A f − b)],  e_v = h_v(f_v) − h_v(fz_v) + t_v(f_v − fz_v)
    # ≥ 0 (fz_v minimises h_v + t_v·x on [l_v, u_v]). Summed per value, so that values where f and
    # fz agree contribute exactly 0 and the large constant parts of the likelihoods cancel exactly.
    diff = f != fz
    tv = np.broadcast_to(t, (d,))
    hz = sep.value(fz)
    e = np.where(diff, (hv - hz) + tv * (f - fz), 0.0)
    lin = (0.0 if st.sum_free else lam * (float(np.sum(f)) - st.total)) + (float(y_dual @ res) if st.m else 0.0)
    gap = float(np.sum(e)) - lin
    scale = float(np.sum(np.abs(hv[diff]))) + float(np.sum(np.abs(tv[diff] * f[diff]))) + abs(lin)
    floor = 16 * _EPS * scale
    g_val = J - gap  # = g(λ, y⁺), computed through the per-value sum above
    rel_scale = float(np.sum(np.abs(hv))) + abs(lam) * total_full
    if st.sum_free:  # a tree: no λ·total; the rows' linear terms Σ|t_v f_v| play its part
        rel_scale += float(np.sum(np.abs(tv * f)))
    if rest is not None:
        rel_scale += rest.abs_h
    # stationarity and complementarity at f
    with np.errstate(divide="ignore", invalid="ignore"):
        r = sep.d1(f) + t
    inner = (f > st.l) & (f < st.u)
    # in frequency units: |r_v|/h_v''(f_v) is the change of f_v that would restore stationarity (a
    # Newton step); relative to the total mass. Scale-free where the gradients themselves are ~0.
    with np.errstate(divide="ignore", invalid="ignore"):
        h2 = sep.d2(f)[inner]
        ri = np.abs(r[inner])
        # where h is flat (h'' = 0, e.g. a multinomial value with no reports) stationarity is r = 0
        flat_ok = ri <= 1e-12 * max(float(np.max(np.abs(t), initial=0.0)), 1e-300)
        corr = np.where(h2 > 0, ri / np.where(h2 > 0, h2, 1.0), np.where(flat_ok, 0.0, np.inf))
    corr = np.where(np.isnan(corr), np.inf, corr)
    stat = float(np.max(corr, initial=0.0)) / max(total_full, 1e-300)
    if bounds is not None:
        ylo, yup = bounds
    elif duals is not None:
        ylo, yup = bounds_from_dict(st, duals)
    else:
        ylo, yup = bound_multipliers(st, f, r)
    dual_viol = max(dual_viol, float(np.max(np.maximum(-ylo, 0.0), initial=0.0)),
                    float(np.max(np.maximum(-yup, 0.0), initial=0.0)))
    comp = max(float(np.max(np.abs(ylo * (f - st.l)), initial=0.0)),
               float(np.max(np.abs(yup * np.where(np.isfinite(st.u), st.u - f, 0.0)), initial=0.0)),
               float(np.max(np.abs(np.where(st.ineq, y_dual * res, 0.0)), initial=0.0)))
    if rest is not None:
        dual_viol, comp = max(dual_viol, rest.dual_viol), max(comp, rest.comp)
    mu = sep.mu(st.l, st.u)
    mu = np.where(st.l < st.u, mu, np.inf)  # fixed values cannot move
    if rest is not None:
        mu = np.append(mu, rest.mu_min)
    gb = max(gap, floor)
    flat = (mu == 0) & bool(sep.mu_exact)  # a declared modulus of 0 says "unknown", not "flat"
    n_flat = int(np.count_nonzero(flat))
    dnf = np.nan
    if n_flat and not viol > feas_tol:  # J(f) − J* ≥ Σ_{μ_v > 0} μ_v (f_v − f*_v)²/2 for any minimiser f*
        # plus the bound's rounding level on those values (the same bound at gap = 4× its floor)
        dnf = float(np.max(np.sqrt(2.0 * gb / mu[~flat]), initial=0.0)
                    + np.max(np.sqrt(8.0 * floor / mu[~flat]), initial=0.0))
    note = "bound from strong convexity: Σ μ_v (f_v − f*_v)²/2 ≤ gap, μ_v = min h_v'' on [l_v, u_v]"
    # J(f) − J* ≥ Σ μ_v (f_v − f*_v)²/2 needs f feasible: how far f is off its constraints beyond the
    # rounding of evaluating them (decided below, once the bound's own rounding level is known)
    off = max(vb, vs - 2 * d_full * _EPS * (abs_f_all + abs(st.total)),
              vr - 2 * _EPS * float(np.max(np.abs(st.A) @ np.abs(f) + np.abs(st.b), initial=0.0)) * max(d, 1)
              if st.m else 0.0)
    if viol > feas_tol:
        dl = dl2 = np.nan
        note = "f is infeasible beyond feas_tol: no distance bound (the gap bounds J(f) − J* only for feasible f)"
    else:
        with np.errstate(divide="ignore"):
            dl = float(np.max(np.sqrt(2.0 * gb / np.where(mu > 0, mu, 0.0 if gb > 0 else 1.0)), initial=0.0))
            mmin = float(np.min(mu))
            dl2 = float(np.sqrt(2.0 * gb / mmin)) if mmin > 0 else np.inf
        if not np.isfinite(dl):
            note += "; some μ_v = 0 (objective not strongly convex in those values): no bound there"
    # rounding level of the √ bound: the same bound at gap = 4× its floor (the solver's own test)
    with np.errstate(divide="ignore"):
        drnd = float(np.max(np.sqrt(8.0 * floor / np.where(mu > 0, mu, 0.0 if floor > 0 else 1.0)), initial=0.0))
    # nor below the rounding of the point itself: f is (to rounding) the per-value argmin at the
    # multipliers, so its entries carry that argmin's rounding, which the gap cannot see where f and
    # fz agree exactly (then gap and floor are ~0 while f* differs from f in the last bits)
    e_pt = argmin_rounding(sep, st, f, fz, tv)
    drnd = max(drnd, float(np.sum(e_pt) + np.max(e_pt, initial=0.0)))
    if off > 0 and not viol > feas_tol:
        # a point off its constraints (within feas_tol): the gap bounds J(f) − J* only for a feasible
        # point. With a feasible f̂ made from f (rescaled per block: :func:`.certificate_blocks.
        # feasible_near_blocks`; else projected on the rows: .certificate_blocks.project_on_rows), the
        # gap at f̂ against the same dual value g(λ, y) bounds J(f̂) − J*,
        # so ‖f − f*‖ ≤ ‖f − f̂‖ + √(2·gap(f̂)/μ) — no term dropped (an interior-point answer 2e-10
        # off Σ f = 1 with a gap at rounding level had a bound 7,700× below its distance without f̂).
        # No f̂ (the projection leaves a bound): no √ bound (the argmin bound below may still apply)
        fh = feasible_near_blocks(st, f) if not st.sum_free else None
        if fh is None:  # other rows or bounds: a least-squares projection on the rows (Σ f = total among them)
            if st.sum_free:
                rows_all, b_all, ineq_all = st.A, st.b, st.ineq
            else:
                rows_all = sp.vstack([sp.csr_matrix(np.ones((1, d))), st.A], format="csr")
                b_all, ineq_all = np.r_[st.total, st.b], np.r_[False, st.ineq]
            fh = project_on_rows(f, rows_all, b_all, ineq_all, st.l, u_real)
        if fh is None:
            dl = dl2 = np.nan
            note += (f"; f is off its constraints by {viol:.1e} and no feasible point near it is made (a "
                     "projection on the rows leaves a bound): no bound from the gap")
        elif fh is not f:  # (f itself: on its constraints to the rounding that rule allows)
            with np.errstate(all="ignore"):
                hh = sep.value(fh)
                dh = fh != fz
                eh = np.where(dh, (hh - hz) + tv * (fh - fz), 0.0)
                res_h = st.A @ fh - st.b if st.m else np.zeros(0)
                lin_h = ((0.0 if st.sum_free else lam * (float(np.sum(fh)) - st.total))
                         + (float(y_dual @ res_h) if st.m else 0.0))
                gap_h = float(np.sum(eh)) - lin_h
                floor_h = 16 * _EPS * (float(np.sum(np.abs(hh[dh]))) + float(np.sum(np.abs(tv[dh] * fh[dh])))
                                       + abs(lin_h))
                gbh = max(gap_h, floor_h)
                shift_inf = float(np.max(np.abs(f - fh)))
                shift_2 = float(np.linalg.norm(f - fh))
                dl = float(np.max(np.sqrt(2.0 * gbh / np.where(mu > 0, mu, 0.0)), initial=0.0)) + shift_inf
                mmin = float(np.min(mu))
                dl2 = float(np.sqrt(2.0 * gbh / mmin)) + shift_2 if mmin > 0 else np.inf
            if not np.isfinite(gap_h):
                dl = dl2 = np.nan
            note += (f"; f is off its constraints by {viol:.1e}: the gap is taken at a feasible f̂ made from "
                     f"f and ‖f − f̂‖∞ = {shift_inf:.1e} is added")
    da, arnd, lam_r = np.nan, np.nan, np.nan
    blk = blocks_for(st, rest) if st.m and np.isfinite(lam) else None
    if (st.m == 0 or blk is not None) and np.isfinite(lam):
        da, arnd, lam_r = (argmin_bound(sep, st, f, float(lam), rest=rest) if blk is None
                           else block_argmin_bound(sep, st, f, float(lam), y, blk, rest=rest))
        if not np.isfinite(da) and rest is not None:
            return None  # the refined λ moves a value left out: the caller certifies in full
        # no bound resolves f* below the rounding of the per-value argmins themselves (when f equals
        # them exactly the gap and its floor are both 0)
        drnd = max(drnd, arnd)
        # both bounds are rigorous; report the one that resolves f* best, i.e. with the smaller
        # max(bound, its rounding level) (the argmin one also when f is infeasible: dl is NaN)
        def resolved(b, r):
            return max(b, r) if np.isfinite(b) else np.inf
        use_arg = resolved(da, arnd) <= resolved(dl, drnd)
        pick = (da, arnd) if use_arg else (dl, drnd)
        if use_arg:
            note += "; distance_linf from the argmin bound (linear in the error)"
        dl, drnd = pick
    return Certificate(viol, {"bounds": vb, "sum": vs, "rows": vr}, dual_viol, comp, stat, J, g_val, gap, floor,
                       gap / max(rel_scale, 1e-300), dl, dl2, feas_tol,
                       duals if duals is not None else duals_dict(st, f, lam, y, r), note,
                       distance_argmin=da, distance_rounding=drnd, multiplier_refined=lam_r,
                       flat_values=n_flat, distance_nonflat=dnf)


def certificate(objective, constraints, estimate, f, multipliers: dict | None = None, *,
                mean=None, variance=None, feas_tol: float | None = None) -> Certificate:
    """Certify ``f`` for ``Problem(estimate, objective, constraints)`` without a solver.

    ``objective``: a name (``"cls"``, ``"weighted-mle"``, ``"multinomial"``, ``"binomial"``,
    ``"posterior"`` with ``mean``/``variance``) or an Objective. ``constraints``: None (the simplex)
    or a list as for :class:`~ldpopt.problems.Problem` (built-in constraint classes only).
    ``multipliers``: a ``Solution.duals``-style dict (needs the Σ multiplier and the rows'), or None
    to recover them from f by :func:`recover_multipliers`. ``feas_tol``: primal tolerance in
    frequency units (default max(1e-9/d, 1e-14)·total, or the rounding level of the argmins if larger). Raises
    :class:`~ldpopt.problems.solvers.structured.NotApplicable` outside that class.

    Parameters
    ----------
    objective : str or Objective
        A smooth separable objective.
    constraints : list or None
        As for :class:`~ldpopt.problems.Problem` (built-in constraint classes only); None: the simplex.
    estimate : Estimate
        The raw estimate.
    f : array_like (d,)
        The point to certify.
    multipliers : dict or None, default None
        ``Solution.duals``-style multipliers; None: recovered from f.
    mean, variance : array_like or None, default None
        For ``objective="posterior"``.
    feas_tol : float or None, default None
        The primal tolerance (frequency units); None: the default above.

    Returns
    -------
    Certificate

    Raises
    ------
    NotApplicable
        An objective that is not smooth and separable, or a constraint the structured solver does
        not cover (a user callable).

    Examples
    --------
    >>> import numpy as np
    >>> import ldpopt
    >>> est = ldpopt.oracles.get("grr", 1.0, 4).estimate(np.array([46_000, 30_000, 15_000, 9_000]), 100_000)
    >>> from ldpopt.problems import certificate
    >>> cert = certificate("cls", None, est, ldpopt.postprocess(est, "norm-sub"))   # Norm-Sub is CLS on the simplex
    >>> cert.passes(1e-9), cert.gap <= 1e-12
    (True, True)
    """
    obj = objective if isinstance(objective, Objective) else make_objective(objective, mean=mean, variance=variance)
    sep = separable_for(obj, estimate)
    st = compile_constraints(constraints, estimate.d)
    f = np.asarray(f, float)
    if multipliers is None:
        lam, y = recover_multipliers(sep, st, f)
        return certify(sep, st, f, lam, y, None, feas_tol)
    lam, y = multipliers_from_dict(st, multipliers)
    return certify(sep, st, f, lam, y, multipliers, feas_tol)
