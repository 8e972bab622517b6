"""Tables that print whole.

pandas' own ``repr`` of a DataFrame hides columns behind ``...`` once the table is wider than the
terminal and cuts every cell at 50 characters, so ``print(ldpopt.methods.available())`` showed two of
seven columns and half a sentence of each note. :class:`WholeTable` is a plain DataFrame (everything
else is pandas') whose printed form hides nothing: every row, column and character of every cell.

Notes: docs/notes/python.md, "ldpopt._table"."""

from __future__ import annotations

import textwrap

import pandas as pd

__all__ = ["WIDTH", "WholeTable", "whole_text"]

WIDTH = 100  # characters per printed line (a terminal of the usual width shows it without wrapping)
_WHOLE = ("display.max_rows", None, "display.max_columns", None, "display.max_colwidth", None,
          "display.width", None)


def whole_text(df: pd.DataFrame, width: int = WIDTH) -> str:
    """``df`` as text with nothing left out: pandas' grid when its lines fit ``width`` characters,
    else one block per row with every column's value (wrapped, never cut)."""
    with pd.option_context(*_WHOLE):
        grid = pd.DataFrame.to_string(df)
    if max(map(len, grid.splitlines()), default=0) <= width:
        return grid
    keys = [str(c) for c in df.columns]
    pad = max(map(len, keys), default=0)
    blocks = []
    for label, row in zip(df.index, df.itertuples(index=False, name=None)):
        lines = [str(label) if not isinstance(label, tuple) else " · ".join(map(str, label))]
        for key, value in zip(keys, row):
            head = f"  {key:<{pad}}  "
            lines.append(textwrap.fill(str(value), width, initial_indent=head, subsequent_indent=" " * len(head),
                                       break_long_words=False, break_on_hyphens=False) or head.rstrip())
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks) + f"\n\n[{len(df)} rows x {len(df.columns)} columns]"


class WholeTable(pd.DataFrame):
    """A pandas DataFrame that prints whole (:func:`whole_text`), in a terminal and in a notebook."""

    @property
    def _constructor(self):
        return WholeTable

    def __repr__(self) -> str:
        return whole_text(self)

    def _repr_html_(self) -> str:
        with pd.option_context(*_WHOLE):
            return pd.DataFrame.to_html(self)
