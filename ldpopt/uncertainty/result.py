"""The result object of every uncertainty computation (modelled on ``scipy.stats.bootstrap``).

``scipy.stats.bootstrap`` returns ``BootstrapResult(confidence_interval=(low, high),
bootstrap_distribution, standard_error)``; ldpopt's :class:`Uncertainty` reads the same
(``confidence_interval.low``, ``standard_error``) and adds what a post-processed LDP estimate needs:
the point values themselves, a bias estimate, the level, and ``how`` (a sentence saying which
construction produced the interval, so that a table of intervals is never ambiguous).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

__all__ = ["ConfidenceInterval", "Uncertainty"]


class ConfidenceInterval(NamedTuple):
    """Lower and upper end points (arrays of the shape of ``values``).

    Parameters
    ----------
    low, high : ndarray
        End points.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt.uncertainty import ConfidenceInterval
    >>> low, high = ConfidenceInterval(np.array([0.1]), np.array([0.3]))
    >>> round(float(high[0] - low[0]), 6)
    0.2
    """

    low: np.ndarray
    high: np.ndarray


@dataclass(frozen=True, eq=False)
class Uncertainty:
    """Point values with standard errors, bias estimates and a confidence interval.

    Returned by :func:`ldpopt.uncertainty.intervals`, :func:`~ldpopt.uncertainty.analytic` and
    :func:`~ldpopt.uncertainty.bootstrap`; built by them, not by users.

    Parameters
    ----------
    values, se, bias, lo, hi, level, method, interval, how, labels, bootstrap_distribution, extra
        As the attributes below.

    Attributes
    ----------
    values : ndarray
        The point estimate (a method's post-processed frequencies, or query answers).
    se : ndarray
        Standard error of each value (analytic, or the bootstrap standard deviation).
    bias : ndarray
        Estimated bias E[value] − truth (0 for the unbiased linear methods Base and Norm; the
        bootstrap mean minus the plausible truth otherwise; NaN for the conditional top-k interval,
        which estimates none).
    lo, hi : ndarray
        Confidence interval end points at ``level``.
    level : float
        Nominal coverage, e.g. 0.95.
    method : str
        The post-processing method.
    interval : str
        ``"normal"`` (analytic score interval), ``"basic"``, ``"percentile"``, or ``"conditional"``
        (top-k, :mod:`ldpopt.uncertainty.selective`).
    how : str
        One sentence: how the numbers were computed (fit, resamples, construction).
    labels : list or None
        What each entry is (value indices, query names), when not the domain 0..d−1.
    bootstrap_distribution : ndarray or None
        The (B, m) resampled values when a bootstrap was run (None for analytic results).
    extra : dict
        ``world``: the bootstrap world's truth (the Norm-Sub fit, per value or per query) that
        ``bias`` is measured against; ``fallback`` (see :attr:`fallback`); ``excludes_point`` (bootstrap results): the entries whose interval
        lies wholly above or below the value (the basic interval's bias correction, see
        :mod:`ldpopt.uncertainty.bootstrap`); query-specific numbers, e.g. ``membership`` (bootstrap
        probability that each value of a heavy-hitter set is above the threshold).

    Examples
    --------
    >>> import numpy as np
    >>> import ldpopt
    >>> est = ldpopt.oracles.get("oue", 1.0, 6).simulate(np.array([400, 250, 150, 100, 60, 40]) * 10, rng=0)
    >>> r = ldpopt.uncertainty.intervals(est, "base")
    >>> r.method, r.interval, r.level
    ('base', 'normal', 0.95)
    >>> r.frame().columns.tolist()
    ['value', 'se', 'bias', 'lo', 'hi', 'fallback']
    """

    values: np.ndarray
    se: np.ndarray
    bias: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    level: float
    method: str
    interval: str
    how: str
    labels: list | None = None
    bootstrap_distribution: np.ndarray | None = field(default=None, repr=False)
    extra: dict = field(default_factory=dict, repr=False)

    @property
    def confidence_interval(self) -> ConfidenceInterval:
        """The interval ``(lo, hi)`` as a :class:`ConfidenceInterval` (``scipy.stats.bootstrap``'s name).

        Examples
        --------
        >>> import numpy as np
        >>> import ldpopt
        >>> est = ldpopt.oracles.get("oue", 1.0, 6).simulate(np.array([400, 250, 150, 100, 60, 40]) * 10, rng=0)
        >>> ci = ldpopt.uncertainty.intervals(est, "base").confidence_interval
        >>> ci.low.round(3), ci.high.round(3)
        (array([0.403, 0.218, 0.113, 0.056, 0.033, 0.025]), array([0.483, 0.296, 0.19 , 0.132, 0.109, 0.101]))
        """
        return ConfidenceInterval(self.lo, self.hi)

    @property
    def standard_error(self) -> np.ndarray:
        """``se``, under ``scipy.stats.bootstrap``'s name.

        Examples
        --------
        >>> import numpy as np
        >>> import ldpopt
        >>> est = ldpopt.oracles.get("oue", 1.0, 6).simulate(np.array([400, 250, 150, 100, 60, 40]) * 10, rng=0)
        >>> ldpopt.uncertainty.intervals(est, "base").standard_error.round(4)
        array([0.0203, 0.0198, 0.0196, 0.0194, 0.0194, 0.0194])
        """
        return self.se

    @property
    def fallback(self) -> np.ndarray:
        """Per entry: True where the interval is Base's instead of the method's own: per value and
        per subset sum, where the method's point is pinned at 0 or biased there
        (:mod:`ldpopt.uncertainty.bootstrap`); for the conditional top-k interval, where the method
        ranks the value unlike f̃ (:mod:`ldpopt.uncertainty.selective`). All False for Base, Norm
        and results without the fallback.

        Examples
        --------
        >>> import numpy as np
        >>> import ldpopt
        >>> est = ldpopt.oracles.get("oue", 1.0, 6).simulate(np.array([400, 250, 150, 100, 60, 40]) * 10, rng=0)
        >>> ldpopt.uncertainty.intervals(est, "norm").fallback
        array([False, False, False, False, False, False])
        """
        f = self.extra.get("fallback")
        return np.zeros(np.shape(self.values), dtype=bool) if f is None else np.asarray(f, dtype=bool)

    def frame(self):
        """A pandas DataFrame with columns value, se, bias, lo, hi (index: labels or 0..m−1).

        Returns
        -------
        pandas.DataFrame
            Columns value, se, bias, lo, hi and fallback.

        Examples
        --------
        >>> import numpy as np
        >>> import ldpopt
        >>> est = ldpopt.oracles.get("oue", 1.0, 6).simulate(np.array([400, 250, 150, 100, 60, 40]) * 10, rng=0)
        >>> ldpopt.uncertainty.intervals(est, "norm").frame().shape
        (6, 6)
        """
        import pandas as pd

        idx = self.labels if self.labels is not None else np.arange(np.size(self.values))
        return pd.DataFrame({"value": self.values, "se": self.se, "bias": self.bias,
                             "lo": self.lo, "hi": self.hi, "fallback": self.fallback}, index=idx)

    def cells(self, *, sigmas: float | None = None, floor: float | None = None, labels=None,
              engine: str = "pandas", like=None):
        """The released cells' table: ``estimate``, ``se``, ``ci_low``, ``ci_high`` (this result's
        own interval, as computed), ``correction_sigma`` and ``flagged`` (how far the method moved each
        value from the raw f̃, in units of its noise :math:`σ_v`; the rule of
        :func:`ldpopt.uncertainty.cells.flag_corrections`). The one table the DataFrame outputs and
        the CLI's ``--ci`` columns are made from.

        Parameters
        ----------
        sigmas : float or None
            The flag rule's multiple of σ (None: 7).
        floor : float or None
            The smallest flagged correction (None: one count, 1/n).
        labels : sequence or None
            Cell names (None: this result's labels, or 0..d−1).
        engine : str, default "pandas"
            The dataframe engine of the table (:func:`ldpopt.aggregate.frames.to_engine`: pandas,
            polars, polars-lazy, duckdb, spark; outside pandas the index is a leading ``cell`` column).
        like : frame or None
            A frame of the wanted engine (e.g. the report table the counts came from).

        Returns
        -------
        pandas.DataFrame, or a frame of ``engine``
            Columns :data:`ldpopt.uncertainty.cells.COLUMNS`.

        Raises
        ------
        ValueError
            A result that is not one value per cell of an estimate (a subset, top-k or heavy-hitter
            query), or a ``sigmas``/``floor`` the flag rule refuses.

        Examples
        --------
        >>> import numpy as np
        >>> import ldpopt
        >>> est = ldpopt.oracles.get("oue", 1.0, 4).simulate(np.array([500, 300, 150, 50]) * 20, rng=0)
        >>> t = ldpopt.uncertainty.intervals(est, "norm").cells()
        >>> t.columns.tolist(), int(t["flagged"].sum())
        (['estimate', 'se', 'ci_low', 'ci_high', 'correction_sigma', 'flagged'], 0)
        """
        from ..aggregate.frames import to_engine
        from .celltable import FLAG_SIGMAS, cell_frame

        if "raw" not in self.extra:
            raise ValueError("cells: this result is not one value per cell of an estimate (a query's "
                             "answers); ask ldpopt.uncertainty.intervals(estimate, method) for the full domain")
        tab = cell_frame(self.values, self.se, self.extra["raw"], self.extra["sigma"], level=self.level,
                         ci_low=self.lo, ci_high=self.hi,
                         labels=labels if labels is not None else self.labels,
                         sigmas=FLAG_SIGMAS if sigmas is None else sigmas,
                         floor=self.extra["floor"] if floor is None else floor)
        return to_engine(tab, engine, like=like)

    def __repr__(self) -> str:
        return (f"Uncertainty(method={self.method!r}, m={np.size(self.values)}, level={self.level:g}, "
                f"interval={self.interval!r}, how={self.how!r})")
