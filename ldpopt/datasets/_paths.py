"""Where dataset files are found.

Notes: docs/notes/data.md, "ldpopt.datasets._paths"."""

from __future__ import annotations

import gzip
import os
from pathlib import Path

__all__ = ["ENV_VAR", "PACKAGED_DIR", "DataNotFoundError", "find", "packaged", "read_bytes", "search_dirs"]

ENV_VAR = "LDPOPT_DATA"


class DataNotFoundError(FileNotFoundError):
    """A dataset file or data package is in none of the searched places; the message says what to do.

    A ``FileNotFoundError``, raised by the loaders of :mod:`ldpopt.datasets` with a message naming
    the missing file, the environment variable ``LDPOPT_DATA``, the places searched and where to get
    the data.

    Examples
    --------
    >>> from ldpopt.datasets import DataNotFoundError
    >>> issubclass(DataNotFoundError, FileNotFoundError)
    True
    """


# a plain directory: setuptools installs package data as files (the package is never zipped)
PACKAGED_DIR = Path(__file__).resolve().parent / "data"


def search_dirs() -> list[Path]:
    """The directories searched for dataset files, in search order.

    The package's data folder first, then each entry of the environment variable ``LDPOPT_DATA``
    (``os.pathsep``-separated, ``~`` expanded, blank entries dropped).

    Returns
    -------
    list of pathlib.Path
        The package's ``ldpopt/datasets/data`` folder, then the ``$LDPOPT_DATA`` entries.

    Examples
    --------
    >>> from ldpopt.datasets import search_dirs
    >>> search_dirs()[0].name
    'data'
    """
    return [PACKAGED_DIR] + [Path(p).expanduser() for p in os.environ.get(ENV_VAR, "").split(os.pathsep) if p.strip()]


def _variants(name: str) -> list[str]:
    return [name, name[:-3]] if name.endswith(".gz") else [name, name + ".gz"]


def find(folder: str, filename: str, *, where_to_get: str = "") -> Path:
    """Return the path of ``<folder>/<filename>`` (or its .gz twin) in the searched directories.

    Raises
    ------
    DataNotFoundError
        naming the file, the variable ``LDPOPT_DATA``, the places searched and where to get it.
    """
    dirs = search_dirs()
    for base in dirs:
        # the packaged folder only in its own layout: a stray file at its top is never a dataset
        for sub in (base / folder,) if base == PACKAGED_DIR else (base / folder, base):
            for name in _variants(filename):
                p = sub / name
                if p.is_file():
                    return p
    searched = ", ".join(str(d) for d in dirs) + ("" if len(dirs) > 1 else f" ({ENV_VAR} is unset)")
    msg = (
        f"dataset file {folder}/{filename} not found (it is not in ldpopt's package data). Set the environment "
        f"variable {ENV_VAR} to a directory holding {folder}/{filename} (or {filename}; .gz or "
        f"uncompressed). Searched: {searched}."
    )
    if where_to_get:
        msg += f" Where to get it: {where_to_get}"
    raise DataNotFoundError(msg)


def packaged(relpath: str) -> Path:
    """The path of a data file shipped in ``ldpopt/datasets/data/`` (``relpath`` like
    ``"retail/item_counts.csv"``); raises :class:`DataNotFoundError` when the installation lacks it."""
    p = PACKAGED_DIR / relpath
    if not p.is_file():
        raise DataNotFoundError(
            f"packaged data file ldpopt/datasets/data/{relpath} is missing from this installation "
            f"({p}); reinstall ldpopt from a complete checkout (pip install .)"
        )
    return p


def read_bytes(path) -> bytes:
    """All bytes of ``path``, gunzipped when the name ends in ``.gz``."""
    path = Path(path)
    if path.name.endswith(".gz"):
        with gzip.open(path, "rb") as fh:
            return fh.read()
    return path.read_bytes()
