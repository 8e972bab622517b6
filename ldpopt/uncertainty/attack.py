"""How far fake users could move each estimate: the attack range for a fake-user fraction β, and the
interval for the genuine frequencies that combines it with the sampling interval.

Notes: docs/notes/uncertainty.md, "ldpopt.uncertainty.attack"."""

from __future__ import annotations

import numpy as np

from ..estimate import check_estimate
from .analytic import score_interval, variance_line
from .result import Uncertainty

__all__ = ["attack_interval", "attack_shift", "check_beta", "fake_report_range"]


def check_beta(beta) -> float:
    """β, the fake-user fraction, as a float after checking it is a number in [0, 1)."""
    if isinstance(beta, bool) or not isinstance(beta, (int, float)) or not 0.0 <= float(beta) < 1.0:
        raise ValueError(f"beta must be a number in [0, 1), got {beta!r}")
    return float(beta)


def fake_report_range(estimate) -> tuple[float, float]:
    """(L, U) = (−q/(p − q), (1 − q)/(p − q)): the least and greatest estimate of a value from fake
    reports alone (module notes), for the estimate's oracle."""
    est = check_estimate(estimate)
    p, q = est.p, est.q
    return -q / (p - q), (1.0 - q) / (p - q)


def attack_shift(estimate, beta: float) -> tuple[np.ndarray, np.ndarray]:
    r"""(low, high) per value: the range of :math:`\tilde f_v - \tilde f_v^G` an attack of fraction β can have produced,
    given the poisoned estimate (module notes).

    Parameters
    ----------
    estimate : Estimate
        The poisoned estimate (its p, q, counts and n are read).
    beta : float
        The fake users' fraction β of all users, in [0, 1).

    Returns
    -------
    low, high : ndarray, shape (d,)

    Raises
    ------
    ValueError
        A bad estimate or β.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt import oracles, robust
    >>> oue = oracles.get("oue", epsilon=1.0, d=16)
    >>> genuine = np.array([400, 300, 200, 100] + [50] * 12)
    >>> est = robust.poisoned_estimate(oue, genuine, "mga", targets=[13, 14, 15], beta=0.1, rng=0)
    >>> low, high = robust.attack_shift(est, 0.1)
    >>> bool((low <= 0).all() and (high >= 0).all())
    True
    """
    est = check_estimate(estimate)
    beta = check_beta(beta)
    lo, hi = fake_report_range(est)
    f = np.asarray(est.f_tilde, dtype=np.float64)
    k = beta / (1.0 - beta)
    return k * (lo - f), k * (hi - f)


def attack_interval(estimate, beta: float, level: float = 0.95) -> Uncertainty:
    """Per value, an interval for the genuine frequency that holds whatever fake users of fraction β
    sent: the attack range combined with the sampling score interval (module notes).

    Parameters
    ----------
    estimate : Estimate
        The poisoned estimate (its p, q, counts and n are read).
    beta : float
        The fake users' fraction β of all users, in [0, 1).
    level : float, default 0.95
        The sampling interval's level, in (0, 1).

    Returns
    -------
    Uncertainty
        Per value, the interval; ``how`` says how it was built.

    Raises
    ------
    ValueError
        A bad estimate, β or level.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt import oracles, robust
    >>> oue = oracles.get("oue", epsilon=1.0, d=16)
    >>> genuine = np.array([400, 300, 200, 100] + [50] * 12)
    >>> est = robust.poisoned_estimate(oue, genuine, "mga", targets=[13, 14, 15], beta=0.1, rng=0)
    >>> ai = robust.attack_interval(est, 0.1)
    >>> ai.interval, ai.level
    ('attack', 0.95)
    """
    est = check_estimate(estimate)
    beta = check_beta(beta)
    if isinstance(level, bool) or not isinstance(level, (int, float)) or not 0.0 < float(level) < 1.0:
        raise ValueError(f"level must be a number in (0, 1), got {level!r}")
    f = np.asarray(est.f_tilde, dtype=np.float64)
    low_y, high_y = fake_report_range(est)
    t_lo = (f - beta * high_y) / (1.0 - beta)
    t_hi = (f - beta * low_y) / (1.0 - beta)
    a, b = variance_line(est, "base")
    a, b = a / (1.0 - beta), b / (1.0 - beta)  # n = (1 − β)N genuine users
    lo, _ = score_interval(t_lo, a, b, float(level))
    _, hi = score_interval(t_hi, a, b, float(level))
    se = np.sqrt(a + b * np.clip(0.5 * (t_lo + t_hi), 0.0, 1.0))
    how = (f"attack range: fake users, a fraction {beta:g} of the {est.n} reports, move each {est.oracle} estimate "
           f"by at most β/(1 − β)·[L − f̃, U − f̃] (L, U = {low_y:.4g}, {high_y:.4g}), joined with the score "
           f"interval of the genuine users' estimate at level {level:g}")
    return Uncertainty(values=f, se=se, bias=np.full_like(f, np.nan), lo=lo, hi=hi, level=float(level),
                       method="base", interval="attack", how=how)
