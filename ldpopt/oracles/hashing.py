"""Local hashing: OLH and BLH (Wang et al. arXiv §2.4; NDSS 2020 §III-B; Wang et al., USENIX
Security 2017, §4.4).

Notes: docs/notes/python.md, "ldpopt.oracles.hashing"."""

from __future__ import annotations

import math
from typing import Any, ClassVar

import numpy as np

from .. import kernels
from .._validation import _check_int, as_generator, check_values
from .base import IndependentSupports, ReportColumn

__all__ = ["BLH", "OLH", "keyed_hash", "keyed_words"]

#: largest g (default or given)
G_MAX = 1 << 30
# users·values hashed per block of the aggregator (2 MiB of uint64: stays in cache)
_BLOCK_CELLS = 1 << 18
# output-distribution enumeration limit: d × |Y| cells, |Y| = g^d · g
_ENUM_CELLS = 1 << 22

_GAMMA = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)


def _mix64_inplace(z: np.ndarray, tmp: np.ndarray) -> None:
    """z ← mix64(z) (SplitMix64's output function), in place on uint64 arrays; ``tmp`` is scratch of
    z's shape. Wrap-around mod 2^64 is intended (numpy's unsigned array arithmetic wraps silently)."""
    np.right_shift(z, np.uint64(30), out=tmp)
    z ^= tmp
    z *= _MIX1
    np.right_shift(z, np.uint64(27), out=tmp)
    z ^= tmp
    z *= _MIX2
    np.right_shift(z, np.uint64(31), out=tmp)
    z ^= tmp


def _reduce_inplace(z: np.ndarray, g: int) -> None:
    """z ← z mod g (a mask when g is a power of 2)."""
    if g & (g - 1) == 0:
        np.bitwise_and(z, np.uint64(g - 1), out=z)
    else:
        np.remainder(z, np.uint64(g), out=z)


def _as_keys(keys) -> np.ndarray:
    s = np.asarray(keys)
    return s.view(np.uint64) if s.dtype == np.int64 else s.astype(np.uint64)


def keyed_words(keys, values) -> np.ndarray:
    """mix64(s + (v + 1)·γ), the 64-bit word before ``mod g`` (module notes), broadcasting ``keys``
    (any 64-bit integers; int64 keys are read as their uint64 bit pattern) against ``values``; uint64."""
    v = np.asarray(values).astype(np.uint64)
    with np.errstate(over="ignore"):  # arithmetic mod 2^64 is the hash (numpy warns on 0-d operands)
        z = np.asarray(_as_keys(keys) + (v + np.uint64(1)) * _GAMMA)
    _mix64_inplace(z, np.empty_like(z))
    return z


def keyed_hash(keys, values, g: int) -> np.ndarray:
    r""":math:`H_s(v) = \mathrm{mix64}(s + (v + 1)·γ) \bmod g` (module notes), broadcasting ``keys`` (any 64-bit
    integers; int64 keys are read as their uint64 bit pattern) against ``values``; int64 result."""
    z = keyed_words(keys, values)
    _reduce_inplace(z, g)
    return z.astype(np.int64)


def keyed_reports(reports, bound: int, key: str, value: str) -> tuple[np.ndarray, np.ndarray]:
    """(keys, values) of reports that are (n, 2) integer rows (64-bit key, value in [0, ``bound``)),
    checked; ``key`` and ``value`` name the columns in the messages. uint64 keys are read as int64 bit
    patterns."""
    arr = np.asarray(reports)
    if arr.ndim != 2 or arr.shape[1] != 2 or arr.shape[0] == 0:
        raise ValueError(f"reports must be a non-empty (n, 2) integer array of ({key}, {value}), got shape {arr.shape}")
    if arr.dtype.kind not in "iu":
        raise ValueError(f"reports must be integers, got dtype {arr.dtype}")
    s = arr[:, 0].astype(np.uint64).view(np.int64) if arr.dtype == np.uint64 else arr[:, 0].astype(np.int64)
    r = arr[:, 1].astype(np.int64)
    if np.any(r < 0) or np.any(r >= bound):
        raise ValueError(f"reports column {value} must lie in [0, {bound})")
    return s, r


class OLH(IndependentSupports):
    r"""Optimized Local Hashing (arXiv §2.4; Wang et al. 2017 §4.4) with the keyed random-function
    hash family of the module notes.

    Parameters
    ----------
    epsilon : float
        Privacy budget ε > 0.
    d : int
        Domain size (values 0 … d−1), d ≥ 2.
    g : int, optional
        Hash range; default round(:math:`e^ε` + 1), at least 2, capped at 2³⁰. Must be an integer in
        [2, 2³⁰].

    Raises
    ------
    ValueError
        If ``epsilon``, ``d`` or ``g`` is out of range.

    Notes
    -----
    :math:`p = e^ε/(e^ε + g − 1)`, q = 1/g.

    Reports: ``perturb`` returns an (n, 2) int64 array whose rows are (s, r): the user's 64-bit hash key s
    (its bit pattern stored as int64) and the randomised hash value r ∈ [0, g).

    ``sample_counts`` draws :math:`c_v = \mathrm{Binomial}(n_v, p) + \mathrm{Binomial}(n − n_v, q)` independently over v, which
    is the exact joint law of the real protocol's counts under the random-function family (module
    notes), so ``sample_counts_exact = True``.

    Examples
    --------
    >>> from ldpopt import oracles
    >>> olh = oracles.OLH(epsilon=1.0, d=8)
    >>> olh.g, round(olh.p, 4), olh.q
    (4, 0.4754, 0.25)
    >>> olh.simulate([4000, 3000, 1000, 800, 600, 400, 150, 50], rng=0).f_tilde.round(2)
    array([0.43, 0.32, 0.08, 0.09, 0.04, 0.09, 0.02, 0.02])
    """

    name = "olh"
    kernel_devices = ("cpu", "cuda")
    structural: ClassVar[tuple[str, ...]] = ("g",)
    report_form = "hash"
    sample_counts_exact = True

    def __init__(self, epsilon: float, d: int, g: int | None = None):
        super().__init__(epsilon, d)
        if g is None:
            # round(e^ε + 1) without overflowing for large ε
            g = G_MAX if self.epsilon > math.log(G_MAX) else max(2, round(math.exp(self.epsilon) + 1))
            g = min(g, G_MAX)
        else:
            g = _check_int(g, "g", 2)
            if g > G_MAX:
                raise ValueError(f"g must be an integer in [2, 2^30], got {g}")
        self.g = int(g)

    # -- probabilities ---------------------------------------------------------------------------
    @property
    def _keep(self) -> float:
        """GRR_g keep probability p' = e^ε/(e^ε + g − 1), written to avoid overflow at ε = 50."""
        return 1.0 / (1.0 + (self.g - 1) * math.exp(-self.epsilon))

    @property
    def _move_each(self) -> float:
        """(1 − p')/(g − 1) = 1/(e^ε + g − 1), computed without cancellation."""
        return math.exp(-self.epsilon) / (1.0 + (self.g - 1) * math.exp(-self.epsilon))

    @property
    def p(self) -> float:
        return self._keep

    @property
    def q(self) -> float:
        return 1.0 / self.g

    def params(self) -> dict[str, Any]:
        return {"g": self.g, "hash_family": "H_s(v) = splitmix64(s + (v+1)*0x9E3779B97F4A7C15) mod g, "
                                            "uniform 64-bit key s per user (random function)"}

    def hashes_per_count(self) -> int:
        """``aggregate`` hashes every value for every report: d.

        See ``FrequencyOracle.hashes_per_count``.

        Examples
        --------
        >>> from ldpopt import oracles
        >>> olh = oracles.OLH(1.0, 4)
        >>> olh.hashes_per_count()
        4
        """
        return self.d

    def report_columns(self) -> tuple[ReportColumn, ...]:
        """``seed: int64``, ``hash: int64``: the user's 64-bit hash key s (bit pattern as int64) and
        r ∈ [0, g).

        See ``FrequencyOracle.report_columns``.

        Examples
        --------
        >>> from ldpopt import oracles
        >>> olh = oracles.OLH(1.0, 4)
        >>> [c.name for c in olh.report_columns()]
        ['seed', 'hash']
        """
        return (ReportColumn("seed", "int64"), ReportColumn("hash", "int64"))

    def hash(self, keys, v) -> np.ndarray:
        """:math:`H_s(v)` for int64 keys s and values v (broadcasting); see :func:`keyed_hash`.

        Parameters
        ----------
        keys : array_like of int64
            Hash keys s.
        v : array_like of int
            Values, broadcast against ``keys``.

        Returns
        -------
        ndarray of int64
            Hash values in [0, g).

        Examples
        --------
        >>> import numpy as np
        >>> from ldpopt import oracles
        >>> olh = oracles.OLH(1.0, 4)
        >>> olh.hash(np.array([7, 7, 8]), np.array([0, 1, 0]))
        array([3, 0, 2])
        """
        return keyed_hash(keys, v, self.g)

    # -- the real protocol -----------------------------------------------------------------------
    def perturb(self, values, rng) -> np.ndarray:
        r"""Each user draws a uniform 64-bit key s (their own hash function) and reports
        :math:`(s, \mathrm{GRR}_g(H_s(v)))`.

        See ``FrequencyOracle.perturb``.

        Returns
        -------
        ndarray of int64, shape (m, 2)
            Rows (s, r).

        Examples
        --------
        >>> from ldpopt import oracles
        >>> olh = oracles.OLH(1.0, 4)
        >>> olh.perturb([0, 3], rng=0).shape
        (2, 2)
        """
        v = check_values(values, self.d, "values")
        gen = as_generator(rng)
        m = v.shape[0]
        s = gen.integers(np.iinfo(np.int64).min, np.iinfo(np.int64).max, size=m, dtype=np.int64, endpoint=True)
        h = self.hash(s, v)
        keep = gen.random(m) < self._keep
        other = gen.integers(0, self.g - 1, size=m, dtype=np.int64)
        other += other >= h
        return np.stack((s, np.where(keep, h, other)), axis=1)

    def _check_reports(self, reports) -> tuple[np.ndarray, np.ndarray]:
        return keyed_reports(reports, self.g, "s", "r")

    def aggregate(self, reports, device=None) -> np.ndarray:
        r"""Support counts :math:`c_v = \#\{i : H_{s_i}(v) = r_i\}`: every user's d hashes (O(n·d); the family
        has no structure to exploit, see the module notes). ``device`` (see the base class):
        ``"numpy"`` is the reference below, in blocks of users with preallocated buffers, the same
        arithmetic as :func:`keyed_hash`; the others are :func:`ldpopt.kernels.hash_counts`.

        Parameters
        ----------
        reports
            What :meth:`perturb` returned.
        device : {None, "auto", "numpy", "cpu", "cuda"}, default None
            Who counts (:meth:`FrequencyOracle.aggregate`).

        Returns
        -------
        ndarray of int64, shape (d,)

        Examples
        --------
        >>> from ldpopt import oracles
        >>> olh = oracles.OLH(1.0, 4)
        >>> reports = olh.perturb([0, 0, 1, 3], rng=0)
        >>> olh.aggregate(reports, device="numpy")
        array([0, 0, 1, 2])
        """
        s, r = self._check_reports(reports)
        d, g = self.d, self.g
        dev = kernels.resolve(device, s.shape[0] * d)
        if dev != "numpy":
            return kernels.hash_counts(s, r, d, g, dev)
        keys, ru = _as_keys(s), r.astype(np.uint64)
        vg = np.arange(1, d + 1, dtype=np.uint64) * _GAMMA  # (v + 1)·γ mod 2^64
        step = max(1, _BLOCK_CELLS // d)
        z, tmp = np.empty((step, d), np.uint64), np.empty((step, d), np.uint64)
        hit = np.empty((step, d), bool)
        counts = np.zeros(d, dtype=np.int64)
        for u0 in range(0, keys.shape[0], step):
            m = min(step, keys.shape[0] - u0)
            zz, hh = z[:m], hit[:m]
            np.add(keys[u0:u0 + m, None], vg[None, :], out=zz)
            _mix64_inplace(zz, tmp[:m])
            _reduce_inplace(zz, g)
            np.equal(zz, ru[u0:u0 + m, None], out=hh)
            counts += np.add.reduce(hh, axis=0, dtype=np.int64)
        return counts

    # -- the fast path ---------------------------------------------------------------------------
    def sample_counts(self, true_counts, rng) -> np.ndarray:
        r""":math:`c_v = \mathrm{Binomial}(n_v, p) + \mathrm{Binomial}(n − n_v, 1/g)`, independently over v: the exact joint
        law under the random-function family (module notes). O(d).

        See ``FrequencyOracle.sample_counts``.

        Returns
        -------
        ndarray of int64, shape (d,)

        Examples
        --------
        >>> from ldpopt import oracles
        >>> olh = oracles.OLH(1.0, 4)
        >>> olh.sample_counts([500, 300, 150, 50], rng=0)
        array([367, 307, 303, 281])
        """
        tc = self._check_true_counts(true_counts)
        gen = as_generator(rng)
        n = int(tc.sum())
        return (gen.binomial(tc, self.p) + gen.binomial(n - tc, self.q)).astype(np.int64)

    # -- exact output distribution -----------------------------------------------------------------
    def _check_enumerable(self) -> None:
        if self.d * (1 << self.d) > _ENUM_CELLS:
            raise ValueError(f"output space too large to enumerate: d·2^d = {self.d * (1 << self.d)} > {_ENUM_CELLS} "
                             f"(d={self.d}); use a smaller d")

    def output_index(self, reports) -> np.ndarray:
        r"""Column of ``output_distribution`` for each report: its support set Y as the bit mask
        :math:`\sum_{u∈Y} 2^u` (only where the output space is enumerable).

        Parameters
        ----------
        reports
            What :meth:`perturb` returned.

        Returns
        -------
        ndarray of int64, shape (m,)

        Raises
        ------
        ValueError
            If :math:`d·2^d` is too large to enumerate.

        Examples
        --------
        >>> from ldpopt import oracles
        >>> olh = oracles.OLH(1.0, 4)
        >>> reports = olh.perturb([0, 1], rng=0)
        >>> olh.output_index(reports)
        array([1, 6])
        """
        self._check_enumerable()
        return self.support_matrix(reports).astype(np.int64) @ (np.int64(1) << np.arange(self.d, dtype=np.int64))

    def output_distribution(self) -> np.ndarray:
        r"""Exact Pr[Y | v] of the report's support set Y = {u : H(u) = r}, shape :math:`(d, 2^d)`, column j the
        set {u : bit u of j is 1} (the order of :meth:`output_index`).

        See ``FrequencyOracle.output_distribution``.

        Enumerating the :math:`g^d·g` reports ⟨H, r⟩ themselves is hopeless beyond tiny g; the support set
        loses nothing: :math:`\Pr[⟨H, r⟩ \mid v] = g^{−d}·(p' \text{ if } v ∈ Y \text{ else } (1 − p')/(g − 1))` depends on v only
        through :math:`1[v ∈ Y]`, so reports with the same Y have the same likelihood ratios (privacy) and
        the same contribution to the counts. For each r, the functions with :math:`H^{−1}(r) = Y` number
        :math:`(g − 1)^{d−|Y|}`, hence

        .. math::

            \Pr[Y \mid v] = g·(g − 1)^{d−|Y|}·g^{−d}·(p' \text{ if } v ∈ Y \text{ else } (1 − p')/(g − 1)).

        Returns
        -------
        ndarray, shape (d, |Y|)

        Examples
        --------
        >>> from ldpopt import oracles
        >>> P = oracles.OLH(1.0, 3).output_distribution()
        >>> P.shape, P.sum(axis=1).round(12)
        ((3, 8), array([1., 1., 1.]))
        """
        self._check_enumerable()
        S = self.support_matrix()
        size = S.sum(axis=0)
        # g^(1−d)·(g − 1)^(d−|Y|) in logs: no overflow at g = 2^30
        logw = (1 - self.d) * math.log(self.g) + (self.d - size) * math.log(self.g - 1)
        return np.where(S, self._keep, self._move_each) * np.exp(logw)[None, :]

    def support_columns(self, reports, values) -> np.ndarray:
        """See ``FrequencyOracle.support_columns``: a report (s, r) supports v where :math:`H_s(v) = r`, hashing
        only ``values``; ``reports`` is the (m, 2) int64 array :meth:`perturb` returned.

        Examples
        --------
        >>> import numpy as np
        >>> from ldpopt import oracles
        >>> olh = oracles.OLH(1.0, 50)
        >>> reports = olh.perturb(np.arange(50), rng=0)
        >>> bool(np.array_equal(olh.support_columns(reports, [3, 7]), olh.support_matrix(reports)[:, [3, 7]]))
        True
        """
        s, r = self._check_reports(reports)
        v = np.asarray(values, dtype=np.int64)
        return self.hash(s[:, None], v[None, :]) == r[:, None]

    def support_matrix(self, reports=None) -> np.ndarray:
        r"""Per-report support, bool (m, d): report (s, r) supports v iff :math:`H_s(v) = r`.

        Called without ``reports``: the :math:`(d, 2^d)` enumeration of the support sets, column j = the set
        {u : bit u of j is 1}, same column order and size limit as :meth:`output_distribution`.

        Parameters
        ----------
        reports : ndarray of int64, shape (m, 2), optional
            What :meth:`perturb` returned; None: enumerate every support set.

        Returns
        -------
        ndarray of bool, shape (m, d) or :math:`(d, 2^d)`

        Raises
        ------
        ValueError
            If the reports are malformed, or (without reports) :math:`d·2^d` is too large to enumerate.

        Examples
        --------
        >>> from ldpopt import oracles
        >>> olh = oracles.OLH(1.0, 4)
        >>> reports = olh.perturb([0, 1], rng=0)
        >>> olh.support_matrix(reports).shape, olh.support_matrix().shape
        ((2, 4), (4, 16))
        """
        if reports is not None:
            s, r = self._check_reports(reports)
            return self.hash(s[:, None], np.arange(self.d, dtype=np.int64)[None, :]) == r[:, None]
        self._check_enumerable()
        return ((np.arange(1 << self.d)[None, :] >> np.arange(self.d)[:, None]) & 1).astype(bool)

    def output_supports(self) -> np.ndarray:
        """The support sets, in the column order of :meth:`output_distribution`.

        See ``FrequencyOracle.output_supports``.

        Examples
        --------
        >>> from ldpopt import oracles
        >>> oracles.OLH(1.0, 2).output_supports()
        array([[False,  True, False,  True],
               [False, False,  True,  True]])
        """
        return self.support_matrix()


class BLH(OLH):
    """Binary Local Hashing: OLH with g = 2 (arXiv §2.4 "Random Matrix Projection … local hash with g
    fixed at 2"; Wang et al. 2017 §4.4). Same exact hash family, :math:`p = e^ε/(e^ε + 1)`.

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
    >>> blh = oracles.BLH(epsilon=1.0, d=8)
    >>> blh.g, round(blh.p, 4), blh.q
    (2, 0.7311, 0.5)
    """

    name = "blh"
    structural = ()  # g = 2 is its definition

    def __init__(self, epsilon: float, d: int):
        super().__init__(epsilon, d, g=2)
