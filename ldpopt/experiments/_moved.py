"""The module paths of ``ldpopt.experiments`` before it was grouped by idea,
kept working for one release through :func:`ldpopt._deprecated.install` (no file left at the old path).

:data:`MOVED` is the one list. ``tasks_<family>`` modules also give the flat layout's private helpers
under their old names (:data:`RENAMES`: they live in :mod:`.toolkit` now), and ``tasks.simulate``
keeps its old signature (:func:`_simulate_dataset`).
"""

from __future__ import annotations

from .. import _deprecated

_E = "ldpopt.experiments"
_KIND = (f"{_E}.toolkit", f"{_E}.registry")

#: old module path → its new module(s), the first named in the warning
MOVED: dict[str, str | tuple[str, ...]] = {
    f"{_E}.tasks": (f"{_E}.registry", f"{_E}.toolkit"),
    **{f"{_E}.tasks_{m}": (f"{_E}.task_kinds.{m}", *_KIND) for m in (
        "wang", "wang_runs", "jia", "uncertainty", "uncertainty_batch", "numeric", "ranges", "pooling",
        "channels", "poisoning", "sketches", "heavy", "multi")},
    f"{_E}.plot": f"{_E}.figures.draw",
    f"{_E}.plots_jia": f"{_E}.figures.jia",
    **{f"{_E}.plot_{m}": f"{_E}.figures.{m}" for m in (
        "wang", "style", "choose", "coverage", "channels", "heavy", "multi", "numeric", "poisoning", "pooling",
        "ranges", "sketches")},
    **{f"{_E}.claims_{m}": f"{_E}.claims.{m}" for m in ("table", "format", "named", "jia")},
}

#: the flat layout's private helper names → their public names in :mod:`.toolkit`
RENAMES = {"_load": "load_dataset", "_params": "params", "_thaw": "unfreeze", "_unfreeze": "unfreeze",
           "_simulate": "simulate", "_answers": "answers", "_with_base": "with_base",
           "_one_estimate": "one_estimate", "_error_rows": "error_rows", "_is_method_file": "is_method_file"}


def _simulate_dataset(task, dataset, rng, **oracle_params):
    """The noisy estimate of ``dataset`` for a task: ``tasks.simulate``'s old signature of
    :func:`ldpopt.experiments.toolkit.simulate`."""
    from .toolkit import simulate

    return simulate(task, dataset.counts, dataset.d, rng, **oracle_params)


def install() -> None:
    """Make every old path of :data:`MOVED` importable (once)."""
    _deprecated.install(MOVED, renames=RENAMES, extra={f"{_E}.tasks": {"simulate": _simulate_dataset}})
