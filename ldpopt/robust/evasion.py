"""The adaptive attacker against the lift: the most target gain whose estimates form no suspect chain.

Notes: docs/notes/poisoning.md, "ldpopt.robust.evasion"."""

from __future__ import annotations

import math

import numpy as np

from .._validation import _check_int
from ..oracles.base import FrequencyOracle
from .attacks import DEFAULT_CANDIDATES, check_beta, check_targets
from .lift import LINK_Z, MIN_SIZE
from .profile import rate_matrix

__all__ = ["evasive_shape"]

#: noise standard deviations kept between a group gap and the link width (module notes)
MARGIN = 3.0


def evasive_shape(oracle: FrequencyOracle, targets, beta: float, n_total: int, z: float = LINK_Z,
                  min_size: int = MIN_SIZE, candidates: int = DEFAULT_CANDIDATES) -> np.ndarray:
    """The rates π = Aω (one per sorted target) of the attacker's linear programme (module
    docstring); a shape for :func:`.profile.profile_counts`.

    Parameters
    ----------
    oracle : FrequencyOracle
        The attacked oracle.
    targets : array_like of int
        The target set T.
    beta : float
        The fake users' fraction β, in (0, 1).
    n_total : int
        N, all users (genuine and fake).
    z : float, default 3
        The lift's link width in standard deviations.
    min_size : int, default 5
        The lift's smallest suspect chain, >= 2.
    candidates : int, default 1000
        Hash keys an OLH/BLH fake user searches.

    Returns
    -------
    ndarray, shape (r,)
        Rates in [0, 1], the largest on the last target.

    Raises
    ------
    ValueError
        Bad targets, β, N or ``min_size``.

    Examples
    --------
    >>> from ldpopt import oracles, robust
    >>> oue = oracles.get("oue", epsilon=1.0, d=64)
    >>> robust.evasive_shape(oue, range(10), 0.05, 100_000).round(3).tolist()  # groups of 4 at 3 levels
    [0.463, 0.463, 0.732, 0.732, 0.732, 0.732, 1.0, 1.0, 1.0, 1.0]
    """
    from scipy.optimize import linprog

    t = check_targets(targets, oracle.d)
    beta = check_beta(beta)
    if beta == 0.0:
        raise ValueError("beta must be positive: with no fake users there is nothing to optimise")
    n_total = _check_int(n_total, "n_total", 1)
    min_size = _check_int(min_size, "min_size", 2)
    candidates = _check_int(candidates, "candidates", 1)
    r, L = t.size, min_size - 1
    p, q = oracle.p, oracle.q
    sigma = 0.5 / (math.sqrt(n_total) * (p - q))
    gap = (z + MARGIN) * math.sqrt(2.0) * sigma * (p - q) / beta  # the level gap in rate units
    a = rate_matrix(oracle, t, candidates)
    step = np.diag(a) - np.r_[np.diag(a, -1), 0.0]  # π_k − π_{k+1} per unit of ω_k (column k)
    for keep in range(r, 0, -L):  # drop the lowest group until feasible
        ends = [k for k in range(L, keep, L)] + [keep]
        bounds = [(0.0, None) if k + 1 in ends else (0.0, 0.0) for k in range(r)]
        rows = [-np.eye(r)[k - 1] * step[k - 1] for k in ends[:-1]]
        res = linprog(-a.sum(axis=0), A_ub=np.array([np.ones(r)] + rows), b_ub=np.array([1.0] + [-gap] * len(rows)),
                      bounds=bounds, method="highs")
        if res.status == 0:
            return np.clip(a @ res.x, 0.0, 1.0)[::-1]
    raise ValueError("no profile keeps the targets' levels apart at this β and N")
