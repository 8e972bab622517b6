"""Normalisation methods: Norm, Norm-Mul, Norm-Cut, Norm-Sub, Norm-Hyb (Wang et al. arXiv §3.2–§3.3,
§3.5, Appendix B; NDSS 2020 §IV-B, §IV-C, Appendix A; Table 1), and the Euclidean projection onto
the scaled simplex that Norm-Sub and Norm-Hyb share.

Notes: docs/notes/python.md, "ldpopt.methods.normalize"."""

from __future__ import annotations

import math
import numbers

import numpy as np

from .._validation import check_float_array
from ..estimate import Estimate
from .baseline import _check_estimate, cut_threshold
from .linear import Centring
from .registry import ProblemStatement, register
from .threshold import top_support

__all__ = ["norm", "norm_cut", "norm_hyb", "norm_mul", "norm_mul_rows", "norm_sub", "positive_mass", "project_simplex", "rounding_bound",
           "simplex_shift"]


# -- the projection ------------------------------------------------------------------------------
def _check_total(total) -> float:
    if isinstance(total, bool) or not isinstance(total, numbers.Real):
        raise TypeError(f"total must be a real number, got {type(total).__name__}")
    t = float(total)
    if not np.isfinite(t) or t < 0:
        raise ValueError(f"total must be finite and >= 0, got {total!r}")
    return t


def shift_support(y: np.ndarray, total: float) -> tuple[float, np.ndarray | None]:
    """(τ, pool): τ with Σ max(y − τ, 0) = total (total > 0, y finite, non-empty), exact up to
    rounding, and the indices of a subset of y containing the support (None: all of y).

    Expected O(d): the pivot search of :func:`.threshold.top_support` with θ(S, k) = (S − total)/k
    (the sort-and-scan of Held, Wolfe & Crowder is its base case, and the tests' reference)."""
    s, k, pool = top_support(y, lambda css, k: (css - total) / k)
    # k = 0 only when total is below the rounding unit of max(y): the support is {argmax}.
    tau = (s - total) / k if k else float(np.max(y)) - total
    # Polish: recompute τ from the support with pairwise summation (exact if the support is).
    vals = y if pool is None else y[pool]
    for _ in range(2):
        sup = vals[vals > tau]
        if sup.shape[0] == 0:  # τ rounded to max(y): total is below its rounding unit
            break
        tau_new = (float(np.sum(sup)) - total) / sup.shape[0]
        if tau_new == tau:
            break
        tau = tau_new
    return tau, pool


def _shift(y: np.ndarray, total: float) -> float:
    return shift_support(y, total)[0]


def _as_vector(x) -> np.ndarray:
    """``x`` as a 1-D finite float64 array, validated once and *not* copied when it already is one
    (the projection never writes to its input). Finite ⇔ max and min are finite (NaN propagates)."""
    try:
        y = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError("x must be a 1-D array of real numbers") from None
    if y.ndim != 1 or y.shape[0] == 0:
        raise ValueError(f"x must be 1-D and non-empty, got shape {y.shape}")
    if not (np.isfinite(np.max(y)) and np.isfinite(np.min(y))):
        return check_float_array(y, "x")  # raises, naming the first non-finite entry
    return y


def simplex_shift(x, total: float = 1.0) -> float:
    """The common shift τ of :func:`project_simplex`: its result is max(x − τ, 0).

    Norm-Sub's δ (arXiv §3.3) is −τ. For ``total == 0``, τ = max(x) (any τ ≥ max(x) works).
    """
    y = _as_vector(x)
    t = _check_total(total)
    if t == 0.0:
        return float(np.max(y))
    return float(_shift(y, t))


def _project(y: np.ndarray, t: float) -> np.ndarray:
    """:func:`project_simplex` on a validated vector (no checks, no copy of ``y``)."""
    if t == 0.0:
        return np.zeros(y.shape[0])
    tau, pool = shift_support(y, t)
    # max(y − τ, 0) written only where it is > 0 (y > τ ⇔ y − τ > 0 in IEEE arithmetic): the
    # same bits, without a full-length temporary; the support is inside pool.
    idx = np.flatnonzero(y > tau) if pool is None else pool[y[pool] > tau]
    out = np.zeros(y.shape[0])  # calloc: no pass over memory (zeros_like fills)
    if idx.size:
        out[idx] = y[idx] - tau
    else:
        # total is below the rounding unit of max(y), so y − τ rounds to 0 everywhere. The exact
        # projection puts the whole mass on the values within `total` of the max, i.e. (to that
        # rounding) on the maximisers, equally (their KKT shift is common).
        top = y == np.max(y)
        out[top] = t / int(np.count_nonzero(top))
    return out


def project_simplex(x, total: float = 1.0) -> np.ndarray:
    """Euclidean projection of ``x`` onto {f ∈ ℝ^d : f ≥ 0, Σ f = total}.

    The unique minimiser of ‖f − x‖₂ on that set; its KKT conditions (arXiv Appendix B, NDSS
    Appendix A) give f_v = max(x_v − τ, 0) with Σ_v max(x_v − τ, 0) = total. τ is found exactly, in
    expected O(d), by the pivot search of :mod:`.threshold` (the sort-and-scan of Held, Wolfe &
    Crowder on the last few thousand candidates), then polished once from the found support with
    pairwise summation so that Σf = total to rounding even at d = 10⁷.

    Parameters
    ----------
    x : array_like, shape (d,)
        Finite reals (validated once; never copied or modified).
    total : float, default 1
        Mass of the simplex, ≥ 0. ``total == 0`` gives the zero vector. A total below the rounding
        unit of max(x) (e.g. 1e-17 next to 0.5) gives total/|M| on the maximisers M of x and 0
        elsewhere: the exact projection to within that rounding unit (y − τ is not representable).

    Returns
    -------
    ndarray, shape (d,), float64 (a new array)
    """
    return _project(_as_vector(x), _check_total(total))


# -- comparing sums of estimates with 1 -----------------------------------------------------------
_U = 2.0 ** -53  # unit roundoff of float64


def rounding_bound(est: Estimate, values: np.ndarray) -> float:
    """Bound on |Σ values − Σ of their exact-arithmetic counterparts| for entries of f̃, plus the
    rounding of their correctly rounded sum (:func:`math.fsum`).

    f̃_v = (c_v/n − q)/(p − q) (arXiv §2.2) is three rounded operations on rounded p, q (each
    assumed within 4u of exact, u = 2⁻⁵³); to first order |f̃_v − f̃_v^exact| ≤
    u·(5q/(p − q) + (4 + 4(p + q)/(p − q))·|f̃_v|). We double that for the neglected higher-order and
    p, q terms. The exact sums the methods test can be exactly 1 (GRR: Σ_v f̃_v = 1 identically),
    and their float sums then miss 1 by up to this much (measured: up to 3·d·u·Σ|f̃|).
    """
    p, q = est.p, est.q
    a = np.abs(values)
    r = q / (p - q)
    tot = float(np.sum(a))
    return 2.0 * _U * (5.0 * r * a.shape[0] + (4.0 + 4.0 * (p + q) / (p - q)) * tot) + _U * tot


def _project_rows(F: np.ndarray) -> np.ndarray:
    """:func:`norm_sub` of every row of ``F`` (B, d): one O(d) projection per row (candidates above a
    lower bound on the shift), measured faster than a batched Michelot/sort over the whole array
    (benchmarks/bench_uncertainty.py)."""
    return np.stack([project_simplex(f) for f in F])


# -- the methods ---------------------------------------------------------------------------------
@register(
    "norm",
    description=r"Add $δ = (1 − \sum \tilde f)/d$ to every estimate",
    non_negative="no", sums_to_one="yes", order_preserving="yes",
    complexity="O(d)",
    reference="Wang et al. arXiv §3.2 (Norm), Table 1; NDSS 2020 §IV-B, Lemma 3 (unbiased)",
    notes="Order: strict in exact arithmetic; in floating point two estimates closer than the "
          "rounding unit of f̃ + δ can become equal.",
    label="Norm", family="closed-form", linear=Centring(1.0),
    batched=lambda estimate, F: F + ((1.0 - F.sum(axis=1)) / F.shape[1])[:, None],
)
def norm(estimate: Estimate) -> np.ndarray:
    r"""Norm (arXiv §3.2): :math:`f'_v = \tilde f_v + δ`, :math:`δ = (1 - \sum_x \tilde f_x)/d`. Unbiased (NDSS Lemma 3), may be < 0."""
    f = _check_estimate(estimate).f_tilde
    return f + (1.0 - float(np.sum(f))) / f.shape[0]


@register(
    "norm-mul",
    description="Convert negative estimates to 0, then multiply by γ so the sum is 1",
    non_negative="yes", sums_to_one="yes", order_preserving="weak",
    complexity="O(d)",
    reference="Wang et al. arXiv §3.3 (Norm-Mul), Table 1; NDSS 2020 §IV-B",
    notes="Weak order: negative estimates tie at 0. If no estimate is positive (no γ > 0 exists) "
          "the output is the uniform distribution 1/d (a choice: the paper is silent).",
    label="Norm-Mul", family="closed-form", batched=lambda estimate, F: norm_mul_rows(F),
    pivot_scale=lambda F: positive_mass(F),
)
def norm_mul(estimate: Estimate) -> np.ndarray:
    r"""Norm-Mul (arXiv §3.3): :math:`f'_v = \max(γ \tilde f_v, 0)` with γ such that :math:`\sum_v \max(γ \tilde f_v, 0) = 1`,
    i.e. :math:`γ = 1/\sum_v \max(\tilde f_v, 0)`.

    Choice where the paper is silent: if every :math:`\tilde f_v \le 0` there is no such γ > 0; we return the
    uniform vector 1/d (consistent, and what Norm-Mul returns in the limit of d equal tiny positive
    estimates).
    """
    return norm_mul_rows(_check_estimate(estimate).f_tilde)


def norm_mul_rows(F) -> np.ndarray:
    """:func:`norm_mul` of each row of ``F`` ((d,) or (B, d) raw estimates; the bootstrap's batch,
    :mod:`ldpopt.uncertainty.resample`): max(F, 0)/S, S = Σ max(F, 0) per row, or 1/d where S = 0."""
    pos = np.maximum(F, 0.0)
    s = pos.sum(axis=-1, keepdims=True)
    return np.where(s > 0, pos / np.where(s > 0, s, 1.0), 1.0 / pos.shape[-1])


def positive_mass(F) -> np.ndarray:
    """S = Σ_v max(f̃_v, 0) of each row of ``F`` ((d,) → scalar, (B, d) → (B,)): Norm-Mul's
    divisor, so that Norm-Mul(f̃)·S = max(f̃, 0). Where S = 0 Norm-Mul returns 1/d (its choice);
    the scale is then 1 (nothing to undo)."""
    s = np.maximum(np.asarray(F, dtype=np.float64), 0.0).sum(axis=-1)
    return np.where(s > 0, s, 1.0)


def _tie_closed_top_threshold(values_desc: np.ndarray, limit: float, strict: bool) -> float:
    """Smallest value θ among ``values_desc`` (sorted descending) such that the sum of all values
    ≥ θ is ≤ ``limit`` (``strict``: < limit). Ties are never split. ``inf`` if no such θ."""
    cs = np.cumsum(values_desc)
    m = values_desc.shape[0]
    ends = np.ones(m, dtype=bool)  # positions that close a tie group
    ends[:-1] = values_desc[:-1] > values_desc[1:]
    ok = ends & ((cs < limit) if strict else (cs <= limit))
    idx = np.flatnonzero(ok)
    # cs is increasing (positive values), so the admissible group ends form a prefix.
    return float(values_desc[idx[-1]]) if idx.size else np.inf


@register(
    "norm-cut",
    description="Convert negative and small positive estimates below θ to 0 so the total is ≤ 1",
    non_negative="yes", sums_to_one="almost", order_preserving="weak",
    complexity="O(d log d) here (sort); O(d) possible by selection",
    reference="Wang et al. arXiv §3.3 (Norm-Cut), Table 1; NDSS 2020 §IV-B",
    notes=r"Sum is always <= 1 (up to the rounding of f̃: sums within it count as 1) and equals 1 only by coincidence: if $\sum \max(\tilde f,0) ≤ 1$ the sum is "
          r"$\sum \max(\tilde f,0)$ (shortfall $1 − \sum \max(\tilde f,0)$); otherwise it is the largest tie-closed top "
          "prefix sum <= 1 (adding back the largest cut tie group would exceed 1). If max f̃ > 1 every "
          "estimate is cut and the output is all zeros. Weak order: cut values tie at 0.",
    label="Norm-Cut", family="closed-form",
)
def norm_cut(estimate: Estimate) -> np.ndarray:
    r"""Norm-Cut (arXiv §3.3).

    If :math:`\sum_v \max(\tilde f_v, 0) \le 1`: :math:`f' = \max(\tilde f, 0)` (sum < 1 unless the positive part sums to exactly 1).
    Otherwise find the smallest θ with :math:`\sum_{v: \tilde f_v \ge θ} \tilde f_v \le 1` and output :math:`\tilde f_v` for :math:`\tilde f_v \ge θ`, 0 below.

    Choices where the paper is silent:

    * "smallest θ" is not attained when θ ranges over the reals; we use the equivalent finite rule:
      keep the largest set of top estimates, closed under ties, whose sum is ≤ 1 (θ is its smallest
      member). Tied estimates are kept or cut together.
    * if even the largest estimate exceeds 1, no θ keeps anything: the output is all zeros (the
      literal rule; Table 1's "almost" covers it).
    * the tests "≤ 1" are on the exact-arithmetic values: f̃ is only known to within its rounding
      error, and the exact sum can be exactly 1 (GRR with every estimate positive: :math:`\sum \tilde f = 1`
      identically, while the float sum is often 1 + 2.2e-16). So a sum counts as "> 1" only when
      its correctly rounded value (:func:`math.fsum`) exceeds 1 by more than the rounding bound of
      :func:`rounding_bound` (prefix sums of the cut: that bound plus the cumulative sum's own
      m·u). Hence the output sums to ≤ 1 up to that bound (≈ 1e-14 at ε = 1, d = 10).
    """
    est = _check_estimate(estimate)
    f = est.f_tilde
    pos = np.maximum(f, 0.0)
    tol = rounding_bound(est, pos)
    if math.fsum(pos) <= 1.0 + tol:
        return pos
    top = np.sort(f[f > 0])[::-1]
    theta = _tie_closed_top_threshold(top, 1.0 + tol + top.shape[0] * _U, strict=False)
    return np.where(f >= theta, f, 0.0)


@register(
    "norm-sub",
    description="Convert negative estimates to 0 while adding δ to the others so the sum is 1 (= CLS)",
    non_negative="yes", sums_to_one="yes", order_preserving="weak",
    complexity="expected O(d) (pivot search; sort of the last few thousand candidates)",
    reference="Wang et al. arXiv §3.3 (Norm-Sub), §3.5 + Appendix B (CLS), Table 1; NDSS 2020 "
              "§IV-B, §IV-C, Appendix A",
    notes="Equals the Euclidean projection onto the probability simplex. Weak order: values with "
          r"$\tilde f_v ≤ −δ$ tie at 0.",
    label="Norm-Sub", family="closed-form", batched=lambda estimate, F: _project_rows(F),
    problem=ProblemStatement.fixed("cls", r"Norm-Sub is the CLS solution, $\operatorname{argmin} \lVert f - \tilde f \rVert_2$ on the simplex "
                                    "(arXiv §3.5, App. B; NDSS §IV-C, App. A)", "cls"),
)
def norm_sub(estimate: Estimate) -> np.ndarray:
    r"""Norm-Sub (arXiv §3.3): :math:`f'_v = \max(\tilde f_v + δ, 0)` with δ such that :math:`\sum_v \max(\tilde f_v + δ, 0) = 1`.

    Identical to CLS (arXiv §3.5, Appendix B): the Euclidean projection of f̃ onto the probability
    simplex, computed exactly by :func:`project_simplex`. :math:`δ = -τ`, τ = :func:`simplex_shift` (f̃).
    """
    return _project(_check_estimate(estimate).f_tilde, 1.0)  # f̃ was validated by Estimate


@register(
    "norm-hyb",
    param_examples={"k": 3, "alpha": None},
    description=r"Keep estimates above $T = \Phi^{-1}(1 − α/d)σ$ (or the k largest), Norm-Sub the rest",
    non_negative="yes", sums_to_one="yes", order_preserving="no",
    complexity="O(d log d)",
    reference="Wang et al. arXiv §3.3 (Norm-Hyb) with T of Eq. 9; k-largest variant from NDSS 2020 "
              "§V-E ('one can set T to be the k-th highest estimated value')",
    notes="Not order preserving (contrary to arXiv §3.6): when the kept values sum well below 1 "
          "the rest is shifted up, e.g. f̃ = (0.3, 0.29, -0.5, -0.5) with only 0.3 kept gives "
          "(0.3, 0.7, 0, 0). Tied values at the kept/adjusted boundary are kept or adjusted together.",
    label="Norm-Hyb", family="closed-form",
)
def norm_hyb(estimate: Estimate, alpha: float | None = None, k: int | None = None) -> np.ndarray:
    r"""Norm-Hyb (arXiv §3.3): keep the estimates above a threshold unchanged, Norm-Sub the others to
    sum to 1 − (sum kept).

    Parameters
    ----------
    alpha : float, optional
        Threshold :math:`T = Φ^{-1}(1 - α/d)σ` as in Base-Cut (Eq. 9, σ of Eq. 7); default α = 2, the paper's
        ":math:`T = F^{-1}(1 - 2/d)σ`". :math:`0 < α \le d`.
    k : int, optional
        Instead of α: keep the k largest estimates (T = the k-th highest estimate, NDSS §V-E's
        guideline). :math:`1 \le k \le d`. Give ``alpha`` or ``k``, not both.

    Notes
    -----
    Rules (the paper's, then our choices where it is silent):

    * :math:`H = \{v : \tilde f_v \ge T\}`, restricted to :math:`\tilde f_v > 0` (a non-positive estimate is never "kept", so the
      output is non-negative even when :math:`T \le 0`, i.e. :math:`α \ge d/2`). With ``k`` and ties at the k-th value,
      all tied values are kept (H may exceed k).
    * If :math:`\sum_H \tilde f > 1` (paper): keep the largest k' highest estimates whose sum is < 1 (strictly, as
      printed), taking tie groups whole; if even the largest estimate is ≥ 1, nothing is kept.
    * The rest is projected onto :math:`\{f \ge 0, \sum f = 1 - \sum_H \tilde f\}` (Norm-Sub with that total).
    * If H is the whole domain and :math:`\sum_H \tilde f \ne 1` (nothing left to adjust; the paper is silent), Norm-Sub
      is applied to the whole vector.
    * Sums are compared with 1 in exact-arithmetic terms, as in :func:`norm_cut`: a correctly
      rounded sum (:func:`math.fsum`) within the rounding bound of f̃ (:func:`rounding_bound`) of 1
      *is* 1. So ":math:`\sum_H \tilde f > 1`" needs an excess beyond rounding, "< 1" a shortfall beyond it, and a
      leftover :math:`1 - \sum_H \tilde f` within rounding of 0 is 0: nothing to shift, every adjusted value is 0
      (the projection onto the simplex of mass 0). Before this rule a leftover of ~1e-16 reached
      the projection and crashed it (SUE, ε = 10, counts (9, 1, 0, …), n = 10).
    """
    est = _check_estimate(estimate)
    f, d = est.f_tilde, est.d
    if k is not None and alpha is not None:
        raise ValueError("give alpha or k, not both")
    if k is not None:
        if isinstance(k, bool) or not isinstance(k, numbers.Integral):
            raise TypeError(f"k must be an integer, got {type(k).__name__}")
        if not 1 <= int(k) <= d:
            raise ValueError(f"k must satisfy 1 <= k <= d = {d}, got {k!r}")
        t = float(np.partition(f, d - int(k))[d - int(k)])
    else:
        t = cut_threshold(est, 2.0 if alpha is None else alpha)
    keep = (f >= t) & (f > 0)
    tol = rounding_bound(est, f[keep])
    s = math.fsum(f[keep])
    if s > 1.0 + tol:
        top = np.sort(f[keep])[::-1]
        theta = _tie_closed_top_threshold(top, 1.0 - tol - top.shape[0] * _U, strict=True)
        keep = f >= theta
        s = math.fsum(f[keep])
    # leftover for the adjusted values; within rounding of 0 it is exactly 0 (nothing to shift)
    left = 1.0 - s if abs(1.0 - s) > tol else 0.0
    if keep.all():
        if left == 0.0:
            return f.copy()
        return _project(f, 1.0)
    out = f.copy()
    out[~keep] = _project(f[~keep], max(left, 0.0))
    return out
