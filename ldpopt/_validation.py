"""Input checks used at ldpopt's public boundary.

Every check raises ``ValueError`` (or ``TypeError`` for a wrong kind of object) whose message names
the argument and the rule it broke, e.g. ``epsilon must be finite and > 0, got -1.0``. Inside the
package, values that passed these checks are trusted.
"""

from __future__ import annotations

import numbers
from typing import cast

import numpy as np

__all__ = [
    "as_generator",
    "check_counts",
    "check_delta",
    "check_domain_size",
    "check_epsilon",
    "check_float_array",
    "check_n",
    "check_probabilities",
    "check_values",
]


def check_epsilon(epsilon, name: str = "epsilon") -> float:
    """Return ``epsilon`` as a float after checking it is a finite real number > 0."""
    if isinstance(epsilon, bool) or not isinstance(epsilon, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(epsilon).__name__}")
    value = float(epsilon)
    if not np.isfinite(value) or value <= 0:
        raise ValueError(f"{name} must be finite and > 0, got {epsilon!r}")
    return value


def check_delta(delta, name: str = "delta") -> float:
    """Return ``delta`` as a float after checking it is a real number in [0, 1) (a privacy δ)."""
    if isinstance(delta, bool) or not isinstance(delta, numbers.Real):
        raise TypeError(f"{name} must be a real number in [0, 1), got {type(delta).__name__}")
    if not 0.0 <= float(delta) < 1.0:
        raise ValueError(f"{name} must be a real number in [0, 1), got {delta!r}")
    return float(delta)


def _check_int(value, name: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        if isinstance(value, numbers.Real) and float(value).is_integer():
            value = int(float(value))
        else:
            raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    value = int(value)
    if value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value}")
    return value


def check_domain_size(d, name: str = "d") -> int:
    """Return the domain size ``d`` as an int after checking ``d >= 2``."""
    return _check_int(d, name, 2)


def check_n(n, name: str = "n") -> int:
    """Return the number of users ``n`` as an int after checking ``n >= 1``."""
    return _check_int(n, name, 1)


def check_probabilities(p, q) -> tuple[float, float]:
    """Check an oracle's support probabilities: ``0 <= q < p <= 1``, both finite."""
    try:
        p, q = float(p), float(q)
    except (TypeError, ValueError):
        raise TypeError(f"p and q must be real numbers, got p={p!r}, q={q!r}") from None
    if not (np.isfinite(p) and np.isfinite(q)):
        raise ValueError(f"p and q must be finite, got p={p!r}, q={q!r}")
    if not 0.0 <= q < p <= 1.0:
        raise ValueError(f"p and q must satisfy 0 <= q < p <= 1, got p={p!r}, q={q!r}")
    return p, q


def check_float_array(x, name: str, *, length: int | None = None, min_length: int = 1) -> np.ndarray:
    """Return ``x`` as a new 1-D float64 array, checking shape and that every entry is finite."""
    try:
        arr = np.array(x, dtype=np.float64, copy=True)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a 1-D array of real numbers") from None
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {arr.shape}")
    if length is not None and arr.shape[0] != length:
        raise ValueError(f"{name} must have length {length}, got {arr.shape[0]}")
    if arr.shape[0] < min_length:
        raise ValueError(f"{name} must have at least {min_length} entries, got {arr.shape[0]}")
    if not np.all(np.isfinite(arr)):
        bad = int(np.flatnonzero(~np.isfinite(arr))[0])
        raise ValueError(f"{name} must be finite; entry {bad} is {arr[bad]!r}")
    return arr


def check_counts(counts, name: str = "counts", *, d: int | None = None, integral: bool = True) -> np.ndarray:
    """Return non-negative counts as an int64 array (``integral``) or float64 array.

    Raises a ``ValueError`` naming ``name`` for NaN/inf, negative entries, non-integers (when
    ``integral``), a wrong length (when ``d`` is given) or an empty array.
    """
    arr = check_float_array(counts, name, length=d, min_length=1)
    if np.any(arr < 0):
        bad = int(np.flatnonzero(arr < 0)[0])
        raise ValueError(f"{name} must be >= 0; entry {bad} is {arr[bad]!r}")
    if integral:
        if np.any(arr != np.floor(arr)):
            bad = int(np.flatnonzero(arr != np.floor(arr))[0])
            raise ValueError(f"{name} must be integers; entry {bad} is {arr[bad]!r}")
        if np.any(arr > np.iinfo(np.int64).max):
            raise ValueError(f"{name} must fit in int64")
        return arr.astype(np.int64)
    return arr


def check_values(values, d: int, name: str = "values") -> np.ndarray:
    """Return user values as an int64 array after checking each is an integer in ``[0, d)``."""
    arr = np.asarray(values)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {arr.shape}")
    if arr.shape[0] == 0:
        raise ValueError(f"{name} must contain at least one user value")
    if arr.dtype.kind == "b":
        raise ValueError(f"{name} must be integers in [0, {d}), got booleans")
    if arr.dtype.kind not in "iu":
        if arr.dtype.kind != "f":
            raise ValueError(f"{name} must be integers in [0, {d}), got dtype {arr.dtype}")
        finite = np.isfinite(arr)
        if not np.all(finite) or np.any(arr != np.floor(arr)):
            bad = int(np.flatnonzero(~finite | (arr != np.floor(np.where(finite, arr, 0))))[0])
            raise ValueError(f"{name} must be integers in [0, {d}); entry {bad} is {arr[bad]!r}")
    if np.any(arr < 0) or np.any(arr >= d):
        bad = int(np.flatnonzero((arr < 0) | (arr >= d))[0])
        raise ValueError(f"{name} must be integers in [0, {d}); entry {bad} is {arr[bad]!r}")
    return arr.astype(np.int64)


def as_generator(rng) -> np.random.Generator:
    """Turn ``rng`` into a ``numpy.random.Generator``.

    ``rng`` may be an int seed (same seed, same numbers), a ``Generator`` (used as is, so a caller can
    thread one generator through several calls), or the string ``"secure"``, for client-side
    perturbation in deployment: a ``Generator`` on :class:`ldpopt._secure.SecureBitGenerator`, whose
    every 64-bit word is read from the operating system's CSPRNG (``os.urandom``), so the stream
    itself is cryptographically secure (not merely a PRNG with an unguessable seed; numpy's variate
    transformations are applied to those words). About 1 µs per scalar variate: for perturbing a few
    users, not for simulations. ``None`` is refused: ldpopt has no hidden global randomness.
    """
    if isinstance(rng, np.random.Generator):
        return rng
    if isinstance(rng, str):
        if rng == "secure":
            from ._secure import SecureBitGenerator

            # numpy takes any object exposing a bit generator capsule; the cast says so to the checker
            return np.random.Generator(cast(np.random.BitGenerator, SecureBitGenerator()))
        raise ValueError(f"rng must be an int seed, a numpy Generator or 'secure', got {rng!r}")
    if isinstance(rng, bool) or not isinstance(rng, numbers.Integral) or int(rng) < 0:
        raise ValueError(f"rng must be an int seed >= 0, a numpy Generator or 'secure', got {rng!r}")
    return np.random.default_rng(int(rng))
