"""What deployments do to noisy counts, as registered methods: Presto's clip-and-round and the
Census-style non-negative least squares, rounded to integers keeping the total.

Notes: docs/notes/privacy.md, section ``ldpopt.methods.deployments``.
"""

from __future__ import annotations

import numpy as np

from ..estimate import Estimate, check_estimate
from .registry import postprocess, register

__all__ = ["clip_round", "nnls", "nnls_round", "round_to_total"]


def _total_known(est: Estimate) -> bool:
    """Whether n is a known total, as the estimate's noise source says (an oracle's n always is; a
    central estimate's when it was given)."""
    return bool(est.noise.total_known)


@register(
    "clip-round",
    description="Round every noisy count to the nearest integer and clip it at zero (Presto)",
    non_negative="yes", sums_to_one="no", order_preserving="weak",
    complexity="O(d)",
    reference="Meta's Presto noisy aggregation functions (noisy_count_gaussian)",
    notes="Weak order: counts rounding to the same integer tie, and all negative counts tie at 0. "
          "Ties are rounded half to even (the documentation does not say which rounding it uses).",
    label="Clip-Round",  # no family: a release to compare against, not one of choose's candidates
)
def clip_round(estimate: Estimate) -> np.ndarray:
    r"""Presto's release of a noisy count, :math:`\max(0, \mathrm{round}(\tilde c_v))` with :math:`\tilde c = n \tilde f`, as frequencies (divided
    by n; they need not sum to one).

    Parameters
    ----------
    estimate : Estimate
        Noisy counts (central noise, :meth:`~ldpopt.Estimate.from_central`, or an oracle's).

    Returns
    -------
    ndarray, shape (d,)

    References
    ----------
    Meta's Presto noisy aggregation functions (``noisy_count_gaussian``: Gaussian noise added to the
    exact count, the result rounded and clipped at zero). Ties are rounded half to even (numpy's
    ``round``).

    Examples
    --------
    >>> from ldpopt import Estimate, postprocess
    >>> postprocess(Estimate.from_central([60.4, -3.2, 42.6], "gaussian", 2.0, n=100), "clip-round")
    array([0.6 , 0.  , 0.43])
    """
    est = check_estimate(estimate, "estimate")
    return np.maximum(np.round(est.f_tilde * est.n), 0.0) / est.n


def nnls(estimate, total: bool | None = None) -> np.ndarray:
    """The Census-style non-negative least squares fit to the noisy counts, min Σ_v (c_v − c̃_v)² over
    c ≥ 0 (with Σ_v c_v = n when the total is known), as frequencies c/n.

    With the total it is the Euclidean projection onto the simplex, Norm-Sub; without it,
    max(c̃_v, 0), Base-Pos: the registered methods answer it.

    Parameters
    ----------
    estimate : Estimate
        Noisy counts.
    total : bool, optional
        Impose Σ c_v = n. None: when n is known (``meta["privacy"]["n_known"]`` of a central
        estimate; always for an oracle's).

    Returns
    -------
    ndarray, shape (d,)

    Raises
    ------
    TypeError
        ``total`` is not True, False or None.

    References
    ----------
    Abowd et al., *The 2020 Census Disclosure Avoidance System TopDown Algorithm*, Harvard Data
    Science Review (2022), §5 (the L2 non-negative least squares step, its total constraint, then an
    L1 rounding step: :func:`nnls_round`).

    Examples
    --------
    >>> from ldpopt import Estimate
    >>> from ldpopt.methods.deployments import nnls
    >>> nnls(Estimate.from_central([60.4, -3.2, 42.6], "gaussian", 2.0, n=100)).round(3)
    array([0.589, 0.   , 0.411])
    """
    est = check_estimate(estimate, "estimate")
    if total is None:
        total = _total_known(est)
    if not isinstance(total, bool):
        raise TypeError(f"total must be True, False or None, got {total!r}")
    return postprocess(est, "norm-sub" if total else "base-pos")


def round_to_total(counts, total: int) -> np.ndarray:
    """The integer vector nearest ``counts`` (in L1 and in L2) among those summing to ``total``:
    floor every entry, then add one to the entries with the largest remainders (ties to the lower
    index); ``counts`` must be ≥ 0 with Σ floor(counts) ≤ total ≤ Σ ceil(counts).

    Parameters
    ----------
    counts : array_like, shape (d,)
        Non-negative reals (a least-squares fit in counts).
    total : int
        The sum to keep.

    Returns
    -------
    ndarray of float64, shape (d,)

    Raises
    ------
    ValueError
        A negative entry, or ``total`` out of [Σ floor, Σ ceil].

    References
    ----------
    Abowd et al. (Harvard Data Science Review, 2022), §5: TopDown's rounding step solves this
    problem as an L1 program; on one level with one total its solution is this largest-remainder
    rule (exchange argument: moving a unit from a larger to a smaller remainder never lowers the
    distance).

    Examples
    --------
    >>> from ldpopt.methods.deployments import round_to_total
    >>> round_to_total([1.6, 2.3, 0.1], 4)
    array([2., 2., 0.])
    """
    c = np.asarray(counts, dtype=np.float64)
    if c.ndim != 1 or not np.all(np.isfinite(c)) or np.any(c < 0):
        raise ValueError("counts must be a 1-D array of finite values >= 0")
    base = np.floor(c)
    short = int(total) - int(base.sum())
    if short < 0 or short > int(np.count_nonzero(c > base)):
        raise ValueError(f"total must lie in [{int(base.sum())}, {int(np.ceil(c).sum())}], got {total!r}")
    if short:
        rem = c - base
        top = np.argsort(-rem, kind="stable")[:short]
        base[top] += 1.0
    return base


@register(
    "nnls-round",
    description="The non-negative least squares fit (Norm-Sub with the total, Base-Pos without), rounded "
                "to integer counts keeping its total (Census TopDown, one level)",
    non_negative="yes", sums_to_one="no", order_preserving="no",
    complexity="O(d log d)",
    reference="Abowd et al., Harvard Data Science Review (2022), §5",
    notes="Sums to one when n is known (every oracle's estimate; a central one given n): the total kept is "
          "n; without it the total is the rounded sum of Base-Pos, which may exceed n. Not order "
          "preserving: equal fits may round apart (f̃ = (0.5, 0.5), n = 1 -> (1, 0); ties to the lower index).",
    label="NNLS-Round",  # no family, as Clip-Round
)
def nnls_round(estimate: Estimate) -> np.ndarray:
    """:func:`nnls`, then rounded to integer counts keeping the total (:func:`round_to_total`; the total
    is n when known, else the rounded sum of the fit), as frequencies: the Census-style release.

    Parameters
    ----------
    estimate : Estimate
        Noisy counts.

    Returns
    -------
    ndarray, shape (d,)

    References
    ----------
    Abowd et al. (Harvard Data Science Review, 2022), §5.

    Examples
    --------
    >>> from ldpopt import Estimate, postprocess
    >>> postprocess(Estimate.from_central([60.4, -3.2, 42.6], "gaussian", 2.0, n=100), "nnls-round")
    array([0.59, 0.  , 0.41])
    """
    est = check_estimate(estimate, "estimate")
    c = nnls(est) * est.n
    return round_to_total(c, round(float(c.sum()))) / est.n
