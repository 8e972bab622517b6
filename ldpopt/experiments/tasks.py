"""Task kinds: what one cell (dataset, oracle, ε, repetition) of a sweep computes.

A kind is a function ``kind(task) -> list[dict]`` of tidy rows (at least ``method``, ``metric``,
``value``; extra columns such as ``rho`` or ``k`` for query parameters). It draws all randomness from
``task.rng()``. Register one with :func:`kind`. The kinds themselves live in ``tasks_wang`` (Wang et
al.: full-domain, set-value, fixed-sets, top-k, bias-variance, benefit, choose-method) and
``tasks_jia`` (Jia & Gong: noise-distribution, estimation-error, heavy-hitters).
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable

from .. import methods as _methods
from .. import oracles as _oracles

__all__ = ["check_methods", "get_kind", "kind", "kinds", "load_dataset", "method_labels", "simulate"]

_KINDS: dict[str, Callable] = {}
_OWN_DATA: set[str] = set()  # kinds whose datasets are not ldpopt.datasets names
_REGISTRY_METHODS: dict[str, tuple] = {}  # kinds whose methods are registered methods (+ these labels)


def kind(name: str, *, own_data: bool = False, registry_methods: tuple | None = None):
    """Decorator registering a task kind under ``name``; ``own_data``: the kind loads its config's
    datasets itself (not through :func:`load_dataset`), so the runner does not pre-load them;
    ``registry_methods``: the config's ``methods`` are post-processing methods (registered names,
    ``FILE.py:NAME``, ``"all"``) or one of these extra labels — checked when the config is loaded."""
    def deco(fn):
        _KINDS[name] = fn
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


def loads_own_data(name: str) -> bool:
    """Whether kind ``name`` loads its datasets itself (:func:`kind`'s ``own_data``)."""
    _load_kind_modules()
    return name in _OWN_DATA


# modules that register more kinds; imported on first lookup (also inside worker processes)
_KIND_MODULES = ("tasks_wang", "tasks_wang_runs", "tasks_jia", "tasks_uncertainty", "tasks_uncertainty_batch", "tasks_numeric", "tasks_ranges",
                 "tasks_pooling", "tasks_channels", "tasks_poisoning", "tasks_sketches",
                 "tasks_heavy", "tasks_multi")


@functools.lru_cache(maxsize=1)
def _load_kind_modules() -> None:
    for mod in _KIND_MODULES:
        importlib.import_module(f"{__package__}.{mod}")


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
    >>> experiments.get_kind("full-domain").__name__
    'full_domain'
    """
    _load_kind_modules()
    if name not in _KINDS:
        raise ValueError(f"experiment kind must be one of {kinds()}, got {name!r}")
    return _KINDS[name]


@functools.lru_cache(maxsize=32)
def load_dataset(spec):
    """Load (once per process) the dataset a config names: a string, or (key, value) items with at
    least ``name`` (and loader arguments such as ``mode`` or ``seed``; ``label`` is only a display
    name)."""
    from .. import datasets

    if isinstance(spec, str):
        return datasets.load(spec)
    kw = dict(spec)
    name = kw.pop("name")
    kw.pop("label", None)
    return datasets.load(name, **kw)


def simulate(task, dataset, rng, **oracle_params):
    """The noisy estimate for a task: the oracle's exact fast path unless ``params.exact`` is set."""
    params = dict(task.params)
    oracle = _oracles.get(task.oracle, epsilon=task.epsilon, d=dataset.d, **oracle_params)
    return oracle.simulate(dataset.counts, rng, exact=bool(params.get("exact", False)))


def method_names(task) -> list[str]:
    """The task's method names: ``"all"`` is every registered method (but those assuming an ordered
    domain); a ``FILE.py:NAME`` entry (made
    absolute when the config was loaded) is loaded in this process (a worker's too) and named NAME."""
    names = list(task.methods)
    if names == ["all"]:  # the datasets are categorical: not the methods assuming an ordered domain
        return [m for m in _methods.names() if not _methods.get(m).needs_order]
    return [_methods.resolve(m, where="methods").name if _is_method_file(m) else m for m in names]


def _is_method_file(entry) -> bool:
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
        if _is_method_file(m):
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
