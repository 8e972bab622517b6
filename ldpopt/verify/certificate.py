r"""A solver-free certificate that a candidate f solves  min Σ_v J_v(f_v)  on the simplex.

This is verify's own minimal certificate (a stand-in for ``ldpopt.problems.certificate`` when it
lands; :func:`certify` is the one function to swap). It uses only the separability of J and the KKT
conditions of arXiv App. A/B (NDSS App. A), nothing from the code under test.

Multiplier recovery. On f's support S = {f_v > 0} stationarity reads J_v'(f_v) = λ, so
λ₀ = mean_S J_v'(f_v) (exact when f is optimal, to rounding); up to 3 Newton steps on
Σ_v x*_v(λ) = 1 (slope Σ 1/J_v'') then remove the rounding of λ₀, which the mass term would
otherwise amplify by Σ 1/J_v'' (large for the likelihoods).

The bound. For a λ, let x*(λ) be the per-value argmin of J_v(x) − λx over [0, 1] (the box is
implied by the simplex, so adding it changes no optimum): closed form for a quadratic
a_v(x − y_v)² (clip(y + λ/(2a), 0, 1)), vectorised bisection on J_v' otherwise. x*(λ) is the exact
optimum of the problem with total mass m(λ) = Σ x*(λ), and every x*_v is non-decreasing in λ, so
moving the mass from m(λ) to 1 moves every coordinate the same way by at most |m(λ) − 1| in total:

    ‖f − f*‖_∞ ≤ max_v |f_v − x*_v(λ)| + |Σ_v x*_v(λ) − 1|                    (rigorous, any λ)

``max_abs_error_bound`` is that number, in frequency units. Its tolerance is the float64 rounding
of the computation (``tolerance_basis`` spells it out): e_v = 8u(|f_v| + |x*_v| + (s_v + |λ|)/J_v'')
+ 2⁻⁶⁴ per value not robustly at a bound, tolerance = Σ_v e_v + max_v e_v (+ the closed form's
declared accuracy), s_v the size of the terms J_v' is computed from (they
cancel in the binomial's). Also reported: the Lagrangian duality gap J(f) − D(λ), the stationarity
max_S |J_v'(f_v) − λ|, primal residuals Σf − 1 and min f.
"""

from __future__ import annotations

import numpy as np
from scipy.special import xlogy

from .tolerances import U

FAMILIES = ("cls", "posterior", "weighted-mle", "multinomial", "binomial")
_BISECTIONS = 64
_NEWTON = 3


def _family(objective: str, est, mean=None):
    """(value, gradient, hessian) per coordinate, written here from the objectives' formulas
    (arXiv Eq. 13 for the weighted MLE, Eq. 11 per count for the likelihoods), scaled by 1/n."""
    if objective in ("cls", "posterior"):
        y = est.f_tilde if objective == "cls" else np.asarray(mean, dtype=np.float64)
        if y is None or y.shape != (est.d,):
            raise ValueError("objective='posterior' needs mean= of length d")
        return ("quadratic", np.ones(est.d), y)
    p, q, n, c = float(est.p), float(est.q), float(est.n), np.asarray(est.counts, dtype=np.float64)
    k = p - q
    if objective == "weighted-mle":
        A, E = q * (1 - q), k * (1 - p - q)
        r = c / n - q

        def val(x):
            return (r - k * x) ** 2 / (A + E * x)

        def grad(x):
            s, t = A + E * x, r - k * x
            return (-2 * k * t * s - E * t * t) / (s * s)

        def hess(x):
            s, t = A + E * x, r - k * x
            return 2 * (k * s + E * t) ** 2 / s ** 3

        def gscale(x):
            s, t = A + E * x, r - k * x
            return (2 * abs(k) * np.abs(t) * np.abs(s) + abs(E) * t * t) / (s * s)
    elif objective == "multinomial":
        def val(x):
            return -xlogy(c, q + k * x) / n

        def grad(x):
            return -k * c / (n * (q + k * x))

        def hess(x):
            return k * k * c / (n * (q + k * x) ** 2)

        def gscale(x):
            return np.abs(grad(x))
    elif objective == "binomial":
        def val(x):
            pi = q + k * x
            return -(xlogy(c, pi) + xlogy(n - c, 1 - pi)) / n

        def grad(x):
            pi = q + k * x
            with np.errstate(divide="ignore"):
                return -k * (c / pi - (n - c) / (1 - pi)) / n

        def hess(x):
            pi = q + k * x
            with np.errstate(divide="ignore"):
                return k * k * (c / pi ** 2 + (n - c) / (1 - pi) ** 2) / n

        def gscale(x):  # the two terms cancel in J_v': their size sets J_v''s rounding
            pi = q + k * x
            with np.errstate(divide="ignore"):
                return abs(k) * (c / pi + (n - c) / (1 - pi)) / n
    else:
        raise ValueError(f"no certificate for objective {objective!r}; families: {FAMILIES}")
    return ("separable", val, grad, hess, gscale)


class _Separable:
    """J = Σ_v J_v on one estimate, with J_v'(0), J_v'(1) cached (they do not depend on λ) and
    restriction to a subset of values, so that only values off a bound cost more than one pass."""

    def __init__(self, objective, est, mean):
        self.objective, self.est = objective, est
        self.fam = _family(objective, est, mean)
        self.quadratic = self.fam[0] == "quadratic"
        if not self.quadratic:
            z = np.zeros(est.d)
            self.g0, self.g1 = self.fam[2](z), self.fam[2](z + 1.0)

    def on(self, idx):
        if self.quadratic:
            return ("quadratic", self.fam[1][idx], self.fam[2][idx])
        return _family(self.objective, _SubEstimate(self.est, idx))


class _SubEstimate:
    """The fields the families read, restricted to the values idx."""

    def __init__(self, est, idx):
        self.p, self.q, self.n, self.d = est.p, est.q, est.n, len(idx)
        self.counts = np.asarray(est.counts)[idx]
        self.f_tilde = None


def _argmin(P: _Separable, lam: float):
    """x*(λ) = argmin_{x ∈ [0,1]} J_v(x) − λx, and the mask of values robustly at a bound."""
    if P.quadratic:
        _, a, y = P.fam
        t = y + lam / (2 * a)
        x = np.clip(t, 0.0, 1.0)
        slack = 8 * U * (np.abs(y) + abs(lam) / (2 * a))
        return x, (t < -slack) | (t > 1 + slack)
    g0, g1 = P.g0 - lam, P.g1 - lam
    at0, at1 = g0 >= 0, g1 <= 0
    idx = np.flatnonzero(~(at0 | at1))
    grad = P.on(idx)[2]
    lo, hi = np.zeros(idx.size), np.ones(idx.size)
    for _ in range(_BISECTIONS if idx.size else 0):  # vectorised over the values, not a loop over them
        mid = 0.5 * (lo + hi)
        up = grad(mid) - lam >= 0
        hi = np.where(up, mid, hi)
        lo = np.where(up, lo, mid)
    x = np.where(at1, 1.0, 0.0)
    x[idx] = 0.5 * (lo + hi)
    robust = ((at0 & (g0 > 8 * U * (np.abs(P.g0) + abs(lam))))
              | (at1 & (-g1 > 8 * U * (np.abs(P.g1) + abs(lam)))))
    return x, robust


def _lagrangian_terms(fam, x, lam):
    if fam[0] == "quadratic":
        _, a, y = fam
        return a * (x - y) ** 2 - lam * x
    return fam[1](x) - lam * x


def _derivs(fam, x):
    """J_v'(x), J_v''(x) and the size of the terms J_v' is computed from (its rounding scale)."""
    if fam[0] == "quadratic":
        _, a, y = fam
        return 2 * a * (x - y), 2 * a, 2 * a * (np.abs(x) + np.abs(y))
    return fam[2](x), fam[3](x), fam[4](x)


def certify(objective: str, est, f, *, mean=None, closed_tol: float = 0.0) -> dict:
    """Certificate for ``f`` solving ``objective`` on the simplex (see the module docstring).

    Returns a dict of numbers: ``max_abs_error_bound`` (≥ ‖f − f*‖_∞), ``tolerance`` (what rounding
    allows; plus ``closed_tol``), ``tolerance_basis``, ``multiplier``, ``stationarity``,
    ``mass_error`` |Σx*(λ) − 1|, ``duality_gap``, ``sum_error``, ``min_f``."""
    f = np.asarray(f, dtype=np.float64)
    if f.shape != (est.d,) or not np.all(np.isfinite(f)):
        return {"max_abs_error_bound": np.inf, "tolerance": 0.0, "tolerance_basis": "f not finite of length d",
                "multiplier": np.nan}
    P = _Separable(objective, est, mean)
    fc = np.clip(f, 0.0, 1.0)
    on = np.flatnonzero(f > 0)
    g_on = _derivs(P.on(on), fc[on])[0] if on.size else np.zeros(0)
    lam = float(np.mean(g_on)) if on.size else float(np.min(_derivs(P.fam, fc)[0]))
    lam0 = lam
    x, robust = _argmin(P, lam)
    for _ in range(_NEWTON):  # Newton on m(λ) = 1, dm/dλ = Σ_interior 1/J_v''(x*_v): tightens the bound
        inner = np.flatnonzero((x > 0) & (x < 1))
        h = np.broadcast_to(_derivs(P.on(inner), x[inner])[1], inner.shape)
        slope = float(np.sum(1.0 / h)) if inner.size else 0.0
        if not slope > 0 or abs(float(np.sum(x)) - 1.0) <= 8 * U:
            break
        lam_new = lam - (float(np.sum(x)) - 1.0) / slope
        x_new, robust_new = _argmin(P, lam_new)
        if abs(float(np.sum(x_new)) - 1.0) >= abs(float(np.sum(x)) - 1.0):
            break
        lam, x, robust = lam_new, x_new, robust_new
    nr = np.flatnonzero(~robust)  # a value robustly at a bound is exact: no rounding term
    _, hx, gs = _derivs(P.on(nr), x[nr])
    with np.errstate(divide="ignore", invalid="ignore"):
        e = 8 * U * (np.abs(f[nr]) + np.abs(x[nr]) + (gs + abs(lam)) / hx) + 2.0 ** -_BISECTIONS
    e = np.where(np.isfinite(e), e, np.inf)
    tol = float(np.sum(e) + (np.max(e) if e.size else 0.0)) + float(closed_tol)
    mass = float(np.sum(x))
    bound = float(np.max(np.abs(f - x))) + abs(mass - 1.0)
    both = np.flatnonzero((fc != 0) | (x != 0))  # elsewhere both terms are J_v(0) and cancel exactly
    sub = P.on(both)
    gap = float(np.sum(_lagrangian_terms(sub, fc[both], lam) - _lagrangian_terms(sub, x[both], lam))) \
        + lam * (float(np.sum(fc)) - 1.0)
    return {"max_abs_error_bound": bound, "tolerance": tol,
            "tolerance_basis": "float64 rounding: sum_v 8u(|f_v|+|x*_v|+(|terms of J_v'|+|lam|)/J_v'') over values not "
                               "robustly at a bound, + max term" + (f" + closed form's stated accuracy {closed_tol:g}"
                                                                   if closed_tol else ""),
            "multiplier": lam, "multiplier_from_support": lam0,
            "stationarity": float(np.max(np.abs(g_on - lam))) if on.size else np.inf,
            "mass_error": abs(mass - 1.0), "max_abs_f_minus_xstar": float(np.max(np.abs(f - x))),
            "duality_gap": gap, "sum_error": abs(float(np.sum(f)) - 1.0), "min_f": float(np.min(f)),
            "values_not_at_bound": int(nr.size)}
