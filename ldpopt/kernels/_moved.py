"""The module paths of the closed forms on an array namespace before they had a folder of their own
(``ldpopt.kernels.xp*`` → :mod:`ldpopt.xp`), kept working for one release through
:func:`ldpopt._deprecated.install` (no file left at the old path). :data:`MOVED` is the one list."""

from __future__ import annotations

from .. import _deprecated

#: old module path → new module path
MOVED = {"ldpopt.kernels.xp": "ldpopt.xp.forms", "ldpopt.kernels.xp_check": "ldpopt.xp.check",
         "ldpopt.kernels.xp_cut": "ldpopt.xp.cut", "ldpopt.kernels.xp_mle": "ldpopt.xp.mle"}


def install() -> None:
    """Make the old paths importable (:func:`ldpopt._deprecated.install`)."""
    _deprecated.install(MOVED)
