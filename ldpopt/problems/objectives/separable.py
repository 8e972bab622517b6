"""Per-value pieces of the separable objectives: J(f) = Σ_v h_v(f_v).
Notes: docs/notes/problems.md, "ldpopt.problems.objectives.separable".
"""

from __future__ import annotations

import numpy as np

from .base import Objective

__all__ = ["NotApplicable", "Separable", "separable_for"]


class NotApplicable(ValueError):
    """The structured solver / certificate does not cover this objective or constraint set.

    Examples
    --------
    >>> import numpy as np
    >>> import ldpopt
    >>> est = ldpopt.oracles.get("grr", 1.0, 4).estimate(np.array([46_000, 30_000, 15_000, 9_000]), 100_000)
    >>> from ldpopt.problems import NotApplicable, solve_structured
    >>> try:
    ...     solve_structured(est, "l1")
    ... except NotApplicable as exc:
    ...     print(str(exc)[:58])
    objective 'l1' is not a smooth separable objective (the st
    """


class Separable:
    """Base: subclasses implement ``value, d1, d2, _interior`` (vectorised over values)."""

    name = "separable"
    #: ``mu`` is the exact minimum of h_v'' (so 0 means J is flat there, e.g. a multinomial value with
    #: no reports); False where it is only a declared lower bound and 0 means "unknown"
    mu_exact = True
    #: h_v = w_v (f − m_v)² (:class:`Quadratic`): the shift closed form and the chain's pool applies
    quadratic = False
    #: every term is a function of the support count (the solver's distinct-count groups, :mod:`.grouped`)
    count_grouped = False
    #: the certificate may run once per distinct-count group with the groups' sizes as weights
    #: (:func:`~ldpopt.problems.check.certificate.certify_grouped`: its sums then round differently
    #: from the elementwise ones; the built-ins keep theirs bitwise)
    group_certificate = False
    #: with constraint rows, the dual method may run once per group of values alike in count, bounds
    #: and column of A (:func:`~ldpopt.problems.dual.dual.solve_row_groups`: its sums
    #: round differently from the elementwise ones; the built-ins keep theirs bitwise)
    group_rows = False
    #: :math:`J(f) = Σ_v h_v(f_v)` + offset (``Objective.value``'s default adds it)
    offset = 0.0

    def has_closed_form(self) -> bool:
        """Whether :func:`.simplex.closed_form` solves it on {f ≥ 0, Σ f = mass} (Norm-Sub's shift for
        one scalar weight, MLE-Apx for the weighted MLE)."""
        return False

    def value(self, f):  # per-value h_v(f_v)
        raise NotImplementedError

    def d1(self, f):
        raise NotImplementedError

    def d2(self, f):
        raise NotImplementedError

    def d1_scale(self, f):
        """Size of the terms h_v'(f_v) is computed from (its float64 rounding is ~eps times this;
        the terms cancel in some objectives, e.g. the binomial's two counts)."""
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.abs(self.d1(f))

    def _interior(self, t, l, u):
        """Root of h'(f) = −t for values known to have it strictly inside (l, u)."""
        raise NotImplementedError

    def argmin(self, t, l, u, d1l=None, d1u=None):
        """f_v(t) = argmin_{[l_v, u_v]} h_v(f) + t_v f (l, u finite, l ≤ u). ``d1l``, ``d1u``:
        h'(l), h'(u) if already known (the dual method evaluates them once per solve)."""
        t = np.broadcast_to(np.asarray(t, float), l.shape)
        with np.errstate(divide="ignore", invalid="ignore"):
            d1l = self.d1(l) if d1l is None else d1l
            d1u = self.d1(u) if d1u is None else d1u
            at_l = ~(d1l + t < 0)       # h'(l) + t ≥ 0 (NaN-safe: a NaN counts as "at l")
            at_u = ~at_l & (d1u + t <= 0)
        mid = ~(at_l | at_u)
        f = np.where(at_l, l, u)
        if mid.any():
            idx = np.flatnonzero(mid) if mid.sum() < 0.5 * mid.size else None
            if idx is None:
                with np.errstate(divide="ignore", invalid="ignore"):
                    r = self._interior(t, l, u, None)
                f = np.where(mid, np.clip(r, l, u), f)
            else:
                with np.errstate(divide="ignore", invalid="ignore"):
                    f[idx] = np.clip(self._interior(t, l, u, idx), l[idx], u[idx])
        return f

    def lambda_start(self, total: float) -> float | None:
        """A first multiplier λ of Σ f = ``total`` (f ≥ 0, no rows) for the dual method's Newton, or
        None: the dual method starts in the middle of λ's range (:func:`ldpopt.problems.dual.grouped.simplex_started`)."""
        return None

    def group_keys(self) -> np.ndarray | None:
        """An integer-valued array that every per-value term is a function of (the support counts),
        or None: :func:`ldpopt.problems.check.certificate.support_problem` then evaluates once per distinct key."""
        return None

    def restrict(self, idx):
        """The same objective on the values ``idx`` only (for the solver's candidate filtering)."""
        import copy
        out = copy.copy(self)
        for cache in ("_groups", "_at_lower"):  # computed for the whole domain (.grouped, certificate)
            out.__dict__.pop(cache, None)
        for k, v in vars(self).items():
            if isinstance(v, np.ndarray) and v.ndim == 1 and v.shape[0] > 1:
                setattr(out, k, v[idx])
        return out

    def mu(self, l, u):
        """min of h_v'' on [l_v, u_v] (h'' is monotone or convex in f for every built-in, so the
        minimum is at an end point unless stated otherwise)."""
        return np.minimum(self.d2(l), self.d2(u))


def _take(a, idx):
    return a if idx is None or np.ndim(a) == 0 else a[idx]


class Quadratic(Separable):
    """h_v = w_v (f − m_v)²: cls (w = 1, m = f̃) and posterior (m = mean, w = 1/variance or 1)."""

    quadratic = True

    def __init__(self, m, w, name):
        self.m, self.w, self.name = np.asarray(m, float), w, name

    def has_closed_form(self):
        return type(self) is Quadratic and np.ndim(self.w) == 0 and float(self.w) > 0

    def value(self, f):
        return self.w * (f - self.m) ** 2

    def d1(self, f):
        return 2.0 * self.w * (f - self.m)

    def d1_scale(self, f):
        return 2.0 * np.abs(self.w) * (np.abs(f) + np.abs(self.m))

    def d2(self, f):
        return np.broadcast_to(2.0 * np.asarray(self.w, float), np.shape(f)).copy()

    def _interior(self, t, l, u, idx):
        return _take(self.m, idx) - _take(t, idx) / (2.0 * _take(self.w, idx))

    def mu(self, l, u):
        # h'' = 2w everywhere: the base class's min(h''(l), h''(u)) without writing two copies of it
        return np.broadcast_to(2.0 * np.asarray(self.w, float), np.broadcast_shapes(np.shape(l), np.shape(u)))


class WeightedMLESep(Separable):
    """Wang et al. Eq. 13: h_v = (a_v − B f)²/(s + C f), convex where s + C f > 0."""

    name = "weighted-mle"

    def has_closed_form(self):
        return type(self) is WeightedMLESep and self.B > 0

    def __init__(self, estimate):
        p, q = estimate.p, estimate.q
        self.p, self.q = float(p), float(q)  # for the MLE-Apx fast path (.simplex)
        self.a = estimate.counts / estimate.n - q
        self.B, self.s, self.C = p - q, q * (1.0 - q), (p - q) * (1.0 - p - q)
        self._counts = estimate.counts  # a_v is a function of c_v: group_keys

    def group_keys(self):
        return self._counts

    def value(self, f):
        return (self.a - self.B * f) ** 2 / (self.s + self.C * f)

    def d1(self, f):
        x = (self.a - self.B * f) / (self.s + self.C * f)
        return -x * (2.0 * self.B + self.C * x)

    def d1_scale(self, f):
        ax = (np.abs(self.a) + abs(self.B) * np.abs(f)) / np.abs(self.s + self.C * f)
        return ax * (2.0 * abs(self.B) + 2.0 * abs(self.C) * ax)

    def d2(self, f):
        w = self.s + self.C * f
        k = self.B * self.s + self.C * self.a
        return 2.0 * k * k / w**3

    def _interior(self, t, l, u, idx):
        lam = -_take(t, idx)
        x = -lam / (self.B + np.sqrt(np.maximum(self.B**2 - self.C * lam, 0.0)))
        return (_take(self.a, idx) - self.s * x) / (self.B + self.C * x)

    def mu(self, l, u):
        # h'' = 2K²/w³ with w linear in f: smallest where w is largest
        w = np.maximum(self.s + self.C * l, self.s + self.C * u)
        k = self.B * self.s + self.C * self.a
        return 2.0 * k * k / w**3


class _CountSep(Separable):
    """An exact likelihood's per-value form: counts c, n, π = q + B f (B = p − q)."""

    count_grouped = True

    def __init__(self, estimate):
        self.c, self.n, self.q, self.B = estimate.counts, float(estimate.n), estimate.q, estimate.p - estimate.q

    def group_keys(self):
        return self.c

    def _pi(self, f):
        return self.q + self.B * f


class MultinomialSep(_CountSep):
    """GRR's exact likelihood per value: h_v = −(c_v/n) log(q + B f)."""

    name = "multinomial"

    def value(self, f):
        with np.errstate(divide="ignore"):
            return -np.where(self.c > 0, self.c * np.log(np.maximum(self._pi(f), 0.0)), 0.0) / self.n

    def d1(self, f):
        return -self.B * np.where(self.c > 0, self.c / self._pi(f), 0.0) / self.n

    def d2(self, f):
        return self.B**2 * np.where(self.c > 0, self.c / self._pi(f) ** 2, 0.0) / self.n

    def _interior(self, t, l, u, idx):
        return _take(self.c, idx) / (self.n * _take(t, idx)) - self.q / self.B


class BinomialSep(_CountSep):
    """Per-bit likelihood per value: h_v = −[c log π + (n − c) log(1 − π)]/n, π = q + B f."""

    name = "binomial"

    def value(self, f):
        pi = self._pi(f)
        c, n = self.c, self.n
        with np.errstate(divide="ignore", invalid="ignore"):
            a = np.where(c > 0, c * np.log(np.maximum(pi, 0.0)), 0.0)
            b = np.where(c < n, (n - c) * np.log(np.maximum(1.0 - pi, 0.0)), 0.0)
        return -(a + b) / n

    def d1(self, f):
        pi = self._pi(f)
        c, n = self.c, self.n
        return -self.B * (np.where(c > 0, c / pi, 0.0) - np.where(c < n, (n - c) / (1.0 - pi), 0.0)) / n

    def d1_scale(self, f):
        pi = self._pi(f)
        c, n = self.c, self.n
        with np.errstate(divide="ignore", invalid="ignore"):
            return abs(self.B) * (np.where(c > 0, c / pi, 0.0) + np.where(c < n, (n - c) / (1.0 - pi), 0.0)) / n

    def d2(self, f):
        pi = self._pi(f)
        c, n = self.c, self.n
        return self.B**2 * (np.where(c > 0, c / pi**2, 0.0) + np.where(c < n, (n - c) / (1.0 - pi) ** 2, 0.0)) / n

    def _interior(self, t, l, u, idx):
        # The quadratic written in f itself (π = q + B f): A2 f² + B1 f + C0 = 0 with
        # A2 = τB², B1 = −B(n + τ(1 − 2q)), C0 = c − nq − τq(1 − q); the root that is continuous with
        # the τ = 0 root (c − nq)/(nB) = f̃, in the cancellation-free form 2C0/(−B1 ± √disc). Solving
        # for π and subtracting q would lose ~|q/B|·eps per value (seen: 4e-14 in Σf at d = 1e6).
        c, n, q, B = _take(self.c, idx), self.n, self.q, self.B
        tau = n * _take(t, idx) / B
        a2 = tau * B * B
        b1 = -B * (n + tau * (1.0 - 2.0 * q))
        c0 = (c - n * q) - tau * q * (1.0 - q)
        disc = np.sqrt(np.maximum(b1 * b1 - 4.0 * a2 * c0, 0.0))
        # The wanted root is π = ((τ + n) − √D)/(2τ) (the one in [0, 1]: the smaller for τ > 0, the
        # larger for τ < 0), i.e. f = (−b1 − √disc)/(2·a2): written as 2c0/(−b1 + √disc) when −b1 > 0
        # (no cancellation), directly otherwise (then τ < 0 and a2 ≠ 0).
        with np.errstate(divide="ignore", invalid="ignore"):
            f = np.where(b1 <= 0, 2.0 * c0 / (-b1 + disc), (-b1 - disc) / (2.0 * np.where(a2 != 0, a2, 1.0)))
        return f

    def mu(self, l, u):
        # c/π² + (n − c)/(1 − π)² is convex in π: its minimum may be inside [l, u]; the
        # unconstrained minimiser is π₀ = c^{1/3}/(c^{1/3} + (n − c)^{1/3}).
        a, b = np.cbrt(self.c), np.cbrt(self.n - self.c)
        pi0 = np.where(a + b > 0, a / np.where(a + b > 0, a + b, 1.0), 0.5)
        f0 = np.clip((pi0 - self.q) / self.B, l, u)
        return np.minimum(np.minimum(self.d2(l), self.d2(u)), self.d2(f0))


def separable_for(objective: Objective, estimate) -> Separable:
    """The per-value form the objective declares (:meth:`~ldpopt.problems.Objective.per_value`).

    Raises :class:`NotApplicable` for objectives that are not smooth and separable (``l1``, user
    cvxpy callables)."""
    per_value = getattr(objective, "per_value", None)
    sep = per_value(estimate) if callable(per_value) else None
    if sep is None:
        raise NotApplicable(f"objective {getattr(objective, 'name', objective)!r} is not a smooth separable "
                            "objective (the structured solver covers objectives with a per-value form: cls, "
                            "weighted-mle, multinomial, binomial, posterior, SeparableObjective and registered ones)")
    return sep
