r"""MLE-Apx: the weighted (Gaussian-approximation) MLE of Wang et al. arXiv §3.4, Eq. 13–14,
Appendix A (NDSS 2020 §IV-D, Eq. 12, Appendix B), solved exactly from its KKT conditions.

Notes: docs/notes/python.md, "ldpopt.methods.mle"."""

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
    if not est.noise.support_counts:
        return ("MLE-Apx weighs by a frequency oracle's variance (Eq. 13); noise added to exact counts "
                f"({est.oracle}) has the same variance in every cell, where the weighted problem is CLS: use norm-sub")
    if not (est.q > 0.0 and est.p < 1.0):
        return (f"MLE-Apx needs 0 < q and p < 1 (Eq. 13's variance must be > 0), got p={est.p!r}, q={est.q!r} "
                f"(oracle {est.oracle!r}, epsilon={est.epsilon!r})")
    return None


def _params(est: Estimate):
    """(a, B, s, C) of the module notes, after checking 0 < q and p < 1."""
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
    """MLE-Apx by the expected-O(d) pivot search of :mod:`.threshold` (module notes, 'Exact
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
    """f(λ) of the module notes: f_v(λ) = clip(φ_v(x(λ)), 0, 1), x(λ) = −λ/(B + √(B² − Cλ)).

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
    param_examples={"method": "brentq", "polish": False},
    description="Exact minimiser of the weighted MLE of Eq. 13 (KKT): max(γ f̃ + δ, 0)",
    non_negative="yes", sums_to_one="yes", order_preserving="weak",
    complexity="expected O(d) (pivot search, sort of the last candidates; no iteration tolerance)",
    reference="Wang et al. arXiv §3.4, Eq. 13–14, Appendix A; NDSS 2020 §IV-D, Eq. 12, Appendix B",
    notes=r"Weak order: values with $γ \tilde f_v + δ ≤ 0$ tie at 0 (γ > 0). Needs 0 < q, p < 1. "
          "Equals Norm-Sub exactly when p + q = 1.",
    label="MLE-Apx", family="closed-form", applies=_why_not,
    problem=ProblemStatement.fixed("weighted-mle", "MLE-Apx is the minimiser of the weighted MLE of Eq. 13 on the "
                                    "simplex (arXiv §3.4, Eq. 13-14, App. A; NDSS §IV-D)", "weighted-mle"),
)
def mle_apx(estimate: Estimate, method: str = "sort", polish: bool = True) -> np.ndarray:
    r"""MLE-Apx (arXiv §3.4): the exact solution of Eq. 13 from its KKT conditions.

    Parameters
    ----------
    method : {"sort", "brentq"}
        ``"sort"`` (default): the breakpoint scan, exact; on pivots (expected O(d), :mod:`.threshold`),
        with the full sort only on the last few thousand candidates.
        ``"brentq"``: 1-D root finding of :math:`\sum_v f_v(λ) = 1` in the common multiplier λ with
        :func:`scipy.optimize.brentq` (tight xtol), :math:`f_v(λ)` in closed form (a quadratic root); a
        cross-check of the sort path.
    polish : bool, default True
        For ``"brentq"``: recompute x from the support the root identifies (makes it exact).

    Returns
    -------
    ndarray (d,)
        :math:`f'_v = \max((a_v - s x^*)/(B + C x^*), 0)`, see the module notes.
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
    exactly stay in D₁ (the paper moves negatives only). Provably exact (module notes).

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
    param_examples={"max_iter": 50},
    description="MLE-Apx by the paper's iterative partition (Eq. 14, drop negatives, repeat)",
    non_negative="yes", sums_to_one="yes", order_preserving="weak",
    complexity="O(d) per iteration, at most d iterations ($O(d^2)$ worst case)",
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
