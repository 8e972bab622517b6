"""Key–value data under LDP: PrivKV, PCKV-UE and PCKV-GRR, their papers' estimators, and consistent
key–value estimation as a checked ldpopt Problem (docs/keyvalue.md).

Notes: docs/notes/keyvalue.md, "ldpopt.keyvalue"."""

from .. import _deprecated
from .consistent import solve_consistent
from .data import KVData, power_law, ratings_like
from .exact import epsilon
from .pckv import PCKV, PaddingWarning, pckv_grr, pckv_ue
from .privkv import PrivKV, privkv
from .protocol import KVEstimate

__all__ = [
    "PCKV",
    "KVData",
    "KVEstimate",
    "PaddingWarning",
    "PrivKV",
    "epsilon",
    "pckv_grr",
    "pckv_ue",
    "power_law",
    "privkv",
    "ratings_like",
    "solve_consistent",
]

# the names this package exported before it was cut to what a user calls: one release, with a DeprecationWarning
__getattr__ = _deprecated.unexported(__name__, {
    "consistent_problem": "ldpopt.keyvalue.consistent",
})
