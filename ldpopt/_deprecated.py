"""Old import paths kept for one release, by one mechanism: a finder of old module paths.

A package that moved modules states a table ``old path → new module(s)`` and calls :func:`install`;
``import old.path`` then finds no file but this finder, which warns once (a
:class:`DeprecationWarning` naming the new path, pointed at the user's import line) and gives a
module holding the new module's objects (old private names of the flat layout included, through
``renames``). No forwarding file is left behind in the package. :func:`forward` answers a former
module-level name of a package with the same warning; :func:`unexported` the names a package's
``__all__`` no longer lists, at their modules. Each warning names :data:`REMOVAL`, the release without them.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import types
import warnings
from collections.abc import Mapping

__all__ = ["REMOVAL", "forward", "install", "unexported", "warn_moved"]

#: the release that removes the old paths and names kept here (0.3.0 is the one that keeps them)
REMOVAL = "0.4.0"

_OWN = ("__name__", "__spec__", "__loader__", "__package__", "__path__", "__file__", "__cached__")


def warn_moved(old: str, new: str, stacklevel: int) -> None:
    """The one warning of an old path (a module or a name): :class:`DeprecationWarning` naming the new
    path; ``stacklevel`` points it at the user's line."""
    warnings.warn(f"{old} is deprecated and will be removed in ldpopt {REMOVAL}; use {new} instead",
                  DeprecationWarning, stacklevel=stacklevel + 1)


def _caller_level() -> int:
    """The stack level (seen from :func:`warn_moved`'s caller) of the first frame outside the import
    machinery and this module."""
    frame: types.FrameType | None = sys._getframe(1)
    level = 1
    while frame is not None and (frame.f_code.co_filename.startswith("<frozen importlib")
                                 or frame.f_code.co_filename == __file__):
        frame, level = frame.f_back, level + 1
    return level


class _OldPaths(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds an old module path of the installed tables and loads it as its new module's objects."""

    def __init__(self) -> None:
        self.table: dict[str, tuple[tuple[str, ...], dict[str, str], dict]] = {}

    def find_spec(self, fullname, path=None, target=None):
        if fullname not in self.table:
            return None
        return importlib.util.spec_from_loader(
            fullname, self, is_package=any(k.startswith(fullname + ".") for k in self.table))

    def create_module(self, spec):
        return None  # the default module; exec_module fills it

    def exec_module(self, module: types.ModuleType) -> None:
        homes, renames, extra = self.table[module.__name__]
        warn_moved(module.__name__, homes[0], stacklevel=_caller_level())
        mods = [importlib.import_module(h) for h in homes]
        for mod in reversed(mods):  # the first home wins
            module.__dict__.update({k: v for k, v in vars(mod).items() if k not in _OWN})
        for old, new in renames.items():
            for mod in mods:
                if hasattr(mod, new):
                    module.__dict__[old] = getattr(mod, new)
                    break
        module.__dict__.update(extra)
        module.__dict__["__all__"] = sorted({n for mod in mods for n in getattr(mod, "__all__", ())})


_FINDER = _OldPaths()


def install(table: Mapping[str, str | tuple], renames: Mapping[str, str] | None = None,
            extra: Mapping[str, Mapping] | None = None) -> None:
    """Make every old module path of ``table`` importable for one release.

    Parameters
    ----------
    table : mapping
        Old module path → its new module, or a tuple of modules looked up in order (the first is the
        one the warning names).
    renames : mapping, optional
        Old name → its name in the new modules, for every old path of ``table`` (the flat layout's
        private helpers that moved under public names).
    extra : mapping, optional
        Old path → names the old module keeps that no new module has (an old signature).

    Examples
    --------
    >>> import warnings
    >>> from ldpopt._deprecated import install
    >>> install({"ldpopt.an_old_path": "ldpopt.estimate"})
    >>> with warnings.catch_warnings(record=True) as w:
    ...     warnings.simplefilter("always")
    ...     from ldpopt.an_old_path import Estimate
    >>> str(w[0].message)
    'ldpopt.an_old_path is deprecated and will be removed in ldpopt 0.4.0; use ldpopt.estimate instead'
    """
    for old, new in table.items():
        homes = (new,) if isinstance(new, str) else tuple(new)
        _FINDER.table[old] = (homes, dict(renames or {}), dict((extra or {}).get(old, {})))
    if _FINDER not in sys.meta_path:
        sys.meta_path.append(_FINDER)


def forward(old: str, homes: tuple[str, ...], renames: dict[str, str] | None = None):
    """A module ``__getattr__`` answering a former name of ``old`` from the first of ``homes`` (module
    names) that has it (``renames``: an old name → its name there), with a :class:`DeprecationWarning`."""
    renames = dict(renames or {})

    def __getattr__(name: str):
        target = renames.get(name, name)
        for home in homes:
            mod = importlib.import_module(home)
            if hasattr(mod, target):
                warn_moved(f"{old}.{name}", f"{home}.{target}", stacklevel=3)
                return getattr(mod, target)
        raise AttributeError(f"module {old!r} has no attribute {name!r}")

    return __getattr__


def unexported(package: str, names: Mapping[str, str], stacklevel: int = 2):
    """A package ``__getattr__`` answering the names its ``__all__`` no longer lists (they stay at the
    modules that hold them), each with a :class:`DeprecationWarning` naming that module.

    Parameters
    ----------
    package : str
        The package's name (``__name__``).
    names : mapping
        Former name → ``"module"`` (the module holding the same name) or ``"module:name"`` (a new name).
    stacklevel : int, default 2
        Where the warning points, seen from this ``__getattr__`` (3 where a package's own
        ``__getattr__`` calls it).

    Returns
    -------
    callable
        ``__getattr__(name)``: the object, or AttributeError for a name not in ``names``; its
        ``names`` attribute is the table.

    Examples
    --------
    >>> import warnings
    >>> from ldpopt._deprecated import unexported
    >>> get = unexported("ldpopt.somewhere", {"Estimate": "ldpopt.estimate"})
    >>> with warnings.catch_warnings(record=True) as w:
    ...     warnings.simplefilter("always")
    ...     get("Estimate").__name__
    'Estimate'
    >>> str(w[0].message)
    'ldpopt.somewhere.Estimate is deprecated and will be removed in ldpopt 0.4.0; use ldpopt.estimate.Estimate instead'
    """
    table = {old: (home.partition(":")[0], home.partition(":")[2] or old) for old, home in names.items()}

    def __getattr__(name: str):
        if name not in table:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        home, target = table[name]
        warn_moved(f"{package}.{name}", f"{home}.{target}", stacklevel=stacklevel)
        return getattr(importlib.import_module(home), target)

    __getattr__.names = dict(names)  # type: ignore[attr-defined]
    return __getattr__
