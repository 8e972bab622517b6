"""Tables a user prints are printed whole (ldpopt/_table.py): pandas' default repr hid five of the
seven columns of ``print(ldpopt.methods.available())`` behind "..." and cut every cell at 50 characters."""

from __future__ import annotations

import pandas as pd

import ldpopt
from ldpopt import datasets
from ldpopt._table import WIDTH, WholeTable, whole_text


def _flat(text: str) -> str:
    return " ".join(text.split())


def test_methods_table_prints_every_column_and_note_whole():
    table = ldpopt.methods.available()
    text = repr(table)
    assert str(table) == text and "..." not in text
    flat = _flat(text)
    for name, row in table.iterrows():
        for col, value in row.items():
            assert _flat(f"{col} {value}") in flat, (name, col)
    assert max(map(len, text.splitlines())) <= WIDTH + 30  # long notes wrapped, not one 400-character line
    html = table._repr_html_()
    assert all(note.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;") in html for note in table.notes)


def test_datasets_table_prints_whole_and_stays_a_dataframe():
    table = datasets.available()
    assert isinstance(table, pd.DataFrame)
    flat = _flat(repr(table))
    assert all(_flat(s) in flat for s in table.source if s) and "..." not in flat
    sub = table.set_index(["name", "mode"])  # pandas operations keep the printing
    assert isinstance(sub, WholeTable) and isinstance(table[["name"]], WholeTable)


def test_a_narrow_table_prints_as_pandas_grid():
    df = pd.DataFrame({"a": [1, 2], "b": ["x", "y"]})
    assert whole_text(df) == df.to_string()
    wide = pd.DataFrame({"text": ["word " * 60]}, index=["r"])
    out = whole_text(wide)
    assert out.startswith("r\n  text") and _flat(out).count("word") == 60
