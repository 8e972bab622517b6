"""Privacy accounting of the numbers ldpopt post-processes: the central noise mechanisms on counts
(:mod:`.central`), the shuffle model's central (ε, δ) (:mod:`.shuffle`), and the statement every
estimate carries, with composition over rounds (:mod:`.statement`).

Notes: docs/notes/privacy.md.
"""

from __future__ import annotations

import importlib

from .. import _deprecated

__all__ = ["central", "shuffle", "statement"]

#: the δ an (ε, δ) statement is given at when none is given: composition over rounds, the shuffle
#: model, a Gaussian-type central mechanism's calibration (every default in ldpopt reads this one;
#: ``ldpopt.privacy.statement.DEFAULT_DELTA`` names it too)
DEFAULT_DELTA = 1e-6

# the deployments' baselines moved to the methods they are (ldpopt.methods.deployments), one release
_deprecated.install({f"{__name__}.baselines": "ldpopt.methods.deployments"})


def __getattr__(name: str):
    # the submodules load on first access (scipy's way): `Estimate.privacy` reads the statement
    # module alone, so printing a local estimate's statement imports neither scipy nor the accountants
    if name in __all__:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
