"""Random Wheel Spinner, RWS (Fang, Chen & Liu, "Further Study on Frequency Estimation under Local
Differential Privacy", USENIX Security 2025; the authors' code: github.com/SEUNICK/LDP_Frequency_Protocols,
fp/RWS.py).

The protocol
------------
A user draws a seed s, which names a uniform k-subset S_s of D = {0, …, d−1} (the "wheel"), and spins:
y ∈ D is drawn with Pr[y] ∝ e^ε if y ∈ (v − S_s) mod d, ∝ 1 otherwise, i.e. Pr[y] = e^ε/(k e^ε + d − k)
or 1/(k e^ε + d − k). The report is (s, y), two integers, and it supports T = (S_s + y) mod d, the
k values u with u − y ∈ S_s. Since v ∈ T ⇔ y ∈ v − S_s, every report's likelihood depends on v only
through 1[v ∈ T], with ratio e^ε: the protocol is ε-LDP, tight.

Its law is Subset Selection's (derivation)
------------------------------------------
Pr[T = A | v] = Σ_y Pr[S = A − y]·Pr[y | S = A − y, v] = d·C(d, k)^−1·(e^ε if v ∈ A else 1)/(k e^ε + d − k),
because S = A − y is one fixed subset for each of the d values of y, and y ∈ v − (A − y) ⇔ v ∈ A. That
is exactly SS's Pr[Y = A | v] (:mod:`.subset`: e^ε/(C(d−1, k−1)e^ε + C(d−1, k)) inside, with
C(d−1, k−1) = (k/d)C(d, k) and C(d−1, k) = ((d − k)/d)C(d, k)). Hence p* = k e^ε/(k e^ε + d − k) and
q* = (k − p*)/(d − 1) (the authors' ``pure_p``, ``pure_q``: p*(k − 1)/(d − 1) + (1 − p*)k/(d − 1)
is the same number), the counts have SS(k)'s joint law, and so the fast path is SS's
(``sample_counts``, exact in joint law) and the variance is Eq. 2's, exact: RWS is SS's accuracy
with SS's report of k integers replaced by two. k minimises the mean MSE over the domain
(:func:`.reoptimized.mean_mse`) among ⌊d/(e^ε + 1)⌋ and ⌈d/(e^ε + 1)⌉ (the floor on a tie), k = 1
when d/(e^ε + 1) ≤ 1 (as the authors' code).

The seed → subset map (ldpopt's; the paper leaves it to "a seed")
-----------------------------------------------------------------
s is a uniform 64-bit key per user and S_s the k values with the smallest 64-bit words
mix64(s + (v + 1)·γ) (:func:`.hashing.keyed_words`, OLH's keyed random-function family before
``mod g``): the first k of a uniformly random permutation of D, so S_s is a uniform k-subset (up to
the 2^−64-scale chance of tied words, where numpy's argpartition decides). The authors' code draws
S with ``numpy.random.default_rng(seed).choice(d, k, replace=False)`` for seeds in [0, n); that map
is Python-per-seed and is not reproduced here: ``benchmarks/bench_rws_conformance.py`` runs their
code and compares the law, the parameters and the estimates on the supports of their reports.

Costs: ``perturb`` and ``aggregate`` hash all d values of each user (O(n·d), vectorised in blocks of
users, as OLH's aggregation); ``sample_counts`` is SS's (no per-user work). Aggregation is a sum of
per-report support indicators: counts of disjoint report sets add (shards, partials).
"""

from __future__ import annotations

import math
import numbers
from itertools import combinations
from typing import Any

import numpy as np

from .. import kernels
from .._validation import as_generator, check_values
from .base import FrequencyOracle, ReportColumn
from .hashing import keyed_reports, keyed_words
from .reoptimized import mean_mse
from .subset import SS

__all__ = ["RWS", "rws_k"]

# users × values hashed per block (2 MiB of uint64 words plus the argpartition's int64 indices)
_BLOCK_CELLS = 1 << 18
# largest d · (C(d, k)·d) the output enumeration builds
_MAX_ENUM_CELLS = 1 << 22


def rws_k(epsilon: float, d: int) -> int:
    """RWS's subset size (module docstring): of ⌊d/(e^ε + 1)⌋ and ⌈d/(e^ε + 1)⌉ the one with the
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
    """Random Wheel Spinner (Fang et al. 2025; module docstring): report (s, y), supporting
    (S_s + y) mod d, with SS(k)'s law of supports.

    Parameters
    ----------
    epsilon : float
        Privacy budget ε > 0.
    d : int
        Domain size ≥ 2.
    k : int, optional
        Subset size, 1 ≤ k < d; default :func:`rws_k`.

    p = k e^ε/(k e^ε + d − k), q = (k − p)/(d − 1).

    Reports are (m, 2) int64 arrays of rows (s, y): the 64-bit seed (its bit pattern as int64) and
    the spin y ∈ [0, d). ``sample_counts`` is SS's, exact in joint law (module docstring).

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
    structural = ("k",)
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
        """SS(k)'s (the same law of supports, module docstring); None without ``k`` in ``params``.

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

        Returns
        -------
        ndarray, shape (d + 1,)

        Examples
        --------
        >>> from ldpopt import oracles
        >>> oracles.RWS(1.0, 4, k=1).support_size_pmf()
        array([0., 1., 0., 0., 0.])
        """
        return self._law.support_size_pmf()

    def report_columns(self) -> tuple[ReportColumn, ...]:
        """``seed: int64``, ``spin: int64``.

        Returns
        -------
        tuple of ReportColumn

        Examples
        --------
        >>> from ldpopt import oracles
        >>> [c.name for c in oracles.RWS(1.0, 8).report_columns()]
        ['seed', 'spin']
        """
        return (ReportColumn("seed", "int64"), ReportColumn("spin", "int64"))

    def reports_to_columns(self, reports) -> list[np.ndarray]:
        r = np.asarray(reports, dtype=np.int64)
        return [r[:, 0], r[:, 1]]

    def reports_from_columns(self, columns) -> np.ndarray:
        return np.stack(columns, axis=1)

    # -- the seed → subset map -------------------------------------------------------------------
    def _order(self, seeds: np.ndarray) -> np.ndarray:
        """(m, d) int64: per seed, D partitioned by its words — the first k columns are S_s (any order),
        the other d − k its complement."""
        z = keyed_words(seeds[:, None], np.arange(self.d, dtype=np.int64)[None, :])
        if self.k == self.d - 1:
            return np.argsort(z, axis=1)
        return np.argpartition(z, self.k - 1, axis=1) if self.k > 1 else np.argpartition(z, 0, axis=1)

    def subsets(self, seeds) -> np.ndarray:
        """S_s for each seed, (m, k) int64 (module docstring), in blocks of seeds.

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
        """Client side: a uniform 64-bit seed s per user and the spin y (module docstring): w.p.
        p = k e^ε/(k e^ε + d − k), y = v − u for u uniform on S_s; otherwise for u uniform on D ∖ S_s.

        Parameters
        ----------
        values : array_like of int, shape (m,)
            The users' true values in [0, d).
        rng : int, numpy.random.Generator or "secure"
            Seed or generator.

        Returns
        -------
        ndarray of int64, shape (m, 2)
            Rows (s, y).

        Raises
        ------
        ValueError
            If a value is outside [0, d) or ``rng`` is not accepted.

        Examples
        --------
        >>> from ldpopt import oracles
        >>> oracles.RWS(1.0, 8).perturb([0, 7], rng=0).shape
        (2, 2)
        """
        v = check_values(values, self.d, "values")
        gen = as_generator(rng)
        m: int = v.shape[0]
        d, k = self.d, self.k
        s = gen.integers(np.iinfo(np.int64).min, np.iinfo(np.int64).max, size=m, dtype=np.int64, endpoint=True)
        inside = gen.random(m) < self.p
        # column of the partition: uniform in [0, k) inside S_s, in [k, d) outside
        col = np.where(inside, gen.integers(0, k, size=m, dtype=np.int64),
                       k + gen.integers(0, d - k, size=m, dtype=np.int64))
        y = np.empty(m, dtype=np.int64)
        step = max(1, _BLOCK_CELLS // d)
        for u0 in range(0, m, step):
            sl = slice(u0, u0 + step)
            order: np.ndarray = self._order(s[sl])
            u = order[np.arange(order.shape[0]), col[sl]]
            y[sl] = (v[sl] - u) % d
        return np.stack((s, y), axis=1)

    def _check_reports(self, reports) -> tuple[np.ndarray, np.ndarray]:
        return keyed_reports(reports, self.d, "seed", "spin")

    def aggregate(self, reports, device=None) -> np.ndarray:
        """Server side: c_v = #{reports whose support (S_s + y) mod d holds v}; the supports are built
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
        """(m, d) bool: report (s, y) supports v iff v ∈ (S_s + y) mod d.

        Parameters
        ----------
        reports
            What :meth:`perturb` returned.

        Returns
        -------
        ndarray of bool, shape (m, d)

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
        """Fast path: SS(k)'s, exact in joint law (module docstring: the same law of supports).

        Parameters
        ----------
        true_counts : array_like of int, shape (d,)
            True histogram n_v >= 0, at least one user.
        rng : int, numpy.random.Generator or "secure"

        Returns
        -------
        ndarray of int64, shape (d,)

        Raises
        ------
        ValueError
            If ``true_counts`` is not a non-negative integer vector of length d with a positive sum.

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
        """Exact Pr[(S, y) | v] of the client's output, shape (d, C(d, k)·d), columns (S, y) with S in
        lexicographic order and y fastest: C(d, k)^−1·e^ε/(k e^ε + d − k) if y ∈ (v − S) mod d, else
        C(d, k)^−1/(k e^ε + d − k) (a uniform S, then the spin; the seed only names S).

        Returns
        -------
        ndarray, shape (d, C(d, k)·d)

        Raises
        ------
        ValueError
            If the output space is too large to enumerate.

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
