r"""MLE-Apx: the weighted (Gaussian-approximation) MLE of Wang et al. arXiv §3.4, Eq. 13–14,
Appendix A (NDSS 2020 §IV-D, Eq. 12, Appendix B), solved exactly from its KKT conditions.

The problem (arXiv Eq. 13)
--------------------------
With r_v = c_v/n, write

    a_v = r_v − q  (= (p − q) f̃_v),   B = p − q > 0,   s = q(1 − q),
    C = (p − q)(1 − p − q) = p(1 − p) − q(1 − q),

    minimise  F(f) = Σ_v h_v(f_v),   h_v(f) = (a_v − B f)² / (s + C f)
    subject to  Σ_v f_v = 1,  0 ≤ f_v ≤ 1.

We require 0 < q and p < 1 (checked): then the weight w(f) = s + C f is linear with w(0) = q(1 − q)
> 0 and w(1) = s + C = p(1 − p) > 0, so w > 0 on [0, 1] whatever the sign of C. (C < 0, i.e.
p + q > 1, happens e.g. for binary local hashing, p = e^ε/(e^ε + 1), q = 1/2; C = 0 for GRR with
d = 2 and for SUE/RAPPOR; GRR with d ≥ 3 and OUE have C > 0.)

Derivatives
-----------
Let x = x_v(f) = (a_v − B f)/w(f) (the paper's "temporary notation" x_v of Appendix A). Then

    h_v'(f)  = −2B x − C x² = −x (2B + C x),
    h_v''(f) = 2 (B + C x)² / w = 2 K_v² / w³,   K_v := B s + C a_v,

because B + C x = (B w + C(a_v − B f))/w = (B s + C a_v)/w — its numerator does not depend on f.
K_v = (p − q)[r_v (1 − p − q) + p q] is linear in r_v ∈ [0, 1], equal to (p − q) p q > 0 at r = 0 and
(p − q)(1 − p)(1 − q) > 0 at r = 1, so K_v > 0: every h_v is strictly convex on [0, 1] and the
problem has exactly one minimiser.

The upper bound f ≤ 1 is redundant (Σf = 1 and f ≥ 0 imply it), so it never binds except at a
vertex e_v, where the KKT conditions below hold with the same multiplier anyway.

KKT conditions (linear constraints, so they are necessary and sufficient)
------------------------------------------------------------------------
f is optimal iff there is one multiplier λ with

    h_v'(f_v) = λ  for f_v > 0,    h_v'(0) ≥ λ  for f_v = 0,    Σ_v f_v = 1,  f ≥ 0.

Closed form of f_v(λ), and the common x
---------------------------------------
For f ∈ [0, 1], B + C x = K_v/w > 0. On that branch g(x) = −C x² − 2B x is strictly decreasing
(g'(x) = −2(B + C x) < 0), so λ = g(x) is solved by the root of C x² + 2B x + λ = 0 with
B + C x = √(B² − Cλ):

    x(λ) = −λ / (B + √(B² − C λ))        (stable form; valid for C of any sign, C = 0 included).

Every v on the support shares λ, hence shares x — the paper's observation that "x_v does not depend
on v". Solving x = (a_v − B f)/(s + C f) for f gives the paper's Eq. 14 map

    φ_v(x) = (a_v − s x)/(B + C x),    φ_v'(x) = −K_v/(B + C x)² < 0,

and f_v(λ) = clip(φ_v(x(λ)), 0, 1). The off-support condition is automatically right:
h_v'(0) = g(a_v/s) ≥ λ = g(x) ⇔ x ≥ a_v/s ⇔ φ_v(x) ≤ 0.

Monotonicity and uniqueness of the root
---------------------------------------
S(λ) = Σ_v clip(φ_v(x(λ)), 0, 1) is continuous and non-decreasing in λ (x(λ) decreases, φ_v
decreases in x), strictly increasing wherever 0 < S < d. At λ_lo = min_v h_v'(0) every f_v(λ) = 0,
at λ_hi = max_v h_v'(1) every f_v = 1 (S = d ≥ 2), so S(λ) = 1 has a solution in [λ_lo, λ_hi]; since
S is strictly increasing there the solution is unique, and so is x* = x(λ*). ``method="brentq"``
finds λ* this way (scipy.optimize.brentq on S(λ) − 1, vectorised over the domain).

Exact solution without iteration (``method="sort"``, the default)
----------------------------------------------------------------
The support {v : φ_v(x*) > 0} = {v : a_v > s x*} is a top set of a (equivalently of f̃). On a
support of the k largest a's, Σφ = 1 is linear in x:

    x_k = (Σ_{i≤k} a_(i) − B) / (C + k s)       (C + k s ≥ C + s = p(1 − p) > 0),

which is the arXiv Eq. 14 x_v. The optimal k is the largest k with a_(k) > s x_k, i.e.
K_(k) > s Σ_{i<k}(a_(i) − a_(k)); this condition is S evaluated at the k-th breakpoint being < 1, and
those values increase with k, so it holds exactly for k ≤ k*. Hence the support can be found like
Norm-Sub's: test the condition at random pivots and discard the side it decides, with x_S of any
S ⊇ S* as a lower bound (step 1 of the proof below), then sort and scan the last few thousand
candidates (:mod:`.threshold`) — expected O(d), exact, no tolerance. The result has the Norm-Sub/Norm-Mul hybrid form of §3.4's analysis,

    f'_v = max(γ f̃_v + δ, 0),   γ = B/(B + C x*) > 0,   δ = −s x*/(B + C x*).

For C = 0 (p + q = 1), γ = 1 and MLE-Apx *is* Norm-Sub.

The paper's iteration reaches the exact optimum (proof)
-------------------------------------------------------
arXiv §3.4 / Appendix A: start with D₁ = D, compute Eq. 14 on D₁, move every v with f'_v < 0 to D₀,
repeat until none is negative. Let S* be the optimal support and x_S the Eq. 14 x for a set S.

1. If S ⊇ S* then x_S ≤ x*: Σ_S φ_v(x*) ≤ Σ_S max(φ_v(x*), 0) = 1 = Σ_S φ_v(x_S), and Σ_S φ_v is
   strictly decreasing. (Also S ⊆ S* gives x_S ≤ x*: used for the pre-filter bound x_{1}.)
2. So a removed v has a_v < s x_S ≤ s x*, i.e. v ∉ S*: D₁ ⊇ S* is kept at every step.
3. Removing negatives increases x (Σ_{S'} φ(x_S) > 1 after dropping negative terms), so every
   earlier-removed v still has φ_v ≤ 0 at the final x: the off-support KKT condition holds.
4. At termination f ≥ 0 on D₁, Σ = 1, one common x (one λ): all KKT conditions hold.
5. B + C x_S = Σ_S K_v / (C + |S| s) > 0 at every step, so Eq. 14 never divides by zero.

Each non-final iteration removes ≥ 1 value, so it stops after ≤ d iterations (O(d²) worst case,
typically a handful). The arXiv Eq. 14 is therefore correct. The NDSS version (Eq. 12 and its
Appendix B) uses the opposite sign for x (x_NDSS = −x_arXiv) — consistent in its f formula — but
prints the denominator of x as (p − q)(1 − p − q) − |D₁| q(1 − q) where the derivation gives
−[(p − q)(1 − p − q) + |D₁| q(1 − q)]: the printed NDSS variant sums to one only when C = 0 or
Σ_{D₁} f̃ = 1. :func:`mle_apx_formula_arxiv` and :func:`mle_apx_formula_ndss` implement the two
printed formulas so the verification suite can show this.
"""

from __future__ import annotations

import numpy as np

from ..estimate import Estimate
from ._args import _check_max_iter
from .baseline import _check_estimate
from .mle_printed import mle_apx_formula_arxiv, mle_apx_formula_ndss
from .registry import ProblemStatement, register
from .threshold import top_support

__all__ = ["mle_apx", "mle_apx_formula_arxiv", "mle_apx_formula_ndss", "mle_apx_lambda", "mle_apx_paper",
           "mle_apx_paper_iterate", "mle_gradient", "mle_objective"]


def _params_checked(est: Estimate) -> None:
    p, q = est.p, est.q
    if not (q > 0.0 and p < 1.0):
        raise ValueError(f"MLE-Apx cannot run at epsilon={est.epsilon!r} with oracle {est.oracle!r}: it "
                         f"needs 0 < q and p < 1 (Eq. 13's variance q(1-q) + f(p-q)(1-p-q) must be > 0 "
                         f"on [0, 1]), got p={p!r}, q={q!r}")


def _why_not(est: Estimate, **params) -> str | None:
    """Why MLE-Apx does not apply to ``est`` (None when it does): Eq. 13 needs 0 < q and p < 1."""
    if not (est.q > 0.0 and est.p < 1.0):
        return (f"MLE-Apx needs 0 < q and p < 1 (Eq. 13's variance must be > 0), got p={est.p!r}, q={est.q!r} "
                f"(oracle {est.oracle!r}, epsilon={est.epsilon!r})")
    return None


def _params(est: Estimate):
    """(a, B, s, C) of the module docstring, after checking 0 < q and p < 1."""
    _params_checked(est)
    p, q = est.p, est.q
    a = est.counts / est.n - q
    return a, p - q, q * (1.0 - q), (p - q) * (1.0 - p - q)


def _check_f(estimate: Estimate, f) -> np.ndarray:
    f = np.asarray(f, dtype=np.float64)
    if f.shape != (estimate.d,):
        raise ValueError(f"f must have shape ({estimate.d},), got {f.shape}")
    return f


def mle_objective(estimate: Estimate, f) -> float:
    """The objective of arXiv Eq. 13, Σ_v (c_v/n − q − (p − q) f_v)² / (q(1 − q) + (p − q)(1 − p − q) f_v).

    Defined for f in [0, 1]^d (where the denominator is positive when 0 < q, p < 1)."""
    est = _check_estimate(estimate)
    a, B, s, C = _params(est)
    f = _check_f(est, f)
    return float(np.sum((a - B * f) ** 2 / (s + C * f)))


def mle_gradient(estimate: Estimate, f) -> np.ndarray:
    """∂/∂f_v of the Eq. 13 objective, differentiated directly (quotient rule, not via x):
    [−2B(a_v − B f_v)(s + C f_v) − C(a_v − B f_v)²] / (s + C f_v)²."""
    est = _check_estimate(estimate)
    a, B, s, C = _params(est)
    f = _check_f(est, f)
    u, w = a - B * f, s + C * f
    return (-2.0 * B * u * w - C * u * u) / (w * w)


# -- exact solvers -----------------------------------------------------------------------------
def denominator(k, p: float, s: float, mass: float = 1.0):
    """C + k·s written as p(1 − p) + (k − 1)·s: a sum of non-negative terms. The direct form
    cancels when p + q > 1 and p → 1 (BLH/HR at large ε: C ≈ −s), losing all digits of 1 − p.
    With Σ f = ``mass`` instead of 1 (the structured solver's blocks): mass·p(1 − p) + (k − mass)·s
    (the same floats at mass = 1)."""
    return mass * p * (1.0 - p) + (k - mass) * s


def _kappa(r, p: float, q: float):
    """K_v/(p − q) = r_v(1 − p − q) + p q written as (1 − r_v) p q + r_v (1 − p)(1 − q) (r_v = c_v/n
    ∈ [0, 1]): non-negative terms, so no cancellation whatever the sign of 1 − p − q."""
    return (1.0 - r) * (p * q) + r * ((1.0 - p) * (1.0 - q))


def _mle_apx_pivot(est: Estimate) -> np.ndarray:
    """MLE-Apx by the expected-O(d) pivot search of :mod:`.threshold` (module docstring, 'Exact
    solution without iteration', with pivots instead of a full sort).

    The search runs on the counts themselves (no full-length a = c/n − q is formed): a top set T of
    k counts with sum S has x_T = (S/n − k q − B)/(C + k s) and, in count units, the threshold
    n(q + s x_T); v is in the support iff c_v exceeds it. Then, on the pool of candidates the search
    returns (a superset of the support, usually a few thousand values), a = c/n − q exactly as
    before, x is polished from its support with pairwise sums (:func:`polish_x`) and f is written
    by :func:`f_on_support`: the result is the Brent λ-search's to rounding (tests/test_projection_pivot.py).
    """
    p, q, n = est.p, est.q, est.n
    B, s = p - q, q * (1.0 - q)
    c = est.counts

    def theta(S, k):
        return n * (q + s * ((S / n - k * q - B) / denominator(k, p, s)))

    S, k, pool = top_support(c, theta)
    a = (c if pool is None else c[pool]) / n - q
    # k = 0 only by rounding: the support always holds the largest a (x_{argmax} is a lower bound)
    x = (S / n - k * q - B) / denominator(k, p, s) if k else (float(np.max(a)) - B) / denominator(1, p, s)
    x = polish_x(a, B, s, p, x)
    sup = a > s * x
    if not sup.any():  # x rounded past a_max/s: the support always holds the largest a
        sup = a == a.max()
    f = f_on_support(a + q, p, q, s, sup)
    if pool is None:
        return f
    out = np.zeros(c.shape[0])  # calloc: no pass over memory
    out[pool] = f
    return out


def polish_x(a, B, s, p, x: float, mass: float = 1.0) -> float:
    """Recompute x from the support {a > s x} with pairwise summation (exact if the support is);
    ``mass``: Σ f (as in :func:`denominator`)."""
    for _ in range(3):
        sup = a > s * x
        if not sup.any():
            break
        x_new = (float(np.sum(a[sup])) - mass * B) / denominator(int(np.count_nonzero(sup)), p, s, mass)
        if x_new == x:
            break
        x = x_new
    return x


def f_on_support(r: np.ndarray, p: float, q: float, s: float, sup: np.ndarray) -> np.ndarray:
    """Eq. 14 on the support S, rewritten without cancellation, 0 off S.

    With x = x_S, a_v − s x = (K_v + s Σ_{i∈S}(a_v − a_i))/(C + k s) and B + C x = Σ_S K_i/(C + k s),
    so f_v = (K_v + s(k a_v − Σ_S a))/Σ_S K_i: Σ_S f = 1 by construction, every K ≥ 0 is summed, not
    differenced, and the a-differences are taken from the largest supported a (exact for ties).
    Rounding may leave a boundary value at −1e-17; it is clipped to 0.
    """
    out = np.zeros(r.shape[0])
    rs = r[sup]
    k = rs.shape[0]
    t = rs - rs.max()
    kap = _kappa(rs, p, q)
    out[sup] = np.maximum((kap + (s / (p - q)) * (k * t - float(np.sum(t)))) / float(np.sum(kap)), 0.0)
    return out


def _f_of_x(a, B, s, C, x: float, p: float, q: float) -> np.ndarray:
    sup = a > s * x
    if not sup.any():  # x rounded past a_max/s: the support always holds the largest a
        sup = a == a.max()
    return f_on_support(a + q, p, q, s, sup)


def mle_apx_lambda(estimate: Estimate, lam) -> np.ndarray:
    """f(λ) of the module docstring: f_v(λ) = clip(φ_v(x(λ)), 0, 1), x(λ) = −λ/(B + √(B² − Cλ)).

    The per-value minimiser of h_v(f) − λ f on [0, 1]; Σ_v f_v(λ) is non-decreasing in λ.
    Requires B² − Cλ ≥ 0 (λ ≤ B²/C when C > 0)."""
    est = _check_estimate(estimate)
    a, B, s, C = _params(est)
    lam = float(lam)
    disc = B * B - C * lam
    if disc < 0:
        raise ValueError(f"lam must satisfy B^2 - C*lam >= 0, got lam={lam!r}")
    r = np.sqrt(disc)
    x = -lam / (B + r)
    return np.clip((a - s * x) / (B + C * x), 0.0, 1.0)


def _x_star_brentq(est: Estimate, a, B, s, C, polish: bool) -> float:
    # λ = −Cx² − 2Bx and B + Cx = √(B² − Cλ) are differences of O(1) terms whose results are
    # O(p(1 − p)) or O(q(1 − q)) near the support's ends: below 1e-6 the bracket or the root is
    # unreliable (seen: wrong supports at BLH ε = 30). The sort path has no such limit.
    if min(est.p * (1.0 - est.p), s) < 1e-6:
        raise ValueError(f"method='brentq' is ill-conditioned at p={est.p!r}, q={est.q!r} (p(1 - p) or "
                         "q(1 - q) < 1e-6, i.e. large epsilon); use method='sort'")
    g = lambda x: -C * x * x - 2.0 * B * x
    lam_lo = g(float(np.max(a)) / s)                      # = min_v h_v'(0)
    lam_hi = g((float(np.min(a)) - B) / denominator(1, est.p, s))  # = max_v h_v'(1)

    def excess(lam):
        r = np.sqrt(max(B * B - C * lam, 0.0))
        x = -lam / (B + r)
        return float(np.sum(np.clip((a - s * x) / (B + C * x), 0.0, 1.0))) - 1.0

    scale = max(abs(lam_lo), abs(lam_hi), 1.0)
    from scipy.optimize import brentq  # here, not at import: `import ldpopt` loads no scipy

    lam = brentq(excess, lam_lo, lam_hi, xtol=1e-15 * scale, rtol=4 * np.finfo(float).eps, maxiter=500)
    x = -lam / (B + np.sqrt(max(B * B - C * lam, 0.0)))
    return polish_x(a, B, s, est.p, x) if polish else x


@register(
    "mle-apx",
    description="Exact minimiser of the weighted MLE of Eq. 13 (KKT): max(γ f̃ + δ, 0)",
    non_negative="yes", sums_to_one="yes", order_preserving="weak",
    complexity="expected O(d) (pivot search, sort of the last candidates; no iteration tolerance)",
    reference="Wang et al. arXiv §3.4, Eq. 13–14, Appendix A; NDSS 2020 §IV-D, Eq. 12, Appendix B",
    notes="Weak order: values with γ f̃_v + δ ≤ 0 tie at 0 (γ > 0). Needs 0 < q, p < 1. "
          "Equals Norm-Sub exactly when p + q = 1.",
    label="MLE-Apx", family="closed-form", applies=_why_not,
    problem=ProblemStatement.fixed("weighted-mle", "MLE-Apx is the minimiser of the weighted MLE of Eq. 13 on the "
                                    "simplex (arXiv §3.4, Eq. 13-14, App. A; NDSS §IV-D)", "weighted-mle"),
)
def mle_apx(estimate: Estimate, method: str = "sort", polish: bool = True) -> np.ndarray:
    """MLE-Apx (arXiv §3.4): the exact solution of Eq. 13 from its KKT conditions.

    Parameters
    ----------
    method : {"sort", "brentq"}
        ``"sort"`` (default): the breakpoint scan, exact; on pivots (expected O(d), :mod:`.threshold`),
        with the full sort only on the last few thousand candidates.
        ``"brentq"``: 1-D root finding of Σ_v f_v(λ) = 1 in the common multiplier λ with
        :func:`scipy.optimize.brentq` (tight xtol), f_v(λ) in closed form (a quadratic root); a
        cross-check of the sort path.
    polish : bool, default True
        For ``"brentq"``: recompute x from the support the root identifies (makes it exact).

    Returns
    -------
    ndarray (d,): f'_v = max((a_v − s x*)/(B + C x*), 0), see the module docstring.
    """
    est = _check_estimate(estimate)
    if not isinstance(polish, (bool, np.bool_)):
        raise TypeError(f"polish must be True or False, got {polish!r}")
    if method == "sort":
        _params_checked(est)
        return _mle_apx_pivot(est)
    if method != "brentq":
        raise ValueError(f"method must be 'sort' or 'brentq', got {method!r}")
    a, B, s, C = _params(est)
    x = _x_star_brentq(est, a, B, s, C, bool(polish))
    return _f_of_x(a, B, s, C, x, est.p, est.q)


def mle_apx_paper_iterate(estimate: Estimate, max_iter: int | None = None):
    """The paper's iterative partition (arXiv §3.4 'In the actual implementation', Appendix A).

    D₁ = D; repeat: f' = Eq. 14 on D₁ (:func:`mle_apx_formula_arxiv`); move every v ∈ D₁ with
    f'_v < 0 to D₀; stop when none is negative. Returns ``(f, iterations)``. Values with f'_v = 0
    exactly stay in D₁ (the paper moves negatives only). Provably exact (module docstring).

    max_iter : int, default d (the proven bound).
    """
    est = _check_estimate(estimate)
    _params(est)
    if max_iter is None:
        max_iter = est.d
    max_iter = _check_max_iter(max_iter)
    p, q = est.p, est.q
    r = est.counts / est.n
    s = q * (1 - q)
    mask = np.ones(est.d, dtype=bool)
    for it in range(1, int(max_iter) + 1):
        # Eq. 14 on D₁, in the algebraically identical cancellation-free form of f_on_support
        # (the printed form loses all digits of 1 − p when p + q > 1 and p → 1), unclipped here
        rs = r[mask]
        t = rs - rs.max()
        kap = _kappa(rs, p, q)
        f = np.zeros(est.d)
        f[mask] = (kap + (s / (p - q)) * (rs.shape[0] * t - float(np.sum(t)))) / float(np.sum(kap))
        neg = f < 0
        if not neg.any():
            return f, it
        mask &= ~neg
    raise RuntimeError(f"MLE-Apx paper iteration did not stop within max_iter={max_iter} iterations")


@register(
    "mle-apx-paper",
    description="MLE-Apx by the paper's iterative partition (Eq. 14, drop negatives, repeat)",
    non_negative="yes", sums_to_one="yes", order_preserving="weak",
    complexity="O(d) per iteration, at most d iterations (O(d²) worst case)",
    reference="Wang et al. arXiv §3.4 (Eq. 14 and 'In the actual implementation'), Appendix A",
    notes="Reaches the exact KKT optimum of Eq. 13 (proof in ldpopt.methods.mle), so it equals "
          "mle-apx up to rounding. Weak order: removed values tie at 0.",
    label="MLE-Apx (paper)", family="iterative", applies=_why_not, variant_of="mle-apx",
    problem=ProblemStatement.fixed("weighted-mle", "The paper's iterative partition (Eq. 14, move negatives to D0, "
                                    "repeat) reaches the Eq. 13 optimum (arXiv §3.4 'In the actual implementation', "
                                    "App. A)", "weighted-mle"),
)
def mle_apx_paper(estimate: Estimate, max_iter: int | None = None) -> np.ndarray:
    """MLE-Apx computed the paper's way; see :func:`mle_apx_paper_iterate` (``max_iter``: partition
    steps, default d, the proven bound)."""
    return mle_apx_paper_iterate(estimate, max_iter)[0]
