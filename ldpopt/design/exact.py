"""A strategy's ε-LDP proved in exact rational arithmetic: every row ratio of its normalised
columns at most a rational lower bound of e^ε.

Notes: docs/notes/design.md, "ldpopt.design.exact"."""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from .._validation import check_epsilon

__all__ = ["LDPCheck", "exp_lower", "verify_ldp"]

_U = Fraction(1, 2 ** 53)  # the unit roundoff of float64


def exp_lower(epsilon: float) -> Fraction:
    """A rational :math:`T ≤ e^ε`: the Taylor polynomial :math:`Σ_{k≤K} ε^k/k!` of the float ε taken exactly (every
    term positive, so every partial sum is a lower bound), K the first order whose term falls below
    10⁻³⁰ of the sum.

    Parameters
    ----------
    epsilon : float
        ε > 0.

    Returns
    -------
    Fraction

    Examples
    --------
    >>> import math
    >>> from ldpopt.design import exp_lower
    >>> T = exp_lower(1.0)
    >>> float(T) <= math.e, math.e - float(T) < 1e-15
    (True, True)
    """
    e = Fraction(check_epsilon(epsilon, "epsilon"))
    total, term, k = Fraction(1), Fraction(1), 0
    while True:  # a series in the order, not a loop over data
        k += 1
        term = term * e / k
        total += term
        if term * 10 ** 30 < total:
            return total


@dataclass(frozen=True)
class LDPCheck:
    """What :func:`verify_ldp` proved.

    Parameters
    ----------
    epsilon : float
        The ε claimed.
    verified : bool
        Whether the bound below is at most :attr:`exp_lower`.
    ratio_bound : Fraction
        A rational upper bound of max over rows y and values u, v of P[y|u]/P[y|v], P the strategy's
        columns normalised (the law the sampler draws).
    exp_lower : Fraction
        A rational lower bound of :math:`e^ε` (:func:`exp_lower`).
    rows : int
        Outputs checked (rows that are zero in every column never occur and are skipped).

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt.design import verify_ldp
    >>> c = verify_ldp(np.array([[0.75, 0.25], [0.25, 0.75]]), 1.1)  # ratio 3 = e^1.0986…
    >>> c.verified, c.ratio_bound == 3 * c.ratio_bound / 3, c.rows
    (True, True, 2)
    """

    epsilon: float
    verified: bool
    ratio_bound: Fraction
    exp_lower: Fraction
    rows: int

    @property
    def epsilon_bound(self) -> float:
        """log of :attr:`ratio_bound`, in float (for display): the channel's ε is at most about this.

        Examples
        --------
        >>> import numpy as np
        >>> from ldpopt.design import verify_ldp
        >>> round(verify_ldp(np.array([[0.75, 0.25], [0.25, 0.75]]), 1.1).epsilon_bound, 6)  # log 3
        1.098612
        """
        return float(np.log(float(self.ratio_bound)))

    def __str__(self) -> str:
        return (f"{'verified' if self.verified else 'NOT verified'}: every row ratio of the normalised strategy "
                f"≤ {float(self.ratio_bound):.17g} (exact rational bound, ε ≤ {self.epsilon_bound:.12g}) "
                f"{'≤' if self.verified else '>'} {float(self.exp_lower):.17g} ≤ e^{self.epsilon:g}, over {self.rows} outputs")


def verify_ldp(Q, epsilon: float) -> LDPCheck:
    r"""Prove (or refute) that the strategy Q is ε-LDP, in exact arithmetic.

    The law sampled is P = Q/S with :math:`S_u = Σ_y Q_{yu}`. Each float entry is an exact rational; each
    row's :math:`\max_u Q/\min_u Q` is formed exactly; the column sums are bounded rigorously from their float
    sums :math:`\hat s` by :math:`|\hat s − S| ≤ γ_m S`, :math:`γ_m = m·2^{-53}/(1 − m·2^{-53})` (any summation order; Higham, *Accuracy and
    Stability of Numerical Algorithms*, §4.2); then :math:`P[y|u]/P[y|v] ≤ (\max Q_y/\min Q_y)·(\max S/\min S)`,
    compared with the rational lower bound :func:`exp_lower` of :math:`e^ε`. What is not covered: the
    rounding of the sampler's uniform draws against the float CDF.

    Parameters
    ----------
    Q : array_like (m, d)
        The strategy, entries finite and ≥ 0, columns summing to about 1.
    epsilon : float
        The ε claimed.

    Returns
    -------
    LDPCheck

    Raises
    ------
    ValueError
        If Q is not a finite non-negative 2-D array with a positive sum in every column.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt.design import verify_ldp
    >>> Q = np.array([[0.7, 0.3], [0.3, 0.7]])
    >>> verify_ldp(Q, float(np.log(7 / 3)) + 1e-9).verified, verify_ldp(Q, 0.8).verified
    (True, False)
    """
    epsilon = check_epsilon(epsilon, "epsilon")
    A = np.asarray(Q, dtype=np.float64)
    if A.ndim != 2 or A.shape[0] < 1 or A.shape[1] < 2 or not np.all(np.isfinite(A)) or np.any(A < 0):
        raise ValueError(f"Q must be a finite non-negative (m, d) array with d >= 2, got shape {A.shape}")
    s = A.sum(axis=0)
    if np.any(s <= 0):
        raise ValueError("Q: every column must have a positive sum")
    seen = A.max(axis=1) > 0
    B = A[seen]
    lo, hi = B.min(axis=1), B.max(axis=1)
    T = exp_lower(epsilon)
    m = A.shape[0]
    if np.any(lo == 0):  # an output some value never gives and another does: ε = ∞
        return LDPCheck(epsilon, False, Fraction(10) ** 400, T, int(seen.sum()))
    gamma = m * _U / (1 - m * _U)
    s_max = Fraction(float(s.max())) / (1 - gamma)
    s_min = Fraction(float(s.min())) / (1 + gamma)
    # every row's ratio formed exactly (m Fractions)
    row = max(Fraction(float(h)) / Fraction(float(lw)) for h, lw in zip(hi, lo, strict=True))
    bound = row * s_max / s_min
    return LDPCheck(epsilon, bound <= T, bound, T, int(seen.sum()))
