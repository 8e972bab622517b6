r"""Sketch estimates (Apple's CMS and HCMS) as :class:`~ldpopt.Estimate` objects with their correct
variance, so that every consistency method (Norm-Sub, Base-Cut, MLE-Apx, Power, …) and every
:class:`~ldpopt.problems.Problem` takes them as they take a pure oracle's.

Notes: docs/notes/sketches.md, "ldpopt.sketches.consistency"."""

from __future__ import annotations

import numpy as np

from ..estimate import Estimate
from ..oracles.cms import SketchOracle

__all__ = ["sketch_estimate"]


def sketch_estimate(oracle: SketchOracle, counts, n: int) -> Estimate:
    """The oracle's estimate from support counts, with the family's extra variance in its meta.

    The plug-in of extra_v (module notes; derived in :mod:`ldpopt.oracles.cms`) is stored as
    ``meta["extra_variance"]``, which ``Estimate.sigma2`` and ``Estimate.variance`` add.

    Parameters
    ----------
    oracle : SketchOracle
        An ldpopt CMS or HCMS oracle.
    counts : array_like, shape (d,)
        Its support counts (``oracle.aggregate(reports)``).
    n : int
        Number of reports.

    Returns
    -------
    Estimate

    Raises
    ------
    TypeError
        ``oracle`` is not a CMS or HCMS oracle.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt import oracles
    >>> from ldpopt.sketches import sketch_estimate
    >>> cms = oracles.get("cms", epsilon=2.0, d=8, k=4, m=16, hash_seed=0)
    >>> values = np.repeat(np.arange(8), [2000, 1500, 500, 500, 250, 250, 0, 0])
    >>> est = sketch_estimate(cms, cms.aggregate(cms.perturb(values, rng=0)), len(values))
    >>> est.f_tilde[:3].round(2), bool(est.meta["extra_variance"] > 0)
    (array([0.41, 0.28, 0.14]), True)
    """
    if not isinstance(oracle, SketchOracle):
        raise TypeError(f"oracle must be an ldpopt CMS or HCMS oracle, got {type(oracle).__name__}")
    est = oracle.estimate(counts, n)
    K = oracle.k * (oracle.m - 1)
    # E Σ f̃² = Σ f² + Σ σ_v² + d·extra and extra = (Σ f² − 1/n)/K: solve for Σ f²
    d, inv_n = est.d, 1.0 / est.n
    sum_f2 = max(0.0, (float(np.sum(est.f_tilde ** 2 - est.sigma2_v)) + d * inv_n / K) / (1.0 + d / K))
    extra = max(0.0, (sum_f2 - inv_n) / K)
    return oracle.estimate(counts, n, extra_variance=extra)
