"""Old import paths kept for one release: a module that moved leaves a thin module behind that warns
once, naming the new path, and forwards every name to the new home."""

from __future__ import annotations

import importlib
import warnings

__all__ = ["forward", "moved", "warn_moved"]


def warn_moved(old: str, new: str, stacklevel: int) -> None:
    """The one warning of an old path (a module or a name): :class:`DeprecationWarning` naming the new
    path; ``stacklevel`` points it at the user's import line. Used by the forwarders here and by the
    finder of ``ldpopt.problems``' old module paths (``problems/_moved.py``)."""
    warnings.warn(f"{old} is deprecated and will be removed in the next release; use {new} instead",
                  DeprecationWarning, stacklevel=stacklevel + 1)


def _warn(old: str, new: str) -> None:
    warn_moved(old, new, stacklevel=4)


def forward(old: str, homes: tuple[str, ...], renames: dict[str, str] | None = None):
    """A module ``__getattr__`` answering a name of ``old`` from the first of ``homes`` (module names)
    that has it (``renames``: an old name → its name there), with a :class:`DeprecationWarning`."""
    renames = dict(renames or {})

    def __getattr__(name: str):
        target = renames.get(name, name)
        for home in homes:
            mod = importlib.import_module(home)
            if hasattr(mod, target):
                _warn(f"{old}.{name}", f"{home}.{target}")
                return getattr(mod, target)
        raise AttributeError(f"module {old!r} has no attribute {name!r}")

    return __getattr__


def moved(namespace: dict, new: str, *also: str, renames: dict[str, str] | None = None) -> None:
    """Make the module whose globals are ``namespace`` a thin forwarder to module ``new`` (and then
    ``also``): a :class:`DeprecationWarning` naming ``new`` when it is imported, and every name of
    the old module (``renames``: old → new name) looked up there, ``from old import *`` included."""
    old = namespace["__name__"]
    warn_moved(old, new, stacklevel=3)
    homes = (new, *also)
    mods = [importlib.import_module(h) for h in homes]
    renames = dict(renames or {})

    def __getattr__(name: str):
        target = renames.get(name, name)
        for mod in mods:
            if hasattr(mod, target):
                return getattr(mod, target)
        raise AttributeError(f"module {old!r} has no attribute {name!r}")

    namespace["__getattr__"] = __getattr__
    namespace["__all__"] = sorted({n for mod in mods for n in getattr(mod, "__all__", ())})
