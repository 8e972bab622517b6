"""Frequency oracles: GRR, OUE, SUE, OLH, BLH, HR, SS behind one interface (:class:`FrequencyOracle`).

>>> from ldpopt import oracles
>>> oue = oracles.get("oue", epsilon=1.0, d=1024)
"""

from __future__ import annotations

from .base import FrequencyOracle
from .grr import GRR
from .hadamard import HR
from .hashing import BLH, OLH
from .subset import SS
from .unary import OUE, SUE

__all__ = ["FrequencyOracle", "GRR", "OLH", "BLH", "HR", "OUE", "SUE", "SS", "available", "get"]

_REGISTRY: dict[str, type[FrequencyOracle]] = {cls.name: cls for cls in (GRR, OLH, BLH, HR, OUE, SUE, SS)}


def available() -> list[str]:
    """Registry names of every oracle."""
    return sorted(_REGISTRY)


def get(name: str, epsilon: float, d: int, **params) -> FrequencyOracle:
    """Build the oracle registered as ``name`` (case-insensitive), e.g. ``get("oue", 1.0, 1024)``."""
    if not isinstance(name, str) or name.lower() not in _REGISTRY:
        raise ValueError(f"oracle must be one of {available()}, got {name!r}")
    return _REGISTRY[name.lower()](epsilon=epsilon, d=d, **params)
