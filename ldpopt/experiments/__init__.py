"""Experiment sweeps: TOML configs → resumable, parallel, reproducible result tables → figures; and
:func:`evaluate`: your methods beside the papers' over their grid, one table and the figures."""

from .. import _deprecated
from . import _moved
from .evaluation import evaluate
from .registry import kinds
from .runner import run

_moved.install()  # the flat layout's module paths (tasks_*, plot_*, claims_*), one release

__all__ = ["evaluate", "kinds", "run"]

# the names this package exported before it was cut to what a user calls: one release, with a DeprecationWarning
__getattr__ = _deprecated.unexported(__name__, {
    "ExperimentConfig": "ldpopt.experiments.config",
    "get_kind": "ldpopt.experiments.registry",
    "load_config": "ldpopt.experiments.config",
    "tasks_of": "ldpopt.experiments.runner",
})
