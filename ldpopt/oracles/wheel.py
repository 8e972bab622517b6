"""Random Wheel Spinner, RWS (Fang, Chen & Liu, "Further Study on Frequency Estimation under Local
Differential Privacy", USENIX Security 2025; the authors' code: github.com/SEUNICK/LDP_Frequency_Protocols,
fp/RWS.py).

Notes: docs/notes/python.md, "ldpopt.oracles.wheel"."""

from __future__ import annotations

import math
import numbers
from itertools import combinations
from typing import Any, ClassVar

import numpy as np

from .. import kernels
from .._validation import as_generator, check_values
from .base import FrequencyOracle, ReportColumn
from .hashing import keyed_reports, keyed_words
from .reoptimized import mean_mse
from .subset import SS

__all__ = ["RWS", "PooledRWS", "rws_k"]

# users × values hashed per block (2 MiB of uint64 words plus the argpartition's int64 indices)
_BLOCK_CELLS = 1 << 18
# largest d · (C(d, k)·d) the output enumeration builds
_MAX_ENUM_CELLS = 1 << 22


def rws_k(epsilon: float, d: int) -> int:
    """RWS's subset size (module notes): of ⌊d/(e^ε + 1)⌋ and ⌈d/(e^ε + 1)⌉ the one with the
    smaller mean MSE (:func:`.reoptimized.mean_mse`), the floor on a tie; 1 when d/(e^ε + 1) ≤ 1.

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
    >>> from ldpopt.oracles.wheel import rws_k
    >>> rws_k(1.0, 8), rws_k(1.0, 128), rws_k(4.0, 128)
    (2, 34, 2)
    """
    e = math.exp(-epsilon)
    k0 = d * e / (1.0 + e)  # d/(e^ε + 1) without overflow
    if k0 <= 1:
        return 1
    lo, hi = math.floor(k0), math.ceil(k0)

    def m(k: int) -> float:
        law = SS(epsilon, d, k=k)
        return float(mean_mse(law.p, law.q, d))

    return hi if m(hi) < m(lo) else lo


class RWS(FrequencyOracle):
    r"""Random Wheel Spinner (Fang et al. 2025; module notes): report (s, y), supporting
    :math:`(S_s + y) \bmod d`, with SS(k)'s law of supports.

    :math:`p = k e^ε/(k e^ε + d − k)`, q = (k − p)/(d − 1).

    Reports are (m, 2) int64 arrays of rows (s, y): the 64-bit seed (its bit pattern as int64) and
    the spin y ∈ [0, d). ``sample_counts`` is SS's, exact in joint law (module notes).

    Parameters
    ----------
    epsilon : float
        Privacy budget ε > 0.
    d : int
        Domain size ≥ 2.
    k : int, optional
        Subset size, 1 ≤ k < d; default :func:`rws_k`.

    Raises
    ------
    ValueError
        If ``epsilon``, ``d`` or ``k`` is out of range.

    Examples
    --------
    >>> from ldpopt import oracles
    >>> rws = oracles.RWS(epsilon=1.0, d=8)
    >>> rws.k, round(rws.p, 4), round(rws.q, 4)
    (2, 0.4754, 0.2178)
    >>> reports = rws.perturb([0, 0, 3], rng=0)
    >>> reports.shape, int(rws.aggregate(reports).sum())  # every report supports k values
    ((3, 2), 6)
    """

    name = "rws"
    kernel_devices = ("cpu", "cuda")
    structural: ClassVar[tuple[str, ...]] = ("k",)
    likelihood = "binomial"

    def __init__(self, epsilon: float, d: int, k: int | None = None):
        super().__init__(epsilon, d)
        if k is None:
            k = rws_k(self.epsilon, self.d)
        elif isinstance(k, bool) or not isinstance(k, numbers.Real) or not float(k).is_integer():
            raise ValueError(f"k must be an integer with 1 <= k < d = {self.d}, got {k!r}")
        self._law = SS(self.epsilon, self.d, k=int(k))  # checks 1 <= k < d
        self.k = int(k)

    @property
    def p(self) -> float:
        return self._law.p

    @property
    def q(self) -> float:
        return self._law.q

    def params(self) -> dict[str, Any]:
        return {"k": self.k, "seed_map": "S_s = the k values v with the smallest splitmix64(s + (v+1)*0x9E3779B97F4A7C15), "
                                        "uniform 64-bit seed s per user"}

    @classmethod
    def pair_covariance(cls, p: float, q: float, d: int, params: dict) -> tuple[float, float] | None:
        """SS(k)'s (the same law of supports, module notes); None without ``k`` in ``params``.

        See ``FrequencyOracle.pair_covariance``.

        Returns
        -------
        tuple of float or None

        Examples
        --------
        >>> from ldpopt import oracles
        >>> rws = oracles.RWS(1.0, 8)
        >>> rws.pair_covariance(rws.p, rws.q, 8, rws.params()) == oracles.SS.pair_covariance(rws.p, rws.q, 8, {"k": 2})
        True
        """
        return SS.pair_covariance(p, q, d, params)

    def support_size_pmf(self) -> np.ndarray:
        """Every report supports exactly k values.

        See ``FrequencyOracle.support_size_pmf``.

        Examples
        --------
        >>> from ldpopt import oracles
        >>> oracles.RWS(1.0, 4, k=1).support_size_pmf()
        array([0., 1., 0., 0., 0.])
        """
        return self._law.support_size_pmf()

    def report_columns(self) -> tuple[ReportColumn, ...]:
        """``seed: int64``, ``spin: int64``.

        See ``FrequencyOracle.report_columns``.

        Examples
        --------
        >>> from ldpopt import oracles
        >>> [c.name for c in oracles.RWS(1.0, 8).report_columns()]
        ['seed', 'spin']
        """
        return (ReportColumn("seed", "int64"), ReportColumn("spin", "int64"))

    # -- the seed → subset map -------------------------------------------------------------------
    def _order(self, seeds: np.ndarray) -> np.ndarray:
        """(m, d) int64: per seed, D partitioned by its words — the first k columns are S_s (any order),
        the other d − k its complement."""
        z = keyed_words(seeds[:, None], np.arange(self.d, dtype=np.int64)[None, :])
        if self.k == self.d - 1:
            return np.argsort(z, axis=1)
        return np.argpartition(z, self.k - 1, axis=1) if self.k > 1 else np.argpartition(z, 0, axis=1)

    def subsets(self, seeds) -> np.ndarray:
        """:math:`S_s` for each seed, (m, k) int64 (module notes), in blocks of seeds.

        Parameters
        ----------
        seeds : array_like of int64
            Seeds (bit patterns of 64-bit keys).

        Returns
        -------
        ndarray of int64, shape (m, k)

        Examples
        --------
        >>> import numpy as np
        >>> from ldpopt import oracles
        >>> S = oracles.RWS(1.0, 8).subsets(np.array([1, 2, 3]))
        >>> S.shape, bool(np.all(np.sort(S, axis=1)[:, 0] != np.sort(S, axis=1)[:, 1]))
        ((3, 2), True)
        """
        s = np.asarray(seeds, dtype=np.int64).reshape(-1)
        out = np.empty((s.shape[0], self.k), dtype=np.int64)
        step = max(1, _BLOCK_CELLS // self.d)
        for u0 in range(0, s.shape[0], step):
            out[u0:u0 + step] = self._order(s[u0:u0 + step])[:, : self.k]
        return out

    # -- the real protocol -----------------------------------------------------------------------
    def perturb(self, values, rng) -> np.ndarray:
        r"""Client side: a uniform 64-bit seed s per user and the spin y (module notes): w.p.
        :math:`p = k e^ε/(k e^ε + d − k)`, y = v − u for u uniform on :math:`S_s`; otherwise for u uniform on :math:`D \setminus S_s`.

        See ``FrequencyOracle.perturb``.

        Returns
        -------
        ndarray of int64, shape (m, 2)
            Rows (s, y).

        Examples
        --------
        >>> from ldpopt import oracles
        >>> oracles.RWS(1.0, 8).perturb([0, 7], rng=0).shape
        (2, 2)
        """
        v = check_values(values, self.d, "values")
        gen = as_generator(rng)
        m: int = v.shape[0]
        d = self.d
        s = gen.integers(np.iinfo(np.int64).min, np.iinfo(np.int64).max, size=m, dtype=np.int64, endpoint=True)
        col = self._columns(gen, m)
        y = np.empty(m, dtype=np.int64)
        step = max(1, _BLOCK_CELLS // d)
        for u0 in range(0, m, step):
            sl = slice(u0, u0 + step)
            order: np.ndarray = self._order(s[sl])
            u = order[np.arange(order.shape[0]), col[sl]]
            y[sl] = (v[sl] - u) % d
        return np.stack((s, y), axis=1)

    def _columns(self, gen, m: int) -> np.ndarray:
        """Each user's column of its seed's partition: w.p. p uniform in [0, k) (inside S_s), else
        uniform in [k, d) (outside); the spin is then y = v − order_s[column]."""
        inside = gen.random(m) < self.p
        return np.where(inside, gen.integers(0, self.k, size=m, dtype=np.int64),
                        self.k + gen.integers(0, self.d - self.k, size=m, dtype=np.int64))

    def _check_reports(self, reports) -> tuple[np.ndarray, np.ndarray]:
        return keyed_reports(reports, self.d, "seed", "spin")

    def aggregate(self, reports, device=None) -> np.ndarray:
        r"""Server side: :math:`c_v = \#\{\text{reports whose support } (S_s + y) \bmod d \text{ holds } v\}`; the supports are built
        with numpy in blocks of reports and counted on ``device`` (:meth:`FrequencyOracle.aggregate`;
        the same counts bit for bit on every device).

        Parameters
        ----------
        reports
            What :meth:`perturb` returned.
        device : {None, "auto", "numpy", "cpu", "cuda"}, default None
            Who counts.

        Returns
        -------
        ndarray of int64, shape (d,)

        Raises
        ------
        ValueError
            If the reports are malformed or the device is unknown.

        Examples
        --------
        >>> import numpy as np
        >>> from ldpopt import oracles
        >>> rws = oracles.RWS(1.0, 8)
        >>> r = np.array([[5, 0], [5, 1]])
        >>> bool(np.array_equal(rws.aggregate(r), rws.support_matrix(r).sum(axis=0)))
        True
        """
        s, y = self._check_reports(reports)
        dev = kernels.resolve(device, s.shape[0] * self.k)
        counts = np.zeros(self.d, dtype=np.int64)
        step = max(1, _BLOCK_CELLS // self.d)
        for u0 in range(0, s.shape[0], step):
            sup = (self.subsets(s[u0:u0 + step]) + y[u0:u0 + step, None]) % self.d
            counts += kernels.histogram(sup.reshape(-1), self.d, dev)
        return counts

    def support_matrix(self, reports) -> np.ndarray:
        r"""(m, d) bool: report (s, y) supports v iff :math:`v ∈ (S_s + y) \bmod d`.

        See ``FrequencyOracle.support_matrix``.

        Examples
        --------
        >>> from ldpopt import oracles
        >>> rws = oracles.RWS(1.0, 8)
        >>> rws.support_matrix(rws.perturb([0, 1, 2], rng=0)).sum(axis=1)
        array([2, 2, 2])
        """
        s, y = self._check_reports(reports)
        sup = (self.subsets(s) + y[:, None]) % self.d
        out = np.zeros((s.shape[0], self.d), dtype=bool)
        out[np.arange(s.shape[0])[:, None], sup] = True
        return out

    def sample_counts(self, true_counts, rng) -> np.ndarray:
        """Fast path: SS(k)'s, exact in joint law (module notes: the same law of supports).

        See ``FrequencyOracle.sample_counts``.

        Returns
        -------
        ndarray of int64, shape (d,)

        Examples
        --------
        >>> from ldpopt import oracles
        >>> c = oracles.RWS(1.0, 8).sample_counts([500, 300, 150, 50, 0, 0, 0, 0], rng=0)
        >>> int(c.sum())  # n·k
        2000
        """
        return self._law.sample_counts(true_counts, rng)

    # -- exact output distribution (the reports themselves, not their supports) --------------------
    def _outputs(self) -> np.ndarray:
        """(C(d, k)·d, d) bool: the support of each output (S, y), S in lexicographic order, y fastest."""
        total = math.comb(self.d, self.k) * self.d
        if total * self.d > _MAX_ENUM_CELLS:
            raise ValueError(f"C(d, k)·d = {total} outputs (S, y) are too many to enumerate "
                             f"(need d·C(d, k)·d <= {_MAX_ENUM_CELLS}); use a smaller d")
        sets = np.array(list(combinations(range(self.d), self.k)), dtype=np.int64)
        sup = (sets[:, None, :] + np.arange(self.d)[None, :, None]) % self.d  # (C, d, k)
        out = np.zeros((sets.shape[0], self.d, self.d), dtype=bool)
        np.put_along_axis(out, sup, True, axis=2)
        return out.reshape(total, self.d)

    def output_distribution(self) -> np.ndarray:
        r"""Exact Pr[(S, y) | v] of the client's output, shape (d, C(d, k)·d), columns (S, y) with S in
        lexicographic order and y fastest: :math:`C(d, k)^{−1}·e^ε/(k e^ε + d − k)` if :math:`y ∈ (v − S) \bmod d`, else
        :math:`C(d, k)^{−1}/(k e^ε + d − k)` (a uniform S, then the spin; the seed only names S).

        See ``FrequencyOracle.output_distribution``.

        Returns
        -------
        ndarray, shape (d, C(d, k)·d)

        Examples
        --------
        >>> from ldpopt import oracles
        >>> P = oracles.RWS(1.0, 4, k=1).output_distribution()
        >>> P.shape, P.sum(axis=1).round(12)
        ((4, 16), array([1., 1., 1., 1.]))
        """
        supports = self.output_supports()  # (d, C·d): v ∈ S + y ⇔ y ∈ v − S
        c = math.comb(self.d, self.k)
        den = self.k + (self.d - self.k) * math.exp(-self.epsilon)  # (k e^ε + d − k)/e^ε
        return np.where(supports, 1.0 / den, math.exp(-self.epsilon) / den) / c

    def output_supports(self) -> np.ndarray:
        """The support (S + y) mod d of each output (S, y), shape (d, C(d, k)·d), in the column order of
        :meth:`output_distribution`.

        Returns
        -------
        ndarray of bool, shape (d, C(d, k)·d)

        Examples
        --------
        >>> from ldpopt import oracles
        >>> oracles.RWS(1.0, 3, k=1).output_supports().sum(axis=0)
        array([1, 1, 1, 1, 1, 1, 1, 1, 1])
        """
        return self._outputs().T


# a pool's (K, d) partition table, int32
_MAX_POOL_CELLS = 1 << 25


class PooledRWS(RWS):
    """RWS with a bounded seed pool: every user's seed is one of K public 64-bit keys (drawn from
    ``pool_seed``, :func:`.cms.family_keys`), chosen uniformly; the report is still (seed, spin).
    Aggregation tabulates N[j, y] (reports of pool key j with spin y; O(n), counts of shards add) and
    convolves each row with its subset's indicator, c_v = Σ_j Σ_{a ∈ S_j} N[j, (v − a) mod d]
    (FFT, O(K·d log d)), instead of hashing all d values of every report (O(n·d)).

    Given the pool, a user with value x supports v ≠ x w.p. π(v − x) = (k + (e^ε − 1)ρ(v − x))/Z,
    Z = k e^ε + d − k, ρ(δ) = (1/K) Σ_j |S_j ∩ (S_j + δ)| (p* when v = x); over a uniform k-subset
    E|S ∩ (S + δ)| = k(k − 1)/(d − 1), which gives RWS's q*. So f̃ is unbiased over random pools only:
    :meth:`bias_given_hashes` and :meth:`variance_given_hashes` are exact for the pool held (users are
    independent, each report's support of v a Bernoulli(π)); the pool's cost in MSE is their mean
    square bias, a floor that does not shrink with n (benchmarks/bench_rws_pool.py measures it).

    Parameters
    ----------
    epsilon : float
        Privacy budget ε > 0.
    d : int
        Domain size >= 2.
    k : int, optional
        Subset size (default :func:`rws_k`).
    pool : int
        Seeds in the pool, K >= 1, K·d <= 2^25 (default 256).
    pool_seed : int
        Seed that draws the pool's keys, >= 0.

    Examples
    --------
    >>> from ldpopt import oracles
    >>> o = oracles.PooledRWS(1.0, 8, pool=16)
    >>> r = o.perturb([0, 1, 2, 3] * 50, rng=0)
    >>> bool((o.aggregate(r) == o.support_matrix(r).sum(axis=0)).all())
    True
    """

    name = "rws-pool"
    label = "RWS-pool"
    pure = False
    structural: ClassVar[tuple[str, ...]] = ("k", "pool", "pool_seed")

    def __init__(self, epsilon: float, d: int, k: int | None = None, pool: int = 256, pool_seed: int = 0):
        super().__init__(epsilon, d, k)
        from .._validation import _check_int
        from .cms import family_keys

        self.pool = _check_int(pool, "pool", 1)
        if self.pool * self.d > _MAX_POOL_CELLS:
            raise ValueError(f"pool · d must be <= {_MAX_POOL_CELLS} (the pool's partition table), "
                             f"got pool = {self.pool}, d = {self.d}")
        self.pool_seed = _check_int(pool_seed, "pool_seed", 0)
        self.pool_keys = family_keys(self.pool_seed, self.pool)
        self._sorted = np.argsort(self.pool_keys)
        self._table = np.concatenate([self._order(self.pool_keys[j0:j0 + max(1, _BLOCK_CELLS // self.d)])
                                      for j0 in range(0, self.pool, max(1, _BLOCK_CELLS // self.d))]).astype(np.int32)
        ind = np.zeros((self.pool, self.d))
        np.put_along_axis(ind, self._table[:, : self.k].astype(np.int64), 1.0, axis=1)
        self._indicator = ind  # (K, d): 1[t ∈ S_j]

    def params(self) -> dict[str, Any]:
        return {**super().params(), "pool": self.pool, "pool_seed": self.pool_seed}

    @classmethod
    def pair_covariance(cls, p: float, q: float, d: int, params: dict) -> tuple[float, float] | None:
        """None: given the pool, a pair's covariance depends on the pair's lag, not only on (f_v, f_w).

        Parameters
        ----------
        p, q : float
            The oracle's support probabilities.
        d : int
            Domain size.
        params : dict
            The oracle's parameters (an estimate's meta).

        Returns
        -------
        None

        Examples
        --------
        >>> from ldpopt import oracles
        >>> o = oracles.PooledRWS(1.0, 8, pool=16)
        >>> o.pair_covariance(o.p, o.q, 8, o.params()) is None
        True
        """
        return None

    def pool_index(self, seeds) -> np.ndarray:
        """The pool index of each seed, int64; a seed not in the pool is a ValueError.

        Parameters
        ----------
        seeds : array_like of int64
            Seeds of reports (bit patterns of the pool's 64-bit keys).

        Returns
        -------
        ndarray of int64
            j with ``pool_keys[j] == seed``, in [0, pool).

        Raises
        ------
        ValueError
            If a seed is not one of the pool's keys.

        Examples
        --------
        >>> from ldpopt import oracles
        >>> o = oracles.PooledRWS(1.0, 8, pool=16)
        >>> o.pool_index(o.pool_keys[[3, 0, 15]])
        array([ 3,  0, 15])
        """
        s = np.asarray(seeds, dtype=np.int64)
        pos = np.minimum(np.searchsorted(self.pool_keys[self._sorted], s), self.pool - 1)
        j = self._sorted[pos]
        if not np.array_equal(self.pool_keys[j], s):
            raise ValueError(f"reports: a seed is not one of the pool's {self.pool} keys (pool_seed = {self.pool_seed})")
        return j.astype(np.int64)

    def perturb(self, values, rng) -> np.ndarray:
        """Client side: a pool key s_j (j uniform in [0, K)) and the spin y, as :meth:`RWS.perturb`.

        Parameters
        ----------
        values : array_like of int, shape (m,)
            The users' true values in [0, d).
        rng : int, numpy.random.Generator or "secure"
            Seed or generator.

        Returns
        -------
        ndarray of int64, shape (m, 2)
            Rows (s_j, y).

        Raises
        ------
        ValueError
            If a value is outside [0, d) or ``rng`` is not accepted.

        Examples
        --------
        >>> import numpy as np
        >>> from ldpopt import oracles
        >>> o = oracles.PooledRWS(1.0, 8, pool=16)
        >>> r = o.perturb([0, 1, 2, 3], rng=0)
        >>> r.shape, bool(np.isin(r[:, 0], o.pool_keys).all())
        ((4, 2), True)
        """
        v = check_values(values, self.d, "values")
        gen = as_generator(rng)
        m: int = v.shape[0]
        j = gen.integers(0, self.pool, size=m, dtype=np.int64)
        col = self._columns(gen, m)
        y = (v - self._table[j, col]) % self.d
        return np.stack((self.pool_keys[j], y), axis=1)

    def pool_table(self, reports, device=None) -> np.ndarray:
        """N[j, y]: reports of pool key j with spin y, int64 (K, d) (``device`` counts; tables of shards add).

        Parameters
        ----------
        reports
            What :meth:`perturb` returned.
        device : {None, "auto", "numpy", "cpu", "cuda"}, default None
            Who counts (:meth:`FrequencyOracle.aggregate`).

        Returns
        -------
        ndarray of int64, shape (pool, d)

        Raises
        ------
        ValueError
            If the reports are malformed or a seed is not in the pool.

        Examples
        --------
        >>> from ldpopt import oracles
        >>> o = oracles.PooledRWS(1.0, 8, pool=16)
        >>> N = o.pool_table(o.perturb([0, 1, 2, 3], rng=0))
        >>> N.shape, int(N.sum())
        ((16, 8), 4)
        """
        s, y = self._check_reports(reports)
        cells = self.pool_index(s) * self.d + y
        dev = kernels.resolve(device, cells.shape[0])
        return kernels.histogram(cells, self.pool * self.d, dev).reshape(self.pool, self.d).astype(np.int64)

    def counts_from_table(self, N) -> np.ndarray:
        """c_v = Σ_j Σ_{a ∈ S_j} N[j, (v − a) mod d], int64 (d,): one FFT convolution per pool row,
        rounded (the rounding error is checked below 0.25).

        Parameters
        ----------
        N : array_like, shape (pool, d)
            A pool table (:meth:`pool_table`; the sum of shards' tables).

        Returns
        -------
        ndarray of int64, shape (d,)

        Raises
        ------
        ValueError
            If ``N`` has the wrong shape or the convolution lost integer precision.

        Examples
        --------
        >>> import numpy as np
        >>> from ldpopt import oracles
        >>> o = oracles.PooledRWS(1.0, 8, pool=16)
        >>> r = o.perturb([0, 1, 2, 3] * 10, rng=0)
        >>> c = o.counts_from_table(o.pool_table(r))
        >>> bool(np.array_equal(c, o.support_matrix(r).sum(axis=0)))
        True
        """
        N = np.asarray(N, dtype=np.float64)
        if N.shape != (self.pool, self.d):
            raise ValueError(f"N must have shape (pool, d) = ({self.pool}, {self.d}), got {N.shape}")
        c = np.fft.irfft((np.fft.rfft(N, axis=1) * np.fft.rfft(self._indicator, axis=1)).sum(axis=0), n=self.d)
        out = np.rint(c)
        if np.abs(c - out).max() >= 0.25:
            raise ValueError("the FFT convolution lost integer precision (counts too large for float64)")
        return out.astype(np.int64)

    def aggregate(self, reports, device=None) -> np.ndarray:
        """Server side through the pool table (O(n) + O(K·d log d)); the same counts as the supports'.

        See ``RWS.aggregate``.

        Parameters
        ----------
        reports
            What :meth:`perturb` returned.
        device : {None, "auto", "numpy", "cpu", "cuda"}, default None
            Who counts the pool table.

        Raises
        ------
        ValueError
            If the reports are malformed, a seed is not in the pool or the device is unknown.

        Examples
        --------
        >>> from ldpopt import oracles
        >>> o = oracles.PooledRWS(1.0, 8, pool=16)
        >>> int(o.aggregate(o.perturb([0, 1, 2, 3] * 10, rng=0)).sum())  # every report supports k = 2 values
        80
        """
        return self.counts_from_table(self.pool_table(reports, device))

    def sample_counts(self, true_counts, rng) -> np.ndarray:
        """Exact in law for the pool held, through the real path (O(n) per draw, vectorised in blocks).

        See ``RWS.sample_counts``.

        Parameters
        ----------
        true_counts : array_like of int, shape (d,)
            True histogram :math:`n_v ≥ 0`, at least one user.
        rng : int, numpy.random.Generator or "secure"

        Raises
        ------
        ValueError
            If ``true_counts`` is not a non-negative integer vector of length d with a positive sum.

        Examples
        --------
        >>> from ldpopt import oracles
        >>> c = oracles.PooledRWS(1.0, 8, pool=16).sample_counts([500, 300, 150, 50, 0, 0, 0, 0], rng=0)
        >>> int(c.sum())  # n·k
        2000
        """
        tc = self._check_true_counts(true_counts)
        gen = as_generator(rng)
        values = np.repeat(np.arange(self.d), tc)
        N = np.zeros((self.pool, self.d), dtype=np.int64)
        for u0 in range(0, values.shape[0], 1 << 20):  # blocks of users
            N += self.pool_table(self.perturb(values[u0:u0 + (1 << 20)], gen), device="numpy")
        return self.counts_from_table(N)

    def support_probabilities(self) -> np.ndarray:
        """π(δ) = Pr[a report supports x + δ | x] for the pool held, (d,) by lag δ (π(0) = p).

        Returns
        -------
        ndarray, shape (d,)
            π by lag; it sums to k (every report supports k values).

        Examples
        --------
        >>> from ldpopt import oracles
        >>> o = oracles.PooledRWS(1.0, 8, pool=16)
        >>> pi = o.support_probabilities()
        >>> bool(abs(pi[0] - o.p) < 1e-12), round(float(pi.sum()), 12)
        (True, 2.0)
        """
        F = np.fft.rfft(self._indicator, axis=1)
        rho = np.fft.irfft((F * np.conj(F)).real.mean(axis=0), n=self.d)  # ρ(δ) = mean_j |S_j ∩ (S_j + δ)|
        Z = self.k * math.exp(self.epsilon) + self.d - self.k
        return (self.k + math.expm1(self.epsilon) * rho) / Z

    def _lag_matrix(self) -> np.ndarray:
        """Π[x, v] = π((v − x) mod d)."""
        pi = self.support_probabilities()
        return pi[(np.arange(self.d)[None, :] - np.arange(self.d)[:, None]) % self.d]

    def bias_given_hashes(self, f) -> np.ndarray:
        """E[f̃_v | pool] − f_v at true frequencies f (summing to 1), exact for the pool held.

        Parameters
        ----------
        f : array_like, shape (d,)
            True frequencies, non-negative, summing to 1.

        Returns
        -------
        ndarray, shape (d,)

        Raises
        ------
        ValueError
            If ``f`` is not d finite non-negative numbers.

        Examples
        --------
        >>> import numpy as np
        >>> from ldpopt import oracles
        >>> o = oracles.PooledRWS(1.0, 8, pool=16)
        >>> bool(np.abs(o.bias_given_hashes(np.full(8, 1 / 8))).max() < 1e-12)  # no bias at the uniform f
        True
        >>> bool(np.abs(o.bias_given_hashes([0.5, 0.3, 0.2, 0, 0, 0, 0, 0])).max() > 0.01)  # a skewed f
        True
        """
        f = self._check_f(f)
        return (f @ self._lag_matrix() - self.q * f.sum()) / (self.p - self.q) - f

    def variance_given_hashes(self, f, n: int) -> np.ndarray:
        """Var[f̃_v | pool] at true frequencies f with n users, exact: Σ_x n f_x π(1 − π)/(n(p − q))².

        Parameters
        ----------
        f : array_like, shape (d,)
            True frequencies, non-negative, summing to 1.
        n : int
            Users, >= 1.

        Returns
        -------
        ndarray, shape (d,)

        Raises
        ------
        ValueError
            If ``f`` is not d finite non-negative numbers or ``n`` is not a positive integer.

        Examples
        --------
        >>> import numpy as np
        >>> from ldpopt import oracles
        >>> o = oracles.PooledRWS(1.0, 8, pool=16)
        >>> f = [0.5, 0.3, 0.2, 0, 0, 0, 0, 0]
        >>> bool(np.allclose(o.variance_given_hashes(f, 1000), 2 * o.variance_given_hashes(f, 2000)))
        True
        """
        from .._validation import check_n

        f = self._check_f(f)
        n = check_n(n, "n")
        Pi = self._lag_matrix()
        return (f @ (Pi * (1 - Pi))) / (n * (self.p - self.q) ** 2)

    def _check_f(self, f) -> np.ndarray:
        f = np.asarray(f, dtype=np.float64)
        if f.shape != (self.d,) or not np.all(np.isfinite(f)) or np.any(f < 0):
            raise ValueError(f"f must be {self.d} finite non-negative frequencies, got shape {f.shape}")
        return f

    def output_distribution(self) -> np.ndarray:
        """Exact Pr[(j, y) | v], shape (d, K·d), columns pool index major, spin fastest: (1/K)·e^ε/Z if
        v ∈ (S_j + y) mod d, else (1/K)/Z.

        Returns
        -------
        ndarray, shape (d, pool·d)

        Raises
        ------
        ValueError
            If pool·d² is too large to enumerate.

        Examples
        --------
        >>> from ldpopt import oracles
        >>> P = oracles.PooledRWS(1.0, 4, k=1, pool=4).output_distribution()
        >>> P.shape, P.sum(axis=1).round(12)
        ((4, 16), array([1., 1., 1., 1.]))
        """
        den = self.k + (self.d - self.k) * math.exp(-self.epsilon)
        return np.where(self.output_supports(), 1.0 / den, math.exp(-self.epsilon) / den) / self.pool

    def output_supports(self) -> np.ndarray:
        """The support (S_j + y) mod d of each output (j, y), bool (d, K·d), in :meth:`output_distribution`'s order.

        Returns
        -------
        ndarray of bool, shape (d, pool·d)

        Raises
        ------
        ValueError
            If pool·d² is too large to enumerate.

        Examples
        --------
        >>> from ldpopt import oracles
        >>> S = oracles.PooledRWS(1.0, 8, pool=16).output_supports()
        >>> S.shape, bool((S.sum(axis=0) == 2).all())  # each output supports k = 2 values
        ((8, 128), True)
        """
        if self.pool * self.d * self.d > _MAX_ENUM_CELLS:
            raise ValueError(f"pool·d² = {self.pool * self.d * self.d} cells are too many to enumerate "
                             f"(max {_MAX_ENUM_CELLS}); use a smaller pool or d")
        S = self._table[:, : self.k].astype(np.int64)
        sup = (S[:, None, :] + np.arange(self.d)[None, :, None]) % self.d  # (K, d, k)
        out = np.zeros((self.pool, self.d, self.d), dtype=bool)
        np.put_along_axis(out, sup, True, axis=2)
        return out.reshape(self.pool * self.d, self.d).T
