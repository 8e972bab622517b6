"""Parameters re-optimised for the mean squared error over the whole domain: RUE and RLH (Fang, Chen
& Liu, "Further Study on Frequency Estimation under Local Differential Privacy", USENIX Security
2025; the authors' code: github.com/SEUNICK/LDP_Frequency_Protocols, fp/RUE.py, fp/RLH.py).

Notes: docs/notes/python.md, "ldpopt.oracles.reoptimized"."""

from __future__ import annotations

import math

import numpy as np

from .hashing import G_MAX, OLH
from .unary import _UnaryEncoding

__all__ = ["RLH", "RUE", "mean_mse"]


def mean_mse(p, q, d: int):
    """n × the mean over the domain of Var f̃_v, Eq. (1) of the module notes:
    q(1 − q)/(p − q)² + (1 − p − q)/(d(p − q)).

    Parameters
    ----------
    p, q : float or array_like
        Support probabilities, p > q (broadcast together).
    d : int
        Domain size.

    Returns
    -------
    float or ndarray

    Examples
    --------
    >>> from ldpopt import oracles
    >>> from ldpopt.oracles.reoptimized import mean_mse
    >>> oue, rue = oracles.OUE(1.0, 4), oracles.RUE(1.0, 4)
    >>> round(float(mean_mse(oue.p, oue.q, 4)), 4), round(float(mean_mse(rue.p, rue.q, 4)), 4)
    (3.9327, 3.8615)
    """
    p, q = np.asarray(p, dtype=np.float64), np.asarray(q, dtype=np.float64)
    return q * (1 - q) / (p - q) ** 2 + (1 - p - q) / (d * (p - q))


def _h(epsilon: float, d: int) -> float:
    """RUE's h = sqrt((d − 1 + e^−ε)/(d − 1 + e^ε)) (module notes), as e^−ε/2·sqrt(((d − 1)e^ε + 1)
    /((d − 1)e^−ε + 1)) so that ε = 50 neither overflows nor cancels."""
    e = math.exp(-epsilon)
    return math.exp(-epsilon / 2) * math.sqrt(((d - 1) + e) / ((d - 1) * e + 1.0))


class RUE(_UnaryEncoding):
    r"""Re-optimised Unary Encoding (Fang et al. 2025; module notes): a unary encoding with
    p = 1/(1 + h), :math:`q = 1/(1 + h e^ε)`, :math:`h = \sqrt{(d − 1 + e^{−ε})/(d − 1 + e^ε)}`; :math:`p(1 − q)/((1 − p)q) = e^ε`
    exactly. Reports, fast path and enumeration are OUE's (:mod:`.unary`).

    Parameters
    ----------
    epsilon : float
        Privacy budget ε, finite and > 0.
    d : int
        Domain size, >= 2.

    Raises
    ------
    ValueError
        If ``epsilon`` or ``d`` is out of range.

    Examples
    --------
    >>> from ldpopt import oracles
    >>> o = oracles.RUE(epsilon=1.0, d=8)
    >>> round(o.p, 4), round(o.q, 4)
    (0.5346, 0.297)
    """

    name = "rue"

    @property
    def _hh(self) -> float:
        return _h(self.epsilon, self.d)

    @property
    def p(self) -> float:
        return 1.0 / (1.0 + self._hh)

    @property
    def _one_minus_p(self) -> float:
        return self._hh / (1.0 + self._hh)

    @property
    def q(self) -> float:
        # 1/(1 + h e^ε) = e^−ε/(e^−ε + h)
        e = math.exp(-self.epsilon)
        return e / (e + self._hh)

    @property
    def _one_minus_q(self) -> float:
        e = math.exp(-self.epsilon)
        return self._hh / (e + self._hh)


def rlh_g(epsilon: float, d: int) -> int:
    """RLH's hash range: of ⌊g₀⌋ and ⌈g₀⌉ (g₀ = h e^ε + 1) the one with the smaller mean MSE (1), the
    floor on a tie; at least 2, at most 2^30 (module notes).

    Parameters
    ----------
    epsilon : float
        Privacy budget ε > 0.
    d : int
        Domain size >= 2.

    Returns
    -------
    int

    Examples
    --------
    >>> from ldpopt.oracles.reoptimized import rlh_g
    >>> rlh_g(1.0, 8), rlh_g(4.0, 128), rlh_g(4.0, 4)
    (3, 47, 14)
    """
    if epsilon > math.log(G_MAX):
        return G_MAX
    g0 = _h(epsilon, d) * math.exp(epsilon) + 1.0
    lo, hi = max(2, math.floor(g0)), max(2, math.ceil(g0))

    def m(g: int) -> float:
        p = 1.0 / (1.0 + (g - 1) * math.exp(-epsilon))
        return float(mean_mse(p, 1.0 / g, d))

    return min(G_MAX, hi if m(hi) < m(lo) else lo)


class RLH(OLH):
    """Re-optimised Local Hashing (Fang et al. 2025; module notes): OLH (same keyed hash family,
    reports, aggregation and exact fast path) with the hash range g of :func:`rlh_g`, which minimises
    the mean MSE over the domain instead of its f → 0 part.

    Parameters
    ----------
    epsilon : float
        Privacy budget ε, finite and > 0.
    d : int
        Domain size, >= 2.

    Raises
    ------
    ValueError
        If ``epsilon`` or ``d`` is out of range.

    Examples
    --------
    >>> from ldpopt import oracles
    >>> o = oracles.RLH(epsilon=4.0, d=128)
    >>> o.g, oracles.OLH(epsilon=4.0, d=128).g
    (47, 56)
    """

    name = "rlh"
    structural = ("g",)

    def __init__(self, epsilon: float, d: int, g: int | None = None):
        super().__init__(epsilon, d, g=g)
        if g is None:
            self.g = rlh_g(self.epsilon, self.d)
