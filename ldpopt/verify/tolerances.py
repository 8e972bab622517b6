"""Metrics and the tolerances they are compared with, each derived from an accuracy that can be
stated: float64 rounding (u = 2⁻⁵²), a solver's stopping tolerances, or a Monte-Carlo standard error.

Details: docs/experiments.md, section `ldpopt.verify.tolerances`.
"""

from __future__ import annotations

import math

import numpy as np

#: unit roundoff of float64 (numpy's eps = 2u; we use eps, the usual rounding-error unit in bounds)
U = float(np.finfo(np.float64).eps)
#: KKT tolerance (relative) for a closed form's own optimality conditions (printed-formula findings)
KKT_TOL = 1e-8
#: SCS settings when it referees a likelihood (fallback to Clarabel)
_SCS_OPTS = {"eps_abs": 1e-9, "eps_rel": 1e-9, "max_iters": 100_000}


def resolution(d: int) -> float:
    """1/(10 d): an equivalence referee must resolve errors of a tenth of the mean frequency."""
    return 1.0 / (10.0 * d)


def se_floor(x: np.ndarray) -> np.ndarray:
    """Per-value floor on a Monte-Carlo standard error: the rounding of a mean of r float64 values,
    8·u·max_r|x| (u: :data:`U`). When the outputs barely vary (at ε ≥ 14 f̃ is nearly
    deterministic) the sample SE is ~0 and a rounding-level bias would give z = 10¹⁵; with the floor
    a bias within rounding is z ≤ 1/8."""
    return 8.0 * U * np.max(np.abs(x), axis=0)


def simplex_kkt(g: np.ndarray, f: np.ndarray, support_tol: float = 0.0, scale: float | None = None) -> dict:
    r"""KKT residuals of f for *minimising* J on :math:`\{f ≥ 0, Σ f = 1\}`, given :math:`g = ∇J(f)`: with :math:`λ = ⟨g, f⟩`
    (the multiplier when they hold), stationarity :math:`\max_{f_v > tol} |g_v - λ|` and dual feasibility
    :math:`\max_{f_v ≤ tol} (λ - g_v)_+`, both relative to ``scale`` (default max|g|; pass a gradient size
    that does not vanish at the optimum, e.g. :math:`\max |∇J|` at the uniform distribution, when f̃ may
    already lie on the simplex and :math:`∇J(f) = 0`). A diagnostic reported in the solver referee's
    rows, not a verdict: whether f is optimal is decided by the problem layer's certificate
    (:func:`ldpopt.problems.certificate`, the certificate referee).

    Parameters
    ----------
    g : ndarray, shape (d,)
        The gradient :math:`∇J(f)`.
    f : ndarray, shape (d,)
        The point, on the simplex.
    support_tol : float, default 0.0
        Entries above it count as the support.
    scale : float, optional
        The gradient size the residuals are relative to (default max|g|).

    Returns
    -------
    dict
        ``kkt_stationarity``, ``kkt_dual``, ``multiplier`` and ``kkt`` (their maximum).

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt import verify
    >>> verify.tolerances.simplex_kkt(np.array([1.0, 1.0, 3.0]), np.array([0.5, 0.5, 0.0]))  # J = <g, f>: optimal
    {'kkt_stationarity': 0.0, 'kkt_dual': 0.0, 'multiplier': 1.0, 'kkt': 0.0}
    """
    g = np.asarray(g, dtype=np.float64)
    lam = float(np.sum(g * f) / max(float(np.sum(f)), 1e-300))
    on = f > support_tol
    gmax = float(np.max(np.abs(g))) if np.all(np.isfinite(g)) else np.inf
    scale = max(gmax, float(scale or 0.0), 1e-300)
    stat = float(np.max(np.abs(g[on] - lam))) if on.any() else np.inf
    dual = float(np.max(np.maximum(lam - g[~on], 0.0))) if (~on).any() else 0.0
    return {"kkt_stationarity": stat / scale, "kkt_dual": dual / scale, "multiplier": lam,
            "kkt": max(stat, dual) / scale}


def _hessian_diag(obj, f: np.ndarray, est) -> np.ndarray:
    """Diagonal of ∇²J at f for a separable J, by a central difference of the analytic gradient
    (all coordinates moved at once: separability makes the cross terms zero)."""
    h = 1e-7 * max(float(np.max(np.abs(f))), 1e-3)
    lo = np.clip(f - h, 0.0, None)
    hi = lo + 2 * h
    return (obj.gradient(hi, est) - obj.gradient(lo, est)) / (hi - lo)


def _gradient_scale(obj, est) -> float:
    r""":math:`\max |∇J|` at the uniform distribution: the size of the gradient when f is off by O(1/d)."""
    g = obj.gradient(np.full(est.d, 1.0 / est.d), est)
    return float(np.max(np.abs(g[np.isfinite(g)]))) if np.isfinite(g).any() else 0.0


def _solver_tolerance(solver: str, objective) -> tuple[float, float, float]:
    """(abs, rel, feas) stopping tolerances the solve used (ldpopt defaults + objective overrides)."""
    from ..problems.problem import DEFAULT_SOLVER_OPTIONS

    opts = dict(DEFAULT_SOLVER_OPTIONS.get(solver, {}))
    opts.update(getattr(objective, "solver_options", {}).get(solver, {}))
    if solver == "CLARABEL":
        return opts.get("tol_gap_abs", 1e-8), opts.get("tol_gap_rel", 1e-8), opts.get("tol_feas", 1e-8)
    if solver == "OSQP":
        return opts.get("eps_abs", 1e-3), opts.get("eps_rel", 1e-3), opts.get("eps_abs", 1e-3)
    if solver == "SCS":
        return _SCS_OPTS["eps_abs"], _SCS_OPTS["eps_rel"], _SCS_OPTS["eps_abs"]
    return 1e-8, 1e-8, 1e-8


def solver_distance_bound(tol_j: float, j_gap_below: float, mu: float) -> float:
    """For a μ-strongly convex J, a point within Δ of the optimum in objective lies within √(2Δ/μ)
    of it (ℓ2, hence ℓ∞)."""
    return (math.sqrt(2.0 * (tol_j + max(j_gap_below, 0.0)) / mu) if mu > 0 else math.inf) + 1e-15
