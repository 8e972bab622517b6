"""Baseline methods: Base, Base-Pos, Base-Cut (Wang et al. arXiv §3.1, NDSS 2020 §IV-A, Table 1).

None of them makes the estimate consistent: Base-Pos and Base-Cut enforce non-negativity only.
Post-Pos, the fourth baseline, works on query answers, not on the frequency vector; it lives in
:func:`ldpopt.queries.post_pos`.
"""

from __future__ import annotations

import numbers

import numpy as np

from ..estimate import Estimate
from ..estimate import check_estimate as _check_estimate
from .linear import Centring
from .registry import register

__all__ = ["base", "base_cut", "base_pos", "cut_threshold"]



def _check_alpha(alpha, d: int) -> float:
    if isinstance(alpha, bool) or not isinstance(alpha, numbers.Real):
        raise TypeError(f"alpha must be a real number, got {type(alpha).__name__}")
    a = float(alpha)
    # α = d is allowed (T = −∞): the paper's default α = 2 must work on a domain of size 2.
    if not np.isfinite(a) or not 0.0 < a <= d:
        raise ValueError(f"alpha must be finite with 0 < alpha <= d = {d}, got {alpha!r}")
    return a


def cut_threshold(estimate: Estimate, alpha: float = 2.0) -> float:
    """Sensitivity threshold T = Φ⁻¹(1 − α/d)·σ of arXiv Eq. 9 (NDSS Eq. 9).

    σ is the common standard deviation √(q(1 − q)/(n(p − q)²)) of Eq. 7 (``estimate.sigma``), as
    both papers say ("σ is the standard deviation of the LDP mechanism (i.e., as in Equation (7))").
    α is the expected number of zero-frequency values that pass the threshold (union bound); Wang et
    al. use α = 2 (§3.1, "we choose to set α = 2"), Erlingsson et al. / Jia & Gong's OUE-Zero use
    α = 0.05. Requires 0 < α ≤ d; T ≤ 0 when α ≥ d/2, and α = d gives T = −∞ (Φ⁻¹(0)), which is
    allowed so that the default α = 2 works for d = 2 (the methods then cut at max(T, 0) = 0).
    """
    est = _check_estimate(estimate)
    a = _check_alpha(alpha, est.d)
    from scipy.special import ndtri  # here, not at import: `import ldpopt` loads no scipy

    return float(ndtri(1.0 - a / est.d) * est.sigma)


def _cut_rows(estimate: Estimate, F: np.ndarray, alpha: float = 2.0) -> np.ndarray:
    """:func:`base_cut` of every row of the raw estimates ``F`` (B, d) of ``estimate``'s setting."""
    t = max(cut_threshold(estimate, alpha), 0.0)
    return np.where(F >= t, F, 0.0)


@register(
    "base",
    description="Use the unbiased estimate f̃ as is",
    non_negative="no", sums_to_one="no", order_preserving="yes",
    complexity="O(d)",
    reference="Wang et al. arXiv §3.1 (Base), Table 1; NDSS 2020 §IV",
    notes="Sums to one exactly for GRR (counts sum to n), only in expectation for other oracles.",
    label="Base", family="closed-form", batched=lambda estimate, F: F, linear=Centring(0.0),
)
def base(estimate: Estimate) -> np.ndarray:
    """Base (arXiv §3.1): return f̃ unchanged (a float64 copy, so callers may write to it)."""
    return np.array(_check_estimate(estimate).f_tilde, dtype=np.float64, copy=True)


@register(
    "base-pos",
    description="Convert negative estimates to 0",
    non_negative="yes", sums_to_one="no", order_preserving="weak",
    complexity="O(d)",
    reference="Wang et al. arXiv §3.1 (Base-Pos), Table 1; NDSS 2020 §IV-A, Lemma 1",
    notes="Weak order: all negative estimates become tied at 0 (f̃ = (-0.2, -0.1) -> (0, 0)). "
          "Sum >= sum(f̃), typically > 1 (positive bias, NDSS Lemma 1).",
    label="Base-Pos", family="closed-form", batched=lambda estimate, F: np.maximum(F, 0.0),
)
def base_pos(estimate: Estimate) -> np.ndarray:
    r"""Base-Pos (arXiv §3.1): :math:`f'_v = \max(\tilde f_v, 0)`."""
    return np.maximum(_check_estimate(estimate).f_tilde, 0.0)


@register(
    "base-cut",
    param_examples={"alpha": 1.0},
    description=r"Convert estimates below the threshold $T = \Phi^{-1}(1 − α/d)σ$ to 0 (α = 2)",
    non_negative="yes", sums_to_one="no", order_preserving="weak",
    complexity="O(d)",
    reference="Wang et al. arXiv §3.1 (Base-Cut), Eq. 9 with σ of Eq. 7, Table 1; NDSS 2020 §IV-A",
    notes="Weak order: every estimate below T becomes tied at 0. alpha=0.05 gives the threshold of "
          "Erlingsson et al. / Jia & Gong's OUE-Zero. When alpha >= d/2, T <= 0 and Base-Cut is "
          "Base-Pos (negative estimates are always cut, so the output is non-negative).",
    label="Base-Cut", family="closed-form", batched=lambda estimate, F, alpha=2.0: _cut_rows(estimate, F, alpha),
)
def base_cut(estimate: Estimate, alpha: float = 2.0) -> np.ndarray:
    r"""Base-Cut (arXiv §3.1, Eq. 9): keep :math:`\tilde f_v` when :math:`\tilde f_v \ge T`, set it to 0 otherwise.

    Parameters
    ----------
    alpha : float, default 2
        :math:`0 < α \le d`. The paper's choice α = 2 (§3.1); α = 0.05 is the classic sensitivity threshold.

    Notes
    -----
    Choices where the paper is silent: an estimate exactly at T is kept ("below T" is cut); the
    effective threshold is :math:`\max(T, 0)`, so that for :math:`α \ge d/2` (where :math:`Φ^{-1}(1 - α/d) \le 0`) negative
    estimates are still cut and Table 1's "non-negative: yes" holds.
    """
    est = _check_estimate(estimate)
    t = max(cut_threshold(est, alpha), 0.0)
    f = est.f_tilde
    return np.where(f >= t, f, 0.0)
