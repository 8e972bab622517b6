"""A user objective declared separable, J(f) = Σ_v h_v(f_v): :class:`SeparableObjective` and its
per-value form :class:`UserSep` (:mod:`.separable` for the built-ins), whose argmin is a vectorised
bracketed Newton (bisection when Newton leaves the bracket), to rounding.

The user's functions take the whole vector and the estimate. Where they are *elementwise* — value v
of the output a function of f_v and the estimate's per-value data at v (f̃_v, c_v) and its scalars
only, as every h_v(f_v) written with numpy's elementwise operations is — the solver evaluates them on
the values that move only, through the estimate restricted to those values
(:func:`estimate_on`), and on one value per distinct support count (:mod:`..dual.grouped`).
Whether they are is not assumed but checked once per (objective, estimate) (:func:`elementwise`);
where they are not (an output that depends on d, on another value, or on an array the user closed
over), every evaluation is on the whole vector, as the functions were declared.
"""

from __future__ import annotations

import copy
import weakref
from collections.abc import Callable

import numpy as np

from .base import BuiltObjective, Objective
from .groups import count_groups, uniform
from .separable import Separable

__all__ = ["SeparableObjective", "UserSep", "elementwise"]

#: the probe's number of values (at most d − 1: a proper subset, so that a dependence on d shows)
_PROBE_VALUES = 16


def estimate_on(estimate, idx):
    """The estimate on the values ``idx`` only: f̃ and the counts taken at ``idx`` (an index array, a
    boolean mask or a slice), n, ε, p, q, the oracle and ``meta`` kept; d is the number taken.

    A slice of a validated estimate, not validated again (O(|idx|); it may hold a single value,
    which the public constructor refuses): for evaluating a user's elementwise functions on some
    values (:func:`elementwise`), not for public use."""
    out = copy.copy(estimate)  # a frozen dataclass: its fields set through object.__setattr__
    for name in ("f_tilde", "counts"):
        a = np.asarray(getattr(estimate, name)[idx])
        a.setflags(write=False)
        object.__setattr__(out, name, a)
    object.__setattr__(out, "meta", dict(estimate.meta))
    return out


def _same_floats(kept: tuple, now: tuple) -> bool:
    """Whether the arrays ``now`` equal the first ones of ``kept`` bit for bit (shapes too)."""
    return all(a.shape == b.shape and np.array_equal(a.view(np.int64), np.asarray(b, float).view(np.int64))
               for a, b in zip(kept, now))


def elementwise(obj: SeparableObjective, estimate) -> bool:
    """Whether ``obj``'s h, h', h'' (and its curvature bound, when declared) are elementwise on
    ``estimate``: evaluated on :func:`estimate_on` of a random proper subset of the values, at a random
    positive point, they give bit for bit the whole vector's outputs at those positions (and arrays of
    the right length). A probe, not a proof (the papers are silent; a choice): a function that reads
    d, another value, a sum over the values or an array of length d it closed over fails it (a
    different number, a shape error); an exception or a warning-level NaN in one place only counts as
    a failure. Cached per (objective, estimate); d < 3 answers False (no proper subset of two values
    or more to compare on)."""
    cache = getattr(obj, "_elementwise", None)
    if cache is not None and cache[0]() is estimate:
        return cache[1]
    out = _probe(obj, estimate)
    obj._elementwise = (weakref.ref(estimate), out)
    return out


def _probe(obj, estimate) -> bool:
    d = estimate.d
    if d < 3:
        return False
    rng = np.random.default_rng(d)  # fixed per d: the same answer on every call
    pos = rng.choice(d, size=min(_PROBE_VALUES, d - 1), replace=False)  # unsorted: order shows too
    f = rng.uniform(0.1, 2.0, d) / d
    sub_est = estimate_on(estimate, pos)
    fns: list[tuple[Callable, tuple]] = [(fn, (f,)) for fn in (obj.h, obj.dh, obj.d2h)]
    if obj.curvature is not None:
        fns.append((obj.curvature, (0.5 * f, f)))
    for fn, args in fns:
        try:
            with np.errstate(all="ignore"):
                whole = np.asarray(fn(*args, estimate), float)
                part = np.asarray(fn(*(a[pos] for a in args), sub_est), float)
        except Exception:  # noqa: BLE001 - a user's function may raise anything on a restricted estimate: not elementwise
            return False
        if whole.shape != (d,) or part.shape != (pos.size,):
            return False
        if not np.array_equal(whole[pos].view(np.int64), part.view(np.int64)):
            return False
    return True


class UserSep(Separable):
    """A :class:`SeparableObjective`'s per-value functions; interior root by bracketed Newton.

    Elementwise functions (:func:`elementwise`, checked on the first use that needs it) are evaluated
    on the moving values only in the argmin, restrict to any set of values (the solver's filtering,
    screening and distinct-count groups), and from 4,096 values on every evaluation whose arguments
    are constant on each support count is made once per count (:meth:`_on_groups`); other functions
    act on the whole vector (:meth:`restrict` is None)."""

    mu_exact = False  # a declared lower bound on h'' (0 when none was declared): never "flat"
    group_rows = True  # its argmin costs several passes: the dual with rows runs on the groups alike

    def __init__(self, obj: SeparableObjective, estimate, is_elementwise: bool | None = None):
        self.obj, self.est, self.name = obj, estimate, obj.name
        self._is_elementwise = is_elementwise

    @property
    def is_elementwise(self) -> bool:
        """:func:`elementwise` for this objective and estimate (a restriction inherits it)."""
        if self._is_elementwise is None:
            self._is_elementwise = elementwise(self.obj, self.est)
        return self._is_elementwise

    @property
    def count_grouped(self):
        """Elementwise functions see a value through f̃_v and c_v only: the same on a count's values."""
        return self.is_elementwise

    @property
    def group_certificate(self):
        """Elementwise functions: the certificate runs once per distinct count where the point is
        constant on each (``check.certificate.certify_grouped``: the same numbers to rounding; a
        user's h costs several passes over the domain, as a recognised form's terms do)."""
        return self.is_elementwise

    def group_keys(self):
        return self.est.counts if self.is_elementwise else None

    def per_value_arrays(self) -> list:
        """The estimate's per-value arrays the functions may read (f̃, counts): what must be equal
        on a count's values for the distinct-count groups (:func:`~.groups.groups_of`
        checks it)."""
        return [np.asarray(self.est.f_tilde), np.asarray(self.est.counts)]

    #: below this many values the checks of :meth:`_on_groups` cost about what they save (a choice)
    GROUP_MIN_D = 4096

    def _on_groups(self, method: str, *xs):
        """``getattr(rep, method)(*tables)[inv]`` on the distinct-count groups
        (:func:`~.groups.count_groups`), the values whose arguments differ
        bitwise from their group's representative's (at most a quarter of them) evaluated on their
        own (:meth:`restrict`); None when more differ. Elementwise terms on the same operands: the
        same floats (the iterative argmin: the same root to its stopping rule). The certificate's
        and the check's passes at a point the grouped solve produced (f constant per count) then
        cost K evaluations instead of d, and the dual method's argmin with a few rows (t = λ off
        the rows' values, ~150 of 10⁶ for three sparse rows) K plus those. The one per-count
        evaluation of every user separable form (a recognised one's too, :mod:`..solvers.user_forms`)."""
        if max(map(np.size, xs)) < self.GROUP_MIN_D:
            return None
        g = count_groups(self)
        if g is None or any(np.ndim(x) and np.shape(x) != g.inv.shape for x in xs):
            return None
        full = [np.broadcast_to(np.asarray(x, float), g.inv.shape) for x in xs]
        tables = [x[g.first] for x in full]
        # the arguments that vary per value (one float broadcast to all is the same on every group)
        varying = [(x, tb) for x, tb in zip(full, tables) if x.strides != (0,)]
        # a strided sample first: a point far from constant per count (with rows, t = λ + Aᵀy varies
        # inside a count) is refused after ~2 % of the full comparison's passes
        step = 64
        if g.inv.shape[0] >= 16 * step:
            inv_s = g.inv[::step]
            off = sum(np.count_nonzero(tb[inv_s].view(np.int64) != x[::step].view(np.int64)) for x, tb in varying)
            if off > inv_s.shape[0] // 4:
                return None
        odd = np.zeros(g.inv.shape, bool)
        for x, tb in varying:  # bitwise: the sign of zero and NaN payloads count
            odd |= tb[g.inv].view(np.int64) != x.view(np.int64)
        own = np.flatnonzero(odd)
        if own.size > g.inv.shape[0] // 4:
            return None
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            out = np.broadcast_to(getattr(g.rep, method)(*tables), (g.k,))[g.inv]
            if own.size:
                out[own] = getattr(self.restrict(own), method)(*(x[own] for x in full))
        return out

    def _grouped_or(self, method: str, fn, *xs):
        out = self._on_groups(method, *xs)
        return fn(*xs) if out is None else out

    def value(self, f):
        return self._grouped_or("value", lambda x: np.asarray(self.obj.h(x, self.est), float), f)

    def d1(self, f):
        return self._grouped_or("d1", lambda x: np.asarray(self.obj.dh(x, self.est), float), f)

    def d2(self, f):
        return self._grouped_or("d2", lambda x: np.asarray(self.obj.d2h(x, self.est), float), f)

    def restrict(self, idx):
        """The same functions on the values ``idx`` (index array, mask or slice) through
        :func:`estimate_on`; None where they are not elementwise (they act on the whole vector)."""
        if not self.is_elementwise:
            return None
        out = UserSep(self.obj, estimate_on(self.est, idx), True)
        if getattr(self, "_model_root", None) is not None:
            out._model_root = self._model_root[idx]
        return out

    def argmin(self, t, l, u, d1l=None, d1u=None):
        out = self._on_groups("argmin", t, l, u)
        if out is not None:
            return out
        return self._argmin(t, l, u, d1l, d1u)

    def _argmin(self, t, l, u, d1l=None, d1u=None):
        """The bracketed Newton of the module docstring on every value (no grouping). A call with the
        same t, l, u as the last one (bit for bit) returns its answer again: the dual method's last
        pass and the certificate's dual value ask at the λ the Newton on λ stopped at."""
        t = np.broadcast_to(np.asarray(t, float), l.shape)
        last = self.__dict__.get("_last_call")
        if last is not None and _same_floats(last, (t, l, u)):
            return last[3].copy()
        out = self._argmin_new(t, l, u, d1l, d1u)
        self._last_call = (t.copy(), np.array(l, float), np.array(u, float), out.copy())
        return out

    def _argmin_new(self, t, l, u, d1l, d1u):
        with np.errstate(divide="ignore", invalid="ignore"):
            at_l = ~((self.d1(l) if d1l is None else d1l) + t < 0)
            at_u = ~at_l & ((self.d1(u) if d1u is None else d1u) + t <= 0)
        mid = ~(at_l | at_u)
        out = np.where(at_l, l, u)
        if not mid.any():
            return out
        lin = getattr(getattr(self, "form", None), "affine_d1", None)
        if lin is not None:  # h' = A f + C (a recognised sum of squares): the root in closed form
            A, C = lin
            tiny = np.finfo(float).tiny
            with np.errstate(all="ignore"):
                root = np.clip(-(C + t) / A, l, u)
            # as the bracketed Newton below: a bracket from 0 starts at the smallest normal float
            root = np.where((l >= 0) & (l < tiny) & (u > tiny), np.maximum(root, tiny), root)
            out = np.where(mid, root, out)
            self._previous_root = out
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
        # Elementwise functions evaluate both candidates of a round in one call each of h' and h''
        # (:meth:`_derivatives_pair`), and the values still moving are kept in compact arrays, cut
        # when some stop: a round is ~40 array operations, whatever d (its fixed cost at small d).
        whole = bool(mid.all())
        idx = np.arange(l.shape[0]) if whole else np.flatnonzero(mid)
        tm, lo, hi = (t.copy(), l.copy(), u.copy()) if whole else (t[idx], l[idx], u[idx])
        tiny = np.finfo(float).tiny
        # A bracket starting at 0 (h'(0) = −∞: an entropy or KL term) is started at the smallest normal
        # float instead. Where h' + t ≥ 0 there already, the root lies below it (e.g. 1e-400 for
        # 2(f − f̃) + 1e-4·log(f d) at f̃ = −0.02, d = 10⁴: CLS + KL to a uniform prior) and no float
        # but 0 and the subnormals is nearer: those values are left at ``tiny``, where h' is finite and
        # stationarity's Newton correction |h' + t|/h'' is below 1e-300 (at 0 or a subnormal h' is
        # −∞ or rounding noise, the check read an infinite KKT residual and the fallback ran for minutes).
        edge = np.flatnonzero((lo >= 0) & (lo < tiny) & (hi > tiny))
        fixed = np.zeros(idx.size, bool)
        derivs = self._derivatives_at(idx, out)
        if edge.size == idx.size:  # every bracket starts at 0 (the simplex's bounds): no gathers
            g_edge = (self._d1_at_tiny() if whole else self._d1_at_tiny()[idx]) if self.is_elementwise else \
                derivs(edge, np.full(edge.size, tiny))[0]
            fixed = ~(g_edge + tm < 0)
            lo[:] = tiny
            if fixed.all():  # every root below the smallest normal float: left there
                out[idx] = tiny
                self._previous_root = out
                return out
        elif edge.size:
            g_edge = self._d1_at_tiny()[idx[edge]] if self.is_elementwise else derivs(edge, np.full(edge.size, tiny))[0]
            below = ~(g_edge + tm[edge] < 0)
            fixed[edge[below]] = True
            lo[edge] = tiny
        f = np.where(fixed, tiny, 0.5 * (lo + hi))
        # the previous root first (``warm``), else the first multiplier's model root (:meth:`lambda_start`)
        warm, started = np.zeros(idx.size, bool), fixed.copy()
        for k, prev in enumerate((getattr(self, "_previous_root", None), getattr(self, "_model_root", None))):
            if prev is not None and prev.shape == l.shape:
                p = prev if whole else prev[idx]
                start = (p > lo) & (p < hi) & ~started
                f = np.where(start, p, f)
                started |= start
                if k == 0:
                    warm = start
                if started.all():  # (the model root is needed only where the previous root is not)
                    break
        g1, g2 = derivs(np.arange(idx.size), f)
        g = g1 + tm
        # h' + t at rounding level: |h' + t| within 16 ulps of the terms it is summed from, measured
        # at a warm start (near the root; at a cold start the terms at the bracket's middle are no
        # measure: there 32 ulps of |t|). A value there stops: Newton would keep moving it by rounding
        # noise (measured: ~40 % of AOL's values took 10–40 more rounds at CLS + KL to a prior).
        with np.errstate(all="ignore"):
            if type(self).d1_scale is Separable.d1_scale:  # |h'|: known at f already
                scale = np.abs(g1)
            else:
                full = out.copy()
                full[idx] = f
                scale = self.d1_scale(full)[idx]
            terms = np.where(warm, np.where(scale < np.inf, scale, 0.0), np.abs(tm))  # (NaN, ∞: 0)
        noise = 16 * np.finfo(float).eps * (np.abs(tm) + terms)
        eps2 = 2 * np.finfo(float).eps
        # A warm value with h' + t ≠ 0 takes one round even within the noise: its Newton step then follows
        # a change of t below the noise level (the dual method's last multiplier steps, ~1e-16 of λ),
        # so Σ f does too — stopped there, Σ f stayed put, the Newton on λ never reached its tolerance
        # and fell back to bisecting its whole bracket (measured: CLS + KL, d = 10⁴, one seed of three)
        act = np.flatnonzero((~(np.abs(g) <= noise) | (warm & (g != 0))) & ~fixed)  # positions (into idx) still moving
        pair = self._derivatives_pair(idx, derivs)
        # the moving values' state, compact: point, h' + t and h'' there, bracket, t, noise level
        fa, ga, ha, la, ua, ta, na = f[act], g[act], g2[act], lo[act], hi[act], tm[act], noise[act]
        for _ in range(100 if act.size else 0):  # (none moving: a warm start at the same t)
            la = np.where(ga < 0, fa, la)
            ua = np.where(ga > 0, fa, ua)
            floor = np.maximum(la, tiny)
            bisect = np.where((la >= 0) & (ua > 4.0 * floor), np.sqrt(floor * ua), 0.5 * (la + ua))
            with np.errstate(all="ignore"):
                q = ga / ha
                s1 = fa - q
                s2 = fa * np.exp(-q / fa)
            # Newton's correction below half an ulp of f, h'' finite and positive: f is the float the
            # local model puts nearest the root; it stops there (else, where |h' + t| cannot reach the
            # noise level of |t| — h' summed from terms much larger than itself, 2f = 0.83 against
            # t = 0.004 — bisection crept to the bracket's far end for ten rounds, measured)
            done = (s1 == fa) & (ha > 0) & (ha < np.inf)
            s1 = np.where((s1 > la) & (s1 < ua), s1, bisect)
            s2 = np.where((fa > 0) & (s2 > la) & (s2 < ua), s2, bisect)
            d11, d12, d21, d22 = pair(act, s1, s2)
            r1, r2 = d11 + ta, d21 + ta
            first = ~(np.abs(r2) < np.abs(r1))
            new, rn, hn = np.where(first, s1, s2), np.where(first, r1, r2), np.where(first, d12, d22)
            # the other candidate narrows the bracket too
            other, ro = np.where(first, s2, s1), np.where(first, r2, r1)
            la = np.where((ro < 0) & (other > la), other, la)
            ua = np.where((ro > 0) & (other < ua), other, ua)
            new, rn, hn = np.where(done, fa, new), np.where(done, ga, rn), np.where(done, ha, hn)
            moved = (np.abs(new - fa) > eps2 * np.maximum(np.abs(fa), np.abs(new))) & ~(np.abs(rn) <= na) & ~done
            # (ga = 0 never moves: such a value stopped on its noise test, which 0 passes)
            fa, ga, ha = new, rn, hn
            if moved.all():
                continue
            f[act] = fa
            keep = np.flatnonzero(moved)
            if not keep.size:
                act = keep
                break
            act = act[keep]
            fa, ga, ha, la, ua, ta, na = fa[keep], ga[keep], ha[keep], la[keep], ua[keep], ta[keep], na[keep]
        if act.size:
            f[act] = fa
        if whole:
            out = np.clip(f, l, u)
        else:
            out[idx] = np.clip(f, l[idx], u[idx])
        self._previous_root = out
        return out

    def _d1_at_tiny(self):
        """h'(tiny) on every value (elementwise functions only), made once: the argmin's edge test
        asks it on every call with the same point."""
        got = self.__dict__.get("_d1_tiny")
        if got is None:
            with np.errstate(all="ignore"):
                got = np.asarray(self.obj.dh(np.full(self.est.d, np.finfo(float).tiny), self.est), float)
            self._d1_tiny = got
        return got

    def _derivatives_at(self, idx, base):
        """(k, f_k) ↦ (h'(f_k), h''(f_k)) on the values ``idx[k]``: elementwise functions on those
        values alone (the whole estimate where ``idx[k]`` is every value in order), else on the whole
        vector with the others held at ``base``."""
        if self.is_elementwise:
            d = self.est.d

            def on(k, fk):
                e = (self.est if k.size == d and idx.size == d and np.array_equal(k, np.arange(d))
                     else estimate_on(self.est, idx[k]))
                return np.asarray(self.obj.dh(fk, e), float), np.asarray(self.obj.d2h(fk, e), float)
            return on

        def at(k, fk):
            full = base.copy()
            full[idx[k]] = fk
            return self.d1(full)[idx[k]], self.d2(full)[idx[k]]
        return at

    def _derivatives_pair(self, idx, derivs):
        """(k, a, b) ↦ (h'(a), h''(a), h'(b), h''(b)) on the values ``idx[k]``: elementwise functions
        in one call each of h' and h'' on the two candidates side by side (the estimate restricted to
        ``idx[k]`` twice: an elementwise function reads value v's data only at its own position), else
        two calls of ``derivs`` (:meth:`_derivatives_at`)."""
        if not self.is_elementwise:
            def two(k, a, b):
                return (*derivs(k, a), *derivs(k, b))
            return two

        def both(k, a, b):
            n = a.shape[0]
            sel = idx[k]
            e = estimate_on(self.est, np.concatenate([sel, sel]))
            x = np.concatenate([a, b])
            g, h = np.asarray(self.obj.dh(x, e), float), np.asarray(self.obj.d2h(x, e), float)
            return g[:n], h[:n], g[n:], h[n:]
        return both

    def lambda_start(self, total: float) -> float | None:
        """λ of the quadratic model of h at the uniform point f⁰ = total/d, refined by
        :func:`_refined` (a few Newton steps on the stationarity and the sum together): h'(f) ≈ g + a (f − f⁰) with
        g = h'(f⁰), a = h''(f⁰), so f_v(λ) = max(f⁰ − g_v/a − λ/a, 0) and λ = a·τ with τ Norm-Sub's
        shift of f⁰ − g/a to ``total`` (``normalize.shift_support``, expected O(d)); the model's
        f(λ), where positive, is the argmin's first point where it has no previous root; None where h'' at
        f⁰ is not one positive float on every value (a choice: the papers are silent; a recognised
        form's :meth:`~..solvers.user_forms._RecognisedSep.lambda_start` is the same model without its
        log term)."""
        from ...methods.normalize import shift_support

        d = self.est.d
        if not total > 0:
            return None
        f0 = np.full(d, total / d)
        with np.errstate(all="ignore"):
            g, a = self.d1(f0), uniform(np.broadcast_to(self.d2(f0), (d,)))
            if a is None or not (np.isfinite(a) and a > 0):
                return None
            m = f0 - g / a
        if not np.all(np.isfinite(m)):
            return None
        tau, _ = shift_support(m, float(total))
        g = self.__dict__.get("_groups")  # its distinct-count groups, made already: the refinement on them
        if g is None:
            lam, root = _refined(self, float(a * tau), m - tau, f0, float(total))
        else:  # (m is a function of the count: h'(f⁰) and h''(f⁰) are, as the groups were checked to be)
            lam, root_k = _refined(g.rep, float(a * tau), (m - tau)[g.first], f0[:g.k], float(total), g.weights)
            root = root_k[g.inv]
            g.rep._model_root = root_k
        self._model_root = root  # the refined root at that λ: the argmin's first point (positive ones)
        return lam

    def mu(self, l, u):
        if self.obj.curvature is not None:
            return self._grouped_or("mu", lambda a, b: np.asarray(self.obj.curvature(a, b, self.est), float), l, u)
        return np.zeros_like(l)  # no modulus declared: no distance bound


#: the start's Newton passes on (f, λ) together (:func:`_refined`), and the relative change of λ that ends them
_REFINE_PASSES, _REFINE_RTOL = 10, 1e-9


def _refined(sep, lam: float, f, f0, total: float, weights=None):
    """(λ, f > 0): the quadratic model's multiplier and root refined by up to :data:`_REFINE_PASSES`
    Newton steps on the stationarity h_v'(f_v) + λ = 0 and Σ f = total together, one evaluation of
    h' and h'' per pass. Each value steps from its point x_v > 0 (the model's root where positive,
    else f⁰) by Newton in f, x − (h'(x) + λ)/h''(x), where that stays above 0, else by Newton in log f,
    x·exp(−(h'(x) + λ)/(x h''(x))) (the argmin's two steps; a value whose root is many decades below
    f⁰, an entropy or KL term's, is reached in log f); λ is the root of the sum of those steps,
    linear in λ (the log steps linearised at the current λ). A start, not an answer (the papers are
    silent; a choice): the safeguarded Newton on λ and the per-value bracketed Newton decide from
    it, so a pass that gives anything not finite is dropped, and the passes stop once λ moves by less
    than :data:`_REFINE_RTOL` of itself. From the model's λ (~4 % off for CLS + 1e-4 KL at d = 10²–10⁴)
    the passes reach ~1e-11, and the Newton on λ then makes one or two per-value solves instead of
    four to six (measured, seeds 1–3 of the route grid's data). ``weights``:
    each entry stands for that many values (the distinct-count groups: the sums are Σ_k n_k x_k)."""
    x = np.where(f > 0, f, f0)
    d = x.shape[0]
    tiny = np.finfo(float).tiny

    def wsum(v):
        return float(np.sum(v)) if weights is None else float(v @ weights)

    def whole(v):
        v = np.asarray(v, float)
        return v if v.shape == (d,) else np.broadcast_to(v, (d,))

    for _ in range(_REFINE_PASSES):
        with np.errstate(all="ignore"):
            g = whole(sep.d1(x))
            w = 1.0 / whole(sep.d2(x))
            lin = x - (g + lam) * w
            lin_ok = lin > 0
            log = x * np.exp(-(g + lam) * w / x)
            at = np.where(lin_ok, lin, log)                # each value's step at the current λ
            slope = np.where(lin_ok, w, log * w / x)       # −d(step)/dλ
            sw = wsum(slope)
            if not sw > 0:
                break
            new_lam = lam + (wsum(at) - total) / sw
            step = np.where(lin_ok, x - (g + new_lam) * w, x * np.exp(-(g + new_lam) * w / x))
            # (a root below the smallest normal float is left there, as the argmin leaves it)
            step = np.maximum(np.where(step > 0, step, x * np.exp(-(g + new_lam) * w / x)), tiny)
        if not (np.isfinite(new_lam) and sw > 0 and np.all(np.isfinite(step)) and np.all(step > 0)):
            break
        done = abs(new_lam - lam) <= _REFINE_RTOL * abs(new_lam)
        x, lam = step, new_lam
        if done:
            break
    return lam, x


class SeparableObjective(Objective):
    """A user objective declared separable, :math:`J(f) = Σ_v h_v(f_v)`, for the structured solver.

    ``h(f, estimate)``, ``dh``, ``d2h``: vectorised per-value :math:`h_v(f_v)`, :math:`h_v'(f_v)`, :math:`h_v''(f_v)` (length-d
    arrays; each :math:`h_v` convex, d2h > 0 where the solver may evaluate it). ``curvature(l, u, estimate)``
    (optional): a lower bound on :math:`h_v''` over :math:`[l_v, u_v]`, for the certificate's distance bound.
    ``cvxpy_expr(f, estimate)`` (optional): the same J as a cvxpy expression, for the cvxpy route.

    Parameters
    ----------
    h, dh, d2h : callable
        ``(f, estimate) -> (d,) array``: :math:`h_v(f_v)`, :math:`h_v'(f_v)`, :math:`h_v''(f_v)`.
    name : str, default "separable"
        Its name in the Solution.
    curvature : callable or None, default None
        ``(l, u, estimate) -> (d,) array``: a lower bound on :math:`h_v''` over :math:`[l_v, u_v]`.
    cvxpy_expr : callable or None, default None
        ``(f, estimate) -> cvxpy expression``: the same J. Without it only the structured solver
        solves it: ``Problem`` builds no cvxpy problem, refuses (``ValueError`` naming ``objective``)
        constraints that solver does not cover, and ``solve`` refuses a cvxpy solver by name
        (``ValueError`` naming ``solver``) and returns the structured answer, checked, whatever its status.

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

    scaled = False
    #: :meth:`check` built ``cvxpy_expr`` and found it convex (DCP) for the estimate: ``Problem`` defers
    #: its cvxpy problem to where a cvxpy solver needs it (the structured route never does)
    lazy_build = True

    def __init__(self, h: Callable, dh: Callable, d2h: Callable, *, name: str = "separable",
                 curvature: Callable | None = None, cvxpy_expr: Callable | None = None):
        for label, fn in (("h", h), ("dh", dh), ("d2h", d2h)):
            if not callable(fn):
                raise TypeError(f"{label} must be callable, got {type(fn).__name__}")
        self.h, self.dh, self.d2h, self.name = h, dh, d2h, name
        self.curvature, self.cvxpy_expr = curvature, cvxpy_expr
        self._elementwise: tuple | None = None  # (weak reference to an estimate, elementwise on it)
        self._convex: weakref.ref | None = None  # the estimate on which cvxpy_expr was found convex

    def check(self, estimate) -> None:
        """Raise ``ValueError`` naming ``objective`` when ``cvxpy_expr`` (if given) is not a convex
        (DCP) scalar on ``estimate``: the expression is built on a fresh length-d variable and DCP-checked
        here, before any work starts, instead of inside a whole cvxpy problem. The verdict is kept
        for the last estimate it was made on (a weak reference: the same objective solved again on the
        same estimate — a sweep over constraints, a benchmark's repeats — pays the ~0.2 ms of cvxpy's
        expression tree once); the problem itself is built only where a cvxpy solver needs it
        (``lazy_build``). The user's own exception, if the callable raises, propagates unchanged.

        Parameters
        ----------
        estimate : Estimate
            The raw estimate the expression is built on.

        Raises
        ------
        ValueError
            ``cvxpy_expr`` is not a scalar or not convex by cvxpy's DCP rules.

        Examples
        --------
        >>> import cvxpy as cp
        >>> import numpy as np
        >>> import ldpopt
        >>> est = ldpopt.oracles.get("grr", 1.0, 4).estimate(np.array([46_000, 30_000, 15_000, 9_000]), 100_000)
        >>> from ldpopt.problems import SeparableObjective
        >>> h, dh, d2h = (lambda f, e: f ** 2), (lambda f, e: 2 * f), (lambda f, e: np.full(f.shape, 2.0))
        >>> SeparableObjective(h, dh, d2h, cvxpy_expr=lambda f, e: cp.sum_squares(f)).check(est)  # convex: silent
        >>> try:
        ...     SeparableObjective(h, dh, d2h, cvxpy_expr=lambda f, e: -cp.sum_squares(f)).check(est)
        ... except ValueError as exc:
        ...     print(str(exc).split(":")[0], "names the argument")
        objective names the argument
        """
        if self.cvxpy_expr is None or (self._convex is not None and self._convex() is estimate):
            return
        import cvxpy as cp

        expr = self.cvxpy_expr(cp.Variable(estimate.d, name="x"), estimate)
        try:
            ok = cp.Minimize(expr).is_dcp()
        except Exception as exc:  # noqa: BLE001 - not a scalar cvxpy expression: cvxpy says why
            raise ValueError(f"objective: {self.name!r}'s cvxpy_expr is not a scalar cvxpy expression "
                             f"({exc})") from None
        if not ok:
            raise ValueError(f"objective: {self.name!r}'s cvxpy_expr is not convex (DCP): the problem would not "
                             "be a convex (DCP) problem")
        self._convex = weakref.ref(estimate)

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
