"""The noise protocol: what every source of noisy counts answers (a frequency oracle, a central
mechanism, a user's own), and how an estimate finds its source (:func:`source_of`).

Notes: docs/extending.md, "A noise source of your own"; ``ldpopt.testing.check_mechanism`` checks one.
"""

from __future__ import annotations

import abc
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

__all__ = ["AdditiveNoise", "ChannelMoments", "CountCovariance", "NoiseSource", "ReportMoments", "SupportCounts",
           "register_resolver", "source_of"]


class ReportMoments(abc.ABC):
    r"""The second moments of one report's unbiased contribution :math:`x \in \mathbb{R}^d` (the estimate
    is :math:`\tilde f = \frac{1}{n}\sum_i x_i` and :math:`E[x \mid v] = e_v`): what states the exact
    covariance of a channel of no pair form (a designed strategy, Modular Subset Selection). With
    :math:`M(f) = \sum_v f_v E[x x^T \mid v]`, :math:`\mathrm{Cov}(\tilde f) = (M(f) - \mathrm{diag}(f))/n`.

    Parameters
    ----------
    (none)
        A subclass's constructor takes what its channel needs.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt.noise import ChannelMoments
    >>> m = ChannelMoments(np.eye(2), np.eye(2))   # the identity channel: x = e_v
    >>> m.second_moment([0.3, 0.7]).tolist()
    [[0.3, 0.0], [0.0, 0.7]]
    """

    #: the domain size
    d: int

    @abc.abstractmethod
    def second_moment(self, f) -> np.ndarray:
        r""":math:`M(f) = \sum_v f_v E[x x^T \mid v]`, (d, d).

        Parameters
        ----------
        f : array_like (d,)
            Frequencies.

        Returns
        -------
        ndarray (d, d)

        Examples
        --------
        >>> import numpy as np
        >>> from ldpopt.noise import ChannelMoments
        >>> ChannelMoments(np.eye(2), 2 * np.eye(2)).second_moment([0.5, 0.5]).tolist()
        [[2.0, 0.0], [0.0, 2.0]]
        """

    @abc.abstractmethod
    def query_moments(self, W=None) -> np.ndarray:
        r""":math:`\Gamma[k, v] = E[(w_k^T x)^2 \mid v]` for the rows :math:`w_k` of ``W`` (None: the identity's).

        Parameters
        ----------
        W : array_like (k, d) or None

        Returns
        -------
        ndarray (k, d)

        Examples
        --------
        >>> import numpy as np
        >>> from ldpopt.noise import ChannelMoments
        >>> ChannelMoments(np.eye(2), 2 * np.eye(2)).query_moments([[1.0, 1.0]]).tolist()
        [[4.0, 4.0]]
        """


class ChannelMoments(ReportMoments):
    r"""The moments of a channel that enumerates its outputs: :math:`P[v, y] = \Pr[y \mid v]` and each
    output's contribution :math:`X[:, y]`: :math:`M(f) = X \mathrm{diag}(P^T f) X^T` and
    :math:`\Gamma = (W X)^{\circ 2} P^T`.

    Parameters
    ----------
    P : array_like (d, m)
        The output distribution, one row per value.
    X : array_like (d, m)
        Each output's unbiased contribution (a designed strategy's reconstruction V).

    Raises
    ------
    ValueError
        If the shapes differ or are not 2-D.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt.noise import ChannelMoments
    >>> ChannelMoments(np.eye(3), np.eye(3)).query_moments().tolist()[0]
    [1.0, 0.0, 0.0]
    """

    def __init__(self, P, X):
        self.P = np.asarray(P, dtype=np.float64)
        self.X = np.asarray(X, dtype=np.float64)
        if self.P.ndim != 2 or self.P.shape != self.X.shape:
            raise ValueError(f"P and X must be (d, m) of one shape, got {self.P.shape} and {self.X.shape}")
        self.d = int(self.P.shape[0])

    def second_moment(self, f) -> np.ndarray:
        pi = np.asarray(f, dtype=np.float64) @ self.P
        return (self.X * pi[None, :]) @ self.X.T

    def query_moments(self, W=None) -> np.ndarray:
        WX = self.X if W is None else np.asarray(W, dtype=np.float64) @ self.X
        return (WX * WX) @ self.P.T


@dataclass(frozen=True)
class CountCovariance:
    r"""The exact covariance of an unbiased estimate f̃ of n users' frequencies on d values:

    .. math::

        \mathrm{Var}(\tilde f_v) = κ(A + B f_v) + e, \qquad
        \mathrm{Cov}(\tilde f_u, \tilde f_v) = κ(a + b(f_u + f_v)) \quad (u ≠ v),

    f the true frequencies, :math:`e = V/n^2` the variance of noise of V counts² added independently to every
    count. ``pair`` is (a, b), or None where the off-diagonal covariance is not of that form (then only
    the per-value variance is known). ``how`` says where it comes from, in words. A channel of neither
    form (a designed strategy) states its ``moments`` instead (:class:`ReportMoments`):
    :math:`\mathrm{Cov}(\tilde f) = (M(f) - \mathrm{diag}(f))/n + e I`, exact, and κ, A, B are NaN (no
    consumer may read them then: :meth:`variance` and :meth:`matrix` answer).

    Parameters
    ----------
    kappa, A, B : float
        The value-dependent part (a frequency oracle's Eq. 2: κ = 1/(n(p − q)²), A = q(1 − q),
        B = (p − q)(1 − p − q)).
    pair : tuple of float or None
        (a, b) of the off-diagonal terms, or None.
    noise_var : float
        V, the variance in counts² of noise added independently to every count (a central mechanism's
        Var(Z); 0 for an oracle).
    n : int
        Users.
    how : str
        One phrase for the interval's description.
    moments : ReportMoments, optional
        The general form (above); None for the (κ, A, B, pair) form.

    Examples
    --------
    >>> from ldpopt.noise import CountCovariance
    >>> c = CountCovariance(kappa=0.01, A=0.16, B=0.08, pair=None, noise_var=0.0, n=100, how="Eq. 2")
    >>> round(float(c.variance(0.5)), 6)
    0.002
    """

    kappa: float
    A: float
    B: float
    pair: tuple[float, float] | None
    noise_var: float
    n: int
    how: str
    moments: ReportMoments | None = None

    @classmethod
    def of_moments(cls, moments: ReportMoments, n: int, d: int, how: str) -> CountCovariance:
        """The covariance of a general channel, stated by its reports' ``moments`` alone (no pair form:
        κ, A, B are NaN; no added noise), for ``n`` users on the channel's ``d`` values.

        Parameters
        ----------
        moments : ReportMoments
            The channel's report moments.
        n : int
            Users, >= 1.
        d : int
            The domain size asked for; must be the channel's.
        how : str
            What the covariance is, for messages.

        Returns
        -------
        CountCovariance

        Raises
        ------
        ValueError
            If n is not an integer >= 1 or d is not the channel's domain size.

        Examples
        --------
        >>> import numpy as np
        >>> from ldpopt.noise import ChannelMoments, CountCovariance
        >>> c = CountCovariance.of_moments(ChannelMoments(np.eye(2), np.eye(2)), 10, 2, "exact")
        >>> c.variance([0.5, 0.5]).tolist(), c.pair
        ([0.0, 0.0], None)
        """
        from ._validation import check_n

        n = check_n(n, "n")
        if int(d) != moments.d:
            raise ValueError(f"d must be the oracle's domain size {moments.d}, got {d!r}")
        return cls(kappa=math.nan, A=math.nan, B=math.nan, pair=None, noise_var=0.0, n=n, how=how, moments=moments)

    @property
    def e(self) -> float:
        """:math:`V/n^2`: the added noise's variance on the frequency scale.

        Examples
        --------
        >>> from ldpopt.noise import CountCovariance
        >>> CountCovariance(0.0, 0.0, 0.0, (0.0, 0.0), 9.0, 100, "noise").e
        0.0009
        """
        return self.noise_var / float(self.n) ** 2

    def variance(self, f) -> np.ndarray:
        r""":math:`\mathrm{Var}(\tilde f_v)` at true frequencies ``f`` (a scalar or an array).

        Parameters
        ----------
        f : float or array_like
            True frequencies.

        Returns
        -------
        ndarray

        Examples
        --------
        >>> from ldpopt.noise import CountCovariance
        >>> CountCovariance(0.0, 0.0, 0.0, (0.0, 0.0), 25.0, 10, "noise").variance([0.1, 0.9]).tolist()
        [0.25, 0.25]
        """
        if self.moments is not None:  # the diagonal of M(f) − diag(f), f broadcast to (d,)
            fv = np.broadcast_to(np.asarray(f, dtype=np.float64), (self.moments.d,))
            return (self.moments.query_moments() @ fv - fv) / self.n + self.e
        return self.kappa * (self.A + self.B * np.asarray(f, dtype=np.float64)) + self.e

    def matrix(self, f) -> np.ndarray:
        r"""The whole covariance (d, d) of f̃ at true frequencies ``f``: the general form's
        :math:`(M(f) - \mathrm{diag}(f))/n + e I`; the pair form's
        :math:`\kappa(\mathrm{diag}(g) + a 11^T + b(f1^T + 1f^T))` with :math:`g = A - a + (B - 2b)f`, plus
        :math:`e I`; without pair terms the diagonal alone (the off-diagonal left at 0).

        Parameters
        ----------
        f : array_like (d,)
            True frequencies.

        Returns
        -------
        ndarray (d, d)

        Examples
        --------
        >>> from ldpopt.noise import CountCovariance
        >>> CountCovariance(1.0, 0.1, 0.0, (0.05, 0.0), 0.0, 1, "pair").matrix([0.5, 0.5]).tolist()
        [[0.1, 0.05], [0.05, 0.1]]
        """
        fv = np.asarray(f, dtype=np.float64)
        d = fv.shape[0]
        if self.moments is not None:
            return (self.moments.second_moment(fv) - np.diag(fv)) / self.n + self.e * np.eye(d)
        if self.pair is None:
            return np.diag(self.variance(fv))
        a, b = self.pair
        one = np.ones(d)
        return (np.diag(self.variance(fv) - self.kappa * (a + 2 * b * fv)) + self.kappa * a * np.outer(one, one)
                + self.kappa * b * (np.outer(fv, one) + np.outer(one, fv)))


class NoiseSource(abc.ABC):
    """A source of noisy counts: one protocol for the frequency oracles, the central mechanisms and a
    user's own noise. Every feature (methods' ``applies``, the objectives, intervals, ``choose``,
    ``plan``, the CLI) asks these members, never which kind of source it is.

    Its members: ``name`` (what an estimate records, ``Estimate.oracle``); ``support_counts``,
    ``additive``, ``likelihood``, ``variance_decay``, ``total_known`` (what it supports: class
    attributes, below); ``sample_counts_batch(true_counts, size, rng)`` and
    ``sample_counts(true_counts, rng)`` (the law of the counts as a sampler); ``count_covariance(n, d)``
    (the exact per-count variance and covariance of the unbiased estimate, :class:`CountCovariance`);
    ``log_likelihood(counts, true_counts)`` (log P(counts | exact counts) where it has a closed form);
    ``privacy_statement()`` (the ``meta["privacy"]`` dict, :mod:`ldpopt.privacy.statement`); and
    ``estimate_fields(counts, n)`` (what an :class:`~ldpopt.Estimate` of its counts holds,
    ``Estimate.from_source``).

    Parameters
    ----------
    (none)
        The protocol; a source's own constructor takes what it needs.

    Examples
    --------
    >>> from ldpopt import Estimate
    >>> est = Estimate.from_central([503, -2, 251, 249], "discrete-laplace", 2.0, n=1000)
    >>> src = est.noise
    >>> src.support_counts, src.additive, src.likelihood, src.variance_decay
    (False, True, 'laplace', 2)
    """

    #: the name an estimate of it records (a class's, or an instance's own: ``self.name = ...``)
    name: ClassVar[str]
    #: the counts are support counts of n reports through a channel of support probabilities (p, q)
    #: (a frequency oracle's: Eq. 2's variance, Eq. 13's weights, the multinomial/binomial likelihoods)
    support_counts: ClassVar[bool] = True
    #: one law of noise added independently to every exact count (a central mechanism's): every cell
    #: has the same variance, so a variance-weighted fit is unweighted
    additive: ClassVar[bool] = False
    #: the exact likelihood's family: "multinomial" or "binomial" (support counts, EM's), "laplace"
    #: (−log P linear in |noise|: least absolute deviations) or "gaussian" (quadratic: least squares),
    #: or None (no closed form known)
    likelihood: ClassVar[str | None] = None
    #: :math:`\mathrm{Var}(\tilde f) ∝ n^{-k}` at fixed f: 1 for reports (their noise grows with n), 2 for noise of a fixed scale
    #: on counts
    variance_decay: ClassVar[int] = 1
    #: whether n is a known total (the deployments' rounding keeps :math:`\sum c = n` only then)
    total_known: bool = True

    @abc.abstractmethod
    def sample_counts_batch(self, true_counts, size: int, rng: np.random.Generator) -> np.ndarray:
        """(size, d) noisy counts, each row an independent draw given the exact histogram.

        Parameters
        ----------
        true_counts : array_like of int, shape (d,)
            The exact histogram.
        size : int
            Number of independent draws.
        rng : numpy.random.Generator

        Returns
        -------
        ndarray, shape (size, d)

        Examples
        --------
        >>> import numpy as np
        >>> from ldpopt.privacy.central import CentralNoise
        >>> CentralNoise("discrete-laplace", 2.0).sample_counts_batch([10, 20], 3, np.random.default_rng(0)).shape
        (3, 2)
        """

    def sample_counts(self, true_counts, rng) -> np.ndarray:
        """One draw of noisy counts given the exact histogram (a row of :meth:`sample_counts_batch`).

        Parameters
        ----------
        true_counts : array_like of int, shape (d,)
        rng : numpy.random.Generator

        Returns
        -------
        ndarray, shape (d,)

        Examples
        --------
        >>> import numpy as np
        >>> from ldpopt import oracles
        >>> oracles.get("grr", 1.0, 3).sample_counts([50, 30, 20], np.random.default_rng(0)).sum()
        np.int64(100)
        """
        return self.sample_counts_batch(true_counts, 1, rng)[0]

    @abc.abstractmethod
    def count_covariance(self, n: int, d: int) -> CountCovariance:
        """The exact covariance of the unbiased estimate f̃ for n users on d values.

        Parameters
        ----------
        n : int
            Users.
        d : int
            Domain size.

        Returns
        -------
        CountCovariance

        Examples
        --------
        >>> from ldpopt.privacy.central import CentralNoise
        >>> CentralNoise("laplace", 2.0).count_covariance(100, 4).e   # 2b²/n²
        0.0008
        """

    def log_likelihood(self, counts, true_counts) -> float:
        """log P(counts | true_counts). The base class knows none.

        Parameters
        ----------
        counts : array_like, shape (d,)
            Observed noisy counts.
        true_counts : array_like, shape (d,)
            Exact counts (integers).

        Returns
        -------
        float

        Raises
        ------
        ValueError
            The source has no likelihood in closed form.

        Examples
        --------
        >>> from ldpopt.privacy.central import CentralNoise
        >>> round(CentralNoise("discrete-laplace", 2.0).log_likelihood([11, 20], [10, 20]), 4)
        -3.3137
        """
        raise ValueError(f"noise source {self.name!r} states no likelihood in closed form")

    @abc.abstractmethod
    def privacy_statement(self) -> dict:
        """The ``meta["privacy"]`` dict of the guarantee (:class:`ldpopt.privacy.statement.PrivacyStatement`).

        Returns
        -------
        dict

        Examples
        --------
        >>> from ldpopt.privacy.central import CentralNoise
        >>> CentralNoise("discrete-laplace", 2.0).privacy_statement()["epsilon"]
        0.5
        """

    @abc.abstractmethod
    def estimate_fields(self, counts, n) -> dict[str, Any]:
        """What an estimate of ``counts`` from this source holds: ``n``, ``epsilon``, ``p``, ``q``,
        ``oracle`` and ``meta`` (``Estimate.from_source`` builds it; ``n`` None where the source can
        estimate it).

        Parameters
        ----------
        counts : ndarray, shape (d,)
            The noisy counts (checked finite).
        n : int or None
            Users, where known.

        Returns
        -------
        dict

        Examples
        --------
        >>> from ldpopt import oracles
        >>> float(oracles.get("grr", 1.0, 4).estimate_fields(None, 100)["p"]) > 0.25
        True
        """


class AdditiveNoise(NoiseSource):
    r"""Noise of one law added independently to every exact count (a central mechanism, or one of your
    own): a subclass states the noise's ``noise_variance``, ``noise_logpdf``, ``noise_sample``, its
    ``likelihood`` family and its ``privacy_statement``; everything else follows here.

    The estimate is f̃ = c̃/n (p = 1, q = 0), unbiased, with independent cells of variance :math:`\mathrm{Var}(Z)/n^2`.

    Parameters
    ----------
    (none)
        A subclass's constructor takes what its noise needs (a scale, an ε).

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt.privacy.central import CentralNoise
    >>> src = CentralNoise("gaussian", 3.0)
    >>> src.count_covariance(100, 4).e, src.sample_counts_batch([10, 20], 2, np.random.default_rng(0)).shape
    (0.0009, (2, 2))
    """

    support_counts: ClassVar[bool] = False
    additive: ClassVar[bool] = True
    variance_decay: ClassVar[int] = 2
    #: whether the noise is integer-valued (its law is a pmf; noisy counts must be integers)
    discrete: ClassVar[bool] = False

    @abc.abstractmethod
    def noise_variance(self) -> float:
        """Var(Z) of one draw, in counts².

        Returns
        -------
        float

        Examples
        --------
        >>> from ldpopt.privacy.central import CentralNoise
        >>> CentralNoise("gaussian", 3.0).noise_variance()
        9.0
        """

    @abc.abstractmethod
    def noise_logpdf(self, k) -> np.ndarray:
        """log density (or log pmf, discrete) of the noise at ``k``.

        Parameters
        ----------
        k : array_like

        Returns
        -------
        ndarray

        Examples
        --------
        >>> import numpy as np
        >>> from ldpopt.privacy.central import CentralNoise
        >>> round(float(np.exp(CentralNoise("discrete-gaussian", 2.0).noise_logpdf(np.arange(-30, 31))).sum()), 12)
        1.0
        """

    @abc.abstractmethod
    def noise_sample(self, size: int, rng: np.random.Generator) -> np.ndarray:
        """``size`` independent noise draws (float64).

        Parameters
        ----------
        size : int
        rng : numpy.random.Generator

        Returns
        -------
        ndarray, shape (size,)

        Examples
        --------
        >>> import numpy as np
        >>> from ldpopt.privacy.central import CentralNoise
        >>> CentralNoise("laplace", 1.0).noise_sample(4, np.random.default_rng(0)).shape
        (4,)
        """

    def sum_tail(self, t: float, d: int) -> float:
        r"""An upper bound on :math:`P(|Z_1 + … + Z_d| ≥ t)` for d independent noise draws (what the command line
        checks a stated n against); the base class states none.

        Parameters
        ----------
        t : float
        d : int

        Returns
        -------
        float

        Raises
        ------
        ValueError
            The source states no tail bound.

        Examples
        --------
        >>> from ldpopt.privacy.central import CentralNoise
        >>> CentralNoise("laplace", 1.0).sum_tail(0.0, 4)
        1.0
        """
        raise ValueError(f"noise source {self.name!r} states no tail bound for a sum of its draws")

    def sample_counts_batch(self, true_counts, size: int, rng: np.random.Generator) -> np.ndarray:
        c = np.asarray(true_counts, dtype=np.float64)
        noise = self.noise_sample(int(size) * c.shape[0], rng)
        return c[None, :] + noise.reshape(int(size), c.shape[0])

    def count_covariance(self, n: int, d: int) -> CountCovariance:
        return CountCovariance(kappa=1.0 / float(n), A=0.0, B=0.0, pair=(0.0, 0.0), noise_var=self.noise_variance(),
                               n=n, how="the noise's exact variance, independent cells")

    def log_likelihood(self, counts, true_counts) -> float:
        k = np.asarray(counts, dtype=np.float64) - np.asarray(true_counts, dtype=np.float64)
        return math.fsum(self.noise_logpdf(k))

    def estimate_fields(self, counts, n) -> dict[str, Any]:
        if self.discrete and not np.array_equal(counts, np.round(counts)):
            bad = int(np.flatnonzero(counts != np.round(counts))[0])
            raise ValueError(f"noisy_counts must be integers for the {self.name!r} noise; entry {bad} is {counts[bad]!r}")
        privacy = {**self.privacy_statement(), "n_known": n is not None}
        eps = float(privacy["epsilon"])
        if not eps > 0 or not math.isfinite(eps):
            raise ValueError(f"{self.name}: epsilon = {eps!r}: an estimate needs a finite epsilon > 0 "
                             f"(pass a smaller scale or a larger delta)")
        n = n if n is not None else max(round(math.fsum(counts)), 1)
        return {"n": n, "epsilon": eps, "p": 1.0, "q": 0.0, "oracle": self.name,
                "meta": {"extra_variance": self.noise_variance() / float(n) ** 2, "privacy": privacy}}


class SupportCounts(NoiseSource):
    """The source of an estimate whose oracle no registry knows: support counts through (p, q), Eq. 2's
    variance and nothing more (no pair covariance, likelihood or sampler).

    Parameters
    ----------
    p, q : float
        Support probabilities.
    epsilon : float
        ε per report.
    name : str
        The estimate's oracle name.

    Examples
    --------
    >>> from ldpopt.noise import SupportCounts
    >>> c = SupportCounts(0.6, 0.2, 1.0, "unknown").count_covariance(100, 3)
    >>> round(c.kappa, 6), c.pair
    (0.0625, None)
    """

    def __init__(self, p: float, q: float, epsilon: float, name: str):
        self._p, self._q, self.epsilon = float(p), float(q), float(epsilon)
        self.name = name  # type: ignore[misc]  # an instance's own name

    def sample_counts_batch(self, true_counts, size: int, rng: np.random.Generator) -> np.ndarray:
        raise ValueError(f"oracle {self.name!r} is not registered: no sampler of its counts "
                         f"(register it: ldpopt.oracles.register)")

    def count_covariance(self, n: int, d: int) -> CountCovariance:
        p, q = self._p, self._q
        return CountCovariance(kappa=1.0 / (n * (p - q) ** 2), A=q * (1 - q), B=(p - q) * (1 - p - q), pair=None,
                               noise_var=0.0, n=n, how="Eq. 2")

    def privacy_statement(self) -> dict:
        # ldpopt.privacy.statement.local's record of one report (that module is above this one's reach)
        return {"model": "local", "relation": "replace", "epsilon": self.epsilon, "rounds": 1,
                "composition": "one report"}

    def estimate_fields(self, counts, n) -> dict[str, Any]:
        return {"n": n, "epsilon": self.epsilon, "p": self._p, "q": self._q, "oracle": self.name, "meta": {}}


#: functions estimate → NoiseSource or None, asked in order by :func:`source_of` (the central records,
#: ldpopt.privacy.central; the registered oracles, ldpopt.oracles)
_RESOLVERS: list[Callable[[Any], NoiseSource | None]] = []


def register_resolver(resolver: Callable[[Any], NoiseSource | None]) -> None:
    """Add a function that finds the source of an estimate it recognises (None otherwise); a family of
    sources calls it when imported.

    Parameters
    ----------
    resolver : callable
        ``resolver(estimate)`` → NoiseSource or None.

    Examples
    --------
    >>> from ldpopt.noise import register_resolver
    >>> register_resolver(lambda est: None)   # recognises nothing
    """
    if resolver not in _RESOLVERS:
        _RESOLVERS.append(resolver)


def source_of(estimate) -> NoiseSource:
    """The noise source of ``estimate``: the first registered resolver that recognises it, else
    :class:`SupportCounts` from its p, q (what ``Estimate.noise`` returns).

    Parameters
    ----------
    estimate : Estimate

    Returns
    -------
    NoiseSource

    Examples
    --------
    >>> from ldpopt import Estimate
    >>> from ldpopt.noise import source_of
    >>> type(source_of(Estimate.from_frequencies([0.5, 0.5], 10, 1.0, 0.6, 0.2))).__name__
    'SupportCounts'
    """
    for resolve in _RESOLVERS:
        found = resolve(estimate)
        if found is not None:
            return found
    return SupportCounts(estimate.p, estimate.q, estimate.epsilon, estimate.oracle)
