"""The task kinds' registry: the :func:`kind` decorator, lookup by name, and the discovery of every
module in ``task_kinds/`` (a module placed there is found; nothing lists them by hand)."""

from __future__ import annotations

import functools
import importlib
import pkgutil
from collections.abc import Callable

from .. import methods as _methods

__all__ = ["check_methods", "get_kind", "is_method_file", "kind", "kinds", "loads_own_data", "method_labels"]

_KINDS: dict[str, Callable] = {}
_OWN_DATA: set[str] = set()  # kinds whose datasets are not ldpopt.datasets names
_REGISTRY_METHODS: dict[str, tuple] = {}  # kinds whose methods are registered methods (+ these labels)
_ORACLE_PARAMS: set[str] = set()  # kinds that build their oracle with the config's oracle parameters


def kind(name: str, *, own_data: bool = False, registry_methods: tuple | None = None, oracle_params: bool = False):
    """Decorator registering a task kind under ``name``; ``own_data``: the kind loads its config's
    datasets itself (not through :func:`ldpopt.experiments.toolkit.load_dataset`), so the runner does not pre-load them;
    ``registry_methods``: the config's ``methods`` are post-processing methods (registered names,
    ``FILE.py:NAME``, ``"all"``) or one of these extra labels — checked when the config is loaded;
    ``oracle_params``: the kind builds its oracle with the parameters a config's ``oracles`` entry gives
    (``{name = "olh", g = 8}``: :func:`ldpopt.experiments.toolkit.task_oracle`); a config giving them
    to another kind is refused when it is loaded (they would be ignored)."""
    def deco(fn):
        _KINDS[name] = fn
        if oracle_params:
            _ORACLE_PARAMS.add(name)
        if own_data:
            _OWN_DATA.add(name)
        if registry_methods is not None:
            _REGISTRY_METHODS[name] = tuple(registry_methods)
        return fn
    return deco


def method_labels(name: str) -> tuple | None:
    """The extra labels kind ``name`` accepts beside registered methods, or None when its ``methods``
    are labels of its own (not post-processing methods)."""
    _load_kind_modules()
    return _REGISTRY_METHODS.get(name)


def takes_oracle_params(name: str) -> bool:
    """Whether kind ``name`` builds its oracle with a config's oracle parameters (:func:`kind`)."""
    _load_kind_modules()
    return name in _ORACLE_PARAMS


def loads_own_data(name: str) -> bool:
    """Whether kind ``name`` loads its datasets itself (:func:`kind`'s ``own_data``)."""
    _load_kind_modules()
    return name in _OWN_DATA


@functools.lru_cache(maxsize=1)
def _load_kind_modules() -> None:
    """Import every module of ``task_kinds/`` (also inside worker processes), so each registers its kinds."""
    package = importlib.import_module(f"{__package__}.task_kinds")
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda i: i.name):
        if not info.name.startswith("_"):
            importlib.import_module(f"{package.__name__}.{info.name}")


def kinds() -> list[str]:
    """The registered experiment kinds, sorted.

    Returns
    -------
    list of str

    Examples
    --------
    >>> from ldpopt import experiments
    >>> "full-domain" in experiments.kinds()
    True
    """
    _load_kind_modules()
    return sorted(_KINDS)


def get_kind(name: str) -> Callable:
    """The task function of experiment kind ``name``; ValueError naming the kinds when unknown.

    Parameters
    ----------
    name : str
        A kind of :func:`kinds`.

    Returns
    -------
    callable
        ``task -> rows``.

    Raises
    ------
    ValueError
        ``name`` is not a registered kind.

    Examples
    --------
    >>> from ldpopt import experiments
    >>> experiments.registry.get_kind("full-domain").__name__
    'full_domain'
    """
    _load_kind_modules()
    if name not in _KINDS:
        raise ValueError(f"experiment kind must be one of {kinds()}, got {name!r}")
    return _KINDS[name]


def is_method_file(entry) -> bool:
    """Whether a config's ``methods`` entry names a method in a file (``FILE.py:NAME``)."""
    from .._userfunc import is_reference

    return is_reference(entry) and entry.rpartition(":")[0].endswith(".py")


def check_methods(entries, kind_name: str, path) -> tuple:
    """A config's ``methods``, checked before any work: every ``FILE.py:NAME`` is loaded (the path
    relative to the config's folder) and returned with its path made absolute; for a kind whose
    methods are post-processing methods (:func:`method_labels`) every other entry must be registered,
    one of the kind's labels, or ``"all"``. Errors are one line naming ``methods[i]`` and the file."""
    from pathlib import Path

    path = Path(path)
    extra = method_labels(kind_name)
    if not isinstance(entries, (list, tuple)) or not entries:
        raise ValueError(f"experiment config {path}: methods must be a non-empty list, got {entries!r}")
    out = []
    for i, m in enumerate(entries):
        where = f"experiment config {path}: methods[{i}]"
        if not isinstance(m, str):
            raise TypeError(f"{where}: a method name or FILE.py:NAME, got {m!r}")
        if is_method_file(m):
            _methods.resolve(m, base=path.parent, where=where)  # loaded now: any error before the sweep
            given, _, attr = m.rpartition(":")
            target = Path(given) if Path(given).is_absolute() else (path.parent / given).resolve()
            out.append(f"{target}:{attr}")
            continue
        if extra is not None and m != "all" and m not in extra and m.lower() not in _methods.names():
            raise ValueError(f"{where}: method must be one of {sorted(_methods.names())}, {list(extra)}, 'all' "
                             f"or FILE.py:NAME, got {m!r}")
        out.append(m)
    return tuple(out)
