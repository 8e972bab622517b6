"""What ``ldpopt`` does with the paths it is given: ``--out`` writes through a symbolic link and never renames over what is not a regular file; a missing
folder is an error, not created; input files that are folders, pipes or hold impossible counts are one
line naming the option and the line or column. The write through a symbolic link runs the real entry
point (a subprocess); the other tests call ``ldpopt.cli.main`` in this process (``main_in_process``:
the same output, files and exit status, without a fresh interpreter's imports per call)."""

from __future__ import annotations

import io
import os
import stat

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from _cli import ldpopt as run, main_in_process, one_line_error

COUNTS = [340, 300, 285, 275, 265, 250, 240, 230]  # OUE, ε = 1, d = 8, n = 1000
N = 1000


def _postprocess(counts, out, *extra, runner=main_in_process):
    return runner("postprocess", "--counts", counts, "--oracle", "oue", "--epsilon", "1", "--n", N,
                  "--method", "norm-sub", "--out", out, *extra)


@pytest.fixture
def counts_csv(tmp_path):
    path = tmp_path / "c.csv"
    path.write_text("value,count\n" + "".join(f"v{i},{c}\n" for i, c in enumerate(COUNTS)))
    return path


def _listing(folder):
    return sorted(p.name for p in folder.iterdir())


# -- --out ---------------------------------------------------------------------------------------------
def test_out_through_a_symlink_replaces_the_target_and_keeps_the_link(counts_csv, tmp_path):
    (tmp_path / "data").mkdir()
    target = tmp_path / "data" / "post.csv"
    target.write_text("old\n")
    os.chmod(target, 0o640)
    link = tmp_path / "post.csv"
    link.symlink_to(target)
    proc = _postprocess(counts_csv, link, runner=run)
    assert proc.returncode == 0, proc.stderr
    assert link.is_symlink() and os.readlink(link) == str(target)  # still the same link
    back = pd.read_csv(target)
    assert list(back.columns) == ["value", "count", "base", "norm-sub"] and back["count"].tolist() == COUNTS
    assert abs(back["norm-sub"].sum() - 1) < 1e-12
    assert stat.S_IMODE(target.stat().st_mode) == 0o640  # replaced in place, as open(path, "w") keeps it
    assert _listing(tmp_path / "data") == ["post.csv"]  # no temporary left beside the target


@pytest.mark.parametrize("kind", ["fifo", "folder", "link to a fifo"])
def test_out_that_is_not_a_regular_file_is_refused_and_left_alone(counts_csv, tmp_path, kind):
    out = tmp_path / "out.csv"
    if kind == "folder":
        out.mkdir()
    elif kind == "fifo":
        os.mkfifo(out)
    else:
        os.mkfifo(tmp_path / "pipe")
        out.symlink_to(tmp_path / "pipe")
    before = out.lstat()
    err = one_line_error(_postprocess(counts_csv, out))
    assert err.startswith("ldpopt postprocess: error: --out ") and str(out) in err
    assert ("folder" if kind == "folder" else "not a regular file") in err
    after = out.lstat()
    assert (after.st_ino, stat.S_IFMT(after.st_mode)) == (before.st_ino, stat.S_IFMT(before.st_mode))
    assert "out.csv.meta.json" not in _listing(tmp_path) and not [p for p in _listing(tmp_path) if p.endswith(".tmp")]


@pytest.mark.parametrize("where", ["missing folder", "file as folder"])
def test_out_in_a_folder_that_is_not_one_names_the_data_file_and_creates_nothing(counts_csv, tmp_path, where):
    (tmp_path / "good.csv").write_text("x\n")
    out = tmp_path / ("no/such/x.csv" if where == "missing folder" else "good.csv/out.csv")
    err = one_line_error(_postprocess(counts_csv, out))
    assert f"--out {out}:" in err and ".meta.json" not in err, err
    assert ("does not exist" if where == "missing folder" else "is a file, not a folder") in err
    assert _listing(tmp_path) == ["c.csv", "good.csv"]  # no folder made


# -- input files ---------------------------------------------------------------------------------------
def test_a_folder_or_a_pipe_as_counts_says_what_it_is(tmp_path):
    os.mkfifo(tmp_path / "pipe.csv")
    (tmp_path / "dir.csv").mkdir()
    for name, needle in (("dir.csv", "is a folder, not a file"), ("pipe.csv", "is not a regular file")):
        err = one_line_error(_postprocess(tmp_path / name, tmp_path / "o.csv"))
        assert f"--counts: {tmp_path / name} {needle}" in err, err
    assert not (tmp_path / "o.csv").exists()


def test_fractional_count_in_a_csv_names_the_line(tmp_path):
    src = tmp_path / "c.csv"
    src.write_text("value,count\na,300\nb,12.5\nc,200.0\n")
    err = one_line_error(_postprocess(src, tmp_path / "o.csv"))
    assert f"--counts: line 3 of {src}: count must be a whole number" in err and "'12.5'" in err, err
    assert _listing(tmp_path) == ["c.csv"]


def test_parquet_counts_stored_as_text_name_the_column(tmp_path):
    src = tmp_path / "c.parquet"
    pq.write_table(pa.table({"value": ["a", "b", "c"], "count": ["300", "250", "200"]}), src)
    err = one_line_error(_postprocess(src, tmp_path / "o.csv"))
    assert f"--counts: column 'count' of {src} must be stored as numbers" in err, err
    assert _listing(tmp_path) == ["c.parquet"]


def test_perturb_names_histogram_not_counts(tmp_path):
    src = tmp_path / "h.csv"
    src.write_text("value,count\na,3\nb,1.5\n")
    err = one_line_error(main_in_process("perturb", "--histogram", src, "--oracle", "grr", "--epsilon", "1",
                                         "--seed", "1", "--out", tmp_path / "shards"))
    assert f"--histogram: line 3 of {src}" in err and "--counts" not in err, err


def test_parquet_null_value_and_a_multiline_reader_error_are_one_line(tmp_path, capsys):
    # in process (the subprocess case above covers the entry point): a null label is a missing value,
    # not the text "<NA>"; pyarrow's multi-line message on a damaged file is joined into one line
    from ldpopt.cli import main

    src = tmp_path / "c.parquet"
    pq.write_table(pa.table({"value": [None, "b", "c"], "count": [300, 250, 200]}), src)
    argv = ["postprocess", "--counts", str(src), "--oracle", "oue", "--epsilon", "1", "--n", str(N),
            "--out", str(tmp_path / "o.csv")]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"--counts: row 1 of {src}: value is empty or missing" in err, err
    pq.write_table(pa.table({"value": ["a", "b", "c"], "count": [300.0, 250.0, 200.0]}), src)
    data = src.read_bytes()

    def damaged(j):  # byte j flipped, if pyarrow's own message about it spans several lines
        bad = data[:j] + bytes([data[j] ^ 0x5A]) + data[j + 1:]
        try:
            pd.read_parquet(io.BytesIO(bad))
        except Exception as exc:  # noqa: BLE001 - pyarrow raises several types
            return bad if "\n" in str(exc).strip() else None

    bad = next(b for b in map(damaged, range(4, len(data) - 8)) if b is not None)
    src.write_bytes(bad)
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("ldpopt postprocess: error: --counts: cannot read Parquet"), err
    assert _listing(tmp_path) == ["c.parquet"]


@pytest.mark.parametrize("what", ["missing", "folder"])
def test_perturb_values_that_is_not_a_file_is_named(tmp_path, capsys, what):
    from ldpopt.cli import main

    src = tmp_path / "v.csv"
    if what == "folder":
        src.mkdir()
    argv = ["perturb", "--values", str(src), "--d", "4", "--oracle", "grr", "--epsilon", "1", "--seed", "1",
            "--out", str(tmp_path / "shards")]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("ldpopt perturb: error: --values: ") and str(src) in err and err.count("\n") == 1, err
    assert not (tmp_path / "shards").exists()


def test_aggregate_with_a_refused_out_writes_no_partial(tmp_path, capsys):
    from ldpopt import oracles
    from ldpopt.aggregate.shards import write_shard
    from ldpopt.cli import main

    orc = oracles.get("grr", 1.0, 4)
    (tmp_path / "shards").mkdir()
    write_shard(tmp_path / "shards" / "s0.parquet", orc, orc.perturb(np.arange(40) % 4, np.random.default_rng(1)))
    os.mkfifo(tmp_path / "o.csv")
    argv = ["aggregate", str(tmp_path / "shards"), "--scheduler", "synchronous", "--no-progress",
            "--partial", str(tmp_path / "p.json"), "--out", str(tmp_path / "o.csv")]
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert f"--out {tmp_path / 'o.csv'} is not a regular file" in err and err.count("\n") == 1, err
    assert _listing(tmp_path) == ["o.csv", "shards"]  # no p.json


@pytest.mark.parametrize("how", ["new", "append", "overwrite"])
def test_a_folder_filled_atomically_is_as_it_was_after_a_failure(tmp_path, how):
    """``_atomic.fill_folder``: a fill that fails after writing files leaves the folder byte for byte
    as it was (absent for a new one) and no temporary beside it; one that succeeds puts every file
    in place (append: beside the old ones; overwrite: instead of them)."""
    from ldpopt._atomic import fill_folder

    out = tmp_path / "out"
    if how != "new":
        out.mkdir()
        (out / "old.txt").write_text("old")

    def state():
        return sorted((str(p.relative_to(tmp_path)), p.read_bytes() if p.is_file() else None)
                      for p in tmp_path.rglob("*"))

    before = state()

    def failing(tmp):
        (tmp / "a.txt").write_text("a")
        raise OSError(28, "No space left on device")

    with pytest.raises(OSError, match="No space"):
        fill_folder(out, failing, how)
    assert state() == before
    fill_folder(out, lambda tmp: (tmp / "a.txt").write_text("a"), how)
    assert sorted(p.name for p in out.iterdir()) == (["a.txt", "old.txt"] if how == "append" else ["a.txt"])
    assert [p.name for p in tmp_path.iterdir()] == ["out"]
    if how == "append":  # a name already there is never replaced, and nothing is added
        with pytest.raises(FileExistsError):
            fill_folder(out, lambda tmp: ((tmp / "b.txt").write_text("b"), (tmp / "old.txt").write_text("x")), how)
        assert sorted(p.name for p in out.iterdir()) == ["a.txt", "old.txt"] and (out / "old.txt").read_text() == "old"


def test_a_killed_runs_temporary_goes_with_the_next_write_of_that_name(tmp_path):
    """A process killed outright leaves its ``.NAME.<host>-<pid>-<hex>.tmp``: the next write of NAME
    removes it (a warning names it); a live process's temporary, another name's and another host's
    stay."""
    import subprocess
    import sys
    import warnings

    from ldpopt import _atomic

    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                          text=True, check=True)
    pid = int(dead.stdout)  # a process that has ended
    stale = tmp_path / f".out.{_atomic._HOST}-{pid}-0123456789ab.tmp"
    stale.mkdir()
    (stale / "part-00000.parquet").write_bytes(b"x" * 100)
    live = tmp_path / f".out.{_atomic._HOST}-{os.getpid()}-0123456789ab.tmp"
    live.write_text("mine")
    other_host = tmp_path / f".out.zzzzzz-{pid}-0123456789ab.tmp"
    other_host.write_text("theirs")
    other_name = tmp_path / f".out2.{_atomic._HOST}-{pid}-0123456789ab.tmp"
    other_name.write_text("another output")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _atomic.write_text(tmp_path / "out", "new\n")
    assert (tmp_path / "out").read_text() == "new\n"
    assert not stale.exists() and live.exists() and other_host.exists() and other_name.exists()
    assert len(caught) == 1 and stale.name in str(caught[0].message) and str(pid) in str(caught[0].message)
    leftovers = sorted(p.name for p in tmp_path.iterdir())
    assert leftovers == sorted(["out", live.name, other_host.name, other_name.name])
