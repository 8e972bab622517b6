"""Out-of-core aggregation of a directory of Parquet report shards with Dask: map + tree reduction.

Notes: docs/notes/devices.md, "ldpopt.aggregate.dask"."""

from __future__ import annotations

import sys
from pathlib import Path

import pyarrow.parquet as pq

from ..kernels import DEVICES, resolve
from .cluster import kernel_share, local_client, usable_cores, uses_kernels
from .identity import check_not_held
from .partial import MergeError, Partial
from .shards import list_shards, read_identities, read_labels, read_oracle, shard_partial

__all__ = ["LOCAL_SCHEDULERS", "aggregate_shards", "local_workers", "plan", "task_rows"]

LOCAL_SCHEDULERS = ("synchronous", "threads", "local")
#: reports per map task, the target of the grouping of a shard's row groups into tasks
TASK_ROWS = 1 << 20
#: the most keyed hashes (reports × d) per map task of OLH and BLH, whose counting is O(d) per report
TASK_HASHES = 1 << 28
#: the fewest reports per map task when the input is cut finer to give every slot several tasks
MIN_TASK_ROWS = 1 << 16
#: map tasks per slot (worker thread) when the input allows: a slow task or shard does not idle the others
TASKS_PER_SLOT = 4


def task_rows(oracle, total: int, slots: int) -> int:
    """Reports per map task: ``TASK_ROWS`` (at most ``TASK_HASHES / h`` for an oracle that hashes h
    values per report, ``oracle.hashes_per_count()``: OLH/BLH, h = d), lowered to give
    each of ``slots`` slots ``TASKS_PER_SLOT`` tasks of ``total`` reports, but not below
    ``MIN_TASK_ROWS``. *Choice* (measured, benchmarks/bench_kernels_dask.py): a map task costs a few
    milliseconds of scheduling, Parquet opening and thread start whatever its size — as much as
    counting ~10⁵ GRR or ~5·10⁴ OUE reports — so tasks hold about 10⁶ reports (¼ s of hashing for
    OLH), whatever the shards' row-group size (``ldpopt perturb`` writes groups of 2²⁴/d reports:
    16,384 at d = 1,024)."""
    hashes = oracle.hashes_per_count()
    top = max(1, min(TASK_ROWS, TASK_HASHES // hashes)) if hashes else TASK_ROWS
    return min(top, max(MIN_TASK_ROWS, -(-total // (TASKS_PER_SLOT * max(1, slots)))))


def _configuration(files) -> tuple:
    """(the first shard, the empty labelled partial of its configuration), after checking that every
    shard declares the same configuration (an error naming the first shard and field that differ)."""
    first: tuple[object, Partial] | None = None
    for f in files:
        this = Partial.empty(read_oracle(f), read_labels(f))
        if first is None:
            first = (f, this)
        else:
            try:
                first[1].check_compatible(this)
            except MergeError as exc:
                raise MergeError(f"{f} does not match {first[0]}: {exc}") from None
    if first is None:
        raise ValueError("files must name at least one report shard")
    return first


def _plan(files, row_groups_per_task: int | None = None, slots: int = 1):
    """(tasks, rows per task, the empty labelled partial of the shards' common configuration).
    A task is a run of consecutive row groups of one shard: ``row_groups_per_task`` of them, or
    (None) as many as reach :func:`task_rows` reports."""
    first = _configuration(files)
    shards = []
    for f in files:
        meta = pq.ParquetFile(f).metadata
        shards.append((str(f), [meta.row_group(g).num_rows for g in range(meta.num_row_groups)]))
    target: int | None = None  # reports per task (task_rows: >= 1), or None: per_task row groups
    per_task = 0
    if row_groups_per_task is None:
        target = task_rows(first[1].build_oracle(), sum(sum(g) for _, g in shards), slots)
    else:
        per_task = row_groups_per_task
    tasks: list[tuple[str, list[int]]] = []
    rows: list[int] = []
    for f, sizes in shards:
        if not sizes:  # a shard without row groups: one (empty) task, so that it is still checked
            tasks.append((f, []))
            rows.append(0)
        g0 = 0
        while g0 < len(sizes):
            g1, n = g0, 0
            while g1 < len(sizes) and (n < target if target else g1 - g0 < per_task):
                n += sizes[g1]
                g1 += 1
            tasks.append((f, list(range(g0, g1))))
            rows.append(n)
            g0 = g1
    return tasks, rows, first[1]


def plan(files, row_groups_per_task: int | None = None, slots: int = 1) -> list[tuple[str, list[int]]]:
    """The map tasks: (shard path, row-group indices) blocks (:func:`_plan`; ``slots``: the worker
    threads that will run them), and a check that every shard declares the same oracle
    configuration and labels (an error naming the first shard and field that differ)."""
    return _plan(files, row_groups_per_task, slots)[0]


def _map(path: str, groups: list[int], device=None, kernel_threads: int | None = None) -> Partial:
    # unlabelled: the plan checked every shard's labels; they are attached once to the total
    oracle = read_oracle(path)
    if kernel_threads is not None and uses_kernels(oracle.name, device):
        from .._extras import require

        # thread-local in Numba: this task's kernels use kernel_threads cores, so that the scheduler's
        # own parallelism does not multiply with the kernels' (oversubscription). Only where the
        # kernels count: importing numba costs a fresh worker ~0.5 CPU-seconds. Never above the
        # process's NUMBA_NUM_THREADS (set_num_threads refuses more than its pool holds)
        numba = require("numba", "kernels", "the CPU aggregation kernels")
        numba.set_num_threads(max(1, min(kernel_threads, numba.config.NUMBA_NUM_THREADS)))
    if not groups:
        return Partial.empty(oracle)
    return shard_partial(path, row_groups=groups, labelled=False, device=device)


def _merge(a: Partial, b: Partial) -> Partial:
    return a.merge(b)


def _graph(tasks, device, kernel_threads):
    """The map + binary tree reduction as one dask.delayed object."""
    import dask

    level = [dask.delayed(_map, pure=True)(path, groups, device, kernel_threads) for path, groups in tasks]
    while len(level) > 1:
        nxt = [dask.delayed(_merge, pure=True)(level[i], level[i + 1]) for i in range(0, len(level) - 1, 2)]
        if len(level) % 2:
            nxt.append(level[-1])
        level = nxt
    return level[0]


def _compute_local(files, scheduler: str, workers: int | None, progress: bool, device, row_groups_per_task):
    import dask
    from dask.diagnostics import ProgressBar

    slots = 1 if scheduler == "synchronous" else workers or usable_cores()
    tasks, _, empty = _plan(files, row_groups_per_task, slots)
    # the kernels of concurrent tasks share the cores: each gets cores / (tasks at once)
    obj = _graph(tasks, device, kernel_share(min(len(tasks), slots)))
    kwargs: dict[str, str | int] = {"scheduler": scheduler}
    if scheduler == "threads" and workers:
        kwargs["num_workers"] = workers
    if progress:
        with ProgressBar(out=sys.stderr):
            return dask.compute(obj, **kwargs)[0], empty
    return dask.compute(obj, **kwargs)[0], empty


def local_workers(workers: int | None, ntasks: int) -> int:
    """Worker processes of the ``"local"`` cluster: ``workers``, else the cores this process may
    use (``os.sched_getaffinity``), at most one per map task."""
    if workers:
        return workers
    return max(1, min(usable_cores(), ntasks))


def _run_on(client, tasks, rows, progress: bool, device, kernel_threads) -> Partial:
    """Submit the map tasks and the merge tree to ``client``; a tqdm bar (reports) on stderr."""
    from distributed import as_completed

    maps = [client.submit(_map, path, groups, device, kernel_threads, pure=True) for path, groups in tasks]
    level = list(maps)
    while len(level) > 1:
        nxt = [client.submit(_merge, level[i], level[i + 1], pure=True) for i in range(0, len(level) - 1, 2)]
        if len(level) % 2:
            nxt.append(level[-1])
        level = nxt
    root = level[0]
    if progress:
        from tqdm import tqdm

        rows_of = {f.key: r for f, r in zip(maps, rows)}
        with tqdm(total=sum(rows), unit="report", unit_scale=True, file=sys.stderr, desc="aggregate") as bar:
            for fut in as_completed(maps):
                if fut.status == "error":
                    break  # root.result() raises the task's exception
                bar.update(rows_of[fut.key])
    return root.result()


def _on_client(client, files, progress, device, row_groups_per_task, kernel_threads=None):
    """Plan for the client's worker threads, then run (a cluster of unknown shape: its workers'
    kernels keep their own thread settings unless ``kernel_threads`` is given)."""
    slots = sum(client.nthreads().values()) or 1
    tasks, rows, empty = _plan(files, row_groups_per_task, slots)
    return _run_on(client, tasks, rows, progress, device, kernel_threads), empty


def _compute_distributed(files, address, workers: int | None, progress: bool, device, row_groups_per_task):
    from distributed import Client

    if address == "local":
        # planned before the cluster starts: a mismatched shard is an error before any process starts
        tasks, rows, empty = _plan(files, row_groups_per_task, workers or usable_cores())
        oracle = {"oracle": empty.oracle, "epsilon": empty.epsilon, "d": empty.d, "params": dict(empty.params)}
        with local_client(local_workers(workers, len(tasks)), device, oracle) as (client, share):
            return _run_on(client, tasks, rows, progress, device, share), empty
    if isinstance(address, str):
        with Client(address) as client:
            return _on_client(client, files, progress, device, row_groups_per_task)
    if hasattr(address, "submit"):  # an existing Client: used, not closed
        return _on_client(address, files, progress, device, row_groups_per_task)
    with Client(address) as client:  # a cluster object (tests pass a LocalCluster): a client for the call
        return _on_client(client, files, progress, device, row_groups_per_task)


def aggregate_shards(source, scheduler="threads", workers: int | None = None, progress: bool = False,
                     row_groups_per_task: int | None = None, device=None, into: Partial | None = None) -> Partial:
    """The merged partial aggregate of every report in ``source`` (a directory of ``*.parquet``
    shards or a list of shard paths), with the shards' value labels if they declare any.
    ``scheduler``: see the module notes (default ``"threads"``: in-process, nothing to start or
    leak, the right choice for a library call; the CLI defaults to ``"local"``); ``workers``:
    threads (``"threads"``) or worker processes (``"local"``); ``row_groups_per_task``: the row
    groups of a map task (default: as many as make :func:`task_rows` reports); ``device``: who counts
    in each task (``oracle.aggregate``'s argument: "numpy", "cpu", "cuda", or None/"auto"), checked
    here before any task runs (``"cuda"`` without a GPU or without Numba fails now, naming what is
    missing). The result records the shards' identities (:mod:`.identity`); before any counting, two
    shards holding the same reports (a copied or renamed shard) are refused, naming both
    (:class:`~.identity.DuplicateShardError`). ``into``: a partial to merge the shards into (the
    result is their merge), refused in the same way if it already holds any of them."""
    files = list_shards(source) if isinstance(source, (str, Path)) else [Path(f) for f in source]
    if not files:
        raise ValueError("source must name at least one report shard")
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
        raise ValueError(f"workers must be an integer >= 1, got {workers!r}")
    if row_groups_per_task is not None and (isinstance(row_groups_per_task, bool)
                                            or not isinstance(row_groups_per_task, int) or row_groups_per_task < 1):
        raise ValueError(f"row_groups_per_task must be an integer >= 1 or None, got {row_groups_per_task!r}")
    if scheduler == "processes":
        raise ValueError("scheduler 'processes' is not offered: use 'local' (a distributed.LocalCluster)")
    if isinstance(scheduler, str) and scheduler not in LOCAL_SCHEDULERS and ":" not in scheduler:
        raise ValueError(f"scheduler must be one of {LOCAL_SCHEDULERS} or a cluster address such as "
                         f"tcp://host:8786, got {scheduler!r}")
    if device not in (None, "auto"):
        if isinstance(scheduler, str) and scheduler in LOCAL_SCHEDULERS:
            resolve(device)  # an unknown device or a missing GPU/extra: the error now, not in a task
        elif device not in DEVICES:  # a remote cluster's workers, not this process, need the device
            raise ValueError(f"device must be one of {DEVICES} or None, got {device!r}")
    if into is not None and not isinstance(into, Partial):
        raise TypeError(f"into must be a Partial or None, got {type(into).__name__}")
    _, empty = _configuration(files)  # shards that do not match: refused before their identities are read
    if into is not None:  # a partial of another configuration too
        into.check_compatible(empty)
    idents = read_identities(files)
    if into is not None:
        check_not_held(into.shards, idents, "the partial merged into")
    if scheduler in ("synchronous", "threads"):
        total, empty = _compute_local(files, scheduler, workers, progress, device, row_groups_per_task)
    else:
        total, empty = _compute_distributed(files, scheduler, workers, progress, device, row_groups_per_task)
    total = Partial(total.oracle, total.epsilon, total.d, dict(total.params), total.n, total.counts,
                    labels=empty.labels, shards=tuple(idents))
    return total if into is None else into.merge(total)
