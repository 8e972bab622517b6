"""Generalized Randomized Response (Wang et al. arXiv §2.2, Eq. 1)."""

from __future__ import annotations

import numpy as np

from .. import kernels
from .._validation import as_generator, check_values
from .base import FrequencyOracle, ReportColumn

__all__ = ["GRR"]


class GRR(FrequencyOracle):
    """Generalized randomized response: report the true value w.p. :math:`p = e^ε/(e^ε + d − 1)`, else a
    uniformly random other value (each w.p. :math:`q = 1/(e^ε + d − 1)`). arXiv Eq. 1; :math:`p/q = e^ε` exactly.

    Reports are the reported values (int64, one per user); the support count of v is how many
    users reported v, so the counts sum to n.

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
    >>> import numpy as np
    >>> from ldpopt import oracles
    >>> grr = oracles.GRR(epsilon=1.0, d=4)
    >>> bool(np.isclose(grr.p / grr.q, np.e))  # p/q = e^ε
    True
    >>> grr.simulate([4000, 3000, 2000, 1000], rng=0).f_tilde.round(3)
    array([0.402, 0.302, 0.216, 0.079])
    """

    name = "grr"
    kernel_devices = ("cpu", "cuda")
    likelihood = "multinomial"
    report_form = "value"
    one_cell_reports = True

    @property
    def p(self) -> float:
        # e^ε/(e^ε + d − 1) written as 1/(1 + (d − 1)e^−ε) so that ε = 50 does not overflow
        return 1.0 / (1.0 + (self.d - 1) * np.exp(-self.epsilon))

    @property
    def q(self) -> float:
        return np.exp(-self.epsilon) / (1.0 + (self.d - 1) * np.exp(-self.epsilon))

    @classmethod
    def pair_covariance(cls, p: float, q: float, d: int, params: dict) -> tuple[float, float]:
        """One value per report: t₀ = t₁ = 0, so :math:`a = −q^2`, :math:`b = −q(p − q)`.

        See ``FrequencyOracle.pair_covariance``.

        Returns
        -------
        tuple of float or None
            ``(a, b)``.

        Examples
        --------
        >>> from ldpopt import oracles
        >>> grr = oracles.GRR(1.0, 4)
        >>> a, b = grr.pair_covariance(grr.p, grr.q, 4, {})
        >>> round(float(a), 4), round(float(b), 4)  # (-q², -q(p - q))
        (-0.0306, -0.0525)
        """
        t0 = t1 = 0.0
        return t0 - q * q, t1 - t0 - q * (p - q)

    def sample_counts_batch(self, true_counts, size: int, rng: np.random.Generator) -> np.ndarray:
        """:meth:`sample_counts`'s law, ``size`` draws at once.

        See ``FrequencyOracle.sample_counts_batch``.

        Parameters
        ----------
        true_counts : array_like of int, shape (d,)
            The true histogram (already checked).
        size : int
            Number of independent draws.
        rng : numpy.random.Generator

        Examples
        --------
        >>> import numpy as np
        >>> from ldpopt import oracles
        >>> grr = oracles.GRR(1.0, 4)
        >>> C = grr.sample_counts_batch([50, 30, 15, 5], 2, np.random.default_rng(0))
        >>> C.shape, C.sum(axis=1)
        ((2, 4), array([100, 100]))
        """
        tc = np.asarray(true_counts, dtype=np.int64)
        d, n = tc.shape[0], int(tc.sum())
        kept = rng.binomial(tc, self.p - self.q, size=(size, d))
        rest = n - kept.sum(axis=1)
        return kept + rng.multinomial(rest, np.full(d, 1.0 / d))

    def channel_blocks(self) -> np.ndarray:
        """The dense d × d GRR channel (arXiv Eq. 1): p on the diagonal, q off it.

        Returns
        -------
        ndarray

        Examples
        --------
        >>> from ldpopt import oracles
        >>> oracles.GRR(1.0, 3).channel_blocks().round(3)
        array([[0.576, 0.212, 0.212],
               [0.212, 0.576, 0.212],
               [0.212, 0.212, 0.576]])
        """
        P = np.full((self.d, self.d), self.q)
        np.fill_diagonal(P, self.p)
        return P

    def support_size_pmf(self) -> np.ndarray:
        """Every report supports exactly one value: a point mass at 1.

        See ``FrequencyOracle.support_size_pmf``.

        Examples
        --------
        >>> from ldpopt import oracles
        >>> grr = oracles.GRR(1.0, 4)
        >>> grr.support_size_pmf()
        array([0., 1., 0., 0., 0.])
        """
        pmf = np.zeros(self.d + 1)
        pmf[1] = 1.0
        return pmf

    def report_columns(self) -> tuple[ReportColumn, ...]:
        """``value: int64``, the reported value in [0, d).

        See ``FrequencyOracle.report_columns``.

        Examples
        --------
        >>> from ldpopt import oracles
        >>> grr = oracles.GRR(1.0, 4)
        >>> grr.report_columns()
        (ReportColumn(name='value', kind='int64', size=0, bits=0),)
        """
        return (ReportColumn("value", "int64"),)

    def perturb(self, values, rng) -> np.ndarray:
        v = check_values(values, self.d)
        gen = as_generator(rng)
        keep = gen.random(v.shape[0]) < self.p
        # a uniform value among the d − 1 others: draw in [0, d−2] and skip over v
        other = gen.integers(0, self.d - 1, size=v.shape[0])
        other += other >= v
        return np.where(keep, v, other)

    def aggregate(self, reports, device=None) -> np.ndarray:
        r""":math:`c_v = \#\{i : y_i = v\}`, a histogram of the reports (``device``: see the base class).

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
        >>> grr = oracles.GRR(1.0, 4)
        >>> grr.aggregate([0, 1, 1, 3])
        array([1, 2, 0, 1])
        """
        return kernels.checked_histogram(reports, self.d, "reports", device)

    def support_matrix(self, reports) -> np.ndarray:
        """(m, d) bool: report i supports only the value it reports (one-hot rows).

        See ``FrequencyOracle.support_matrix``.

        Examples
        --------
        >>> from ldpopt import oracles
        >>> grr = oracles.GRR(1.0, 4)
        >>> grr.support_matrix([2, 0]).astype(int)
        array([[0, 0, 1, 0],
               [1, 0, 0, 0]])
        """
        r = check_values(reports, self.d, "reports")
        return r[:, None] == np.arange(self.d)[None, :]

    def support_columns(self, reports, values) -> np.ndarray:
        """See ``FrequencyOracle.support_columns``: a report supports only itself, O(m·len(values)).

        Examples
        --------
        >>> from ldpopt import oracles
        >>> oracles.GRR(1.0, 4).support_columns([2, 0], [0, 2]).astype(int).tolist()
        [[0, 1], [1, 0]]
        """
        r = check_values(reports, self.d, "reports")
        return r[:, None] == np.asarray(values, dtype=np.int64)[None, :]

    def sample_counts(self, true_counts, rng) -> np.ndarray:
        r"""Exact in distribution. GRR(v) equals "report v w.p. p − q, otherwise a uniform value of
        D" (then Pr[v] = p − q + (1 − p + q)/d = p since 1 − p + q = dq). So: per value, a
        :math:`\mathrm{Binomial}(n_v, p − q)` of users who keep v, and one Multinomial(n − kept, uniform on D) for the
        rest. O(d), no per-user work.

        See ``FrequencyOracle.sample_counts``.

        Returns
        -------
        ndarray of int64, shape (d,)

        Examples
        --------
        >>> from ldpopt import oracles
        >>> grr = oracles.GRR(1.0, 4)
        >>> c = grr.sample_counts([500, 300, 150, 50], rng=0)
        >>> c, int(c.sum())
        (array([296, 259, 250, 195]), 1000)
        """
        tc = self._check_true_counts(true_counts)
        gen = as_generator(rng)
        kept = gen.binomial(tc, self.p - self.q)
        rest = int(tc.sum() - kept.sum())
        return kept + gen.multinomial(rest, np.full(self.d, 1.0 / self.d))

    def output_distribution(self) -> np.ndarray:
        if self.d > 4096:
            raise ValueError(f"d = {self.d} is too large to enumerate GRR's outputs (max 4096)")
        P = np.full((self.d, self.d), self.q)
        np.fill_diagonal(P, self.p)
        return P

    def output_supports(self) -> np.ndarray:
        """Output y supports the value y alone: the identity.

        See ``FrequencyOracle.output_supports``.

        Examples
        --------
        >>> from ldpopt import oracles
        >>> oracles.GRR(1.0, 2).output_supports()
        array([[ True, False],
               [False,  True]])
        """
        return np.eye(self.d, dtype=bool)
