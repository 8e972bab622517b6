"""The GPU pipeline's logic without a GPU: one device per Dask worker (the assignment, and a real
LocalCluster whose workers each see a distinct device from a fake list), the order of a lane's
staged copies (a recorder in place of numba.cuda), the ordered two-lane map of the Parquet reader,
and shard counting with device="cuda" under Numba's CUDA simulator, bit-identical to numpy."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pytest

from ldpopt.aggregate.gpus import gpu_for_worker, one_gpu_per_worker, visible_gpus, worker_index

ROOT = Path(__file__).resolve().parents[1]


def test_gpu_assignment_by_worker_index():
    assert visible_gpus(env="3, 5") == ["3", "5"]
    assert visible_gpus(env="", count=3) == ["0", "1", "2"]
    with pytest.raises(RuntimeError, match="needs a CUDA GPU"):
        visible_gpus(env="", count=0)
    four = ["0", "1", "2", "3"]
    assert [gpu_for_worker(i, four) for i in range(4)] == four  # one GPU each: all distinct
    assert [gpu_for_worker(i, ["7", "9"]) for i in range(5)] == ["7", "9", "7", "9", "7"]  # round-robin
    assert worker_index(2) == 2 and worker_index("2") == 2 and worker_index("tcp://a:1") == worker_index("tcp://a:1")
    with pytest.raises(ValueError, match="visible"):
        gpu_for_worker(0, [])


def test_each_local_worker_sees_its_own_device():
    """Two LocalCluster workers and a fake machine with two GPUs: the plugin gives each worker a
    different CUDA_VISIBLE_DEVICES before any task (read back in every worker)."""
    import logging

    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                      silence_logs=logging.ERROR) as cluster, Client(cluster) as client:
        client.register_plugin(one_gpu_per_worker(["4", "5"]))
        seen = client.run(lambda: os.environ.get("CUDA_VISIBLE_DEVICES"))
    assert sorted(seen.values()) == ["4", "5"]


class _Recorder:
    """numba.cuda's stream / pinned_array / to_device, recording the order of what a lane does."""

    def __init__(self):
        self.log = []

    def stream(self):
        rec = self

        class S:
            def synchronize(self):
                rec.log.append("synchronize")
        return S()

    def pinned_array(self, n, dtype):
        self.log.append("pin")
        rec = self

        class Pinned(np.ndarray):
            def __setitem__(self, k, v):  # np.copyto does not call this; the staging is seen below
                rec.log.append("write")
                super().__setitem__(k, v)
        return np.zeros(n, dtype).view(Pinned)

    def to_device(self, arr, stream=None):
        assert stream is not None, "every copy is queued on the lane's stream"
        self.log.append(f"copy {arr.size}")
        rec = self

        class Dev:
            def copy_to_host(self, stream=None):
                assert stream is not None
                rec.log.append("copy back")
                return np.asarray(arr).copy()
        return Dev()


def test_a_lane_reuses_its_pinned_buffer_only_after_its_stream_finished(monkeypatch):
    from ldpopt.kernels.cuda import Lane

    rec = _Recorder()
    writes = []
    real_copyto = np.copyto
    monkeypatch.setattr(np, "copyto", lambda dst, src: (writes.append(len(rec.log)), rec.log.append("stage"),
                                                         real_copyto(dst, src))[-1])
    ln = Lane(rec)
    for n in (5, 3, 8):  # the second call fits the first buffer; the third grows it
        dev = ln.stage("y", np.arange(n, dtype=np.int64))
        assert np.array_equal(ln.result(dev), np.arange(n))
    assert rec.log == ["pin", "stage", "copy 5", "copy back", "synchronize",
                       "stage", "copy 3", "copy back", "synchronize",
                       "pin", "stage", "copy 8", "copy back", "synchronize"]


def test_lanes_map_is_ordered_and_bounded():
    from ldpopt.aggregate.shards import _in_lanes

    lock, state = threading.Lock(), {"now": 0, "most": 0, "threads": set()}

    def work(i):
        with lock:
            state["now"] += 1
            state["most"] = max(state["most"], state["now"])
            state["threads"].add(threading.get_ident())
        time.sleep(0.01 * (i % 3))
        with lock:
            state["now"] -= 1
        return i * i

    assert list(_in_lanes(work, iter(range(12)), 2)) == [i * i for i in range(12)]
    assert state["most"] == 2 and len(state["threads"]) == 2


_SIM = """
import json, sys, tempfile, warnings
from pathlib import Path
warnings.simplefilter("ignore")
import numpy as np
from ldpopt import oracles
from ldpopt.aggregate.shards import shard_partial, write_shard_batches
out = []
with tempfile.TemporaryDirectory() as tmp:
    for name, eps, d in (("olh", 4.0, 23), ("grr", 1.0, 9), ("oue", 1.0, 13)):
        orc = oracles.get(name, eps, d)
        gen = np.random.default_rng(0)
        path = Path(tmp, name + ".parquet")
        write_shard_batches(path, orc, (orc.perturb(gen.integers(0, d, 40), gen) for _ in range(5)))
        out.append([shard_partial(path, batch_rows=40, device="numpy").counts.tolist(),
                    shard_partial(path, batch_rows=40, device="cuda").counts.tolist()])
print(json.dumps(out))
"""


def test_shard_counting_in_cuda_lanes_under_the_simulator_equals_numpy():
    pytest.importorskip("numba", reason="the CUDA kernels need numba (the 'gpu' extra)")
    import json

    env = {**os.environ, "NUMBA_ENABLE_CUDASIM": "1",
           "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)}
    proc = subprocess.run([sys.executable, "-c", _SIM], env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    for ref, got in json.loads(proc.stdout):
        assert got == ref and sum(ref) > 0
