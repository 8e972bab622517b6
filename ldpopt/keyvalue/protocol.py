"""What every key–value protocol shares: the per-key pair estimate and the paper-style result.

Notes: docs/notes/keyvalue.md, "ldpopt.keyvalue.protocol"."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .._validation import as_generator

__all__ = ["KVEstimate", "KVProtocol", "PairEstimate"]


@dataclass(frozen=True)
class KVEstimate:
    """Key frequencies and per-key means with what produced them.

    Parameters
    ----------
    freq : ndarray (d,)
        Estimated :math:`f_k`.
    mean : ndarray (d,)
        Estimated :math:`m_k`.
    method : str
        The estimator's name.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt.keyvalue import KVEstimate
    >>> KVEstimate(np.array([0.5, 0.2]), np.array([0.1, -0.3]), "PCKV-UE").method
    'PCKV-UE'
    """

    freq: np.ndarray
    mean: np.ndarray
    method: str


@dataclass(frozen=True)
class PairEstimate:
    """Unbiased shares of the hidden cells, per key, and their plug-in variances.

    ``plus[k]``, ``minus[k]``: Ĥ⁺_k/P_k, Ĥ⁻_k/P_k (the share of the population whose sampled pair is k
    with value +1, −1); ``var_plus``, ``var_minus``: their variances with the report probabilities
    replaced by the observed shares (floored at the null probability β₀, so never 0); ``rest``,
    ``var_rest``: the remaining share (PCKV: the dummy keys' share; PrivKV: 1 − plus − minus per key)
    and its variance. ``ell``: the scale from shares to frequencies (f_k = ell·(plus + minus)).
    """

    plus: np.ndarray
    minus: np.ndarray
    var_plus: np.ndarray
    var_minus: np.ndarray
    rest: np.ndarray
    var_rest: np.ndarray
    ell: int


class KVProtocol:
    """Base of the key–value protocols: the affine system of the module notes.

    Subclasses set ``alpha``, ``beta``, ``null`` (β₀), ``d``, ``epsilon`` and implement ``perturb``,
    ``aggregate``, ``sample_counts``, ``report_distribution``, ``estimate`` and ``_population``.
    """

    alpha: float
    beta: float
    null: float
    d: int
    epsilon: float
    name = "kv"

    def collect(self, data, rng=None) -> np.ndarray:
        """Every user of ``data`` (a :class:`~ldpopt.keyvalue.KVData`) through the protocol's
        ``perturb``, then its ``aggregate``: the real client path, one report per user (the fast path,
        exact in law and with no loop over users, is ``sample_counts``).

        Parameters
        ----------
        data : KVData
        rng : seed, Generator or None

        Returns
        -------
        ndarray
            The protocol's aggregate ((2, K) for PCKV, (3, d) for PrivKV).

        Examples
        --------
        >>> from ldpopt import keyvalue as kv
        >>> data = kv.power_law(100, 5, rng=0)
        >>> int(kv.pckv_grr(1.0, 5).collect(data, rng=1).sum())
        100
        """
        rng = as_generator(rng)
        return self.aggregate([self.perturb(*data.user(u), rng) for u in range(data.n)])

    def perturb(self, *args: Any, **kwargs: Any):  # pragma: no cover - each protocol's client
        raise NotImplementedError

    def aggregate(self, *args: Any, **kwargs: Any) -> np.ndarray:  # pragma: no cover - each protocol's server
        raise NotImplementedError

    def _population(self, counts, n):  # pragma: no cover - abstract
        raise NotImplementedError

    def _solve(self, n1, n2, P):
        """(Ĥ⁺, Ĥ⁻) from the counts by the 2×2 inverse of the module notes."""
        det = self.alpha ** 2 - self.beta ** 2
        r1, r2 = n1 - P * self.null, n2 - P * self.null
        return (self.alpha * r1 - self.beta * r2) / det, (self.alpha * r2 - self.beta * r1) / det

    def _var(self, n1, n2, P):
        """Var(Ĥ⁺), Var(Ĥ⁻) with Var n_i = P π_i(1 − π_i), Cov(n1, n2) = −P π1 π2 (π_i = n_i/P floored
        at β₀): each report supports at most one of ⟨k, ±1⟩."""
        Ps = np.maximum(P, 1.0)
        p1 = np.clip(n1 / Ps, self.null, 1.0)
        p2 = np.clip(n2 / Ps, self.null, 1.0)
        v1, v2, c12 = Ps * p1 * (1 - p1), Ps * p2 * (1 - p2), -Ps * p1 * p2
        det2 = (self.alpha ** 2 - self.beta ** 2) ** 2
        a, b = self.alpha, self.beta
        return ((a * a * v1 + b * b * v2 - 2 * a * b * c12) / det2,
                (a * a * v2 + b * b * v1 - 2 * a * b * c12) / det2)

    def pairs(self, counts, n: int) -> PairEstimate:
        """The unbiased cell shares of the module notes (the consistent problem's data).

        Parameters
        ----------
        counts : ndarray
            The protocol's aggregate (``aggregate`` / ``sample_counts``).
        n : int
            The number of users.

        Returns
        -------
        PairEstimate
        """
        raise NotImplementedError  # pragma: no cover - each protocol knows its population
