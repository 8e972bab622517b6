"""The plausible truth a parametric bootstrap (and :func:`ldpopt.choose`) draws from.

Notes: docs/notes/uncertainty.md, "ldpopt.uncertainty.fit"."""

from __future__ import annotations

import numpy as np

from ..estimate import Estimate
from ..methods.normalize import project_simplex

__all__ = ["plausible_truth", "population", "sparse_truth"]


def plausible_truth(estimate: Estimate) -> np.ndarray:
    """f̂ = Norm-Sub(f̃): the projection of f̃ on the probability simplex."""
    return project_simplex(np.asarray(estimate.f_tilde, dtype=np.float64), 1.0)


def sparse_truth(estimate: Estimate, alpha: float = 0.05, z: float = 3.0) -> np.ndarray | None:
    """The sparse alternative to :func:`plausible_truth`: all the mass on the values that stand above the
    noise, or None where the estimate rules that world out.

    H = {v : f̃_v ≥ max(T, 0)} with Base-Cut's threshold T = Φ⁻¹(1 − α/d)σ (arXiv Eq. 9, σ of Eq. 7),
    and whose count c_v = n(f̃_v(p − q) + q) has P(Binomial(n, q) ≥ c_v) ≤ α/d (the zeros' exact law:
    where n·q is small, a handful of zeros pass the Gaussian T);
    the fit is f̃ on H projected on the simplex of the values of H (Norm-Sub restricted to H), 0
    elsewhere. It is offered only when the estimate is consistent with no mass outside H: the kept
    values sum to within z·√(Σ_H σ_v²) of 1, σ_v² the value-dependent variance at f_v = f̃_v
    (:meth:`Estimate.variance`, arXiv Eq. 2/5: at ε = 4 a value at 0.5 has several times the σ² of a
    zero), summed as if independent; z = 3, about a 0.3 % false rejection for Gaussian noise. On a heavy tail, a flat domain or any law whose mass outside the
    visible values exceeds that margin it is None.

    Why: the Norm-Sub fit spreads the noise of the true zeros as mass on many values, so that the
    visible values sum visibly under 1; where the real law has all its mass on a few values (two
    points at 0.5) the methods that cut when those values' estimates sum over 1 (Norm-Cut) fail
    about half the time on the real law and almost never in the Norm-Sub world.

    Parameters
    ----------
    estimate : Estimate
    alpha : float, default 2
        Base-Cut's α (expected number of zero values kept).
    z : float, default 3
        The consistency margin in standard deviations.

    Returns
    -------
    ndarray of shape (d,) or None

    Examples
    --------
    >>> import numpy as np
    >>> import ldpopt
    >>> from ldpopt.uncertainty.fit import sparse_truth
    >>> o = ldpopt.oracles.get("grr", 1.0, 64)
    >>> est = o.estimate(o.sample_counts(np.r_[50_000, 50_000, np.zeros(62, int)], 0), 100_000)
    >>> f = sparse_truth(est)
    >>> int((f > 0).sum()) <= 4, round(float(f.sum()), 12)
    (True, 1.0)
    >>> sparse_truth(o.estimate(o.sample_counts(np.full(64, 1_000), 0), 64_000)) is None
    True
    """
    from scipy.stats import binom

    from ..methods.baseline import cut_threshold

    f = np.asarray(estimate.f_tilde, dtype=np.float64)
    keep = f >= max(cut_threshold(estimate, alpha), 0.0)
    # the Gaussian T assumes many noise reports per value; with few (GRR over a large domain: n·q ≈ 5 on
    # AOL) the counts of the zeros are skewed and pass T by the handful. Also require the count itself to
    # be unlikely from the zeros' Binomial(n, q) (the non-holders' reports), at the same α/d.
    counts = np.rint((f * (estimate.p - estimate.q) + estimate.q) * estimate.n)
    keep &= binom.sf(counts - 1, estimate.n, estimate.q) <= alpha / estimate.d
    k = int(keep.sum())
    sd = float(np.sqrt(np.sum(estimate.variance(np.clip(f[keep], 0.0, 1.0)))))
    if k == 0 or abs(1.0 - float(f[keep].sum())) > z * sd:
        return None
    out = np.zeros_like(f)
    out[keep] = project_simplex(f[keep], 1.0)
    return out


def population(f, n: int) -> np.ndarray:
    """Integer histogram (int64, summing to n) closest to n·f: floor, then the largest remainders
    get the missing users (ties to the lower index)."""
    x = np.asarray(f, dtype=np.float64) * n
    base = np.floor(x).astype(np.int64)
    short = int(n - base.sum())
    if short > 0:
        rem = x - base
        top = np.argsort(-rem, kind="stable")[:short]
        base[top] += 1
    return base
