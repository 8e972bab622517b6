"""Numeric columns derived from the shipped transaction files: transaction lengths.

Notes: docs/notes/data.md, "ldpopt.datasets.lengths"."""

from __future__ import annotations

import numpy as np

from . import _paths
from ._dataset import Dataset

__all__ = ["LENGTH_COLUMNS", "transaction_lengths"]

# registry name -> (transaction dataset key in real._TX_FILES, what a length is)
LENGTH_COLUMNS = {
    "retail-basket-size": ("retail", "basket size (distinct items per receipt)"),
    "bms-webview-1-session-length": ("bms-webview-1", "session length (distinct pages per session)"),
    "bms-webview-2-session-length": ("bms-webview-2", "session length (distinct pages per session)"),
}


def transaction_lengths(name: str) -> Dataset:
    """The histogram of transaction lengths of a shipped transaction file (see the module notes)."""
    from .real import _TX_FILES, _cached_transactions, _file_key

    if name not in LENGTH_COLUMNS:
        raise ValueError(f"name must be one of {sorted(LENGTH_COLUMNS)}, got {name!r}")
    key, what = LENGTH_COLUMNS[name]
    folder, fname, _, cite, where = _TX_FILES[key]
    path = _paths.find(folder, fname, where_to_get=where)
    lengths = _cached_transactions(_file_key(path)).lengths
    lengths = lengths[lengths > 0]
    top = int(lengths.max())
    counts = np.bincount(lengths, minlength=top + 1)[1:].astype(np.int64)
    return Dataset(name=name, counts=counts, labels=np.arange(1, top + 1, dtype=np.int64),
                   source=f"{cite}: {what}, one user per transaction, derived from {fname}",
                   meta={"numeric": "length", "column": what, "max": top})
