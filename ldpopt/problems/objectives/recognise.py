"""Recognise a user's cvxpy objective as per-value terms (plus quadratic forms) with exact derivatives.
Notes: docs/notes/problems.md, "ldpopt.problems.objectives.recognise".
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property

import cvxpy as cp
import numpy as np
from cvxpy.atoms.affine.add_expr import AddExpression
from cvxpy.atoms.affine.binary_operators import DivExpression, MulExpression, multiply
from cvxpy.atoms.affine.cumsum import cumsum
from cvxpy.atoms.affine.hstack import Hstack
from cvxpy.atoms.affine.index import index, special_index
from cvxpy.atoms.affine.promote import Promote
from cvxpy.atoms.affine.reshape import reshape
from cvxpy.atoms.affine.sum import Sum
from cvxpy.atoms.affine.transpose import transpose
from cvxpy.atoms.affine.unary_operators import NegExpression
from cvxpy.atoms.elementwise.abs import abs as abs_
from cvxpy.atoms.elementwise.entr import entr
from cvxpy.atoms.elementwise.exp import exp as exp_
from cvxpy.atoms.elementwise.huber import huber
from cvxpy.atoms.elementwise.kl_div import kl_div
from cvxpy.atoms.elementwise.log import log as log_
from cvxpy.atoms.elementwise.logistic import logistic
from cvxpy.atoms.elementwise.maximum import maximum
from cvxpy.atoms.elementwise.power import Power, is_power2
from cvxpy.atoms.elementwise.rel_entr import rel_entr
from cvxpy.atoms.geo_mean import GeoMean
from cvxpy.atoms.lambda_max import lambda_max
from cvxpy.atoms.log_sum_exp import log_sum_exp
from cvxpy.atoms.max import max as max_
from cvxpy.atoms.norm1 import norm1
from cvxpy.atoms.norm_inf import norm_inf
from cvxpy.atoms.pnorm import Pnorm, PnormApprox
from cvxpy.atoms.quad_form import QuadForm
from cvxpy.atoms.quad_over_lin import quad_over_lin
from scipy.special import expit, logsumexp, xlogy

from .finite import refuse_non_finite
from .polyhedral import max_pieces

__all__ = ["NotRecognised", "Recognised", "recognise", "recognise_norms", "squares_floor"]


class NotRecognised(ValueError):
    """The expression is outside the recognised class (the message says which node). ``parameters``:
    the cvxpy Parameters of the expression walked (sorted by id), None where none was built — so the
    caller need not build the user's expression again to find them (``geo_mean`` at d = 100 costs
    cvxpy 1.5 s per build)."""

    parameters: tuple | None = None
    #: (expression, variable) :func:`recognise` walked, so a caller may read it again
    #: (:func:`recognise_norms`) without building the user's expression a second time
    source: tuple | None = None
    #: the Jacobians that walk read (:attr:`Recognised.jacobians`), which a second walk of ``source``
    #: reads instead of computing them again
    jacobians: dict | None = None


def _show(e) -> str:
    """The first 80 characters of ``e`` for a message. Constant arrays are printed summarised (a few
    entries each end): the full text of a length-10⁶ constant costs seconds, and a message is formed
    whenever an objective falls outside the recognised class, on the way to another route."""
    with np.printoptions(threshold=6, edgeitems=2):
        text = str(e)
    return text if len(text) <= 80 else text[:77] + "..."


def _phi(kind, p, z, k):
    """The k-th derivative (k = 0, 1, 2) of a one-argument atom at z."""
    with np.errstate(all="ignore"):
        if kind == "power":
            if p == 2.0:
                return z * z if k == 0 else (2.0 * z if k == 1 else np.full_like(z, 2.0))
            return z**p if k == 0 else (p * z ** (p - 1.0) if k == 1 else p * (p - 1.0) * z ** (p - 2.0))
        if kind == "huber":
            if k == 0:
                return np.where(np.abs(z) <= p, z * z, 2.0 * p * np.abs(z) - p * p)
            return 2.0 * np.clip(z, -p, p) if k == 1 else np.where(np.abs(z) <= p, 2.0, 0.0)
        if kind == "entr":
            return -xlogy(z, z) if k == 0 else (-np.log(z) - 1.0 if k == 1 else -1.0 / z)
        if kind == "log":
            return np.log(z) if k == 0 else (1.0 / z if k == 1 else -1.0 / (z * z))
        if kind == "exp":
            return np.exp(z)
        if kind == "logistic":
            if k == 0:
                return np.logaddexp(0.0, z)
            s = expit(z)
            return s if k == 1 else s * (1.0 - s)
    raise AssertionError(kind)


def _phi2(kind, x, y, k, x_varies=True, y_varies=True):
    """kl_div(x, y) = x log(x/y) − x + y and rel_entr(x, y) = x log(x/y): k = 0 the value, 1 (φx, φy),
    2 (φxx, φxy, φyy); a part with respect to an argument that does not vary with f is 0 (not computed)."""
    kl = kind == "kl_div"
    with np.errstate(all="ignore"):
        if k == 0:
            val = xlogy(x, x) - xlogy(x, y)
            return val - x + y if kl else val
        if k == 1:
            lr = np.log(x / y) if x_varies else 0.0
            ry = (1.0 - x / y if kl else -x / y) if y_varies else 0.0
            return (lr, ry) if kl else (lr + 1.0, ry)
        both = x_varies and y_varies
        return (1.0 / x if x_varies else 0.0, -1.0 / y if both else 0.0,
                x / (y * y) if y_varies else 0.0)


#: a quadratic form whose AᵀA would hold more than this × (d + nnz(A)) entries is kept as a factor
#: (:attr:`Recognised.low_rank`): a choice, well above a banded form's fill (3 for first differences)
LOW_RANK_FILL = 8.0


def _csr(A):
    """A as a scipy CSR array (indptr read per row)."""
    import scipy.sparse as sp

    return sp.csr_array(A)


_ONE_ARG = {"huber": "huber", "entr": "entr", "log": "log", "exp": "exp", "logistic": "logistic"}
_TWO_ARG = ("kl_div", "rel_entr")


def _lean(a):
    """``a`` as one float when all its entries are equal (a per-value coefficient), else ``a``."""
    if np.ndim(a) == 0:
        return float(a)
    a = np.asarray(a, float)
    return float(a[0]) if a.size and a[0] == a[-1] and np.all(a == a[0]) else a


def _nz(a, x):
    """``x`` where the coefficient ``a`` is nonzero, else 0 (``a`` one float or per value)."""
    if np.ndim(a) == 0:
        return x if a != 0 else 0.0
    return np.where(a != 0, x, 0.0)


@dataclass
class _Term:
    kind: str
    param: float
    w: np.ndarray                 # weight per value
    args: list                    # [(a, b)] or [(a1, b1), (a2, b2)]: z = a f + b per value


@dataclass
class _GeoMean:
    """w·G(z), z = a f + b per value (a, b length d), G(z) = Π_i z_i^{p_i} = exp(Σ_i p_i log z_i) the
    weighted geometric mean (p ≥ 0, Σ p = 1: cvxpy's own weights ``w`` of the atom, its rational
    approximation included, so the value is cvxpy's), w < 0. With q = p/z: ∂G/∂z_i = G q_i and
    ∂²G/∂z_i∂z_j = G (q_i q_j − δ_ij p_i/z_i²), so ∇²(w·G) = |w|G·diag(p a²/z²) − nnᵀ with
    n = √(|w|G)·q a: a diagonal minus one rank-1 term (Boyd & Vandenberghe, *Convex Optimization*,
    §3.1.5, the geometric mean's Hessian). Defined where z_i > 0 for every p_i > 0; at z_i = 0 G is
    0 and its gradient unbounded (the value is given, the gradient is not finite)."""

    w: float
    p: np.ndarray
    a: np.ndarray
    b: np.ndarray

    def _zg(self, f):
        """(z, G(z), the mask p > 0) at f (G NaN where some z_i < 0 with p_i > 0, 0 where one is 0)."""
        z = self.a * np.asarray(f, float) + self.b
        on = self.p > 0
        with np.errstate(divide="ignore", invalid="ignore"):
            G = float(np.exp(self.p[on] @ np.log(z[on]))) if np.all(z[on] >= 0) else np.nan
        return z, G, on

    def value(self, f) -> float:
        return self.w * self._zg(f)[1]

    def _q(self, f):
        z, G, on = self._zg(f)
        with np.errstate(divide="ignore", invalid="ignore"):
            q = np.where(on, self.p / z, 0.0)
        return z, G, q

    def gradient(self, f):
        _, G, q = self._q(f)
        return self.w * G * q * self.a

    def diagonal(self, f):
        """|w|·G·p a²/z² (the positive diagonal part of the Hessian)."""
        z, G, q = self._q(f)
        with np.errstate(divide="ignore", invalid="ignore"):
            return -self.w * G * np.where(self.p > 0, q / z, 0.0) * self.a * self.a

    def negative_row(self, f):
        """n = √(|w|G)·q a (the Hessian's rank-1 part is −nnᵀ)."""
        _, G, q = self._q(f)
        return np.sqrt(-self.w * G) * q * self.a


@dataclass
class Recognised:
    """J(f) = Σ_v [Σ_terms w φ(a f_v + b) + c_v f_v] + const + Σ_k w_k ‖A_k f + b_k‖² + Σ_g w_g G_g(a f + b)
    (the last: weighted geometric means, :attr:`geo`)."""

    d: int
    terms: list = field(default_factory=list)
    linear: np.ndarray | None = None
    const: float = 0.0
    quads: list = field(default_factory=list)   # (w, A sparse (m, d), b (m,))
    #: polyhedral terms (:mod:`~ldpopt.problems.check.certificate`): ("abs", W (m,), A, b) for Σ_k W_k |(A f + b)_k|, ("max", w
    #: (1,), A, b) for w·max_k (A f + b)_k; A sparse (m, d). Empty for a smooth objective
    kinks: list = field(default_factory=list)
    #: the cvxpy Parameters of the expression recognised (sorted by id; their values were read), or
    #: None where the form was not made by :func:`recognise`
    parameters: tuple | None = None
    #: weighted geometric means (:class:`_GeoMean`): w·G(a f + b), w < 0 (convex), G(z) = Π z_i^{p_i}
    geo: list = field(default_factory=list)
    #: (expression, variable) that :func:`recognise` walked, kept where the form has a geometric mean:
    #: cvxpy's ``geo_mean`` derives its cone tree at construction (1.5 s at d = 100, growing ~d³),
    #: so the problem's expression is this one's copy (:meth:`rebuilt`) rather than the callable's again
    source: tuple | None = field(default=None, repr=False)
    #: the walk's Jacobians of affine arguments, by node: id → (node, (A, b)) (:func:`_jacobian`), for
    #: the walk that made this form only — handed on with a :class:`NotRecognised` to a second walk of
    #: the same expression (:func:`recognise_norms`) and emptied when the walk ends. Measured (the
    #: Problem's construction, alternated with a second walk computing them afresh, least of 7): a
    #: grammar family with ``sum_squares`` of a ``cumsum`` at d = 10³ (seed 4028) 63 → 30 ms
    jacobians: dict = field(default_factory=dict, repr=False, compare=False)
    #: the walk reads per-value terms only (:func:`squares_floor`): a sum of squares of an argument
    #: that is not affine per value is checked (w ≥ 0, affine) and left out of :attr:`quads`, its
    #: Jacobian not computed. Measured (the check's ``expression_curvature`` on the 100 grammar
    #: families at d = 10³): 58 ms of such Jacobians, 39 ms of it on one ``sum_squares`` of a
    #: ``cumsum`` (seed 4028)
    per_value_only: bool = field(default=False, repr=False, compare=False)

    @property
    def separable(self) -> bool:
        return not self.quads and not self.geo

    @property
    def strictly_convex(self) -> bool:
        """Every value has a term with h'' > 0 throughout its domain (not huber, whose h'' is 0 past
        ±M, nor a linear term alone): what the structured solver's Newton on the multipliers needs."""
        covered = np.zeros(self.d, bool)
        for t in self.terms:
            if t.kind != "huber":
                covered |= (t.w != 0) & np.any([a != 0 for a, _ in t.args], axis=0)
        return bool(covered.all())

    @property
    def quadratic(self) -> bool:
        """True when J is a quadratic (its per-value terms are squares or linear)."""
        return not self.geo and all(t.kind == "power" and t.param == 2.0 for t in self.terms)

    @cached_property
    def _lean(self):
        """(terms, linear) with every per-value coefficient that is the same for all values held as one
        float: the derivatives the structured solver evaluates hundreds of times then skip the
        full-length products and masks of constant weights and slopes."""
        terms = [_Term(t.kind, t.param, _lean(t.w), [(_lean(a), _lean(b)) for a, b in t.args]) for t in self.terms]
        return terms, _lean(self.linear)

    @cached_property
    def log_linear(self):
        """(A, L, C), one float or one per value, with the separable part's h_v'(f) = A f + L log f + C,
        L > 0 everywhere and A > 0 everywhere or A = 0 everywhere — when every term is a square of an
        affine function of f, kl_div or rel_entr of (a f, a positive constant) or −entr(a f) (a > 0),
        plus the linear part (CLS + λ·KL to a prior, + λ·Σ f log f; KL to a prior or −entropy alone,
        A = 0) — else None. The root of h'(f) + t = 0 is then f = (L/A)·ω(−(C + t)/L − log(L/A)),
        ω the Wright omega function (u + log u = z), or f = exp(−(C + t)/L) where A = 0, where the
        bracketed Newton took ~10 rounds of derivative evaluations (:mod:`.solvers.user_forms`)."""
        if self.geo:
            return None
        terms, linear = self._lean
        A, L, C = 0.0, 0.0, linear
        with np.errstate(all="ignore"):
            for t in terms:
                if t.kind == "power" and t.param == 2.0:
                    (a, b), = t.args
                    A, C = A + 2.0 * t.w * a * a, C + 2.0 * t.w * a * b
                elif t.kind in _TWO_ARG:
                    (a1, b1), (a2, b2) = t.args
                    if not (np.all(b1 == 0) and np.all(a2 == 0) and np.all(a1 > 0) and np.all(b2 > 0)):
                        return None
                    # w·a1·[log(a1 f / b2) (+ 1 for rel_entr)]
                    L = L + t.w * a1
                    C = C + t.w * a1 * (np.log(a1) - np.log(b2) + (1.0 if t.kind == "rel_entr" else 0.0))
                elif t.kind == "entr":
                    (a, b), = t.args
                    if not (np.all(b == 0) and np.all(a > 0)):
                        return None
                    L, C = L - t.w * a, C - t.w * a * (np.log(a) + 1.0)  # w·a·(−log(a f) − 1)
                else:
                    return None
        A = _lean(A)
        if not ((np.ndim(A) == 0 and A == 0.0 or np.all(np.asarray(A) > 0)) and np.all(np.asarray(L) > 0)
                and np.all(np.isfinite(A)) and np.all(np.isfinite(L)) and np.all(np.isfinite(C))):
            return None
        return A, _lean(L), _lean(C)

    @cached_property
    def affine_d1(self):
        """(A, C), one float or one per value, with h_v'(f) = A f + C and A > 0 everywhere — when every
        per-value term is a square of an affine function of f (plus the linear part: CLS, or CLS
        tilted by a kink certificate's subgradients) — else None. The root of h'(f) + t = 0 is then
        −(C + t)/A, where the bracketed Newton (:class:`~.user_separable.UserSep`) spent its fixed
        cost of a few rounds (~0.5 ms per call at d = 100–1,000, measured)."""
        if self.geo:
            return None
        terms, linear = self._lean
        A, C = 0.0, linear
        for t in terms:
            if not (t.kind == "power" and t.param == 2.0 and len(t.args) == 1):
                return None
            (a, b), = t.args
            A, C = A + 2.0 * t.w * a * a, C + 2.0 * t.w * a * b
        if not (np.all(np.asarray(A) > 0) and np.all(np.isfinite(A)) and np.all(np.isfinite(C))):
            return None
        return _lean(A), _lean(C)

    def _parts(self, f, k):
        """Each term's w·(d/df)^k φ(z(f)) per value (the chain rule through z = a f + b; for the
        two-argument atoms the 2×2 Hessian, skipping an argument that does not depend on f)."""
        terms, _ = self._lean
        for t in terms:
            if len(t.args) == 1:
                (a, b), = t.args
                yield t.w * (a**k) * _phi(t.kind, t.param, a * f + b, k)
                continue
            (a1, b1), (a2, b2) = t.args
            parts = _phi2(t.kind, a1 * f + b1, a2 * f + b2, k, np.ndim(a1) > 0 or a1 != 0,
                          np.ndim(a2) > 0 or a2 != 0)
            with np.errstate(invalid="ignore"):  # 0·inf where an argument does not depend on f
                if k == 0:
                    v = parts
                elif k == 1:
                    v = _nz(a1, a1 * parts[0]) + _nz(a2, a2 * parts[1])
                else:
                    v = (_nz(a1, a1 * a1 * parts[0]) + _nz(a2, a2 * a2 * parts[2])
                         + _nz(a1 * a2, 2.0 * a1 * a2 * parts[1]))
            yield t.w * v

    def _sum(self, f, k):
        """Σ over terms of :meth:`_parts` (and the linear term)."""
        f = np.asarray(f, float)
        linear = self._lean[1]
        out = (linear * f if k == 0 else np.broadcast_to(linear, f.shape).copy() if k == 1
               else np.zeros_like(f))
        for part in self._parts(f, k):
            out = out + part
        return out

    def d1_scale(self, f):
        """Σ over terms of |w·(d/df) φ(z(f))| per value (and |linear|): the size of what h_v' is summed
        from, so its float64 rounding is ~eps times this (terms that cancel, e.g. 2(f − f̃) against
        λ·p/f, are seen)."""
        f = np.asarray(f, float)
        out = np.abs(np.broadcast_to(self._lean[1], f.shape))
        with np.errstate(all="ignore"):
            for part in self._parts(f, 1):
                out = out + np.abs(part)
        return out

    def value(self, f):
        """Per-value h_v(f_v) of the separable part (linear terms included; constants not)."""
        return self._sum(f, 0)

    def d1(self, f):
        return self._sum(f, 1)

    def d2(self, f):
        return self._sum(f, 2)

    def curvature(self, l, u):
        """Lower bound on the separable part's h_v'' over [l_v, u_v] (module docstring)."""
        out = np.zeros(np.broadcast_shapes(np.shape(l), np.shape(u)))
        for t in self._lean[0]:  # the lean coefficients: no pass over d to lean them again per term
            if len(t.args) == 2 and np.any(t.args[0][0] != 0) and np.any(t.args[1][0] != 0):
                continue
            one = Recognised(self.d, [t], 0.0)
            one.__dict__["_lean"] = ([t], 0.0)
            with np.errstate(invalid="ignore"):
                lo = np.fmin(one.d2(np.asarray(l, float)), one.d2(np.asarray(u, float)))
            out = out + np.where(np.isfinite(lo), np.maximum(lo, 0.0), 0.0)
        return out

    def total(self, f) -> float:
        f = np.asarray(f, float)
        out = float(np.sum(self.value(f))) + self.const
        for w, A, b in self.quads:
            r = A @ f + b
            out += w * float(r @ r)
        for g in self.geo:
            out += g.value(f)
        return out

    def _quads_t(self):
        """(w, A, Aᵀ as CSR, b) per quadratic form: each ``A.T`` is a new sparse object (~20 µs, 30–40
        gradients a solve at d = 100, measured), so the transposes are formed once — again whenever
        :attr:`quads` holds other forms than those cached (the list is appended to while
        :func:`recognise` walks; the cache holds its w, A and b, so their ids are not reused)."""
        key = tuple((id(w), id(A), id(b)) for w, A, b in self.quads)
        cache = self.__dict__.get("_quads_t_cache")
        if cache is None or cache[0] != key:
            cache = (key, [(w, A, _csr(A.T), b) for w, A, b in self.quads])
            self.__dict__["_quads_t_cache"] = cache
        return cache[1]

    def gradient(self, f):
        f = np.asarray(f, float)
        g = self.d1(f)
        for w, A, AT, b in self._quads_t():
            g = g + 2.0 * w * (AT @ (A @ f + b))
        for t in self.geo:
            g = g + t.gradient(f)
        return g

    def hessian(self, f):
        """Sparse ∇²J(f): diag(h'') + Σ 2w AᵀA (the constant second term formed once). A low-rank
        quadratic form (:attr:`low_rank`) or a geometric mean (:attr:`geo`, a rank-1 term) makes
        this dense: the interior point reads :meth:`hessian_parts` and :meth:`hessian_negative`
        instead."""
        import scipy.sparse as sp

        H = sp.diags(self.d2(f))
        for t in self.geo:
            H = H + sp.diags(t.diagonal(f))
        H = (H + self._quad_hessian).tocsr() if self.quads else H.tocsr()
        N = self.hessian_negative(f)
        return H if N is None else sp.csr_array(H - N.T @ N)

    def hessian_parts(self, f):
        """(S, L): ∇²J(f) = S + LᵀL − NᵀN with S sparse — diag(h''), the geometric means' diagonal
        parts and the quadratic forms whose AᵀA stays sparse — and L (k, d) sparse, the stacked
        √(2w)·A of the low-rank forms (:attr:`low_rank`), or None; N from :meth:`hessian_negative`.
        O(d + nnz) per call: no d × d product is formed for a dense A with few rows."""
        import scipy.sparse as sp

        low = self.low_rank
        dg = self.d2(f)
        for t in self.geo:
            dg = dg + t.diagonal(f)
        H = sp.diags(dg)
        if len(low) < len(self.quads):
            H = H + self._sparse_quad_hessian
        L = sp.vstack([np.sqrt(2.0 * w) * A for w, A, _ in low]).tocsr() if low else None
        return H.tocsr(), L

    def rebuilt(self, f):
        """The recognised expression with its variable replaced by the cvxpy expression ``f``
        (cvxpy's own ``tree_copy``: the same atoms, a ``geo_mean`` copied with its weights and cone
        tree, not derived again), or None where no source was kept."""
        if self.source is None:
            return None
        expr, var = self.source
        return expr.tree_copy({id(var): f})

    def hessian_negative(self, f):
        """N (k, d) dense with ∇²J(f) = S + LᵀL − NᵀN (:meth:`hessian_parts`), one row per geometric
        mean (:class:`_GeoMean`), or None when there is none. S + LᵀL − NᵀN is positive semidefinite
        (each w·G with w < 0 is convex), so the interior point's small Schur complement over these
        rows, though indefinite, is nonsingular (notes: docs/notes/problems.md)."""
        if not self.geo:
            return None
        return np.vstack([t.negative_row(f) for t in self.geo])

    @cached_property
    def low_rank(self) -> list:
        """The quadratic forms (w, A, b) whose AᵀA has more entries than ``LOW_RANK_FILL`` × (d + nnz(A))
        (Σ_k nnz(A_k)² bounds them: a dense A of a few rows fills AᵀA with d² entries). A choice: such
        a form stays a factor L = √(2w)·A beside the sparse Hessian (the interior point's Schur
        complement carries its k rows), where AᵀA cost 7.5 GB and 7 minutes at d = 10⁴ (U dense d × 3,
        measured)."""
        out = []
        for w, A, b in self.quads:
            nnz = np.diff(_csr(A).indptr).astype(np.float64)
            if float(nnz @ nnz) > LOW_RANK_FILL * (self.d + A.nnz):
                out.append((w, A, b))
        return out

    @cached_property
    def _quad_hessian(self):
        return sum(2.0 * w * (A.T @ A) for w, A, _ in self.quads)

    @cached_property
    def _sparse_quad_hessian(self):
        low = {id(A) for _, A, _ in self.low_rank}
        return sum(2.0 * w * (A.T @ A) for w, A, _ in self.quads if id(A) not in low)

    def kink_value(self, f) -> float:
        """Σ over the polyhedral terms of their value at f (:attr:`kinks`)."""
        out = 0.0
        for kind, W, A, b in self.kinks:
            r = A @ f + b
            out += float(W @ np.abs(r)) if kind == "abs" else float(W[0] * np.max(r))
        return out

    def restrict(self, idx) -> Recognised:
        """The separable part on the values ``idx`` (for the structured solver's screening)."""
        cut = lambda a: a[idx] if np.ndim(a) else a
        lean, linear = self._lean
        terms = [_Term(t.kind, t.param, cut(t.w), [(cut(a), cut(b)) for a, b in t.args]) for t in lean]
        if isinstance(idx, slice):  # the grouped simplex restricts to a leading slice of its sorted groups
            n = len(range(*idx.indices(self.d)))
        else:
            sel = np.asarray(idx)
            n = int(np.count_nonzero(sel)) if sel.dtype == bool else int(sel.size)
        out = Recognised(n, terms, cut(linear), 0.0, [])
        out.__dict__["_lean"] = (terms, out.linear)  # lean already
        return out


def recognise(func, estimate) -> Recognised:
    """Walk ``func(f, estimate)`` on a fresh length-d variable; raise :class:`NotRecognised` (with the
    node) when it is outside the class of the module docstring."""
    d = estimate.d
    f = cp.Variable(d, name="f")
    expr = func(f, estimate)
    if not isinstance(expr, cp.Expression) or expr.size != 1:
        raise NotRecognised("the callable does not return a scalar cvxpy expression")
    refuse_non_finite("objective", expr)  # NaN / inf data: refused (ValueError), never read into a form
    out = Recognised(d, [], np.zeros(d), parameters=tuple(sorted(expr.parameters(), key=lambda p: p.id)))
    try:
        _scalar(expr, 1.0, f, out)
    except NotRecognised as exc:
        exc.parameters = out.parameters
        exc.source = (expr, f)
        exc.jacobians = out.jacobians
        raise
    out.jacobians = {}
    if out.geo:
        out.source = (expr, f)
    return out


def recognise_norms(expr, f, d: int, jacobians: dict | None = None):
    """(form, norms) with ``expr`` = J_form(f) + Σ_j w_j·‖A_j f + b_j‖₂: the addends of ``expr``
    (through scalar sums, negations and constant factors) that are 2-norms of an affine vector argument
    with a weight w_j ≥ 0, each as (w_j, A_j sparse (m_j, d), b_j), and every other addend in
    :func:`recognise`'s class (``form``, a :class:`Recognised`); None when some addend is neither,
    or when there is no 2-norm. Each 2-norm is one second-order cone (t_j, A_j f + b_j) with cost
    w_j·t_j (:mod:`~ldpopt.problems.solvers.direct_qp`). ``jacobians``: those a walk of the same
    ``expr`` and ``f`` read (:attr:`NotRecognised.jacobians`), read here instead of computed again."""
    parts: list = []
    norms = []
    out = Recognised(d, [], np.zeros(d), parameters=tuple(sorted(expr.parameters(), key=lambda p: p.id)),
                     jacobians={} if jacobians is None else jacobians)
    try:
        _addends(expr, 1.0, parts)
        for w, node in parts:
            if (type(node) in (Pnorm, PnormApprox) and float(node.p) == 2.0 and getattr(node, "axis", None) is None
                    and node.args[0].ndim <= 1 and node.args[0].is_affine()):
                if w < 0:
                    return None  # concave
                if w > 0:
                    A, b = _jacobian(node.args[0], f, d, out.jacobians)
                    norms.append((float(w), A, b))
                continue
            _scalar(node, w, f, out)
    except NotRecognised:
        return None
    finally:
        out.jacobians = {}
    return (out, norms) if norms else None


def squares_floor(expr, x, d: int) -> float:
    """A strong-convexity modulus μ ≥ 0 of a convex scalar ``expr`` in its length-d variable ``x``
    (expr − μ/2·‖x‖² convex), read from its addends: each addend recognised as per-value terms
    (:func:`recognise`'s class, e.g. ``sum_squares`` of a per-value affine argument) gives 2w·a²
    per value for its squares w·(a x_v + b)² and nothing for its other terms (convex: their Hessian
    is ≥ 0); an addend outside that class (a 2-norm, any cvxpy atom) must be convex by cvxpy's
    DCP rules and gives nothing. μ is the smallest per-value total; 0 when an addend is neither,
    or when some value has no square.

    Why this is a bound: Σ_v c_v·(a_v x_v + b_v)² − μ/2·‖x‖² is convex when 2c_v a_v² ≥ μ for
    every v, and adding convex functions keeps convexity (Boyd & Vandenberghe, *Convex
    Optimization*, §3.2.1, §9.1.2) — whether or not the other addends are differentiable.

    Parameters
    ----------
    expr : cvxpy Expression
        A scalar convex expression (a problem's objective).
    x : cvxpy Variable
        The variable, length d.
    d : int
        Its length.

    Returns
    -------
    float
        μ in x's units (0: no modulus known).
    """
    parts: list = []
    try:
        _addends(expr, 1.0, parts)
        c = np.zeros(d)
        for w, node in parts:
            if node.is_constant() or w == 0:
                continue
            one = Recognised(d, [], np.zeros(d), per_value_only=True)
            try:
                _scalar(node, w, x, one)
            except NotRecognised:
                if not ((w > 0 and node.is_convex()) or (w < 0 and node.is_concave())):
                    return 0.0
                continue
            for t in one.terms:
                if t.kind == "power" and t.param == 2.0 and len(t.args) == 1:
                    if np.any(t.w < 0):  # not convex: recognition refuses this; never a bound
                        return 0.0
                    a = t.args[0][0]
                    c = c + 2.0 * t.w * a * a
    except NotRecognised:  # a parameter without a value
        return 0.0
    mu = float(np.min(c, initial=np.inf))
    return mu if np.isfinite(mu) and mu > 0 else 0.0


def _addends(e, w: float, out: list) -> None:
    """(w_k, e_k) with w·e = Σ_k w_k·e_k, through scalar sums, negations, reshapes and products /
    quotients by a constant scalar; any other node is one addend."""
    if e.size == 1 and isinstance(e, AddExpression) and all(a.size == 1 for a in e.args):
        for a in e.args:
            _addends(a, w, out)
        return
    if isinstance(e, NegExpression):
        return _addends(e.args[0], -w, out)
    if isinstance(e, reshape) and e.args[0].size == 1:
        return _addends(e.args[0], w, out)
    if isinstance(e, (multiply, MulExpression, DivExpression)) and e.size == 1:
        left, right = e.args
        if isinstance(e, DivExpression):
            k = _const(right)
            if k is not None and k.size == 1 and float(k.reshape(())) != 0 and left.size == 1:
                return _addends(left, w / float(k.reshape(())), out)
        else:
            k, other = (_const(left), right) if _const(left) is not None else (_const(right), left)
            if k is not None and k.size == 1 and other.size == 1:
                return _addends(other, w * float(k.reshape(())), out)
    out.append((w, e))


def _const(e):
    if isinstance(e, cp.Expression) and e.is_constant():
        v = e.value
        if v is None:
            raise NotRecognised(f"a parameter without a value in {_show(e)}")
        return np.asarray(v, float)
    return None


def _vec(v, d):
    v = np.asarray(v, float)
    if v.size == 1:
        return np.full(d, float(v.reshape(())))
    if v.shape != (d,):
        raise NotRecognised(f"a constant of shape {v.shape} where a length-{d} one is needed")
    return v


def _affine(e, f, d):
    """(a, b) with e = a f + b per value (length-d arrays), or None when e is affine but not per value."""
    c = _const(e)
    if c is not None:
        return np.zeros(d), _vec(c, d)
    if e is f:
        return np.ones(d), np.zeros(d)
    if isinstance(e, AddExpression):
        parts = [_affine(x, f, d) for x in e.args]
        if any(p is None for p in parts):
            return None
        return sum(p[0] for p in parts), sum(p[1] for p in parts)
    if isinstance(e, NegExpression):
        p = _affine(e.args[0], f, d)
        return None if p is None else (-p[0], -p[1])
    if isinstance(e, Promote):
        return None  # a promoted non-constant scalar (e.g. Σf broadcast): not per value
    if isinstance(e, (multiply, MulExpression, DivExpression)):
        left, right = e.args
        k = _const(right) if isinstance(e, DivExpression) else _const(left)
        other = left if isinstance(e, DivExpression) else right
        if k is None and not isinstance(e, DivExpression):
            k, other = _const(right), left
        if k is None or (type(e) is MulExpression and k.size != 1):
            return None
        k = _vec(1.0 / k if isinstance(e, DivExpression) else k, d)
        p = _affine(other, f, d)
        return None if p is None else (k * p[0], k * p[1])
    return None


def _scalar(e, w: float, f, out: Recognised) -> None:
    """Add w·e (e scalar) to ``out``."""
    c = _const(e)
    if c is not None:
        out.const += w * float(c.reshape(()))
        return
    if isinstance(e, AddExpression):
        for x in e.args:
            if x.size == 1:
                _scalar(x, w, f, out)
            else:
                _vector(x, np.full(x.size, w), f, out)
        return
    if isinstance(e, NegExpression):
        return _scalar(e.args[0], -w, f, out)
    if isinstance(e, reshape):
        return _scalar(e.args[0], w, f, out)
    if isinstance(e, Sum):
        return _vector(e.args[0], np.full(e.args[0].size, w), f, out)
    if type(e).__name__ == "norm1":
        return _kink("abs", e.args[0], np.full(e.args[0].size, w), f, out)
    if type(e).__name__ in ("max", "norm_inf", "maximum") and getattr(e, "axis", None) is None:
        return _max_kink(e, w, f, out)  # ‖u‖∞ = max(u, −u), max(u), maximum(s, t): one "max" kink
    if type(e).__name__ == "abs" and e.size == 1:
        return _kink("abs", e.args[0], np.array([w]), f, out)
    if isinstance(e, (multiply, MulExpression, DivExpression)):
        left, right = e.args
        if isinstance(e, DivExpression):
            k = _const(right)
            if k is None or k.size != 1:
                raise NotRecognised(f"division by a non-constant in {_show(e)}")
            return _scalar(left, w / float(k.reshape(())), f, out)
        k, other = (_const(left), right) if _const(left) is not None else (_const(right), left)
        if k is None:
            raise NotRecognised(f"a product of two non-constant expressions: {_show(e)}")
        if k.size == 1 and other.size == 1:
            return _scalar(other, w * float(k.reshape(())), f, out)
        return _vector(other, w * _vec(k, other.size), f, out)  # w · (k @ v) or Σ multiply(k, v) on a scalar
    if isinstance(e, GeoMean):
        return _geo_mean(e, w, f, out)
    if type(e).__name__ == "quad_over_lin":
        y = _const(e.args[1])
        if y is None or float(y) <= 0:
            raise NotRecognised(f"quad_over_lin with a non-constant or non-positive denominator: {_show(e)}")
        return _square(e.args[0], w / float(y), f, out)
    raise NotRecognised(f"a {type(e).__name__} atom: {_show(e)}")


def _geo_mean(e, w: float, f, out: Recognised) -> None:
    """w·geo_mean(x) (w ≤ 0: convex), x affine per value of length d (:class:`_GeoMean`), with the
    atom's own weights ``e.w`` (zero weights dropped by cvxpy: ``e._keep``)."""
    if w > 0:
        raise NotRecognised("geo_mean with a positive weight (concave: not convex)")
    x = e.args[0]
    if getattr(e, "axis", None) is not None or x.ndim > 1 or x.size != out.d:
        raise NotRecognised(f"geo_mean of an argument that is not a length-{out.d} vector: {_show(e)}")
    p = _affine(x, f, out.d)
    if p is None:
        raise NotRecognised(f"geo_mean of an argument that is not affine per value: {_show(e)}")
    if w == 0:
        return
    weights = np.zeros(out.d)
    weights[np.asarray(e._keep, bool)] = [float(v) for v in e.w]
    a, b = (np.broadcast_to(np.asarray(v, float), (out.d,)).copy() for v in p)
    if np.any((weights > 0) & (a == 0) & ~(b > 0)):
        raise NotRecognised(f"geo_mean of an entry that is a constant ≤ 0 (G is 0 or undefined everywhere): {_show(e)}")
    out.geo.append(_GeoMean(float(w), weights, a, b))


def _square(arg, w, f, out):
    """w · Σ arg² (w ≥ 0): per-value squares when arg is affine per value, else a quadratic form."""
    if w < 0:
        raise NotRecognised("a sum of squares with a negative weight (not convex)")
    d = out.d
    if arg.size == d:
        p = _affine(arg, f, d)
        if p is not None:
            out.terms.append(_Term("power", 2.0, np.full(d, w), [p]))
            return
    if not arg.is_affine():
        raise NotRecognised(f"a sum of squares of a non-affine argument: {_show(arg)}")
    if out.per_value_only:
        return
    A, b = _jacobian(arg, f, d, out.jacobians)
    out.quads.append((w, A, b))


def _vector(e, W, f, out):
    """Add Σ_v W_v e_v (e a length-d expression) to ``out``."""
    d = out.d
    if type(e).__name__ == "abs":
        return _kink("abs", e.args[0], np.asarray(W, float), f, out)
    if type(e).__name__ == "maximum" and len(e.args) == 2:
        return _maximum(e, np.asarray(W, float), f, out)
    if e.size != d:
        if isinstance(e, (AddExpression, NegExpression, multiply, DivExpression)) and not e.is_affine():
            return _vector_parts(e, W, f, out)  # a weighted |·| of another length, checked there
        raise NotRecognised(f"an expression of size {e.size} summed where length-{d} per-value terms are needed: {_show(e)}")
    p = _affine(e, f, d)
    if p is not None:
        out.linear = out.linear + W * p[0]
        out.const += float(W @ p[1])
        return
    if isinstance(e, (AddExpression, NegExpression, multiply, DivExpression)):
        return _vector_parts(e, W, f, out)
    name = type(e).__name__
    if isinstance(e, Power):
        kind, param = "power", float(np.asarray(e.p.value if hasattr(e.p, "value") else e.p))
    elif name in _ONE_ARG:
        kind, param = name, float(e.M.value) if name == "huber" else 0.0
    elif name in _TWO_ARG:
        kind, param = name, 0.0
    else:
        raise NotRecognised(f"a {name} atom: {_show(e)}")
    if not ((e.is_convex() and np.all(W >= 0)) or (e.is_concave() and np.all(W <= 0))):
        raise NotRecognised(f"{name} with weights of the wrong sign (not convex): {_show(e)}")
    args = [_affine(a, f, d) for a in e.args[:2 if name in _TWO_ARG else 1]]
    if any(a is None for a in args):
        raise NotRecognised(f"{name} of an argument that is not affine per value: {_show(e)}")
    out.terms.append(_Term(kind, param, np.asarray(W, float), args))


def _vector_parts(e, W, f, out):
    """Σ_k W_k e_k for a sum, negation or constant product / quotient: each part in turn."""
    size = e.size
    if isinstance(e, AddExpression):
        for x in e.args:  # a promoted scalar part adds Σ_k W_k times itself
            _vector(x, W, f, out) if x.size == size else _scalar(x, float(np.sum(W)), f, out)
        return
    if isinstance(e, NegExpression):
        return _vector(e.args[0], -W, f, out)
    left, right = e.args
    if isinstance(e, DivExpression):
        k = _const(right)
        if k is None:
            raise NotRecognised(f"division by a non-constant in {_show(e)}")
        return _vector(left, W / _vec(k, size), f, out)
    k, other = (_const(left), right) if _const(left) is not None else (_const(right), left)
    if k is None:
        raise NotRecognised(f"a product of two non-constant expressions: {_show(e)}")
    return _vector(other, W * _vec(k, size), f, out)


def _maximum(e, W, f, out: Recognised) -> None:
    """Σ_k W_k max(s_k, t_k) for two affine arguments (W ≥ 0): max(s, t) = (s + t)/2 + |s − t|/2, so
    a linear part and an ``abs`` kink with weights W/2 — the pinball (quantile) loss
    max(τu, (τ − 1)u) is (τ − ½)u + |u|/2 — which the direct QP route solves without cvxpy. A
    constant scalar argument stands for itself in every entry (``pos(x)`` is ``maximum(x, 0)``)."""
    from cvxpy.atoms.affine.promote import promote

    s_arg, t_arg = (promote(a, e.shape) if a.size == 1 < e.size and a.is_constant() else a for a in e.args)
    if not (s_arg.is_affine() and t_arg.is_affine()) or s_arg.size != e.size or t_arg.size != e.size:
        raise NotRecognised(f"maximum of arguments that are not affine of its own size: {_show(e)}")
    W = np.broadcast_to(np.asarray(W, float).ravel(), (e.size,))
    if np.any(W < 0):
        raise NotRecognised("maximum with a negative weight (not convex)")
    import scipy.sparse as sp

    d = out.d
    per = [_affine(arg, f, d) if arg.size == d else None for arg in (s_arg, t_arg)]
    ps, pt = per
    if ps is not None and pt is not None:  # both k∘f + c: diagonal rows, formed without scipy's sums
        full = lambda v: np.broadcast_to(np.asarray(v, float), (d,))
        a_s, b_s, a_t, b_t = full(ps[0]), full(ps[1]), full(pt[0]), full(pt[1])
        with np.errstate(invalid="ignore"):
            out.linear = out.linear + _diag_csr(a_s + a_t).T @ (W / 2)  # (the same products as the sparse sum's)
        out.const += float((W / 2) @ (b_s + b_t))
        out.kinks.append(("abs", W / 2, _diag_csr(a_s - a_t), b_s - b_t))
        return
    rows = []
    for arg, p in zip((s_arg, t_arg), per):  # A f + b: per value without cvxpy's Jacobian where it is (k∘f + c)
        rows.append((sp.diags_array(np.broadcast_to(np.asarray(p[0], float), (d,))).tocsr(),
                     np.broadcast_to(np.asarray(p[1], float), (d,))) if p is not None
                    else _jacobian(arg, f, d, out.jacobians))
    (A_s, b_s), (A_t, b_t) = rows
    out.linear = out.linear + np.asarray((A_s + A_t).T @ (W / 2)).ravel()  # the linear part Σ_k (W_k/2)(s + t)_k
    out.const += float((W / 2) @ (b_s + b_t))
    out.kinks.append(("abs", W / 2, sp.csr_array(A_s - A_t), b_s - b_t))


def _diag_csr(a):
    """diag(a) as a CSR array with its zero entries not stored (as scipy's ``diags_array(a).tocsr()``
    and the sums of such arrays store them)."""
    import scipy.sparse as sp

    a = np.asarray(a, float)
    keep = a != 0
    ptr = np.zeros(a.size + 1, dtype=np.int32)
    np.cumsum(keep, out=ptr[1:])
    return sp.csr_array((a[keep], np.flatnonzero(keep).astype(np.int32), ptr), shape=(a.size, a.size))


def _kink(kind: str, arg, W, f, out: Recognised) -> None:
    """A polyhedral term of an affine argument A f + b (any length): Σ_k W_k |·_k| (``abs``, W ≥ 0) or
    W·max_k (``max``, W ≥ 0); A from cvxpy's Jacobian, as for the quadratic forms."""
    if not arg.is_affine():
        raise NotRecognised(f"{kind} of a non-affine argument: {_show(arg)}")
    W = np.asarray(W, float).ravel()
    if np.any(W < 0):
        raise NotRecognised(f"{kind} with a negative weight (not convex)")
    A, b = _jacobian(arg, f, out.d, out.jacobians)
    out.kinks.append((kind, W, A, b))


def _max_kink(e, w: float, f, out: Recognised) -> None:
    """w·e for a scalar e that is a maximum of affine pieces (:func:`.polyhedral.max_pieces`: ‖u‖∞ as
    max(u, −u), max(u), a maximum of scalars): one ``max`` kink whose rows are the pieces' Jacobians
    stacked — ‖·‖∞ is polyhedral, so ldpopt's kink certificate applies where cvxpy's gradient of
    ``norm_inf`` is not implemented."""
    import scipy.sparse as sp

    pieces = max_pieces(e)
    if pieces is None:
        raise NotRecognised(f"a {type(e).__name__} that is not a maximum of affine pieces: {_show(e)}")
    if w < 0:
        raise NotRecognised(f"{type(e).__name__} with a negative weight (not convex)")
    rows = [_jacobian(P, f, out.d, out.jacobians) for P in pieces]
    A = rows[0][0] if len(rows) == 1 else sp.csr_array(sp.vstack([A for A, _ in rows], format="csr"))
    out.kinks.append(("max", np.array([float(w)]), A, np.concatenate([b for _, b in rows])))


def _jacobian(arg, f, d, memo: dict | None = None):
    """(A sparse (m, d), b) with arg = A f + b (arg affine): cvxpy's Jacobian at f = 0 — composed
    directly (:func:`_affine_rows`) for the affine nodes of a vector of f (slices, sums, negations,
    products with constants), cvxpy's ``grad`` for anything else. ``memo``: the walk's
    (:attr:`Recognised.jacobians`): the pair kept there by ``arg``, and read there where ``arg`` was
    read before (the same node; its constants and Parameter values do not change within one walk)."""
    if memo is not None:
        kept = memo.get(id(arg))
        if kept is not None and kept[0] is arg:
            return kept[1]
        got = _jacobian(arg, f, d)
        memo[id(arg)] = (arg, got)  # the node kept alive with its pair: its id is not reused meanwhile
        return got
    import scipy.sparse as sp

    saved = f.value
    set_value(f, np.zeros(d))
    try:
        b = np.asarray(arg.value, float).ravel(order="F")
        A = _affine_rows(arg, f, d) if arg.ndim <= 1 else None
        if A is not None:  # canonical: no duplicate or stored zero entries (a zero factor, a cancellation)
            A = sp.csr_array(A)
            A.sum_duplicates()
            A.eliminate_zeros()
        else:
            budget = RUNNING_SUM_ENTRIES * d
            try:
                got = affine_jacobians(arg, budget) if arg.variables() else None
            except DenseRunningSum as exc:
                raise NotRecognised(f"the rows of {_show(arg)} read a running sum over {exc.values} values "
                                    f"{exc.rows} times, {exc.rows * exc.values:,} dense entries (over "
                                    f"{RUNNING_SUM_ENTRIES} per value of f): left to the cvxpy chain") from None
            if got is None and (m := _longest_running_sum(arg)) * (m + 1) // 2 > budget:
                raise NotRecognised(f"the rows of {_show(arg)} hold a running sum over {m} values, "
                                    f"a dense triangle of {m * (m + 1) // 2:,} entries: left to the cvxpy chain")
            # (affine_jacobians already declined here: cvxpy's chain rule, the common affine nodes without cvxcore)
            jac = got.get(f) if got is not None else _chain_grad(arg, {}).get(f)
            A = sp.csr_array((arg.size, d)) if jac is None else sp.csr_array(jac).T.tocsr()
    finally:
        set_value(f, saved)
    return A, b


def _longest_running_sum(e) -> int:
    """The length of the longest ``cumsum`` argument in the expression tree of ``e`` (0: none): the
    side of the triangular Jacobian it contributes where all its rows are read."""
    from cvxpy.atoms.affine.cumsum import cumsum

    here = e.args[0].size if type(e) is cumsum else 0
    return max([here, *(_longest_running_sum(a) for a in getattr(e, "args", ()))])


def _affine_rows(e, f, d):
    """∂e/∂f as a sparse (e.size, d) CSR array for an affine e built from f (a vector of length d) by
    basic slices, sums and differences of the same shape (or a constant scalar), negations, and
    products / quotients with constants (elementwise, or a constant matrix on the left); None for
    any other node (the caller asks cvxpy). The same matrix as cvxpy's ``grad`` gives, transposed
    (tests/test_check_cvxpy_grad.py): the chain through cvxcore cost 3.5 ms at d = 1,000 for
    f[1:] − f[:-1], a slice of rows of the identity here."""
    import scipy.sparse as sp

    kind = type(e)
    if e is f:
        return sp.eye_array(d, format="csr")
    if e.ndim > 1:
        return None
    if e.is_constant():
        return sp.csr_array((e.size, d))
    if kind is index:
        if e.args[0].ndim != 1:
            return None
        rows = np.asarray(e.numeric([np.arange(e.args[0].size)]), dtype=np.intp)  # cvxpy's own indexing
        if np.ndim(rows) != 1:
            return None
        if e.args[0] is f:  # rows of the identity
            return sp.csr_array((np.ones(rows.size), rows.astype(np.int32), np.arange(rows.size + 1, dtype=np.int32)),
                                shape=(rows.size, d))
        inner = _affine_rows(e.args[0], f, d)
        return None if inner is None else inner[rows]
    if kind is AddExpression:
        out = None
        for a in e.args:
            if a.is_constant():
                continue
            if a.shape != e.shape:
                return None
            part = _affine_rows(a, f, d)
            if part is None:
                return None
            out = part if out is None else out + part
        return out.tocsr() if out is not None else sp.csr_array((e.size, d))
    if kind is NegExpression:
        inner = _affine_rows(e.args[0], f, d)
        return None if inner is None else -inner
    if kind in (multiply, MulExpression, DivExpression):
        left, right = e.args
        if kind is DivExpression:
            k = _const(right)
            if k is None or left.shape != e.shape:
                return None
            inner = _affine_rows(left, f, d)
            return None if inner is None else _scale_rows(inner, 1.0 / np.broadcast_to(k, e.shape).ravel())
        if left.is_constant() == right.is_constant():
            return None
        c_node, x_node = (left, right) if left.is_constant() else (right, left)
        inner = _affine_rows(x_node, f, d)
        c = c_node.value
        if inner is None or c is None:
            return None
        if kind is multiply or np.size(c) == 1 and not sp.issparse(c):
            if x_node.shape != e.shape:
                return None
            return _scale_rows(inner, np.broadcast_to(np.asarray(c, float), e.shape).ravel())
        if c_node is left and np.ndim(c) == 2 and x_node.ndim == 1:
            return sp.csr_array(c @ inner)
        return None
    return None


def _scale_rows(A, c):
    """diag(c) A for a CSR array A: each row times its constant."""
    import scipy.sparse as sp

    A = sp.csr_array(A)
    return sp.csr_array((A.data * np.repeat(c, np.diff(A.indptr)), A.indices, A.indptr), shape=A.shape)


# ---- cvxpy's gradient by its own chain rule, the affine nodes' Jacobians kept (the check's, recognition's
# and the exact pre-check's affine rows)

def _constant_jacobian(node) -> bool:
    """Whether cvxpy's ``node._grad`` does not read the arguments' values (only their shapes and the
    constant arguments' values): the generic affine Jacobian (built through cvxcore), cumsum's, and a
    product with a constant factor (which takes the generic one)."""
    from cvxpy.atoms.affine.affine_atom import AffAtom
    from cvxpy.atoms.affine.binary_operators import MulExpression
    from cvxpy.atoms.affine.cumsum import cumsum

    if not isinstance(node, AffAtom):
        return False
    own = type(node)._grad
    if own is AffAtom._grad or own is cumsum._grad:
        return True
    return isinstance(node, MulExpression) and any(a.is_constant() for a in node.args)


def _plain_jacobian(node):
    """cvxpy's ``node._grad`` for the affine nodes every objective has — a sum or difference of
    same-shape terms, a negation, ``sum`` over everything, a product with a constant whose entries
    are all finite and non-zero — written directly (±I, a column of ones, diag(c): the same entries
    and the same sparsity as the matrix cvxcore builds for them, so the chain rule's products are the
    same bits); None for anything else (cvxpy's own then). A constant argument gets cvxpy's
    placeholder (0, or an empty matrix), which the chain rule never reads."""
    import scipy.sparse as sp
    from cvxpy.atoms.affine.add_expr import AddExpression
    from cvxpy.atoms.affine.binary_operators import multiply
    from cvxpy.atoms.affine.sum import Sum
    from cvxpy.atoms.affine.unary_operators import NegExpression

    n = node.size
    kind = type(node)

    def placeholder(arg):
        return 0 if (arg.size, n) == (1, 1) else sp.coo_matrix((arg.size, n), dtype="float64")

    if kind is AddExpression or kind is NegExpression:
        sign = -1.0 if kind is NegExpression else 1.0
        out = []
        for arg in node.args:
            if arg.is_constant():
                out.append(placeholder(arg))
            elif arg.shape == node.shape:
                out.append(sp.csc_array(sp.eye_array(n, format="csc") * sign))
            else:  # broadcasting: cvxpy's
                return None
        return out
    if kind is Sum and node.axis is None and n == 1 and not node.args[0].is_constant():
        m = node.args[0].size
        return [sp.csc_array((np.ones(m), np.arange(m), np.array([0, m])), shape=(m, 1))]
    if kind is multiply and len(node.args) == 2:
        const = [a.is_constant() for a in node.args]
        if const.count(True) != 1:
            return None
        c_arg, x_arg = (node.args[0], node.args[1]) if const[0] else (node.args[1], node.args[0])
        if x_arg.shape != node.shape or c_arg.value is None:
            return None
        c = np.broadcast_to(np.asarray(c_arg.value, dtype=np.float64), node.shape).ravel(order="F")
        if not np.all(np.isfinite(c) & (c != 0)):
            return None
        J = sp.csc_array((c.copy(), np.arange(n), np.arange(n + 1)), shape=(n, n))
        return [placeholder(c_arg), J] if const[0] else [J, placeholder(c_arg)]
    return None


def set_value(leaf, val) -> None:
    """``leaf.value = val``, without cvxpy's validation where it cannot change anything: a Variable
    with no attribute (nonneg, bounds, sparsity, …: nothing to project onto) given a finite float64
    ndarray of its shape, or None — stored as cvxpy's setter stores it after converting (a no-op for such an
    array) and checking shape and projection (~45 µs a call, ~10 calls a solve at d = 100 through the
    pre-check's and the routes' row reading and ldpopt's check, measured). Anything else: the setter."""
    plain = (isinstance(leaf, cp.Variable) and leaf.sparse_idx is None
             and not any(leaf.attributes.values()))
    if plain and (val is None or (type(val) is np.ndarray and val.dtype == np.float64 and val.shape == leaf.shape
                                  and bool(np.all(np.isfinite(val))))):  # (the setter refuses NaN: so does this)
        leaf.save_value(val)
    else:
        leaf.value = val


#: the largest dense adjoint (rows × entries) :func:`affine_jacobians` writes for a ``cumsum`` node by
#: default, and that :func:`cvxpy_grad` writes for an affine constraint's rows where
#: :data:`RUNNING_SUM_ENTRIES` per value allows less: a full running sum over ~1,400 values (its rows
#: read in ~0.2 s, so the exact pre-check still decides a band ``F - ε <= cumsum(f) <= F + ε`` there;
#: past it reading them cost 3.4 s and 1.7 GB at d = 3,000, 14 s and 4.3 GB at 5,000, measured)
_DENSE_CUMSUM = 2 * 10**6

#: the dense entries per value of f that recognising an objective's term may write for a running sum
#: (``cumsum``) read in its rows (its adjoint, rows × values): past RUNNING_SUM_ENTRIES·d the term is
#: left to the cvxpy chain, whose canonicalisation writes a running sum with an auxiliary variable and
#: O(d) entries. So recognising writes O(d) entries, never a d × d triangle. Chosen by measurement
#: (docs/notes/problems.md, "Running sums in a recognised objective"): at d = 100 a full running sum
#: (100 per value) is kept, and certifies answers the chain leaves unverified; at d = 1,000 (1,000 per
#: value) it cost up to twice the chain's time and certified nothing more.
RUNNING_SUM_ENTRIES = 128


class DenseRunningSum(ValueError):
    """:func:`affine_jacobians` stopped at a ``cumsum`` node whose adjoint (``rows`` × ``values``
    dense entries) is past its budget."""

    def __init__(self, rows: int, values: int):
        super().__init__(f"a running sum over {values} values read {rows} times")
        self.rows, self.values = rows, values


def affine_jacobians(expr, budget: int = _DENSE_CUMSUM) -> dict | None:
    """{variable: ∂expr/∂variable} of an affine, non-constant cvxpy expression, in cvxpy's ``grad``
    layout (variable.size × expr.size, column-major), by reverse accumulation: the adjoint of expr
    (the identity on its entries, sparse) pulled back through each node — a selection for an index,
    a reversed running sum for ``cumsum``, its columns cut apart for an ``hstack`` of vectors, the
    node's own Jacobian for the rest. O(nnz of the result and of the nodes' Jacobians): cvxpy's
    forward chain builds each node's Jacobian against the variable first, and that of ``cumsum`` is
    d × d (5 rows ``cumsum(f)[idx] <= c`` at d = 10⁴: 3.8 s there, ~10 ms here). None where a node is
    outside this (an unknown value, a ``cumsum`` over a matrix): the caller then asks cvxpy's chain.
    Raises :class:`DenseRunningSum` at a ``cumsum`` whose dense adjoint would pass ``budget`` entries
    (default :data:`_DENSE_CUMSUM`)."""
    import scipy.sparse as sp
    from cvxpy.atoms.affine.cumsum import cumsum
    from cvxpy.atoms.affine.index import index, special_index
    from cvxpy.atoms.atom import Atom
    from cvxpy.expressions.leaf import Leaf
    from cvxpy.expressions.variable import Variable

    out: dict = {}

    def pull(node, adj) -> bool:  # adj: (m × node.size) csr
        if isinstance(node, Variable):
            out[node] = adj if node not in out else out[node] + adj
            return True
        if node.is_constant():
            return True
        if isinstance(node, Leaf) or not isinstance(node, Atom):
            return False
        kind = type(node)
        if (kind is AddExpression or kind is NegExpression) and all(a.is_constant() or a.shape == node.shape
                                                                  for a in node.args):
            # a sum or negation of same-shape terms: its Jacobian is ±I (:func:`_plain_jacobian`), so
            # each term's adjoint is ±adj itself, the same bits as the product, without forming it
            back = -adj if kind is NegExpression else adj
            return all(pull(a, back) for a in node.args if not a.is_constant())
        if kind is index or kind is special_index:
            arg = node.args[0]
            at = np.arange(arg.size).reshape(arg.shape, order="F")
            sel = np.asarray(node.numeric([at])).ravel(order="F")  # type: ignore[attr-defined]
            if sel.size != node.size:
                return False
            if np.unique(sel).size == sel.size:  # a selection without repeats: adj @ S moves columns only
                moved = sp.csr_array((adj.data.copy(), sel[adj.indices], adj.indptr.copy()),
                                     shape=(adj.shape[0], arg.size))
                moved.sort_indices()
                moved.eliminate_zeros()  # (as the product drops them)
                return pull(arg, moved)
            S = sp.csr_array((np.ones(sel.size), sel, np.arange(sel.size + 1)), shape=(sel.size, arg.size))
            return pull(arg, sp.csr_array(adj @ S))
        if kind is Hstack and all(a.ndim <= 1 for a in node.args):  # vectors end to end: columns cut
            start = 0
            for a in node.args:
                width = max(a.size, 1)
                if not pull(a, sp.csr_array(adj[:, start:start + width])):
                    return False
                start += width
            return True
        if kind is cumsum:
            arg = node.args[0]
            if arg.ndim > 1:
                return False
            if adj.shape[0] * arg.size > budget:
                raise DenseRunningSum(adj.shape[0], arg.size)
            dense = adj.toarray()  # output j = Σ_{i ≤ j} x_i: x_i's adjoint is Σ_{j ≥ i} adj_j
            back = np.cumsum(dense[:, ::-1], axis=1)[:, ::-1]
            return pull(arg, sp.csr_array(back))
        values = [a.value for a in node.args]
        if any(v is None for a, v in zip(node.args, values) if not a.is_constant()):
            return False
        grads = _plain_jacobian(node)
        if grads is None:
            grads = node._grad(values)
        for a, G in zip(node.args, grads):
            if a.is_constant():
                continue
            if G is None:
                return False
            G = sp.csr_array(np.atleast_2d(G)) if np.isscalar(G) or not sp.issparse(G) else sp.csr_array(G)
            if G.shape != (a.size, node.size):
                return False
            if not pull(a, sp.csr_array(adj @ G.T)):
                return False
        return True

    n = expr.size
    if not pull(expr, sp.csr_array(sp.eye_array(n, format="csr"))):
        return None
    return {var: sp.csc_array(adj.T) for var, adj in out.items()}


def cvxpy_grad(expr, memo: dict):
    """:func:`affine_jacobians` where ``expr`` is affine and not constant (an affine constraint's rows
    in O(nnz)); else :func:`_chain_grad`, cvxpy's chain rule with the affine nodes' Jacobians kept.
    Raises :class:`DenseRunningSum` where the rows read a running sum past :data:`_DENSE_CUMSUM` dense
    entries (or :data:`RUNNING_SUM_ENTRIES` per value of the variable, if more): ``cumsum(f) <= F + ε``
    in all its rows holds d²/2 entries, where cvxpy's chain rule would write its d × d Jacobian. The
    caller leaves those rows unread (the exact pre-check, the direct routes) or reads the product it
    needs by reverse accumulation (the check)."""
    if expr.is_affine() and not expr.is_constant() and expr.variables():
        key = ("affine", id(expr))
        if key in memo:
            return memo[key][1]
        got = affine_jacobians(expr, max(RUNNING_SUM_ENTRIES * max(v.size for v in expr.variables()), _DENSE_CUMSUM))
        if got is not None:
            memo[key] = (expr, got)
            return got
    return _chain_grad(expr, memo)


def _chain_grad(expr, memo: dict):
    """cvxpy's ``expr.grad`` (a dict variable → Jacobian, None where undefined), computed by the same
    chain rule as cvxpy's :attr:`Atom.grad` but with each affine node's own Jacobian
    (:func:`_constant_jacobian`: it does not depend on the point) built once per ``memo`` and reused:
    cvxpy rebuilds it through cvxcore at every call, and the check evaluates a user objective's
    gradient at several points (f, the probes f ± h, the move-scale test). The common affine nodes'
    Jacobians are written directly (:func:`_plain_jacobian`). Same products in the same order, so
    the same numbers as cvxpy's (tests/test_check_cvxpy_grad.py). Measured (CPU, alternated with
    cvxpy's ``grad`` in one process, minimum of 5): the check of CLS + 10⁻³·pinball at d = 100,
    25 → 10 ms (whole call 46 → 28 ms); CLS + 10⁻²‖f − p‖₂, 15 → 7 ms (36 → 25 ms). A ``memo`` lives for one check (the constants and Parameters it reads do not
    change within it). Nodes whose ``grad`` is not :attr:`Atom.grad` (leaves, ``index``'s
    re-expression, transforms) are delegated to cvxpy as they are."""
    from cvxpy.atoms.atom import Atom
    from cvxpy.utilities import grad as ugrad

    if not isinstance(expr, Atom) or type(expr).grad is not Atom.grad:
        return expr.grad
    if expr.is_constant():
        return ugrad.constant_grad(expr)
    values = []
    for arg in expr.args:
        if arg.value is None:
            return ugrad.error_grad(expr)
        values.append(arg.value)
    key = id(expr)
    if key in memo:
        grad_self = memo[key][1]
    else:
        grad_self = _plain_jacobian(expr)
        if grad_self is None:
            grad_self = expr._grad(values)
        if _constant_jacobian(expr):
            memo[key] = (expr, grad_self)  # the node kept alive with it: its id is not reused
    result: dict = {}
    for idx, arg in enumerate(expr.args):
        grad_arg = _chain_grad(arg, memo)
        for var in grad_arg:
            if grad_arg[var] is None or grad_self[idx] is None:
                result[var] = None
            else:
                if np.isscalar(grad_arg[var]) or np.isscalar(grad_self[idx]):
                    D = grad_arg[var] * grad_self[idx]
                else:
                    D = grad_arg[var] @ grad_self[idx]
                if not np.isscalar(D) and D.shape == (1, 1):
                    D = D[0, 0]
                if var in result:
                    result[var] += D
                else:
                    result[var] = D
    return result


# ---- the same gradient by reverse accumulation in numpy (the check's fast path)

class _Outside(Exception):
    """A node :func:`numpy_grad` does not write (or a point where cvxpy's gradient is undefined)."""


class _Undefined(_Outside):
    """A point where cvxpy's gradient of a node is undefined (its ``_grad`` gives None): cvxpy's chain
    rule then gives None for the whole expression, whatever the other nodes (None propagates through
    every ancestor's :attr:`Atom.grad`, or the sum of None and a matrix raises)."""


def _reduce_to(adj, shape):
    """The adjoint of a broadcast: ``adj`` summed back to ``shape`` (the same shape, or a scalar)."""
    if np.shape(adj) == tuple(shape):
        return adj
    if int(np.prod(shape)) == 1:
        return np.reshape(np.sum(adj), shape)
    raise _Outside


def numpy_grad(expr, x, xval: np.ndarray, nan_where_undefined: bool = False) -> np.ndarray | None:
    """∇ of the scalar cvxpy expression ``expr`` with respect to its variable ``x`` at x = ``xval``, by
    reverse accumulation in numpy: cvxpy's own forward values (each atom's ``numeric``) and, per
    node, the transpose of the Jacobian cvxpy's ``grad`` builds for it (the same subgradient choices:
    sign(0) = 0 for ``abs`` and ``norm1``, the first argument attaining a ``maximum``, 0 for a
    p-norm at 0), applied to a vector instead of formed as a sparse matrix. ``x`` itself is not
    read or set (``xval`` stands for its value). None where the expression holds a node outside the
    class written here (sums, negations, promotions, ``sum`` along any one axis, slices and
    integer-array indexing, ``reshape``, ``hstack`` of vectors, the transpose of a matrix, products
    and quotients with constants, ``quad_over_lin`` / ``sum_squares``, ``quad_form`` with a constant
    matrix, ``lambda_max`` of a matrix (the top eigenvector's outer product, from the same
    ``numpy.linalg.eigh`` as cvxpy's), ``power``, ``huber``, ``abs``, ``maximum`` (a constant
    broadcast, as ``pos``), ``max``, ``cumsum`` of a vector, ``norm1``, p-norms with p > 1,
    ``geo_mean`` of a vector, ``log_sum_exp`` of all entries, ``entr``, ``kl_div``, ``rel_entr``,
    ``exp``, ``log``, ``logistic``), another variable, or a point
    where cvxpy's gradient is undefined (``power`` or ``quad_over_lin`` outside their domains,
    ``geo_mean``, ``entr``, ``log``, ``kl_div`` or ``rel_entr`` where an entry is ≤ 0, and anywhere
    for an expression holding a non-constant ``norm_inf``, whose gradient cvxpy does not implement):
    the caller then asks :func:`cvxpy_grad`. ``nan_where_undefined``: at such a point, an array of NaN instead of
    None — what the check makes of cvxpy's answer there (no gradient), without running cvxpy's chain
    rule to find it (measured: docs/notes/problems.md, "Gradient.").
    The same values as cvxpy's to float64 rounding (the products are summed in another order; tests/
    test_check_cvxpy_grad.py); the check of CLS + 10⁻²‖f − p‖₂ at d = 100 spent ~3 ms per call in the
    sparse chain rule, ~0.1 ms here."""
    try:
        vals: dict = {}
        with np.errstate(all="ignore"):  # as cvxpy's own values: a NaN at f is the caller's to see
            _forward(expr, x, np.asarray(xval, dtype=np.float64), vals)
            g = np.zeros(x.shape, dtype=np.float64)
            _backward(expr, np.asarray(1.0), x, vals, g)
    except _Undefined:
        return np.full(x.size, np.nan) if nan_where_undefined else None
    except (_Outside, TypeError, ValueError, AttributeError):
        return None
    return g.ravel(order="F")


#: the elementwise atoms of one argument written by their derivative in numpy, None where cvxpy's
#: gradient is undefined (an entry ≤ 0 for the logarithm's family, as cvxpy's ``_grad``)
_UNARY: dict[type, Callable[[np.ndarray], np.ndarray | None]] = {
    entr: lambda v: None if np.min(v) <= 0 else -np.log(v) - 1.0,
    log_: lambda v: None if np.min(v) <= 0 else 1.0 / v,
    exp_: np.exp,
    logistic: lambda v: np.exp(v - np.logaddexp(0, v)),
}
#: the elementwise atoms of two arguments (x, y), their two partial derivatives, None where either
#: argument has an entry ≤ 0 (cvxpy's ``_grad``)
_BINARY: dict[type, Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray] | None]] = {
    kl_div: lambda x, y: None if np.min(x) <= 0 or np.min(y) <= 0 else (np.log(x / y), 1.0 - x / y),
    rel_entr: lambda x, y: None if np.min(x) <= 0 or np.min(y) <= 0 else (np.log(x / y) + 1.0, -x / y),
}


#: atoms whose gradient cvxpy does not implement (``_grad`` raises ``NotImplementedError``): cvxpy
#: gives no gradient of any expression holding one that is not constant
_NO_CVXPY_GRAD = (norm_inf,)


def _supported(node) -> bool:
    kind = type(node)
    if kind in (AddExpression, NegExpression, Promote, multiply, MulExpression, DivExpression, index, special_index,
                abs_, huber, reshape) or kind in _UNARY:
        return True
    if kind in (norm1, Pnorm, PnormApprox, quad_over_lin, max_, log_sum_exp):
        return getattr(node, "axis", None) is None
    if kind is Sum:
        return node.axis is None or isinstance(node.axis, int)
    if kind is cumsum:
        return node.args[0].ndim == 1
    if kind is transpose:
        return node.args[0].ndim == 2 and node.axes in (None, (1, 0), [1, 0])
    if kind is lambda_max:
        return node.args[0].ndim == 2
    if kind is Hstack:
        return all(a.ndim <= 1 for a in node.args)
    if kind is QuadForm:
        return node.args[1].is_constant() and node.args[0].ndim <= 1
    if kind in _BINARY:
        return all(a.shape == node.shape for a in node.args)
    if isinstance(node, GeoMean):
        return getattr(node, "axis", None) is None and node.args[0].ndim <= 1
    if kind is maximum:
        return all(a.shape == node.shape for a in node.args if not a.is_constant())
    return isinstance(node, Power)


def _forward(node, x, xval, vals):
    key = id(node)
    if key in vals:
        return vals[key][1]
    if node is x:
        v = xval.reshape(x.shape)
    elif isinstance(node, cp.Variable):
        raise _Outside
    elif node.is_constant():
        v = node.value
        if v is None:
            raise _Outside
    else:
        if isinstance(node, _NO_CVXPY_GRAD):  # cvxpy's chain rule reaches every non-constant node: it raises there
            raise _Undefined
        if not _supported(node):
            raise _Outside
        args = [_forward(a, x, xval, vals) for a in node.args]
        if type(node) in (Pnorm, PnormApprox) and float(node.p) == 2.0:  # ‖·‖₂ by np.sum, not BLAS's dot
            v = _two_norm(args[0])                                       # (whose idle threads bill CPU time)
        else:
            v = node.numeric(args)
    vals[key] = (node, v)  # the node kept alive with its value: its id is not reused within the call
    return v


def _two_norm(v) -> float:
    """‖v‖₂ of all entries, summed by ``np.sum``."""
    v = np.asarray(v, dtype=np.float64)
    return float(np.sqrt(np.sum(v * v)))


def _dense(v):
    return v.toarray() if hasattr(v, "toarray") else np.asarray(v, dtype=np.float64)


def _backward(node, adj, x, vals, g) -> None:
    if node is x:
        g += np.reshape(adj, x.shape)
        return
    if node.is_constant():
        return
    kind = type(node)
    args = node.args
    val = lambda a: vals[id(a)][1]
    if kind is AddExpression:
        for a in args:
            _backward(a, _reduce_to(adj, a.shape), x, vals, g)
    elif kind is NegExpression:
        _backward(args[0], -adj, x, vals, g)
    elif kind is Sum and node.axis is not None:  # the adjoint spread back along the summed axis
        a = args[0]
        spread = np.asarray(adj) if node.keepdims else np.expand_dims(np.asarray(adj), node.axis)
        _backward(a, np.broadcast_to(spread, a.shape), x, vals, g)
    elif kind is Promote or kind is Sum:
        a = args[0]
        _backward(a, np.broadcast_to(np.sum(adj), a.shape) if kind is Promote else np.full(a.shape, float(adj)),
                  x, vals, g)
    elif kind is transpose:  # a matrix's: the adjoint transposed back
        _backward(args[0], np.transpose(np.asarray(adj)), x, vals, g)
    elif kind is lambda_max:  # v vᵀ for the top eigenvector v of cvxpy's own eigh, as its grad
        v = np.linalg.eigh(np.asarray(val(args[0]), dtype=np.float64))[1][:, -1]
        _backward(args[0], float(adj) * np.outer(v, v), x, vals, g)
    elif kind is reshape:  # the same entries in the same order: the adjoint reshaped back
        _backward(args[0], np.reshape(np.asarray(adj), args[0].shape, order=node.order), x, vals, g)
    elif kind is Hstack:  # vectors (and scalars) laid end to end: the adjoint cut back into them
        flat, at = np.ravel(np.asarray(adj)), 0
        for a in args:
            n = max(a.size, 1)
            _backward(a, flat[at:at + n].reshape(a.shape), x, vals, g)
            at += n
    elif kind in _UNARY:
        d1 = _UNARY[kind](np.asarray(val(args[0]), dtype=np.float64))
        if d1 is None:
            raise _Undefined  # cvxpy's grad is None there
        _backward(args[0], adj * d1, x, vals, g)
    elif kind in _BINARY:
        got = _BINARY[kind](*(np.asarray(val(a), dtype=np.float64) for a in args))
        if got is None:
            raise _Undefined
        for a, d1 in zip(args, got):
            _backward(a, adj * d1, x, vals, g)
    elif kind is log_sum_exp:  # the softmax of all entries
        v = np.asarray(val(args[0]), dtype=np.float64)
        _backward(args[0], float(adj) * np.exp(v - logsumexp(v)), x, vals, g)
    elif kind is QuadForm:  # (P + Pᵀ)·v with P constant, as cvxpy's
        v = np.asarray(val(args[0]), dtype=np.float64)
        P = _dense(val(args[1]))
        _backward(args[0], float(adj) * ((P + P.T) @ v.ravel(order="F")).reshape(v.shape, order="F"), x, vals, g)
    elif kind is multiply or kind is MulExpression or kind is DivExpression:
        left, right = args
        if kind is DivExpression:
            if not right.is_constant():
                raise _Outside
            c = _dense(val(right))
            _backward(left, _reduce_to(adj / c, left.shape), x, vals, g)
            return
        if left.is_constant() == right.is_constant():
            raise _Outside
        c_node, e = (left, right) if left.is_constant() else (right, left)
        c = val(c_node)
        c_dim = c.ndim if hasattr(c, "toarray") else np.ndim(c)  # (a scipy matrix: its own ndim)
        if kind is multiply or np.size(c) == 1 and not hasattr(c, "toarray"):
            _backward(e, _reduce_to(adj * _dense(c), e.shape), x, vals, g)
        elif e.ndim == 1 and c_dim == 2:  # C @ e (C on the left) or e @ C
            _backward(e, np.asarray(c.T @ adj if c_node is left else c @ adj).ravel(), x, vals, g)
        elif e.ndim == 1 and c_dim == 1:  # a scalar c·e
            _backward(e, adj * np.asarray(c, dtype=np.float64), x, vals, g)
        else:
            raise _Outside
    elif kind is index or kind is special_index:  # the positions it reads, by cvxpy's own indexing of their numbers
        a = args[0]
        pos = np.asarray(node.numeric([np.arange(a.size).reshape(a.shape, order="F")]), dtype=np.intp)
        out = np.zeros(a.size)
        np.add.at(out, pos.ravel(order="F"), np.reshape(adj, pos.shape).ravel(order="F"))
        _backward(a, out.reshape(a.shape, order="F"), x, vals, g)
    elif kind is quad_over_lin:
        X, y = val(args[0]), float(np.asarray(val(args[1])).reshape(()))
        if y <= 0 or not args[1].is_constant():
            raise _Outside
        _backward(args[0], adj * (2.0 * X / y), x, vals, g)
    elif isinstance(node, Power):
        raw = node.p_used if node.p_used is not None else node.p.value
        p = float(raw)
        v = np.asarray(val(args[0]), dtype=np.float64)
        if p == 0:
            return
        if not is_power2(raw) and np.min(v) <= 0:
            raise _Undefined  # cvxpy's grad is None there
        _backward(args[0], adj * (p * np.power(v, p - 1.0)), x, vals, g)
    elif kind is huber:
        v = np.asarray(val(args[0]), dtype=np.float64)
        _backward(args[0], adj * (2 * np.multiply(np.sign(v), np.minimum(np.abs(v), node.M.value))), x, vals, g)
    elif kind is abs_ or kind is norm1:
        v = np.asarray(val(args[0]), dtype=np.float64)
        _backward(args[0], adj * ((v > 0).astype(np.float64) - (v < 0)), x, vals, g)
    elif kind is max_:  # 1 at the first largest entry (F order), as cvxpy's
        v = np.asarray(val(args[0]))
        out = np.zeros(v.size)
        out[np.argmax(v.ravel(order="F"))] = float(adj)
        _backward(args[0], out.reshape(v.shape, order="F"), x, vals, g)
    elif isinstance(node, GeoMean):  # cvxpy's: G·w_i/x_i on the kept entries, undefined where one is ≤ 0
        v = np.asarray(val(args[0]), dtype=np.float64).ravel()
        keep = np.asarray(node._keep, dtype=bool)
        kept, w = v[keep], np.array([float(t) for t in node.w])
        if np.any(kept <= 0):
            raise _Undefined
        out = np.zeros(v.size)
        out[keep] = float(adj) * (w / kept * np.prod(kept ** w))
        _backward(args[0], out.reshape(args[0].shape), x, vals, g)
    elif kind is cumsum:  # a 1-D argument: the adjoint of a running sum is the reversed running sum
        _backward(args[0], np.cumsum(np.asarray(adj)[::-1])[::-1], x, vals, g)
    elif kind is maximum:
        top = np.asarray(vals[id(node)][1])
        unused = np.ones(top.shape, dtype=bool)
        for a in args:
            v = np.asarray(val(a))
            hit = (v == top) & unused
            unused[v == top] = False
            _backward(a, adj * hit, x, vals, g)
    else:  # a p-norm, p > 1 (axis None)
        p = float(node.p)
        if not p > 1:
            raise _Outside
        v = np.asarray(val(args[0]), dtype=np.float64)
        den = _two_norm(v) if p == 2.0 else np.power(np.linalg.norm(v.ravel(order="F"), p), p - 1.0)
        if den == 0:
            return
        _backward(args[0], adj * (np.sign(v) * np.power(np.abs(v), p - 1.0) / den), x, vals, g)

