"""Shard identities (ldpopt.aggregate.identity): no report is counted twice by ``aggregate``.

Planted: a copied shard, a rewritten (renamed) shard that lost its recorded identity, an older
shard with no identity, a partial that already holds the shards being added, partials that overlap;
through the real ``ldpopt`` command and the Python API. The content digest is checked against its
documented definition computed from numpy bytes (not Arrow buffers).
"""

from __future__ import annotations

import hashlib
import json
import shutil

import numpy as np
import pandas as pd
import pyarrow.parquet as pq
import pytest

from _cli import ldpopt, main_in_process, one_line_error
from ldpopt import oracles
from ldpopt.aggregate import AlreadyHeldError, DuplicateShardError, Partial
from ldpopt.aggregate.dask import aggregate_shards
from ldpopt.aggregate.identity import IDENTITY_KEY
from ldpopt.aggregate.shards import read_identity, shard_partial, to_table, write_shard, write_shard_batches

D = 6


def _reports(name, m, seed):
    orc = oracles.get(name, 1.0, D)
    rng = np.random.default_rng(seed)
    return orc, orc.perturb(rng.integers(0, D, m), rng)


def _documented_digest(columns, n):
    """The digest as the module docstring defines it, from numpy bytes: SHA-256 of the tag, each
    column's name, type and SHA-256 of its little-endian values, and n."""
    top = hashlib.sha256(b"ldpopt.content-digest/1\n")
    for name, typ, raw in columns:
        top.update(f"{name}\0{typ}\0".encode())
        top.update(hashlib.sha256(raw).digest())
    top.update(n.to_bytes(8, "little"))
    return top.hexdigest()


@pytest.mark.parametrize("name", ["grr", "oue", "ss"])
def test_digest_is_the_documented_one_and_ignores_row_groups(tmp_path, name):
    orc, r = _reports(name, 301, 1)
    write_shard(tmp_path / "a.parquet", orc, r, row_group_rows=50)
    write_shard_batches(tmp_path / "b.parquet", orc, [r[:7], r[7:200], r[200:]])
    pq.write_table(to_table(orc, r), tmp_path / "old.parquet", row_group_size=1000)  # no identity recorded
    ids = [read_identity(tmp_path / f) for f in ("a.parquet", "b.parquet", "old.parquet")]
    if name == "grr":
        cols = [("value", "int64", np.asarray(r, "<i8").tobytes())]
    elif name == "oue":
        assert r.dtype == np.uint8 and r.shape == (301, (D + 7) // 8)  # perturb's packed one-hot rows
        cols = [("bits", f"fixed_size_binary[{(D + 7) // 8}]", r.tobytes())]
    else:
        cols = [("subset", f"fixed_size_list<int64>[{orc.k}]", np.asarray(r, "<i8").tobytes())]
    assert {i.digest for i in ids} == {_documented_digest(cols, 301)}
    assert [i.n for i in ids] == [301] * 3 and ids[2].run is None and ids[0].run != ids[1].run
    changed = r.copy()
    changed[150] = (changed[150] + 1) % D if name != "oue" else changed[150] ^ 1
    write_shard(tmp_path / "c.parquet", orc, changed)
    assert read_identity(tmp_path / "c.parquet").digest != ids[0].digest


def test_cli_refuses_a_copied_shard_and_a_partial_that_holds_the_shards(tmp_path):
    hist = tmp_path / "h.csv"
    pd.DataFrame({"value": np.arange(D), "count": [300, 200, 100, 50, 25, 25]}).to_csv(hist, index=False)
    sh = tmp_path / "sh"
    assert ldpopt("perturb", "--histogram", hist, "--d", D, "--oracle", "oue", "--epsilon", 1, "--seed", 3,
                  "--shard-rows", 300, "--out", sh).returncode == 0
    # perturb runs the real command; the aggregate calls go to ldpopt.cli.main in this process (the same
    # output and exit status, without a fresh interpreter's imports); the warning test below runs the real one
    shutil.copy(sh / "part-00001.parquet", sh / "backup.parquet")
    line = one_line_error(main_in_process("aggregate", sh, "--scheduler", "threads", "--no-progress"))
    assert f"{sh / 'backup.parquet'} and {sh / 'part-00001.parquet'} hold the same reports" in line
    (sh / "backup.parquet").unlink()
    part = tmp_path / "p.json"
    ok = main_in_process("aggregate", sh, "--scheduler", "threads", "--no-progress", "--partial", part)
    assert ok.returncode == 0 and ok.stderr == "", ok.stderr
    held = json.loads(part.read_text())["shards"]
    assert [(s["part"], s["n"]) for s in held] == [(0, 300), (1, 300), (2, 100)] and len({s["run"] for s in held}) == 1
    line = one_line_error(main_in_process("aggregate", sh, "--scheduler", "threads", "--no-progress",
                                          "--merge-into", part))
    assert line.startswith(f"ldpopt aggregate: error: --merge-into {part}: the partial merged into already holds "
                           f"the reports of {sh / 'part-00000.parquet'}")


def test_cli_older_shards_aggregate_with_one_warning_line_and_a_rewritten_copy_is_refused(tmp_path):
    sh = tmp_path / "old"
    sh.mkdir()
    parts = [_reports("grr", m, s) for m, s in ((120, 1), (80, 2))]
    for i, (orc, r) in enumerate(parts):
        pq.write_table(to_table(orc, r), sh / f"s{i}.parquet")  # as an older ldpopt wrote them: no identity
    proc = ldpopt("aggregate", sh, "--scheduler", "threads", "--no-progress")
    assert proc.returncode == 0, proc.stderr
    ref = sum(orc.aggregate(r) for orc, r in parts)
    assert np.array_equal(pd.read_csv(__import__("io").StringIO(proc.stdout))["count"], ref)
    lines = proc.stderr.strip().splitlines()  # Python's warning format would add the source path and line
    assert len(lines) == 1 and lines[0].startswith("ldpopt aggregate: warning: 2 of 2 shard(s) record no identity")
    assert lines[0].endswith("their content digests were computed on read") and ".py:" not in proc.stderr
    # a shard rewritten under another name (pyarrow round trip: the footer's identity is lost)
    orc, r = _reports("grr", 90, 5)
    write_shard_batches(sh / "s2.parquet", orc, [r])
    pq.write_table(pq.read_table(sh / "s2.parquet"), sh / "renamed.parquet")
    assert IDENTITY_KEY not in pq.read_metadata(sh / "renamed.parquet").metadata
    proc = ldpopt("aggregate", sh, "--scheduler", "threads", "--no-progress")
    warn, err = proc.stderr.strip().splitlines()
    assert proc.returncode == 2 and warn.startswith("ldpopt aggregate: warning: 3 of 4 shard(s) record no identity")
    assert err.startswith(f"ldpopt aggregate: error: {sh / 'renamed.parquet'} and {sh / 's2.parquet'} hold the "
                          f"same reports (same content digest")


def test_api_refuses_duplicates_before_counting_and_merges_idempotently(tmp_path):
    orc, r = _reports("oue", 200, 7)
    write_shard(tmp_path / "a.parquet", orc, r[:120], run="run1", part=0)
    write_shard(tmp_path / "b.parquet", orc, r[120:], run="run1", part=1)
    write_shard(tmp_path / "c.parquet", orc, r[:120])  # the same reports written by another run
    with pytest.raises(DuplicateShardError, match=r"a\.parquet and .*c\.parquet hold the same reports"):
        aggregate_shards(tmp_path, scheduler="synchronous")
    with pytest.raises(DuplicateShardError, match="same run run1 and part 0"):
        aggregate_shards([tmp_path / "a.parquet", tmp_path / "a.parquet"], scheduler="synchronous")
    (tmp_path / "c.parquet").unlink()
    ab = aggregate_shards(tmp_path, scheduler="synchronous")
    assert ab.n == 200 and np.array_equal(ab.counts, orc.aggregate(r))
    a, b = shard_partial(tmp_path / "a.parquet"), shard_partial(tmp_path / "b.parquet")
    # idempotent by identity: what is held already adds nothing; the JSON form keeps the identities
    assert a.merge(a) == a and ab.merge(a) == ab and b.merge(ab) == ab and a.merge(b) == ab
    again = Partial.from_json(ab.to_json())
    assert again.shards == ab.shards and again.merge(ab).n == 200
    with pytest.raises(AlreadyHeldError, match=r"the partial merged into already holds the reports of .*a\.parquet"):
        aggregate_shards([tmp_path / "a.parquet"], scheduler="synchronous", into=ab)
    write_shard(tmp_path / "d.parquet", orc, r[:50], run="run2", part=0)
    abd = aggregate_shards([tmp_path / "d.parquet"], scheduler="synchronous", into=ab)
    assert abd.n == 250 and np.array_equal(abd.counts, orc.aggregate(r) + orc.aggregate(r[:50]))
    bd = b.merge(shard_partial(tmp_path / "d.parquet"))
    with pytest.raises(DuplicateShardError, match="neither holds all of the other's"):
        ab.merge(bd)  # they share b, and each holds a shard the other lacks
    untracked = Partial.from_counts(orc, orc.aggregate(r[:120]), 120)  # no identity: added, as before
    assert a.merge(untracked).n == 240


def test_equal_tiny_shards_of_one_run_are_different_reports(tmp_path):
    # one GRR report at d = 2 per shard: shards of one run coincide by chance and must all count
    orc = oracles.get("grr", 8.0, 2)
    for i in range(4):
        write_shard(tmp_path / f"p{i}.parquet", orc, np.zeros(1, np.int64), run="tiny", part=i)
    total = aggregate_shards(tmp_path, scheduler="synchronous")
    assert total.n == 4 and total.counts.tolist() == [4, 0] and len(total.shards) == 4
    write_shard(tmp_path / "x.parquet", orc, np.zeros(1, np.int64))  # another run: the same reports
    with pytest.raises(DuplicateShardError, match="same content digest"):
        aggregate_shards(tmp_path, scheduler="synchronous")
