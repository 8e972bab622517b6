"""Smooth objectives that are not separable, for the Newton / sequential-QP route (:mod:`.sqp`).
Notes: docs/notes/problems.md, "ldpopt.problems.objectives.smooth".
"""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

import cvxpy as cp
import numpy as np
import scipy.sparse as sp

from .builtins import BuiltObjective, Objective

__all__ = ["SmoothObjective", "SmoothTerms", "smooth_terms"]

#: atoms whose derivative is unbounded at the edge of z's domain (module docstring)
_STEEP = ("entr", "log", "kl_div", "rel_entr")


class SmoothObjective(Objective):
    r"""A user objective with its exact derivatives, :math:`J: \mathbb{R}^d \to \mathbb{R}` convex and twice differentiable on its
    domain, solved by the Newton / sequential-QP route over any constraints (:mod:`.sqp`).

    ``value(f, estimate) -> float``, ``gradient(f, estimate) -> (d,) array``, ``hessian(f, estimate)``
    -> a (d, d) scipy sparse matrix (or a (d,) array: a diagonal Hessian), positive semidefinite.
    ``cvxpy_expr(f, estimate)`` (optional): the same J as a cvxpy expression, for the conic chain as a
    fallback when the route does not certify, and for ``solve(solver=...)`` by name; without it only the
    Newton route can solve the problem. ``lower`` / ``upper`` (optional, scalars or length-d arrays): J
    is defined with a finite gradient only for lower < f < upper (e.g. ``lower=0`` for a log or entropy
    term); each step then stays a fraction 0.9 of the way from f to that edge (module docstring).

    KKT conditions certified by ldpopt's check (:mod:`.verdict`), for constraints :math:`g_k(f) ≤ 0` and
    :math:`h_j(f) = 0` with multipliers :math:`y_k ≥ 0`, :math:`ν_j` (the route's own, keyed like ``Solution.duals``):

    .. math::

        \begin{aligned}
        &∇J(f) + Σ_k y_k ∇g_k(f) + Σ_j ν_j ∇h_j(f) = 0 && \text{(stationarity)},\\
        &g_k(f) ≤ 0, \; h_j(f) = 0 && \text{(primal feasibility)},\\
        &y_k ≥ 0, \; y_k g_k(f) = 0 && \text{(dual feasibility, complementary slackness)},
        \end{aligned}

    measured relative to :math:`\nabla J` (stationarity), by the Lagrangian duality gap, and with a :math:`\lVert f - f^* \rVert_∞` bound
    from ``curvature_floor`` when given (a lower bound on :math:`λ_{\min}(∇^2 J)` over the feasible set; default
    none, so no bound).

    Parameters
    ----------
    value : callable
        ``(f, estimate) -> float``: J(f).
    gradient : callable
        ``(f, estimate) -> (d,) array``: :math:`\nabla J(f)`.
    hessian : callable
        ``(f, estimate)`` -> a (d, d) scipy sparse matrix, or a (d,) array (a diagonal Hessian).
    cvxpy_expr : callable or None, default None
        ``(f, estimate) -> cvxpy expression``: the same J, for the conic chain.
    name : str, default "smooth"
        Its name in the Solution.
    lower, upper : float, array_like (d,) or None, default None
        J's open domain lower < f < upper; None: unbounded on that side.
    curvature_floor : callable or None, default None
        ``(f, estimate) -> float``: a lower bound on :math:`λ_{\min}(\nabla^2 J)` over the feasible set.

    Raises
    ------
    TypeError
        ``value``, ``gradient`` or ``hessian`` not callable, or an optional one neither callable nor None.

    Examples
    --------
    >>> import numpy as np
    >>> import ldpopt
    >>> est = ldpopt.oracles.get("grr", 1.0, 4).estimate(np.array([46_000, 30_000, 15_000, 9_000]), 100_000)
    >>> from ldpopt.problems import SmoothObjective
    >>> squares = SmoothObjective(lambda f, e: float(np.sum((f - e.f_tilde) ** 2)), lambda f, e: 2 * (f - e.f_tilde),
    ...                           lambda f, e: np.full(e.d, 2.0), name="squares", curvature_floor=lambda f, e: 2.0)
    >>> sol = ldpopt.Problem(est, squares).solve()   # ‖f − f̃‖²: CLS, so Norm-Sub's answer
    >>> sol.status, bool(np.abs(sol.f - ldpopt.postprocess(est, "norm-sub")).max() < 1e-7)
    ('optimal', True)
    """

    scaled = False

    def __init__(self, value: Callable, gradient: Callable, hessian: Callable, cvxpy_expr: Callable | None = None,
                 *, name: str = "smooth", lower=None, upper=None, curvature_floor: Callable | None = None):
        for label, fn in (("value", value), ("gradient", gradient), ("hessian", hessian)):
            if not callable(fn):
                raise TypeError(f"{label} must be callable, got {type(fn).__name__}")
        for label, optional in (("cvxpy_expr", cvxpy_expr), ("curvature_floor", curvature_floor)):
            if optional is not None and not callable(optional):
                raise TypeError(f"{label} must be callable or None, got {type(optional).__name__}")
        self._value, self._gradient, self._hessian = value, gradient, hessian
        self.cvxpy_expr, self._floor, self.name = cvxpy_expr, curvature_floor, name
        self.lower, self.upper = lower, upper

    def build(self, f, x, scale, estimate):
        if self.cvxpy_expr is None:  # only the Newton route solves it; the cvxpy problem carries the constraints
            return BuiltObjective(cp.sum(0 * x))
        expr = self.cvxpy_expr(f, estimate)
        if not isinstance(expr, cp.Expression) or expr.size != 1:
            raise TypeError(f"cvxpy_expr of {self.name!r} must return a scalar cvxpy expression")
        return BuiltObjective(cp.reshape(expr, ()) if expr.shape != () else expr)

    def value(self, f, estimate):
        return float(self._value(np.asarray(f, float), estimate))

    def gradient(self, f, estimate):
        g = np.asarray(self._gradient(np.asarray(f, float), estimate), float)
        if g.shape != (estimate.d,):
            raise ValueError(f"gradient of {self.name!r} must return shape ({estimate.d},), got {g.shape}")
        return g

    def hessian(self, f, estimate):
        r""":math:`\nabla^2 J(f)` from the declared ``hessian``, as a (d, d) scipy sparse array.

        Parameters
        ----------
        f : array_like (d,)
            The point.
        estimate : Estimate
            The raw estimate.

        Returns
        -------
        scipy.sparse.csr_array (d, d)
            A (d,) result is taken as the diagonal.

        Raises
        ------
        ValueError
            The declared function returned neither a (d, d) sparse matrix nor a (d,) array.

        Examples
        --------
        >>> import numpy as np
        >>> import ldpopt
        >>> est = ldpopt.oracles.get("grr", 1.0, 4).estimate(np.array([46_000, 30_000, 15_000, 9_000]), 100_000)
        >>> from ldpopt.problems import SmoothObjective
        >>> squares = SmoothObjective(lambda f, e: float(np.sum((f - e.f_tilde) ** 2)), lambda f, e: 2 * (f - e.f_tilde),
        ...                           lambda f, e: np.full(e.d, 2.0), name="squares", curvature_floor=lambda f, e: 2.0)
        >>> squares.hessian(np.full(4, 0.25), est).toarray().diagonal()
        array([2., 2., 2., 2.])
        """
        H = self._hessian(np.asarray(f, float), estimate)
        if isinstance(H, np.ndarray) and H.shape == (estimate.d,):
            return sp.diags(H).tocsr()
        if not sp.issparse(H) or H.shape != (estimate.d, estimate.d):
            raise ValueError(f"hessian of {self.name!r} must return a ({estimate.d}, {estimate.d}) scipy sparse "
                             f"matrix or a ({estimate.d},) diagonal, got {type(H).__name__}")
        return sp.csr_array(H)

    def curvature_floor(self, f, estimate) -> float:
        r"""The declared lower bound on :math:`λ_{\min}(∇^2 J)` (clipped at 0), 0.0 when none was declared.

        Parameters
        ----------
        f : array_like (d,)
            The point.
        estimate : Estimate
            The raw estimate.

        Returns
        -------
        float

        Examples
        --------
        >>> import numpy as np
        >>> import ldpopt
        >>> est = ldpopt.oracles.get("grr", 1.0, 4).estimate(np.array([46_000, 30_000, 15_000, 9_000]), 100_000)
        >>> from ldpopt.problems import SmoothObjective
        >>> squares = SmoothObjective(lambda f, e: float(np.sum((f - e.f_tilde) ** 2)), lambda f, e: 2 * (f - e.f_tilde),
        ...                           lambda f, e: np.full(e.d, 2.0), name="squares", curvature_floor=lambda f, e: 2.0)
        >>> squares.curvature_floor(np.full(4, 0.25), est)
        2.0
        """
        return 0.0 if self._floor is None else max(float(self._floor(np.asarray(f, float), estimate)), 0.0)

    def domain(self, estimate):
        """J's domain (lower, upper) per value, ±inf where no bound was declared.

        Parameters
        ----------
        estimate : Estimate
            The raw estimate (its d).

        Returns
        -------
        (ndarray (d,), ndarray (d,))

        Examples
        --------
        >>> import numpy as np
        >>> import ldpopt
        >>> est = ldpopt.oracles.get("grr", 1.0, 4).estimate(np.array([46_000, 30_000, 15_000, 9_000]), 100_000)
        >>> from ldpopt.problems import SmoothObjective
        >>> entropy = SmoothObjective(lambda f, e: float(np.sum(f * np.log(f))), lambda f, e: np.log(f) + 1,
        ...                           lambda f, e: 1 / f, lower=0.0)
        >>> entropy.domain(est)
        (array([0., 0., 0., 0.]), array([inf, inf, inf, inf]))
        """
        d = estimate.d
        lo = np.full(d, -np.inf) if self.lower is None else np.broadcast_to(np.asarray(self.lower, float), (d,))
        hi = np.full(d, np.inf) if self.upper is None else np.broadcast_to(np.asarray(self.upper, float), (d,))
        return lo, hi

    def __repr__(self):
        return f"SmoothObjective({self.name!r})"


class SmoothTerms:
    """What the sequential-QP loop reads from a smooth objective (module docstring)."""

    label = "smooth objective"
    #: fraction to the boundary per step (module docstring). 0.99 was tried: at Retail (CLS + 1e-4·KL +
    #: Σ(f_{v+1} − f_v)²) the loop then stalled uncertified, at 0.9 it certified (measured); so did 0.9
    #: raised per value to 0.99…0.9999 after steps that ended on its bound (measured)
    fraction = 0.9
    #: the QP chain: Clarabel first, at 1e-13. A Newton QP here has curvatures λ/f_v spread over many
    #: orders of magnitude; PIQP at 1e-12 ends at its iteration limit, and at its 1e-10 defaults the loop
    #: stalled with the gap at 1.2e-6 > 1e-6 after 8 QPs, where Clarabel at 1e-13 certified after 10
    #: (Retail, simplex and simplex + SubsetSum, measured); starting from the per-value part's own
    #: minimiser instead of f₀ below was tried and stalled (values at 1e-20 with curvature λ/f ≈ 1e16)
    chain = ("CLARABEL", "PIQP", "OSQP")
    qp_options: ClassVar[dict[str, dict[str, float]]] = {
        "CLARABEL": {"tol_gap_abs": 1e-13, "tol_gap_rel": 1e-13, "tol_feas": 1e-13}}

    def __init__(self, objective, estimate):
        self.obj, self.est = objective, estimate
        self.lo, self.hi = objective.domain(estimate)
        self.steep = bool(np.any(np.isfinite(self.lo)) or np.any(np.isfinite(self.hi)))

    def gradient(self, f):
        return self.obj.gradient(f, self.est)

    def hessian(self, f):
        return sp.csr_array(self.obj.hessian(f, self.est))

    def hessian_parts(self, f):
        """(S, L): ∇²J(f) = S + LᵀL, S sparse CSR and L a (k, d) sparse factor of the objective's
        low-rank part or None (an objective without ``hessian_parts``: its whole Hessian, L None)."""
        if hasattr(self.obj, "hessian_parts"):
            H, L = self.obj.hessian_parts(f, self.est)
            return sp.csr_array(H), L
        return self.hessian(f), None

    def hessian_negative(self, f):
        """N (k, d) with ∇²J(f) = S + LᵀL − NᵀN (:meth:`hessian_parts`), or None (an objective without
        ``hessian_negative``, or none at f)."""
        neg = getattr(self.obj, "hessian_negative", None)
        return None if neg is None else neg(f, self.est)

    def change(self, f, delta) -> float:
        """J(f + δ) − J(f) (the objective's own ``change`` when it has one, without cancellation); +inf
        outside the domain."""
        g = f + delta
        if np.any(g <= self.lo) or np.any(g >= self.hi):
            return np.inf
        with np.errstate(all="ignore"):
            if hasattr(self.obj, "change"):
                out = self.obj.change(f, delta)
            else:
                out = self.obj.value(g, self.est) - self.obj.value(f, self.est)
        return float(out) if np.isfinite(out) else np.inf

    def domain_bounds(self, f, fraction):
        """Per-value bounds keeping a step a ``fraction`` of the way from f to the domain's edge."""
        with np.errstate(invalid="ignore"):  # ±inf where a side is free
            return self.lo + (1.0 - fraction) * (f - self.lo), self.hi - (1.0 - fraction) * (self.hi - f)

    def start(self):
        """f₀: ½(c + 1/d), c = clip(f̃, 0, 1) scaled down to Σ c ≤ 1 — near the data term's minimiser,
        strictly inside [0, 1] and every log-type domain that contains the simplex's interior, with
        Σ f₀ ≤ 1; 1/d, then f̃, if J or its gradient is not finite there (a choice: Newton's first QP
        is not line-searched, so f₀ only centres it). Unscaled, Σ clip(f̃, 0, 1) is ~20 at AOL (d =
        120,978, OUE ε = 1: the noise's positive part), so the first QP's fraction-to-the-boundary box
        (f ≥ 0.1 f₀) summed above 1 and the QP was infeasible with the simplex (measured: 60 s through
        the whole QP chain before a point)."""
        d = self.est.d
        f_t = np.asarray(self.est.f_tilde, float)
        c = np.clip(f_t, 0.0, 1.0)
        c = c / max(float(np.sum(c)), 1.0)
        for f0 in (0.5 * (c + 1.0 / d), np.full(d, 1.0 / d), f_t):
            if np.all(f0 > self.lo) and np.all(f0 < self.hi):
                with np.errstate(all="ignore"):
                    if np.isfinite(self.obj.value(f0, self.est)) and np.all(np.isfinite(self.gradient(f0))):
                        return f0
        return 0.5 * (np.clip(f_t, 0.0, 1.0) + 1.0 / d)

    def needs_box(self, problem) -> bool:
        return self.steep


def form_domain(form):
    """(lower, upper) per value of a recognised form: z = a f + b > 0 for every argument of a steep atom
    (``_STEEP``, a power p < 1 or not an even integer) that depends on f_v (module docstring)."""
    lo, hi = -np.inf, np.inf
    for t in form._lean[0]:  # coefficients equal on every value held as one float: no pass over d for them
        if not (t.kind in _STEEP or (t.kind == "power" and (t.param < 1 or t.param % 2 != 0))):
            continue
        for a, b in t.args:
            with np.errstate(divide="ignore", invalid="ignore"):
                edge = np.divide(np.negative(b), a)  # numpy's division: a float a = 0 gives ±inf/NaN, as per value
            lo = np.where((a > 0) & (t.w != 0), np.fmax(lo, edge), lo)
            hi = np.where((a < 0) & (t.w != 0), np.fmin(hi, edge), hi)
    for g in getattr(form, "geo", ()):  # a geometric mean: z_i > 0 wherever its weight p_i > 0
        with np.errstate(divide="ignore", invalid="ignore"):
            edge = -g.b / g.a
        on = g.p > 0
        lo = np.where(on & (g.a > 0), np.fmax(lo, edge), lo)
        hi = np.where(on & (g.a < 0), np.fmin(hi, edge), hi)
    return np.broadcast_to(lo, (form.d,)).copy(), np.broadcast_to(hi, (form.d,)).copy()


def form_change(form, f, delta) -> float:
    """J(f + δ) − J(f) of a recognised form as a sum of per-value differences and, per quadratic form,
    w(2rᵀAδ + ‖Aδ‖²) with r = Af + b: no cancellation between two totals of J's size."""
    out = float(np.sum(form.value(f + delta) - form.value(f)))
    for w, A, b in form.quads:
        r, ad = A @ f + b, A @ delta
        out += w * float(2.0 * (r @ ad) + ad @ ad)
    for g in getattr(form, "geo", ()):
        out += g.value(f + delta) - g.value(f)
    return out


def smooth_terms(objective, estimate) -> SmoothTerms | None:
    """The Newton route's view of a smooth objective (:class:`SmoothObjective`, or a cvxpy callable
    recognised as smooth but not separable and strictly convex: quadratics and Huber included, whose
    QP the interior-point method of :mod:`.ipm` solves in 1.5–4 s at AOL, d = 120,978, where PIQP
    ran past 200 s; measured); None for anything else."""
    if isinstance(objective, SmoothObjective):
        return SmoothTerms(objective, estimate)
    form = getattr(objective, "form", None)
    if form is None or getattr(form, "kinks", None):
        return None
    if hasattr(objective, "hessian") and not (form.separable and form.strictly_convex):
        return SmoothTerms(objective, estimate)
    if hasattr(objective, "smooth_view"):
        # a recognised separable objective (the structured solver's first) over constraints that solver
        # does not cover (a user's cvxpy row): the same Newton route, with the form's exact derivatives.
        # Before, KL/entropy/log + one user row went to SCS alone: 51-98 s at d = 1,000
        return SmoothTerms(objective.smooth_view(), estimate)
    return None
