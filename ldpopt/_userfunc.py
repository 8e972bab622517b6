"""A function or item of the user's own, named ``"my_variants.py:kl"`` (a file, relative to a base
folder: the problem file's or the experiment config's, or the current directory on the command line)
or ``"package.module:name"`` (importable from the Python path).

Notes: docs/notes/extending.md, "ldpopt._userfunc"."""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import sys
from pathlib import Path

__all__ = ["PLUGINS_ENV", "UserCodeError", "is_reference", "load_attribute", "load_function", "load_module",
           "load_plugins", "plugins_from_env", "split_reference"]

#: the environment variable naming the plugins (``os.pathsep``-separated absolute ``FILE.py`` paths or
#: module names) that ``ldpopt --plugin`` loaded, so that worker processes (joblib, a local Dask
#: cluster) load them too when a registry lookup misses
PLUGINS_ENV = "LDPOPT_PLUGINS"


class UserCodeError(ValueError):
    """A reference to user code that cannot be loaded or called (one line naming the argument)."""


def is_reference(text) -> bool:
    """Whether ``text`` reads as ``FILE.py:NAME`` or ``MODULE:NAME`` (a string with one colon and a
    name after it; a Windows drive letter ``C:\\...`` before a ``.py:NAME`` is allowed)."""
    if not isinstance(text, str) or ":" not in text:
        return False
    target, _, name = text.rpartition(":")
    return bool(target) and name.isidentifier()


def split_reference(ref: str, where: str, error=UserCodeError) -> tuple[str, str]:
    """(target, name) of ``"FILE.py:NAME"`` / ``"MODULE:NAME"``."""
    if not is_reference(ref):
        raise error(f"{where}: a function is named FILE.py:NAME or MODULE:NAME, got {ref!r}")
    target, _, name = ref.rpartition(":")
    return target, name


def _module_from_file(path: Path, where: str, error):
    if not path.is_file():
        raise error(f"{where}: no such file: {path}")
    name = "_ldpopt_user_" + hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:16]
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise error(f"{where}: cannot load {path} as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # before running it: a decorator in the file may look itself up
    try:
        spec.loader.exec_module(module)
    except Exception as exc:  # the user's code: any failure is reported on one line
        del sys.modules[name]
        raise error(f"{where}: importing {path} raised {type(exc).__name__}: {exc}") from exc
    return module


def resolve_path(target: str, base) -> Path:
    """The file ``target`` names, relative to ``base`` (None: the current directory), absolute."""
    path = Path(target)
    if not path.is_absolute():
        path = Path(base if base is not None else Path.cwd()) / path
    return path.resolve()


def load_module(target: str, base=None, where: str = "module", error=UserCodeError):
    """Import ``target`` (a ``FILE.py`` relative to ``base``, or a module name) once per process, so
    that what it registers takes effect; the module."""
    if target.endswith(".py"):
        return _module_from_file(resolve_path(target, base), where, error)
    try:
        return importlib.import_module(target)
    except ModuleNotFoundError as exc:
        raise error(f"{where}: no module {target!r} ({exc})") from None
    except Exception as exc:  # the user's module: any failure
        raise error(f"{where}: importing {target} raised {type(exc).__name__}: {exc}") from exc


def load_attribute(ref: str, base=None, where: str = "function", error=UserCodeError):
    """The object ``ref`` ("FILE.py:NAME" or "MODULE:NAME") names; a relative FILE is looked up in
    ``base`` (None: the current directory). ``where`` starts every error message."""
    target, name = split_reference(ref, where, error)
    module = load_module(target, base, where, error)
    if not hasattr(module, name):
        raise error(f"{where}: {target} has no function {name!r}")
    return getattr(module, name)


def load_function(ref, params, base: Path, where: str, error=UserCodeError):
    """``ref`` ("FILE.py:NAME" or "MODULE:NAME") → a callable ``(f, estimate)`` named NAME that calls
    the user's function as ``function(f, estimate, **params)`` — the callable signature
    :class:`ldpopt.problems.Problem` takes for an objective or a constraint; ``where`` (e.g.
    ``"--problem p.toml: objective"``) starts every error message."""
    if params is None:
        params = {}
    if not isinstance(params, dict):
        raise error(f"{where}: params must be a table/object of keyword arguments, got {params!r}")
    func = load_attribute(ref, base, where, error)
    if not callable(func):
        raise error(f"{where}: {ref} is a {type(func).__name__}, not a function")
    name = ref.rpartition(":")[2]

    def call(f, estimate):
        try:
            return func(f, estimate, **params)
        except Exception as exc:  # the user's code
            raise error(f"{where}: {ref} raised {type(exc).__name__}: {exc}") from exc

    call.__name__ = call.__qualname__ = name  # the objective's / constraint's name in ldpopt's output
    call.__doc__ = func.__doc__
    return call


def load_plugins(refs, base=None, where: str = "--plugin", error=UserCodeError) -> list[str]:
    """Import each plugin — a ``FILE.py`` (relative to ``base``, None: the current directory) or an
    importable ``MODULE`` — so that the methods, oracles, objectives and constraints it registers by
    decorator are known; return their canonical forms (absolute paths, module names), which
    :data:`PLUGINS_ENV` carries to worker processes. A file is imported once per process."""
    out = []
    for ref in refs:
        if not isinstance(ref, str) or not ref:
            raise error(f"{where}: a plugin is a FILE.py or a MODULE name, got {ref!r}")
        load_module(ref, base, f"{where} {ref}", error)
        out.append(str(resolve_path(ref, base)) if ref.endswith(".py") else ref)
    return out


def plugins_from_env() -> list[str]:
    """Load the plugins :data:`PLUGINS_ENV` names (set by ``ldpopt --plugin`` for its worker
    processes); a registry calls this once when a name is not found. Returns what it loaded."""
    import os

    refs = [r for r in os.environ.get(PLUGINS_ENV, "").split(os.pathsep) if r]
    return load_plugins(refs, where=PLUGINS_ENV) if refs else []
