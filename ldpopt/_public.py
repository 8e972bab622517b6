"""The public names of ldpopt, as one list that the API reference (docs/conf.py) and the docstring
checks (tests/test_docstrings.py) both read: every module of ``ldpopt.SUBMODULES`` with its
``__all__``; a package without ``__all__`` (``ldpopt.interop``) offers its public submodules, and a
module listed in an ``__all__`` offers its own ``__all__``."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from collections.abc import Iterator

__all__ = ["entries", "walk"]


def entries(module: str) -> list[tuple[str, object]]:
    """``(name, object)`` for every public name of the module named ``module`` (imported here)."""
    mod = importlib.import_module(module)
    names = getattr(mod, "__all__", None)
    if names is None:
        subs = sorted(i.name for i in pkgutil.iter_modules(getattr(mod, "__path__", [])) if not i.name.startswith("_"))
        return [(s, importlib.import_module(f"{module}.{s}")) for s in subs]
    return [(n, getattr(mod, n)) for n in names]


def walk(modules: tuple[str, ...] | None = None) -> Iterator[tuple[str, object]]:
    """``(full name, object)`` for every public class, function and constant under ``modules``
    (default: every ``ldpopt.SUBMODULES``), descending into the modules an ``__all__`` lists; a
    class's public methods and properties defined on the class itself follow it as ``Class.name``
    (``inspect.getdoc`` of one finds a docstring it inherits from a base class, as the API pages show it)."""
    if modules is None:
        from . import SUBMODULES

        modules = tuple(f"ldpopt.{m}" for m in SUBMODULES)
    for module in modules:
        for name, obj in entries(module):
            full = f"{module}.{name}"
            if inspect.ismodule(obj):
                yield from walk((obj.__name__,))
                continue
            yield full, obj
            if inspect.isclass(obj):
                for attr, member in vars(obj).items():
                    if attr.startswith("_"):
                        continue
                    if isinstance(member, (property, staticmethod, classmethod)) or inspect.isfunction(member):
                        yield f"{full}.{attr}", getattr(obj, attr) if not isinstance(member, property) else member
