"""The route of a user's cvxpy objective, chosen from what it is (:mod:`.recognise`).
Notes: docs/notes/problems.md, "ldpopt.problems.solvers.user_forms".
"""

from __future__ import annotations

import copy

import numpy as np

from ..objectives.builtins import Objective, UserObjective
from ..objectives.finite import refuse_non_finite_parameters
from ..objectives.recognise import NotRecognised, Recognised, recognise, recognise_norms
from ..objectives.separable import Separable
from ..objectives.smooth import form_change, form_domain
from ..objectives.user_separable import SeparableObjective, UserSep
from .policy import QP_OPTIONS

__all__ = ["LiveRoute", "NormUserObjective", "RecognisedSeparable", "SmoothUserObjective", "domain_constraint",
           "route_objective"]


class _RecognisedSep(UserSep):
    """Per-value form for the structured solver; the interior argmin is UserSep's bracketed Newton.

    ``keys``: the estimate's support counts. Every per-value coefficient of a recognised CLS + KL is
    a function of the count (f̃_v is; a uniform prior is one float), so the solver and the certificate
    work once per distinct count (:mod:`.structured.grouped`: 120,978 AOL values, a few thousand
    counts) — :func:`~.structured.grouped.groups_of` checks every coefficient array
    (:meth:`per_value_arrays`) is constant on each count before it groups, else it does not."""

    count_grouped = True
    #: its per-value terms cost ~10 passes over the domain each: the certificate runs on the groups
    group_certificate = True

    def __init__(self, form: Recognised, name: str, keys=None, const: float | None = None):
        self.form, self.name, self._keys = form, name, keys
        # J's constant spread over the values, the same share on every restriction (a restricted form has none)
        self._const = form.const / form.d if const is None else const

    #: UserSep's probe is for a user's callables; a recognised form's terms are its coefficient arrays,
    #: restricted by :meth:`restrict`, and its argmin's derivatives come from :meth:`d1`/:meth:`d2`
    is_elementwise = False

    def group_keys(self):
        return self._keys

    def per_value_arrays(self) -> list:
        """The per-value coefficient arrays of the form (weights, slopes, offsets, linear part), in a
        fixed order: what must be equal on a group for the grouped evaluation to be the elementwise one."""
        terms, linear = self.form._lean
        out = [linear] + [x for t in terms for x in (t.w, *(v for ab in t.args for v in ab))]
        return [x for x in out if np.ndim(x) == 1]

    def value(self, f):
        return self._grouped_or("value", lambda x: self.form.value(x) + self._const, f)  # Σ_v = J

    def d1(self, f):
        return self._grouped_or("d1", self.form.d1, f)

    def d2(self, f):
        return self._grouped_or("d2", self.form.d2, f)

    def d1_scale(self, f):
        return self._grouped_or("d1_scale", self.form.d1_scale, f)

    def mu(self, l, u):
        return self._grouped_or("mu", self.form.curvature, l, u)

    def value_change(self, f, z):
        """(h_v(f_v) − h_v(z_v), a bound on its float64 rounding) per value where every per-value term
        is a square of an affine function of f (``Recognised.affine_d1``: h_v'(x) = A_v x + C_v), else
        None. Formed as (f − z)·(A·(f + z)/2 + C) — exact for a quadratic — so its rounding is eps
        times |f − z| and the coefficients' sizes, not eps·|h_v(f_v)| as a difference of the two
        values would carry: the certificate's gap floor (:func:`~.certificate.certify`) at
        d = 10⁵ (CLS + 1e-3·TV, J ≈ 0.37) was 1.3e-15, √ of which is a third of the 1e-7
        tolerance. The bound: 8·eps·(|f − z|·(Σ|2w a²|·|m| + Σ|2w a b| + |c|) + |result|), m the
        midpoint, c the linear part (a few roundings each in A, C, m, the product; generous)."""
        ad = self.form.affine_d1
        if ad is None:
            return None
        A, C = ad
        terms, linear = self.form._lean
        a_abs = sum(np.abs(2.0 * t.w * t.args[0][0] * t.args[0][0]) for t in terms)
        c_abs = np.abs(linear) + sum(np.abs(2.0 * t.w * t.args[0][0] * t.args[0][1]) for t in terms)
        f, z = np.asarray(f, float), np.asarray(z, float)
        step, mid = f - z, 0.5 * (f + z)
        dh = step * (A * mid + C)
        eps = np.finfo(float).eps
        return dh, 8.0 * eps * (np.abs(step) * (a_abs * np.abs(mid) + c_abs) + np.abs(dh))

    def argmin(self, t, l, u, d1l=None, d1u=None):
        if np.shape(l) == (self.form.d,):
            out = self._on_groups("argmin", t, l, u)
            if out is not None:
                return out
        if self.form.log_linear is not None:  # the root in closed form (_interior)
            return Separable.argmin(self, t, l, u, d1l, d1u)
        return self._argmin(t, l, u, d1l, d1u)  # (the groups were tried above)

    def _interior(self, t, l, u, idx):
        """Root of h'(f) + t = A f + L log f + C + t = 0 (``Recognised.log_linear``):
        f = (L/A)·ω(−(C + t)/L − log(L/A)) (scipy's ``wrightomega``, ~1e-15 relative in ω; z itself
        carries |z|·ε, so f a relative |z|·ε ~ 1e-13 at L = 1e-4), or exp(−(C + t)/L) where A = 0
        (KL to a prior or −entropy alone), then one Newton step in log f on the same three
        coefficients (to rounding, measured). A root below the smallest normal float is left at it,
        as the bracketed Newton does (:class:`~.objectives.UserSep`)."""
        from scipy.special import wrightomega

        A, L, C = (x if np.ndim(x) == 0 or idx is None else x[idx] for x in self.form.log_linear)
        tt = t if idx is None else t[idx]
        with np.errstate(all="ignore"):
            if np.ndim(A) == 0 and A == 0.0:
                f = np.exp(-(C + tt) / L)
            else:
                r = L / A
                f = r * wrightomega(-(C + tt) / L - np.log(r))
            g = A * f + L * np.log(f) + C + tt
            f = np.where(f > 0, f * np.exp(-g / (A * f + L)), f)
        tiny = np.finfo(float).tiny
        lo = l if idx is None else l[idx]
        return np.where((f < tiny) & (lo >= 0), tiny, f)

    def lambda_start(self, total: float) -> float | None:
        """λ of the quadratic model of a log-linear form (``Recognised.log_linear``, h'(f) = A f +
        L log f + C with the log dropped): A·τ with τ Norm-Sub's shift of −C/A to ``total``
        (``normalize.shift_support``, expected O(d)); None for another form or a per-value A. On CLS
        + 1e-4 KL it is within 4 % of the root (0.01657 against 0.01717 at d = 1,000, measured)."""
        from ...methods.normalize import shift_support

        ll = self.form.log_linear
        if ll is None or np.ndim(ll[0]) or ll[0] == 0.0 or not total > 0:  # (A = 0: no quadratic model)
            return None
        A, _, C = ll
        m = np.broadcast_to(-np.asarray(C, float) / A, (self.form.d,))
        if not np.all(np.isfinite(m)):
            return None
        tau, _ = shift_support(m, float(total))
        return float(A * tau)

    def _derivatives_at(self, idx, base):
        # per-value terms: only the values evaluated are computed
        sub = self.form if idx.size == self.form.d else self.form.restrict(idx)

        def at(k, fk):
            part = sub if k.size == idx.size else sub.restrict(k)
            return part.d1(fk), part.d2(fk)
        return at

    def restrict(self, idx):
        keys = self._keys
        return _RecognisedSep(self.form.restrict(idx), self.name, None if keys is None else keys[idx], self._const)


class RecognisedSeparable(SeparableObjective):
    """A user's cvxpy callable recognised as separable: the structured solver's objective, with the
    user's own cvxpy expression (and :class:`~.objectives.UserObjective`'s scaling) for the cvxpy chain."""

    scaled = True
    lazy_build = True  # the user's expression was built and recognised already

    def __init__(self, user: UserObjective, form: Recognised):
        super().__init__(lambda f, e: form.value(f), lambda f, e: form.d1(f), lambda f, e: form.d2(f),
                         name=user.name, curvature=lambda l, u, e: form.curvature(l, u), cvxpy_expr=user.func)
        self.user, self.form = user, form

    @property
    def as_written_first(self) -> bool:
        """As the user's callable's (:attr:`~ldpopt.problems.objectives.base.UserObjective.as_written_first`)."""
        return self.user.as_written_first

    def per_value(self, estimate):
        """The per-value form on ``estimate``'s support counts, kept for the last estimate: the
        solver, its certificate and the check read one, whose distinct-count groups are found once."""
        kept = self.__dict__.get("_per_value")
        if kept is not None and kept[0] is estimate:
            return kept[1]
        counts = getattr(estimate, "counts", None)
        keys = counts if counts is not None and np.shape(counts) == (self.form.d,) else None
        sep = _RecognisedSep(self.form, self.name, keys)
        self._per_value = (estimate, sep)
        return sep

    def gradient(self, f, estimate):
        """∇J(f) = h'(f) through :meth:`per_value`: once per distinct count where f is constant on
        each (the check's gradients at an answer of the grouped solve), else elementwise; the same floats."""
        return np.asarray(self.per_value(estimate).d1(np.asarray(f, float)), float)

    def smooth_view(self):
        """The same J as a :class:`SmoothUserObjective` (gradient, sparse Hessian, domain): what the
        Newton route of :mod:`.sqp` reads when the structured solver does not cover the constraints."""
        return SmoothUserObjective(self.user, self.form)

    def build(self, f, x, scale, estimate):
        return self.smooth_view().build(f, x, scale, estimate)  # the user's build, K read from the form

    def value(self, f, estimate):
        return self.form.total(f)

    def __repr__(self):
        return f"RecognisedSeparable({self.name!r}, terms={[t.kind for t in self.form.terms]})"


class SmoothUserObjective(UserObjective):
    """A user's cvxpy callable recognised as smooth but not separable: the cvxpy problem as before, with
    exact ``value``, ``gradient`` and ``hessian`` from the recognised form. For a quadratic J PIQP runs at the sequential-QP
    route's tolerances (``policy.QP_OPTIONS``): at its 1e-10 defaults an interior point leaves values whose
    optimum is 0 at ~√gap (measured: CLS + Σ (f_{v+1} − f_v)² at Retail, d = 16,470, certified
    ‖f − f*‖∞ ≤ 2e-7 at 1e-10, ≤ 2e-10 at these, same time)."""

    #: recognised and solved on ldpopt's own routes: scaled like the built-ins (UserObjective)
    default_multiplier = "auto"

    #: its Hessian is its recognised form's, entry for entry (the interior point may then write it
    #: into one fixed sparse pattern: :mod:`.ipm`)
    hessian_from_form = True

    def __init__(self, user: UserObjective, form: Recognised):
        super().__init__(user.func, name=user.name, multiplier=user.multiplier)
        self.form = form
        # quadratics only: Huber at these settings ran PIQP to its iteration limit (Retail, a Monotone
        # chain: 22 s, then Clarabel), at the 1e-10 defaults 0.4 s and passing the check
        # (not a linear J, an LP: at a 1e-14 gap PIQP ran to its iteration limit on c·f over the simplex
        # with a box, d = 10⁴, 250 iterations in 2.4 s where its 1e-10 defaults took 10 in 22 ms)
        curved = bool(form.terms) or bool(getattr(form, "quads", None))
        self.solver_options = {"PIQP": QP_OPTIONS["PIQP"]} if form.quadratic and curved else {}

    def build(self, f, x, scale, estimate):
        """The user's expression on ``f``: for a form with a geometric mean, the recognised expression
        copied onto ``f`` (``Recognised.rebuilt``; the callable is not run again: cvxpy's ``geo_mean``
        spent 1.5 s at d = 100 deriving its cone tree at each construction), else as any callable."""
        expr = self.form.rebuilt(f)
        if expr is None:
            return super().build(f, x, scale, estimate)
        same = copy.copy(self)  # UserObjective's build (shape checks, multiplier) on that expression
        same.func = lambda f, estimate: expr
        return UserObjective.build(same, f, x, scale, estimate)

    def value(self, f, estimate):
        return self.form.total(f)

    def gradient(self, f, estimate):
        return self.form.gradient(f)

    def hessian(self, f, estimate):
        return self.form.hessian(f)

    def hessian_parts(self, f, estimate):
        """(S, L) with ∇²J(f) = S + LᵀL, S sparse, L the low-rank forms' factor or None
        (``Recognised.hessian_parts``): what the interior point reads, O(d + nnz)."""
        return self.form.hessian_parts(f)

    def hessian_negative(self, f, estimate):
        """N with ∇²J(f) = S + LᵀL − NᵀN (``Recognised.hessian_negative``: a geometric mean's rank-1
        part), or None."""
        return self.form.hessian_negative(f)

    def change(self, f, delta) -> float:
        return form_change(self.form, f, delta)

    def domain(self, estimate):
        return form_domain(self.form)

    def curvature_floor(self, f, estimate) -> float:
        """A strong-convexity modulus of J on its whole domain (so on the segment from f to any f*):
        min_v of the per-value part's curvature lower bound over the domain (``Recognised.curvature``
        on :func:`.smooth.form_domain`; λ·KL adds λ/f_v → 0 as f_v → ∞, so only the squares count);
        the quadratic forms add positive semidefinite 2wAᵀA, so λ_min(∇²J) is at least this; 0 when
        there is none (Huber: no bound). Taking the minimum at f instead would not be a bound: λ/f_v is
        smaller at an optimum with larger values. It does not depend on f: computed once per form (the
        check reads it at every point it checks, ~0.3 ms each at d = 100, measured)."""
        cached = self.__dict__.get("_curvature_floor")
        if cached is not None and cached[0] is self.form:
            return cached[1]
        lo, hi = form_domain(self.form)
        with np.errstate(invalid="ignore"):
            out = max(float(np.min(self.form.curvature(lo, hi), initial=np.inf)), 0.0)
        self.__dict__["_curvature_floor"] = (self.form, out)
        return out

    def __repr__(self):
        return f"SmoothUserObjective({self.name!r}, quadratic forms={len(self.form.quads)})"


class NormUserObjective(UserObjective):
    """A user's cvxpy callable recognised as a quadratic (plus polyhedral and Huber terms) plus weighted
    2-norms of affine arguments, Σ_j w_j‖A_j f + b_j‖₂ (:func:`~.objectives.recognise.recognise_norms`):
    ``conic_form`` = (form, norms) is what :mod:`.direct_qp` writes into Clarabel's own interface, each
    2-norm one second-order cone. Solved and checked as the callable it wraps: its cvxpy expression is
    the callable's, ldpopt's check reads cvxpy's gradient of it (:mod:`~ldpopt.problems.check.verdict`),
    never the form — so a wrong form can cost a failed route, not a wrong status."""

    #: recognised and solved on ldpopt's own routes: scaled like the built-ins (UserObjective)
    default_multiplier = "auto"

    def __init__(self, user: UserObjective, form: Recognised, norms: list):
        super().__init__(user.func, name=user.name, multiplier=user.multiplier)
        self.conic_form = (form, norms)
        self._parameters_seen = form.parameters  # read by LiveRoute (the expression is not built again)

    def value(self, f, estimate):
        """J(f) in numpy: the form's value plus its 2-norms."""
        form, norms = self.conic_form
        f = np.asarray(f, float)
        out = form.total(f) + (form.kink_value(f) if form.kinks else 0.0)
        for w, A, b in norms:
            r = A @ f + b
            out += w * float(np.sqrt(np.sum(r * r)))
        return out

    def __repr__(self):
        return f"NormUserObjective({self.name!r}, 2-norms={len(self.conic_form[1])})"


def _norms_route(objective: UserObjective, exc: NotRecognised, d: int):
    """The :class:`NormUserObjective` for a callable whose recognition stopped at a 2-norm, or None:
    its addends other than 2-norms a QP the direct route writes (:func:`.policy.qp_form`), no
    low-rank quadratic form (the direct route's P would hold AᵀA dense: :func:`.policy._low_rank`)."""
    from .policy import qp_form

    src = exc.source
    if "Pnorm" not in str(exc) or src is None:
        return None
    expr, f = src
    got = recognise_norms(expr, f, d, exc.jacobians)
    if got is None or not qp_form(got[0]) or got[0].low_rank:
        return None
    return NormUserObjective(objective, *got)


def route_objective(objective: Objective, estimate) -> tuple[Objective, str]:
    """(the objective ``Problem`` solves, the route in words). Only a plain
    :class:`~.objectives.UserObjective` is changed; a callable that raises is left to the cvxpy
    build, which reports its error."""
    if type(objective) is not UserObjective:
        if (resolved := getattr(objective, "resolve", lambda e: objective)(estimate)) is not objective:
            return resolved, f"built-in ({objective.name!r} is {resolved.name!r} for this estimate)"
        if isinstance(objective, SeparableObjective):
            return objective, "separable (declared)"
        if isinstance(objective, UserObjective):  # a subclass: taken as written, never re-routed
            return objective, "cvxpy chain (a UserObjective subclass, taken as written)"
        return objective, "built-in"
    try:
        form = recognise(objective.func, estimate)
    except NotRecognised as exc:
        if exc.parameters is not None:  # read by LiveRoute, which would otherwise build the expression again
            objective._parameters_seen = exc.parameters
        norms = _norms_route(objective, exc, estimate.d)
        if norms is not None:
            return norms, ("2-norms of affine arguments plus a quadratic (recognised): Clarabel's own interface, "
                           "a second-order cone per 2-norm (the cvxpy chain where its answer does not pass)")
        return objective, f"cvxpy chain (not recognised: {exc})"
    except Exception as exc:  # noqa: BLE001 - the user's code; its error surfaces in Problem's build
        return objective, f"cvxpy chain (recognition stopped: {type(exc).__name__})"
    if form.kinks:
        from ..check.certificate import NonSmoothObjective

        if form.separable and form.strictly_convex:
            return NonSmoothObjective(objective, form, lambda part: RecognisedSeparable(objective, part)), ("non-smooth (recognised): a strictly convex separable part "
                                                         "plus polyhedral terms; the cvxpy chain, certified by a "
                                                         "duality gap with the kinks' subgradients")
        if not form.terms and not form.quads and not form.geo:  # a linear program
            from ..check.certificate import LinearKinkObjective

            return LinearKinkObjective(objective, form), ("linear plus polyhedral terms (recognised): a linear "
                                                         "program, certified by its dual's bound on J(f) - J*")
        objective._parameters_seen = form.parameters  # read by LiveRoute (as for a callable not recognised)
        return objective, ("cvxpy chain (recognised polyhedral terms, but the smooth part is not strictly convex "
                           "and separable: no certificate)")
    if form.separable and form.strictly_convex:
        return RecognisedSeparable(objective, form), ("separable (recognised): structured solver (the Newton "
                                                      "route over constraints it does not cover)")
    what = "separable, not strictly convex" if form.separable else "smooth non-separable"
    kind = "Newton / sequential QP with the exact sparse Hessian (interior point first)"
    return SmoothUserObjective(objective, form), f"{what}: {kind}"


class LiveRoute:
    """The route of an objective whose cvxpy callable holds ``Parameter`` objects, made again for their
    current values (notes: docs/problems.md). ``route(objective)``: (objective, route in words) for the values
    now, from a cache keyed on those values (a few routes: a sweep revisits few values; recognition
    at d = 1,000 is milliseconds)."""

    KEEP = 16

    def __init__(self, objective: Objective, estimate, first: tuple):
        self.user, self.estimate = objective, estimate
        # the Parameters recognition read, else the callable built again to find them
        known = getattr(getattr(first[0], "form", None), "parameters", None)
        if known is None:  # the Parameters recognition saw, kept on the objective the route solves
            known = getattr(first[0], "_parameters_seen", None)
        self.params = known if known is not None else _parameters(objective, estimate)
        self.cache = {self.key(): first} if self.params and self._all_set() else {}

    def _all_set(self) -> bool:
        return all(p.value is not None for p in self.params)

    def key(self) -> tuple:
        return tuple(np.asarray(p.value, float).tobytes() for p in self.params)

    def route(self) -> tuple[Objective, str] | None:
        """(objective, route) for the parameters' values now; None when there are none."""
        if not self.params:
            return None
        missing_parameter(self.params)
        k = self.key()
        if k not in self.cache:
            if len(self.cache) >= self.KEEP:
                self.cache.pop(next(iter(self.cache)))
            self.cache[k] = route_objective(self.user, self.estimate)
        return self.cache[k]


def _parameters(objective: Objective, estimate) -> tuple:
    """The cvxpy Parameters of a plain user callable's expression (on a fresh variable), in a fixed
    order; () for anything else or a callable that raises (its build reports that)."""
    import cvxpy as cp

    if type(objective) is not UserObjective:
        return ()
    try:
        expr = objective.func(cp.Variable(estimate.d), estimate)
        return tuple(sorted(expr.parameters(), key=lambda p: p.id))
    except Exception:  # noqa: BLE001 - the user's code; its error surfaces in Problem's build
        return ()


def missing_parameter(params) -> None:
    """Raise :class:`~.errors.MissingParameterError` naming the first of ``params`` without a value, and
    a one-line ``ValueError`` naming the first whose value holds NaN or inf (set after ``Problem(...)``,
    which refuses such data itself: :mod:`..objectives.finite`)."""
    from ..errors import MissingParameterError

    params = list(params)
    for p in params:
        if p.value is None:
            raise MissingParameterError(f"cvxpy Parameter {p.name()!r} has no value: set {p.name()}.value "
                                        "before solve() (Parameters are read at each solve)")
    refuse_non_finite_parameters(params, "solve()")


def domain_constraint(objective: Objective, constraints: list):
    """The implicit domain of a recognised objective made an explicit :class:`~.constraints.Box`
    named ``"domain"``, or None. cvxpy adds f_v ≥ c_v for ``power(f − c, p)`` (p not an even integer),
    ``log(f − c)``, ``entr(f − c)``… itself; ldpopt's structured solver, certificate and check read
    only the constraints they are given, so without it an optimum on the domain's edge (its multiplier
    the implicit constraint's) failed stationarity and was labelled ``inaccurate`` — Clarabel's
    answer included. Only the lower edge, and only where the problem already has f ≥ 0 (then
    max(edge, 0) is the same set) and some edge is above 0 (else f ≥ 0 says it all): a choice that
    covers the shifted powers and logs; an upper edge or a domain without f ≥ 0 stays cvxpy's alone."""
    from ..constraints.base import Box

    form = getattr(objective, "form", None)
    if form is None or not any(c.is_nonnegativity(k) for c in constraints for k in range(len(c.dual_keys()))):
        return None
    lo, _ = form_domain(form)
    lower = np.maximum(np.nan_to_num(lo, nan=0.0, neginf=0.0, posinf=np.inf), 0.0)
    if not np.all(np.isfinite(lower)) or not np.any(lower > 0):
        return None
    return Box(lower=lower, name="domain")
