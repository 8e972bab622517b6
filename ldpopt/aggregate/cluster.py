"""The local cluster of ``aggregate_shards(scheduler="local")``, set up so that one of its worker
processes counts as fast as one task of the in-process ``threads`` scheduler.

Notes: docs/notes/devices.md, "ldpopt.aggregate.cluster"."""

from __future__ import annotations

import logging
import os
import time
from contextlib import ExitStack, contextmanager

from .._extras import require
from .._malloc import keep_freed_memory

__all__ = ["hush_logs", "kernel_share", "local_client", "usable_cores", "uses_kernels", "warm_worker"]


def usable_cores() -> int:
    """The cores this process may run on (``os.sched_getaffinity``; ``os.cpu_count`` elsewhere)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def kernel_share(at_once: int, cores: int | None = None) -> int:
    """Numba threads for each of ``at_once`` concurrent counting tasks: cores // at_once, at least 1."""
    if isinstance(at_once, bool) or not isinstance(at_once, int) or at_once < 1:
        raise ValueError(f"at_once must be an integer >= 1, got {at_once!r}")
    return max(1, (usable_cores() if cores is None else cores) // at_once)


def uses_kernels(oracle: str, device) -> bool:
    """Whether map tasks of ``oracle`` (its registry name) on ``device`` count with the CPU kernels:
    ``device`` "cpu", or None/"auto" for an oracle whose reports are not one histogram cell each
    (``one_cell_reports``: in record batches of ``BATCH_ROWS`` < the kernels' ``AUTO_CELLS`` reports,
    device "auto" counts those with numpy, so no kernel is warmed for them), and Numba installed;
    never for an oracle whose ``kernel_devices`` has no "cpu" (it counts with numpy)."""
    from .. import oracles
    from ..kernels import numba_available

    cls = oracles.oracle_class(oracle)
    if "cpu" not in cls.kernel_devices:  # an oracle that counts with numpy only (its declaration)
        return False
    auto = device in (None, "auto") and not cls.one_cell_reports
    return (device == "cpu" or auto) and numba_available()


def warm_worker(oracle: dict, device, keep_freed: bool = True) -> dict:
    """Run in a worker process before its first task: keep freed memory (unless ``keep_freed`` is
    False: a process that outlives the call, such as a test's), and when the tasks will count with
    the CPU kernels (:func:`uses_kernels`) count a few reports of ``oracle`` (a dict: oracle, epsilon, d, params) with them, which
    initialises Numba and loads (or compiles) the kernels that oracle's tasks call. Returns the CPU
    seconds it took, the kernel threads (None: no kernel warmed) and whether freed memory is kept."""
    import numpy as np

    from .. import oracles

    c0 = time.process_time()
    kept = keep_freed_memory() if keep_freed else False
    threads = None
    if uses_kernels(oracle["oracle"], device):
        numba = require("numba", "kernels", "the CPU kernels' warm-up")
        threads = int(numba.get_num_threads())
        orc = oracles.get(oracle["oracle"], epsilon=oracle["epsilon"], d=oracle["d"], **oracle.get("params", {}))
        # 2048 users reach the kernels' multi-chunk variants as well as their single-chunk ones
        # (ldpopt.kernels.cpu._chunks) where d is small; at large d fewer (at most 2^24 cells) suffice
        n = int(min(2048, max(1, (1 << 24) // orc.d)))
        rng = np.random.default_rng(0)
        orc.aggregate(orc.perturb(rng.integers(0, orc.d, n), rng), device="cpu")
    return {"cpu_s": time.process_time() - c0, "kernel_threads": threads, "kept_freed_memory": kept}


def hush_logs(level: int = logging.CRITICAL) -> list:
    """Set the stream handlers of the ``distributed`` logger (those its ``silence_logs`` sets) to
    ``level``; returns ``[(handler, old level), ...]`` for :func:`_restore`."""
    saved = []
    for handler in logging.getLogger("distributed").handlers:
        if isinstance(handler, logging.StreamHandler):
            saved.append((handler, handler.level))
            handler.setLevel(level)
    return saved


def _restore(saved: list) -> None:
    for handler, level in saved:
        handler.setLevel(level)


def _hush_worker() -> bool:
    hush_logs()
    return True


def _hush_shutdown(client, saved: list) -> None:
    """The start of shutdown: hush the workers (a worker already gone is skipped) and this process."""
    try:
        client.run(_hush_worker, on_error="ignore")
    except Exception:  # noqa: BLE001, S110 - the cluster is already failing: its errors have been shown
        pass
    saved.extend(hush_logs())


@contextmanager
def local_client(workers: int, device, oracle: dict | None = None, warm: bool = True,
                 kernel_threads: int | None = None):
    """A ``distributed.Client`` on a LocalCluster of ``workers`` processes with one thread each,
    set up as the module notes say (``oracle``: what :func:`warm_worker` counts; None or
    ``warm=False``: no warm-up; ``kernel_threads``: the Numba threads of each worker, default
    :func:`kernel_share`); the cluster is shut down on exit. Yields ``(client, share)``, ``share``
    the Numba threads of each worker."""
    from distributed import Client, LocalCluster

    if kernel_threads is not None and (isinstance(kernel_threads, bool) or not isinstance(kernel_threads, int)
                                       or kernel_threads < 1):
        raise ValueError(f"kernel_threads must be an integer >= 1 or None, got {kernel_threads!r}")
    share = kernel_share(workers) if kernel_threads is None else kernel_threads
    with ExitStack() as stack:
        saved: list = []
        stack.callback(_restore, saved)  # runs last, when the cluster is gone
        cluster = stack.enter_context(LocalCluster(
            n_workers=workers, threads_per_worker=1, processes=True, dashboard_address=None,
            silence_logs=logging.ERROR, env={"NUMBA_NUM_THREADS": str(share)}))
        client = stack.enter_context(Client(cluster))
        stack.callback(_hush_shutdown, client, saved)  # runs first
        if warm and oracle is not None:
            client.run(warm_worker, oracle, device)
        else:
            client.run(keep_freed_memory)
        if device == "cuda":  # several GPUs: each worker its own (.gpus)
            from .gpus import one_gpu_per_worker, visible_gpus

            client.register_plugin(one_gpu_per_worker(visible_gpus()))
        yield client, share
