"""Where dataset files are found.

Resolution order for a file that does not ship inside the package:

1. each directory listed in the environment variable ``LDPOPT_DATA`` (``os.pathsep``-separated);
2. when running from a source checkout (the repository root holds ``pyproject.toml``), the
   repository's sibling ``../shared/data`` — found relative to this file, never the working directory.

In each directory the file is looked for as ``<folder>/<file>`` (the layout of the shared data
directory, e.g. ``retail/retail.dat.gz``) and then as ``<file>`` directly; a ``.gz`` file and its
uncompressed twin are both accepted. Small, license-permitting derived count files ship inside the
package under ``ldpopt/datasets/data/`` and need none of this (see ``data/NOTICE.md``).
"""

from __future__ import annotations

import gzip
import os
from importlib import resources
from pathlib import Path

__all__ = ["ENV_VAR", "DataNotFoundError", "search_dirs", "find", "packaged", "read_bytes"]

ENV_VAR = "LDPOPT_DATA"


class DataNotFoundError(FileNotFoundError):
    """A dataset file is in none of the searched places. The message says what to do."""


def _default_data_dir() -> Path | None:
    """The checkout's sibling ``../shared/data``, or None when not running from a checkout."""
    root = Path(__file__).resolve().parents[2]
    if (root / "pyproject.toml").is_file():
        cand = root.parent / "shared" / "data"
        if cand.is_dir():
            return cand
    return None


def search_dirs() -> list[Path]:
    """Directories searched, in order: ``$LDPOPT_DATA`` entries, then the checkout default."""
    dirs = [Path(p).expanduser() for p in os.environ.get(ENV_VAR, "").split(os.pathsep) if p.strip()]
    default = _default_data_dir()
    if default is not None:
        dirs.append(default)
    return dirs


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
        for sub in (base / folder, base):
            for name in _variants(filename):
                p = sub / name
                if p.is_file():
                    return p
    searched = ", ".join(str(d) for d in dirs) or "(none: LDPOPT_DATA is unset and no checkout default)"
    msg = (
        f"dataset file {folder}/{filename} not found. Set the environment variable {ENV_VAR} to a "
        f"directory holding {folder}/{filename} (or {filename}; .gz or uncompressed). "
        f"Searched: {searched}."
    )
    if where_to_get:
        msg += f" Where to get it: {where_to_get}"
    raise DataNotFoundError(msg)


def packaged(filename: str):
    """A ``Traversable`` for a data file shipped in ``ldpopt/datasets/data/``."""
    return resources.files("ldpopt.datasets").joinpath("data", filename)


def read_bytes(path) -> bytes:
    """All bytes of ``path``, gunzipped when the name ends in ``.gz``."""
    path = Path(path)
    if path.name.endswith(".gz"):
        with gzip.open(path, "rb") as fh:
            return fh.read()
    return path.read_bytes()
