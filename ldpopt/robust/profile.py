"""Attacks with a chosen support profile over the targets: unequal splits and the adaptive attacker's.

Notes: docs/notes/poisoning.md, "ldpopt.robust.profile"."""

from __future__ import annotations

import numpy as np

from .._validation import _check_int, as_generator
from ..oracles.base import FrequencyOracle
from .attack_counts import fake_counts
from .attacks import DEFAULT_CANDIDATES, check_targets, mean_target_support
from .forms import form_of

__all__ = ["profile_counts", "profile_rates", "rate_matrix", "split_shape"]


def split_shape(r: int) -> np.ndarray:
    """The unequal split 1 : 2 : … : r as a shape (float array of length r).

    Parameters
    ----------
    r : int
        Number of targets, >= 1.

    Returns
    -------
    ndarray, shape (r,)

    Examples
    --------
    >>> from ldpopt import robust
    >>> robust.split_shape(3)
    array([1., 2., 3.])
    """
    return np.arange(1, _check_int(r, "r", 1) + 1, dtype=np.float64)


def _shape(shape, r: int) -> np.ndarray:
    w = np.asarray(shape, dtype=np.float64).ravel()
    if w.size != r or not np.all(np.isfinite(w)) or w.min() < 0 or w.max() <= 0:
        raise ValueError(f"shape must hold {r} finite non-negative weights (one per target), not all zero")
    return w


def rate_matrix(oracle, targets: np.ndarray, candidates: int) -> np.ndarray:
    """A of the module notes for the nested prefixes of ``targets`` (in the given order)."""
    r = targets.size
    j = np.arange(1, r + 1)
    s = np.array([mean_target_support(oracle, "mga", np.sort(targets[:k]), candidates) for k in j])
    b = np.array([form_of(oracle).mga_other_rate(oracle, np.sort(targets[:k])) for k in j])
    inside = j[:, None] <= j[None, :]
    return np.where(inside, (s / j)[None, :], b[None, :])


def _groups(oracle, t: np.ndarray, w: np.ndarray, candidates: int):
    """(order of the targets by decreasing w, group fractions ω, rates π in that order)."""
    order = np.argsort(-w, kind="stable")
    a = rate_matrix(oracle, t[order], candidates)
    omega = np.clip(np.linalg.solve(a, w[order]), 0.0, None)
    if omega.sum() <= 0:
        omega[-1] = 1.0
    omega /= omega.sum()
    return order, omega, a @ omega


def profile_rates(oracle: FrequencyOracle, targets, shape, candidates: int = DEFAULT_CANDIDATES) -> np.ndarray:
    """π: the rate at which a profile attack's fake report supports each target (module notes),
    in the order of ``targets``.

    Parameters
    ----------
    oracle : FrequencyOracle
        The attacked oracle.
    targets : array_like of int
        The target set T (sorted on return order: the order of ``shape``).
    shape : array_like of float, shape (r,)
        Non-negative weights, one per sorted target.
    candidates : int, default 1000
        Hash keys an OLH/BLH fake user searches.

    Returns
    -------
    ndarray, shape (r,)

    Raises
    ------
    ValueError
        Bad targets or shape.

    Examples
    --------
    >>> from ldpopt import oracles, robust
    >>> oue = oracles.get("oue", epsilon=1.0, d=16)
    >>> robust.profile_rates(oue, [13, 14, 15], robust.split_shape(3)).round(3)
    array([0.333, 0.667, 1.   ])
    >>> grr = oracles.get("grr", epsilon=1.0, d=16)
    >>> robust.profile_rates(grr, [13, 14, 15], robust.split_shape(3)).round(3)
    array([0.167, 0.333, 0.5  ])
    """
    t = check_targets(targets, oracle.d)
    w = _shape(shape, t.size)
    order, _, rates = _groups(oracle, t, w, _check_int(candidates, "candidates", 1))
    out = np.empty(t.size)
    out[order] = rates
    return out


def profile_counts(oracle: FrequencyOracle, targets, shape, m: int, rng,
                   candidates: int = DEFAULT_CANDIDATES) -> np.ndarray:
    """Support counts (int64, length d) of m fake users running the profile attack of ``shape``
    (module notes), exact in law.

    Parameters
    ----------
    oracle : FrequencyOracle
        The attacked oracle.
    targets : array_like of int
        The target set T; ``shape`` weights the sorted targets.
    shape : array_like of float, shape (r,)
        Non-negative weights, one per sorted target.
    m : int
        Number of fake users, >= 0.
    rng : int, numpy.random.Generator or "secure"
        The randomness.
    candidates : int, default 1000
        Hash keys an OLH/BLH fake user searches.

    Returns
    -------
    ndarray of int64, shape (d,)

    Raises
    ------
    ValueError
        Bad targets, shape or m.

    Examples
    --------
    >>> from ldpopt import oracles, robust
    >>> grr = oracles.get("grr", epsilon=1.0, d=16)
    >>> int(robust.profile_counts(grr, [13, 14, 15], [1, 2, 3], 600, rng=0)[13:].sum())
    600
    """
    t = check_targets(targets, oracle.d)
    w = _shape(shape, t.size)
    m = _check_int(m, "m", 0)
    candidates = _check_int(candidates, "candidates", 1)
    gen = as_generator(rng)
    order, omega, _ = _groups(oracle, t, w, candidates)
    out = np.zeros(oracle.d, dtype=np.int64)
    sizes = gen.multinomial(m, omega / omega.sum())
    for k in np.flatnonzero(sizes):
        out += fake_counts(oracle, "mga", np.sort(t[order[:k + 1]]), int(sizes[k]), gen, candidates)
    return out
