"""Out-of-core aggregation of a directory of Parquet report shards with Dask: map + tree reduction.

One task per (shard, block of row groups) computes a :class:`~.partial.Partial` by reading record
batches (bounded memory per task, :func:`.shards.shard_partial`); the partials are merged pairwise
in a balanced tree of ``merge`` tasks (fan-in 2; the pattern of ``dask.dataframe`` reductions), and
one Partial comes out. Counts are int64 sums, so the result is the same bit for bit whatever the
scheduler, the number of workers, the order tasks finish or the shard layout.

Schedulers (``scheduler=``):

* ``"synchronous"`` — one thread, no Dask machinery beyond the graph (the single-machine path:
  the same tasks, run in order);
* ``"threads"`` — Dask's local thread pool (numpy releases the GIL in the hot loops);
* ``"local"`` — a ``distributed.LocalCluster`` started for the call (``workers`` processes, one
  thread each) and closed afterwards;
* ``"tcp://host:port"`` (or any address ``distributed.Client`` accepts) — an existing cluster;
  the shard paths must be readable by its workers.

``progress=True`` shows Dask's progress bar on stderr (``dask.diagnostics.ProgressBar`` for the
local schedulers, ``distributed.progress`` for a cluster).
"""

from __future__ import annotations

import sys
from pathlib import Path

import pyarrow.parquet as pq

from .partial import MergeError, Partial
from .shards import list_shards, read_oracle, shard_partial

__all__ = ["plan", "aggregate_shards", "LOCAL_SCHEDULERS"]

LOCAL_SCHEDULERS = ("synchronous", "threads", "local")
#: row groups per task (with the default 2^18-row groups: ~10^6 reports per task)
ROW_GROUPS_PER_TASK = 4


def plan(files, row_groups_per_task: int = ROW_GROUPS_PER_TASK) -> list[tuple[str, list[int]]]:
    """The map tasks: (shard path, row-group indices) blocks, and a check that every shard declares
    the same oracle configuration (an error naming the first shard and field that differ)."""
    tasks = []
    first = None
    for f in files:
        orc = read_oracle(f)
        this = Partial.empty(orc)
        if first is None:
            first = (f, this)
        else:
            try:
                first[1].check_compatible(this)
            except MergeError as exc:
                raise MergeError(f"{f} does not match {first[0]}: {exc}") from None
        ng = pq.ParquetFile(f).num_row_groups
        for g0 in range(0, max(ng, 1), row_groups_per_task):
            tasks.append((str(f), list(range(g0, min(ng, g0 + row_groups_per_task)))))
    return tasks


def _map(path: str, groups: list[int]) -> Partial:
    return shard_partial(path, row_groups=groups) if groups else Partial.empty(read_oracle(path))


def _merge(a: Partial, b: Partial) -> Partial:
    return a.merge(b)


def _graph(tasks):
    """The map + binary tree reduction as one dask.delayed object."""
    import dask

    level = [dask.delayed(_map, pure=True)(path, groups) for path, groups in tasks]
    while len(level) > 1:
        nxt = [dask.delayed(_merge, pure=True)(level[i], level[i + 1]) for i in range(0, len(level) - 1, 2)]
        if len(level) % 2:
            nxt.append(level[-1])
        level = nxt
    return level[0]


def _compute_local(obj, scheduler: str, workers: int | None, progress: bool) -> Partial:
    import dask
    from dask.diagnostics import ProgressBar

    kwargs = {"scheduler": scheduler}
    if scheduler == "threads" and workers:
        kwargs["num_workers"] = workers
    if progress:
        with ProgressBar(out=sys.stderr):
            return dask.compute(obj, **kwargs)[0]
    return dask.compute(obj, **kwargs)[0]


def _compute_distributed(obj, address, workers: int | None, progress: bool) -> Partial:
    from distributed import Client, LocalCluster, progress as dprogress

    cluster = None
    try:
        if address == "local":
            cluster = LocalCluster(n_workers=workers or 2, threads_per_worker=1, processes=True,
                                   dashboard_address=None)
            client = Client(cluster)
        elif isinstance(address, str):
            client = Client(address)
        else:  # an existing Client or cluster object (tests pass a LocalCluster)
            client = address if hasattr(address, "compute") else Client(address)
        try:
            fut = client.compute(obj)
            if progress:
                dprogress(fut)
                print(file=sys.stderr)
            return fut.result()
        finally:
            if client is not address:
                client.close()
    finally:
        if cluster is not None:
            cluster.close()


def aggregate_shards(source, scheduler="threads", workers: int | None = None, progress: bool = False,
                     row_groups_per_task: int = ROW_GROUPS_PER_TASK) -> Partial:
    """The merged partial aggregate of every report in ``source`` (a directory of ``*.parquet``
    shards or a list of shard paths). ``scheduler``: see the module docstring; ``workers``: threads
    (``"threads"``) or worker processes (``"local"``)."""
    files = list_shards(source) if isinstance(source, (str, Path)) else [Path(f) for f in source]
    if not files:
        raise ValueError("source must name at least one report shard")
    if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
        raise ValueError(f"workers must be an integer >= 1, got {workers!r}")
    obj = _graph(plan(files, row_groups_per_task))
    if scheduler in ("synchronous", "threads"):
        return _compute_local(obj, scheduler, workers, progress)
    if scheduler == "processes":
        raise ValueError("scheduler 'processes' is not offered: use 'local' (a distributed.LocalCluster)")
    return _compute_distributed(obj, scheduler, workers, progress)
