"""Empirical-Bayes shrinkage of the raw estimate toward a declared prior mean (James–Stein).

Notes: docs/notes/python.md, "ldpopt.methods.shrink"."""

from __future__ import annotations

import numpy as np

from .._validation import check_float_array
from ..estimate import Estimate
from ..estimate import check_estimate as _check_estimate
from .registry import register

__all__ = ["eb_interval", "eb_shrink", "shrinkage"]


def _prior_mean(est: Estimate, prior) -> np.ndarray:
    if prior is None:
        return np.full(est.d, 1.0 / est.d)
    m = check_float_array(prior, "prior", length=est.d, min_length=2)
    return m


def shrinkage(estimate: Estimate, prior=None, F=None) -> tuple[np.ndarray, np.ndarray, float]:
    """The fitted shrinkage B̂ (module notes) of the raw estimate, or of every row of ``F``.

    Parameters
    ----------
    estimate : Estimate
        Its setting gives σ̄²; its f̃ is used when ``F`` is None.
    prior : array_like (d,) or None, default None
        The prior mean m (None: uniform 1/d).
    F : ndarray (B, d), optional
        Raw estimates of the same setting (resamples).

    Returns
    -------
    (B, m, sigma2) : ndarray (shape () or (B,)), ndarray (d,), float

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt import oracles
    >>> from ldpopt.methods.shrink import shrinkage
    >>> est = oracles.get("grr", 1.0, 8).simulate(np.array([300, 250, 200, 100, 60, 40, 30, 20]), rng=0)
    >>> B, m, s2 = shrinkage(est)
    >>> 0.0 <= float(B) <= 1.0, float(m[0])
    (True, 0.125)
    """
    est = _check_estimate(estimate)
    m = _prior_mean(est, prior)
    s2 = float(est.variance(1.0 / est.d))
    X = est.f_tilde if F is None else np.asarray(F, dtype=np.float64)
    ss = np.sum((X - m) ** 2, axis=-1)
    B = np.minimum(1.0, np.divide((est.d - 2) * s2, ss, out=np.ones_like(ss), where=ss > 0))
    return B, m, s2


def _rows(estimate, F, prior=None):
    B, m, _ = shrinkage(estimate, prior, F)
    return m + (1.0 - np.asarray(B))[..., None] * (np.asarray(F, dtype=np.float64) - m)


@register(
    "eb-shrink",
    param_examples={"prior": None},
    description="Empirical-Bayes (James–Stein) shrinkage toward a declared prior mean, $τ^2$ fitted from f̃",
    non_negative="no", sums_to_one="no", order_preserving="weak",
    complexity="O(d)",
    reference="Efron & Morris JASA 1973 (positive-part James–Stein); Kim, Park, Jung arXiv 2606.21107 "
              r"(for DP histograms); $\bar σ^2$ from Wang et al. arXiv Eq. 2",
    notes="Sums to one when f̃ and the prior do (GRR: exactly; other oracles: in expectation). "
          "Weak order: when B̂ = 1 every value is the prior mean (uniform: all tied). "
          "Negative where f̃ is far enough below the prior mean.",
    label="EB-Shrink", family="fitted",
    batched=lambda estimate, F, prior=None: _rows(estimate, F, prior),
)
def eb_shrink(estimate: Estimate, prior=None) -> np.ndarray:
    """Positive-part James–Stein shrinkage of f̃ toward ``prior`` (module notes).

    Parameters
    ----------
    prior : array_like (d,) or None, default None
        The prior mean m (None: uniform 1/d); finite, length d.
    """
    est = _check_estimate(estimate)
    return _rows(est, est.f_tilde, prior)


def eb_interval(estimate: Estimate, level: float = 0.95, prior=None) -> tuple[np.ndarray, np.ndarray]:
    """The empirical-Bayes posterior interval around :func:`eb_shrink`: point ± z·√V_v with Morris's
    variance V_v = (1 − B̂)σ̄² + 2/(d − 2) · B̂² (f̃_v − m_v)² (JASA 1983, Eq. 4.1 with known σ̄²),
    the second term for the estimated B̂ (0 for d = 2).

    Parameters
    ----------
    estimate : Estimate
    level : float, default 0.95
        In (0, 1).
    prior : array_like (d,) or None
        As :func:`eb_shrink`.

    Returns
    -------
    (lo, hi) : ndarray (d,), ndarray (d,)

    Raises
    ------
    ValueError
        If ``level`` is not in (0, 1).
    """
    est = _check_estimate(estimate)
    if not (isinstance(level, (int, float)) and 0.0 < float(level) < 1.0):
        raise ValueError(f"level must be in (0, 1), got {level!r}")
    from scipy.special import ndtri

    Bv, m, s2 = shrinkage(est, prior)
    b = float(Bv)
    point = m + (1.0 - b) * (est.f_tilde - m)
    extra = 2.0 / (est.d - 2) * b * b * (est.f_tilde - m) ** 2 if est.d > 2 else np.zeros(est.d)
    half = float(ndtri(0.5 + float(level) / 2.0)) * np.sqrt((1.0 - b) * s2 + extra)
    return point - half, point + half
