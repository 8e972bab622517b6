"""The interface every frequency oracle implements.

A *pure* frequency oracle (Wang et al. arXiv §2.4) has each user report a set Y ⊆ D (encoded one way
or another) that contains the user's value with probability p and any other value with probability
q < p. The aggregator's support count c_v is the number of reports whose set contains v, and
f̃_v = (c_v/n − q)/(p − q) is unbiased with the variance of Eq. 2.

Two ways to get support counts from a true histogram:

* the real protocol, ``perturb`` (client side, vectorised over users) then ``aggregate`` (server
  side); ``simulate(..., exact=True)`` runs it in chunks of users so memory stays bounded;
* ``sample_counts``: draws the support counts directly from their distribution without touching
  individual users. For all seven oracles this is exact in *joint* law, not only per value: the
  covariances of the counts, hence the variance of any set sum Σ_{v∈S} f̃_v, are the real
  protocol's (each oracle's docstring says how; tests/test_oracles_joint_law.py checks every
  oracle against the enumerated law of :mod:`.jointlaw` and against the real path).
"""

from __future__ import annotations

import abc
from typing import Any, ClassVar

import numpy as np

from .._validation import as_generator, check_counts, check_domain_size, check_epsilon, check_n, check_values
from ..estimate import Estimate

__all__ = ["FrequencyOracle"]

# Budget for one chunk of the real path: users per chunk × d (bits or hash evaluations) ≈ this.
_CHUNK_CELLS = 1 << 24


class FrequencyOracle(abc.ABC):
    """Base class: an ε-LDP frequency oracle on the domain {0, …, d−1}.

    Subclasses set ``name`` and implement ``p``, ``q``, ``perturb``, ``aggregate``,
    ``support_matrix``, ``sample_counts`` and ``output_distribution``.
    """

    name: ClassVar[str]
    #: whether ``sample_counts`` draws exactly from the joint distribution of the real protocol's
    #: counts (True for every oracle in ldpopt; kept for third-party subclasses)
    sample_counts_exact: ClassVar[bool] = True

    def __init__(self, epsilon: float, d: int):
        self.epsilon = check_epsilon(epsilon, "epsilon")
        self.d = check_domain_size(d, "d")

    # -- probabilities and variance ------------------------------------------------------------
    @property
    @abc.abstractmethod
    def p(self) -> float:
        """Pr[a report supports the user's own value]."""

    @property
    @abc.abstractmethod
    def q(self) -> float:
        """Pr[a report supports a given other value]."""

    def variance(self, f, n: int) -> np.ndarray:
        """Var[f̃_v] at true frequency f_v (arXiv Eq. 2/5): (q(1−q) + f_v(p−q)(1−p−q)) / (n(p−q)²)."""
        n = check_n(n, "n")
        f = np.asarray(f, dtype=np.float64)
        p, q = self.p, self.q
        return (q * (1 - q) + f * (p - q) * (1 - p - q)) / (n * (p - q) ** 2)

    def approx_variance(self, n: int) -> float:
        """σ² = q(1−q) / (n(p−q)²), arXiv Eq. 7 (the f_v term of Eq. 2 dropped)."""
        n = check_n(n, "n")
        return self.q * (1 - self.q) / (n * (self.p - self.q) ** 2)

    # -- estimation --------------------------------------------------------------------------
    def estimate(self, counts, n: int, **meta) -> Estimate:
        """Turn aggregated support counts into an :class:`~ldpopt.Estimate` (f̃ = (c/n − q)/(p − q))."""
        n = check_n(n, "n")
        c = check_counts(counts, "counts", d=self.d, integral=False)
        if np.any(c > n):
            bad = int(np.flatnonzero(c > n)[0])
            raise ValueError(f"counts must be <= n = {n}; entry {bad} is {c[bad]!r}")
        return Estimate.from_counts(c, n, self.epsilon, self.p, self.q, oracle=self.name,
                                    **{**self.params(), **meta})

    def params(self) -> dict[str, Any]:
        """Oracle parameters beyond ε and d (e.g. ``g`` for OLH); stored in ``Estimate.meta``."""
        return {}

    # -- the real protocol ---------------------------------------------------------------------
    @abc.abstractmethod
    def perturb(self, values, rng) -> Any:
        """Client side: randomise each user's value (vectorised over users); returns the reports."""

    @abc.abstractmethod
    def aggregate(self, reports, device=None) -> np.ndarray:
        """Server side: support counts c (int64, length d) from the reports ``perturb`` returned.

        ``device``: who counts — ``"numpy"`` (the reference aggregators), ``"cpu"`` (fused kernels on
        every core), ``"cuda"`` (a GPU) or None/``"auto"`` (the CPU kernels for large inputs when
        Numba is installed); the counts are the same bit for bit on every device
        (:mod:`ldpopt.kernels`)."""

    @abc.abstractmethod
    def support_matrix(self, reports) -> np.ndarray:
        """Per-report support: a bool (m, d) array whose entry (i, v) says whether report i supports
        value v (v ∈ Y_i, arXiv §2.4). ``support_matrix(r).sum(axis=0) == aggregate(r)`` always;
        O(m·d) memory, meant for audits and tests (the aggregators never build it)."""

    # -- the fast path -------------------------------------------------------------------------
    @abc.abstractmethod
    def sample_counts(self, true_counts, rng) -> np.ndarray:
        """Draw support counts (int64, length d) for users with histogram ``true_counts``."""

    # -- exact output distribution (for privacy checks on small domains) -----------------------
    @abc.abstractmethod
    def output_distribution(self) -> np.ndarray:
        """Exact Pr[Ψ(v) = y] as a (d, |Y|) array, by enumeration of the output space Y.

        Only meant for small d (and small g); raises ``ValueError`` when the output space is too
        large to enumerate.
        """

    def output_supports(self) -> np.ndarray:
        """The support set of every output y, as a bool (d, |Y|) array S(y)_v, columns in the order of
        :meth:`output_distribution` (the pair gives the counts' exact moments,
        :func:`ldpopt.oracles.jointlaw.count_moments`). Optional: an oracle that does not enumerate its
        outputs raises ``ValueError``."""
        raise ValueError(f"oracle {self.name!r} has no output enumeration (it defines no output_supports)")

    # -- simulation ----------------------------------------------------------------------------
    def chunk_size(self) -> int:
        """Users per chunk on the real path, so a chunk's reports stay ~16 M cells."""
        return max(1, _CHUNK_CELLS // self.d)

    def _check_true_counts(self, true_counts) -> np.ndarray:
        tc = check_counts(true_counts, "true_counts", d=self.d, integral=True)
        if tc.sum() < 1:
            raise ValueError("true_counts must describe at least one user (n = sum(true_counts) >= 1)")
        return tc

    def simulate(self, true_counts, rng, exact: bool = False) -> Estimate:
        """Simulate the oracle on a population with histogram ``true_counts``.

        ``exact=False`` uses :meth:`sample_counts` (no per-user work, same joint law as the real
        path); ``exact=True`` runs the real client randomiser and aggregator, in chunks of users so
        memory stays bounded. The users are laid out value by value (their order does not change
        the counts' distribution).
        """
        tc = self._check_true_counts(true_counts)
        gen = as_generator(rng)
        n = int(tc.sum())
        if not exact:
            counts = self.sample_counts(tc, gen)
        else:
            counts = np.zeros(self.d, dtype=np.int64)  # float once an aggregator returns fractions (RAPPOR)
            step = self.chunk_size()
            ends = np.cumsum(tc)
            for start in range(0, n, step):
                stop = min(n, start + step)
                # values of users start..stop-1, without materialising all n of them
                idx = np.arange(start, stop)
                values = np.searchsorted(ends, idx, side="right")
                counts = counts + self.aggregate(self.perturb(values, gen))
        return self.estimate(counts, n)

    def simulate_values(self, values, rng) -> Estimate:
        """Run the real protocol on explicit user values (one per user)."""
        vals = check_values(values, self.d, "values")
        return self.simulate(np.bincount(vals, minlength=self.d), rng, exact=True)

    def __repr__(self) -> str:
        extra = "".join(f", {k}={v!r}" for k, v in self.params().items())
        return f"{type(self).__name__}(epsilon={self.epsilon:g}, d={self.d}{extra})"
