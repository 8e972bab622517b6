"""Hadamard Response (Acharya, Sun, Zhang, AISTATS 2019 / arXiv:1802.04705; Wang et al. arXiv §2.4).

Notes: docs/notes/python.md, "ldpopt.oracles.hadamard"."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import kernels
from .._validation import as_generator, check_values
from ._hadamard_tree import tree_histogram
from .base import FrequencyOracle, ReportColumn

__all__ = ["HR", "fwht"]

# λn below which sample_counts keeps the pre-tree mixture path (seed stability; sample_counts doc)
MIXTURE_SEED_STABLE = 2_000_000

_ENUM_CELLS = 1 << 24
# per-user draws done at once in sample_counts (bounded memory)
_USER_BLOCK = 1 << 22


def fwht(x) -> np.ndarray:
    """Fast Walsh–Hadamard transform along the last axis, Sylvester (natural) order:
    returns H_K · x with H_K[r, y] = (−1)^popcount(r & y), K = x.shape[-1] a power of 2.

    Iterative butterflies, log2 K vectorised passes (O(K log K)); integer input stays integer
    (exact), float input stays float. Unnormalised, so fwht(fwht(x)) = K·x.
    """
    a = np.array(x, copy=True)
    if a.ndim == 0:
        raise ValueError("x must have at least one axis")
    if a.dtype.kind == "b":
        a = a.astype(np.int64)
    if a.dtype.kind in "iu":
        a = a.astype(np.int64)
    elif a.dtype.kind not in "fc":
        raise ValueError(f"x must be numeric, got dtype {a.dtype}")
    K = a.shape[-1]
    if K < 1 or K & (K - 1):
        raise ValueError(f"x.shape[-1] must be a power of 2, got {K}")
    shape = a.shape
    flat = a.reshape(-1, K)
    h = 1
    while h < K:
        blocks = flat.reshape(flat.shape[0], K // (2 * h), 2, h)
        top = blocks[:, :, 0, :].copy()
        blocks[:, :, 0, :] += blocks[:, :, 1, :]
        np.subtract(top, blocks[:, :, 1, :], out=blocks[:, :, 1, :])
        h *= 2
    return flat.reshape(shape)


def _parity(x: np.ndarray) -> np.ndarray:
    """popcount(x) mod 2, as int64 0/1."""
    return (np.bitwise_count(x) & 1).astype(np.int64)


class HR(FrequencyOracle):
    r"""Hadamard Response (see the module notes): :math:`p = e^ε/(e^ε + 1)`, q = 1/2.

    Reports are the outputs y ∈ [0, K) (int64, one per user), K = smallest power of 2 > d.

    ``sample_counts`` is exact in joint law (``sample_counts_exact = True``), by one of two exact
    paths. ``sample_counts_tree``, at a cost independent of n: by the mixture below, :math:`m_v \sim
    \mathrm{Binomial}(n_v, λ)` users of value v output uniformly on :math:`C_v` and the other :math:`n − \sum m` uniformly on [K]
    (row 0 of H); the histogram of all outputs is drawn by halving the Hadamard cube one bit at a time
    with the classes (row, side) merged (``_hadamard_tree``, ≈ 2(d + 1)·log2 K + 2K binomial draws);
    then the FWHT aggregation. *Choice*: the mixture rather than the sides (:math:`\mathrm{Binomial}(n_v, p)`
    users on :math:`C_v`, the rest on :math:`\bar C_v`; the same law) because the uninformative users then travel in
    row 0's one class per prefix, so the row classes hold λn users instead of n and more of their
    binomials are small, cheap bit counts (``tree_histogram`` alone at n = 10⁹, d = 42,178, ε = 1:
    0.036 → 0.023 s CPU, BENCHMARKS.md).
    O(K log K + d).

    ``sample_counts_mixture`` (the path before the tree sampler; used when λn < K·log2(K)/4) uses the
    mixture "w.p. λ = 2p − 1 = tanh(ε/2) uniform on :math:`C_v`, otherwise uniform on [K]" (indeed
    :math:`\Pr[y ∈ C_v] = λ + (1 − λ)/2 = p` and Pr[y] is constant on each side): :math:`m_v \sim \mathrm{Binomial}(n_v, λ)`
    informative users per value; the rest pooled into one :math:`\mathrm{Multinomial}(n − \sum m, \text{uniform on } [K])`; the
    informative outputs of each value are drawn exactly either per user (the :math:`C_v` sampler above,
    :math:`O(m_v)`) or as :math:`\mathrm{Multinomial}(m_v, \text{uniform on } [K])` folded onto :math:`C_v` by the same 2-to-1 map (O(K)),
    whichever is cheaper for that value (:math:`m_v > K/4`: fold). Cost :math:`O(\sum_v \min(m_v, K) + K \log K + d)`.

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
    >>> hr = oracles.HR(epsilon=1.0, d=6)
    >>> hr.K, round(hr.p, 4), hr.q
    (8, 0.7311, 0.5)
    >>> hr.simulate([4000, 3000, 1500, 800, 500, 200], rng=0).f_tilde.round(2)
    array([ 0.41,  0.31,  0.13,  0.06,  0.03, -0.  ])
    """

    name = "hr"
    kernel_devices = ("cpu", "cuda")
    likelihood = "binomial"
    report_form = "hadamard"
    one_cell_reports = True

    def __init__(self, epsilon: float, d: int):
        super().__init__(epsilon, d)
        self.K = 1 << int(self.d).bit_length()  # smallest power of 2 > d
        self._rows = np.arange(1, self.d + 1, dtype=np.int64)
        self._lsb = self._rows & -self._rows

    @property
    def p(self) -> float:
        # e^ε/(e^ε + 1) = 1/(1 + e^−ε): no overflow at ε = 50
        return 1.0 / (1.0 + math.exp(-self.epsilon))

    @property
    def q(self) -> float:
        return 0.5

    def params(self) -> dict[str, Any]:
        return {"K": self.K}

    def chunk_size(self) -> int:
        # one int64 per user whatever d is; each aggregate call costs O(K log K)
        return 1 << 22

    def support_size_pmf(self) -> np.ndarray:
        r"""Not one law: :math:`|C_y ∩ \{0, …, d−1\}|` differs per output y, so a genuine report has no fixed size law.

        See ``FrequencyOracle.support_size_pmf``.

        Raises
        ------
        ValueError
            Always (see above).

        Examples
        --------
        >>> from ldpopt import oracles
        >>> hr = oracles.HR(1.0, 6)
        >>> hr.support_size_pmf()
        Traceback (most recent call last):
        ...
        ValueError: HR reports have no single genuine size law (|C_y| depends on y); no size test
        """
        raise ValueError("HR reports have no single genuine size law (|C_y| depends on y); no size test")

    def report_columns(self) -> tuple[ReportColumn, ...]:
        """``y: int64``: the output y ∈ [0, K), K = 2^⌈log2(d+1)⌉.

        See ``FrequencyOracle.report_columns``.

        Examples
        --------
        >>> from ldpopt import oracles
        >>> hr = oracles.HR(1.0, 6)
        >>> hr.report_columns()
        (ReportColumn(name='y', kind='int64', size=0, bits=0),)
        """
        return (ReportColumn("y", "int64"),)

    # -- the real protocol -----------------------------------------------------------------------
    def _to_side(self, v: np.ndarray, y: np.ndarray, inside: np.ndarray) -> np.ndarray:
        """Map uniform y ∈ [K] to a uniform element of :math:`C_v` (inside) or of its complement."""
        row = v + 1
        in_cv = _parity(row & y) == 0
        return np.where(in_cv == inside, y, y ^ (row & -row))

    def perturb(self, values, rng) -> np.ndarray:
        v = check_values(values, self.d, "values")
        gen = as_generator(rng)
        m: int = v.shape[0]  # an int, so the checker types the draws as arrays
        inside = gen.random(m) < self.p
        y = gen.integers(0, self.K, size=m, dtype=np.int64)
        return self._to_side(v, y, inside)

    def _counts_from_histogram(self, N: np.ndarray) -> np.ndarray:
        n = int(N.sum())
        F = fwht(N)
        return (n + F[1:self.d + 1]) // 2  # n + F is even: it is twice a count

    def aggregate(self, reports, device=None) -> np.ndarray:
        """:math:`c_v = (n + (H·N)_{v+1})/2` from the output histogram N (module notes); ``device``
        (see the base class) counts N, the FWHT runs on the CPU.

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
        >>> hr = oracles.HR(1.0, 6)
        >>> hr.aggregate([0, 1, 5, 7])
        array([1, 3, 2, 2, 3, 3])
        """
        return self._counts_from_histogram(kernels.checked_histogram(reports, self.K, "reports", device))

    def support_matrix(self, reports) -> np.ndarray:
        """(m, d) bool: output y supports v iff :math:`y ∈ C_v`, i.e. H[v+1, y] = +1.

        See ``FrequencyOracle.support_matrix``.

        Examples
        --------
        >>> from ldpopt import oracles
        >>> hr = oracles.HR(1.0, 6)
        >>> hr.support_matrix([0, 1]).astype(int)
        array([[1, 1, 1, 1, 1, 1],
               [0, 1, 0, 1, 0, 1]])
        """
        y = check_values(reports, self.K, "reports")
        return _parity(self._rows[None, :] & y[:, None]) == 0

    def aggregate_naive(self, reports) -> np.ndarray:
        r"""Reference aggregator: :math:`c_v = \#\{i : H[v+1, y_i] = +1\}` by direct evaluation (O(n·d)); for tests.

        Parameters
        ----------
        reports : array_like of int, shape (m,)
            Outputs y in [0, K).

        Returns
        -------
        ndarray of int64, shape (d,)

        Examples
        --------
        >>> from ldpopt import oracles
        >>> hr = oracles.HR(1.0, 6)
        >>> reports = hr.perturb([0, 1, 2, 5, 5], rng=0)
        >>> bool((hr.aggregate_naive(reports) == hr.aggregate(reports)).all())
        True
        """
        y = check_values(reports, self.K, "reports")
        return (_parity(self._rows[None, :] & y[:, None]) == 0).sum(axis=0).astype(np.int64)

    # -- the fast path ---------------------------------------------------------------------------
    def sample_counts(self, true_counts, rng) -> np.ndarray:
        """Exact in joint law: the tree path (``sample_counts_tree``, cost independent of n)
        unless the mixture path's per-user work λn is below K·log2(K)/4, where it is the cheaper of
        the two (measured crossover λn ≈ (0.15–0.6)·K·log2 K at d = 42,178 and 1,024; the choice
        depends on the inputs only, and both paths have the same law).

        See ``FrequencyOracle.sample_counts``.

        *Choice*: the mixture is also kept whenever λn < ``MIXTURE_SEED_STABLE`` (2·10⁶), so seeded
        draws at the sizes of every published result (the experiment sweep's n ≤ 10⁶) are the same
        numbers as before the tree existed and REPRODUCTION.md's HR rows reproduce bit for bit; the
        price is bounded: ≤ 0.07 s CPU at d = 42,178, λn = 2·10⁶ (the tree: 0.02 s).

        Returns
        -------
        ndarray of int64, shape (d,)

        Examples
        --------
        >>> from ldpopt import oracles
        >>> hr = oracles.HR(1.0, 6)
        >>> hr.sample_counts([500, 300, 150, 50, 0, 0], rng=0)
        array([605, 551, 528, 532, 507, 503])
        """
        tc = self._check_true_counts(true_counts)
        lam_n = math.tanh(self.epsilon / 2.0) * float(tc.sum())
        if lam_n < max(self.K * math.log2(self.K) / 4, MIXTURE_SEED_STABLE):
            return self.sample_counts_mixture(tc, rng)
        return self.sample_counts_tree(tc, rng)

    def sample_counts_tree(self, true_counts, rng) -> np.ndarray:
        r"""Exact in joint law, cost independent of n: :math:`m_v \sim \mathrm{Binomial}(n_v, λ)` users uniform on :math:`C_v`, the
        rest uniform on [K] (the mixture, class docstring), then the output histogram by
        ``_hadamard_tree.tree_histogram`` (≈ 2(d + 1)·log2 K + 2K binomial draws), then the FWHT
        aggregation.

        Parameters
        ----------
        true_counts : array_like of int, shape (d,)
            True histogram :math:`n_v ≥ 0`, at least one user.
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
        >>> hr = oracles.HR(1.0, 6)
        >>> hr.sample_counts_tree([500, 300, 150, 50, 0, 0], rng=0)
        array([634, 558, 542, 482, 504, 502])
        """
        tc = self._check_true_counts(true_counts)
        gen = as_generator(rng)
        K, d = self.K, self.d
        # the mixture of the class docstring: m_v ~ Binomial(n_v, λ) users uniform on C_v, the rest
        # uniform on [K], i.e. row 0's (+) class; no user starts on a (−) side
        informative = np.zeros(K, dtype=np.int64)
        informative[1:d + 1] = gen.binomial(tc, math.tanh(self.epsilon / 2.0))
        informative[0] = int(tc.sum()) - int(informative.sum())
        return self._counts_from_histogram(tree_histogram(informative, np.zeros(K, dtype=np.int64), gen))

    def sample_counts_mixture(self, true_counts, rng) -> np.ndarray:
        r"""The pre-tree exact path: the reference of the tree in the tests, and ``sample_counts`` at small
        λn; the mixture and its :math:`O(\sum_v \min(m_v, K))` cost are in the class docstring (2.8 s at
        n = 10⁹, d = 42,178).

        Parameters
        ----------
        true_counts : array_like of int, shape (d,)
            True histogram :math:`n_v ≥ 0`, at least one user.
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
        >>> hr = oracles.HR(1.0, 6)
        >>> hr.sample_counts_mixture([500, 300, 150, 50, 0, 0], rng=0)
        array([605, 551, 528, 532, 507, 503])
        """
        tc = self._check_true_counts(true_counts)
        gen = as_generator(rng)
        K = self.K
        lam = math.tanh(self.epsilon / 2.0)  # 2p − 1 without cancellation at small ε
        m = gen.binomial(tc, lam)
        total_m = int(m.sum())
        uniform = np.full(K, 1.0 / K)
        N = gen.multinomial(int(tc.sum()) - total_m, uniform).astype(np.int64)
        # Each value's informative outputs are drawn independently, by whichever exact sampler is
        # cheaper *for that value*: per user (O(m_v)) or one Multinomial(m_v, uniform [K]) folded onto
        # C_v (O(K)). An earlier version used one rule for all values (total m vs d·K/4) sent n = 10⁹ down
        # the per-user path: 4.6·10⁸ draws, 78 s at d = 42,178.
        fold = m > K // 4
        small = np.flatnonzero(~fold)
        ms = m[small]
        ends = np.cumsum(ms)
        total_s = int(ends[-1]) if ends.size else 0
        for start in range(0, total_s, _USER_BLOCK):
            stop = min(total_s, start + _USER_BLOCK)
            v = small[np.searchsorted(ends, np.arange(start, stop), side="right")]
            y = gen.integers(0, K, size=stop - start, dtype=np.int64)
            N += np.bincount(self._to_side(v, y, np.ones(v.shape[0], dtype=bool)), minlength=K)
        big = np.flatnonzero(fold)
        ys = np.arange(K, dtype=np.int64)
        block = max(1, _USER_BLOCK // K)
        for b0 in range(0, big.shape[0], block):
            idx = big[b0:b0 + block]
            M = gen.multinomial(m[idx], uniform)  # (B, K)
            rows = self._rows[idx, None]
            target = np.where(_parity(rows & ys[None, :]) == 0, ys[None, :], ys[None, :] ^ self._lsb[idx, None])
            N += np.bincount(target.ravel(), weights=M.ravel(), minlength=K).astype(np.int64)
        return self._counts_from_histogram(N)

    # -- exact output distribution -----------------------------------------------------------------
    def output_index(self, reports) -> np.ndarray:
        """Column of ``output_distribution`` for each report (the output y itself).

        Parameters
        ----------
        reports
            What :meth:`perturb` returned.

        Returns
        -------
        ndarray of int64, shape (m,)

        Examples
        --------
        >>> from ldpopt import oracles
        >>> hr = oracles.HR(1.0, 6)
        >>> hr.output_index([3, 0, 7])
        array([3, 0, 7])
        """
        return check_values(reports, self.K, "reports")

    def output_distribution(self) -> np.ndarray:
        """Pr[y | v] = 2p/K on :math:`C_v`, 2(1 − p)/K off it; shape (d, K).

        See ``FrequencyOracle.output_distribution``.

        Returns
        -------
        ndarray, shape (d, |Y|)

        Examples
        --------
        >>> from ldpopt import oracles
        >>> oracles.HR(1.0, 3).output_distribution().round(3)
        array([[0.366, 0.134, 0.366, 0.134],
               [0.366, 0.366, 0.134, 0.134],
               [0.366, 0.134, 0.134, 0.366]])
        """
        if self.d * self.K > _ENUM_CELLS:
            raise ValueError(f"output space too large to enumerate: d·K = {self.d * self.K} > {_ENUM_CELLS}")
        ys = np.arange(self.K, dtype=np.int64)
        in_cv = _parity(self._rows[:, None] & ys[None, :]) == 0
        # 2(1 − p) = 2e^−ε/(1 + e^−ε) directly, no cancellation
        return np.where(in_cv, 2.0 * self.p / self.K,
                        2.0 * math.exp(-self.epsilon) / (1.0 + math.exp(-self.epsilon)) / self.K)

    def output_supports(self) -> np.ndarray:
        """Output y supports v iff :math:`y ∈ C_v` (the row of v has even parity with y), shape (d, K).

        See ``FrequencyOracle.output_supports``.

        Examples
        --------
        >>> from ldpopt import oracles
        >>> oracles.HR(1.0, 3).output_supports().astype(int)
        array([[1, 0, 1, 0],
               [1, 1, 0, 0],
               [1, 0, 0, 1]])
        """
        rows = np.arange(1, self.d + 1, dtype=np.int64)[:, None]
        return (np.bitwise_count(rows & np.arange(self.K, dtype=np.int64)[None, :]) & 1) == 0
