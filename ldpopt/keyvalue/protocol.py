"""What every key–value protocol shares: the per-key pair estimate and the paper-style result.

Notes: docs/notes/keyvalue.md, "ldpopt.keyvalue.protocol"."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .._validation import as_generator
from .data import KVData
from .exact import worst_pair

__all__ = ["KVEstimate", "KVProtocol", "PairEstimate"]

#: report cells (users × report width) per block of :meth:`KVProtocol.collect`
BLOCK_CELLS = 1 << 24


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


def _users(data, lo: int, hi: int):
    """Users lo..hi−1 of a KVData, as a KVData."""
    a, b = data.offsets[lo], data.offsets[hi]
    return KVData(data.offsets[lo:hi + 1] - a, data.keys[a:b], data.values[a:b], data.d)


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
        """Every user of ``data`` (a :class:`~ldpopt.keyvalue.KVData`) through the protocol's client
        (``perturb_users``: ``perturb``'s law for all users at once, in blocks of at most 2^24 report
        cells), then its ``aggregate``: one report per user (``sample_counts`` draws the counts'
        law directly, without the reports).

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
        if not isinstance(data, KVData) or data.d != self.d:
            raise ValueError(f"data must be a KVData over d={self.d} keys")
        rng = as_generator(rng)
        width = int(getattr(self, "K", 2))
        block = max(1, BLOCK_CELLS // width)
        parts = [data] if data.n <= block else [_users(data, lo, min(lo + block, data.n))
                                                  for lo in range(0, data.n, block)]  # memory blocks of users
        return np.sum([self.aggregate(self.perturb_users(part, rng)) for part in parts], axis=0)

    def perturb_users(self, data, rng=None) -> np.ndarray:  # pragma: no cover - each protocol's client
        raise NotImplementedError

    def log_prob(self, reports, keys, values) -> np.ndarray:  # pragma: no cover - each protocol's law
        raise NotImplementedError

    def audit_spec(self, pairs=None) -> dict:
        """What :func:`ldpopt.audit.audit_client` needs to audit this protocol's client as it runs.

        The client is :meth:`perturb_users` on users given as dense rows (a row per user, column k her
        value for key k, NaN where she does not hold it: :meth:`KVData.from_dense`); every field of the
        report rows is read. The stated ε is the protocol's composed ε over key and value (PCKV's ε, or
        its ``exact_epsilon`` when ℓ > d; PrivKV's ε/2 on the key bit plus ε/2 on the value). The model
        attack is the exact likelihood ratio ln P(y | S) − ln P(y | S′) (:meth:`log_prob`).

        Parameters
        ----------
        pairs : list of (row, row), optional
            Neighbouring users as dense rows of length d. Default: the worst pair of the exact
            enumeration (:func:`~ldpopt.keyvalue.exact.worst_pair`, d ≤ 6), then {0: +1} against
            {0: −1}, {1: +1} and the empty set.

        Returns
        -------
        dict
            ``client``, ``stated``, ``pairs``, ``model_score``, ``name``: keyword arguments of
            ``audit_client``.

        Examples
        --------
        >>> import numpy as np
        >>> from ldpopt import keyvalue as kv
        >>> spec = kv.privkv(1.0, 3).audit_spec()
        >>> spec["stated"], len(spec["pairs"]), spec["client"](np.array([[1.0, np.nan, np.nan]]), 0).shape
        (1.0, 4, (1, 2))
        """
        d = self.d

        def row(keys=(), values=()):
            r = np.full(d, np.nan)
            r[np.asarray(keys, dtype=np.int64)] = values
            return tuple(float(v) for v in r)

        if pairs is None:
            pairs = []
            if d <= 6:
                (k1, v1), (k2, v2) = worst_pair(self)
                pairs.append((row(k1, v1), row(k2, v2)))
            pairs += [(row([0], [1.0]), row([0], [-1.0])), (row([0], [1.0]), row([1], [1.0])),
                      (row([0], [1.0]), row())]
        pairs = [(tuple(a), tuple(b)) for a, b in pairs]
        if any(len(a) != d or len(b) != d for a, b in pairs):
            raise ValueError(f"pairs must hold dense rows of length d = {d}")

        def client(values, rng):
            return self.perturb_users(KVData.from_dense(values), rng)

        def held(x):
            a = np.asarray(x, dtype=np.float64)
            k = np.flatnonzero(~np.isnan(a))
            return k, a[k]

        def model_score(rounds, x, x2):
            return self.log_prob(rounds[0], *held(x)) - self.log_prob(rounds[0], *held(x2))

        stated = float(getattr(self, "exact_epsilon", self.epsilon))
        return {"client": client, "stated": stated, "pairs": pairs, "model_score": model_score, "name": self.name}

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
