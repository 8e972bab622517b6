r"""The ``Estimate`` value object: everything a post-processing method or a convex problem needs.

References
----------
Wang et al., *Consistent and Accurate Frequency Oracles under LDP* (arXiv), §2.1-§2.4
(NDSS 2020 §III): the unbiased estimator :math:`\tilde f_v = (c_v/n − q)/(p − q)`, its variance (Eq. 2/5) and
the approximate common variance :math:`σ^2` of Eq. 7.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import noise as _noise
from ._validation import check_epsilon, check_float_array, check_n, check_probabilities
from .privacy import DEFAULT_DELTA

__all__ = ["Estimate", "check_estimate", "simulate_central"]

#: the "format" field of a file :meth:`Estimate.save` writes
_FORMAT = "ldpopt.estimate/1"


def _readonly(a: np.ndarray) -> np.ndarray:
    a.setflags(write=False)
    return a


@dataclass(frozen=True, eq=False)
class Estimate:
    r"""Raw, unbiased frequency estimate from a pure frequency oracle (immutable).

    Build one with :meth:`from_counts` (aggregated support counts, what an aggregator holds),
    :meth:`from_frequencies` (an f̃ computed elsewhere) or :meth:`from_central` (a histogram released
    with central noise); oracles build them for you in
    ``oracle.simulate`` and ``oracle.estimate``. The constructor checks that ``f_tilde`` and
    ``counts`` describe the same estimate (:math:`c_v = n(q + (p - q) \tilde f_v)`, to 1e-9·n) and stores read-only
    copies.

    Parameters
    ----------
    f_tilde : array_like, shape (d,)
        Unbiased estimate f̃, d >= 2 finite entries.
    counts : array_like, shape (d,)
        Support counts :math:`c_v`, each in [0, n], consistent with ``f_tilde`` (any finite value for a
        source of noise added to exact counts, :meth:`from_central`, :meth:`from_source`: ``noise.support_counts`` False).
    n : int
        Number of users (reports), >= 1.
    epsilon : float
        Privacy budget ε, finite and > 0.
    p, q : float
        Support probabilities with ``0 <= q < p <= 1``.
    oracle : str, default "unknown"
        Registry name of the oracle (non-empty).
    meta : dict, optional
        Extra facts an oracle records (e.g. ``"extra_variance"``, see :attr:`sigma2`); copied.
        ``meta["ordered"] = True`` declares that the domain's index order is meaningful (ages, hours,
        ratings: :attr:`ordered`); it must be a bool.
    noise_source : NoiseSource, optional
        The source of the noisy counts (:attr:`noise`); None: found from ``oracle`` and ``meta`` when
        first asked.

    Raises
    ------
    ValueError
        If ``n``, ``epsilon``, ``p``/``q``, ``f_tilde`` or ``counts`` is out of range, the arrays differ
        in length or disagree, or ``oracle`` is empty (the message names the argument).
    TypeError
        If ``epsilon``, ``p`` or ``q`` is not a real number.

    Attributes
    ----------
    f_tilde : ndarray, shape (d,)
        The unbiased estimate :math:`\tilde f_v = (c_v/n - q)/(p - q)` (arXiv §2.2). May be negative and need not sum
        to one. Read-only.
    counts : ndarray, shape (d,)
        Support counts :math:`c_v`: the number of reports that support value v. When the estimate was built
        from frequencies they are derived as :math:`c_v = n(q + (p - q) \tilde f_v)` and need not be integers.
    n : int
        Number of users (reports).
    epsilon : float
        Privacy budget ε of the oracle.
    p, q : float
        Probability that a report supports the user's true value (p) and any other value (q);
        ``0 <= q < p <= 1``.
    oracle : str
        Registry name of the oracle that produced the reports (``"grr"``, ``"oue"``, ...).

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt import Estimate
    >>> est = Estimate.from_counts(np.array([46_000, 30_000, 15_000, 9_000]), 100_000, p=0.5, q=0.2, epsilon=1.0)
    >>> est.f_tilde.round(4)
    array([ 0.8667,  0.3333, -0.1667, -0.3667])
    >>> est.d, est.n, est.sigma2 > 0
    (4, 100000, True)
    """

    f_tilde: np.ndarray
    counts: np.ndarray
    n: int
    epsilon: float
    p: float
    q: float
    oracle: str = "unknown"
    meta: dict = field(default_factory=dict, repr=False)
    noise_source: Any = field(default=None, repr=False)

    def __post_init__(self) -> None:
        n = check_n(self.n, "n")
        epsilon = check_epsilon(self.epsilon, "epsilon")
        p, q = check_probabilities(self.p, self.q)
        f_tilde = check_float_array(self.f_tilde, "f_tilde", min_length=2)
        counts = check_float_array(self.counts, "counts", length=f_tilde.shape[0], min_length=2)
        if self.noise_source is not None and not isinstance(self.noise_source, _noise.NoiseSource):
            raise ValueError(f"noise_source must be a NoiseSource (ldpopt.noise), got {type(self.noise_source).__name__}")
        # Both arrays are stored; they must describe the same estimate (compared on the count scale,
        # where rounding is relative to n, whatever the size of 1/(p - q)).
        # (np.allclose with rtol = 0 on finite arrays, in 3 passes instead of isclose's ~10)
        if not float(np.max(np.abs(n * (q + (p - q) * f_tilde) - counts))) <= 1e-9 * n:
            raise ValueError("f_tilde and counts disagree: f_tilde must equal (counts/n - q)/(p - q)")
        if not isinstance(self.oracle, str) or not self.oracle:
            raise ValueError(f"oracle must be a non-empty string, got {self.oracle!r}")
        if not isinstance(self.meta.get("ordered", False), bool):
            raise ValueError(f"ordered must be True or False, got {self.meta['ordered']!r}")
        object.__setattr__(self, "n", n)
        object.__setattr__(self, "epsilon", epsilon)
        object.__setattr__(self, "p", p)
        object.__setattr__(self, "q", q)
        object.__setattr__(self, "f_tilde", _readonly(f_tilde))
        object.__setattr__(self, "counts", _readonly(counts))
        object.__setattr__(self, "meta", dict(self.meta))
        # support counts lie in [0, n]; noise added to exact counts may leave it (asked only then)
        low, high = bool(np.any(counts < 0)), bool(np.any(counts > n * (1 + 1e-12)))
        if (low or high) and self.noise.support_counts:
            bad = int(np.flatnonzero(counts < 0)[0]) if low else int(np.flatnonzero(counts > n * (1 + 1e-12))[0])
            raise ValueError(f"counts must be >= 0; entry {bad} is {counts[bad]!r}" if low
                             else f"counts must be <= n = {n}; entry {bad} is {counts[bad]!r}")

    @property
    def noise(self) -> _noise.NoiseSource:
        """The source of the noisy counts (:class:`ldpopt.noise.NoiseSource`): the oracle that produced
        them, the central mechanism, or a source of one's own (:meth:`from_source`). Every feature asks
        it (its variance, law, likelihood, privacy and what it supports), never the oracle's name.

        Examples
        --------
        >>> from ldpopt import Estimate, oracles
        >>> oracles.get("grr", 1.0, 4).estimate([46, 30, 15, 9], 100).noise
        GRR(epsilon=1, d=4)
        >>> Estimate.from_central([60, 41], "gaussian", 3.0, n=100).noise.additive
        True
        """
        if self.noise_source is None:
            from .privacy import central  # noqa: F401  (the central records' resolver)

            object.__setattr__(self, "noise_source", _noise.source_of(self))
        return self.noise_source

    # -- constructors -------------------------------------------------------------------------
    @classmethod
    def from_counts(cls, counts, n, epsilon, p, q, oracle: str = "unknown", **meta) -> Estimate:
        r"""Build an estimate from support counts c (arXiv §2.2: :math:`\tilde f_v = (c_v/n - q)/(p - q)`).

        Parameters
        ----------
        counts : array_like, shape (d,)
            Support counts :math:`c_v` in [0, n] (need not be integers), d >= 2.
        n : int
            Number of users (reports), >= 1.
        epsilon : float
            Privacy budget ε, > 0.
        p, q : float
            Support probabilities of the oracle, ``0 <= q < p <= 1``.
        oracle : str, default "unknown"
            Registry name of the oracle.
        **meta
            Stored in :attr:`meta`.

        Returns
        -------
        Estimate

        Raises
        ------
        ValueError
            If ``n``, ``p``/``q`` or ``epsilon`` is out of range, or a count is negative, above
            ``n`` or not finite.

        Examples
        --------
        >>> from ldpopt import Estimate
        >>> est = Estimate.from_counts([60, 25, 15], 100, epsilon=1.0, p=0.6, q=0.2, oracle="grr")
        >>> est.f_tilde.round(3)
        array([ 1.   ,  0.125, -0.125])
        """
        n = check_n(n, "n")
        p, q = check_probabilities(p, q)
        c = check_float_array(counts, "counts", min_length=2)
        return cls(f_tilde=(c / n - q) / (p - q), counts=c, n=n, epsilon=epsilon, p=p, q=q,
                   oracle=oracle, meta=meta)

    @classmethod
    def from_frequencies(cls, f_tilde, n, epsilon, p, q, oracle: str = "unknown", **meta) -> Estimate:
        r"""Build an estimate from an unbiased f̃; counts are derived as :math:`c_v = n(q + (p - q) \tilde f_v)`.

        Parameters
        ----------
        f_tilde : array_like, shape (d,)
            Unbiased estimate (may be negative, need not sum to one), d >= 2.
        n : int
            Number of users (reports), >= 1.
        epsilon : float
            Privacy budget ε, > 0.
        p, q : float
            Support probabilities of the oracle, ``0 <= q < p <= 1``.
        oracle : str, default "unknown"
            Registry name of the oracle.
        **meta
            Stored in :attr:`meta`.

        Returns
        -------
        Estimate
            Counts clipped to [0, n] after the check below (rounding only).

        Raises
        ------
        ValueError
            If an argument is out of range, or the implied counts :math:`n(q + (p - q) \tilde f_v)` leave [0, n]
            (an f̃ this oracle cannot produce).

        Examples
        --------
        >>> from ldpopt import Estimate
        >>> est = Estimate.from_frequencies([0.7, 0.4, -0.1], 1000, epsilon=1.0, p=0.6, q=0.2)
        >>> est.counts.round(1)
        array([480., 360., 160.])
        """
        n = check_n(n, "n")
        p, q = check_probabilities(p, q)
        f = check_float_array(f_tilde, "f_tilde", min_length=2)
        counts = n * (q + (p - q) * f)
        source = meta.pop("noise_source", None)
        if np.any(counts < -1e-9 * n) or np.any(counts > n * (1 + 1e-9)):
            try:   # noise added to exact counts may leave [0, n] (its source says): kept unclipped
                return cls(f_tilde=f, counts=counts, n=n, epsilon=epsilon, p=p, q=q, oracle=oracle, meta=meta,
                           noise_source=source)
            except ValueError as exc:
                if not str(exc).startswith("counts must be"):
                    raise
            raise ValueError("f_tilde is impossible for this oracle: implied support counts "
                             "n(q + (p - q) f_tilde) must lie in [0, n]")
        return cls(f_tilde=f, counts=np.clip(counts, 0.0, float(n)), n=n, epsilon=epsilon, p=p, q=q,
                   oracle=oracle, meta=meta, noise_source=source)

    @classmethod
    def from_central(cls, noisy_counts, mechanism: str, scale, n=None, relation: str = "add-remove",
                     delta=None, contributions: int = 1, **meta) -> Estimate:
        r"""Build an estimate from a histogram whose exact counts received central noise (Laplace,
        discrete Laplace, Gaussian or discrete Gaussian, :mod:`ldpopt.privacy.central`).

        The channel is the identity (p = 1, q = 0), so f̃ = noisy_counts / n is unbiased and Eq. 7's
        oracle term is 0: the only randomness, for a fixed dataset, is the noise, and
        ``meta["extra_variance"]`` = :math:`\mathrm{Var}(\text{noise}) / n^2` makes :attr:`sigma2`, :attr:`sigma2_v` and
        :meth:`variance` exact for every cell. The counts may be negative or exceed n (the range
        checks are relaxed for central estimates only). ``meta["privacy"]`` records the statement
        (model "central", relation, mechanism, scale, ε, δ, n_known).

        Parameters
        ----------
        noisy_counts : array_like, shape (d,)
            The noisy counts :math:`\tilde c_v = c_v + Z_v`, d >= 2, finite; integers for the discrete mechanisms
            (integer counts plus integer noise).
        mechanism : str
            ``"laplace"``, ``"discrete-laplace"``, ``"gaussian"`` or ``"discrete-gaussian"``.
        scale : float
            The noise scale in counts: b for the Laplace ones, σ for the Gaussian ones; > 0.
        n : int, optional
            The number of users when it is known (public, or released exactly). None: estimated as
            :math:`\mathrm{round}(\max(Σ \tilde c_v, 1))`, an unbiased total whose variance d·Var(noise) is not in the
            per-cell variance (``meta["privacy"]["n_known"]`` = False says so).
        relation : str, default "add-remove"
            The neighbouring relation ε is stated under (:data:`ldpopt.privacy.central.RELATIONS`).
        delta : float, optional
            The δ the ε field is stated at. None: 0 for the pure mechanisms (ε = Δ₁/b), 1e-6 for the
            Gaussian ones (their ε at δ = 0 is infinite).
        contributions : int, default 1
            Cells one user's record is counted in, each moved by 1: 1 for a histogram of one value per
            user; a hierarchy's number of noisy levels when the counts are its nodes (each user is in
            one node per level). ε is the whole release's under that sensitivity
            (:func:`ldpopt.privacy.central.sensitivity`: :math:`c Δ_1, \sqrt{c} Δ_2`), not one level's.
        **meta
            Stored in :attr:`meta` (besides ``extra_variance`` and ``privacy``, which are written here).

        Returns
        -------
        Estimate
            With ``oracle = "central:<mechanism>"``, p = 1, q = 0 and ε = the mechanism's ε at δ.

        Raises
        ------
        ValueError
            An argument out of range (the message names it), a non-integer count for a discrete
            mechanism, ``extra_variance`` or ``privacy`` in ``meta``, or a scale so large that ε = 0.
        TypeError
            ``scale``, ``delta`` or ``n`` not a number.

        References
        ----------
        Dwork, McSherry, Nissim & Smith (TCC 2006), the Laplace mechanism; Balle & Wang (ICML 2018),
        Theorem 8, the Gaussian's exact (ε, δ); Canonne, Kamath & Steinke (NeurIPS 2020), the discrete
        Gaussian and discrete Laplace. The identity channel p = 1, q = 0 in Wang et al.'s Eq. 2 gives
        the oracle's variance term 0 (arXiv §2.2). The estimate of n is a choice made here (the
        deployments publish the total or not; the papers are silent).

        Examples
        --------
        >>> from ldpopt import Estimate
        >>> est = Estimate.from_central([503, -2, 251, 249], "discrete-laplace", 2.0, n=1000)
        >>> est.f_tilde, round(est.sigma2 * 1000**2, 4), est.epsilon
        (array([ 0.503, -0.002,  0.251,  0.249]), 7.8354, 0.5)
        >>> est.meta["privacy"]["n_known"], est.oracle
        (True, 'central:discrete-laplace')
        """
        from .privacy.central import CentralNoise

        source = CentralNoise(mechanism, scale, relation=relation, delta=delta, contributions=contributions,
                              n_known=n is not None)
        for key in ("extra_variance", "privacy"):
            if key in meta:
                raise ValueError(f"{key} is written by from_central; do not pass it in meta")
        return cls.from_source(noisy_counts, source, n=n, **meta)

    @classmethod
    def from_source(cls, noisy_counts, source, n=None, **meta) -> Estimate:
        """Build an estimate of noisy counts from any noise source (:class:`ldpopt.noise.NoiseSource`):
        a central mechanism's, an oracle's, or a source of one's own (docs/extending.md). The source
        says what the estimate holds (its ``estimate_fields``: ε, p, q, the name, meta) and is carried
        as :attr:`noise`.

        Parameters
        ----------
        noisy_counts : array_like, shape (d,)
            The noisy counts, d >= 2, finite.
        source : NoiseSource
            Where they came from.
        n : int, optional
            Users, when known (a source of noise on exact counts estimates it otherwise).
        **meta
            Stored in :attr:`meta` besides the source's own.

        Returns
        -------
        Estimate

        Raises
        ------
        ValueError
            ``source`` not a NoiseSource, ``n`` or a count out of range, or what the source refuses.

        Examples
        --------
        >>> from ldpopt import Estimate
        >>> from ldpopt.privacy.central import CentralNoise
        >>> est = Estimate.from_source([60, -3, 42], CentralNoise("discrete-gaussian", 2.0), n=100)
        >>> est.oracle, est.f_tilde
        ('central:discrete-gaussian', array([ 0.6 , -0.03,  0.42]))
        """
        if not isinstance(source, _noise.NoiseSource):
            raise ValueError(f"source must be a NoiseSource (ldpopt.noise), got {type(source).__name__}")
        c = check_float_array(noisy_counts, "noisy_counts", min_length=2)
        if n is not None:
            n = check_n(n, "n")
        fields = source.estimate_fields(c, n)
        n, p, q = fields["n"], fields["p"], fields["q"]
        return cls(f_tilde=(c / n - q) / (p - q), counts=c, n=n,
                   epsilon=fields["epsilon"], p=p, q=q, oracle=fields["oracle"], meta={**meta, **fields["meta"]},
                   noise_source=source)

    # -- derived quantities ------------------------------------------------------------------
    @property
    def d(self) -> int:
        """Domain size d (length of :attr:`f_tilde`).

        Examples
        --------
        >>> from ldpopt import Estimate
        >>> Estimate.from_frequencies([0.5, 0.3, 0.2], 100, epsilon=1.0, p=0.6, q=0.2).d
        3
        """
        return int(self.f_tilde.shape[0])

    @property
    def ordered(self) -> bool:
        """Whether the domain is declared ordered (``meta["ordered"]``, default False): value v and
        v + 1 are neighbours (ages, hours, incomes, ratings), so a method may assume that the
        frequencies vary smoothly along the index (the Wiener methods, :mod:`ldpopt.methods.wiener`).
        Declare it when building the estimate (``ordered=True``) or with :meth:`as_ordered`.

        Examples
        --------
        >>> from ldpopt import Estimate
        >>> est = Estimate.from_frequencies([0.5, 0.3, 0.2], 100, epsilon=1.0, p=0.6, q=0.2)
        >>> est.ordered, est.as_ordered().ordered
        (False, True)
        >>> Estimate.from_frequencies([0.5, 0.3, 0.2], 100, epsilon=1.0, p=0.6, q=0.2, ordered=True).ordered
        True
        """
        return bool(self.meta.get("ordered", False))

    def as_ordered(self, ordered: bool = True) -> Estimate:
        """A copy with the domain declared ordered (or not): :attr:`ordered`.

        Parameters
        ----------
        ordered : bool, default True
            The declaration.

        Returns
        -------
        Estimate
            The same numbers, with ``meta["ordered"] = ordered``.

        Raises
        ------
        ValueError
            If ``ordered`` is not a bool.

        Examples
        --------
        >>> from ldpopt import Estimate
        >>> est = Estimate.from_frequencies([0.5, 0.3, 0.2], 100, epsilon=1.0, p=0.6, q=0.2).as_ordered()
        >>> est.ordered, est.as_ordered(False).ordered
        (True, False)
        """
        if not isinstance(ordered, bool):
            raise ValueError(f"ordered must be True or False, got {ordered!r}")
        return Estimate(self.f_tilde, self.counts, self.n, self.epsilon, self.p, self.q, self.oracle,
                        {**self.meta, "ordered": ordered}, self.noise_source)

    @property
    def sigma2(self) -> float:
        """Approximate common variance :math:`σ^2 = q(1 - q) / (n (p - q)^2)` (arXiv Eq. 7), plus
        ``meta["extra_variance"]`` where the oracle has a term Eq. 7 lacks (the collisions of a
        fixed sketch hash family: :func:`ldpopt.sketches.sketch_estimate`; 0 otherwise). A source of a
        general channel (:class:`ldpopt.noise.ReportMoments`: a designed strategy, MSS) has no Eq. 7; its
        :math:`σ^2` is the mean of its exact per-value variances at the uniform distribution (what Eq. 7
        approximates for a pure oracle at large d).

        Examples
        --------
        >>> from ldpopt import Estimate
        >>> est = Estimate.from_frequencies([0.5, 0.3, 0.2], 100, epsilon=1.0, p=0.6, q=0.2)
        >>> round(est.sigma2, 6)  # 0.2 * 0.8 / (100 * 0.4**2)
        0.01
        """
        general = self._general_covariance()
        if general is not None:
            return float(np.mean(general.variance(1.0 / self.d))) + self._extra_variance
        return self.q * (1.0 - self.q) / (self.n * (self.p - self.q) ** 2) + self._extra_variance

    def _general_covariance(self):
        # the attached source's count covariance where it is a general channel's (moments), else None
        if self.noise_source is None:
            return None
        cov = self.noise_source.count_covariance(self.n, self.d)
        return cov if cov.moments is not None else None

    @property
    def _extra_variance(self) -> float:
        return float(self.meta.get("extra_variance", 0.0))

    @property
    def sigma(self) -> float:
        r""":math:`\sqrt{σ^2}` of Eq. 7: the standard deviation used by Base-Cut, Norm-Hyb and Power.

        Examples
        --------
        >>> from ldpopt import Estimate
        >>> est = Estimate.from_frequencies([0.5, 0.3, 0.2], 100, epsilon=1.0, p=0.6, q=0.2)
        >>> round(est.sigma, 6)
        0.1
        """
        return float(np.sqrt(self.sigma2))

    def variance(self, f) -> np.ndarray:
        r"""Value-dependent variance of :math:`\tilde f_v` at true frequencies ``f`` (arXiv Eq. 2 / Eq. 5):

        :math:`σ_v^2 = (q(1 - q) + f_v (p - q)(1 - p - q)) / (n (p - q)^2)`.

        Exact for every pure oracle in ldpopt: :math:`c_v` is a sum of independent Bernoulli(p or q)
        indicators over users. Plus ``meta["extra_variance"]`` (see :attr:`sigma2`). A source of a
        general channel (a designed strategy, whose p and q only scale its soft supports) states its
        exact variance instead (:class:`ldpopt.noise.ReportMoments`), and that is returned, with ``f``
        broadcast to (d,).

        Parameters
        ----------
        f : float or array_like
            True frequencies: a scalar or an array broadcastable to (d,).

        Returns
        -------
        ndarray
            σ_v² with the broadcast shape of ``f``.

        Examples
        --------
        >>> from ldpopt import Estimate
        >>> est = Estimate.from_frequencies([0.5, 0.3, 0.2], 100, epsilon=1.0, p=0.6, q=0.2)
        >>> est.variance([0.0, 0.5, 1.0]).round(4)
        array([0.01  , 0.0125, 0.015 ])
        """
        f = np.asarray(f, dtype=np.float64)
        general = self._general_covariance()
        if general is not None:
            return general.variance(f) + self._extra_variance
        p, q = self.p, self.q
        return (q * (1 - q) + f * (p - q) * (1 - p - q)) / (self.n * (p - q) ** 2) + self._extra_variance

    @property
    def sigma2_v(self) -> np.ndarray:
        """Plug-in σ_v² of Eq. 2 at f = clip(f̃, 0, 1): the paper's formula needs the unknown true f;
        the plug-in is the usual choice (the papers are silent) and is what the weighted problems use
        when no f is supplied.

        Examples
        --------
        >>> from ldpopt import Estimate
        >>> est = Estimate.from_frequencies([1.2, 0.3, -0.5], 100, epsilon=1.0, p=0.6, q=0.2)
        >>> est.sigma2_v.round(4)  # at f = (1, 0.3, 0)
        array([0.015 , 0.0115, 0.01  ])
        """
        return self.variance(np.clip(self.f_tilde, 0.0, 1.0))

    def with_f_tilde(self, f_tilde) -> Estimate:
        """A copy with a different f̃ (and the counts it implies), e.g. for sub-domains in tests.

        ``n``, ``epsilon``, ``p``, ``q``, ``oracle`` and ``meta`` are kept.

        Parameters
        ----------
        f_tilde : array_like, shape (d',)
            The new unbiased estimate (any length >= 2).

        Returns
        -------
        Estimate

        Raises
        ------
        ValueError
            As :meth:`from_frequencies` (an f̃ outside what the oracle can produce).

        Examples
        --------
        >>> from ldpopt import Estimate
        >>> est = Estimate.from_frequencies([0.5, 0.3, 0.2], 100, epsilon=1.0, p=0.6, q=0.2)
        >>> est.with_f_tilde([0.9, 0.1]).d
        2
        """
        return Estimate.from_frequencies(f_tilde, self.n, self.epsilon, self.p, self.q, self.oracle,
                                         noise_source=self.noise_source, **self.meta)

    # -- privacy ------------------------------------------------------------------------------
    @property
    def privacy(self):
        """What privacy the numbers were produced under (:class:`ldpopt.privacy.statement.PrivacyStatement`):
        ``meta["privacy"]`` where recorded (by :meth:`with_privacy`, :meth:`shuffled`, a central
        constructor), else derived from ε (local, ε per report, one round; a memoised longitudinal
        oracle's ``eps_1``: :math:`ε_1` per report, :math:`ε_∞` over every round of one value). Printed by ``repr``,
        written by :meth:`save` and beside every file the CLI writes.

        Examples
        --------
        >>> from ldpopt import Estimate
        >>> print(Estimate.from_frequencies([0.5, 0.3, 0.2], 100, epsilon=1.0, p=0.6, q=0.2).privacy)
        local ε = 1 per report (replace), 1 round
        """
        from .privacy.statement import statement_of

        return statement_of(self.meta, self.epsilon)

    def with_privacy(self, privacy) -> Estimate:
        """A copy whose ``meta["privacy"]`` records ``privacy`` (checked by
        :meth:`~ldpopt.privacy.statement.PrivacyStatement.from_dict`).

        Parameters
        ----------
        privacy : dict or PrivacyStatement
            E.g. :func:`ldpopt.privacy.statement.local` ``(ε, rounds=τ)`` for τ fresh reports per user.

        Returns
        -------
        Estimate

        Raises
        ------
        ValueError
            A record the statement cannot read (the message names the field).

        Examples
        --------
        >>> from ldpopt import Estimate
        >>> from ldpopt.privacy.statement import local
        >>> est = Estimate.from_frequencies([0.5, 0.3, 0.2], 100, epsilon=0.2, p=0.6, q=0.2)
        >>> print(est.with_privacy(local(0.2, rounds=50)).privacy)  # doctest: +ELLIPSIS
        local ε = 0.2 per report (replace), 50 rounds: ε = 6.884, δ = 1e-06 over all rounds [exact ...]
        """
        from .privacy.statement import PrivacyStatement

        record = privacy.as_dict() if isinstance(privacy, PrivacyStatement) else PrivacyStatement.from_dict(privacy).as_dict()
        return Estimate(self.f_tilde, self.counts, self.n, self.epsilon, self.p, self.q, self.oracle,
                        {**self.meta, "privacy": record}, self.noise_source)

    def shuffled(self, delta=DEFAULT_DELTA, method: str = "numerical", n=None) -> Estimate:
        """A copy stating the central (ε, δ) its reports have when shuffled among ``n`` users
        (:func:`ldpopt.privacy.shuffle.shuffled`, from this estimate's ε as ε₀).

        Parameters
        ----------
        delta : float, default 1e-6
            Central δ, in (0, 1).
        method : {"numerical", "closed-form"}, default "numerical"
            The accountant (Feldman, McMillan & Talwar 2021's numerical bound or Theorem 3.1).
        n : int, optional
            Users shuffled together, >= this estimate's n (default: its n).

        Returns
        -------
        Estimate
            The same numbers, with ``meta["privacy"]`` the shuffled statement.

        Raises
        ------
        ValueError
            As :func:`ldpopt.privacy.shuffle.shuffled`, or ``n`` below this estimate's n (its reports
            are shuffled among at least the users who sent them).

        Examples
        --------
        >>> from ldpopt import oracles
        >>> est = oracles.get("grr", 1.0, 4).estimate([4600, 3000, 1500, 900], 10_000).shuffled(1e-6)
        >>> round(est.privacy.epsilon, 4), est.privacy.record["accountant"]
        (0.053, 'fmt-numerical')
        """
        from .privacy.shuffle import shuffled

        if n is not None and not isinstance(n, bool) and isinstance(n, (int, np.integer)) and n < self.n:
            raise ValueError(f"n must be >= the estimate's n = {self.n} (its reports are shuffled among at least "
                             f"the users who sent them), got {n}")
        bound = shuffled(self.epsilon, self.n if n is None else n, delta, method)
        return self.with_privacy(bound.as_privacy())

    # -- files --------------------------------------------------------------------------------
    def save(self, path) -> None:
        """Write the estimate to ``path`` as JSON, with what it came from: the oracle's name, ε, n, d, p,
        q, its meta (the oracle's parameters among it: OLH's g, SS's k, ...), its privacy statement
        (:attr:`privacy`'s dict, under ``"privacy"``), f̃ and the counts.

        Floats are written as Python's shortest round-trip text, so :meth:`load` gives back the same
        numbers bit for bit. The file is written whole or not at all (a temporary renamed over it).
        A meta value JSON cannot hold (an array) is written as a list.

        Parameters
        ----------
        path : str or os.PathLike
            The file to write (its folder must exist).

        Examples
        --------
        >>> import pathlib, tempfile
        >>> from ldpopt import Estimate, oracles
        >>> est = oracles.get("olh", 1.0, 4, g=8).estimate([420, 310, 180, 90], 1000)
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "est.json"
        >>> est.save(path)
        >>> again = Estimate.load(path)
        >>> again.meta["g"], bool((again.f_tilde == est.f_tilde).all())
        (8, True)
        """
        import json

        from ._atomic import write_text

        def plain(x):
            if isinstance(x, np.ndarray):
                return x.tolist()
            if isinstance(x, np.generic):
                return x.item()
            if isinstance(x, (tuple, set)):
                return list(x)
            return str(x)

        doc = {"format": _FORMAT, "oracle": self.oracle, "epsilon": self.epsilon, "n": self.n, "d": self.d,
               "p": self.p, "q": self.q, "oracle_params": dict(self.meta), "f_tilde": self.f_tilde.tolist(),
               "counts": self.counts.tolist(), "privacy": self.privacy.as_dict()}
        write_text(path, json.dumps(doc, default=plain) + "\n")

    @classmethod
    def load(cls, path, **expected) -> Estimate:
        """Read an estimate :meth:`save` wrote, checking what the caller expects of it.

        Parameters
        ----------
        path : str or os.PathLike
            A file :meth:`save` wrote.
        **expected
            What the estimate must have been collected with: ``oracle``, ``epsilon``, ``n``, ``d`` or
            any oracle parameter its meta records (``g=8``). A value that contradicts the record is a
            ValueError naming both; a name the file does not record is a ValueError listing those it
            does (a misspelt name is not a check passed). Numbers compare equal to 1e-12 relative, the
            oracle by name without regard to case.

        Returns
        -------
        Estimate

        Raises
        ------
        ValueError
            The file is not a saved estimate, or contradicts ``expected``.

        Examples
        --------
        >>> import pathlib, tempfile
        >>> from ldpopt import Estimate, oracles
        >>> path = pathlib.Path(tempfile.mkdtemp()) / "est.json"
        >>> oracles.get("olh", 1.0, 4, g=8).estimate([420, 310, 180, 90], 1000).save(path)
        >>> Estimate.load(path, oracle="olh", g=4)  # doctest: +ELLIPSIS
        Traceback (most recent call last):
        ...
        ValueError: g = 4 given contradicts g = 8 recorded in .../est.json
        """
        import json
        from pathlib import Path

        from ._provenance import same_value, show

        path = Path(path)
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise ValueError(f"Estimate.load: cannot read {path}: {exc}") from None
        if not isinstance(doc, dict) or doc.get("format") != _FORMAT:
            raise ValueError(f"Estimate.load: {path} is not an estimate saved by Estimate.save "
                             f"(no \"format\": {_FORMAT!r})")
        meta = doc.get("oracle_params") or {}
        recorded = {"oracle": doc.get("oracle"), "epsilon": doc.get("epsilon"), "n": doc.get("n"),
                    "d": doc.get("d"), **meta}
        for key, value in expected.items():
            if key not in recorded:
                raise ValueError(f"Estimate.load: {path} records no {key!r}; it records {sorted(recorded)}")
            have = recorded[key]
            same = (str(value).lower() == str(have).lower()) if key == "oracle" else same_value(value, have)
            if not same:
                raise ValueError(f"{key} = {show(value)} given contradicts {key} = {show(have)} recorded in {path}")
        try:
            return cls(np.asarray(doc["f_tilde"], dtype=np.float64), np.asarray(doc["counts"], dtype=np.float64),
                       doc["n"], doc["epsilon"], doc["p"], doc["q"], doc["oracle"], dict(meta))
        except KeyError as exc:
            raise ValueError(f"Estimate.load: {path} lacks the field {exc.args[0]!r}") from None

    def __repr__(self) -> str:
        return (f"Estimate(oracle={self.oracle!r}, d={self.d}, n={self.n}, epsilon={self.epsilon:g}, "
                f"p={self.p:.6g}, q={self.q:.6g}, sum(f_tilde)={float(self.f_tilde.sum()):.6g}, "
                f"privacy='{self.privacy}')")


def check_estimate(estimate, name: str = "estimate") -> Estimate:
    """Return ``estimate`` after checking it is an :class:`Estimate` (which validated itself).

    Parameters
    ----------
    estimate : object
        The value to check.
    name : str, default "estimate"
        Argument name used in the error message.

    Returns
    -------
    Estimate
        ``estimate`` itself.

    Raises
    ------
    TypeError
        If ``estimate`` is not an :class:`Estimate`.

    Examples
    --------
    >>> from ldpopt.estimate import check_estimate
    >>> check_estimate([0.5, 0.5], "est")
    Traceback (most recent call last):
    ...
    TypeError: est must be an ldpopt.Estimate, got list
    """
    if not isinstance(estimate, Estimate):
        raise TypeError(f"{name} must be an ldpopt.Estimate, got {type(estimate).__name__}")
    return estimate


def central_noise(estimate):
    """Deprecated: ask ``estimate.noise`` (its ``mechanism`` and ``scale``) instead.

    Parameters
    ----------
    estimate : Estimate
        Any estimate.

    Returns
    -------
    tuple of (ldpopt.privacy.central.Mechanism, float) or None
        The mechanism and scale of a central-noise estimate's source; None for any other source.
    """
    from ._deprecated import warn_moved

    warn_moved("ldpopt.estimate.central_noise", "Estimate.noise", 2)
    src = check_estimate(estimate).noise
    mech = getattr(src, "mechanism", None)
    return None if mech is None else (mech, float(src.scale))


def simulate_central(true_counts, mechanism: str, scale, rng=None, n_known: bool = True,
                     relation: str = "add-remove", delta=None) -> Estimate:
    """Add the mechanism's noise to exact counts and wrap the result with :meth:`Estimate.from_central`
    (what a deployment releases, simulated: the tests' and benchmarks' source of central estimates).

    Parameters
    ----------
    true_counts : array_like, shape (d,)
        Exact non-negative integer counts, d >= 2, at least one > 0.
    mechanism : str
        A name of :data:`ldpopt.privacy.central.MECHANISMS`.
    scale : float
        b or σ in counts, > 0.
    rng : int, Generator or "secure", optional
        The random source.
    n_known : bool, default True
        Pass n = ``sum(true_counts)`` (True) or let :meth:`Estimate.from_central` estimate it (False).
    relation, delta
        As in :meth:`Estimate.from_central`.

    Returns
    -------
    Estimate

    Raises
    ------
    ValueError
        ``true_counts`` not non-negative integers or all zero, or an argument
        :meth:`Estimate.from_central` refuses.

    References
    ----------
    The samplers of :mod:`ldpopt.privacy.central` (Canonne, Kamath & Steinke, NeurIPS 2020,
    Algorithm 3 for the discrete Gaussian).

    Examples
    --------
    >>> from ldpopt.estimate import simulate_central
    >>> est = simulate_central([500, 300, 200], "discrete-gaussian", 4.0, rng=0)
    >>> est.n, est.oracle, bool((est.counts == est.counts.round()).all())
    (1000, 'central:discrete-gaussian', True)
    """
    from ._validation import as_generator, check_counts
    from .privacy.central import CentralNoise

    c = check_counts(true_counts, "true_counts")
    if c.shape[0] < 2 or not c.sum() > 0:
        raise ValueError("true_counts must have d >= 2 entries and a positive total")
    if not isinstance(n_known, bool):
        raise TypeError(f"n_known must be True or False, got {n_known!r}")
    source = CentralNoise(mechanism, scale, relation=relation, delta=delta, n_known=n_known)
    noisy = source.sample_counts(c, as_generator(rng))
    return Estimate.from_source(noisy, source, n=int(c.sum()) if n_known else None)
