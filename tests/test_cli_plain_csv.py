"""The ``ldpopt`` command reads and writes a plain ``value,count`` CSV without pandas
(``ldpopt/cli/_io.py``: ``_plain_csv``, ``csv_text``); pandas stays the reference. Every seeded file
(valid, or mutated as in the fuzz test) must give exactly what the pandas path gives: the same table
(values, counts, lines) or the same error; every table must be written byte for byte as
``DataFrame.to_csv`` writes it."""

from __future__ import annotations

from unittest import mock

import numpy as np
import pandas as pd
import pytest

import _file_mutations as M
from ldpopt.cli import _io
from ldpopt.cli._args import InputError

SEED = 20_261_124


def _outcome(path, d):
    try:
        t = _io.read_counts_table(path, d)
    except InputError as exc:
        return ("error", str(exc))
    return ("table", t.values.tolist(), t.values.dtype, t.counts.tolist(), t.lines.tolist(), t.unit)


def _reference(path, d):
    """The pandas path alone (the reader as it was before the plain path)."""
    with mock.patch.object(_io, "_plain_csv", lambda path, d, data: None):
        return _outcome(path, d)


def test_plain_reader_gives_what_pandas_gives_on_seeded_files(tmp_path):
    rng = np.random.default_rng(SEED)
    taken = 0
    for k in range(400):
        name, data, what, d = M.csv_case(rng)
        if k % 4 == 0:  # a valid file with spaces after the comma and a last line without "\n"
            data = data.replace(b",", b",  ").rstrip(b"\n") if b'"' not in data else data
        path = tmp_path / f"c{k}.csv"
        path.write_bytes(data)
        plain = _io._plain_csv(path, d, path.read_bytes())
        taken += plain is not None
        assert _outcome(path, d) == _reference(path, d), (k, what, data[:200])
    # the comparison is not empty: many files take the plain path, and many do not
    assert 100 < taken < 390, taken


@pytest.mark.parametrize("text, d", [
    ("value,count\na,1\nb,2\n", None),
    ("Value , COUNT \n  a, 0\n\u00e9 t\u00e9,  999999999999999\n", None),
    ("value,count\n3,5\n0,7\n", 5),
    ("value,count\n03,5\n3,7\n", 5),  # "03" and "3" are one value: pandas' error
    ("value,count\na,1\n", None),  # one row: pandas' error
    ("value,count\na,1\na,2\n", None),  # a repeated value: pandas' error
    ("value,count\na,1\nb,12.5\n", None),
    ("value,count\na,1\n\nb,2\n", None),  # a blank line: pandas skips it
    ("value,count\n a ,1\nb,2\n", None),  # spaces around a value: pandas strips them
    ("value,count\r\na,1\r\nb,2\r\n", None),  # CRLF line ends
    ("value,count\na\r,1\nb,2\n", None),  # a lone carriage return: a line end to pandas
    ("value,count\n", 4),  # no row, every value absent
    ("value,count\n2,5\n9,1\n", 4),  # a value outside [0, d): pandas' error
])
def test_plain_reader_on_edge_files(tmp_path, text, d):
    path = tmp_path / "c.csv"
    path.write_text(text, encoding="utf-8")
    assert _outcome(path, d) == _reference(path, d)


def test_plain_reader_takes_a_plain_file_and_leaves_a_quoted_one(tmp_path):
    path = tmp_path / "c.csv"
    path.write_text("value,count\na,1\nb,2\n")
    t = _io._plain_csv(path, None, path.read_bytes())
    assert t.values.tolist() == ["a", "b"] and t.counts.tolist() == [1.0, 2.0] and t.lines.tolist() == [2, 3]
    path.write_text('value,count\n"a",1\nb,2\n')
    assert _io._plain_csv(path, None, path.read_bytes()) is None


def test_csv_text_of_columns_is_what_pandas_writes():
    rng = np.random.default_rng(SEED)
    d = 64
    floats = rng.standard_normal(d) * 10.0 ** rng.integers(-300, 300, d)
    floats[:6] = [np.nan, np.inf, -np.inf, -0.0, 0.1, 1 / 3]
    labels = np.array(["a", "b,c", 'd"e', " f ", "\u00e9", "g\nh", "", "=1"] * (d // 8), dtype=object)
    for cols in ({"value": labels, "count": np.round(np.abs(floats)), "x": floats},
                 {"value": np.arange(d, dtype=np.int64), "count": floats},
                 {"value": np.array([b"x", 1, "y", 2.5] * (d // 4), dtype=object), "count": floats}):
        want = pd.DataFrame(cols).to_csv(index=False, float_format="%.17g", lineterminator="\n")
        assert _io.csv_text(cols) == want
