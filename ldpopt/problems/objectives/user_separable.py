"""A user objective declared separable, J(f) = Σ_v h_v(f_v): :class:`SeparableObjective` and its
per-value form :class:`UserSep` (:mod:`.separable` for the built-ins), whose argmin is a vectorised
bracketed Newton (bisection when Newton leaves the bracket), to rounding."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .base import BuiltObjective, Objective
from .separable import Separable

__all__ = ["SeparableObjective", "UserSep"]


class UserSep(Separable):
    """A :class:`SeparableObjective`'s per-value functions; interior root by bracketed Newton."""

    mu_exact = False  # a declared lower bound on h'' (0 when none was declared): never "flat"

    def __init__(self, obj: SeparableObjective, estimate):
        self.obj, self.est, self.name = obj, estimate, obj.name

    def value(self, f):
        return np.asarray(self.obj.h(f, self.est), float)

    def d1(self, f):
        return np.asarray(self.obj.dh(f, self.est), float)

    def d2(self, f):
        return np.asarray(self.obj.d2h(f, self.est), float)

    def restrict(self, idx):
        return None  # user functions act on the whole vector: no restriction

    def argmin(self, t, l, u, d1l=None, d1u=None):
        t = np.broadcast_to(np.asarray(t, float), l.shape)
        with np.errstate(divide="ignore", invalid="ignore"):
            at_l = ~((self.d1(l) if d1l is None else d1l) + t < 0)
            at_u = ~at_l & ((self.d1(u) if d1u is None else d1u) + t <= 0)
        mid = ~(at_l | at_u)
        out = np.where(at_l, l, u)
        if not mid.any():
            return out
        # h'(f) + t changes sign on (lo, hi) for the mid values. Each round tries two steps from the
        # best point so far — Newton in f and Newton in log f (f·exp(−g/(f h''))), each replaced by a
        # bisection of the bracket when it leaves it (geometric while 0 <= lo and hi > 4·lo) — keeps
        # the one with the smaller |h' + t| and narrows the bracket with both. Newton in f alone creeps
        # towards a root many decades below the bracket (an entropy or KL term's, ~1e-15: f grows by
        # a factor 1 + log(root/f) a step); in log f that root is found in a few steps, and Newton in
        # f keeps the quadratic terms' one-step convergence. A choice: the papers are silent.
        # The first point: the previous call's root where it lies inside the new bracket (the dual
        # method calls this once per multiplier step with t moving a little: a few Newton steps then
        # suffice, against ~20 from the bracket's middle), else the bracket's middle.
        idx = np.flatnonzero(mid)
        derivs = self._derivatives_at(idx, out)
        tm, lo, hi = t[idx], l[idx].copy(), u[idx].copy()
        tiny = np.finfo(float).tiny
        # A bracket starting at 0 (h'(0) = −∞: an entropy or KL term) is started at the smallest normal
        # float instead. Where h' + t ≥ 0 there already, the root lies below it (e.g. 1e-400 for
        # 2(f − f̃) + 1e-4·log(f d) at f̃ = −0.02, d = 10⁴: CLS + KL to a uniform prior) and no float
        # but 0 and the subnormals is nearer: those values are left at ``tiny``, where h' is finite and
        # stationarity's Newton correction |h' + t|/h'' is below 1e-300 (at 0 or a subnormal h' is
        # −∞ or rounding noise, the check read an infinite KKT residual and the fallback ran for minutes).
        edge = np.flatnonzero((lo >= 0) & (lo < tiny) & (hi > tiny))
        fixed = np.zeros(idx.size, bool)
        if edge.size:
            g_edge, _ = derivs(edge, np.full(edge.size, tiny))
            below = ~(g_edge + tm[edge] < 0)
            fixed[edge[below]] = True
            lo[edge] = tiny
        f = np.where(fixed, tiny, 0.5 * (lo + hi))
        prev = getattr(self, "_previous_root", None)
        warm = np.zeros(idx.size, bool)
        if prev is not None and prev.shape == l.shape:
            p = prev[idx]
            warm = (p > lo) & (p < hi) & ~fixed
            f = np.where(warm, p, f)
        g1, g2 = derivs(np.arange(idx.size), f)
        g = g1 + tm
        # h' + t at rounding level: |h' + t| within 16 ulps of the terms it is summed from, measured
        # at a warm start (near the root; at a cold start the terms at the bracket's middle are no
        # measure: there 32 ulps of |t|). A value there stops: Newton would keep moving it by rounding
        # noise (measured: ~40 % of AOL's values took 10–40 more rounds at CLS + KL to a prior).
        full = out.copy()
        full[idx] = f
        with np.errstate(all="ignore"):
            terms = np.where(warm, np.nan_to_num(self.d1_scale(full)[idx], posinf=0.0), np.abs(tm))
        noise = 16 * np.finfo(float).eps * (np.abs(tm) + terms)
        act = np.flatnonzero(~(np.abs(g) <= noise) & ~fixed)  # positions (into idx) still moving
        eps = np.finfo(float).eps
        for _ in range(100):
            fa, ga, ha = f[act], g[act], g2[act]
            la = np.where(ga < 0, fa, lo[act])
            ua = np.where(ga > 0, fa, hi[act])
            lo[act], hi[act] = la, ua
            floor = np.maximum(la, tiny)
            bisect = np.where((la >= 0) & (ua > 4.0 * floor), np.sqrt(floor * ua), 0.5 * (la + ua))
            with np.errstate(all="ignore"):
                s1 = fa - ga / ha
                s2 = fa * np.exp(-ga / (ha * fa))
            s1 = np.where((s1 > la) & (s1 < ua), s1, bisect)
            s2 = np.where((fa > 0) & (s2 > la) & (s2 < ua), s2, bisect)
            d11, d12 = derivs(act, s1)
            d21, d22 = derivs(act, s2)
            r1, r2 = d11 + tm[act], d21 + tm[act]
            first = ~(np.abs(r2) < np.abs(r1))
            new = np.where(first, s1, s2)
            # the other candidate narrows the bracket too
            other, ro = np.where(first, s2, s1), np.where(first, r2, r1)
            lo[act] = np.where((ro < 0) & (other > la), other, la)
            hi[act] = np.where((ro > 0) & (other < ua), other, ua)
            moved = ((ga != 0) & (np.abs(new - fa) > 2 * eps * np.maximum(np.abs(fa), np.abs(new)))
                     & ~(np.abs(np.where(first, r1, r2)) <= noise[act]))
            f[act] = np.where(ga != 0, new, fa)
            g[act] = np.where(ga != 0, np.where(first, r1, r2), ga)
            g2[act] = np.where(ga != 0, np.where(first, d12, d22), ha)
            act = act[moved]
            if not act.size:
                break
        out[idx] = np.clip(f, l[idx], u[idx])
        self._previous_root = out
        return out

    def _derivatives_at(self, idx, base):
        """(k, f_k) ↦ (h'(f_k), h''(f_k)) on the values ``idx[k]``: the user's functions act on the
        whole vector, so the others are held at ``base``."""
        def at(k, fk):
            full = base.copy()
            full[idx[k]] = fk
            return self.d1(full)[idx[k]], self.d2(full)[idx[k]]
        return at

    def mu(self, l, u):
        if self.obj.curvature is not None:
            return np.asarray(self.obj.curvature(l, u, self.est), float)
        return np.zeros_like(l)  # no modulus declared: no distance bound


class SeparableObjective(Objective):
    """A user objective declared separable, J(f) = Σ_v h_v(f_v), for the structured solver.

    ``h(f, estimate)``, ``dh``, ``d2h``: vectorised per-value h_v(f_v), h_v'(f_v), h_v''(f_v) (length-d
    arrays; each h_v convex, d2h > 0 where the solver may evaluate it). ``curvature(l, u, estimate)``
    (optional): a lower bound on h_v'' over [l_v, u_v], for the certificate's distance bound.
    ``cvxpy_expr(f, estimate)`` (optional): the same J as a cvxpy expression, for the cvxpy route.

    Parameters
    ----------
    h, dh, d2h : callable
        ``(f, estimate) -> (d,) array``: h_v(f_v), h_v'(f_v), h_v''(f_v).
    name : str, default "separable"
        Its name in the Solution.
    curvature : callable or None, default None
        ``(l, u, estimate) -> (d,) array``: a lower bound on h_v'' over [l_v, u_v].
    cvxpy_expr : callable or None, default None
        ``(f, estimate) -> cvxpy expression``: the same J (without it only the structured solver
        solves it; :meth:`build` raises ``ValueError``).

    Raises
    ------
    TypeError
        ``h``, ``dh`` or ``d2h`` not callable.

    Examples
    --------
    >>> import cvxpy as cp
    >>> import numpy as np
    >>> import ldpopt
    >>> est = ldpopt.oracles.get("grr", 1.0, 4).estimate(np.array([46_000, 30_000, 15_000, 9_000]), 100_000)
    >>> from ldpopt.problems import SeparableObjective
    >>> squares = SeparableObjective(lambda f, e: (f - e.f_tilde) ** 2, lambda f, e: 2 * (f - e.f_tilde),
    ...                              lambda f, e: np.full(e.d, 2.0), name="squares",
    ...                              cvxpy_expr=lambda f, e: cp.sum_squares(f - e.f_tilde))
    >>> sol = ldpopt.Problem(est, squares).solve()   # Σ (f − f̃)²: CLS, so Norm-Sub's answer
    >>> sol.solver, sol.status, bool(np.abs(sol.f - ldpopt.postprocess(est, "norm-sub")).max() < 1e-9)
    ('LDPOPT-STRUCTURED', 'optimal', True)
    """

    default_solver = "CLARABEL"
    scaled = False

    def __init__(self, h: Callable, dh: Callable, d2h: Callable, *, name: str = "separable",
                 curvature: Callable | None = None, cvxpy_expr: Callable | None = None):
        for label, fn in (("h", h), ("dh", dh), ("d2h", d2h)):
            if not callable(fn):
                raise TypeError(f"{label} must be callable, got {type(fn).__name__}")
        self.h, self.dh, self.d2h, self.name = h, dh, d2h, name
        self.curvature, self.cvxpy_expr = curvature, cvxpy_expr

    def build(self, f, x, scale, estimate):
        if self.cvxpy_expr is None:
            raise ValueError(f"separable objective {self.name!r} has no cvxpy_expr: only the structured "
                             "solver can solve it")
        return BuiltObjective(self.cvxpy_expr(f, estimate))

    def per_value(self, estimate) -> Separable:
        """The per-value form the structured solver and the certificate evaluate.

        Parameters
        ----------
        estimate : Estimate
            The raw estimate (passed to h, dh, d2h).

        Returns
        -------
        Separable
            h_v and its derivatives (:mod:`.separable`).

        Examples
        --------
        >>> import cvxpy as cp
        >>> import numpy as np
        >>> import ldpopt
        >>> est = ldpopt.oracles.get("grr", 1.0, 4).estimate(np.array([46_000, 30_000, 15_000, 9_000]), 100_000)
        >>> from ldpopt.problems import SeparableObjective
        >>> squares = SeparableObjective(lambda f, e: (f - e.f_tilde) ** 2, lambda f, e: 2 * (f - e.f_tilde),
        ...                              lambda f, e: np.full(e.d, 2.0), name="squares",
        ...                              cvxpy_expr=lambda f, e: cp.sum_squares(f - e.f_tilde))
        >>> sep = squares.per_value(est)
        >>> type(sep).__name__
        'UserSep'
        """
        return UserSep(self, estimate)

    def value(self, f, estimate):
        return float(np.sum(self.h(np.asarray(f, float), estimate)))

    def gradient(self, f, estimate):
        return np.asarray(self.dh(np.asarray(f, float), estimate), float)
