"""How ``aggregate_shards`` cuts shards into map tasks (ldpopt.aggregate.dask.task_rows / plan), how
its local cluster's workers are set up (ldpopt.aggregate.cluster), and that reading a shard's integer
columns needs no pandas (a fresh worker process would import it at its first batch).

References: the shards' row-group sizes from pyarrow's metadata; the counts of ``oracle.aggregate``
on every report at once; a fresh Python process for the import check.
"""

from __future__ import annotations

import logging
import subprocess
import sys

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from ldpopt import oracles
from ldpopt.aggregate.cluster import kernel_share, usable_cores, warm_worker
from ldpopt.aggregate.dask import MIN_TASK_ROWS, TASK_HASHES, TASK_ROWS, _plan, aggregate_shards, task_rows
from ldpopt.aggregate.shards import _ints, from_batch, write_shard

D = 1024


def _shards(tmp_path, name, sizes, group):
    orc = oracles.get(name, 1.0, D)
    rng = np.random.default_rng(3)
    whole = []
    for i, m in enumerate(sizes):
        r = orc.perturb(rng.integers(0, D, m), rng)
        write_shard(tmp_path / f"s{i}.parquet", orc, r, row_group_rows=group)
        whole.append(r)
    return orc, np.concatenate(whole)


def test_task_rows_targets_a_million_reports_hash_work_and_several_tasks_per_slot():
    grr, olh = oracles.get("grr", 1.0, D), oracles.get("olh", 1.0, 42178)
    assert task_rows(grr, 10**9, 16) == TASK_ROWS  # a large input: the target
    assert task_rows(olh, 10**9, 16) == TASK_HASHES // 42178  # OLH: bounded hash work per task
    assert task_rows(grr, 8 * 10**6, 2) == 10**6  # 4 tasks for each of 2 slots
    assert task_rows(grr, 10**4, 16) == MIN_TASK_ROWS  # never cut below the floor
    assert task_rows(olh, 10**4, 16) == TASK_HASHES // 42178  # ... unless the hash bound is lower


def test_plan_covers_every_row_group_once_in_runs_of_the_target(tmp_path):
    _shards(tmp_path, "grr", [100_000, 7, 250_000], group=16_384)
    files = sorted(tmp_path.glob("*.parquet"))
    sizes = {str(f): [pq.ParquetFile(f).metadata.row_group(g).num_rows
                      for g in range(pq.ParquetFile(f).metadata.num_row_groups)] for f in files}
    target = task_rows(oracles.get("grr", 1.0, D), 350_007, 2)
    assert target == MIN_TASK_ROWS
    tasks, rows, _ = _plan(files, None, 2)
    for f, groups in sizes.items():
        mine = [(g, r) for (p, g), r in zip(tasks, rows) if p == f]
        assert [x for g, _ in mine for x in g] == list(range(len(groups)))  # every group once, in order
        assert all(r == sum(groups[x] for x in g) for g, r in mine)
        assert all(r >= target for _, r in mine[:-1])  # only a shard's last task may fall short
        assert all(r - groups[g[-1]] < target for g, r in mine)  # and none holds a group more than needed
    assert [len(g) for _, g in _plan(files, 3, 2)[0]] == [3, 3, 1, 1, 3, 3, 3, 3, 3, 1]  # a fixed count


@pytest.mark.parametrize("name", ["grr", "olh", "oue", "ss"])
def test_default_plan_and_fixed_plans_give_the_same_counts_bit_for_bit(tmp_path, name):
    orc, reps = _shards(tmp_path, name, [20_000, 1, 12_000], group=2048)
    ref = orc.aggregate(reps, device="numpy")
    for kwargs in ({}, {"row_groups_per_task": 1}, {"workers": 3}):
        got = aggregate_shards(tmp_path, scheduler="threads", **kwargs)
        assert got.n == len(reps) and np.array_equal(got.counts, ref), kwargs


def test_kernel_share_is_the_cores_divided_among_the_workers():
    assert kernel_share(1, cores=16) == 16 and kernel_share(16, cores=16) == 1
    assert kernel_share(3, cores=16) == 5 and kernel_share(32, cores=16) == 1
    assert kernel_share(1) == usable_cores()
    with pytest.raises(ValueError, match="at_once must be an integer >= 1"):
        kernel_share(0)


def test_integer_columns_are_read_as_zero_copy_views_equal_to_pyarrow():
    base = pa.array(np.arange(-5, 20, dtype=np.int64))
    for arr in (base, base.slice(3, 9), base.slice(24, 1)):
        view = _ints(arr)
        assert view.dtype == np.int64 and np.array_equal(view, arr.to_numpy())
    fixed = pa.FixedSizeListArray.from_arrays(pa.array(np.arange(30, dtype=np.int64)), 3).slice(2, 4)
    assert np.array_equal(_ints(fixed.flatten()), np.arange(6, 18))
    narrow = pa.array(np.arange(4, dtype=np.int32))  # not the schema's int64: pyarrow's own conversion
    assert _ints(narrow).dtype == np.int32


def test_reading_a_shard_imports_no_pandas(tmp_path):
    orc, reps = _shards(tmp_path, "olh", [500], group=128)
    code = ("import sys, pyarrow.parquet as pq, numpy as np\n"
            "from ldpopt import oracles\n"
            "from ldpopt.aggregate.shards import from_batch, read_oracle\n"
            f"p = {str(tmp_path / 's0.parquet')!r}\n"
            "orc = read_oracle(p)\n"
            "r = np.concatenate([from_batch(orc, b) for b in pq.ParquetFile(p).iter_batches(batch_size=100)])\n"
            "print(int(orc.aggregate(r, device='numpy').sum()), 'pandas' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == [str(int(orc.aggregate(reps, device="numpy").sum())), "False"]


def test_threads_scheduler_respects_a_smaller_numba_thread_count(tmp_path):
    # NUMBA_NUM_THREADS below the cores: a task's share of the cores is capped at the process's pool
    # (numba.set_num_threads refuses more), the counts unchanged
    pytest.importorskip("numba", reason="the CPU kernels need numba (the 'kernels' extra)")
    orc, reps = _shards(tmp_path, "oue", [3000], group=512)
    # the kernel compiled here first (numba's on-disk cache), so the child loads it instead of
    # compiling it again cold (about 25 s of CPU on a fresh clone)
    expected = orc.aggregate(reps, device="numpy")
    np.testing.assert_array_equal(orc.aggregate(reps, device="cpu"), expected)
    code = ("import sys\nfrom ldpopt.aggregate.dask import aggregate_shards\n"
            f"p = aggregate_shards({str(tmp_path)!r}, scheduler='threads', workers=1, device='cpu')\n"
            "print(int(p.counts.sum()), p.n)\n")
    env = {**__import__("os").environ, "NUMBA_NUM_THREADS": "1"}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == [str(int(expected.sum())), "3000"]


def test_warm_worker_loads_the_kernels_only_where_the_tasks_use_them():
    pytest.importorskip("numba", reason="the CPU kernels need numba (the 'kernels' extra)")
    import numba

    olh = {"oracle": "olh", "epsilon": 1.0, "d": 64, "params": {"g": 4}}
    assert warm_worker(olh, "cpu", keep_freed=False)["kernel_threads"] == numba.get_num_threads()
    # auto: OLH's record batches reach the kernels, GRR's are counted with numpy
    assert warm_worker(olh, None, keep_freed=False)["kernel_threads"] == numba.get_num_threads()
    assert warm_worker(olh, "numpy", keep_freed=False) == {"cpu_s": pytest.approx(0, abs=0.5), "kernel_threads": None,
                                                          "kept_freed_memory": False}
    assert warm_worker({"oracle": "grr", "epsilon": 1.0, "d": 64}, "auto", keep_freed=False)["kernel_threads"] is None


def test_local_cluster_workers_get_their_share_of_kernel_threads_and_count_bit_for_bit(tmp_path):
    pytest.importorskip("distributed")
    pytest.importorskip("numba", reason="the CPU kernels need numba (the 'kernels' extra)")
    from ldpopt.aggregate.cluster import local_client
    from ldpopt.aggregate.dask import _run_on

    orc, reps = _shards(tmp_path, "oue", [3000, 2000], group=512)
    tasks, rows, _ = _plan(sorted(tmp_path.glob("*.parquet")), None, 1)

    def threads():
        import numba

        return numba.get_num_threads()

    oracle = {"oracle": "oue", "epsilon": 1.0, "d": D, "params": {}}
    with local_client(1, "cpu", oracle) as (client, share):
        assert share == usable_cores()
        assert list(client.run(threads).values()) == [share]  # NUMBA_NUM_THREADS set in the worker
        got = _run_on(client, tasks, rows, False, "cpu", share)
        levels = logging.getLogger("distributed").handlers
        before = [h.level for h in levels]
    # shutting down hushed this process's distributed handlers and gave their levels back
    assert [h.level for h in levels] == before
    assert got.n == len(reps) and np.array_equal(got.counts, orc.aggregate(reps, device="numpy"))
    with pytest.raises(ValueError, match="kernel_threads must be an integer >= 1"):
        with local_client(1, "cpu", oracle, kernel_threads=0):
            pass


def test_hush_logs_raises_the_distributed_handlers_and_gives_their_levels_back():
    import logging

    from ldpopt.aggregate.cluster import _restore, hush_logs

    log = logging.getLogger("distributed")
    handler = logging.StreamHandler()
    handler.setLevel(logging.ERROR)
    log.addHandler(handler)
    try:
        saved = hush_logs()
        assert (handler, logging.ERROR) in saved and handler.level == logging.CRITICAL
        _restore(saved)
        assert handler.level == logging.ERROR
    finally:
        log.removeHandler(handler)
