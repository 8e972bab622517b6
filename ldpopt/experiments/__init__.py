"""Experiment sweeps: TOML configs → resumable, parallel, reproducible result tables → figures."""

from .config import ExperimentConfig, load_config
from .runner import run, tasks_of
from .tasks import get_kind, kinds

__all__ = ["ExperimentConfig", "get_kind", "kinds", "load_config", "run", "tasks_of"]
