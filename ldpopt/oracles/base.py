"""The interface every frequency oracle implements (a pure frequency oracle, Wang et al. arXiv §2.4).

Notes: docs/notes/python.md, "ldpopt.oracles.base"."""

from __future__ import annotations

import abc
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np

from .._validation import as_generator, check_counts, check_domain_size, check_epsilon, check_n, check_values
from ..estimate import Estimate
from ..noise import CountCovariance, NoiseSource

__all__ = ["REPORT_FORMS", "FrequencyOracle", "IndependentSupports", "ReportColumn"]

# Budget for one chunk of the real path: users per chunk × d (bits or hash evaluations) ≈ this.
_CHUNK_CELLS = 1 << 24

#: the report forms an oracle may declare (``FrequencyOracle.report_form``); the attacks and detectors
#: of :mod:`ldpopt.robust` are written once per form, not per oracle:
#:
#: * ``"value"``: a report is one value y ∈ [0, d) (int64) and supports exactly {y};
#: * ``"unary"``: a report is d bits packed as ``np.packbits`` rows (uint8 (m, ⌈d/8⌉)), supporting its set bits;
#: * ``"hash"``: a report is (key s, bucket y) with OLH's keyed hash H_s into g buckets (int64 (m, 2)),
#:   supporting {v : H_s(v) = y};
#: * ``"subset"``: a report is a k-subset of [0, d) (int64 (m, k)), supporting its members;
#: * ``"hadamard"``: HR's output y ∈ [0, K), supporting the values of Hadamard row y's (+) set.
REPORT_FORMS = ("value", "unary", "hash", "subset", "hadamard")


@dataclass(frozen=True)
class ReportColumn:
    """One column of an oracle's Parquet report shard (:mod:`ldpopt.aggregate.shards`).

    ``kind``: ``"int64"`` (one integer per report), ``"bytes"`` (``size`` bytes per report, a uint8
    (m, size) array) or ``"int64_list"`` (``size`` integers per report, an int64 (m, size) array).
    ``bits`` > 0 on a ``"bytes"`` column: the report holds ``bits`` booleans per row, which the shard
    packs (``np.packbits``) into its ⌈bits/8⌉ bytes."""

    name: str
    kind: str
    size: int = 0
    bits: int = 0

    def __post_init__(self):
        if self.kind not in ("int64", "bytes", "int64_list"):
            raise ValueError(f"kind must be 'int64', 'bytes' or 'int64_list', got {self.kind!r}")
        if self.kind != "int64" and (not isinstance(self.size, int) or self.size < 1):
            raise ValueError(f"size must be an integer >= 1 for a {self.kind!r} column, got {self.size!r}")
        if self.bits and (self.kind != "bytes" or not isinstance(self.bits, int) or self.size != (self.bits + 7) // 8):
            raise ValueError(f"bits must be an integer with size = ceil(bits/8) on a 'bytes' column, got "
                             f"bits={self.bits!r}, size={self.size!r}, kind={self.kind!r}")


def _column_of(column: ReportColumn, part) -> np.ndarray:
    """One report part as its shard column's array (a ``bits`` column packed)."""
    if column.bits:
        return np.packbits(np.asarray(part, dtype=bool), axis=1)
    return np.asarray(part, dtype=np.uint8 if column.kind == "bytes" else np.int64)


def _part_of(column: ReportColumn, array) -> np.ndarray:
    """The inverse of :func:`_column_of`."""
    return np.unpackbits(array, axis=1, count=column.bits).view(bool) if column.bits else array


def support_blocks(p: float, q: float, d: int) -> np.ndarray:
    """The support channel of a pure oracle with (p, q) (arXiv §2.4), (d, 2, d): component u reports 1
    w.p. p if u = v else q."""
    one = np.where(np.eye(int(d), dtype=bool), p, q)  # (u, v)
    return np.stack([1.0 - one, one], axis=1)


class FrequencyOracle(NoiseSource):
    """Base class: an ε-LDP frequency oracle on the domain {0, …, d−1}, a source of noisy counts
    (:class:`ldpopt.noise.NoiseSource`: its support counts' law, covariance, likelihood and privacy).

    Subclasses set ``name`` and implement ``p``, ``q``, ``perturb``, ``aggregate``,
    ``support_matrix``, ``sample_counts`` and ``output_distribution``. Everything else a feature
    needs to know about an oracle is asked of it here, never decided from its name; the optional
    capabilities below default to "not supported" (a one-line ``ValueError`` naming the oracle) or
    to the generic path. ``ldpopt.conformance.oracles.check_oracle`` tests an oracle against them.

    Parameters
    ----------
    epsilon : float
        Privacy budget ε, finite and > 0.
    d : int
        Domain size, >= 2.

    Raises
    ------
    ValueError
        If ``epsilon`` or ``d`` is out of range (the message names it).
    TypeError
        If ``epsilon`` is not a real number.

    References
    ----------
    Wang et al., *Consistent and Accurate Frequency Oracles under LDP* (arXiv), §2.4 (pure oracles).

    Examples
    --------
    >>> from ldpopt import oracles
    >>> grr = oracles.get("grr", epsilon=1.0, d=4)
    >>> isinstance(grr, oracles.FrequencyOracle), grr.pure
    (True, True)
    >>> est = grr.simulate([400, 300, 200, 100], rng=0)
    >>> est.n, est.f_tilde.round(2)
    (1000, array([0.37, 0.29, 0.26, 0.08]))
    """

    name: ClassVar[str]
    #: the display name in figures and tables (default: the registry name in capitals, set per subclass;
    #: an instance may carry its own: a wrapped peer client, :class:`ldpopt.interop.audit_peers.PeerClient`)
    label: str
    #: whether ``sample_counts`` draws exactly from the joint distribution of the real protocol's
    #: counts (True for every oracle in ldpopt; kept for third-party subclasses)
    sample_counts_exact: ClassVar[bool] = True
    #: a pure oracle (arXiv §2.4: Eq. 2 exact); False for the sketch oracles (one fixed public hash
    #: family, their estimate biased by its collisions), which the registry-wide checks skip
    pure: ClassVar[bool] = True
    #: the same users report over rounds with a permanent state (:mod:`.longitudinal`): ``epsilon`` is
    #: what any number of reports of one value reveal, one report reveals less (``epsilon_first``), and
    #: ``clients``/``sample_rounds`` run the rounds; the registry lists them apart (``available``)
    longitudinal: ClassVar[bool] = False
    #: the constructor parameters that change what a support count means, beyond ε and d (OLH: g,
    #: SS: k); a partial, a shard header and an estimate's meta record them (:meth:`structural_params`)
    structural: ClassVar[tuple[str, ...]] = ()
    #: the exact likelihood of the counts for EM (:mod:`ldpopt.methods.em`): ``"multinomial"`` (one
    #: value per report, the counts sum to n), ``"binomial"`` (every :math:`c_v` a sum of independent
    #: per-user support indicators: per-bit composite) or None (EM must be told)
    likelihood: ClassVar[str | None] = None
    #: how a report looks and what it supports, one of :data:`REPORT_FORMS`, or None; the maximal
    #: gain and adaptive attacks and the per-report detectors of :mod:`ldpopt.robust` are keyed by it
    report_form: ClassVar[str | None] = None
    #: whether ``aggregate`` counts one histogram cell per report (GRR's values, HR's outputs): in record
    #: batches below the kernels' ``AUTO_CELLS`` reports, device "auto" counts them with numpy
    one_cell_reports: ClassVar[bool] = False
    #: the devices besides "numpy" that ``aggregate`` counts on with :mod:`ldpopt.kernels` (the same
    #: counts bit for bit); an oracle of its own that counts with numpy only leaves it empty
    kernel_devices: ClassVar[tuple[str, ...]] = ()

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "label" not in cls.__dict__ and isinstance(cls.__dict__.get("name"), str):
            cls.label = cls.name.upper()

    def __init__(self, epsilon: float, d: int):
        self.epsilon = check_epsilon(epsilon, "epsilon")
        self.d = check_domain_size(d, "d")

    # -- probabilities and variance ------------------------------------------------------------
    @property
    @abc.abstractmethod
    def p(self) -> float:
        """Pr[a report supports the user's own value].

        Examples
        --------
        >>> from ldpopt import oracles
        >>> round(float(oracles.get("grr", 1.0, 4).p), 4)  # e / (e + 3)
        0.4754
        """

    @property
    @abc.abstractmethod
    def q(self) -> float:
        """Pr[a report supports a given other value].

        Examples
        --------
        >>> from ldpopt import oracles
        >>> round(float(oracles.get("grr", 1.0, 4).q), 4)  # 1 / (e + 3)
        0.1749
        """

    def variance(self, f, n: int) -> np.ndarray:
        r""":math:`\mathrm{Var}[\tilde f_v]` at true frequency :math:`f_v` (arXiv Eq. 2/5): :math:`(q(1−q) + f_v(p−q)(1−p−q)) / (n(p−q)^2)`.

        Parameters
        ----------
        f : float or array_like
            True frequencies (a scalar or an array broadcastable to (d,)).
        n : int
            Number of users, >= 1.

        Returns
        -------
        ndarray
            The variance, with the broadcast shape of ``f``.

        Raises
        ------
        ValueError
            If ``n`` is not an integer >= 1.

        Examples
        --------
        >>> from ldpopt import oracles
        >>> oue = oracles.get("oue", 1.0, 8)
        >>> oue.variance([0.0, 0.5], n=1000).round(6)
        array([0.003683, 0.004183])
        """
        n = check_n(n, "n")
        f = np.asarray(f, dtype=np.float64)
        p, q = self.p, self.q
        return (q * (1 - q) + f * (p - q) * (1 - p - q)) / (n * (p - q) ** 2)

    def approx_variance(self, n: int) -> float:
        """:math:`σ^2 = q(1−q) / (n(p−q)^2)`, arXiv Eq. 7 (the :math:`f_v` term of Eq. 2 dropped); for a general channel
        (``count_covariance`` states report moments: a designed strategy, MSS) the mean of its exact
        per-value variances at the uniform distribution, as ``Estimate.sigma2``.

        Parameters
        ----------
        n : int
            Number of users, >= 1.

        Returns
        -------
        float

        Raises
        ------
        ValueError
            If ``n`` is not an integer >= 1.

        Examples
        --------
        >>> from ldpopt import oracles
        >>> round(oracles.get("oue", 1.0, 8).approx_variance(1000), 6)
        0.003683
        """
        n = check_n(n, "n")
        cov = self.count_covariance(n, self.d)
        if cov.moments is not None:   # a general channel: its exact moments, not Eq. 7 at stand-in (p, q)
            return float(np.mean(cov.variance(1.0 / self.d)))
        return self.q * (1 - self.q) / (n * (self.p - self.q) ** 2)

    # -- estimation --------------------------------------------------------------------------
    def estimate(self, counts, n: int, **meta) -> Estimate:
        """Turn aggregated support counts into an :class:`~ldpopt.Estimate` (f̃ = (c/n − q)/(p − q)).

        Parameters
        ----------
        counts : array_like, shape (d,)
            Support counts :math:`c_v` in [0, n] (non-integers accepted: RAPPOR's multiples of 1/h).
        n : int
            Number of users (reports), >= 1.
        **meta
            Stored in ``Estimate.meta`` after :meth:`params`.

        Returns
        -------
        Estimate

        Raises
        ------
        ValueError
            If ``n`` is not an integer >= 1, ``counts`` has the wrong length, or a count is negative,
            not finite or above ``n``.

        Examples
        --------
        >>> from ldpopt import oracles
        >>> est = oracles.get("grr", 1.0, 4).estimate([46, 30, 15, 9], 100)
        >>> est.oracle, est.f_tilde.round(3)
        ('grr', array([ 0.949,  0.416, -0.083, -0.282]))
        """
        n = check_n(n, "n")
        c = check_counts(counts, "counts", d=self.d, integral=False)
        if np.any(c > n):
            bad = int(np.flatnonzero(c > n)[0])
            raise ValueError(f"counts must be <= n = {n}; entry {bad} is {c[bad]!r}")
        return Estimate.from_counts(c, n, self.epsilon, self.p, self.q, oracle=self.name,
                                    **{**self.params(), **meta})

    def params(self) -> dict[str, Any]:
        """Oracle parameters beyond ε and d (e.g. ``g`` for OLH); stored in ``Estimate.meta``.

        Returns
        -------
        dict

        Examples
        --------
        >>> from ldpopt import oracles
        >>> oracles.get("grr", 1.0, 4).params(), oracles.get("olh", 1.0, 4).params()["g"]
        ({}, 4)
        """
        return {}

    def structural_params(self) -> dict[str, Any]:
        """The parameters that change what a count means (:attr:`structural`), by name: what a
        partial or a shard records so that only like counts are added.

        Returns
        -------
        dict

        Examples
        --------
        >>> from ldpopt import oracles
        >>> oracles.get("ss", 1.0, 8).structural_params()
        {'k': 2}
        """
        return {k: getattr(self, k) for k in self.structural}

    @classmethod
    def from_estimate(cls, estimate: Estimate) -> FrequencyOracle:
        """The oracle of ``estimate``'s configuration: its ε, d and the :attr:`structural` parameters
        its meta holds (a missing one takes the constructor's default).

        Parameters
        ----------
        estimate : Estimate
            An estimate this class produced (its meta holds the structural parameters).

        Returns
        -------
        FrequencyOracle

        Examples
        --------
        >>> from ldpopt import oracles
        >>> est = oracles.get("olh", 1.0, 8, g=3).simulate([10] * 8, rng=0)
        >>> olh = oracles.OLH.from_estimate(est)
        >>> olh.epsilon, olh.d, olh.g
        (1.0, 8, 3)
        """
        extra = {k: estimate.meta[k] for k in cls.structural if k in estimate.meta}
        return cls(epsilon=estimate.epsilon, d=estimate.d, **extra)

    @property
    def count_scale(self) -> int:
        """What the support counts are multiplied by to be integers: 1 (RAPPOR: its h).

        Examples
        --------
        >>> from ldpopt import oracles
        >>> oracles.get("oue", 1.0, 8).count_scale
        1
        """
        return 1

    def hashes_per_count(self) -> int:
        """Hashes evaluated per report by ``aggregate`` (OLH, BLH: every value's, d), or 0: counting is
        not hashing. Sizes the map tasks of :mod:`ldpopt.aggregate.dask`.

        Returns
        -------
        int

        Examples
        --------
        >>> from ldpopt import oracles
        >>> oracles.get("oue", 1.0, 8).hashes_per_count(), oracles.get("olh", 1.0, 8).hashes_per_count()
        (0, 8)
        """
        return 0

    # -- covariance structure and batched draws ------------------------------------------------
    @classmethod
    def pair_covariance(cls, p: float, q: float, d: int, params: dict) -> tuple[float, float] | None:
        r"""(a, b) with :math:`\mathrm{Cov}(c_v, c_w)/n = a + b(f_v + f_w)` for :math:`v ≠ w` (``ldpopt.uncertainty.analytic``),
        for an oracle with probabilities ``p``, ``q`` on d values and parameters ``params`` (an
        estimate's meta); None when the covariance is not of that form or a parameter is missing.

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
            ``(a, b)``; the base class returns None.

        Examples
        --------
        >>> from ldpopt import oracles
        >>> grr = oracles.get("grr", 1.0, 4)
        >>> a, b = grr.pair_covariance(grr.p, grr.q, 4, {})
        >>> round(float(a), 4), round(float(b), 4)
        (-0.0306, -0.0525)
        """
        return None

    def sample_counts_batch(self, true_counts, size: int, rng: np.random.Generator) -> np.ndarray:
        """(size, d) int64 support counts, each row an independent draw of :meth:`sample_counts`
        (``true_counts`` already checked). The default draws them one by one; an oracle whose law
        vectorises over draws overrides it.

        Parameters
        ----------
        true_counts : array_like of int, shape (d,)
            The true histogram (not checked again).
        size : int
            Number of independent draws.
        rng : numpy.random.Generator

        Returns
        -------
        ndarray of int64, shape (size, d)

        Examples
        --------
        >>> import numpy as np
        >>> from ldpopt import oracles
        >>> C = oracles.get("oue", 1.0, 4).sample_counts_batch([50, 30, 15, 5], 3, np.random.default_rng(0))
        >>> C.shape, C.dtype
        ((3, 4), dtype('int64'))
        """
        tc = np.asarray(true_counts, dtype=np.int64)
        return np.stack([self.sample_counts(tc, rng) for _ in range(size)])

    # -- the robust layer's questions ----------------------------------------------------------
    def support_size_pmf(self) -> np.ndarray:
        """Pr[|S(y)| = s], s = 0 … d, of a genuine report's support size (the size test of
        :mod:`ldpopt.robust.detect`). Optional.

        Returns
        -------
        ndarray, shape (d + 1,)

        Raises
        ------
        ValueError
            If the oracle has no size law (the base class, HR, RAPPOR).

        Examples
        --------
        >>> from ldpopt import oracles
        >>> oracles.get("oue", 1.0, 4).support_size_pmf().round(3)
        array([0.195, 0.411, 0.295, 0.089, 0.01 ])
        """
        raise ValueError(f"no size law for oracle {self.name!r}")

    # -- shards --------------------------------------------------------------------------------
    def report_columns(self) -> tuple[ReportColumn, ...]:
        """The columns of this oracle's Parquet report shard (:mod:`ldpopt.aggregate.shards`), one row
        per report. Optional: an oracle without them cannot be written to or read from shards.

        Returns
        -------
        tuple of ReportColumn

        Raises
        ------
        ValueError
            If the oracle has no Parquet report schema.

        Examples
        --------
        >>> from ldpopt import oracles
        >>> oracles.get("oue", 1.0, 4).report_columns()
        (ReportColumn(name='bits', kind='bytes', size=1, bits=0),)
        """
        raise ValueError(f"oracle {self.name!r} has no Parquet report schema")

    def reports_to_columns(self, reports) -> list[np.ndarray]:
        """``perturb``'s reports as one array per :meth:`report_columns` entry (int64 (m,), uint8
        (m, size) or int64 (m, size)), derived from the columns: one column is the reports themselves
        (int64, or uint8 for ``bytes``); several ``int64`` columns are the columns of an (m, k) integer
        matrix; a tuple of reports has one part per column (a ``bits`` column's booleans packed). An
        oracle whose reports are laid out otherwise overrides this and :meth:`reports_from_columns`.

        Parameters
        ----------
        reports
            What :meth:`perturb` returned.

        Returns
        -------
        list of ndarray

        Raises
        ------
        ValueError
            If the oracle has no Parquet report schema.

        Examples
        --------
        >>> from ldpopt import oracles
        >>> grr = oracles.get("grr", 1.0, 4)
        >>> cols = grr.reports_to_columns(grr.perturb([0, 1, 2, 3], rng=0))
        >>> len(cols), cols[0].dtype
        (1, dtype('int64'))
        """
        cols = self.report_columns()
        if isinstance(reports, tuple) and len(reports) == len(cols):
            return [_column_of(c, part) for c, part in zip(cols, reports, strict=True)]
        if len(cols) == 1:
            return [_column_of(cols[0], reports)]
        if all(c.kind == "int64" for c in cols):
            r = np.asarray(reports, dtype=np.int64)
            return [r[:, i] for i in range(len(cols))]
        raise ValueError(f"oracle {self.name!r}: reports of columns {[c.kind for c in cols]} need their own "
                         f"reports_to_columns")

    def reports_from_columns(self, columns: list[np.ndarray]) -> Any:
        """The inverse of :meth:`reports_to_columns`: the reports, in ``perturb``'s format (one column:
        itself; several ``int64`` columns: stacked into an (m, k) matrix).

        Parameters
        ----------
        columns : list of ndarray
            One array per :meth:`report_columns` entry.

        Returns
        -------
        object
            The reports, as :meth:`perturb` returns them.

        Raises
        ------
        ValueError
            If the oracle has no Parquet report schema.

        Examples
        --------
        >>> import numpy as np
        >>> from ldpopt import oracles
        >>> oue = oracles.get("oue", 1.0, 4)
        >>> reports = oue.perturb([0, 1, 2, 3], rng=0)
        >>> back = oue.reports_from_columns(oue.reports_to_columns(reports))
        >>> bool(np.array_equal(oue.aggregate(back), oue.aggregate(reports)))
        True
        """
        cols = self.report_columns()
        if len(cols) == 1:
            return _part_of(cols[0], columns[0])
        if all(c.kind == "int64" for c in cols):
            return np.stack(columns, axis=1)
        if any(c.bits for c in cols):  # a tuple report, one part per column
            return tuple(_part_of(c, col) for c, col in zip(cols, columns, strict=True))
        raise ValueError(f"oracle {self.name!r}: reports of columns {[c.kind for c in cols]} need their own "
                         f"reports_from_columns")

    # -- the real protocol ---------------------------------------------------------------------
    @abc.abstractmethod
    def perturb(self, values, rng) -> Any:
        """Client side: randomise each user's value (vectorised over users); returns the reports.

        Parameters
        ----------
        values : array_like of int, shape (m,)
            The users' true values in [0, d).
        rng : int, numpy.random.Generator or "secure"
            Seed or generator.

        Returns
        -------
        object
            The reports, in the oracle's format (:data:`REPORT_FORMS`).

        Raises
        ------
        ValueError
            If a value is outside [0, d) or ``rng`` is not accepted.

        Examples
        --------
        >>> from ldpopt import oracles
        >>> oracles.get("grr", 4.0, 4).perturb([0, 1, 2, 3, 3], rng=0)
        array([0, 1, 2, 3, 3])
        """

    @abc.abstractmethod
    def aggregate(self, reports, device=None) -> np.ndarray:
        """Server side: support counts c (int64, length d) from the reports ``perturb`` returned.

        ``device``: who counts — ``"numpy"`` (the reference aggregators), ``"cpu"`` (fused kernels on
        every core), ``"cuda"`` (a GPU) or None/``"auto"`` (the CPU kernels for large inputs when
        Numba is installed); the counts are the same bit for bit on every device
        (:mod:`ldpopt.kernels`).

        Parameters
        ----------
        reports
            What :meth:`perturb` returned (for any number of users).
        device : {None, "auto", "numpy", "cpu", "cuda"}, default None

        Returns
        -------
        ndarray of int64, shape (d,)
            (RAPPOR: float, multiples of 1/h.)

        Raises
        ------
        ValueError
            If the reports are malformed for this oracle or the device is unknown.

        Examples
        --------
        >>> from ldpopt import oracles
        >>> grr = oracles.get("grr", 4.0, 4)
        >>> grr.aggregate([0, 1, 1, 3, 3, 3])
        array([1, 2, 0, 3])
        """

    @abc.abstractmethod
    def support_matrix(self, reports) -> np.ndarray:
        """Per-report support: a bool (m, d) array whose entry (i, v) says whether report i supports
        value v (:math:`v ∈ Y_i`, arXiv §2.4). ``support_matrix(r).sum(axis=0) == aggregate(r)`` always;
        O(m·d) memory, meant for audits and tests (the aggregators never build it).

        Parameters
        ----------
        reports
            What :meth:`perturb` returned.

        Returns
        -------
        ndarray of bool, shape (m, d)

        Examples
        --------
        >>> import numpy as np
        >>> from ldpopt import oracles
        >>> oue = oracles.get("oue", 1.0, 4)
        >>> reports = oue.perturb([0, 1, 2, 3, 3], rng=1)
        >>> S = oue.support_matrix(reports)
        >>> S.shape, bool(np.array_equal(S.sum(axis=0), oue.aggregate(reports)))
        ((5, 4), True)
        """

    def support_columns(self, reports, values) -> np.ndarray:
        """``support_matrix(reports)[:, values]``: whether each report supports each of a few values
        (an oracle that can compute those columns alone overrides it: the local-hashing oracles hash
        only them, O(m·len(values))).

        Parameters
        ----------
        reports
            What :meth:`perturb` returned.
        values : array_like of int
            Values in [0, d).

        Returns
        -------
        ndarray of bool, shape (m, len(values))

        Examples
        --------
        >>> import numpy as np
        >>> from ldpopt import oracles
        >>> grr = oracles.get("grr", 1.0, 4)
        >>> grr.support_columns(grr.perturb([0, 1, 2], rng=0), [0, 3]).shape
        (3, 2)
        """
        return self.support_matrix(reports)[:, np.asarray(values, dtype=np.int64)]

    # -- the fast path -------------------------------------------------------------------------
    @abc.abstractmethod
    def sample_counts(self, true_counts, rng) -> np.ndarray:
        """Draw support counts (int64, length d) for users with histogram ``true_counts``.

        Parameters
        ----------
        true_counts : array_like of int, shape (d,)
            True histogram :math:`n_v ≥ 0`, at least one user.
        rng : int, numpy.random.Generator or "secure"

        Returns
        -------
        ndarray of int64, shape (d,)
            (RAPPOR: float, multiples of 1/h.)

        Raises
        ------
        ValueError
            If ``true_counts`` is not a non-negative integer vector of length d with a positive sum.

        Examples
        --------
        >>> from ldpopt import oracles
        >>> oracles.get("oue", 1.0, 4).sample_counts([500, 300, 150, 50], rng=0)
        array([388, 326, 324, 300])
        """

    # -- exact output distribution (for privacy checks on small domains) -----------------------
    @abc.abstractmethod
    def output_distribution(self) -> np.ndarray:
        """Exact Pr[Ψ(v) = y] as a (d, |Y|) array, by enumeration of the output space Y.

        Only meant for small d (and small g); raises ``ValueError`` when the output space is too
        large to enumerate.

        Returns
        -------
        ndarray, shape (d, |Y|)
            Rows sum to one.

        Raises
        ------
        ValueError
            If the output space is too large to enumerate.

        Examples
        --------
        >>> from ldpopt import oracles
        >>> oracles.get("grr", 1.0, 3).output_distribution().round(3)
        array([[0.576, 0.212, 0.212],
               [0.212, 0.576, 0.212],
               [0.212, 0.212, 0.576]])
        """

    def channel_blocks(self) -> np.ndarray:
        """The oracle as a channel's blocks P[j, y, v] = Pr[component j reports y | v], (J, k, d) — or
        one dense (k, d) matrix — which :meth:`ldpopt.oracles.channel.Channel.from_oracle` wraps (the
        mechanism-as-matrix view of ``ldpopt.methods``' channel inversions): by default the support
        channel of its (p, q), d binary components (exact for OUE/SUE; the per-value marginals of the
        others); GRR's is dense.

        Returns
        -------
        ndarray, shape (J, k, d) or (k, d)

        Examples
        --------
        >>> from ldpopt import oracles
        >>> oracles.get("oue", 1.0, 3).channel_blocks().shape
        (3, 2, 3)
        """
        return support_blocks(self.p, self.q, self.d)

    def output_supports(self) -> np.ndarray:
        """The support set of every output y, as a bool (d, |Y|) array S(y)_v, columns in the order of
        :meth:`output_distribution` (the pair gives the counts' exact moments,
        :func:`ldpopt.oracles.jointlaw.count_moments`). Optional: an oracle that does not enumerate its
        outputs raises ``ValueError``.

        Returns
        -------
        ndarray of bool, shape (d, |Y|)

        Raises
        ------
        ValueError
            If the oracle does not enumerate its outputs.

        Examples
        --------
        >>> from ldpopt import oracles
        >>> oracles.get("grr", 1.0, 3).output_supports()
        array([[ True, False, False],
               [False,  True, False],
               [False, False,  True]])
        """
        raise ValueError(f"oracle {self.name!r} has no output enumeration (it defines no output_supports)")

    # -- simulation ----------------------------------------------------------------------------
    def chunk_size(self) -> int:
        """Users per chunk on the real path, so a chunk's reports stay ~16 M cells.

        Returns
        -------
        int

        Examples
        --------
        >>> from ldpopt import oracles
        >>> oracles.get("oue", 1.0, 1024).chunk_size()
        16384
        """
        return max(1, _CHUNK_CELLS // self.d)

    def _check_true_counts(self, true_counts) -> np.ndarray:
        tc = check_counts(true_counts, "true_counts", d=self.d, integral=True)
        if tc.sum() < 1:
            raise ValueError("true_counts must describe at least one user (n = sum(true_counts) >= 1)")
        return tc

    def simulate(self, true_counts, rng, exact: bool = False) -> Estimate:
        """Simulate the oracle on a population with histogram ``true_counts``.

        ``exact=False`` uses :meth:`sample_counts` (no per-user work, same joint law as the real
        path); ``exact=True`` runs the real client randomiser and aggregator, in chunks of users so
        memory stays bounded. The users are laid out value by value (their order does not change
        the counts' distribution).

        Parameters
        ----------
        true_counts : array_like of int, shape (d,)
            True histogram :math:`n_v ≥ 0` with at least one user.
        rng : int, numpy.random.Generator or "secure"
            Seed or generator.
        exact : bool, default False
            Run the real protocol instead of :meth:`sample_counts`.

        Returns
        -------
        Estimate

        Raises
        ------
        ValueError
            If ``true_counts`` is not a non-negative integer vector of length d with a positive sum, or
            ``rng`` is not accepted.

        Examples
        --------
        >>> from ldpopt import oracles
        >>> oue = oracles.get("oue", 1.0, 4)
        >>> oue.simulate([5000, 3000, 1500, 500], rng=0).f_tilde.round(3)
        array([0.512, 0.305, 0.182, 0.055])
        >>> oue.simulate([5000, 3000, 1500, 500], rng=0, exact=True).f_tilde.round(3)
        array([0.526, 0.304, 0.178, 0.041])
        """
        tc = self._check_true_counts(true_counts)
        gen = as_generator(rng)
        n = int(tc.sum())
        if not exact:
            counts = self.sample_counts(tc, gen)
        else:
            counts = np.zeros(self.d, dtype=np.int64)  # float once an aggregator returns fractions (RAPPOR)
            step = self.chunk_size()
            ends = np.cumsum(tc)
            for start in range(0, n, step):
                stop = min(n, start + step)
                # values of users start..stop-1, without materialising all n of them
                idx = np.arange(start, stop)
                values = np.searchsorted(ends, idx, side="right")
                counts = counts + self.aggregate(self.perturb(values, gen))
        return self.estimate(counts, n)

    def simulate_values(self, values, rng) -> Estimate:
        """Run the real protocol on explicit user values (one per user).

        Parameters
        ----------
        values : array_like of int, shape (n,)
            Each user's value in [0, d).
        rng : int, numpy.random.Generator or "secure"

        Returns
        -------
        Estimate

        Raises
        ------
        ValueError
            If a value is outside [0, d) or there is none.

        Examples
        --------
        >>> from ldpopt import oracles
        >>> est = oracles.get("grr", 2.0, 3).simulate_values([0, 0, 0, 1, 2] * 200, rng=0)
        >>> est.n, est.f_tilde.round(3)
        (1000, array([0.564, 0.212, 0.224]))
        """
        vals = check_values(values, self.d, "values")
        return self.simulate(np.bincount(vals, minlength=self.d), rng, exact=True)

    # -- the noise protocol (ldpopt.noise) ---------------------------------------------------------
    def count_covariance(self, n: int, d: int) -> CountCovariance:
        """The exact covariance of f̃ from n reports: Eq. 2's variance :math:`κ(q(1 − q) + f_v(p − q)(1 − p − q))`,
        :math:`κ = 1/(n(p − q)^2)`, and :meth:`pair_covariance`'s off-diagonal terms (None where it has none).

        See ``NoiseSource.count_covariance``.

        Examples
        --------
        >>> from ldpopt import oracles
        >>> c = oracles.get("grr", 1.0, 4).count_covariance(1000, 4)
        >>> round(float(c.variance(0.25)), 8) == round(float(oracles.get("grr", 1.0, 4).variance(0.25, 1000)), 8)
        True
        """
        p, q = self.p, self.q
        return CountCovariance(kappa=1.0 / (n * (p - q) ** 2), A=q * (1 - q), B=(p - q) * (1 - p - q),
                               pair=type(self).pair_covariance(p, q, d, self.params()), noise_var=0.0,
                               n=n, how="Eq. 2 + pair terms")

    def log_likelihood(self, counts, true_counts) -> float:
        r"""log P(counts) when n users' values are drawn from f = true_counts/n: the likelihood EM
        maximises (:attr:`likelihood`): multinomial, :math:`\sum c_v \log π_v + \log n!/\prod c_v!`, or binomial per
        value (per-bit composite), :math:`π_v = q + (p − q) f_v`.

        See ``NoiseSource.log_likelihood``.

        Parameters
        ----------
        counts : array_like, shape (d,)
            Support counts (integers).
        true_counts : array_like, shape (d,)
            The histogram f is read from.

        Raises
        ------
        ValueError
            The oracle declares no likelihood.

        Examples
        --------
        >>> import numpy as np
        >>> from ldpopt import oracles
        >>> grr = oracles.get("grr", 1.0, 3)
        >>> grid = [(a, b, 4 - a - b) for a in range(5) for b in range(5 - a)]
        >>> round(float(sum(np.exp(grr.log_likelihood(c, [2, 1, 1])) for c in grid)), 12)
        1.0
        """
        from scipy.special import gammaln, xlogy

        if self.likelihood not in ("multinomial", "binomial"):
            raise ValueError(f"oracle {self.name!r} declares no likelihood of its counts")
        c = np.asarray(counts, dtype=np.float64)
        t = np.asarray(true_counts, dtype=np.float64)
        n = float(t.sum())
        pi = self.q + (self.p - self.q) * t / n
        if self.likelihood == "multinomial":
            return float(gammaln(n + 1) - gammaln(c + 1).sum() + xlogy(c, pi).sum())
        return float((gammaln(n + 1) - gammaln(c + 1) - gammaln(n - c + 1) + xlogy(c, pi) + xlogy(n - c, 1 - pi)).sum())

    def privacy_statement(self) -> dict:
        """The local guarantee of one report (a memoised oracle's: ε₁ per report, ε over every round of
        one value), as ``meta["privacy"]`` records it.

        See ``NoiseSource.privacy_statement``.

        Examples
        --------
        >>> from ldpopt import oracles
        >>> oracles.get("grr", 1.0, 4).privacy_statement()["epsilon"]
        1.0
        """
        from ..privacy.statement import statement_of

        return statement_of(self.params(), self.epsilon).as_dict()

    def estimate_fields(self, counts, n) -> dict[str, Any]:
        """What :meth:`estimate` records: ε, p, q, the name and :meth:`params` (``n`` required).

        See ``NoiseSource.estimate_fields``.

        Parameters
        ----------
        counts : ndarray, shape (d,)
        n : int

        Examples
        --------
        >>> from ldpopt import oracles
        >>> oracles.get("olh", 1.0, 4, g=3).estimate_fields(None, 100)["meta"]["g"]
        3
        """
        if n is None:
            raise ValueError(f"n is required for the support counts of oracle {self.name!r}")
        return {"n": n, "epsilon": self.epsilon, "p": self.p, "q": self.q, "oracle": self.name, "meta": self.params()}

    def __repr__(self) -> str:
        extra = "".join(f", {k}={v!r}" for k, v in self.params().items())
        return f"{type(self).__name__}(epsilon={self.epsilon:g}, d={self.d}{extra})"


class IndependentSupports(FrequencyOracle):
    r"""Base class of an oracle whose report supports the user's value w.p. p and each other value w.p. q,
    independently across values (OUE and SUE's bits; OLH and BLH under the random-function law that
    ``sample_counts`` draws): the counts :math:`c_v = \mathrm{Binomial}(n_v, p) + \mathrm{Binomial}(n − n_v, q)` are independent,
    EM's per-bit binomial likelihood is exact per value, and a report's support size is
    1[own] + Binomial(d − 1, q)."""

    likelihood: ClassVar[str | None] = "binomial"

    @classmethod
    def pair_covariance(cls, p: float, q: float, d: int, params: dict) -> tuple[float, float]:
        """Independent counts: t₁ = pq, t₀ = q², so a = b = 0."""
        return 0.0, 0.0

    def sample_counts_batch(self, true_counts, size: int, rng: np.random.Generator) -> np.ndarray:
        """``size`` independent draws of the counts, at once (their law above)."""
        tc = np.asarray(true_counts, dtype=np.int64)
        d, n = tc.shape[0], int(tc.sum())
        own: np.ndarray = rng.binomial(tc, self.p, size=(size, d))
        other: np.ndarray = rng.binomial(n - tc, self.q, size=(size, d))
        return (own + other).astype(np.int64)

    def support_size_pmf(self) -> np.ndarray:
        """(1 − p)·Bin(d − 1, q)(s) + p·Bin(d − 1, q)(s − 1), s = 0 … d."""
        from scipy import stats  # here, not at import: `import ldpopt` stays light

        d = self.d
        pmf = np.zeros(d + 1)
        k = stats.binom.pmf(np.arange(d), d - 1, self.q)
        pmf[:d] += (1 - self.p) * k
        pmf[1:] += self.p * k
        return pmf
