"""A function of the user's own named in a ``--problem`` file: ``"my_variants.py:kl_to_prior"``
(a file, relative to the problem file's folder) or ``"package.module:name"`` (importable from the
Python path), with keyword parameters from the file.

The function is called as ``function(f, estimate, **params)`` — the callable signature
:class:`ldpopt.problems.Problem` takes for an objective or a constraint, plus the file's
parameters. Every failure (file or module missing, no such function, not callable, the function
raising) is an :class:`InputError` naming the key: ``ldpopt solve`` prints it on one line and exits
with status 2.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import sys
from pathlib import Path

from ._args import InputError

__all__ = ["load_function"]


def _module_from_file(path: Path, where: str):
    if not path.is_file():
        raise InputError(f"{where}: no such file: {path}")
    # a private, stable module name per file, so two problem files' "my_variants.py" never collide
    name = "_ldpopt_user_" + hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:16]
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise InputError(f"{where}: cannot load {path} as a Python module")
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except Exception as exc:  # noqa: BLE001 — the user's code: any failure is reported on one line
        raise InputError(f"{where}: importing {path} raised {type(exc).__name__}: {exc}") from None
    sys.modules[name] = module
    return module


def load_function(ref, params, base: Path, where: str):
    """``ref`` ("FILE.py:NAME" or "MODULE:NAME") → a callable ``(f, estimate)`` named NAME that calls
    the user's function with ``**params``; ``where`` (e.g. ``"--problem p.toml: objective"``)
    starts every error message."""
    if not isinstance(ref, str) or ref.count(":") != 1 or not all(ref.split(":")):
        raise InputError(f"{where}: a function is named FILE.py:NAME or MODULE:NAME, got {ref!r}")
    if params is None:
        params = {}
    if not isinstance(params, dict):
        raise InputError(f"{where}: params must be a table/object of keyword arguments, got {params!r}")
    target, name = ref.split(":")
    if target.endswith(".py"):
        path = Path(target)
        module = _module_from_file(path if path.is_absolute() else base / path, where)
    else:
        try:
            module = importlib.import_module(target)
        except ModuleNotFoundError as exc:
            raise InputError(f"{where}: no module {target!r} ({exc})") from None
        except Exception as exc:  # noqa: BLE001
            raise InputError(f"{where}: importing {target} raised {type(exc).__name__}: {exc}") from None
    if not hasattr(module, name):
        raise InputError(f"{where}: {target} has no function {name!r}")
    func = getattr(module, name)
    if not callable(func):
        raise InputError(f"{where}: {ref} is a {type(func).__name__}, not a function")

    def call(f, estimate):
        try:
            return func(f, estimate, **params)
        except Exception as exc:  # noqa: BLE001 — the user's code
            raise InputError(f"{where}: {ref} raised {type(exc).__name__}: {exc}") from None

    call.__name__ = call.__qualname__ = name  # the objective's / constraint's name in ldpopt's output
    call.__doc__ = func.__doc__
    return call
