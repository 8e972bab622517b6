r"""Apple's Hadamard Count Mean Sketch (HCMS) as a frequency oracle (Apple's Differential Privacy
Team, "Learning with Privacy at Scale", 2017, §3: the Hadamard variant of the client and the
server's inverse transform; equation numbers not checked, the paper is not in the papers folder).

Notes: docs/notes/sketches.md, "ldpopt.oracles.hcms"."""

from __future__ import annotations

import math

import numpy as np

from .. import kernels
from .._validation import as_generator, check_values
from .base import ReportColumn
from .cms import SketchOracle
from .hadamard import fwht

__all__ = ["HCMS"]


def _sign(l, t) -> np.ndarray:
    """H[l, t] = (−1)^popcount(l & t), int64 ±1, broadcasting."""
    return 1 - 2 * (np.bitwise_count(np.asarray(l, dtype=np.int64) & np.asarray(t, dtype=np.int64)) & 1).astype(np.int64)


class HCMS(SketchOracle):
    """Apple's Hadamard Count Mean Sketch (module notes).

    Parameters as :class:`~ldpopt.oracles.cms.CMS` (k default 64, m default 1024, a power of 2).

    Parameters
    ----------
    epsilon : float
        Privacy budget ε > 0.
    d : int
        Domain size.
    k, m : int, optional
        Hash functions (default 64) and buckets (default 1024, a power of 2).
    hash_seed : int, default 0
        Seed of the fixed hash family.
    buckets : int array (k, d), optional
        Another implementation's family as its table :math:`h_l(v)`.

    Raises
    ------
    ValueError
        ``m`` not a power of 2, or bad parameters (as :class:`~ldpopt.oracles.cms.CMS`).

    Notes
    -----
    Reports: ``perturb`` returns an (n, 3) int64 array of rows (j, l, y), y ∈ {−1, +1}. Apple's
    Differential Privacy Team, "Learning with Privacy at Scale", 2017 (module notes).

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt.oracles.hcms import HCMS
    >>> sketch = HCMS(2.0, 8, k=4, m=16, hash_seed=0)
    >>> reports = sketch.perturb(np.repeat(np.arange(8), [40, 30, 10, 10, 5, 3, 2, 0]), rng=0)
    >>> sketch.aggregate(reports)
    array([65, 67, 57, 64, 53, 51, 48, 58])
    """

    name = "hcms"

    def report_columns(self) -> tuple[ReportColumn, ...]:
        """``j: int64``, ``l: int64``, ``y: int64``: the hash index, the Hadamard row l ∈ [0, m) and
        the sign y ∈ {−1, +1}.

        See ``FrequencyOracle.report_columns``.

        Examples
        --------
        >>> import numpy as np
        >>> from ldpopt.oracles.hcms import HCMS
        >>> sketch = HCMS(2.0, 8, k=4, m=16, hash_seed=0)
        >>> reports = sketch.perturb(np.repeat(np.arange(8), [40, 30, 10, 10, 5, 3, 2, 0]), rng=0)
        >>> [column.name for column in sketch.report_columns()]
        ['j', 'l', 'y']
        """
        return tuple(ReportColumn(c, "int64") for c in ("j", "l", "y"))

    def __init__(self, epsilon: float, d: int, k: int | None = None, m: int | None = None, hash_seed: int = 0,
                 buckets=None):
        super().__init__(epsilon, d, k=k, m=m, hash_seed=hash_seed, buckets=buckets)
        if self.m & (self.m - 1):
            raise ValueError(f"m must be a power of 2 for HCMS, got {self.m}")

    @property
    def p(self) -> float:
        """Pr[a report supports its own value] = :math:`1/(1 + e^{−ε})` (the pure view, module notes).

        Examples
        --------
        >>> import numpy as np
        >>> from ldpopt.oracles.hcms import HCMS
        >>> sketch = HCMS(2.0, 8, k=4, m=16, hash_seed=0)
        >>> reports = sketch.perturb(np.repeat(np.arange(8), [40, 30, 10, 10, 5, 3, 2, 0]), rng=0)
        >>> round(sketch.p, 4)
        0.8808
        """
        return 1.0 / (1.0 + math.exp(-self.epsilon))

    @property
    def q(self) -> float:
        """Pr[a report supports another value] over the family: p/m + (1 − 1/m)/2.

        Examples
        --------
        >>> import numpy as np
        >>> from ldpopt.oracles.hcms import HCMS
        >>> sketch = HCMS(2.0, 8, k=4, m=16, hash_seed=0)
        >>> reports = sketch.perturb(np.repeat(np.arange(8), [40, 30, 10, 10, 5, 3, 2, 0]), rng=0)
        >>> round(sketch.q, 4)
        0.5238
        """
        return self.p / self.m + (1.0 - 1.0 / self.m) / 2.0

    @property
    def c_epsilon(self) -> float:
        """Apple's :math:`c_ε = (e^ε + 1)/(e^ε − 1)`.

        Examples
        --------
        >>> import numpy as np
        >>> from ldpopt.oracles.hcms import HCMS
        >>> sketch = HCMS(2.0, 8, k=4, m=16, hash_seed=0)
        >>> reports = sketch.perturb(np.repeat(np.arange(8), [40, 30, 10, 10, 5, 3, 2, 0]), rng=0)
        >>> round(sketch.c_epsilon, 4)
        1.313
        """
        return 1.0 / math.tanh(self.epsilon / 2)

    def chunk_size(self) -> int:
        """Reports per block when HCMS reports are simulated or aggregated in blocks: 2²⁰ (its
        reports are three integers each).

        Returns
        -------
        int

        Examples
        --------
        >>> import numpy as np
        >>> from ldpopt.oracles.hcms import HCMS
        >>> sketch = HCMS(2.0, 8, k=4, m=16, hash_seed=0)
        >>> reports = sketch.perturb(np.repeat(np.arange(8), [40, 30, 10, 10, 5, 3, 2, 0]), rng=0)
        >>> sketch.chunk_size()
        1048576
        """
        return 1 << 20

    # -- the real protocol -----------------------------------------------------------------------
    def perturb(self, values, rng) -> np.ndarray:
        """Each user's report: a uniform hash index j, a uniform Hadamard row l and the sign
        :math:`H[l, h_j(v)]`, kept w.p. :math:`p = e^ε/(1 + e^ε)` and flipped otherwise.

        Parameters
        ----------
        values : array_like of int
            Users' values in [0, d).
        rng : int, numpy.random.Generator or "secure"
            The randomness.

        Returns
        -------
        ndarray of int64, shape (n, 3)
            Rows (j, l, y).

        Raises
        ------
        ValueError
            Values out of range.

        Examples
        --------
        >>> import numpy as np
        >>> from ldpopt.oracles.hcms import HCMS
        >>> sketch = HCMS(2.0, 8, k=4, m=16, hash_seed=0)
        >>> reports = sketch.perturb(np.repeat(np.arange(8), [40, 30, 10, 10, 5, 3, 2, 0]), rng=0)
        >>> reports.shape, sorted(set(reports[:, 2].tolist()))
        ((100, 3), [-1, 1])
        """
        v = check_values(values, self.d, "values")
        gen = as_generator(rng)
        n = v.shape[0]
        j = gen.integers(0, self.k, size=n, dtype=np.int64)
        l = gen.integers(0, self.m, size=n, dtype=np.int64)
        b = np.where(gen.random(n) < self.p, 1, -1)
        return np.stack((j, l, b * _sign(l, self.buckets[j, v])), axis=1)

    def _check_shape(self, reports) -> np.ndarray:
        r = np.asarray(reports)
        if r.ndim != 2 or r.shape[1] != 3 or r.shape[0] == 0 or r.dtype.kind not in "iu":
            raise ValueError(f"reports must be a non-empty (n, 3) integer array of (j, l, y), got shape {r.shape}")
        return r

    def _check_reports(self, reports) -> np.ndarray:
        r = self._check_shape(reports).astype(np.int64)
        if np.any((r[:, 0] < 0) | (r[:, 0] >= self.k)) or np.any((r[:, 1] < 0) | (r[:, 1] >= self.m)):
            raise ValueError(f"reports: j must lie in [0, {self.k}) and l in [0, {self.m})")
        if np.any(np.abs(r[:, 2]) != 1):
            raise ValueError("reports: y must be -1 or +1")
        return r

    def sketch(self, reports, device=None) -> tuple[np.ndarray, np.ndarray]:
        r"""(z, N): :math:`z[j, l] = \sum y` over reports with (j, l) (int64 (k, m)), N[j] = #{reports with j}.
        ``device``: "numpy" (the reference: one ``bincount``), "cpu" (one fused pass with the checks,
        :func:`ldpopt.kernels.sketch.signed_cell_sums`) or None/"auto" (the kernel for large inputs when
        Numba is installed); the same sketch either way.

        Parameters
        ----------
        reports : ndarray, shape (n, 3)
            Rows (j, l, y).
        device : str, optional
            As above.

        Returns
        -------
        z : ndarray of int64, shape (k, m)
        N : ndarray of int64, shape (k,)

        Raises
        ------
        ValueError
            Malformed reports, or ``device="cuda"``.

        Examples
        --------
        >>> import numpy as np
        >>> from ldpopt.oracles.hcms import HCMS
        >>> sketch = HCMS(2.0, 8, k=4, m=16, hash_seed=0)
        >>> reports = sketch.perturb(np.repeat(np.arange(8), [40, 30, 10, 10, 5, 3, 2, 0]), rng=0)
        >>> z, N = sketch.sketch(reports)
        >>> z.shape, N
        ((4, 16), array([19, 25, 33, 23]))
        """
        r = self._check_shape(reports)
        dev = kernels.resolve(device, r.size)  # report entries, as the histogram kernel counts them
        if dev == "cuda":
            raise ValueError("device: the HCMS sketch runs on 'numpy' or 'cpu', not 'cuda'")
        if dev == "cpu" and r.dtype == np.int64:
            from ..kernels.sketch import signed_cell_sums

            z, N, bad = signed_cell_sums(r, self.k, self.m)
            if not bad:
                return z, N
        r = self._check_reports(r)  # raises the precise error for a bad row
        # one integer count per (j, l, sign): the +1s minus the −1s, exact and without float weights
        c = np.bincount((r[:, 0] * self.m + r[:, 1]) * 2 + (r[:, 2] > 0), minlength=2 * self.k * self.m)
        z = (c[1::2] - c[0::2]).reshape(self.k, self.m)
        return z, np.bincount(r[:, 0], minlength=self.k).astype(np.int64)

    def counts_from_sketch(self, z, N, device: str = "numpy") -> np.ndarray:
        r"""Support counts :math:`c_v = (n + \sum_j (H z_j)[h_j(v)])/2` (exact int64); the transform on numpy or,
        with ``device="cpu"``, :func:`ldpopt.kernels.sketch.fwht_rows` (the same integers).

        Parameters
        ----------
        z : array_like, shape (k, m)
            The sketch.
        N : array_like, shape (k,)
            Reports per hash index.
        device : str, default "numpy"
            "numpy" or "cpu".

        Returns
        -------
        ndarray of int64, shape (d,)

        Raises
        ------
        ValueError
            ``z`` of the wrong shape.

        Examples
        --------
        >>> import numpy as np
        >>> from ldpopt.oracles.hcms import HCMS
        >>> sketch = HCMS(2.0, 8, k=4, m=16, hash_seed=0)
        >>> reports = sketch.perturb(np.repeat(np.arange(8), [40, 30, 10, 10, 5, 3, 2, 0]), rng=0)
        >>> sketch.counts_from_sketch(*sketch.sketch(reports))
        array([65, 67, 57, 64, 53, 51, 48, 58])
        """
        if device == "cpu":
            from ..kernels.sketch import fwht_rows

            T = fwht_rows(z)
        else:
            T = fwht(np.asarray(z, dtype=np.int64))
        if T.shape != (self.k, self.m):
            raise ValueError(f"z must have shape (k, m) = ({self.k}, {self.m}), got {T.shape}")
        n = int(np.asarray(N).sum())
        return (n + self._gather(T)) // 2

    def sketch_matrix(self, z, N=None) -> np.ndarray:
        """Apple's transformed matrix :math:`M H^T` with :math:`M = k c_ε z`.

        Parameters
        ----------
        z : array_like, shape (k, m)
            The sketch.
        N : array_like, optional
            Not used.

        Returns
        -------
        ndarray of float64, shape (k, m)

        Examples
        --------
        >>> import numpy as np
        >>> from ldpopt.oracles.hcms import HCMS
        >>> sketch = HCMS(2.0, 8, k=4, m=16, hash_seed=0)
        >>> reports = sketch.perturb(np.repeat(np.arange(8), [40, 30, 10, 10, 5, 3, 2, 0]), rng=0)
        >>> sketch.sketch_matrix(sketch.sketch(reports)[0]).shape
        (4, 16)
        """
        return self.k * self.c_epsilon * fwht(np.asarray(z, dtype=np.float64))

    def aggregate(self, reports, device=None) -> np.ndarray:
        """Support counts from the reports through the sketch (``device`` as in :meth:`sketch`) and
        one Walsh–Hadamard transform (on the same device).

        Parameters
        ----------
        reports : ndarray, shape (n, 3)
            Rows (j, l, y).
        device : str, optional
            As in :meth:`sketch`.

        Returns
        -------
        ndarray of int64, shape (d,)

        Raises
        ------
        ValueError
            Malformed reports.

        Examples
        --------
        >>> import numpy as np
        >>> from ldpopt.oracles.hcms import HCMS
        >>> sketch = HCMS(2.0, 8, k=4, m=16, hash_seed=0)
        >>> reports = sketch.perturb(np.repeat(np.arange(8), [40, 30, 10, 10, 5, 3, 2, 0]), rng=0)
        >>> sketch.aggregate(reports)
        array([65, 67, 57, 64, 53, 51, 48, 58])
        """
        r = self._check_shape(reports)
        dev = kernels.resolve(device, r.size)
        return self.counts_from_sketch(*self.sketch(r, dev), device=dev)

    def support_matrix(self, reports=None) -> np.ndarray:
        """Which values each report supports: :math:`y·H[l, h_j(v)] = +1` (bool (n, d)); with no reports,
        :meth:`output_supports`.

        Parameters
        ----------
        reports : ndarray, shape (n, 3), optional
            Rows (j, l, y).

        Returns
        -------
        ndarray of bool

        Examples
        --------
        >>> import numpy as np
        >>> from ldpopt.oracles.hcms import HCMS
        >>> sketch = HCMS(2.0, 8, k=4, m=16, hash_seed=0)
        >>> reports = sketch.perturb(np.repeat(np.arange(8), [40, 30, 10, 10, 5, 3, 2, 0]), rng=0)
        >>> bool((sketch.support_matrix(reports).sum(axis=0) == sketch.aggregate(reports)).all())
        True
        """
        if reports is None:
            return self.output_supports()
        r = self._check_reports(reports)
        return (r[:, 2:3] * _sign(r[:, 1:2], self.buckets[r[:, 0]])) == 1

    # -- the fast path ---------------------------------------------------------------------------
    def sample_sketch(self, true_counts, rng) -> tuple[np.ndarray, np.ndarray]:
        """(z, N) drawn from their exact joint law (module notes).

        Parameters
        ----------
        true_counts : array_like of int, shape (d,)
            Users per value.
        rng : int or numpy.random.Generator
            The randomness.

        Returns
        -------
        z : ndarray of int64, shape (k, m)
        N : ndarray of int64, shape (k,)

        Examples
        --------
        >>> import numpy as np
        >>> from ldpopt.oracles.hcms import HCMS
        >>> sketch = HCMS(2.0, 8, k=4, m=16, hash_seed=0)
        >>> reports = sketch.perturb(np.repeat(np.arange(8), [40, 30, 10, 10, 5, 3, 2, 0]), rng=0)
        >>> z, N = sketch.sample_sketch([40, 30, 10, 10, 5, 3, 2, 0], rng=0)
        >>> z.shape, int(N.sum())
        ((4, 16), 100)
        """
        tc = self._check_true_counts(true_counts)
        gen = as_generator(rng)
        A, N = self._row_buckets(tc, gen)
        jj, tt = np.nonzero(A)
        a = A[jj, tt]
        plus = gen.binomial(a, self.p)
        uniform = np.full(self.m, 1.0 / self.m)
        D = gen.multinomial(plus, uniform) - gen.multinomial(a - plus, uniform)  # (R, m)
        D *= _sign(np.arange(self.m)[None, :], tt[:, None])
        z = np.zeros((self.k, self.m), dtype=np.int64)
        np.add.at(z, jj, D)
        return z, N

    # -- variance ----------------------------------------------------------------------------------
    def _per_user_second_moment(self, A, f):
        c = self.c_epsilon
        return c * c * f.sum() - A.multiply(A) @ f

    def _expected_second_moment(self, f):
        c, m, k = self.c_epsilon, self.m, self.k
        tot = f.sum()
        ea2 = 1 / m ** 2 + (1 / m) * (1 - 1 / m) / k  # E a² over the family, x ≠ v
        return c * c * tot - f - ea2 * (tot - f)

    # -- exact output distribution -------------------------------------------------------------------
    def _outputs(self) -> np.ndarray:
        """Every output (j, l, y) in column order (j·m + l)·2 + [y = +1], as an (|Y|, 3) array."""
        self._check_enumerable(2 * self.k * self.m)
        idx = np.arange(2 * self.k * self.m)
        return np.stack((idx // (2 * self.m), (idx // 2) % self.m, 2 * (idx % 2) - 1), axis=1)

    def output_distribution(self) -> np.ndarray:
        """Exact Pr[(j, l, y) | v], shape (d, 2km) (column order of :meth:`_outputs`).

        Returns
        -------
        ndarray, shape (d, 2km)

        Raises
        ------
        ValueError
            Too many outputs to enumerate.

        Examples
        --------
        >>> from ldpopt.oracles.hcms import HCMS
        >>> P = HCMS(2.0, 3, k=2, m=2).output_distribution()
        >>> P.shape, P.sum(axis=1).round(12)
        ((3, 8), array([1., 1., 1.]))
        """
        out = self._outputs()
        agree = out[:, 2][None, :] == _sign(out[:, 1][None, :], self.buckets[out[:, 0]].T)
        return np.where(agree, self.p, 1.0 - self.p) / (self.k * self.m)

    def output_supports(self) -> np.ndarray:
        """S(y) for every output column of :meth:`output_distribution`, bool (d, |Y|).

        Returns
        -------
        ndarray of bool, shape (d, 2km)

        Examples
        --------
        >>> from ldpopt.oracles.hcms import HCMS
        >>> HCMS(2.0, 3, k=2, m=2).output_supports().shape
        (3, 8)
        """
        return self.support_matrix(self._outputs()).T
