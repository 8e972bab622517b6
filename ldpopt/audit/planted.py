"""Planted leaks with a known true ε, the auditor's power checks (and the extension guide's example).

Notes: docs/notes/reliability.md, "ldpopt.audit"."""

from __future__ import annotations

import math

import numpy as np

from .._validation import as_generator, check_values
from ..oracles.base import FrequencyOracle
from ..oracles.hashing import OLH
from ..oracles.longitudinal import LGRR, LOLOHA, memo_uniforms

__all__ = ["KeyedCoinOLH", "PublicKeyedMemo", "ReportsABit", "SeedAsKeyLOLOHA"]


class SeedAsKeyLOLOHA(LOLOHA):
    """LOLOHA as it was: the reported hash key *is* the secret that seeds the memo, so a reader of the
    reports recomputes every memo. True ε over τ rounds: τ·ε₂ (the rounds' IRR on a known memo).

    Examples
    --------
    >>> from ldpopt.audit.planted import SeedAsKeyLOLOHA
    >>> o = SeedAsKeyLOLOHA(2.0, 16, eps_1=1.0, g=4)
    >>> round(o.true_epsilon(1), 3) > o.epsilon_rounds(1)
    True
    """

    def _memo(self, secret: np.ndarray, v: np.ndarray, public: np.ndarray):
        return LOLOHA._memo(self, secret, v, secret)

    def true_epsilon(self, tau: int) -> float:
        """τ·ε₂: the memo is public, only the rounds' instantaneous responses protect the value.

        Parameters
        ----------
        tau : int
            Rounds.

        Returns
        -------
        float
        """
        return tau * self._irr_epsilon()


class PublicKeyedMemo(LGRR):
    """L-GRR whose memo is keyed by a reported cohort in [0, cohorts) instead of a secret: every user of
    a cohort with value v holds the same memo, so the memo protects nothing. Reports (cohort, r).
    True ε over τ rounds: τ·ε₂ when some cohort's memos of the pair differ (see :meth:`true_epsilon`).

    Examples
    --------
    >>> from ldpopt.audit.planted import PublicKeyedMemo
    >>> o = PublicKeyedMemo(1.0, 4, eps_1=0.8, cohorts=4)
    >>> o.perturb([0, 1, 2], rng=0).shape
    (3, 2)
    """

    def __init__(self, epsilon: float, d: int, eps_1: float | None = None, cohorts: int = 4):
        super().__init__(epsilon, d, eps_1=eps_1)
        self.cohorts = int(cohorts)

    def _memo(self, secret, v, public):
        cohort = (public % np.uint64(self.cohorts)).astype(np.int64)
        return cohort, LGRR._memo(self, cohort.astype(np.uint64), v, public)

    def _irr(self, memo, gen):
        cohort, m = memo
        return np.stack((cohort, LGRR._irr(self, m, gen)), axis=1)

    def support_matrix(self, reports) -> np.ndarray:
        return LGRR.support_matrix(self, np.asarray(reports)[:, 1])

    def true_epsilon(self, tau: int, pair=(0, 1)) -> float:
        """τ·ε₂ if a cohort's memos of ``pair`` differ, else 0 (the memos are computed here).

        Parameters
        ----------
        tau : int
            Rounds.
        pair : tuple of int
            The neighbouring values.

        Returns
        -------
        float
        """
        c = np.arange(self.cohorts, dtype=np.int64)
        m1 = LGRR._memo(self, c.astype(np.uint64), np.full(c.size, pair[0]), c.astype(np.uint64))
        m0 = LGRR._memo(self, c.astype(np.uint64), np.full(c.size, pair[1]), c.astype(np.uint64))
        return tau * self._irr_epsilon() if np.any(m1 != m0) else 0.0


class ReportsABit:
    """A client that sends its oracle's report and, beside it, the lowest bit of the user's value
    through randomised response at ``eps_bit``: true ε on the pair (0, 1) is the oracle's ε + eps_bit
    for an oracle whose ε is attained on that pair (GRR, the unary and hash oracles).

    Parameters
    ----------
    oracle : FrequencyOracle
        The honest part.
    eps_bit : float
        ε of the leaked bit, > 0.

    Examples
    --------
    >>> from ldpopt import oracles
    >>> from ldpopt.audit.planted import ReportsABit
    >>> leaky = ReportsABit(oracles.get("grr", 1.0, 4), 1.0)
    >>> y, bit = leaky([0, 1, 2], rng=0)
    >>> leaky.true_epsilon, bit.shape
    (2.0, (3,))
    """

    def __init__(self, oracle: FrequencyOracle, eps_bit: float):
        if not (isinstance(eps_bit, (int, float)) and eps_bit > 0 and math.isfinite(eps_bit)):
            raise ValueError(f"eps_bit must be a finite number > 0, got {eps_bit!r}")
        self.oracle, self.eps_bit = oracle, float(eps_bit)
        self.true_epsilon = oracle.epsilon + self.eps_bit
        self.__name__ = f"{oracle.name}+bit"

    def __call__(self, values, rng):
        v = check_values(values, self.oracle.d)
        gen = as_generator(rng)
        y = self.oracle.perturb(v, gen)
        flip = gen.random(v.shape[0]) < 1.0 / (1.0 + math.exp(self.eps_bit))
        return y, (v & 1) ^ flip


class KeyedCoinOLH(OLH):
    """OLH whose randomised-response coins are drawn from its reported key (a one-round leak of the
    class "a public field seeds the private randomness"): the report is a function of (key, v), so
    whoever knows the derivation reads v. True ε: unbounded. :meth:`replay` is that derivation, for
    :func:`~ldpopt.audit.audit_client`'s ``replay``.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt.audit.planted import KeyedCoinOLH
    >>> o = KeyedCoinOLH(1.0, 8)
    >>> r = o.perturb([3, 3], rng=0)
    >>> bool((o.replay(r[:, 0].view("uint64"), np.array([3, 3]), None) == r).all())
    True
    """

    def perturb(self, values, rng) -> np.ndarray:
        v = check_values(values, self.d)
        s: np.ndarray = as_generator(rng).integers(np.iinfo(np.int64).min, np.iinfo(np.int64).max,
                                                   size=int(v.shape[0]), dtype=np.int64, endpoint=True)
        return self.replay(s.view(np.uint64), v, None)

    def replay(self, secret: np.ndarray, v: np.ndarray, public) -> np.ndarray:
        """The report of a user whose key is ``secret`` and value ``v`` (deterministic).

        Parameters
        ----------
        secret : ndarray of uint64
            The keys.
        v : ndarray of int
            The values.
        public : object
            Unused (the replay hook's signature).

        Returns
        -------
        ndarray of int64, shape (m, 2)
        """
        s = np.asarray(secret, dtype=np.uint64).view(np.int64)
        h = self.hash(s, v)
        u = memo_uniforms(s.view(np.uint64), h, 2)
        other = np.floor(u[:, 1] * (self.g - 1)).astype(np.int64)
        other += other >= h
        return np.stack((s, np.where(u[:, 0] < self._keep, h, other)), axis=1)
