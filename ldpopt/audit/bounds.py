"""Exact binomial confidence bounds and the ε lower bound they give a test between two neighbours.

Notes: docs/notes/reliability.md, "ldpopt.audit"."""

from __future__ import annotations

import numpy as np
from scipy.stats import beta

__all__ = ["clopper_pearson", "epsilon_bound"]


def clopper_pearson(x: int, N: int, alpha_side: float) -> tuple[float, float]:
    """One-sided exact bounds (lower, upper) on a binomial proportion, each at level ``alpha_side``:
    lower = Beta⁻¹(α; x, N − x + 1) (0 if x = 0), upper = Beta⁻¹(1 − α; x + 1, N − x) (1 if x = N).

    Parameters
    ----------
    x : int
        Successes, 0 <= x <= N.
    N : int
        Trials.
    alpha_side : float
        Error probability of each one-sided bound, in (0, 1).

    Returns
    -------
    tuple of float
        ``(lower, upper)``.

    Examples
    --------
    >>> from ldpopt.audit import clopper_pearson
    >>> lo, hi = clopper_pearson(30, 100, 0.025)
    >>> round(lo, 4), round(hi, 4)
    (0.2124, 0.3998)
    >>> clopper_pearson(0, 100, 0.025)[0]
    0.0
    """
    lo = 0.0 if x == 0 else float(beta.ppf(alpha_side, x, N - x + 1))
    hi = 1.0 if x == N else float(beta.ppf(1.0 - alpha_side, x + 1, N - x))
    return lo, hi


def epsilon_bound(x1, n1: int, x0, n0: int, alpha: float, delta: float = 0.0) -> np.ndarray:
    r"""The ε lower bound of the test "reject when the event happens", from ``x1`` of ``n1`` runs on x
    and ``x0`` of ``n0`` runs on its neighbour x′: an (ε, δ)-DP mechanism has :math:`\Pr_1[E] ≤ e^ε \Pr_0[E] + δ`
    and :math:`\Pr_0[E^c] ≤ e^ε \Pr_1[E^c] + δ`, so with exact one-sided Clopper–Pearson bounds at α/2 each

    .. math::

        ε ≥ \max\bigl( \ln((P_{1,\mathrm{low}} - δ) / P_{0,\mathrm{high}}),\ \ln((1 - P_{0,\mathrm{high}} - δ) / (1 - P_{1,\mathrm{low}})) \bigr)

    (Kairouz, Oh & Viswanath 2015; Jagielski, Ullman & Oprea 2020), holding with confidence 1 − α;
    −inf where neither is positive. Vectorised over arrays of counts (one bound per event).

    Parameters
    ----------
    x1, x0 : int or array_like of int
        Event counts under x and under x′.
    n1, n0 : int
        Runs under each.
    alpha : float
        1 − confidence, in (0, 1).
    delta : float
        The δ of the statement tested (0 for pure ε).

    Returns
    -------
    ndarray of float
        The bound per event (a 0-d array for scalar counts).

    Examples
    --------
    >>> from ldpopt.audit import epsilon_bound
    >>> round(float(epsilon_bound(7300, 10_000, 2700, 10_000, 1e-3)), 3)  # GRR(d = 2, ε = 1)'s event "y = x"
    0.921
    """
    x1 = np.asarray(x1, dtype=np.float64)
    x0 = np.asarray(x0, dtype=np.float64)
    a = float(alpha) / 2.0
    p1_lo = np.where(x1 > 0, beta.ppf(a, np.maximum(x1, 1), n1 - x1 + 1), 0.0)
    p0_hi = np.where(x0 < n0, beta.ppf(1 - a, x0 + 1, np.maximum(n0 - x0, 1)), 1.0)
    # complement: Pr₀[Eᶜ] low and Pr₁[Eᶜ] high
    c0_lo = 1.0 - p0_hi
    c1_hi = 1.0 - p1_lo
    with np.errstate(divide="ignore", invalid="ignore"):
        first = np.where((p1_lo - delta > 0) & (p0_hi > 0), np.log(np.maximum(p1_lo - delta, 1e-300) / p0_hi), -np.inf)
        second = np.where((c0_lo - delta > 0) & (c1_hi > 0), np.log(np.maximum(c0_lo - delta, 1e-300) / c1_hi), -np.inf)
    return np.maximum(first, second)
