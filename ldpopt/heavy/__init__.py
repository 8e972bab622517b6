"""Heavy-hitter discovery over string domains: PEM, TreeHist and Apple's SFP on m-bit strings, each
round through any ldpopt frequency oracle, with their exact-in-law fast paths, scoring, and the
prefix levels made consistent as a tree (docs/sketches.md, "Heavy-hitter discovery")."""

from __future__ import annotations

from .. import _deprecated
from .pem import pem
from .result import HeavyHitters, precision_recall_f1, true_top
from .sfp import sfp
from .strings import decode, encode
from .treehist import treehist

__all__ = ["HeavyHitters", "decode", "encode", "pem", "precision_recall_f1", "sfp", "treehist",
           "true_top"]

# the names this package exported before it was cut to what a user calls: one release, with a DeprecationWarning
__getattr__ = _deprecated.unexported(__name__, {
    "frequency_mse": "ldpopt.heavy.result",
    "Level": "ldpopt.heavy.result",
})
