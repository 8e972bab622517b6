"""The instances the claims run on: deterministic true histograms, simulated estimates, and the
size limits of each referee (so that a row can say why it was not run at the requested d).

Details: docs/experiments.md, section `ldpopt.verify.instances`.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from .. import oracles as _oracles
from .._validation import as_generator
from ..estimate import Estimate

#: largest d at which a cvxpy solver referees the exponential-cone likelihoods: Clarabel reports
#: InsufficientProgress on the binomial from d = 1000 (measured); above it the sequential-QP
#: route referees them (up to the solver limit); the certificate has no limit
LIKELIHOOD_MAX_D = 200
#: default largest d at which a cvxpy solver referees the QPs / SOCPs (the certificate has no limit)
SOLVER_MAX_D = 2000
#: largest d for the Monte-Carlo claims: they keep reps × d outputs of 14 methods in memory
#: (600 × 2000 × 14 × 8 B = 134 MB) and run every method reps times
MC_MAX_D = 2000


def _round_counts(w: np.ndarray, n: int) -> np.ndarray:
    """Largest-remainder rounding of n·w (w ≥ 0, Σw = 1) to integers summing to n: the ``short``
    largest remainders get +1, ties to the smaller index (what a stable sort of −remainder picks),
    found in O(d) by a partition instead of an O(d log d) sort (0.9 s of CPU at d = 10⁷)."""
    x = n * w / w.sum()
    c = np.floor(x).astype(np.int64)
    short = n - int(c.sum())
    if short > 0:
        rem = x - c
        cut = np.partition(rem, rem.size - short)[rem.size - short]  # the short-th largest remainder
        above = np.flatnonzero(rem > cut)
        tied = np.flatnonzero(rem == cut)[:short - above.size]
        c[above] += 1
        c[tied] += 1
    return c


def true_histogram(n: int, d: int, kind: str = "zipf") -> np.ndarray:
    """Deterministic true histogram (int64, sums to n): ``"zipf"`` :math:`∝ 1/k^{1.1}` on all d values, or
    ``"half-zero"`` ∝ 1/k on the first ⌈d/2⌉ values and 0 on the rest. Read-only and cached (the
    runner asks for the same one for each oracle and ε; ~1 s CPU at d = 10⁷).

    Parameters
    ----------
    n : int
        Number of users.
    d : int
        Domain size.
    kind : {"zipf", "half-zero"}, default "zipf"
        The shape.

    Returns
    -------
    ndarray of int64, shape (d,)
        Largest-remainder rounding of n times the weights; read-only.

    Raises
    ------
    ValueError
        ``kind`` unknown.

    Examples
    --------
    >>> from ldpopt import verify
    >>> verify.instances.true_histogram(100, 4), verify.instances.true_histogram(100, 4, "half-zero")
    (array([50, 24, 15, 11]), array([67, 33,  0,  0]))
    """
    if kind not in ("zipf", "half-zero"):
        raise ValueError(f"kind must be 'zipf' or 'half-zero', got {kind!r}")
    return _true_histogram(int(n), int(d), kind)


@functools.lru_cache(maxsize=4)
def _true_histogram(n: int, d: int, kind: str) -> np.ndarray:
    c = _round_counts(_weights(d, kind), n)
    c.flags.writeable = False
    return c


@functools.lru_cache(maxsize=2)
def _weights(d: int, kind: str) -> np.ndarray:
    """The unnormalised weights, shared by the histograms of every n at this d (the runner asks for
    n = 10⁴ and 10⁶: one power over 10⁷ values instead of two)."""
    k = np.arange(1, d + 1, dtype=np.float64)
    if kind == "zipf":
        w = k ** -1.1
    elif kind == "half-zero":
        w = np.where(k <= math.ceil(d / 2), 1.0 / k, 0.0)
    else:
        raise ValueError(f"kind must be 'zipf' or 'half-zero', got {kind!r}")
    w.flags.writeable = False
    return w


def instance(oracle: str, epsilon: float, n: int, d: int, seed: int) -> Estimate:
    """The estimate an equivalence claim runs on: ``oracle.simulate`` of the Zipf(1.1) histogram.

    Parameters
    ----------
    oracle : str
        Registry name of the oracle.
    epsilon : float
        ε.
    n : int
        Number of users.
    d : int
        Domain size.
    seed : int
        The simulation's seed.

    Returns
    -------
    Estimate

    Examples
    --------
    >>> from ldpopt import verify
    >>> est = verify.instance("grr", 1.0, 1000, 8, seed=0)
    >>> est
    Estimate(oracle='grr', d=8, n=1000, epsilon=1, p=0.279708, q=0.102899, sum(f_tilde)=1, privacy='local ε = 1 per report (replace), 1 round')
    """
    o = _oracles.get(oracle, epsilon, d)
    return o.simulate(true_histogram(n, d), as_generator(seed))


def setting(est: Estimate, seed) -> dict:
    """The instance columns of a row, read from the estimate actually used."""
    return dict(oracle=est.oracle, epsilon=float(est.epsilon), n=int(est.n), d=int(est.d),
                seed=None if seed is None else int(seed))
