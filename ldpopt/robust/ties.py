"""Attacks aimed at the level-cluster recoveries (:mod:`.lift`, :mod:`.guarded`): fake users that lift
chosen values to one common level, where genuine values already stand.

* the **tie-maker**: one target, the genuinely second most popular value, lifted to the most popular
  one's level; the pair then looks like a two-value attack cluster, and a recovery that removes
  clusters erases the never-targeted top value with it;
* the **β-fooling spread**: the same on several popular targets at once (ranks 2 … r + 1). The
  cluster's members are assumed to stand at 1/d genuinely, so the β explaining it is over-estimated
  and the recovery removes far more than the fake users added.

Each fake user runs MGA (Cao, Jia & Gong, USENIX Security 2021) on one target; the number on target
t is what lifts t's expected estimate to the level: m_t = n (ℓ − g_t)/c_t, c_t = (π_t − q)/(p − q)
one fake report's expected contribution to f̃_t (π_t its support rate: ``mean_target_support``) and
g_t the genuine frequency. A choice: the fake users are counted against the n genuine users, so the
poisoned estimate of N = n + Σm_t users puts every target at ℓ·n/N in expectation, as the top value.
"""

from __future__ import annotations

import numpy as np

from .._validation import as_generator
from ..estimate import Estimate
from ..oracles.base import FrequencyOracle
from .attack_counts import fake_counts
from .attacks import check_targets, mean_target_support

__all__ = ["tie_estimate", "tie_fake_users"]


def tie_fake_users(oracle: FrequencyOracle, true_counts, targets, level: float | None = None) -> np.ndarray:
    """:math:`m_t` of the module notes: fake users per target (int64, one per sorted target).

    Parameters
    ----------
    oracle : FrequencyOracle
        The attacked oracle.
    true_counts : array_like of int, shape (d,)
        The genuine histogram.
    targets : array_like of int
        The values lifted.
    level : float, optional
        The common level ℓ in frequency of the genuine users (default: the largest genuine frequency).

    Returns
    -------
    ndarray of int64

    Raises
    ------
    ValueError
        Bad counts, targets or level.

    Examples
    --------
    >>> from ldpopt import oracles, robust
    >>> grr = oracles.get("grr", epsilon=1.0, d=1024)
    >>> tc = [200_000, 199_000] + [585] * 1022
    >>> robust.ties.tie_fake_users(grr, tc, [1]).tolist()  # a 0.001 lift at GRR, ε = 1
    [2]
    """
    tc = np.asarray(true_counts)
    if tc.ndim != 1 or tc.size != oracle.d or not np.issubdtype(tc.dtype, np.integer) or (tc < 0).any() \
            or tc.sum() == 0:
        raise ValueError(f"true_counts must be {oracle.d} non-negative integers, not all zero")
    t = check_targets(targets, oracle.d)
    n = int(tc.sum())
    g = tc / n
    lev = float(g.max()) if level is None else float(level)
    if not 0.0 <= lev <= 1.0:
        raise ValueError(f"level must be in [0, 1], got {level!r}")
    m = np.empty(t.size, dtype=np.int64)
    for i, v in enumerate(t):  # a handful of targets: one support rate each
        c = (mean_target_support(oracle, "mga", [int(v)]) - oracle.q) / (oracle.p - oracle.q)
        m[i] = max(round(n * (lev - g[v]) / c), 0)
    return m


def tie_estimate(oracle: FrequencyOracle, true_counts, targets, rng, level: float | None = None) -> Estimate:
    """The poisoned estimate: n genuine users of ``true_counts`` plus :func:`tie_fake_users`
    fake users, MGA on one target each; ``meta["fake_users"]`` their number.

    Parameters
    ----------
    oracle, true_counts, targets, level
        As :func:`tie_fake_users`.
    rng : int, numpy.random.Generator or "secure"

    Returns
    -------
    Estimate

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt import oracles, robust
    >>> oue = oracles.get("oue", epsilon=4.0, d=64)
    >>> tc = np.array([40_000, 20_000] + [1_000] * 62)
    >>> est = robust.tie_estimate(oue, tc, [1], rng=0)
    >>> round(float(est.f_tilde[1] / est.f_tilde[0]), 1)
    1.0
    """
    gen = as_generator(rng)
    tc = np.asarray(true_counts)
    t = check_targets(targets, oracle.d)
    m = tie_fake_users(oracle, tc, t, level)
    counts = oracle.sample_counts(tc.astype(np.int64), gen)
    for v, k in zip(t, m):
        if k:
            counts = counts + fake_counts(oracle, "mga", [int(v)], int(k), gen)
    N = int(tc.sum()) + int(m.sum())
    return oracle.estimate(counts, N, fake_users=int(m.sum()))
