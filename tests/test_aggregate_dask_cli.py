"""Out-of-core aggregation of Parquet report shards (ldpopt.aggregate.shards/.dask) and the
``ldpopt perturb`` / ``ldpopt aggregate`` commands.

Reference: ``oracle.aggregate`` of every report read back from the shards with pyarrow in one piece
(no batching, no Dask). Bit-for-bit equality across schedulers and a real distributed.LocalCluster.

The commands run through ``ldpopt.cli.main`` in this process (``main_in_process``: the same output,
files and exit status, without a fresh interpreter's imports per call), except where a process of
their own is the point: the LocalCluster run (its worker processes and its stderr as the user sees
it) and ``--device cuda`` (numba reads its environment at import).
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

from _cli import ldpopt, main_in_process, one_line_error
from ldpopt import oracles
from ldpopt.aggregate import MergeError, Partial
from ldpopt.aggregate.dask import aggregate_shards
from ldpopt.aggregate.shards import from_batch, read_oracle, schema, shard_partial, write_shard

D = 37


def _write(tmp_path, name, sizes, seed=0, eps=1.0, row_group_rows=1000):
    orc = oracles.get(name, eps, D)
    rng = np.random.default_rng(seed)
    whole = []
    for i, m in enumerate(sizes):
        r = orc.perturb(rng.integers(0, D, m), rng)
        write_shard(tmp_path / f"s{i}.parquet", orc, r, row_group_rows=row_group_rows)
        whole.append(r)
    return orc, np.concatenate(whole)


def _reference(path_dir, orc):
    """Every shard read in one piece by pyarrow, then one oracle.aggregate call."""
    tabs = [pq.read_table(f) for f in sorted(path_dir.glob("*.parquet"))]
    reps = np.concatenate([from_batch(orc, t.combine_chunks().to_batches()[0]) for t in tabs])
    return orc.aggregate(reps), len(reps)


@pytest.mark.parametrize("name", oracles.available())
def test_shards_round_trip_and_batches_agree(tmp_path, name):
    orc, reps = _write(tmp_path, name, [700, 1, 333], row_group_rows=128)
    assert schema(orc).metadata  # the oracle header travels with the file
    back = read_oracle(tmp_path / "s0.parquet")
    assert back.name == orc.name and back.epsilon == orc.epsilon and back.d == D
    total = Partial.merge_all([shard_partial(f, batch_rows=50) for f in sorted(tmp_path.glob("*.parquet"))])
    counts, n = _reference(tmp_path, orc)
    assert n == len(reps) == total.n
    assert np.array_equal(total.counts, counts)
    assert np.array_equal(counts, orc.aggregate(reps))  # the file holds exactly what perturb returned


def test_same_result_bit_for_bit_on_every_scheduler_and_a_local_cluster(tmp_path):
    distributed = pytest.importorskip("distributed")
    orc, reps = _write(tmp_path, "olh", [900, 450, 2, 1200], row_group_rows=100)
    ref = orc.aggregate(reps)
    results = [aggregate_shards(tmp_path, scheduler="synchronous"),
               aggregate_shards(tmp_path, scheduler="threads", workers=1),
               aggregate_shards(tmp_path, scheduler="threads", workers=4, row_groups_per_task=1)]
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=False, protocol="tcp",
                                  dashboard_address=None) as cluster:
        results.append(aggregate_shards(tmp_path, scheduler=cluster, row_groups_per_task=2))
        assert cluster.scheduler_address.startswith("tcp://")  # --scheduler tcp://host:port, as a string
        results.append(aggregate_shards(tmp_path, scheduler=cluster.scheduler_address, progress=True))
        with distributed.Client(cluster) as client:  # an existing Client: used, left open
            results.append(aggregate_shards(tmp_path, scheduler=client, row_groups_per_task=3))
            assert client.status == "running"
    for r in results:
        assert r.n == len(reps)
        assert np.array_equal(r.counts, ref)
        assert np.array_equal(r.finalize().f_tilde, results[0].finalize().f_tilde)


def test_mismatched_shards_refused_naming_the_field(tmp_path):
    _write(tmp_path, "oue", [10])
    o2 = oracles.get("oue", 2.0, D)
    write_shard(tmp_path / "t.parquet", o2, o2.perturb(np.zeros(5, int), 1))
    with pytest.raises(MergeError, match="epsilon differs"):
        aggregate_shards(tmp_path, scheduler="synchronous")
    pq.write_table(pq.read_table(tmp_path / "t.parquet").replace_schema_metadata({}), tmp_path / "t.parquet")
    with pytest.raises(ValueError, match="not an ldpopt report shard"):
        aggregate_shards(tmp_path, scheduler="synchronous")


def test_cli_perturb_then_aggregate(tmp_path):
    hist = tmp_path / "h.csv"
    true = np.arange(D) * 3 + 1
    pd.DataFrame({"value": np.arange(D), "count": true}).to_csv(hist, index=False)
    shards = tmp_path / "sh"
    proc = main_in_process("perturb", "--histogram", hist, "--d", D, "--oracle", "ss", "--epsilon", 1, "--seed", 4,
                           "--shard-rows", 500, "--out", shards)
    assert proc.returncode == 0, proc.stderr
    n = int(true.sum())
    assert len(list(shards.glob("*.parquet"))) == -(-n // 500)
    orc = read_oracle(next(shards.glob("*.parquet")))
    ref, m = _reference(shards, orc)
    assert m == n
    out = tmp_path / "c.csv"
    proc = main_in_process("aggregate", shards, "--out", out, "--method", "norm-sub", "--partial", tmp_path / "p.json",
                           "--no-progress", "--scheduler", "threads")
    assert proc.returncode == 0, proc.stderr
    table = pd.read_csv(out)
    assert np.array_equal(table["count"].to_numpy(), ref)
    assert np.allclose(table["base"], orc.estimate(ref, n).f_tilde, rtol=0, atol=1e-15)
    assert np.all(table["norm-sub"] >= 0) and abs(table["norm-sub"].sum() - 1) < 1e-9
    meta = json.loads((tmp_path / "c.csv.meta.json").read_text())
    assert (meta["oracle"], meta["n"], meta["d"], meta["oracle_params"]) == ("ss", n, D, {"k": orc.k})
    assert meta["scheduler"] == "threads"
    # the same shards merged into the partial that holds them: refused (they would count twice)
    assert "already holds" in one_line_error(main_in_process("aggregate", shards, "--merge-into", tmp_path / "p.json",
                                                             "--no-progress", "--scheduler", "threads"))
    # a LocalCluster (asked for: the default counts in process at this size, and says so), with its
    # progress bar on stderr; stdout stays a clean CSV, and merging a second run (another seed) into the
    # saved partial adds its counts bit for bit
    more = tmp_path / "sh2"
    proc = main_in_process("perturb", "--histogram", hist, "--d", D, "--oracle", "ss", "--epsilon", 1, "--seed", 5,
                           "--shard-rows", 500, "--out", more)
    assert proc.returncode == 0, proc.stderr
    ref2, _ = _reference(more, orc)
    again = ldpopt("aggregate", more, "--merge-into", tmp_path / "p.json", "--scheduler", "local")
    assert again.returncode == 0, again.stderr
    default = main_in_process("aggregate", more, "--merge-into", tmp_path / "p.json", "--no-progress")
    assert default.stdout == again.stdout and default.stderr.startswith("ldpopt aggregate: scheduler: threads (auto: ")
    summed = pd.read_csv(__import__("io").StringIO(again.stdout))
    assert list(summed.columns) == ["value", "count"] and len(summed) == D
    assert np.array_equal(summed["count"].to_numpy(), ref + ref2)
    assert "100%" in again.stderr and f"{n / 1e3:.2f}k/{n / 1e3:.2f}k" in again.stderr  # the bar counts reports
    for noise in ("Traceback", "WARNING", "Warning", "ERROR"):
        assert noise not in again.stderr, again.stderr


def test_cli_values_file_is_seeded_and_errors_are_one_line(tmp_path):
    vals = tmp_path / "v.csv"
    pd.DataFrame({"value": np.random.default_rng(1).integers(0, 8, 999)}).to_csv(vals, index=False)
    outs = []
    for k in (1, 2):
        proc = main_in_process("perturb", "--values", vals, "--d", 8, "--oracle", "grr", "--epsilon", 2, "--seed", 9,
                               "--shard-rows", 400, "--out", tmp_path / f"o{k}")
        assert proc.returncode == 0, proc.stderr
        outs.append(pq.read_table(tmp_path / f"o{k}" / "part-00002.parquet")["value"].to_numpy())
    assert np.array_equal(*outs) and len(outs[0]) == 199
    assert "is not empty" in one_line_error(main_in_process("perturb", "--values", vals, "--d", 8, "--oracle", "grr",
                                                              "--epsilon", 2, "--seed", 9, "--out", tmp_path / "o1"))
    assert "--d" in one_line_error(main_in_process("perturb", "--values", vals, "--oracle", "grr", "--epsilon", 2,
                                                   "--seed", 9, "--out", tmp_path / "o3"))
    assert "no *.parquet" in one_line_error(main_in_process("aggregate", tmp_path, "--no-progress"))


def test_cli_labelled_histogram_keeps_its_labels_through_perturb_and_aggregate(tmp_path):
    # bug: a histogram keyed by labels (no --d) came back from `aggregate` keyed by positions 0..d-1
    labels = ["zebra", "apple", "10", "mango"]  # file order, not sorted; "10" is a label, not position 10
    true = np.array([400, 30, 250, 120])
    hist = tmp_path / "h.csv"
    pd.DataFrame({"value": labels, "count": true}).to_csv(hist, index=False)
    shards = tmp_path / "sh"
    proc = main_in_process("perturb", "--histogram", hist, "--oracle", "grr", "--epsilon", 3, "--seed", 2,
                           "--shard-rows", 300, "--out", shards)
    assert proc.returncode == 0, proc.stderr
    orc = read_oracle(next(shards.glob("*.parquet")))
    ref, n = _reference(shards, orc)  # counts by position (row of the histogram)
    assert n == true.sum() and orc.d == 4
    out = tmp_path / "c.csv"
    proc = main_in_process("aggregate", shards, "--out", out, "--partial", tmp_path / "p.json", "--no-progress",
                           "--scheduler", "threads")
    assert proc.returncode == 0, proc.stderr
    table = pd.read_csv(out, dtype={"value": str})
    assert table["value"].tolist() == labels
    assert np.array_equal(table["count"].to_numpy(), ref)
    # at ε = 3 GRR reports the true value w.p. 0.87: the counts follow the labels' true counts
    assert np.argmax(table["count"].to_numpy()) == 0 and np.argmin(table["count"].to_numpy()) == 1
    # the saved partial keeps the labels: merging another run into it gives the same labels, summed counts
    more = tmp_path / "sh2"
    proc = main_in_process("perturb", "--histogram", hist, "--oracle", "grr", "--epsilon", 3, "--seed", 3,
                           "--shard-rows", 300, "--out", more)
    assert proc.returncode == 0, proc.stderr
    ref2, _ = _reference(more, orc)
    again = main_in_process("aggregate", more, "--merge-into", tmp_path / "p.json", "--no-progress",
                            "--scheduler", "threads")
    assert again.returncode == 0, again.stderr
    summed = pd.read_csv(__import__("io").StringIO(again.stdout), dtype={"value": str})
    assert summed["value"].tolist() == labels and np.array_equal(summed["count"].to_numpy(), ref + ref2)
    # the estimate can be post-processed by label: postprocess reads the output back with its labels
    pp = main_in_process("postprocess", "--counts", out, "--oracle", "grr", "--epsilon", 3, "--n", n,
                         "--method", "base")
    assert pp.returncode == 0, pp.stderr
    assert pd.read_csv(__import__("io").StringIO(pp.stdout), dtype={"value": str})["value"].tolist() == labels


def test_shards_with_different_labels_are_refused_naming_the_shard(tmp_path):
    orc = oracles.get("oue", 1.0, 3)
    r = orc.perturb(np.array([0, 1, 2, 2]), 0)
    write_shard(tmp_path / "a.parquet", orc, r, labels=["x", "y", "z"])
    assert aggregate_shards(tmp_path, scheduler="synchronous").labels == ("x", "y", "z")
    assert shard_partial(tmp_path / "a.parquet").labels == ("x", "y", "z")
    write_shard(tmp_path / "b.parquet", orc, r, labels=["x", "z", "y"])
    with pytest.raises(MergeError, match=r"b.parquet does not match .*a.parquet: .*labels differ \(position 1"):
        aggregate_shards(tmp_path, scheduler="synchronous")
    write_shard(tmp_path / "b.parquet", orc, r)  # no labels: positions, which are not x, y, z either
    with pytest.raises(MergeError, match="labels differ"):
        aggregate_shards(tmp_path, scheduler="synchronous")


def test_local_cluster_default_of_the_cli_is_bit_for_bit_and_leaves_no_process(tmp_path, capsys):
    # scheduler="local" is what `ldpopt aggregate` runs past 16 GiB of shards or with --scheduler local: worker processes started and
    # stopped for the call, the progress bar on stderr only
    pytest.importorskip("distributed")
    psutil = pytest.importorskip("psutil")
    orc, reps = _write(tmp_path, "blh", [700, 300, 1], row_group_rows=100)
    before = {p.pid for p in psutil.Process().children(recursive=True)}
    capsys.readouterr()
    got = aggregate_shards(tmp_path, scheduler="local", workers=2, progress=True, row_groups_per_task=3)
    out, err = capsys.readouterr()
    assert got.n == len(reps) and np.array_equal(got.counts, orc.aggregate(reps))
    assert got == aggregate_shards(tmp_path, scheduler="synchronous")
    assert out == "" and "1.00k/1.00k" in err
    # no worker or nanny process outlives the call; multiprocessing's resource tracker is one per
    # parent process for its whole life (it exits with it), not part of the cluster
    left = [p for p in psutil.Process().children(recursive=True) if p.pid not in before and p.is_running()
            and p.status() != psutil.STATUS_ZOMBIE and "resource_tracker" not in " ".join(p.cmdline())]
    assert left == [], [p.cmdline() for p in left]


def test_bad_scheduler_and_task_size_are_errors_naming_the_argument(tmp_path):
    _write(tmp_path, "grr", [10])
    with pytest.raises(ValueError, match="scheduler must be one of"):
        aggregate_shards(tmp_path, scheduler="thread")
    with pytest.raises(ValueError, match="row_groups_per_task must be an integer >= 1"):
        aggregate_shards(tmp_path, row_groups_per_task=0)
    assert "scheduler must be one of" in one_line_error(main_in_process("aggregate", tmp_path, "--scheduler", "lcoal"))


@pytest.mark.parametrize("name", ["olh", "oue", "ss"])
def test_device_cpu_gives_the_numpy_counts_through_shards_and_dask(tmp_path, name):
    pytest.importorskip("numba", reason="device='cpu' needs numba (the 'kernels' extra)")
    orc, reps = _write(tmp_path, name, [900, 1, 450], row_group_rows=100)
    ref = orc.aggregate(reps, device="numpy")
    for scheduler in ("synchronous", "threads"):
        total = aggregate_shards(tmp_path, scheduler=scheduler, device="cpu", row_groups_per_task=2)
        assert total.n == len(reps) and np.array_equal(total.counts, ref), scheduler
    parts = [shard_partial(f, batch_rows=64, device="cpu") for f in sorted(tmp_path.glob("*.parquet"))]
    assert np.array_equal(Partial.merge_all(parts).counts, ref)  # the prefetching reader
    with pytest.raises(ValueError, match="device must be one of"):
        aggregate_shards(tmp_path, scheduler="synchronous", device="gpu")


def test_cli_device_cuda_without_a_gpu_is_one_line_and_under_the_simulator_counts(tmp_path):
    pytest.importorskip("numba", reason="--device cuda needs numba (the 'gpu' extra)")
    from numba import cuda

    orc, reps = _write(tmp_path, "olh", [300, 20], row_group_rows=64)
    if not cuda.is_available():
        err = one_line_error(ldpopt("aggregate", tmp_path, "--device", "cuda", "--scheduler", "threads"))
        assert "--device cuda" in err and "needs a CUDA GPU" in err
    proc = ldpopt("aggregate", tmp_path, "--device", "cuda", "--scheduler", "synchronous", "--no-progress",
                  env={"NUMBA_ENABLE_CUDASIM": "1", "PYTHONWARNINGS": "ignore"})
    assert proc.returncode == 0, proc.stderr
    table = pd.read_csv(__import__("io").StringIO(proc.stdout))
    assert np.array_equal(table["count"].to_numpy(), orc.aggregate(reps, device="numpy"))
