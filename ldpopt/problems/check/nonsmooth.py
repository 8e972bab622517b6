"""A certificate for objectives with kinks: a strictly convex separable part plus polyhedral terms —
total variation Σ W|f_{i+1} − f_i| (along any order), a weighted L1 distance Σ W|f − c|, w·max(A f + b) —
over ldpopt's built-in linear constraints. Derivation (docs/problems.md, "Objectives with kinks"):
Notes: docs/problems.md, "ldpopt.problems.check.nonsmooth".
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import scipy.sparse as sp
import scipy.sparse.linalg as sla

from ..objectives.builtins import UserObjective

__all__ = ["KINK_TOL", "KinkCertificate", "NonSmoothObjective", "kink_certificate"]

_EPS = np.finfo(float).eps
#: an entry of A f + b within KINK_TOL/d of 0 (of the maximum, for a max term) is treated as a kink
KINK_TOL = 1e-3


class NonSmoothObjective(UserObjective):
    """A user's cvxpy callable recognised as a strictly convex separable part plus polyhedral terms
    (:mod:`.recognise`): solved on the cvxpy chain as written, certified by :func:`kink_certificate`."""

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
    rho = grad + (0.0 if lam is None else lam) + rows
    for (kind, W, A, b), q, k in zip(obj.kinks, qs, kinked):
        rho = rho + (A[~k].T @ q[~k] if np.any(~k) else 0.0)
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
        base = rho + sum((A[k & ~fr].T @ q[k & ~fr]) for (_, _, A, _), q, k, fr in zip(obj.kinks, qs, kinked, free))
        B = sp.vstack([A[fr][:, eq] for (_, _, A, _), fr in zip(obj.kinks, free)]).tocsc()
        N = (B @ B.T).tocsc()
        N = N + sp.identity(N.shape[0], format="csc") * (1e-14 * max(float(abs(N).max()), 1e-300))
        sol = sla.splu(N).solve(np.asarray(B @ (-base[eq])).ravel())
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
        full = rho + sum((A[k].T @ q[k]) for (_, _, A, _), q, k in zip(obj.kinks, qs, kinked))
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
    resid = rho[inner] + sum(((A[k].T @ q[k])[inner] if np.any(k) else 0.0)
                             for (_, _, A, _), q, k in zip(obj.kinks, qs, kinked))
    scale = max(float(np.max(np.abs(grad), initial=0.0)), 1e-300)
    stat = float(np.max(np.abs(resid), initial=0.0)) / scale
    return qs, int(sum(sizes)), stat


def kink_certificate(problem, f: np.ndarray, duals: dict | None, tol: float) -> KinkCertificate | None:
    """The certificate of the module docstring for ``problem`` (objective a :class:`NonSmoothObjective`)
    at f, with the solver's multipliers ``duals`` (recovered from f when None or incomplete); ``tol``:
    the primal feasibility tolerance (ldpopt's check's). None when a constraint is outside the built-in
    class the certificate reads."""
    from ..objectives.separable import NotApplicable, separable_for
    from ..solvers.structured.multipliers import multipliers_from_dict
    from ..solvers.structured.structure import Structure, compiled_for
    from .certificate import certify, recover_multipliers

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
    if lam is None:  # recover (λ, y) for the smooth part alone, a start for the fit
        try:
            lam, y = recover_multipliers(separable_for(obj.smooth_part(), est), st, f)
        except NotApplicable:
            return None
    qs, n_kinks, stat = _choose(obj, st, f, lam, y, h)
    tilt = np.zeros(d)
    kink_gap = kink_scale = 0.0
    for (kind, W, A, b), q in zip(obj.kinks, qs):
        tilt += A.T @ q
        r = A @ f + b
        e = W * np.abs(r) - q * r if kind == "abs" else q * (np.max(r) - r)
        kink_gap += float(np.sum(e))
        kink_scale += float(np.sum(np.abs(W * r) if kind == "abs" else np.abs(q * r))) + float(np.sum(np.abs(q * r)))
    try:
        sep = separable_for(obj.smooth_part(tilt), est)
    except NotApplicable:
        return None
    certs = [certify(sep, st, f, lam, y, None, tol)]
    lam_r, y_r = recover_multipliers(sep, st, f)  # the tilted problem's own multipliers at f
    certs.append(certify(sep, st, f, lam_r, y_r, None, tol))
    cert = min(certs, key=lambda c: c.gap if np.isfinite(c.gap) else np.inf)
    gap = max(float(cert.gap), 0.0) + kink_gap
    floor = float(cert.gap_floor) + 16 * _EPS * kink_scale
    mu = sep.mu(st.l, st.u)
    mu = np.where(st.l < st.u, mu, np.inf)
    J = float(obj.value(f, est))
    if cert.primal_violation > tol:
        return KinkCertificate(gap, floor, np.nan, stat, n_kinks, J,
                               "f is infeasible beyond the tolerance: no distance bound")
    gb = max(gap, floor)
    with np.errstate(divide="ignore"):
        dist = float(np.max(np.sqrt(2.0 * gb / mu), initial=0.0) + np.max(np.sqrt(8.0 * floor / mu), initial=0.0))
    dist = max(dist, float(cert.distance_rounding) if np.isfinite(cert.distance_rounding) else 0.0)
    return KinkCertificate(gap, floor, dist, stat, n_kinks, J,
                           "bound from strong convexity of the separable part; kink subgradients fitted")
