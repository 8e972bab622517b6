"""Argument checks shared by the methods: a real number, a name from a list, an iteration cap; and
those of the Bayesian post-processors (:mod:`ldpopt.methods.bayes`) and their slow references
(:mod:`ldpopt.methods.bayes.reference`): s ≥ 0 (a non-increasing power law), the s search
interval, the fit and prior names."""

from __future__ import annotations

import numbers

import numpy as np

_FITS = ("mle", "mean-variance")
_PRIORS = ("power-law", "gaussian")
_DEFAULT_S_BOUNDS = (0.0, 10.0)
_TAU_FLOOR = 1e-3


def _real(value, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    v = float(value)
    if not np.isfinite(v):
        raise ValueError(f"{name} must be finite, got {value!r}")
    return v


def _check_s(s) -> float:
    v = _real(s, "s")
    if v < 0:
        raise ValueError(f"s must be >= 0 (a non-increasing power law i^-s), got {s!r}")
    return v


def _check_bounds(bounds) -> tuple[float, float]:
    try:
        lo, hi = bounds
    except (TypeError, ValueError):
        raise ValueError(f"s_bounds must be a pair (lo, hi), got {bounds!r}") from None
    lo, hi = _real(lo, "s_bounds[0]"), _real(hi, "s_bounds[1]")
    if not 0.0 <= lo < hi:
        raise ValueError(f"s_bounds must satisfy 0 <= lo < hi, got {bounds!r}")
    return lo, hi


def _check_choice(value, name: str, choices) -> str:
    if not isinstance(value, str) or value.lower() not in choices:
        raise ValueError(f"{name} must be one of {list(choices)}, got {value!r}")
    return value.lower()


def _check_max_iter(max_iter) -> int:
    if isinstance(max_iter, bool) or not isinstance(max_iter, numbers.Integral) or max_iter < 1:
        raise ValueError(f"max_iter must be an integer >= 1, got {max_iter!r}")
    return int(max_iter)
