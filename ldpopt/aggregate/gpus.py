"""One GPU per Dask worker: on a machine with several GPUs, ``aggregate_shards(scheduler="local",
device="cuda")`` gives each worker process of its LocalCluster its own device, by worker index.

Notes: docs/notes/devices.md, "ldpopt.aggregate.gpus"."""

from __future__ import annotations

import os
import zlib

__all__ = ["gpu_for_worker", "one_gpu_per_worker", "visible_gpus", "worker_index"]


def visible_gpus(env: str | None = None, count: int | None = None) -> list[str]:
    """The device ids the workers share out (module notes). ``env``: the value of
    ``CUDA_VISIBLE_DEVICES`` (default: this process's); ``count``: the number of GPUs when that is
    unset (default: numba's count, which needs the driver)."""
    env = os.environ.get("CUDA_VISIBLE_DEVICES") if env is None else env
    if env is not None and env.strip():
        return [e.strip() for e in env.split(",") if e.strip()]
    if count is None:
        from .._extras import require

        count = len(require("numba.cuda", "kernels", "device='cuda' (counting the visible GPUs)").gpus)
    if count < 1:
        raise RuntimeError("device='cuda' needs a CUDA GPU, and none is visible here")
    return [str(i) for i in range(count)]


def worker_index(name) -> int:
    """A worker's index: its name when that is an integer (LocalCluster names its workers 0 … n−1),
    else a stable hash of the name (CRC-32)."""
    try:
        return int(name)
    except (TypeError, ValueError):
        return zlib.crc32(str(name).encode())


def gpu_for_worker(index: int, visible: list[str]) -> str:
    """The device worker ``index`` sees: ``visible[index mod len(visible)]``."""
    if not visible:
        raise ValueError("visible must list at least one device")
    return visible[index % len(visible)]


def one_gpu_per_worker(visible: list[str]):
    """A ``distributed`` worker plugin that sets ``CUDA_VISIBLE_DEVICES`` in each worker to
    :func:`gpu_for_worker` of its index (register it before the first task)."""
    from distributed.diagnostics.plugin import WorkerPlugin

    class OneGpuPerWorker(WorkerPlugin):
        name = "ldpopt-one-gpu-per-worker"

        def __init__(self, devices):
            self.devices = list(devices)

        def setup(self, worker):
            os.environ["CUDA_VISIBLE_DEVICES"] = gpu_for_worker(worker_index(worker.name), self.devices)

    return OneGpuPerWorker(visible)
