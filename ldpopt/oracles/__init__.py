"""Frequency oracles: GRR, OUE, SUE, OLH, BLH, HR, SS behind one interface (:class:`FrequencyOracle`).

>>> from ldpopt import oracles
>>> oue = oracles.get("oue", epsilon=1.0, d=1024)
"""

from __future__ import annotations

from .base import FrequencyOracle
from .cms import CMS
from .grr import GRR
from .hadamard import HR
from .hashing import BLH, OLH
from .hcms import HCMS
from .rappor import RAPPOR
from .subset import SS
from .unary import OUE, SUE

__all__ = ["BLH", "CMS", "GRR", "HCMS", "HR", "OLH", "OUE", "RAPPOR", "SS", "SUE", "FrequencyOracle", "available", "get"]

_REGISTRY: dict[str, type[FrequencyOracle]] = {cls.name: cls for cls in (GRR, OLH, BLH, HR, OUE, SUE, SS)}
_REGISTRY.update({cls.name: cls for cls in (CMS, HCMS, RAPPOR)})


_SKETCHES = ("cms", "hcms", "rappor")


def available(sketches: bool = False) -> list[str]:
    """Registry names of the pure oracles (a report supports a set of values; Eq. 2 variance exact).

    ``sketches=True`` adds the sketch and Bloom-filter oracles (CMS, HCMS, RAPPOR): one fixed public
    hash family shared by all users, so for that family the estimate is biased by the collisions and
    its variance is the family's (their modules); the registry-wide checks of the pure oracles (EM's
    likelihoods, shards, the privacy audit, ``ldpopt verify``) do not take them."""
    pure = sorted(name for name in _REGISTRY if name not in _SKETCHES)
    return sorted(_REGISTRY) if sketches else pure


def get(name: str, epsilon: float, d: int, **params) -> FrequencyOracle:
    """Build the oracle registered as ``name`` (case-insensitive), e.g. ``get("oue", 1.0, 1024)``."""
    if not isinstance(name, str) or name.lower() not in _REGISTRY:
        raise ValueError(f"oracle must be one of {available(sketches=True)}, got {name!r}")
    return _REGISTRY[name.lower()](epsilon=epsilon, d=d, **params)
