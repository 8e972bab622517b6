"""The common-lift recovery: suspects found as a cluster of estimates at one attack level, then removed.

Notes: docs/notes/poisoning.md, "ldpopt.robust.lift"."""

from __future__ import annotations

import numpy as np

from .._validation import _check_int
from ..estimate import check_estimate
from .attacks import check_beta, mixture_offset

__all__ = ["lift_suspects", "lift_target"]

#: link width in standard deviations (module notes)
LINK_Z = 3.0
#: the smallest suspect set looked for (module notes)
MIN_SIZE = 5


def _lift_sd(est, beta: float) -> np.ndarray:
    f, p, q, n = est.f_tilde, est.p, est.q, est.n
    x = np.clip(f, 0.0, 1.0)
    pi = np.clip(q + f * (p - q) / beta, 0.0, 1.0) if beta > 0 else np.zeros_like(f)
    var = (1.0 - beta) * (x * p * (1 - p) + (1 - x) * q * (1 - q)) + beta * pi * (1 - pi)
    return np.sqrt(var / n) / (p - q)


def lift_suspects(estimate, beta: float, z: float = LINK_Z, min_size: int = MIN_SIZE) -> np.ndarray:
    """The values of the longest chain of estimates at one attack level (module notes), sorted;
    an empty array when no chain qualifies.

    Parameters
    ----------
    estimate : Estimate
        The poisoned estimate (its p, q, counts and n are read).
    beta : float
        The fake users' fraction β of all users, in [0, 1).
    z : float, default 3
        Link neighbours within z standard deviations.
    min_size : int, default 5
        Fewest members of a suspect chain.

    Returns
    -------
    ndarray of int
        The suspects, sorted; empty when none.

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
    >>> robust.lift_suspects(est, 0.1)  # three targets: fewer than min_size
    array([], dtype=int64)
    """
    est = check_estimate(estimate)
    beta = check_beta(beta)
    min_size = _check_int(min_size, "min_size", 2)
    if isinstance(z, bool) or not isinstance(z, (int, float)) or not z > 0:
        raise ValueError(f"z must be a positive number, got {z!r}")
    if beta == 0.0:
        return np.zeros(0, dtype=np.int64)
    f = est.f_tilde
    sd = _lift_sd(est, beta)
    order = np.argsort(-f, kind="stable")
    fs, ss = f[order], sd[order]
    broken = np.flatnonzero(fs[:-1] - fs[1:] > z * np.hypot(ss[:-1], ss[1:])) + 1
    starts = np.concatenate([[0], broken])
    ends = np.concatenate([broken, [f.size]])
    size = ends - starts
    csum = np.concatenate([[0.0], np.cumsum(fs)])
    level = (csum[ends] - csum[starts]) / np.maximum(size, 1)
    max_lift = beta * (1.0 - est.q) / (est.p - est.q) + z * ss[starts]
    ok = (size >= min_size) & (ends < f.size) & (level <= max_lift)
    if not ok.any():
        return np.zeros(0, dtype=np.int64)
    i = np.flatnonzero(ok)[np.argmax(size[ok])]
    return np.sort(order[starts[i]:ends[i]]).astype(np.int64)


def lift_target(estimate, beta: float, suspects=None) -> np.ndarray:
    """t of the module notes: (f̃ − βy₀)/(1 − β) off the suspects, 1/d on them (``suspects``
    default: :func:`lift_suspects`).

    Parameters
    ----------
    estimate : Estimate
        The poisoned estimate (its p, q, counts and n are read).
    beta : float
        The fake users' fraction β of all users, in [0, 1).
    suspects : array_like of int, optional
        The suspect set (default :func:`lift_suspects`).

    Returns
    -------
    ndarray, shape (d,)

    Raises
    ------
    ValueError
        A bad estimate, β or suspects.

    Examples
    --------
    >>> import numpy as np
    >>> from ldpopt import oracles, robust
    >>> oue = oracles.get("oue", epsilon=1.0, d=16)
    >>> genuine = np.array([400, 300, 200, 100] + [50] * 12)
    >>> est = robust.poisoned_estimate(oue, genuine, "mga", targets=[13, 14, 15], beta=0.1, rng=0)
    >>> from ldpopt.robust.lift import lift_target
    >>> lift_target(est, 0.1, suspects=[13, 14, 15])[13:]  # 1/d on the suspects
    array([0.0625, 0.0625, 0.0625])
    """
    est = check_estimate(estimate)
    beta = check_beta(beta)
    s = lift_suspects(est, beta) if suspects is None else np.unique(np.asarray(suspects, dtype=np.int64).ravel())
    if s.size and (s.min() < 0 or s.max() >= est.d or s.size >= est.d):
        raise ValueError(f"suspects must be values in [0, {est.d}) leaving at least one unsuspected")
    t = (est.f_tilde - beta * mixture_offset(est, beta, s)) / (1.0 - beta)
    t[s] = 1.0 / est.d
    return t
