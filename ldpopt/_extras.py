"""Packages outside the core dependencies: import one, or fail naming the extra that installs it.

The extras are those of ``pyproject.toml`` ``[project.optional-dependencies]``, each listed in the
README ("Optional extras") with what needs it. ``tests/test_extras.py`` checks that every import of
an optional package in ``ldpopt`` goes through :func:`require` (or sits under an ``ImportError``
handler or an ``importlib.util.find_spec`` test of that package) with the extra that provides it.
"""

from __future__ import annotations

import importlib

__all__ = ["require"]


def require(module: str, extra: str | None, what: str):
    """``import module``; if it is missing, an ``ImportError`` saying that ``what`` needs it and how to
    install it: ``pip install 'ldpopt[EXTRA]'`` (``'.[EXTRA]'`` in a checkout), or, for a core
    dependency (``extra=None``) missing from a broken environment, to reinstall ldpopt."""
    try:
        return importlib.import_module(module)
    except ImportError as e:
        top = module.split(".")[0]
        how = (f"install ldpopt's {extra!r} extra: pip install 'ldpopt[{extra}]' (in a checkout: "
               f"pip install '.[{extra}]')" if extra else
               "it is a dependency of ldpopt: reinstall ldpopt (pip install ldpopt, or pip install . in a checkout)")
        raise ImportError(f"{what} needs the package {top!r}, which is not installed; {how}") from e
