"""Experiment sweeps: TOML configs → resumable, parallel, reproducible result tables → figures; and
:func:`evaluate`: your methods beside the papers' over their grid, one table and the figures."""

from . import _moved
from .config import ExperimentConfig, load_config
from .evaluation import evaluate
from .registry import get_kind, kinds
from .runner import run, tasks_of

_moved.install()  # the flat layout's module paths (tasks_*, plot_*, claims_*), one release

__all__ = ["ExperimentConfig", "evaluate", "get_kind", "kinds", "load_config", "run", "tasks_of"]
