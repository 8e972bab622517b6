"""Wang et al.'s closed forms for MLE-Apx on a given support D₁, as printed (arXiv Eq. 14; NDSS 2020
Eq. 12, whose x has a sign error): kept for the verification suite and the paper's iteration
(:func:`ldpopt.methods.mle.mle_apx_paper_iterate`); the exact solver is :func:`ldpopt.methods.mle.mle_apx`."""

from __future__ import annotations

import numpy as np

from ..estimate import Estimate
from .baseline import _check_estimate

__all__ = ["mle_apx_formula_arxiv", "mle_apx_formula_ndss"]


def _as_support(support, d: int) -> np.ndarray:
    m = np.asarray(support)
    if m.dtype == bool:
        if m.shape != (d,):
            raise ValueError(f"support as a boolean mask must have shape ({d},), got {m.shape}")
        mask = m.copy()
    else:
        if m.ndim != 1 or (m.size and m.dtype.kind not in "iu"):
            raise ValueError("support must be a boolean mask or a 1-D array of integer indices")
        if m.size and (m.min() < 0 or m.max() >= d):
            raise ValueError(f"support indices must lie in [0, {d})")
        mask = np.zeros(d, dtype=bool)
        mask[m] = True
    if not mask.any():
        raise ValueError("support must contain at least one value")
    return mask


def mle_apx_formula_arxiv(estimate: Estimate, support) -> np.ndarray:
    """arXiv Eq. 14 as printed, on the given support D₁ (boolean mask or index array); 0 elsewhere.

        x = (Σ_{v∈D₁} c_v/n − |D₁| q − (p − q)) / ((p − q)(1 − p − q) + |D₁| q(1 − q))
        f'_v = (c_v/n − q − q(1 − q) x) / (p − q + (p(1 − p) − q(1 − q)) x)     for v ∈ D₁.

    Σ_{D₁} c_v/n − |D₁| q is summed as Σ_{D₁}(c_v/n − q) (algebraically identical; avoids the
    cancellation of two O(|D₁| q) terms). The output may be negative: that is what the paper's
    iteration tests. Sums to one for every support (see module docstring).
    """
    est = _check_estimate(estimate)
    mask = _as_support(support, est.d)
    p, q = est.p, est.q
    r = est.counts / est.n
    m = int(np.count_nonzero(mask))
    x = (float(np.sum(r[mask] - q)) - (p - q)) / ((p - q) * (1 - p - q) + m * q * (1 - q))
    out = np.zeros(est.d)
    out[mask] = (r[mask] - q - q * (1 - q) * x) / (p - q + (p * (1 - p) - q * (1 - q)) * x)
    return out


def mle_apx_formula_ndss(estimate: Estimate, support) -> np.ndarray:
    """NDSS 2020 Eq. 12 (= Appendix B Eq. 14) as printed, on the support D₁; 0 elsewhere.

        x = (Σ_{v∈D₁} f̃_v (p − q) − (p − q)) / ((p − q)(1 − p − q) − |D₁| q(1 − q))
        f'_v = (q(1 − q) x + f̃_v (p − q)) / (p − q − (p − q)(1 − p − q) x)     for v ∈ D₁.

    Kept for the verification suite: this printed x has the wrong sign on (p − q)(1 − p − q), so
    the result sums to one only when 1 − p − q = 0 or Σ_{D₁} f̃ = 1.
    """
    est = _check_estimate(estimate)
    mask = _as_support(support, est.d)
    p, q = est.p, est.q
    ft = est.f_tilde
    m = int(np.count_nonzero(mask))
    x = (float(np.sum(ft[mask])) * (p - q) - (p - q)) / ((p - q) * (1 - p - q) - m * q * (1 - q))
    out = np.zeros(est.d)
    out[mask] = (q * (1 - q) * x + ft[mask] * (p - q)) / (p - q - (p - q) * (1 - p - q) * x)
    return out
