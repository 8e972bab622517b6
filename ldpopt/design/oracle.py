"""A designed strategy as a frequency oracle: each user reports one output y drawn from Q[:, v];
the server reconstructs by the unbiased least squares V = (QᵀD⁻¹Q)⁻¹QᵀD⁻¹.

Notes: docs/notes/design.md, "ldpopt.design.oracle"."""

from __future__ import annotations

import hashlib
import math
from dataclasses import replace
from typing import Any, ClassVar

import numpy as np

from .._validation import as_generator, check_counts, check_n, check_values
from ..estimate import Estimate
from ..noise import ChannelMoments, CountCovariance
from ..oracles.base import FrequencyOracle
from ..oracles.channel import Channel
from .exact import LDPCheck, verify_ldp
from .linalg import reconstruction

__all__ = ["DesignedOracle"]

#: strategies built in this process, by digest: what ``from_estimate`` rebuilds an oracle from
_STRATEGIES: dict[str, tuple[np.ndarray, float]] = {}


def _digest(Q: np.ndarray, epsilon: float) -> str:
    h = hashlib.sha256(np.ascontiguousarray(Q).tobytes())
    h.update(repr((Q.shape, float(epsilon))).encode())
    return h.hexdigest()[:16]


class DesignedOracle(FrequencyOracle):
    """The frequency oracle of a strategy Q (m × d): a report is one output y ~ Q[:, v].

    Support counts are *soft*: a report y supports value v by S[v, y] = q + (p − q)·V[v, y] ∈ [0, 1],
    V the unbiased least-squares reconstruction (VQ = I), so Pr-weighted, E[S[v, y] | x] = p if
    v = x and q otherwise, and the estimate (c/n − q)/(p − q) = V·y/n is the reconstruction itself.
    (p, q) are chosen so that :math:`q(1 − q)/(n(p − q)^2)`, the estimate's :math:`σ^2`, is the mean per-value variance
    at the uniform distribution when the [0, 1] range allows it (else the largest p − q: :math:`σ^2` then
    overstates it). The exact per-value variance and covariance are :meth:`variance` and
    :meth:`covariance`.

    Parameters
    ----------
    strategy : array_like (m, d) or Design
        Q[y, v] = Pr[y | v], every column summing to 1 (1e-9), of full column rank; or a
        :class:`~ldpopt.design.Design` (its strategy and ε).
    epsilon : float, optional
        The ε claimed (taken from a Design when omitted); proved by
        :func:`~ldpopt.design.verify_ldp` before anything else.

    Raises
    ------
    ValueError
        If Q is not a strategy (shape, finite, non-negative, columns summing to 1), cannot estimate
        every value, or is not ε-LDP by the exact check.

    References
    ----------
    McKenna, Maity, Mazumdar and Miklau, *A workload-adaptive mechanism for linear queries under local
    differential privacy*, PVLDB 13(11), 2020, §3–4.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt.design import DesignedOracle
    >>> Q = np.array([[0.6, 0.2, 0.2], [0.2, 0.6, 0.2], [0.2, 0.2, 0.6]])  # GRR at ε = log 3
    >>> o = DesignedOracle(Q, epsilon=float(np.log(3)) + 1e-9)
    >>> est = o.simulate([600, 300, 100], rng=0)
    >>> est.n, est.f_tilde.round(2)
    (1000, array([0.59, 0.3 , 0.11]))
    """

    name: ClassVar[str] = "designed"
    label = "Designed"
    pure: ClassVar[bool] = False
    structural: ClassVar[tuple[str, ...]] = ("strategy_id",)

    def __init__(self, strategy, epsilon: float | None = None):
        if hasattr(strategy, "strategy") and hasattr(strategy, "epsilon"):  # a Design carries both
            epsilon = strategy.epsilon if epsilon is None else epsilon
            strategy = strategy.strategy
        if epsilon is None:
            raise ValueError("epsilon is required with a strategy matrix")
        ch = Channel(strategy, name="designed")
        if ch.J != 1:
            raise ValueError(f"strategy must be one (m, d) matrix, got shape {np.shape(strategy)}")
        Q = np.array(ch.blocks[0])
        check = verify_ldp(Q, epsilon)
        if not check.verified:
            raise ValueError(f"strategy is not epsilon-LDP at epsilon = {epsilon:g}: {check}")
        super().__init__(epsilon, Q.shape[1])
        self.ldp_check: LDPCheck = check
        Q.setflags(write=False)
        self.strategy = Q
        self._P = Q / Q.sum(axis=0)[None, :]  # the law sampled: columns normalised
        self.V = reconstruction(Q)
        self.V.setflags(write=False)
        self._moments = ChannelMoments(self._P.T, self.V)
        self._p, self._q = self._scale()
        S = np.clip(self._q + (self._p - self._q) * self.V, 0.0, 1.0)
        S.setflags(write=False)
        self.S = S
        self.strategy_id = _digest(Q, self.epsilon)
        _STRATEGIES[self.strategy_id] = (Q, self.epsilon)

    def _scale(self) -> tuple[float, float]:
        vmin, vmax = float(self.V.min()), float(self.V.max())
        s_max = 1.0 / (vmax - vmin)
        target = float(np.mean(self.variance(np.full(self.d, 1.0 / self.d), 1)))
        if vmin < 0:
            s = min(s_max, -vmin / (target + vmin * vmin))
            q = -vmin * s
        else:
            s, q = s_max, 0.0
        return q + s, q

    # -- what an oracle states ----------------------------------------------------------------------
    @property
    def p(self) -> float:
        """Pr-weighted support of the user's own value (the soft support's scale, class notes).

        Examples
        --------
        >>> import numpy as np
        >>> from ldpopt.design import DesignedOracle
        >>> o = DesignedOracle(np.array([[0.6, 0.2, 0.2], [0.2, 0.6, 0.2], [0.2, 0.2, 0.6]]), epsilon=1.1)
        >>> bool(0 <= o.q < o.p <= 1)
        True
        """
        return self._p

    @property
    def q(self) -> float:
        """Pr-weighted support of another value (class notes).

        Examples
        --------
        >>> import numpy as np
        >>> from ldpopt.design import DesignedOracle
        >>> o = DesignedOracle(np.array([[0.6, 0.2, 0.2], [0.2, 0.6, 0.2], [0.2, 0.2, 0.6]]), epsilon=1.1)
        >>> bool(o.q < o.p)
        True
        """
        return self._q

    @property
    def m(self) -> int:
        """The number of outputs.

        Examples
        --------
        >>> import numpy as np
        >>> from ldpopt.design import DesignedOracle
        >>> o = DesignedOracle(np.array([[0.6, 0.2, 0.2], [0.2, 0.6, 0.2], [0.2, 0.2, 0.6]]), epsilon=1.1)
        >>> o.m
        3
        """
        return int(self.strategy.shape[0])

    @property
    def bits(self) -> int:
        """Bits per report, ⌈log₂ m⌉.

        Examples
        --------
        >>> import numpy as np
        >>> from ldpopt.design import DesignedOracle
        >>> o = DesignedOracle(np.array([[0.6, 0.2, 0.2], [0.2, 0.6, 0.2], [0.2, 0.2, 0.6]]), epsilon=1.1)
        >>> o.bits
        2
        """
        return max(1, math.ceil(math.log2(self.m)))

    def params(self) -> dict[str, Any]:
        """The strategy's digest (``strategy_id``), which ``from_estimate`` looks up in this process.

        See ``FrequencyOracle.params``.

        Examples
        --------
        >>> import numpy as np
        >>> from ldpopt.design import DesignedOracle
        >>> o = DesignedOracle(np.array([[0.6, 0.2, 0.2], [0.2, 0.6, 0.2], [0.2, 0.2, 0.6]]), epsilon=1.1)
        >>> len(o.params()["strategy_id"])
        16
        """
        return {"strategy_id": self.strategy_id}

    @classmethod
    def from_estimate(cls, estimate: Estimate) -> DesignedOracle:
        """The oracle whose strategy made ``estimate`` (built earlier in this process).

        Parameters
        ----------
        estimate : Estimate
            An estimate this class produced.

        Returns
        -------
        DesignedOracle

        Raises
        ------
        ValueError
            If the estimate's strategy was not built in this process.

        Examples
        --------
        >>> import numpy as np
        >>> from ldpopt.design import DesignedOracle
        >>> o = DesignedOracle(np.array([[0.6, 0.2, 0.2], [0.2, 0.6, 0.2], [0.2, 0.2, 0.6]]), epsilon=1.1)
        >>> DesignedOracle.from_estimate(o.simulate([5, 3, 2], rng=0)).strategy_id == o.strategy_id
        True
        """
        key = estimate.meta.get("strategy_id")
        if key not in _STRATEGIES:
            raise ValueError(f"estimate: strategy {key!r} is not known in this process; rebuild the "
                             f"DesignedOracle from its strategy matrix")
        Q, eps = _STRATEGIES[key]
        return cls(Q, eps)

    def channel_blocks(self) -> np.ndarray:
        """The whole channel, one dense block (1, m, d): P[y | v].

        Returns
        -------
        ndarray (1, m, d)

        Examples
        --------
        >>> import numpy as np
        >>> from ldpopt.design import DesignedOracle
        >>> o = DesignedOracle(np.array([[0.6, 0.2, 0.2], [0.2, 0.6, 0.2], [0.2, 0.2, 0.6]]), epsilon=1.1)
        >>> o.channel_blocks().shape
        (1, 3, 3)
        """
        return self._P[None]

    def output_distribution(self) -> np.ndarray:
        """Pr[y | v] as (d, m).

        Returns
        -------
        ndarray (d, m)

        Examples
        --------
        >>> import numpy as np
        >>> from ldpopt.design import DesignedOracle
        >>> o = DesignedOracle(np.array([[0.6, 0.2, 0.2], [0.2, 0.6, 0.2], [0.2, 0.2, 0.6]]), epsilon=1.1)
        >>> o.output_distribution().sum(axis=1).round(12).tolist()
        [1.0, 1.0, 1.0]
        """
        return self._P.T.copy()

    def output_supports(self) -> np.ndarray:
        """The soft supports S[v, y] as (d, m) (class notes).

        Returns
        -------
        ndarray (d, m)

        Examples
        --------
        >>> import numpy as np
        >>> from ldpopt.design import DesignedOracle
        >>> o = DesignedOracle(np.array([[0.6, 0.2, 0.2], [0.2, 0.6, 0.2], [0.2, 0.2, 0.6]]), epsilon=1.1)
        >>> P, S = o.output_distribution(), o.output_supports()
        >>> bool(np.allclose(P @ S.T, np.where(np.eye(3, dtype=bool), o.p, o.q)))
        True
        """
        return self.S.copy()

    # -- variance -----------------------------------------------------------------------------------
    def count_covariance(self, n: int, d: int) -> CountCovariance:
        r"""The exact covariance of the estimate :math:`V y / n`: a report of output y contributes
        :math:`x = V[:, y]` (:math:`E[x \mid v] = e_v`), so :math:`\mathrm{Cov} = (V \mathrm{diag}(Q f) V^T - \mathrm{diag}(f))/n`
        (:class:`ldpopt.noise.ChannelMoments` of the channel and V). No pair form: κ, A, B are NaN.

        See ``NoiseSource.count_covariance``.

        Parameters
        ----------
        n : int
            Users, >= 1.
        d : int
            The oracle's domain size.

        Returns
        -------
        CountCovariance

        Raises
        ------
        ValueError
            If n is not an integer >= 1 or d is not the oracle's.

        Examples
        --------
        >>> import numpy as np
        >>> from ldpopt.design import DesignedOracle
        >>> o = DesignedOracle(np.array([[0.6, 0.2, 0.2], [0.2, 0.6, 0.2], [0.2, 0.2, 0.6]]), epsilon=1.1)
        >>> round(float(o.count_covariance(100, 3).variance([0.5, 0.3, 0.2])[0]), 6)
        0.0125
        """
        return CountCovariance.of_moments(self._moments, n, d, "the channel's exact covariance")

    def covariance(self, f, n: int) -> np.ndarray:
        r"""Exact Cov of the estimate V·y/n for n users of frequencies f (each user's value fixed):
        :math:`(V \operatorname{diag}(Q f) V^T − \operatorname{diag}(f))/n`, :meth:`count_covariance`'s matrix.

        Parameters
        ----------
        f : array_like (d,)
            True frequencies.
        n : int
            Number of users.

        Returns
        -------
        ndarray (d, d)

        Examples
        --------
        >>> import numpy as np
        >>> from ldpopt.design import DesignedOracle
        >>> o = DesignedOracle(np.array([[0.6, 0.2, 0.2], [0.2, 0.6, 0.2], [0.2, 0.2, 0.6]]), epsilon=1.1)
        >>> o.covariance([0.5, 0.3, 0.2], 100).shape
        (3, 3)
        """
        f = np.asarray(f, dtype=np.float64)
        if f.shape != (self.d,):
            raise ValueError(f"f must have shape ({self.d},), got {f.shape}")
        return self.count_covariance(n, self.d).matrix(f)

    def variance(self, f, n: int) -> np.ndarray:
        """Exact Var of each estimated frequency, :math:`((V^2)(Q f) − f)/n` (the diagonal of :meth:`covariance`).

        Parameters
        ----------
        f : float or array_like
            True frequencies (broadcast to (d,)).
        n : int
            Number of users.

        Returns
        -------
        ndarray (d,)

        Examples
        --------
        >>> import numpy as np
        >>> from ldpopt.design import DesignedOracle
        >>> o = DesignedOracle(np.array([[0.6, 0.2, 0.2], [0.2, 0.6, 0.2], [0.2, 0.2, 0.6]]), epsilon=1.1)
        >>> bool(np.allclose(o.variance([0.5, 0.3, 0.2], 100), np.diag(o.covariance([0.5, 0.3, 0.2], 100))))
        True
        """
        return self.count_covariance(n, self.d).variance(f)

    def estimate(self, counts, n: int, **meta) -> Estimate:
        """The estimate of soft support counts, carrying this oracle as its noise source (so every
        variance, interval and weight asks the channel's exact covariance, :meth:`count_covariance`).

        See ``FrequencyOracle.estimate``.

        Examples
        --------
        >>> import numpy as np
        >>> from ldpopt.design import DesignedOracle
        >>> o = DesignedOracle(np.array([[0.6, 0.2, 0.2], [0.2, 0.6, 0.2], [0.2, 0.2, 0.6]]), epsilon=1.1)
        >>> o.estimate(o.counts_from_outputs([6, 3, 1]), 10).noise is o
        True
        """
        return replace(super().estimate(counts, n, **meta), noise_source=self)

    def workload_error(self, workload, f, n: int) -> float:
        r"""Expected total squared error :math:`\sum_\text{queries} \mathrm{Var}(w^T \hat f)` of the reconstruction for a query matrix
        (queries × d) at frequencies f and n users: :math:`\mathrm{tr}(W \,\mathrm{Cov}\, W^T)`.

        Parameters
        ----------
        workload : array_like (queries, d)
        f : array_like (d,)
        n : int

        Returns
        -------
        float

        Examples
        --------
        >>> import numpy as np
        >>> from ldpopt.design import DesignedOracle
        >>> o = DesignedOracle(np.array([[0.6, 0.2, 0.2], [0.2, 0.6, 0.2], [0.2, 0.2, 0.6]]), epsilon=1.1)
        >>> round(o.workload_error(np.eye(3), [0.5, 0.3, 0.2], 100), 6)  # = Σ variance
        0.035
        """
        W = np.asarray(workload, dtype=np.float64)
        if W.ndim != 2 or W.shape[1] != self.d:
            raise ValueError(f"workload must be a (queries, {self.d}) matrix, got shape {W.shape}")
        return float(np.sum((W @ self.covariance(f, n)) * W))

    # -- client and server --------------------------------------------------------------------------
    def perturb(self, values, rng) -> np.ndarray:
        """Client side: each user's output y ~ Q[:, v] (int64, one per user), by inverting the columns'
        CDFs laid end to end (column v's CDF shifted by v, one ``searchsorted`` for all users).

        Parameters
        ----------
        values : array_like of int
            User values in [0, d).
        rng : int, Generator or "secure"

        Returns
        -------
        ndarray of int64

        Examples
        --------
        >>> import numpy as np
        >>> from ldpopt.design import DesignedOracle
        >>> o = DesignedOracle(np.array([[0.6, 0.2, 0.2], [0.2, 0.6, 0.2], [0.2, 0.2, 0.6]]), epsilon=1.1)
        >>> o.perturb([0, 1, 2, 2], rng=0).dtype
        dtype('int64')
        """
        v = check_values(values, self.d)
        gen = as_generator(rng)
        cdf = np.cumsum(self._P, axis=0)  # (m, d)
        ends = cdf[-1]
        flat = (cdf + np.arange(self.d)[None, :]).T.ravel()  # column v's CDF + v, increasing
        u = gen.random(v.shape[0])
        idx = np.searchsorted(flat, v + u * ends[v], side="right")
        return np.clip(idx - v * self.m, 0, self.m - 1).astype(np.int64)

    def output_counts(self, reports) -> np.ndarray:
        """y, the histogram (m,) of the outputs in ``reports``.

        Parameters
        ----------
        reports : array_like of int
            Outputs from :meth:`perturb`.

        Returns
        -------
        ndarray (m,) of int64

        Examples
        --------
        >>> import numpy as np
        >>> from ldpopt.design import DesignedOracle
        >>> o = DesignedOracle(np.array([[0.6, 0.2, 0.2], [0.2, 0.6, 0.2], [0.2, 0.2, 0.6]]), epsilon=1.1)
        >>> o.output_counts([0, 2, 2]).tolist()
        [1, 0, 2]
        """
        r = np.asarray(reports)
        if r.ndim != 1 or r.dtype.kind not in "iu" or (r.size and (r.min() < 0 or r.max() >= self.m)):
            raise ValueError(f"reports must be a 1-D integer array of outputs in [0, {self.m})")
        return np.bincount(r, minlength=self.m).astype(np.int64)

    def counts_from_outputs(self, y) -> np.ndarray:
        """Soft support counts S·y (d,) from output counts y (m,).

        Parameters
        ----------
        y : array_like (m,)
            Output counts.

        Returns
        -------
        ndarray (d,)

        Examples
        --------
        >>> import numpy as np
        >>> from ldpopt.design import DesignedOracle
        >>> o = DesignedOracle(np.array([[0.6, 0.2, 0.2], [0.2, 0.6, 0.2], [0.2, 0.2, 0.6]]), epsilon=1.1)
        >>> bool(np.allclose(o.counts_from_outputs([1, 0, 2]), o.aggregate(np.array([0, 2, 2]))))
        True
        """
        y = check_counts(y, "output counts", d=self.m, integral=False)
        return self.S @ y

    def aggregate(self, reports, device=None) -> np.ndarray:
        """Server side: soft support counts S·y (float, (d,)) of the reports.

        Parameters
        ----------
        reports : array_like of int
            Outputs from :meth:`perturb`.
        device : None
            Ignored (numpy counts them).

        Returns
        -------
        ndarray (d,)

        Examples
        --------
        >>> import numpy as np
        >>> from ldpopt.design import DesignedOracle
        >>> o = DesignedOracle(np.array([[0.6, 0.2, 0.2], [0.2, 0.6, 0.2], [0.2, 0.2, 0.6]]), epsilon=1.1)
        >>> o.aggregate(o.perturb([0, 0, 1, 2], rng=0)).shape
        (3,)
        """
        return self.S @ self.output_counts(reports)

    def support_matrix(self, reports) -> np.ndarray:
        """Each report's soft support row S[:, y] (reports × d).

        Parameters
        ----------
        reports : array_like of int
            Outputs from :meth:`perturb`.

        Returns
        -------
        ndarray (reports, d)

        Examples
        --------
        >>> import numpy as np
        >>> from ldpopt.design import DesignedOracle
        >>> o = DesignedOracle(np.array([[0.6, 0.2, 0.2], [0.2, 0.6, 0.2], [0.2, 0.2, 0.6]]), epsilon=1.1)
        >>> r = o.perturb([0, 1, 2], rng=0)
        >>> bool(np.allclose(o.support_matrix(r).sum(axis=0), o.aggregate(r)))
        True
        """
        r = np.asarray(reports)
        self.output_counts(r)
        return self.S[:, r].T

    def sample_outputs(self, true_counts, rng) -> np.ndarray:
        """Output counts y (int64, (m,)) of users with histogram ``true_counts``: one multinomial per
        value, exact in joint law.

        Parameters
        ----------
        true_counts : array_like of int (d,)
            The users' histogram.
        rng : int or Generator

        Returns
        -------
        ndarray (m,) of int64

        Examples
        --------
        >>> import numpy as np
        >>> from ldpopt.design import DesignedOracle
        >>> o = DesignedOracle(np.array([[0.6, 0.2, 0.2], [0.2, 0.6, 0.2], [0.2, 0.2, 0.6]]), epsilon=1.1)
        >>> int(o.sample_outputs([5, 3, 2], rng=0).sum())
        10
        """
        tc = self._check_true_counts(true_counts).astype(np.int64)
        gen = as_generator(rng)
        return gen.multinomial(tc, self._P.T).sum(axis=0).astype(np.int64)

    def sample_counts(self, true_counts, rng) -> np.ndarray:
        """Soft support counts S·y of :meth:`sample_outputs` (exact in joint law).

        Parameters
        ----------
        true_counts : array_like of int (d,)
            The users' histogram.
        rng : int or Generator

        Returns
        -------
        ndarray (d,)

        Examples
        --------
        >>> import numpy as np
        >>> from ldpopt.design import DesignedOracle
        >>> o = DesignedOracle(np.array([[0.6, 0.2, 0.2], [0.2, 0.6, 0.2], [0.2, 0.2, 0.6]]), epsilon=1.1)
        >>> float(o.sample_counts([5, 3, 2], rng=0).sum()) <= 10 * 3
        True
        """
        return self.S @ self.sample_outputs(true_counts, rng)

    def estimate_outputs(self, y, n: int | None = None) -> Estimate:
        """The estimate from output counts y (n their sum when omitted).

        Parameters
        ----------
        y : array_like (m,)
        n : int, optional

        Returns
        -------
        Estimate

        Examples
        --------
        >>> import numpy as np
        >>> from ldpopt.design import DesignedOracle
        >>> o = DesignedOracle(np.array([[0.6, 0.2, 0.2], [0.2, 0.6, 0.2], [0.2, 0.2, 0.6]]), epsilon=1.1)
        >>> o.estimate_outputs([6, 3, 1]).f_tilde.round(2)
        array([ 1.  ,  0.25, -0.25])
        """
        y = check_counts(y, "output counts", d=self.m, integral=True)
        n = int(y.sum()) if n is None else check_n(n, "n")
        if int(y.sum()) != n:
            raise ValueError(f"output counts sum to {int(y.sum())}, not n = {n}")
        return self.estimate(np.clip(self.S @ y, 0.0, n), n)
