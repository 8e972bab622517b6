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

__all__ = ["get_kind", "kind", "kinds", "load_dataset", "simulate"]

_KINDS: dict[str, Callable] = {}
_OWN_DATA: set[str] = set()  # kinds whose datasets are not ldpopt.datasets names


def kind(name: str, *, own_data: bool = False):
    """Decorator registering a task kind under ``name``; ``own_data``: the kind loads its config's
    datasets itself (not through :func:`load_dataset`), so the runner does not pre-load them."""
    def deco(fn):
        _KINDS[name] = fn
        if own_data:
            _OWN_DATA.add(name)
        return fn
    return deco


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
    _load_kind_modules()
    return sorted(_KINDS)


def get_kind(name: str) -> Callable:
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
    names = list(task.methods)
    if names == ["all"]:
        names = list(_methods.available().index)
    return names
