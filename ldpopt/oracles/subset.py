"""Subset Selection (Wang et al. arXiv §2.4; Ye & Barg 2018; Wang et al. 2016, "Mutual information
optimally local private discrete distribution estimation").

Notes: docs/notes/python.md, "ldpopt.oracles.subset"."""

from __future__ import annotations

import math
import numbers

import numpy as np

from .. import kernels
from .._validation import as_generator, check_values
from .base import FrequencyOracle, ReportColumn
from .subset_counts import sample_subset_counts

__all__ = ["SS"]

# bytes of the per-user membership bitmap in one block of users (keeps it in cache)
_BITMAP_BYTES = 1 << 23
# fewest users per Floyd block (numpy call overhead per step otherwise dominates at large d)
_MIN_BLOCK = 512
# cells (users × k) of reports per chunk on the real path (int64: 16 MiB)
_REPORT_CELLS = 1 << 21
# largest d · C(d, k) for which output_distribution enumerates the k-subsets
_MAX_ENUM_CELLS = 1 << 24


def _floyd(gen: np.random.Generator, m: int, d: int, start, steps: int) -> np.ndarray:
    """Floyd's algorithm for m users at once: column r of the (steps, m) result is a uniform
    ``steps``-subset of {0, …, start_r + steps − 1} (distinct entries, in draw order).

    ``start`` is an int or an (m,) int array (≥ 0, start + steps ≤ d). A step draws t uniform on
    {0, …, j}; if t is already in the set, j is added instead (j is never in it yet). The result is
    laid out step-major so each step writes one contiguous row.
    """
    out = np.empty((steps, m), dtype=np.int64)
    seen = np.zeros(m * d, dtype=bool)
    rowoff = np.arange(m, dtype=np.int64) * d
    scalar = np.ndim(start) == 0
    for i in range(steps):
        j = start + i
        # 32-bit bounded integers (Lemire's method, exact) are ~2x faster than 64-bit ones
        t = gen.integers(0, j + 1, size=m, dtype=np.int32) if scalar else gen.integers(0, j + 1, dtype=np.int32)
        t = t + rowoff
        new = np.where(seen[t], j + rowoff, t)
        seen[new] = True
        np.subtract(new, rowoff, out=out[i])
    return out


class SS(FrequencyOracle):
    r"""Subset Selection: each user reports a k-subset Y with :math:`\Pr[Y] ∝ e^ε` if :math:`v ∈ Y` else 1.

    :math:`p = k e^ε/(k e^ε + d − k)`, q = (k − p)/(d − 1) (derivation in the module notes).

    Reports are (m, k) int64 arrays, one k-subset of {0, …, d−1} per row (distinct entries, no
    particular order); the support count of v is the number of rows containing v.

    ``sample_counts`` is exact in joint law (``sample_counts_exact = True``): it draws the number of
    users of each value taking the "{v} ∪ (k−1)-subset" component, then the column sums of all the
    uniform subsets by recursive halving of the domain with hypergeometric splits of users' need
    histograms (:mod:`.subset_counts`), never per user once n is large. :math:`\sum_v c_v = n k` exactly, as in
    the real protocol, and the counts have its (negative) covariances.

    Parameters
    ----------
    epsilon : float
        Privacy budget ε > 0.
    d : int
        Domain size ≥ 2.
    k : int, optional
        Subset size, 1 ≤ k < d. Default max(1, round(:math:`d/(e^ε + 1)`)), the variance-minimising size
        (arXiv §2.4: "k should be an integer equal or close to :math:`d/(e^ε+1)`"); Python's round (ties to
        even) decides the rare exact halves.

    Raises
    ------
    ValueError
        If ``epsilon``, ``d`` or ``k`` is out of range.

    Examples
    --------
    >>> from ldpopt import oracles
    >>> ss = oracles.SS(epsilon=1.0, d=8)
    >>> ss.k, round(ss.p, 4), round(ss.q, 4)
    (2, 0.4754, 0.2178)
    >>> est = ss.simulate([4000, 3000, 1000, 800, 600, 400, 150, 50], rng=0)
    >>> est.f_tilde.round(2), int(est.counts.sum())  # the counts sum to n k
    (array([ 0.41,  0.34,  0.08,  0.06,  0.06,  0.02,  0.04, -0.  ]), 20000)
    """

    name = "ss"
    kernel_devices = ("cpu", "cuda")
    structural = ("k",)
    likelihood = "binomial"
    report_form = "subset"

    def __init__(self, epsilon: float, d: int, k: int | None = None):
        super().__init__(epsilon, d)
        if k is None:
            # d/(e^ε + 1) = d e^−ε/(1 + e^−ε): no overflow at large ε; < d/2 so k <= d − 1
            e = math.exp(-self.epsilon)
            k = max(1, round(self.d * e / (1.0 + e)))
        else:
            if isinstance(k, bool) or not isinstance(k, numbers.Real) or not float(k).is_integer():
                raise ValueError(f"k must be an integer with 1 <= k < d = {self.d}, got {k!r}")
            k = int(k)
            if not 1 <= k < self.d:
                raise ValueError(f"k must be an integer with 1 <= k < d = {self.d}, got {k}")
        self.k = int(k)

    def params(self) -> dict:
        return {"k": self.k}

    @classmethod
    def pair_covariance(cls, p: float, q: float, d: int, params: dict) -> tuple[float, float] | None:
        """A uniform k-subset holding the own value w.p. p: t₁ = p(k − 1)/(d − 1), t₀ = [p(k − 1)(k − 2)
        + (1 − p)k(k − 1)] / ((d − 1)(d − 2)); None without ``k`` in ``params``.

        See ``FrequencyOracle.pair_covariance``.

        Returns
        -------
        tuple of float or None
            ``(a, b)``.

        Examples
        --------
        >>> from ldpopt import oracles
        >>> ss = oracles.SS(1.0, 8, k=2)
        >>> a, b = ss.pair_covariance(ss.p, ss.q, 8, ss.params())
        >>> round(float(a), 4), round(float(b), 4)
        (-0.0225, -0.0132)
        >>> ss.pair_covariance(ss.p, ss.q, 8, {}) is None  # k unknown
        True
        """
        k = params.get("k")
        if k is None:
            return None
        t1 = p * (k - 1) / (d - 1)
        t0 = (p * (k - 1) * (k - 2) + (1 - p) * k * (k - 1)) / ((d - 1) * (d - 2)) if d > 2 else 0.0
        return t0 - q * q, t1 - t0 - q * (p - q)

    def support_size_pmf(self) -> np.ndarray:
        """Every report supports exactly k values: a point mass at k.

        See ``FrequencyOracle.support_size_pmf``.

        Examples
        --------
        >>> from ldpopt import oracles
        >>> ss = oracles.SS(1.0, 8, k=2)
        >>> ss.support_size_pmf()
        array([0., 0., 1., 0., 0., 0., 0., 0., 0.])
        """
        pmf = np.zeros(self.d + 1)
        pmf[self.k] = 1.0
        return pmf

    def report_columns(self) -> tuple[ReportColumn, ...]:
        """``subset: fixed_size_list<int64>[k]``: the reported k-subset of [0, d).

        See ``FrequencyOracle.report_columns``.

        Examples
        --------
        >>> from ldpopt import oracles
        >>> ss = oracles.SS(1.0, 8, k=2)
        >>> ss.report_columns()
        (ReportColumn(name='subset', kind='int64_list', size=2, bits=0),)
        """
        return (ReportColumn("subset", "int64_list", self.k),)

    # -- probabilities (written with e^−ε so that ε up to 50 neither overflows nor cancels) ------
    @property
    def _denominator(self) -> float:
        return self.k + (self.d - self.k) * math.exp(-self.epsilon)  # (k e^ε + d − k)/e^ε

    @property
    def p(self) -> float:
        return self.k / self._denominator

    @property
    def _one_minus_p(self) -> float:
        return (self.d - self.k) * math.exp(-self.epsilon) / self._denominator

    @property
    def q(self) -> float:
        # (k − p)/(d − 1) = (k − 1 + (1 − p))/(d − 1): no cancellation when p ≈ 1
        return (self.k - 1 + self._one_minus_p) / (self.d - 1)

    @property
    def mixture_weight(self) -> float:
        """:math:`λ = k(e^ε − 1)/(k e^ε + d − k)`: weight of the "{v} ∪ (k−1)-subset" component.

        Examples
        --------
        >>> from ldpopt import oracles
        >>> ss = oracles.SS(1.0, 8, k=2)
        >>> round(ss.mixture_weight, 4)
        0.3005
        """
        return self.k * -math.expm1(-self.epsilon) / self._denominator

    # -- real protocol ---------------------------------------------------------------------------
    def chunk_size(self) -> int:
        """Users per chunk on the real path: reports of 2²¹ cells (m × k, 16 MiB), but at least
        _MIN_BLOCK users so that Floyd's per-step numpy calls stay long enough at large k.

        See ``FrequencyOracle.chunk_size``.

        Examples
        --------
        >>> from ldpopt import oracles
        >>> ss = oracles.SS(1.0, 8, k=2)
        >>> ss.chunk_size()
        1048576
        """
        return max(_MIN_BLOCK, _REPORT_CELLS // self.k)

    def _block_users(self) -> int:
        # bitmap of block × d bytes: ~8 MiB, at least _MIN_BLOCK users (≈ 22 MB at d = 42,178)
        return max(_MIN_BLOCK, _BITMAP_BYTES // self.d)

    def perturb(self, values, rng) -> np.ndarray:
        """Client side: one k-subset per user, shape (m, k), int64 (exact, see module notes).

        See ``FrequencyOracle.perturb``.

        Returns
        -------
        ndarray of int64, shape (m, k)

        Examples
        --------
        >>> from ldpopt import oracles
        >>> ss = oracles.SS(1.0, 8, k=2)
        >>> ss.perturb([0, 1, 7], rng=0).shape
        (3, 2)
        """
        v = check_values(values, self.d)
        gen = as_generator(rng)
        m = v.shape[0]
        out = np.empty((m, self.k), dtype=np.int64)
        step = self._block_users()
        for start in range(0, m, step):
            vb = v[start: start + step]
            out[start: start + step] = self._perturb_block(vb, gen)
        return out

    def _perturb_block(self, v: np.ndarray, gen: np.random.Generator) -> np.ndarray:
        d, k = self.d, self.k
        m: int = v.shape[0]  # an int, so the checker types gen.random(m) as an array
        mixed = gen.random(m) < self.mixture_weight  # component "{v} ∪ (k−1)-subset of D∖{v}"
        if 2 * k <= d:
            # Floyd with N − s = d − k for both components: component 2 (uniform k-subset of D)
            # uses all k steps, component 1 the first k − 1 (a uniform (k−1)-subset of {0..d−2})
            y = _floyd(gen, m, d, d - k, k).T
            rows = np.flatnonzero(mixed)
            if rows.size:
                part = y[rows, : k - 1]
                part += part >= v[rows, None]  # {0..d−2} → D∖{v}
                y[rows, : k - 1] = part
                y[rows, k - 1] = v[rows]
            # a set, sent sorted: the order of the draws would show where v was put (last, in the
            # component that includes it) and leak it beyond ε
            return np.sort(y, axis=1)
        # k > d/2: draw the complement Z (d − k elements) and report D∖Z. Component 1's complement is
        # a uniform (d−k)-subset of D∖{v} (Floyd start (d−1) − (d−k) = k − 1), component 2's a uniform
        # (d−k)-subset of D (start k)
        s = d - k
        z = _floyd(gen, m, d, k - mixed.astype(np.int64), s).T
        z += mixed[:, None] & (z >= v[:, None])
        member = np.ones((m, d), dtype=bool)
        member[np.arange(m)[:, None], z] = False
        return np.nonzero(member)[1].reshape(m, k)

    def aggregate(self, reports, device=None) -> np.ndarray:
        """Server side: :math:`c_v` = number of reports (rows) containing v, a histogram of the flattened
        subsets (``device``: see the base class). Checks that every row is a set of k distinct
        integers in [0, d).

        Parameters
        ----------
        reports
            What :meth:`perturb` returned.
        device : {None, "auto", "numpy", "cpu", "cuda"}, default None
            Who counts (:meth:`FrequencyOracle.aggregate`).

        Returns
        -------
        ndarray of int64, shape (d,)

        Raises
        ------
        ValueError
            If the reports are not (m, k) distinct integers in [0, d) per row or the device is unknown.

        Examples
        --------
        >>> from ldpopt import oracles
        >>> ss = oracles.SS(1.0, 8, k=2)
        >>> ss.aggregate([[0, 1], [1, 7], [2, 1]])
        array([1, 3, 1, 0, 0, 0, 0, 1])
        """
        arr = reports if isinstance(reports, np.ndarray) else np.asarray(reports)
        dev = kernels.resolve(device, arr.size)
        if dev == "cpu" and arr.ndim == 2 and arr.shape[0] and arr.shape[1] == self.k and arr.dtype == np.int64:
            counts, bad = kernels.subset_counts_checked(arr, self.d)
            if not bad:
                return counts  # every check of _check_reports passed inside the count
        r = self._check_reports(arr).reshape(-1).astype(np.int64, copy=False)
        return kernels.histogram(r, self.d, dev)

    def support_matrix(self, reports) -> np.ndarray:
        """(m, d) bool: report i supports v iff v is in its subset.

        See ``FrequencyOracle.support_matrix``.

        Examples
        --------
        >>> from ldpopt import oracles
        >>> ss = oracles.SS(1.0, 8, k=2)
        >>> ss.support_matrix([[0, 1], [7, 2]]).astype(int)
        array([[1, 1, 0, 0, 0, 0, 0, 0],
               [0, 0, 1, 0, 0, 0, 0, 1]])
        """
        r = self._check_reports(reports)
        out = np.zeros((r.shape[0], self.d), dtype=bool)
        out[np.arange(r.shape[0])[:, None], r] = True
        return out

    def _check_reports(self, reports) -> np.ndarray:
        r = np.asarray(reports)
        if r.ndim != 2 or r.shape[1] != self.k or r.shape[0] < 1:
            raise ValueError(f"reports must have shape (m >= 1, k = {self.k}), got {r.shape}")
        if r.dtype.kind not in "iu":
            raise ValueError(f"reports must be integers in [0, {self.d}), got dtype {r.dtype}")
        lo, hi = int(r.min()), int(r.max())
        if lo < 0 or hi >= self.d:
            raise ValueError(f"reports must be integers in [0, {self.d}); found {lo if lo < 0 else hi}")
        if self.k > 1:
            # distinct ⇔ marking each row's values in a per-row bitmap sets m·k distinct cells
            step = max(1, _BITMAP_BYTES // self.d)
            for start in range(0, r.shape[0], step):
                block = r[start: start + step]
                mb = block.shape[0]
                seen = np.zeros(mb * self.d, dtype=bool)
                seen[(np.arange(mb, dtype=np.int64) * self.d)[:, None] + block] = True
                if np.count_nonzero(seen) != mb * self.k:
                    ok = seen.reshape(mb, self.d).sum(axis=1) == self.k
                    row = start + int(np.flatnonzero(~ok)[0])
                    raise ValueError(f"reports must hold k distinct values per row; row {row} repeats one")
        return r

    def sample_counts(self, true_counts, rng) -> np.ndarray:
        """Fast path, exact in joint law (see the class docstring and :mod:`.subset_counts`). Cost
        O(d·spread) per level of a binary tree over D, independent of n once n is large.

        See ``FrequencyOracle.sample_counts``.

        Returns
        -------
        ndarray of int64, shape (d,)

        Examples
        --------
        >>> from ldpopt import oracles
        >>> ss = oracles.SS(1.0, 8, k=2)
        >>> c = ss.sample_counts([500, 300, 150, 50, 0, 0, 0, 0], rng=0)
        >>> c, int(c.sum())
        (array([325, 292, 284, 245, 199, 210, 230, 215]), 2000)
        """
        tc = self._check_true_counts(true_counts)
        return sample_subset_counts(as_generator(rng), self.d, self.k, self.mixture_weight, tc)

    # -- exact output distribution -----------------------------------------------------------------
    def subsets(self) -> np.ndarray:
        """All C(d, k) k-subsets in lexicographic order, shape (C(d, k), k): the column order of
        :meth:`output_distribution`. Only for small d (same limit).

        Returns
        -------
        ndarray of int64, shape (C(d, k), k)

        Raises
        ------
        ValueError
            If C(d, k) is too large to enumerate.

        Examples
        --------
        >>> from ldpopt import oracles
        >>> oracles.SS(1.0, 4, k=2).subsets()
        array([[0, 1],
               [0, 2],
               [0, 3],
               [1, 2],
               [1, 3],
               [2, 3]])
        """
        total = math.comb(self.d, self.k)
        if total * self.d > _MAX_ENUM_CELLS:
            raise ValueError(f"C(d, k) = C({self.d}, {self.k}) = {total} subsets are too many to "
                             f"enumerate (need d·C(d, k) <= {_MAX_ENUM_CELLS})")
        from itertools import combinations

        return np.array(list(combinations(range(self.d), self.k)), dtype=np.int64).reshape(total, self.k)

    def output_distribution(self) -> np.ndarray:
        """Exact Pr[Ψ(v) = Y], shape (d, C(d, k)), columns in the order of :meth:`subsets`:
        :math:`p/C(d−1, k−1)` if :math:`v ∈ Y`, :math:`(1 − p)/C(d−1, k)` otherwise.

        See ``FrequencyOracle.output_distribution``.

        Returns
        -------
        ndarray, shape (d, |Y|)

        Examples
        --------
        >>> from ldpopt import oracles
        >>> oracles.SS(1.0, 4, k=2).output_distribution().round(3)
        array([[0.244, 0.244, 0.244, 0.09 , 0.09 , 0.09 ],
               [0.244, 0.09 , 0.09 , 0.244, 0.244, 0.09 ],
               [0.09 , 0.244, 0.09 , 0.244, 0.09 , 0.244],
               [0.09 , 0.09 , 0.244, 0.09 , 0.244, 0.244]])
        """
        sets = self.subsets()
        member = np.zeros((self.d, sets.shape[0]), dtype=bool)
        member[sets.T, np.arange(sets.shape[0])] = True
        inside = self.p / math.comb(self.d - 1, self.k - 1)
        outside = self._one_minus_p / math.comb(self.d - 1, self.k)
        return np.where(member, inside, outside)

    def output_supports(self) -> np.ndarray:
        """Output Y supports the values in Y, shape (d, C(d, k)), columns in the order of :meth:`subsets`.

        See ``FrequencyOracle.output_supports``.

        Examples
        --------
        >>> from ldpopt import oracles
        >>> oracles.SS(1.0, 4, k=2).output_supports().astype(int)
        array([[1, 1, 1, 0, 0, 0],
               [1, 0, 0, 1, 1, 0],
               [0, 1, 0, 1, 0, 1],
               [0, 0, 1, 0, 1, 1]])
        """
        sets = self.subsets()
        member = np.zeros((self.d, sets.shape[0]), dtype=bool)
        member[sets.T, np.arange(sets.shape[0])] = True
        return member
