"""Every package's ``__all__`` names only what the package defines, so ``from ldpopt.<pkg> import *``
works. ruff's F822 (an undefined name in ``__all__``) is not applied to ``__init__.py`` files, where
a listed name may be a lazily loaded submodule, so this test checks the packages themselves."""

from __future__ import annotations

import importlib
import pkgutil

import pytest

import ldpopt


def _packages() -> list[str]:
    names = ["ldpopt"]
    for info in pkgutil.walk_packages(ldpopt.__path__, "ldpopt."):
        if info.ispkg:
            names.append(info.name)
    return sorted(names)


@pytest.mark.parametrize("name", _packages())
def test_all_names_resolve(name):
    module = importlib.import_module(name)
    exported = getattr(module, "__all__", None)
    if exported is None:
        pytest.skip(f"{name} has no __all__")
    missing = [item for item in exported if not hasattr(module, item)]
    assert not missing, f"{name}.__all__ names undefined {missing}"
    assert len(set(exported)) == len(exported), f"{name}.__all__ repeats a name"
