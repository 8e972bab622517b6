"""ldpopt's optimality certificate without a solver: (objective, constraints, estimate, f, multipliers) →
primal feasibility, dual feasibility, duality gap and bounds on ‖f − f*‖; the multipliers recovered
from f where none are given, the linear argmin bound block by block, and the support sub-problem at
large d. Derivations: docs/problems.md, "The certificate".

The same duality-gap idea for objectives with kinks (the last section below, :func:`kink_certificate`):
a strictly convex separable part plus polyhedral terms — total variation Σ W|f_{i+1} − f_i| (along any
order), a weighted L1 distance Σ W|f − c|, w·max(A f + b) — over ldpopt's built-in linear constraints,
certified with fitted subgradients. Derivation: docs/problems.md, "Objectives with kinks" and
"ldpopt.problems.check.certificate: objectives with kinks". A linear part plus polyhedral terms
(:func:`linear_kink_certificate`) is a linear program: the dual of it bounds J(f) − J* (no distance:
its optimum need not be unique). Derivation: docs/notes/problems.md, "A linear objective with
polyhedral terms".
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import scipy.linalg
import scipy.sparse as sp
import scipy.sparse.linalg as sla

from ..._blas import one_thread
from ..dual.blocks import indicator_rows
from ..dual.grouped import groups_of
from ..dual.multipliers import bound_multipliers, bounds_from_dict, duals_dict, free_values, multipliers_from_dict
from ..dual.simplex import newton_lambda
from ..dual.structure import Structure, compile_constraints, row_sums
from ..objectives.builtins import Objective, UserObjective, make_objective
from ..objectives.separable import Separable, separable_for

__all__ = [
    "KINK_DUALS",
    "KINK_TOL",
    "MIN_D",
    "Certificate",
    "KinkCertificate",
    "NonSmoothObjective",
    "Rest",
    "argmin_bound",
    "argmin_rounding",
    "block_argmin_bound",
    "block_rows",
    "blocks_for",
    "certificate",
    "certify",
    "certify_grouped",
    "feasible_near_blocks",
    "inputs_digest",
    "kink_certificate",
    "min_norm_step",
    "project_on_rows",
    "recover_multipliers",
    "support_problem",
]

_EPS = np.finfo(float).eps


@dataclass
class Certificate:
    r"""What :func:`certificate` found. Units: frequency units for violations and distances, the
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
        Bounds on :math:`\lVert f - f^* \rVert_∞` and :math:`\lVert f - f^* \rVert_2` (module docstring).
    feas_tol : float
        The primal tolerance used.
    multipliers : dict, default {}
        The multipliers certified.
    note : str, default ""
        What was assumed or left out.
    distance_argmin, distance_rounding, multiplier_refined, flat_values, distance_nonflat
        The refinements of the distance bound (module docstring).
    computed_on : bytes, default b""
        :func:`inputs_digest` of the exact f and multipliers this certificate was computed on,
        recorded by ``certify(..., stamp=True)``; empty when not recorded. ldpopt's check reuses a
        solver's certificate only when the digest of the point and multipliers it checks is this
        one (:func:`.verdict.check_solution`); otherwise it computes its own.

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
    computed_on: bytes = b""           # inputs_digest(f, multipliers) of what it was computed on (stamp=True)

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
        r"""Feasible, dual-feasible (to ``feas_tol`` in the multipliers' scale) and f within
        ``distance_tol`` of the optimum (in frequency units, max norm).

        Parameters
        ----------
        distance_tol : float
            The largest :math:`\lVert f - f^* \rVert_∞` accepted.

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


def argmin_bound(sep: Separable, st: Structure, f, lam: float, newton: int = 5, rest=None, weights=None, known=None):
    """(bound, rounding, λ): the linear ℓ∞ bound of the module docstring (no rows only): the
    block-wise bound of :func:`.block_argmin_bound` with the pool as the one block. With ``rest``
    (values left out at their lower bound, :func:`.support_problem`): bound NaN when the refined
    λ would move one of them. ``weights``: each value stands for that many (:func:`certify_grouped`);
    ``known``: as for :func:`.block_argmin_bound`."""
    pool = (np.zeros(st.d, np.intp), np.zeros(0), np.zeros(0))
    return block_argmin_bound(sep, st, f, lam, np.zeros(0), pool, newton, rest, weights, known)


def certify(sep: Separable, st: Structure, f, lam, y, duals: dict | None = None,
            feas_tol: float | None = None, *, with_multipliers: bool = True, deadline=None,
            stamp: bool = False) -> Certificate:
    """The certificate for the compiled problem (the solver calls this directly).

    At large d the values that sit at their lower bound both in f and in the argmin at
    λ are summarised in a few vectorised passes and the rest is certified as a problem of its own
    (:func:`.support_problem`: the same numbers, to rounding, in a fraction of the time; there,
    ``with_multipliers=False`` leaves ``Certificate.multipliers`` empty instead of building them).
    ``deadline`` (``time.perf_counter()`` seconds; None: none): the projection on the rows raises
    :class:`~ldpopt.problems.progress.CheckTimedOut` once it has passed (:func:`project_on_rows`).

    ``stamp=True`` records :func:`inputs_digest` of (f, duals) in ``computed_on`` — only when
    ``duals`` is given and its Σ and row multipliers are bit for bit the (λ, y) certified here
    (:func:`.multipliers.multipliers_from_dict`), so the digest names exactly what was computed on;
    otherwise nothing is recorded and a check recomputes."""
    out = certify_on_support(sep, st, f, lam, y, duals, feas_tol, with_multipliers)
    if out is None:
        out = certify_grouped(sep, st, f, lam, y, duals, feas_tol, with_multipliers)
    if out is None:
        out = _certify_full(sep, st, f, lam, y, duals, feas_tol, deadline=deadline)
        assert out is not None  # None only with values left out (rest)
    if stamp and duals is not None and _same_rows(st, duals, lam, y):
        out = dataclasses.replace(out, computed_on=inputs_digest(f, duals))
    return out


def _same_rows(st: Structure, duals: dict, lam, y) -> bool:
    """Whether ``duals``' Σ and row multipliers are bit for bit (λ, y)."""
    try:
        lam2, y2 = multipliers_from_dict(st, duals)
    except ValueError:
        return False
    a = np.asarray([lam, lam2], dtype=np.float64)
    y, y2 = np.asarray(y, dtype=np.float64).ravel(), np.asarray(y2, dtype=np.float64).ravel()
    return bool(a[0].tobytes() == a[1].tobytes() and y.shape == y2.shape and y.tobytes() == y2.tobytes())


def inputs_digest(f, multipliers: dict) -> bytes:
    """SHA-256 of the exact bits of f and of every multiplier (names sorted; shapes included;
    float64): equal digests mean the same numbers to the last bit (−0.0 and 0.0 differ, NaN
    payloads differ). What :attr:`Certificate.computed_on` records and ldpopt's check compares
    (a choice over keeping a copy: ~4.5 ms per 8 MB here, no second copy of f held).

    Parameters
    ----------
    f : array_like (d,)
        The point.
    multipliers : dict
        Name → multiplier (number, array or None).

    Returns
    -------
    bytes
        32 bytes.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt.problems.check.certificate import inputs_digest
    >>> f = np.array([0.5, 0.5])
    >>> inputs_digest(f, {"sum": -1.0}) == inputs_digest(f.copy(), {"sum": -1.0})
    True
    >>> inputs_digest(f, {"sum": -1.0}) == inputs_digest(np.array([0.5, np.nextafter(0.5, 1)]), {"sum": -1.0})
    False
    """
    import hashlib

    h = hashlib.sha256()

    def add(tag: str, v) -> None:
        arr = np.ascontiguousarray(np.asarray(v, dtype=np.float64))
        h.update(f"{tag}{arr.shape}".encode())
        h.update(arr.data.cast("B"))

    add("f", f)
    for k in sorted(multipliers, key=str):
        v = multipliers[k]
        if v is None:
            h.update(f"{k!s}:None".encode())
        else:
            add(f"{k!s}:", v)
    return h.digest()


def certify_on_support(sep: Separable, st: Structure, f, lam, y, duals: dict | None, feas_tol: float | None,
                       with_multipliers: bool = True) -> Certificate | None:
    """The certificate of :func:`certify`, computed on the values off their lower bound
    (:func:`.certificate.support_problem`); None when that does not apply.
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


def certify_grouped(sep: Separable, st: Structure, f, lam, y, duals: dict | None, feas_tol: float | None,
                    with_multipliers: bool = True) -> Certificate | None:
    """The certificate of :func:`certify` computed once per distinct-count group (:mod:`ldpopt.problems.dual.grouped`)
    with each group weighted by its size, or None when that does not apply: the separable does not
    ask for it (``group_certificate``), there are rows, or f, the bounds or the given bound
    multipliers are not the same float on every value of each group (checked bitwise, as
    :func:`ldpopt.problems.objectives.groups.per_group` does; a point the grouped solve produced is).

    Every per-value quantity (h, h', h'', μ, the argmin at λ and its rounding) is the same function
    of the same operands on each member of a group, so the maxima are the elementwise certificate's
    own; the sums (J, the gap and its floor, Σ f, the scales) are Σ_k n_k x_k instead of Σ_v x_v —
    the same numbers to rounding, not bitwise (hence opt-in: a recognised user objective, whose
    per-value terms cost ~10 passes each, and a declared one with elementwise functions take it; the
    built-ins keep theirs). A point off its
    constraints beyond rounding is certified in full (None here)."""
    from ..dual.grouped import count_groups, per_group

    if not getattr(sep, "group_certificate", False) or st.m or st.sum_free or st.chain is not None:
        return None
    g = count_groups(sep)
    if g is None:
        return None
    f = np.asarray(f, float)
    if f.shape != (st.d,):
        return None
    def table(x):  # x per group, or None; an all-zero x (no pass beyond any()) as zeros
        return np.zeros(g.k) if not np.any(x) else per_group(g, np.asarray(x, float))

    imp = np.zeros(st.d, bool) if st.implied_upper is None else st.implied_upper
    cols = [per_group(g, f), per_group(g, st.l), per_group(g, st.u),
            np.ones(g.k) if imp.all() else table(imp)]
    if duals is not None:
        cols += list(bounds_from_dict(st, duals))
        cols[4:] = [per_group(g, np.asarray(cols[4], float)), table(cols[5])]
    if any(c is None for c in cols):
        return None
    fk, lk, uk, impk = cols[:4]
    bounds = None if duals is None else (cols[4], cols[5])
    sub_st = Structure(g.k, lk, uk, st.total, sp.csr_matrix((0, g.k)), st.b, st.ineq, st.sum_name, {},
                       impk.astype(bool))
    cert = _certify_full(g.rep, sub_st, fk, lam, y, duals, feas_tol, bounds=bounds, weights=g.weights)
    if cert is None:
        return None
    if duals is None:  # the multipliers of the whole problem, from r = h'(f) + λ per group, gathered
        if not with_multipliers:
            return dataclasses.replace(cert, multipliers={})
        with np.errstate(divide="ignore", invalid="ignore"):
            r = np.broadcast_to(g.rep.d1(fk), (g.k,))[g.inv] + lam
        cert = dataclasses.replace(cert, multipliers=duals_dict(st, f, lam, y, r))
    return cert


def _wsum(x, w) -> float:
    """Σ x, each entry counted ``w`` times (:func:`certify_grouped`); ``np.sum`` itself where ``w`` is
    None (the same numbers as before the weights existed)."""
    return float(np.sum(x)) if w is None else float(w @ x)


def _certify_full(sep: Separable, st: Structure, f, lam, y, duals: dict | None = None,
                  feas_tol: float | None = None, *, bounds=None, rest=None, weights=None,
                  deadline=None) -> Certificate | None:
    """:func:`certify` on all of ``st``; ``bounds`` = (y^lo, y^up) given, ``rest`` the summary of
    the values left out (:class:`.certificate.Rest`; None: nothing left out), ``weights`` how many
    values each entry stands for (:func:`certify_grouped`; None: one each). None when the refined λ
    would move a value left out (``rest``), or when f is off its constraints beyond rounding
    (``weights``: the feasible point near f is made on the whole domain, by the caller)."""
    f = np.asarray(f, float)
    d = st.d
    w = weights
    d_full, total_full = (d, st.total) if rest is None else (rest.d, rest.total)
    if w is not None:
        d_full = round(float(np.sum(w)))
    if f.shape != (st.d,):
        raise ValueError(f"f must have shape ({st.d},), got {f.shape}")
    y = np.asarray(y, float).copy()
    d2f = None
    if feas_tol is None:
        # 1e-9 of the frequency scale total/d, but not below the rounding of Σ f (≈ 1e-14 at d = 1e7)
        # nor below the rounding of the per-value argmins themselves: f_v is formed from terms of
        # size |f_v| and |t_v|/h_v'' (e.g. f̃_v − λ/2 for cls), which at huge noise (ε = 0.01, n = 10:
        # |f̃| ~ 10³) exceed the frequencies by orders of magnitude
        t_ = np.broadcast_to(lam + (st.A.T @ y if st.m else 0.0), (d,))
        inner_ = (f > st.l) & (f < st.u)
        with np.errstate(divide="ignore", invalid="ignore"):
            d2f = sep.d2(f)  # (again for the stationarity below)
            terms = np.abs(t_[inner_]) / d2f[inner_]
        fin = np.isfinite(terms)
        terms = terms[fin]
        abs_f = _wsum(np.abs(f), w) + (0.0 if rest is None else rest.abs_f)
        rounding = 4 * _EPS * (abs_f + _wsum(terms, None if w is None else w[inner_][fin]))
        feas_tol = max(max(1e-9 / d_full, 1e-14) * max(total_full, 1.0), rounding)
    dual_viol = float(np.max(np.maximum(-y[st.ineq], 0.0), initial=0.0))
    y_dual = y.copy()
    y_dual[st.ineq] = np.maximum(y_dual[st.ineq], 0.0)  # a valid dual point
    # primal feasibility (the implied upper bound is not a constraint of its own)
    u_real = st.u if st.implied_upper is None else np.where(st.implied_upper, np.inf, st.u)
    with np.errstate(invalid="ignore"):
        vb = float(np.max(np.maximum(st.l - f, f - u_real), initial=0.0))
    vs = 0.0 if st.sum_free else abs(_wsum(f, w) - st.total)  # a tree's total is one of its rows
    res = st.residual(f) if st.m else np.zeros(0)
    vr = float(np.max(np.where(st.ineq, np.maximum(res, 0.0), np.abs(res)), initial=0.0))
    if not np.all(np.isfinite(f)):
        vb = np.inf
    viol = max(vb, vs, vr)
    abs_f_all = _wsum(np.abs(f), w) + (0.0 if rest is None else rest.abs_f)
    # dual function at (λ, y⁺) through the per-value argmin
    t = lam + (st.A.T @ y_dual if st.m else 0.0)
    fz = sep.argmin(t, st.l, st.u)
    hv = sep.value(f)
    J = _wsum(hv, w) + (0.0 if rest is None else rest.h_sum)
    # gap = J(f) − g = Σ_v e_v − [λ(Σf − total) + y·(A f − b)],  e_v = h_v(f_v) − h_v(fz_v) + t_v(f_v − fz_v)
    # ≥ 0 (fz_v minimises h_v + t_v·x on [l_v, u_v]). Summed per value, so that values where f and
    # fz agree contribute exactly 0 and the large constant parts of the likelihoods cancel exactly.
    diff = f != fz
    tv = np.broadcast_to(t, (d,))
    hz = sep.value(fz)
    lin = (0.0 if st.sum_free else lam * (_wsum(f, w) - st.total)) + (float(y_dual @ res) if st.m else 0.0)
    wd = None if w is None else w[diff]
    change = getattr(sep, "value_change", None)
    got = None if change is None else change(f, fz)
    if got is None:
        e = np.where(diff, (hv - hz) + tv * (f - fz), 0.0)
        scale = _wsum(np.abs(hv[diff]), wd) + _wsum(np.abs(tv[diff] * f[diff]), wd) + abs(lin)
        floor = 16 * _EPS * scale
    else:
        # h_v(f_v) − h_v(fz_v) formed without the values' own size (a quadratic: Separable.value_change,
        # with its rounding bound): the floor is then eps times the gap's terms, the steps' products
        # and the linear part's own rounding (Σ f and A f − b as summed: log₂ d + 16 roundings of
        # Σ|f|, nnz + 16 of |A||f| + |b|), not eps·Σ|h_v| (J itself)
        dh, err = got
        step = f - fz
        e = np.where(diff, dh + tv * step, 0.0)
        lin_rnd = 0.0 if st.sum_free else abs(lam) * (np.log2(max(d, 2)) + 16) * _wsum(np.abs(f), w)
        if st.m:
            rmag = np.abs(st.A) @ np.abs(f) + np.abs(st.b)
            lin_rnd += float(np.abs(y_dual) @ rmag) * (float(np.max(np.diff(sp.csr_array(st.A).indptr), initial=0)) + 16)
        scale = _wsum(np.abs(e), w) + _wsum(np.abs(tv * step), w) + abs(lin)
        floor = 16 * _EPS * scale + 2.0 * _wsum(np.where(diff, err, 0.0), w) + _EPS * lin_rnd
    gap = _wsum(e, w) - lin
    g_val = J - gap  # = g(λ, y⁺), computed through the per-value sum above
    rel_scale = _wsum(np.abs(hv), w) + abs(lam) * total_full
    if st.sum_free:  # a tree: no λ·total; the rows' linear terms Σ|t_v f_v| play its part
        rel_scale += _wsum(np.abs(tv * f), w)
    if rest is not None:
        rel_scale += rest.abs_h
    # stationarity and complementarity at f
    with np.errstate(divide="ignore", invalid="ignore"):
        r = sep.d1(f) + t
    inner = (f > st.l) & (f < st.u)
    # in frequency units: |r_v|/h_v''(f_v) is the change of f_v that would restore stationarity (a
    # Newton step); relative to the total mass. Scale-free where the gradients themselves are ~0.
    with np.errstate(divide="ignore", invalid="ignore"):
        h2 = (sep.d2(f) if d2f is None else d2f)[inner]
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
    n_flat = int(np.count_nonzero(flat)) if w is None else round(float(np.sum(w[flat])))
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
    e_pt, cnt = _argmin_rounding_at(sep, st, f, fz, tv)  # (reused by the argmin bound at the same λ)
    if w is None:
        drnd = max(drnd, float(np.sum(e_pt) + np.max(e_pt, initial=0.0)))
    else:
        drnd = max(drnd, _wsum(e_pt, w[cnt]) + float(np.max(e_pt, initial=0.0)))
    if off > 0 and not viol > feas_tol and w is not None:
        return None
    if off > 0 and not viol > feas_tol:
        # a point off its constraints (within feas_tol): the gap bounds J(f) − J* only for a feasible
        # point. With a feasible f̂ made from f (rescaled per block: :func:`.certificate.
        # feasible_near_blocks`; else projected on the rows: .certificate.project_on_rows), the
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
            fh = project_on_rows(f, rows_all, b_all, ineq_all, st.l, u_real, deadline=deadline)
        if fh is None:
            dl = dl2 = np.nan
            note += (f"; f is off its constraints by {viol:.1e} and no feasible point near it is made (a "
                     "projection on the rows leaves a bound): no bound from the gap")
        elif fh is not f:  # (f itself: on its constraints to the rounding that rule allows)
            with np.errstate(all="ignore"):
                hh = sep.value(fh)
                dh = fh != fz
                eh = np.where(dh, (hh - hz) + tv * (fh - fz), 0.0)
                res_h = st.residual(fh) if st.m else np.zeros(0)
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
        known = (fz, e_pt, cnt)
        da, arnd, lam_r = (argmin_bound(sep, st, f, float(lam), rest=rest, weights=w, known=known) if blk is None
                           else block_argmin_bound(sep, st, f, float(lam), y, blk, rest=rest, known=known))
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
                mean=None, variance=None, feas_tol: float | None = None, deadline=None) -> Certificate:
    """Certify ``f`` for ``Problem(estimate, objective, constraints)`` without a solver.

    ``objective``: a name (``"cls"``, ``"weighted-mle"``, ``"multinomial"``, ``"binomial"``,
    ``"posterior"`` with ``mean``/``variance``) or an Objective. ``constraints``: None (the simplex)
    or a list as for :class:`~ldpopt.problems.Problem` (built-in constraint classes only).
    ``multipliers``: a ``Solution.duals``-style dict (needs the sum's multiplier and the rows'), or None
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
    deadline : float or None, default None
        A ``time.perf_counter()`` reading past which the projection on the rows raises
        :class:`~ldpopt.problems.progress.CheckTimedOut` (``Problem.solve``'s time limit); None: none.

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
        return certify(sep, st, f, lam, y, None, feas_tol, deadline=deadline)
    lam, y = multipliers_from_dict(st, multipliers)
    return certify(sep, st, f, lam, y, multipliers, feas_tol, deadline=deadline)


# ---- Multipliers (λ, y) recovered from a point f (derivation: docs/problems.md, "The certificate")

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

    from ..constraints.farkas import highs

    keep = (inner | lo | up) & np.isfinite(g)
    idx = np.flatnonzero(keep)
    k1 = M.shape[0]
    # the rows sign·(g + Mt z) − s ≤ 0, r = g + Mt z on the kept values: sign +1 on the inner and
    # upper ones, then −1 on the inner and lower ones; one CSR built from Mt's rows (indices, data and
    # row pointers), the column of s appended to each row
    plus, minus = np.flatnonzero((inner | up)[idx]), np.flatnonzero((inner | lo)[idx])
    if not (plus.size or minus.size):
        return None
    rows = idx[np.concatenate([plus, minus])]
    sign = np.concatenate([np.ones(plus.size), -np.ones(minus.size)])
    Mt = sp.csr_matrix(M.T)[rows]
    n_row = np.diff(Mt.indptr)
    indptr = Mt.indptr + np.arange(rows.size + 1)
    last = indptr[1:] - 1  # each row's final entry: the column of s
    at = np.ones(indptr[-1], bool)
    at[last] = False
    indices = np.empty(indptr[-1], dtype=Mt.indices.dtype)
    data = np.empty(indptr[-1])
    indices[at], data[at] = Mt.indices, Mt.data * np.repeat(sign, n_row)
    indices[last], data[last] = k1, -1.0
    A_ub = sp.csr_matrix((data, indices, indptr), shape=(rows.size, k1 + 1))
    rhs = [-sign * g[rows]]
    bounds = [(None, None)] * k1 + [(0.0, None)]
    for j in ineq_cols:
        bounds[j] = (0.0, None)
    c = np.zeros(k1 + 1)
    c[-1] = 1.0
    # HiGHS in the worker's child (.constraints.farkas.highs): its failure of any kind is None
    res = highs(c, dict(A_ub=A_ub.tocsc(), b_ub=np.concatenate(rhs), bounds=bounds), None)
    return res.x[:k1] if res is not None and res.status == 0 else None


def recover_multipliers(sep, st, f, active_tol: float = 0.0):
    """(λ, y) for f by the KKT conditions of the module docstring: least squares over the
    multipliers of Σ and of the active rows (equalities; ≤-rows with |A f − b| ≤ 1e-12·total) on
    the inner values, the interval's middle point or the active-set LP where those do not
    determine them. Inactive ≤-rows get y = 0, and y is clipped to ≥ 0 on ≤-rows."""
    f = np.asarray(f, float)
    if st.tree is not None:  # one tree of sums: tree-structured normal equations, λ ≡ 0
        from ..dual.tree import recover_tree
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
        # so λ is the same as without rows and y follows from the blocks (dual.chain; the
        # normal equations would be (d−1)² dense)
        from ..dual.chain import chain_multipliers
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
    with one_thread(G.shape[0]):
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


# ---- The linear argmin bound block by block: disjoint equality subset sums (a product of simplices)

def block_rows(st):
    """(block of each value: its row, or m for the pool; each row's sign; each row's own total
    b_k·sign_k) when every row is an equality ±1 indicator row on a subset disjoint from the others'
    (:func:`ldpopt.problems.dual.blocks.indicator_rows`) and Σ f = total is a constraint; else None. Once per
    Structure."""
    if st.m == 0 or st.sum_free or bool(np.any(st.ineq)):
        return None
    return st.derived("block_rows", _block_rows)


def _block_rows(st):
    got = indicator_rows(st)
    if got is None:
        return None
    gid = np.where(got[0] < 0, st.m, got[0])
    gid.setflags(write=False)
    return gid, got[1], st.b * got[1]


def blocks_for(st, rest):
    """:func:`block_rows` of ``st`` (with ``rest``, the support certificate's summary: the full
    problem's row signs — a row whose values were all left out has no entry to read its sign from;
    None when the full problem's rows are not disjoint equality indicators)."""
    blk = block_rows(st)
    if blk is None or rest is None:
        return blk
    if rest.blocks is None:
        return None
    return blk[0], rest.block_sign, st.b * rest.block_sign


def block_argmin_bound(sep, st, f, lam: float, y, blocks, newton: int = 5, rest=None, weights=None, known=None):
    """(bound, rounding, λ of the pool) of the module docstring; ``blocks`` = :func:`block_rows` of
    ``st``. With ``rest`` (values left out at their lower bound, :func:`.support_problem`; its
    ``blocks`` the full problem's block of each value): bound NaN when a refined λ_k would move one of them.
    ``weights``: each value stands for that many (:func:`certify_grouped`; not with ``rest``).
    ``known``: (x, e, mask) — the per-value argmin at these multipliers and its
    :func:`argmin_rounding` with the mask of the values it covers, computed by the caller: used as
    they are while no Newton step moves λ (the same numbers, evaluated once)."""
    gid, sign, value = blocks
    m = st.m
    mass = np.append(value, st.total - float(np.sum(value)))
    lam_g = np.append(lam + sign * np.asarray(y, float), lam)
    x0 = None if known is None else known[0]
    lam_g, x, err = newton_lambda(sep, st.l, st.u, gid, mass, lam_g, newton, weights, x0)
    bound = float(np.max(np.abs(f - x), initial=0.0)) + float(np.max(np.abs(err)))
    t = lam_g[gid]
    e, cnt = (known[1], known[2]) if known is not None and x is x0 else _argmin_rounding_at(sep, st, f, x, t)
    if weights is not None:  # the groups of certify_grouped (no values left out)
        rounding = _wsum(e, weights[cnt]) + float(np.max(e, initial=0.0))
    else:
        if rest is not None:  # no rows: one λ for every value left out
            lam_rest = lam_g[m] if m == 0 else (None if rest.blocks is None else lam_g[rest.blocks])
            e_rest = None if lam_rest is None else rest.argmin_rounding(lam_rest)
            if e_rest is None:
                return np.nan, np.nan, float(lam_g[m])
            e = np.concatenate([e, e_rest])
        rounding = float(np.sum(e) + (np.max(e) if e.size else 0.0))
    if not np.all(np.isfinite(f)):
        bound = np.inf
    return bound, rounding, float(lam_g[m])


def argmin_rounding(sep, st, f, x, t):
    """Rounding level of |f − x(t)| at the values where the argmin x(t) is inner or within rounding of
    a kink (8ε times |f|, |x| and h's scale over its curvature, plus the computed argmin's residual
    2|h'(x) + t|/h''(x), the distance to the root it may have stopped short of), inf where that is not finite: the
    floor under which the linear argmin bound (``certificate.argmin_bound`` and the block-wise one
    above) cannot resolve f*. ``t``: the scalar multiplier or one per value."""
    return _argmin_rounding_at(sep, st, f, x, t)[0]


def _argmin_rounding_at(sep, st, f, x, t):
    """(:func:`argmin_rounding`, the mask of the values it is given for)."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        s = sep.d1_scale(x) + np.abs(t)
        free = st.l < st.u
        inner = (x > st.l) & (x < st.u)
        g = np.abs(sep.d1(x) + t)
        near = free & ~inner & (g <= 8 * _EPS * s)
        cnt = inner | near
        h2 = sep.d2(x)[cnt]
        # plus the argmin's own residual: an iterative one (a user objective's bracketed Newton) may
        # stop short of the root; |x − x*| ≤ |h'(x) + t|/min h'' between them, taken as h''(x)/2
        e = 8 * _EPS * (np.abs(f[cnt]) + np.abs(x[cnt]) + s[cnt] / h2) + np.where(inner[cnt], 2.0 * g[cnt] / h2, 0.0)
    return np.where(np.isfinite(e), e, np.inf), cnt


def feasible_near_blocks(st, f):
    """``f`` itself when it is on the constraints of ``st`` to the rounding of evaluating them (Σ f
    and the rows to 2dε·(‖f‖₁ + |total|), no value below its lower bound); else, where the
    constraints are f ≥ 0 (no other bounds), Σ f = total and pairwise disjoint equality ±1 subset
    sums (:func:`block_rows`), f̂ = max(f, 0) rescaled block by block to each block's mass (uniform
    on a block with no positive value): a feasible point near f; None otherwise."""
    f = np.asarray(f, float)
    d = st.d
    eps = np.finfo(float).eps
    res_rows = np.abs(st.residual(f)) if st.m else np.zeros(0)
    off = max(abs(float(np.sum(f)) - st.total), float(np.max(res_rows, initial=0.0)))
    if off <= 2 * d * eps * (float(np.sum(np.abs(f))) + abs(st.total)) and not np.any(f < st.l):
        return f
    blocks = block_rows(st) if st.m else None
    if st.m and blocks is None:
        return None
    gid, value = (blocks[0], blocks[2]) if st.m else (np.zeros(d, np.intp), np.zeros(0))
    u = st.u if st.implied_upper is None else np.where(st.implied_upper, np.inf, st.u)
    if np.any(st.l != 0) or np.any(np.isfinite(u)):
        return None
    mass = np.append(value, st.total - float(np.sum(value)))
    if np.any(mass < 0):
        return None
    fp = np.maximum(f, 0.0)
    have = np.bincount(gid, weights=fp, minlength=st.m + 1)
    count = np.bincount(gid, minlength=st.m + 1)
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(have[gid] > 0, fp * (mass / np.where(have > 0, have, 1.0))[gid],
                        (mass / np.maximum(count, 1))[gid])


#: the Tikhonov shift of M Mᵀ in :func:`min_norm_step`, relative to its largest diagonal entry (a
#: choice: far below the smallest eigenvalue of the rows met in practice — a chain of d = 10⁶
#: differences has λ_min/λ_max ≈ π²/(4d²) ≈ 2.5e-12 — and far above ε, so that the factor of a
#: rank-deficient M Mᵀ, dependent rows, exists; the refinement rounds remove its bias)
_SHIFT = 1e-14
#: refinement rounds of :func:`min_norm_step` (each one sparse solve and two products)
_REFINE = 4


def min_norm_step(M, r, deadline=None):
    """δ = Mᵀ(M Mᵀ)⁺ r, the smallest ‖δ‖₂ with M δ = r when that system is consistent, by sparse
    algebra only: M Mᵀ + τI (τ = :data:`_SHIFT` × its largest diagonal entry) factored once by
    ``scipy.sparse.linalg.splu`` (COLAMD ordering), then iterated Tikhonov refinement
    δ ← δ + Mᵀ (M Mᵀ + τI)⁻¹ (r − M δ), up to :data:`_REFINE` rounds, stopped when the residual
    no longer shrinks. Cost: one sparse factor of M Mᵀ (its fill is the rows' overlap pattern:
    O(nnz) for chains, trees, disjoint and banded rows) and O(nnz) per round — no dense step. The
    dense pseudo-inverse it replaces agrees to rounding where M has full row rank
    (``tests/test_project_on_rows.py``). ``deadline`` (``time.perf_counter()`` seconds): raises
    :class:`~ldpopt.problems.progress.CheckTimedOut` when passed between rounds."""
    from ..progress import past

    M = sp.csr_matrix(M)
    K = (M @ M.T).tocsc()
    diag = K.diagonal()
    top = float(np.max(diag, initial=0.0))
    if not top > 0 or not np.isfinite(top):
        return None
    past(deadline, "the projection on the rows")
    lu = sla.splu((K + sp.identity(K.shape[0], format="csc") * (_SHIFT * top)).tocsc(), permc_spec="COLAMD")
    delta = np.zeros(M.shape[1])
    rr = np.asarray(r, float)
    size = float(np.linalg.norm(rr))
    for _ in range(_REFINE):
        past(deadline, "the projection on the rows")
        step = M.T @ lu.solve(rr)
        if not np.all(np.isfinite(step)):
            return None
        trial = delta + step
        r_new = r - M @ trial
        new = float(np.linalg.norm(r_new))
        if new >= size:  # no longer shrinking: rounding reached
            break
        delta, rr, size = trial, r_new, new
    return delta


def project_on_rows(f, A, b, ineq, lo, up, move: bool = True, deadline=None):
    """A point near f that meets l ≤ x ≤ u and the rows A x (≤ where ``ineq``, else =) b to the
    rounding of evaluating them (2ε·(nnz_k + 1)·(|A_k||x| + |b_k|) per row): f itself when it does;
    else (``move``) f clipped to its bounds and corrected by least squares,
    f̂ = f − Mᵀ(M Mᵀ)⁺(M f − c) over the equality rows and the violated or active ≤ rows (a ≤ row
    the correction pushes over joins them; a value it pushes past a bound is put there and stays;
    up to 8 rounds), moving only the values strictly inside their bounds, when f̂ meets them; None
    otherwise. ‖f − f̂‖₂ ≤
    ‖M⁺‖·‖M f − c‖₂ is the Hoffman-type constant of these rows, computed rather than assumed (the
    caller measures ‖f − f̂‖ itself). Sparse algebra only (:func:`min_norm_step`: a sparse factor of
    M Mᵀ and O(nnz) passes; the dense lstsq of M Mᵀ it replaces took 8.6 s on a 2,000-value
    Monotone chain). ``deadline`` (``time.perf_counter()`` seconds, None: none): raises
    :class:`~ldpopt.problems.progress.CheckTimedOut` once it has passed."""
    A = sp.csr_matrix(A)
    absA = abs(A)
    nnz = np.diff(A.indptr)

    def meets(x):
        res = row_sums(A, x) - b
        rnd = 2 * _EPS * (nnz + 1) * (absA @ np.abs(x) + np.abs(b))
        viol = np.where(ineq, np.maximum(res, 0.0), np.abs(res))
        return res, rnd, bool(np.all(viol <= rnd) and np.all(x >= lo) and np.all(x <= up))

    if meets(f)[2]:
        return f
    if not move:
        return None
    f0 = np.clip(f, lo, up)
    res, rnd, ok = meets(f0)
    if ok:
        return f0
    active = ~ineq | (res >= -rnd)
    free = (f0 > lo) & (f0 < up)
    for _ in range(8):  # a ≤ row the correction pushes over joins the active rows; a value it pushes
        rows = np.flatnonzero(active)  # past a bound is put on that bound and leaves the free ones
        cols = np.flatnonzero(free)
        if rows.size == 0 or cols.size == 0:
            return None
        M = A[rows][:, cols]
        step = min_norm_step(M, res[rows], deadline)
        if step is None:
            return None
        fh = f0.copy()
        fh[cols] -= step
        res_h, rnd_h, ok = meets(fh)
        if ok:
            return fh
        out = (fh < lo) | (fh > up)
        grow = active | (ineq & (res_h > rnd_h))
        if not np.any(out) and np.array_equal(grow, active):
            return None
        f0 = np.where(out, np.clip(fh, lo, up), f0)
        free &= ~out
        active = grow
        res = row_sums(A, f0) - b
    return None


# ---- At large d: certify the support, summarise the values at their lower bound

MIN_D = 4096  # below this the full certificate is as fast


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
    block_sign: np.ndarray | None = None  # problem and each row's sign (:func:`.block_argmin_bound`)

    def argmin_rounding(self, lam: float):
        """Their rounding terms in the argmin bound at λ (:func:`~.certificate.argmin_bound`), or
        None when some of them would leave l at λ. Decided exactly as the reference that tests every
        value (``tests/test_certificate.py``): g = h'(l) + λ is formed once, and only the
        values with g <= 8 eps (max scale + |λ|) — a bound on every value's threshold, float rounding
        being monotone — are tested in full (3 passes over the domain instead of ~12)."""
        with np.errstate(invalid="ignore"):
            g = np.broadcast_to(self.d1l + lam, self.left.shape)
            neg = np.flatnonzero(g < 0)
            if neg.size and self.left[neg].any():
                return None
            # λ may be per value (disjoint blocks, :func:`.block_argmin_bound`): its largest |λ_v|
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
    distinct-count groups of ``sep`` (:func:`ldpopt.problems.objectives.groups.groups_of`, which checks that every
    per-value array is a function of the count) when the bounds are one constant pair (the plain
    simplex), d ≥ ``GROUP_MIN_D`` and there are at most d/8 groups; else None.

    The likelihoods' and the weighted MLE's h, h', h'', μ and d1 scale at l are elementwise functions
    of (c_v, l_v, u_v) and scalars: evaluated once per distinct count and gathered, they are the
    same operations on the same operands, so the same floats (as EM's dual in
    :mod:`ldpopt.methods.distinct`; ``tests/test_certificate.py`` compares bit for bit).
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
    # the values left out are among those with f at l: with fewer than d − d/4 of them more than d/4
    # are kept and the split does not apply (decided before the passes at the lower bounds)
    if d - int(np.count_nonzero(f == st.l)) > d // 4:
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


# ---- objectives with kinks: the same gap with fitted subgradients

#: an entry of A f + b within KINK_TOL/d of 0 (of the maximum, for a max term) is treated as a kink
KINK_TOL = 1e-3


class NonSmoothObjective(UserObjective):
    """A user's cvxpy callable recognised as a strictly convex separable part plus polyhedral terms
    (:mod:`.recognise`): solved on the cvxpy chain as written, certified by :func:`kink_certificate`."""

    #: recognised: scaled like the built-ins (UserObjective), as its certificate was measured
    default_multiplier = "auto"

    def __init__(self, user: UserObjective, form, separable):
        super().__init__(user.func, name=user.name, multiplier=user.multiplier)
        self.user, self.form = user, form
        self.kinks = form.kinks
        self._separable = separable  # form -> its SeparableObjective (.user_forms.RecognisedSeparable)

    def value(self, f, estimate):
        return self.form.total(f) + self.form.kink_value(f)

    def smooth_part(self, tilt=None):
        """S(f) (+ tiltᵀf) as a SeparableObjective for the structured solver and the certificate."""
        return self._separable(replace(self.form, kinks=[],
                                       linear=self.form.linear + (0.0 if tilt is None else tilt)))

    def __repr__(self):
        return f"NonSmoothObjective({self.name!r}, kink terms={[k[0] for k in self.kinks]})"


@dataclass
class KinkCertificate:
    gap: float              # J(f) − (a lower bound on J*), objective units
    gap_floor: float        # its rounding level
    distance_linf: float    # ≥ ‖f − f*‖∞ (NaN when f is infeasible beyond the tolerance)
    stationarity: float     # max residual of the fitted stationarity equations / max |∇S|
    kink_entries: int       # entries of A f + b treated as kinks
    primal_value: float
    note: str = ""


#: widest band of the normal matrix solved as a banded one (:func:`_normal_solve`)
_BAND = 8


def _normal_solve(N, rhs):
    """N z = rhs for the symmetric positive semi-definite normal matrix N of :func:`_choose` (regularised):
    by banded Cholesky where its band is at most :data:`_BAND` wide (a TV or pinball term's kink rows:
    band 1 or 0; O(n) instead of a sparse LU per round: TV at weight 1e-1, d = 1,000, 15 rounds), else
    (or where that Cholesky fails) by sparse LU. Only the fit's subgradients depend on it: the
    certificate's gap is computed from whatever they are."""
    coo = N.tocoo()
    off = coo.row - coo.col
    band = int(np.max(np.abs(off), initial=0))
    n = N.shape[0]
    if band <= _BAND and n > 0:
        ab = np.zeros((band + 1, n))
        low = off >= 0  # the lower triangle, row i = col j + k at ab[k, j]
        np.add.at(ab, (off[low], coo.col[low]), coo.data[low])
        try:
            return scipy.linalg.solveh_banded(ab, rhs, lower=True, check_finite=False)
        except np.linalg.LinAlgError:
            pass
    return sla.splu(N.tocsc()).solve(rhs)


def _kink_transposes(obj) -> list:
    """Each kink term's Aᵀ as CSR, formed once per objective (its terms do not change) and kept on it."""
    kinks = obj.kinks
    store = getattr(obj, "__dict__", None)
    if store is None:
        return [sp.csr_matrix(A.T) for (_, _, A, _) in kinks]
    kept = store.get("_kink_transposes")
    if kept is not None and len(kept[0]) == len(kinks) and all(a is k[2] for a, k in zip(kept[0], kinks)):
        return kept[1]
    ATs = [sp.csr_matrix(A.T) for (_, _, A, _) in kinks]
    store["_kink_transposes"] = ([k[2] for k in kinks], ATs)
    return ATs


def _csr_rows(A, mask):
    """``A[mask]`` (rows) of a sparse A as CSR: the same entries in the same order, gathered through
    its row pointers rather than scipy's fancy indexing (one per round of :func:`_choose`)."""
    A = sp.csr_array(A)
    idx = np.flatnonzero(mask)
    starts = A.indptr[idx]
    lens = A.indptr[idx + 1] - starts
    ptr = np.zeros(idx.size + 1, dtype=A.indptr.dtype)
    np.cumsum(lens, out=ptr[1:])
    sel = np.repeat(starts - ptr[:-1], lens) + np.arange(ptr[-1], dtype=A.indptr.dtype)
    return sp.csr_array((A.data[sel], A.indices[sel], ptr), shape=(idx.size, A.shape[1]))


def _csr_columns(C, keep):
    """C·diag(keep) for a CSR C and a boolean ``keep``: the entries in the other columns dropped."""
    m = C.shape[0]
    on = keep[C.indices]
    rows = np.repeat(np.arange(m), np.diff(C.indptr))
    ptr = np.zeros(m + 1, dtype=C.indptr.dtype)
    np.cumsum(np.bincount(rows[on], minlength=m), out=ptr[1:])
    return sp.csr_array((C.data[on], C.indices[on], ptr), shape=C.shape)


def _choose(obj, st, f, lam, y, h):
    """q per kink term (module docstring)."""
    grad = obj.form.d1(f)
    inner = (f > st.l + h) & (f < st.u - h)
    rows = (st.A.T @ y) if st.m else 0.0
    qs, kinked = [], []
    for kind, W, A, b in obj.kinks:
        r = A @ f + b
        if kind == "abs":
            q = W * np.sign(r)
            k = np.abs(r) <= h
        else:
            q = np.zeros(r.shape[0])
            k = r >= np.max(r) - h
        qs.append(q)
        kinked.append(k)
    # each term's Aᵀ once (csr); a masked product Aᵀ(q·mask) instead of a sliced A[mask]ᵀ q, and the
    # normal matrix B Bᵀ with B = A[free][:, eq] as C·diag(eq)·Cᵀ with C = A[free] (rows only), so no
    # round slices columns; with :func:`_normal_solve`, TV at weight 1e-1, d = 1,000: 22 → 16 ms
    ATs = _kink_transposes(obj)
    rho = grad + (0.0 if lam is None else lam) + rows
    for AT, q, k in zip(ATs, qs, kinked):
        if np.any(~k):
            rho = rho + AT @ (q * ~k)
    # least squares for all kink entries together: on the interior values ∇S + Aᵀq + … = 0; a value at
    # its lower (upper) bound needs only ≥ 0 (≤ 0: its bound multiplier takes the rest), so it joins
    # the equations (at 0) only once the fit breaks that sign there; an |·| entry the fit puts outside
    # [−W, W] is fixed at that end and the rest refitted — an active set on both, a few rounds
    at_lo, at_up = (f <= st.l + h) & ~inner, (f >= st.u - h) & ~inner
    eq = inner.copy()
    free = [k.copy() for k in kinked]
    for _ in range(30):
        sizes = [int(k.sum()) for k in free]
        if not sum(sizes):
            break
        base = rho + sum(AT @ (q * (k & ~fr)) for AT, q, k, fr in zip(ATs, qs, kinked, free))
        blocks = [_csr_rows(A, fr) for (_, _, A, _), fr in zip(obj.kinks, free)]
        C = blocks[0] if len(blocks) == 1 else sp.vstack(blocks, format="csr")
        Ce = _csr_columns(C, eq)  # C·diag(eq)
        N = (Ce @ C.T).tocsc()
        N = N + sp.identity(N.shape[0], format="csc") * (1e-14 * max(float(np.max(np.abs(N.data), initial=0.0)), 1e-300))
        sol = _normal_solve(N, np.asarray(Ce @ -base).ravel())
        at, changed = 0, False
        for (kind, W, _, _), q, fr, n in zip(obj.kinks, qs, free, sizes):
            q[fr] = sol[at:at + n]
            at += n
            if kind == "abs":
                out = fr & (np.abs(q) > W)
                if out.any():
                    q[out] = W[out] * np.sign(q[out])
                    fr &= ~out
                    changed = True
        full = rho + sum(AT @ (q * k) for AT, q, k in zip(ATs, qs, kinked))
        wrong = ((at_lo & (full < 0)) | (at_up & (full > 0))) & ~eq
        if wrong.any():
            eq |= wrong
            changed = True
        if not changed:
            break
    sizes = [int(k.sum()) for k in kinked]
    for (kind, W, A, b), q, k in zip(obj.kinks, qs, kinked):
        if kind == "abs":
            np.clip(q, -W, W, out=q)
        else:
            from ...methods.normalize import project_simplex

            sub = q[k] / W[0] if W[0] > 0 else np.full(int(k.sum()), 1.0 / max(int(k.sum()), 1))
            q[:] = 0.0
            q[k] = W[0] * project_simplex(sub)
    resid = rho[inner] + sum(((AT @ (q * k))[inner] if np.any(k) else 0.0) for AT, q, k in zip(ATs, qs, kinked))
    scale = max(float(np.max(np.abs(grad), initial=0.0)), 1e-300)
    stat = float(np.max(np.abs(resid), initial=0.0)) / scale
    return qs, int(sum(sizes)), stat


#: the key of ``duals`` under which a route hands ldpopt's check the multipliers of the objective's
#: polyhedral terms (one array, the terms' entries in ``Recognised.kinks`` order: W·|A f + b| one per
#: row, w·max one per row): the direct QP route's epigraph multipliers (:mod:`.solvers.direct_qp`).
#: Like every multiplier they only decide how tight the certificate is (it clips them into their sets)
KINK_DUALS = "objective.kinks"


def _given_kinks(obj, duals) -> list | None:
    """The multipliers of ``duals[KINK_DUALS]`` split per kink term and clipped into their sets (a box
    [−W, W] per ``abs`` entry, the simplex scaled by w for a ``max``), or None where there are none or
    they do not fit the terms."""
    v = duals.get(KINK_DUALS) if duals else None
    if v is None:
        return None
    v = np.asarray(v, float).ravel()
    sizes = [A.shape[0] for (_, _, A, _) in obj.kinks]
    if v.size != sum(sizes) or not np.all(np.isfinite(v)):
        return None
    out, at = [], 0
    for (kind, W, _, _), n in zip(obj.kinks, sizes):
        q = v[at:at + n].copy()
        at += n
        if kind == "abs":
            np.clip(q, -W, W, out=q)
        else:
            from ...methods.normalize import project_simplex

            q = W[0] * project_simplex(q / W[0]) if W[0] > 0 else np.zeros(n)
        out.append(q)
    return out


def _onto_kinks(obj, f, h):
    """(f′, ‖f − f′‖∞ + its rounding): f moved onto its ``abs`` kinks — f′ = f − A_Kᵀ(A_K A_Kᵀ)⁻¹ r_K,
    the least-squares projection on {A_K f′ + b_K = 0} of the entries within h of a kink (a TV term's:
    the values of each fused run replaced by their mean; Σ f unchanged where A_K's rows sum to 0) —
    or None where no such entry is off 0. A choice: at an interior-point answer those entries sit
    ~1e-9 off 0 and each costs W·|r| in the gap (CLS + 1e-1·TV at d = 1,000, PIQP at 1e-10: 975
    kinks, gap 4.8e-10, bound 2.2e-5 > 1e-5); at f′ they cost ~0 and ‖f − f*‖∞ ≤ ‖f − f′‖∞ +
    ‖f′ − f*‖∞ (bound 7e-8, measured)."""
    rows, rhs = [], []
    for kind, _, A, b in obj.kinks:
        if kind != "abs":
            continue
        r = A @ f + b
        k = (np.abs(r) <= h) & (r != 0)
        if k.any():
            rows.append(_csr_rows(A, k))
            rhs.append(r[k])
    if not rows:
        return None
    AK = rows[0] if len(rows) == 1 else sp.vstack(rows, format="csr")
    N = (AK @ AK.T).tocsc()
    N = N + sp.identity(N.shape[0], format="csc") * (1e-14 * max(float(np.max(np.abs(N.data), initial=0.0)), 1e-300))
    try:
        z = _normal_solve(N, np.concatenate(rhs))
    except (RuntimeError, ValueError, np.linalg.LinAlgError):
        return None
    fp = f - np.asarray(AK.T @ z).ravel()
    if not np.all(np.isfinite(fp)):
        return None
    return fp, float(np.max(np.abs(f - fp), initial=0.0)) + 2 * _EPS * float(np.max(np.abs(f), initial=0.0))


def kink_certificate(problem, f: np.ndarray, duals: dict | None, tol: float,
                     enough: float | None = None) -> KinkCertificate | None:
    """The certificate of the module docstring for ``problem`` (objective a :class:`NonSmoothObjective`)
    at f, with the solver's multipliers ``duals`` (recovered from f when None or incomplete); ``tol``:
    the primal feasibility tolerance (ldpopt's check's). None when a constraint is outside the built-in
    class the certificate reads.

    Where ``duals`` carries the kink terms' own multipliers (``duals[KINK_DUALS]``, clipped into their
    sets) the tilted problem is certified with them first, at f and at f moved onto its kinks
    (:func:`_onto_kinks`, its shift added to the bound): no fit. Then (or without them) with
    fitted subgradients: the tilted separable problem is certified with the solver's (λ, y) and with
    its own multipliers recovered at f, the smaller gap kept; last, the fit at f moved onto its kinks.
    Every candidate is a valid bound; the smallest is kept. ``enough``: a distance at which a candidate
    is kept at once when its bound is within it (a choice, as :func:`~.verdict._certificate`'s: the check passes on either
    bound, and a smaller one changes no verdict; the recovery and second certificate cost ~3 ms of
    the ~7 ms of this certificate at d = 1,000); None: all, always."""
    from ..dual.multipliers import multipliers_from_dict
    from ..dual.structure import Structure, compiled_for
    from ..objectives.separable import NotApplicable, separable_for

    obj, est = problem.objective, problem.estimate
    st = compiled_for(problem)
    if not isinstance(st, Structure):  # a user constraint: outside the certificate's class
        return None
    d = est.d
    f = np.asarray(f, float)
    h = KINK_TOL / d
    try:
        lam, y = multipliers_from_dict(st, duals) if duals else (None, None)
    except (ValueError, TypeError):
        lam, y = None, None
    mu_kept: list = []

    def at_point(x, qs, lam_, y_, recover: bool, shift: float = 0.0, stat: float = np.nan, n_kinks: int | None = None,
                 note: str = "") -> list | None:
        """The candidates at point x with kink multipliers qs: (λ, y) given, and (``recover``) the
        tilted problem's own recovered at x; None where the separable part does not apply."""
        tilt = np.zeros(d)
        kink_gap = kink_scale = 0.0
        n = 0
        for (kind, W, A, b), q in zip(obj.kinks, qs):
            tilt += A.T @ q
            r = A @ x + b
            e = W * np.abs(r) - q * r if kind == "abs" else q * (np.max(r) - r)
            kink_gap += float(np.sum(e))
            kink_scale += float(np.sum(np.abs(W * r) if kind == "abs" else np.abs(q * r))) + float(np.sum(np.abs(q * r)))
            n += int(np.count_nonzero(np.abs(r) <= h)) if kind == "abs" else int(np.count_nonzero(r >= np.max(r) - h))
        try:
            sep = separable_for(obj.smooth_part(tilt), est)
        except NotApplicable:
            return None
        if not mu_kept:
            mu = sep.mu(st.l, st.u)
            mu_kept.append(np.where(st.l < st.u, mu, np.inf))
        mu = mu_kept[0]
        J = float(obj.value(x, est))

        def finish(cert) -> KinkCertificate:
            gap = max(float(cert.gap), 0.0) + kink_gap
            floor = float(cert.gap_floor) + 16 * _EPS * kink_scale
            if cert.primal_violation > tol:
                return KinkCertificate(gap, floor, np.nan, stat, n if n_kinks is None else n_kinks, J,
                                       "f is infeasible beyond the tolerance: no distance bound")
            gb = max(gap, floor)
            with np.errstate(divide="ignore"):
                dist = float(np.max(np.sqrt(2.0 * gb / mu), initial=0.0) + np.max(np.sqrt(8.0 * floor / mu), initial=0.0))
            dist = max(dist, float(cert.distance_rounding) if np.isfinite(cert.distance_rounding) else 0.0)
            return KinkCertificate(gap, floor, dist + shift, stat, n if n_kinks is None else n_kinks, J,
                                   "bound from strong convexity of the separable part; " + note)

        out = [finish(certify(sep, st, x, lam_, y_, None, tol))]
        if recover and not _within(out[0]):
            lam_r, y_r = recover_multipliers(sep, st, x)  # the tilted problem's own multipliers at x
            out.append(finish(certify(sep, st, x, lam_r, y_r, None, tol)))
        return out

    def _within(c) -> bool:
        return enough is not None and bool(np.isfinite(c.distance_linf) and c.distance_linf <= enough)

    found: list = []

    def best() -> KinkCertificate | None:
        if not found:
            return None
        return min(found, key=lambda c: c.distance_linf if np.isfinite(c.distance_linf) else np.inf)

    given = _given_kinks(obj, duals)
    moved: Any = False  # False: not computed yet (else _onto_kinks's answer)
    if given is not None and lam is not None:  # the solver's own kink multipliers: no fit
        # f itself first, unless its kink terms' gap alone puts its bound past ``enough`` (√(2·gap/μ) ≥
        # √(2·gap/max μ)): then f moved onto its kinks first, f after it only where that fails too
        # (all candidates then computed, as without ``enough``)
        order = ["f", "moved"]
        if enough is not None:
            kg = sum(float(np.sum(W * np.abs(A @ f + b) - q * (A @ f + b))) for (kind, W, A, b), q in zip(obj.kinks, given)
                     if kind == "abs")
            mu_max = float(np.max(np.where(st.l < st.u, obj.form.curvature(st.l, st.u), 0.0), initial=0.0))
            if mu_max > 0 and np.sqrt(2.0 * max(kg, 0.0) / mu_max) > enough:
                order = ["moved", "f"]
        for which in order:
            if which == "f":
                got = at_point(f, given, lam, y, False, note="the solver's kink multipliers")
                if got is None:
                    return best()
            else:
                moved = _onto_kinks(obj, f, h)
                if moved is None:
                    continue
                got = at_point(moved[0], given, lam, y, False, moved[1],
                               note=f"at f moved onto its kinks (the solver's kink multipliers), ‖f − f′‖∞ = {moved[1]:.1e} added")
                if got is None:
                    continue
            found += got
            if _within(found[-1]):
                return found[-1]
    if lam is None:  # recover (λ, y) for the smooth part alone, a start for the fit
        try:
            lam, y = recover_multipliers(separable_for(obj.smooth_part(), est), st, f)
        except NotApplicable:
            return best()
    qs, n_kinks, stat = _choose(obj, st, f, lam, y, h)
    got = at_point(f, qs, lam, y, True, stat=stat, n_kinks=n_kinks, note="kink subgradients fitted")
    if got is None:
        return best()
    found += got
    if any(_within(c) for c in got):
        return best()
    if moved is False:
        moved = _onto_kinks(obj, f, h)
    if isinstance(moved, tuple):  # the fit at f moved onto its kinks
        fp, shift = moved
        qs, n_kinks, stat = _choose(obj, st, fp, lam, y, h)
        found += at_point(fp, qs, lam, y, True, shift, stat, n_kinks,
                          f"kink subgradients fitted at f moved onto its kinks, ‖f − f′‖∞ = {shift:.1e} added") or []
    return best()


class LinearKinkObjective(UserObjective):
    """A user's cvxpy callable recognised as a linear part plus polyhedral terms (:mod:`.recognise`:
    no per-value, quadratic or geometric-mean term): solved on the cvxpy chain as written, certified
    by :func:`linear_kink_certificate`, the dual of the linear program it is. ``lp``: its
    :class:`~.recognise.Recognised` (not ``form``, which would hand it to the direct QP route: PIQP's
    answers to such programs were up to 7.6e-5 above the optimum where Clarabel's, on the chain, were
    within 3.5e-8 of it; not ``kinks``, which the strictly convex certificate reads). Its optimum need
    not be unique: the certificate bounds J(f) − J*, not a distance."""

    #: recognised: scaled like the built-ins (UserObjective), as its routes were measured
    default_multiplier = "auto"

    def __init__(self, user: UserObjective, lp):
        super().__init__(user.func, name=user.name, multiplier=user.multiplier)
        self.user, self.lp = user, lp
        self.polyhedral = lp.kinks
        self._parameters_seen = lp.parameters  # read by LiveRoute (the expression is not built again)

    def value(self, f, estimate):
        return self.lp.total(f) + self.lp.kink_value(f)

    def __repr__(self):
        return f"LinearKinkObjective({self.name!r}, kink terms={[k[0] for k in self.polyhedral]})"


@dataclass
class LinearKinkCertificate:
    gap: float              # J(f) − (a lower bound on J*), objective units
    gap_floor: float        # its rounding level
    unit: float             # mean |c + Σ Aᵀq| · ‖f‖₁: what moving f by 1/d costs to first order
    stationarity: float     # the fitted subgradients' residual (:func:`_choose`), reported only
    kink_entries: int
    primal_value: float
    note: str = ""


def _lp_dual_over_box(g: np.ndarray, st: Structure) -> tuple[float, float]:
    """(max over λ of min over l ≤ x ≤ u of (g + λ)·x − λ·total, the λ it takes): the dual function
    of the Σ x = total row over the box (λ = 0 without that row). Piecewise linear and concave in λ,
    its slope Σ_{g_v + λ > 0} l_v + Σ_{g_v + λ < 0} u_v − total falls at each breakpoint λ = −g_v: the
    maximum is the first breakpoint, in increasing order, where it is ≤ 0 (any λ gives a valid bound;
    this one the best). −∞ where a bound is infinite on the side the coefficient points to."""
    l, u = st.l, st.u

    def value(lam: float) -> float:
        coef = g + lam
        with np.errstate(invalid="ignore"):
            terms = np.where(coef > 0, coef * l, np.where(coef < 0, coef * u, 0.0))
        return float(np.sum(terms)) - (0.0 if st.sum_free else lam * st.total)

    if st.sum_free or g.size == 0:
        return value(0.0), 0.0
    order = np.argsort(-g, kind="stable")  # breakpoints −g ascending
    lo_sum = np.concatenate([[0.0], np.cumsum(l[order])])          # Σ l over the first j
    up_sum = np.concatenate([np.cumsum(u[order][::-1])[::-1], [0.0]])  # Σ u over the rest
    with np.errstate(invalid="ignore"):
        slope = lo_sum + up_sum - st.total
    j = int(np.argmax(slope <= 0)) if np.any(slope <= 0) else g.size
    lam = float(-g[order[min(max(j, 1), g.size) - 1]])
    return value(lam), lam


def linear_kink_certificate(problem, f: np.ndarray, duals: dict | None) -> LinearKinkCertificate | None:
    """J(f) − D(q, y) for ``problem`` (objective a :class:`LinearKinkObjective`) over ldpopt's built-in
    constraints (None for a user constraint). With J(f) = c·f + const + Σ W|A f + b| + Σ w·max(A f + b)
    and any q with |q| ≤ W (a ``max`` term: q ≥ 0, Σ q = w) and y ≥ 0 on the inequality rows
    (A_r f ≤ b_r), for every feasible x: J(x) ≥ (c + Σ Aᵀq + A_rᵀy)·x + const + Σ q·b − y·b_r, whose
    minimum over l ≤ x ≤ u, Σ x = total is :func:`_lp_dual_over_box` — a lower bound D on J*, so
    J(f) − J* ≤ J(f) − D at a feasible f. The subgradients q are fitted at f (:func:`_choose`, as the
    strictly convex certificate's), the row multipliers y are the solver's (clipped to y ≥ 0 on the
    inequalities; zeros where it gave none), λ the best for them. Its rounding level: 16 ulps of the
    sums it adds."""
    from types import SimpleNamespace

    from ..dual.structure import compiled_for

    obj, est = problem.objective, problem.estimate
    st = compiled_for(problem)
    if not isinstance(st, Structure) or np.any(np.isneginf(st.l)):
        return None
    d = est.d
    f = np.asarray(f, float)
    try:
        lam, y = multipliers_from_dict(st, duals) if duals else (None, None)
    except (ValueError, TypeError):
        lam, y = None, None
    y = np.zeros(st.m) if y is None else np.where(st.ineq, np.maximum(y, 0.0), y)
    form = obj.lp
    walk = SimpleNamespace(form=form, kinks=obj.polyhedral)
    qs, n_kinks, stat = _choose(walk, st, f, lam, y, KINK_TOL / d)
    slope = np.asarray(form.linear, float).copy()
    const = float(form.const)
    size = np.abs(slope)
    for (kind, W, A, b), q in zip(obj.polyhedral, qs):
        if kind == "max":
            q = np.maximum(q, 0.0)
            q = q * (W[0] / q.sum()) if q.sum() > 0 else np.full(q.shape, W[0] / max(q.size, 1))
        else:
            q = np.clip(q, -W, W)
        term = np.asarray(A.T @ q).ravel()
        slope += term
        size += np.abs(np.asarray(abs(A).T @ np.abs(q)).ravel())
        const += float(q @ b)
    fitted = slope.copy()  # c + Σ Aᵀq: the objective's subgradient the unit reads
    if st.m:
        slope += np.asarray(st.A.T @ y).ravel()
        size += np.asarray(abs(st.A).T @ np.abs(y)).ravel()
        const -= float(y @ st.b)
    inner, lam_best = _lp_dual_over_box(slope, st)
    lower = const + inner
    J = float(obj.value(f, est))
    reach = np.where(np.isfinite(st.u), np.maximum(np.abs(st.l), np.abs(st.u)), np.maximum(np.abs(st.l), np.abs(f)))
    floor = 16 * _EPS * (float(np.sum((size + abs(lam_best)) * reach)) + abs(const) + abs(J) + abs(lam_best * st.total))
    unit = float(np.mean(np.abs(fitted))) * float(np.sum(np.abs(f)))
    note = ("the dual of the linear program: fitted kink subgradients, the solver's row multipliers, "
            "the best Σ f multiplier for them")
    return LinearKinkCertificate(J - lower, floor, unit, stat, n_kinks, J, note)
