"""`ldpopt postprocess` input files (RELIABILITY.md, family "files"): malformed rows are rejected with
their line number, a failure never leaves an output file, and outputs round-trip exactly."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import examples
from ldpopt import methods, oracles
from ldpopt.cli import main


def _run(args, capsys):
    try:
        code = main(args)
    except SystemExit as exc:  # an option refused by argparse itself: the same exit status, 2
        code = exc.code
    out = capsys.readouterr()
    return code, out.err


GOOD = ["a", "b", "c", "d"], [10, 3, 0, 7]


def _write(path, rows, header="value,count"):
    path.write_text(header + "\n" + "".join(f"{v},{c}\n" for v, c in rows))


@pytest.mark.parametrize("bad_row,needle", [
    (("x", "abc"), "count must be a whole number"), (("x", "-1"), "count must be"), (("x", "2.5"), "count must be"),
    (("x", "nan"), "count must be"), (("x", "inf"), "count must be"), (("x", ""), "count must be"),
    (("", "3"), "value is empty"), (("a", "3"), "repeats an earlier row"),
])
@pytest.mark.parametrize("position", [0, 2, 4])
def test_malformed_row_is_named_by_line_and_leaves_no_file(tmp_path, capsys, bad_row, needle, position):
    rows = list(zip(*GOOD))
    rows.insert(position, bad_row)
    if bad_row[0] == "a" and position == 0:
        rows[0], rows[1] = rows[1], rows[0]  # the duplicate must come after the original
        position = 1
    src, out = tmp_path / "c.csv", tmp_path / "out.csv"
    _write(src, rows)
    code, err = _run(["postprocess", "--counts", str(src), "--oracle", "oue", "--epsilon", "1",
                      "--n", "20", "--out", str(out)], capsys)
    assert code == 2 and needle in err
    assert f"line {position + 2} " in err, err  # header is line 1
    assert not out.exists() and not list(tmp_path.glob(".*.tmp"))


@pytest.mark.parametrize("content,needle", [
    ("", "empty"), ("value,count\n", "at least 2 rows"), ("value,count\na,1\n", "at least 2 rows"),
    ("v,c\na,1\nb,2\n", "columns value,count"), ("value,count,extra\na,1,2\nb,2,3\n", "columns"),
])
def test_malformed_file_is_rejected(tmp_path, capsys, content, needle):
    src = tmp_path / "c.csv"
    src.write_text(content)
    code, err = _run(["postprocess", "--counts", str(src), "--oracle", "oue", "--epsilon", "1", "--n", "9",
                      "--out", str(tmp_path / "o.csv")], capsys)
    assert code == 2 and needle in err and not (tmp_path / "o.csv").exists()


@pytest.mark.parametrize("args", [
    ["--oracle", "blh", "--epsilon", "50", "--method", "mle-apx"],        # MLE-Apx refuses p = 1
    ["--oracle", "oue", "--epsilon", "1", "--method", "norm-hyb", "--param", "alpha=-1"],
    ["--oracle", "oue", "--epsilon", "1", "--method", "nope"],
    ["--oracle", "oue", "--epsilon", "-1"],
])
@pytest.mark.parametrize("fmt", ["csv", "parquet", "json"])
def test_failing_method_leaves_no_file(tmp_path, capsys, args, fmt):
    src, out = tmp_path / "c.csv", tmp_path / f"out.{fmt}"
    _write(src, zip(*GOOD))
    code, err = _run(["postprocess", "--counts", str(src), "--n", "20", "--out", str(out), *args], capsys)
    assert code == 2 and "error" in err
    assert not out.exists() and not list(tmp_path.glob(".*"))


@settings(max_examples=examples(40))
@given(counts=st.lists(st.one_of(st.integers(0, 10**6), st.integers(0, 2**53 - 1)).map(float), min_size=2, max_size=30),
       oracle=st.sampled_from(["oue", "olh", "hr", "sue"]))  # not SS: its counts must sum to k·n
def test_csv_and_parquet_round_trip_exactly(tmp_path_factory, case_counter, counts, oracle):
    # counts are numbers of reports (whole, up to 2^53 - 1: float64 holds every integer there, and
    # the command refuses 2^53 or more); the
    # estimates built from them are arbitrary doubles, which must round-trip bit for bit
    case_counter("cli postprocess (round trip)")
    tmp = tmp_path_factory.mktemp("rt")
    c = np.array(counts)
    n = int(np.ceil(c.max())) + 1
    src = tmp / "in.csv"
    pd.DataFrame({"value": [f"v{i}" for i in range(len(c))], "count": c}).to_csv(src, index=False, float_format="%.17g")
    est = oracles.get(oracle, 1.0, len(c)).estimate(c, n)
    expect = {name: methods.postprocess(est, name) for name in ("norm-sub", "mle-apx", "base-cut")}
    for fmt in ("csv", "parquet"):
        out = tmp / f"out.{fmt}"
        for name in expect:
            assert main(["postprocess", "--counts", str(src), "--oracle", oracle, "--epsilon", "1",
                         "--n", str(n), "--method", name, "--out", str(out)]) == 0
            back = pd.read_csv(out, dtype={"value": str}) if fmt == "csv" else pd.read_parquet(out)
            np.testing.assert_array_equal(back["count"].to_numpy(np.float64), c)  # bit-exact
            np.testing.assert_array_equal(back[name].to_numpy(np.float64), expect[name])
            np.testing.assert_array_equal(back["base"].to_numpy(np.float64), est.f_tilde)


@settings(max_examples=examples(80))
@given(cells=st.lists(st.one_of(st.text(max_size=6), st.sampled_from(["1", "2.5", "1e3", "-0", "0x1", " 4 ", "1,2"])),
                      min_size=4, max_size=12))
def test_fuzzed_rows_are_accepted_or_named(tmp_path_factory, case_counter, cells):
    import contextlib
    import io

    case_counter("cli postprocess (fuzzed rows)")
    tmp = tmp_path_factory.mktemp("fz")
    src, out = tmp / "c.csv", tmp / "o.csv"
    half = len(cells) // 2
    lines = ["value,count"] + [f"r{i},{cells[i]}" for i in range(half)]
    src.write_text("\n".join(lines) + "\n", encoding="utf-8", errors="surrogatepass")
    buf = io.StringIO()
    with contextlib.redirect_stderr(buf):
        code = main(["postprocess", "--counts", str(src), "--oracle", "oue", "--epsilon", "1", "--n", "5000",
                     "--method", "norm-sub", "--out", str(out)])
    err = buf.getvalue()
    if code == 0:
        back = pd.read_csv(out)
        assert np.all(np.isfinite(back["norm-sub"])) and abs(back["norm-sub"].sum() - 1) < 1e-9
    else:
        # a bad row is named by its line; otherwise the message names the argument (counts <= n)
        assert code == 2 and ("--counts" in err and ("line" in err or "rows" in err) or "counts" in err), err
        assert not out.exists()
